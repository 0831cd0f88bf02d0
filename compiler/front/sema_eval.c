/* sema_eval.c - the values of expressions and fields.
 *
 * A field is evaluated in the declaration that reads it (late binding), memoised, and
 * checked against its FieldDef: type, dimension, range, enumeration.  Names resolve to
 * fields, block lets, scenario roots or declarations; operators fold constants where both
 * sides are known.  Chains of references deeper than MAX_EVAL_DEPTH are deferred (defer()).
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "sema_private.h"

typedef struct LetMemo { /* aux of an AST_LET in a block */
  int state;
  Value v;
} LetMemo;

enum { MAX_EVAL_DEPTH = 256 };

static Value check_word(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what);
static bool name_in_scope(Sema *s, Env *e, const char *name);

/* --- values ------------------------------------------------------------------------ */

static Value v_num(double x, Dim d, bool is_int) {
  Value v = {0};
  v.t = T_NUM;
  v.known = true;
  v.num = x;
  v.dim = d;
  v.is_int = is_int;
  return v;
}

static Value v_unknown_num(Dim d, bool is_int) {
  Value v = v_num(0, d, is_int);
  v.known = false;
  return v;
}

static bool is_whole(double x) { return isfinite(x) && x == floor(x) && fabs(x) <= 9007199254740992.0; }

/* The value of a field nobody set: typed, not known. */
static Value v_of_type(const FieldDef *fd) {
  Value v = {0};
  switch (fd->type) {
  case FT_COUNT: return v_unknown_num(dim_none(), true);
  case FT_QTY: return v_unknown_num(fd->dim, false);
  case FT_REAL:
  case FT_ANY: return v_unknown_num(dim_none(), false);
  case FT_BOOL: v.t = T_BOOL; return v;
  case FT_STRING: v.t = T_STR; return v;
  case FT_ENUM:
  case FT_SPAN:
    v.t = T_ENUM;
    v.enums = fd->enums;
    return v;
  case FT_ENUMLIST:
  case FT_PATTERN:
  case FT_COUNTLIST: v.t = T_LIST; return v;
  case FT_REF:
    v.t = T_DECL;
    v.schema = schema_of(fd->ref);
    return v;
  }
  return v;
}

const char *eval_describe(Value v, char *buf, size_t n) {
  switch (v.t) {
  case T_NUM: return dim_describe(v.dim, buf, n);
  case T_BOOL: return "a boolean";
  case T_STR: return "a string";
  case T_ENUM:
    if (v.str)
      snprintf(buf, n, "the word `%s`", v.str);
    else if (v.enums) {
      char l[400];
      snprintf(buf, n, "a word (%s)", enum_list(v.enums, l, sizeof l));
    } else
      snprintf(buf, n, "a word");
    return buf;
  case T_LIST: return "a list";
  case T_DECL:
    if (v.decl)
      snprintf(buf, n, "%s `%s`", v.schema->name, v.decl->name);
    else
      snprintf(buf, n, "a %s", v.schema->name);
    return buf;
  default: return "an invalid value";
  }
}

/* --- field values -------------------------------------------------------------------- */

/* Evaluation nested deeper than MAX_EVAL_DEPTH (a long chain of references) is deferred
 * rather than refused: the field or let is remembered, everything that depended on it is
 * left unevaluated (and silent), and the driver evaluates the deferred ones first in the
 * next round, from a shallow stack.  Each round completes at least the deepest deferred
 * value, so a chain of any length, in any order, evaluates to the same result. */
static void defer(Sema *s, Decl *d, int field, AstNode *let) {
  XGROW(s->deferred, s->ndeferred + 1, s->capdeferred);
  s->deferred[s->ndeferred++] = (Deferred){d, field, let};
}

void eval_deferred(Sema *s, Deferred *list, unsigned n) {
  for (unsigned k = n; k-- > 0;) { /* deepest first */
    Deferred x = list[k];
    if (x.let) {
      Env e = {ENV_BLOCK, x.decl, x.decl};
      eval_let(s, &e, x.let);
    } else {
      eval_field(s, x.decl, x.field);
    }
  }
}

static Value derived_value(Sema *s, Decl *d, const FieldDef *fd) {
  if (d->kind == DK_CLUSTER && strcmp(fd->name, "gpus") == 0) {
    Value n = eval_field(s, d, schema_field_index(d->schema, schema_field(d->schema, "nodes")));
    Value g = eval_field(s, d, schema_field_index(d->schema, schema_field(d->schema, "gpus_per_node")));
    if (n.t == T_NUM && g.t == T_NUM && n.known && g.known) return v_num(n.num * g.num, dim_none(), true);
  }
  return v_of_type(fd);
}

Value eval_field(Sema *s, Decl *d, int i) {
  if (d->vstate[i] == 2) return d->vals[i];
  const FieldDef *fd = &d->schema->fields[i];
  if (d->vstate[i] == 1) {
    AstNode *f = d->fields[i];
    Env e = {ENV_DECL, d, f ? d->owners[i] : d};
    sema_err_env(s, &e, f ? f->name_span : d->node->name_span, "field `%s` depends on its own value", fd->name);
    return v_error();
  }
  if (d->fields[i] && s->eval_depth >= MAX_EVAL_DEPTH) {
    defer(s, d, i, NULL);
    return v_error();
  }
  d->vstate[i] = 1;
  Value v;
  unsigned deferred = s->ndeferred;
  if (d->fields[i]) {
    Env e = {ENV_DECL, d, d->owners[i]};
    s->eval_depth++;
    v = eval_check(s, &e, d->fields[i]->u.bin.rhs, fd, fd->name);
    s->eval_depth--;
    if (s->ndeferred != deferred) { /* depends on a deferred value: evaluate again later */
      d->vstate[i] = 0;
      return v_error();
    }
  } else if (fd->flags & F_DERIVED) {
    v = derived_value(s, d, fd);
  } else {
    v = v_of_type(fd);
  }
  d->vals[i] = v;
  d->vstate[i] = 2;
  return v;
}

Value eval_field_named(Sema *s, Decl *d, const char *name) {
  const FieldDef *fd = schema_field(d->schema, name);
  return fd ? eval_field(s, d, schema_field_index(d->schema, fd)) : v_error();
}

/* --- names ------------------------------------------------------------------------ */

static Value v_decl(Decl *d) {
  Value v = {0};
  v.t = T_DECL;
  v.known = true;
  v.decl = d;
  v.schema = d->schema;
  return v;
}

static Value v_symbolic(const Schema *sc) {
  Value v = {0};
  v.t = T_DECL;
  v.schema = sc;
  return v;
}

const char *const eval_block_roots[] = {"model", "plan", "cluster", NULL};
static const char *const sweep_roots[] = {"model",     "plan",         "cluster", "memory",
                                          "iteration", "tokens_per_s", "mfu",     NULL};

Value eval_root(const char *name) {
  if (!strcmp(name, "model")) return v_symbolic(schema_of(DK_MODEL));
  if (!strcmp(name, "plan")) return v_symbolic(schema_of(DK_PLAN));
  if (!strcmp(name, "cluster")) return v_symbolic(schema_of(DK_CLUSTER));
  if (!strcmp(name, "memory")) return v_symbolic(schema_memory());
  const FieldDef *fd = schema_field(schema_results(), name);
  return fd ? v_of_type(fd) : v_error();
}

/* A block's lets by name: an open-addressing table built on first use (the first of
 * duplicates wins; duplicates are reported by the statement check). */
static AstNode *find_let(Sema *s, Decl *blk, const char *name) {
  if (!blk->lets) {
    unsigned n = 0;
    for (AstNode *c = body_of(blk).first; c; c = c->next) n += c->kind == AST_LET;
    unsigned cap = 16;
    while (cap < 2 * n + 2) cap *= 2;
    blk->lets = arena_alloc(&s->arena, cap * sizeof *blk->lets);
    blk->letcap = cap;
    for (AstNode *c = body_of(blk).first; c; c = c->next) {
      if (c->kind != AST_LET || c->u.bin.lhs->kind != AST_NAME) continue;
      unsigned j = ptr_hash(c->u.bin.lhs->name) & (cap - 1);
      while (blk->lets[j] && blk->lets[j]->u.bin.lhs->name != c->u.bin.lhs->name) j = (j + 1) & (cap - 1);
      if (!blk->lets[j]) blk->lets[j] = c;
    }
  }
  for (unsigned j = ptr_hash(name) & (blk->letcap - 1); blk->lets[j]; j = (j + 1) & (blk->letcap - 1))
    if (blk->lets[j]->u.bin.lhs->name == name) return blk->lets[j];
  return NULL;
}

Value eval_let(Sema *s, Env *e, AstNode *let) {
  LetMemo *m = let->aux;
  if (!m) let->aux = m = arena_alloc(&s->arena, sizeof *m);
  if (m->state == 2) return m->v;
  if (m->state == 1) {
    sema_err_env(s, e, let->u.bin.lhs->span, "`let %s` depends on its own value", let->u.bin.lhs->name);
    return v_error();
  }
  if (s->eval_depth >= MAX_EVAL_DEPTH) {
    defer(s, e->self, -1, let);
    return v_error();
  }
  m->state = 1;
  unsigned deferred = s->ndeferred;
  s->eval_depth++;
  m->v = eval_expr(s, e, let->u.bin.rhs);
  s->eval_depth--;
  if (s->ndeferred != deferred) {
    m->state = 0;
    return v_error();
  }
  m->state = 2;
  return m->v;
}

static void unknown_name(Sema *s, Env *e, AstNode *n) {
  Suggest sg;
  suggest_init(&sg, n->name);
  if (e->kind == ENV_DECL) {
    for (const FieldDef *f = e->self->schema->fields; f->name; f++) suggest_offer(&sg, f->name);
    sema_suggest_decls(s, &sg, DK_UNKNOWN);
  } else {
    const char *const *roots = e->kind == ENV_BLOCK ? eval_block_roots : sweep_roots;
    for (int i = 0; roots[i]; i++) suggest_offer(&sg, roots[i]);
    if (e->kind == ENV_BLOCK)
      for (AstNode *c = body_of(e->self).first; c; c = c->next)
        if (c->kind == AST_LET && c->u.bin.lhs->kind == AST_NAME) suggest_offer(&sg, c->u.bin.lhs->name);
  }
  if (sg.best)
    sema_err_env(s, e, n->span, "unknown name `%s`; did you mean `%s`?", n->name, sg.best);
  else if (e->kind == ENV_BLOCK)
    sema_err_env(s, e, n->span, "unknown name `%s`: a block sees its lets, `model`, `plan` and `cluster`", n->name);
  else
    sema_err_env(s, e, n->span, "unknown name `%s`", n->name);
}

static Value eval_name(Sema *s, Env *e, AstNode *n) {
  if (e->kind == ENV_DECL) {
    const FieldDef *fd = schema_field(e->self->schema, n->name);
    if (fd) return eval_field(s, e->self, schema_field_index(e->self->schema, fd));
  } else if (e->kind == ENV_BLOCK) {
    AstNode *let = find_let(s, e->self, n->name);
    if (let) return eval_let(s, e, let);
    if (enum_has(eval_block_roots, n->name)) return eval_root(n->name);
  } else if (enum_has(sweep_roots, n->name)) {
    return eval_root(n->name);
  }
  bool reported;
  Decl *d = sema_lookup(s, e->owner->file, n->name, n->span, &reported);
  if (d) {
    if (d->ext_state == 0) sema_resolve_extends(s, d);
    return v_decl(d);
  }
  if (!reported) unknown_name(s, e, n);
  return v_error();
}

static Value eval_member(Sema *s, Env *e, AstNode *n) {
  Value obj = eval_expr(s, e, n->u.bin.lhs);
  if (obj.t == T_ERROR) return obj;
  char buf[128];
  if (obj.t != T_DECL) {
    sema_err_env(s, e, n->name_span, "`.%s` needs a declaration on its left, found %s", n->name,
                 eval_describe(obj, buf, sizeof buf));
    return v_error();
  }
  const FieldDef *fd = schema_field(obj.schema, n->name);
  if (!fd) {
    Suggest sg;
    suggest_init(&sg, n->name);
    for (const FieldDef *f = obj.schema->fields; f->name; f++) suggest_offer(&sg, f->name);
    sema_err_env(s, e, n->name_span, "unknown field `%s` in %s%s", n->name, obj.schema->name, suggest_hint(&sg, false));
    return v_error();
  }
  if (obj.known) return eval_field(s, obj.decl, schema_field_index(obj.schema, fd));
  return v_of_type(fd);
}

/* --- operators -------------------------------------------------------------------- */

static bool need_num(Sema *s, Env *e, AstNode *at, Value v, const char *op) {
  char b[128];
  if (v.t == T_NUM || v.t == T_ERROR) return v.t == T_NUM;
  sema_err_env(s, e, at->span, "`%s` needs numbers, found %s", op, eval_describe(v, b, sizeof b));
  return false;
}

static bool need_bool(Sema *s, Env *e, AstNode *at, Value v, const char *op) {
  char b[128];
  if (v.t == T_BOOL || v.t == T_ERROR) return v.t == T_BOOL;
  sema_err_env(s, e, at->span, "`%s` needs booleans (true, false, comparisons), found %s", op,
               eval_describe(v, b, sizeof b));
  return false;
}

static Value eval_arith(Sema *s, Env *e, AstNode *n, Value a, Value b) {
  BinOp op = n->u.bin.op;
  const char *ot = binop_text[op];
  bool lhs_ok = need_num(s, e, n->u.bin.lhs, a, ot), rhs_ok = need_num(s, e, n->u.bin.rhs, b, ot);
  if (!lhs_ok || !rhs_ok) return v_error(); /* both sides checked, both reported */
  char da[128], db[128];
  Dim d = a.dim;
  if (op == OP_ADD || op == OP_SUB || op == OP_MOD) {
    if (!dim_eq(a.dim, b.dim)) {
      sema_err_env(s, e, n->span, "`%s` needs operands of the same dimension: %s and %s", ot,
                   dim_describe(a.dim, da, sizeof da), dim_describe(b.dim, db, sizeof db));
      return v_error();
    }
  } else if (op == OP_MUL)
    d = dim_mul(a.dim, b.dim);
  else
    d = dim_div(a.dim, b.dim);
  bool is_int = a.is_int && b.is_int && op != OP_DIV;
  if (!a.known || !b.known) return v_unknown_num(d, is_int || (op == OP_DIV && a.is_int && b.is_int));
  if ((op == OP_DIV || op == OP_MOD) && b.num == 0) {
    sema_err_env(s, e, n->u.bin.rhs->span, "division by zero");
    return v_error();
  }
  double r = op == OP_ADD   ? a.num + b.num
             : op == OP_SUB ? a.num - b.num
             : op == OP_MUL ? a.num * b.num
             : op == OP_DIV ? a.num / b.num
                            : fmod(a.num, b.num);
  if (!isfinite(r)) {
    sema_err_env(s, e, n->span, "the result of `%s` is out of range", ot);
    return v_error();
  }
  if (op == OP_MOD && !(a.is_int && b.is_int)) is_int = false;
  if (op == OP_DIV) is_int = a.is_int && b.is_int && is_whole(r);
  return v_num(r, d, is_int && is_whole(r));
}

static Value eval_compare(Sema *s, Env *e, AstNode *n, Value a, Value b) {
  BinOp op = n->u.bin.op;
  Value r = {0};
  r.t = T_BOOL;
  if (a.t == T_ERROR || b.t == T_ERROR) return v_error();
  char da[128], db[128];
  if (a.t != b.t || (a.t == T_NUM && !dim_eq(a.dim, b.dim))) {
    sema_err_env(s, e, n->span, "cannot compare %s with %s", eval_describe(a, da, sizeof da),
                 eval_describe(b, db, sizeof db));
    return v_error();
  }
  if (a.t != T_NUM && op != OP_EQ && op != OP_NE) {
    sema_err_env(s, e, n->span, "`%s` compares numbers; found %s", binop_text[op], eval_describe(a, da, sizeof da));
    return v_error();
  }
  if (!a.known || !b.known) return r;
  r.known = true;
  if (a.t == T_NUM) {
    double x = a.num, y = b.num;
    r.num = op == OP_EQ   ? x == y
            : op == OP_NE ? x != y
            : op == OP_LT ? x < y
            : op == OP_LE ? x <= y
            : op == OP_GT ? x > y
                          : x >= y;
  } else {
    bool eq = a.t == T_STR || a.t == T_ENUM ? a.str == b.str : a.t == T_DECL ? a.decl == b.decl : a.num == b.num;
    r.num = op == OP_EQ ? eq : !eq;
  }
  return r;
}

/* In `plan.schedule == gpipe`, the bare word takes its meaning from the other side. */
static Value eval_operand(Sema *s, Env *e, AstNode *n, AstNode *other, BinOp op) {
  if ((op == OP_EQ || op == OP_NE) && n->kind == AST_NAME && !name_in_scope(s, e, n->name)) {
    Value o = eval_expr(s, e, other);
    if (o.t == T_ENUM && o.enums) {
      FieldDef fd = {"value here", FT_ENUM, {{0}}, o.enums, DK_UNKNOWN, 0, 0, 0};
      return check_word(s, e, n, &fd, "value here");
    }
  }
  return eval_expr(s, e, n);
}

static Value eval_binop(Sema *s, Env *e, AstNode *n) {
  BinOp op = n->u.bin.op;
  Value a = eval_operand(s, e, n->u.bin.lhs, n->u.bin.rhs, op), b = eval_operand(s, e, n->u.bin.rhs, n->u.bin.lhs, op);
  if (op == OP_AND || op == OP_OR) {
    bool lhs_ok = need_bool(s, e, n->u.bin.lhs, a, binop_text[op]);
    bool rhs_ok = need_bool(s, e, n->u.bin.rhs, b, binop_text[op]);
    if (!lhs_ok || !rhs_ok) return v_error();
    Value r = {0};
    r.t = T_BOOL;
    r.known = a.known && b.known;
    r.num = op == OP_AND ? (a.num && b.num) : (a.num || b.num);
    return r;
  }
  if (op >= OP_EQ && op <= OP_GE) return eval_compare(s, e, n, a, b);
  return eval_arith(s, e, n, a, b);
}

static Value eval_unop(Sema *s, Env *e, AstNode *n) {
  Value a = eval_expr(s, e, n->u.bin.lhs);
  if (n->u.bin.op == OP_NOT) {
    if (!need_bool(s, e, n->u.bin.lhs, a, "not")) return v_error();
    a.num = !a.num;
    return a;
  }
  if (!need_num(s, e, n->u.bin.lhs, a, "-")) return v_error();
  a.num = -a.num;
  return a;
}

/* min(a, b, ...), max(...), ceil(x), floor(x). */
static Value eval_call(Sema *s, Env *e, AstNode *n) {
  const char *f = n->name;
  bool minmax = !strcmp(f, "min") || !strcmp(f, "max");
  bool round = !strcmp(f, "ceil") || !strcmp(f, "floor");
  if (!minmax && !round) {
    if (op_lookup(f))
      sema_err_env(s, e, n->name_span, "operator `%s` can only be used as `op NAME = %s(...)` in a block", f, f);
    else
      sema_err_env(s, e, n->name_span, "unknown function `%s`: the functions are min, max, ceil and floor", f);
    return v_error();
  }
  unsigned want = round ? 1 : 2;
  if ((round && n->u.list.count != 1) || (minmax && n->u.list.count < want)) {
    sema_err_env(s, e, n->span, "`%s` takes %s", f, round ? "one argument" : "two or more arguments");
    return v_error();
  }
  Value acc = {0};
  for (AstNode *a = n->u.list.first; a; a = a->next) {
    if (a->kind == AST_NAMEDARG) {
      sema_err_env(s, e, a->name_span, "`%s` takes no named arguments", f);
      return v_error();
    }
    Value v = eval_expr(s, e, a);
    if (!need_num(s, e, a, v, f)) return v_error();
    if (round) {
      acc = v;
      if (v.known) acc.num = f[0] == 'c' ? ceil(v.num) : floor(v.num);
      acc.is_int = true;
      continue;
    }
    if (acc.t == T_ERROR) {
      acc = v;
      continue;
    }
    char da[128], db[128];
    if (!dim_eq(acc.dim, v.dim)) {
      sema_err_env(s, e, a->span, "`%s` needs arguments of one dimension: %s and %s", f,
                   dim_describe(acc.dim, da, sizeof da), dim_describe(v.dim, db, sizeof db));
      return v_error();
    }
    bool pick = f[1] == 'i' ? v.num < acc.num : v.num > acc.num;
    bool known = acc.known && v.known, is_int = acc.is_int && v.is_int;
    if (known && pick) acc = v;
    acc.known = known;
    acc.is_int = is_int;
  }
  return acc;
}

/* `80 GiB`: the literal in base units; counts must be exact. */
static Value eval_number(Sema *s, Env *e, AstNode *n) {
  Dim d;
  double x = unit_value(n->u.num.value, n->u.num.unit, &d);
  if (!isfinite(x)) {
    sema_err_env(s, e, n->span, "number out of range");
    return v_error();
  }
  if (n->u.num.is_int && !n->u.num.unit && n->u.num.inexact) {
    sema_err_env(s, e, n->span, "integer too large to be exact (the limit is 2^53)");
    return v_error();
  }
  return v_num(x, d, is_whole(x));
}

Value eval_expr(Sema *s, Env *e, AstNode *n) {
  Value v = {0};
  switch (n->kind) {
  case AST_NUM: return eval_number(s, e, n);
  /* clang-format off */
  case AST_STR: v.t = T_STR; v.known = true; v.str = n->name; return v;
  case AST_BOOL: v.t = T_BOOL; v.known = true; v.num = n->u.boolean; return v;
  /* clang-format on */
  case AST_NAME: return eval_name(s, e, n);
  case AST_MEMBER: return eval_member(s, e, n);
  case AST_BINOP: return eval_binop(s, e, n);
  case AST_UNOP: return eval_unop(s, e, n);
  case AST_CALL: return eval_call(s, e, n);
  case AST_LIST:
    for (AstNode *c = n->u.list.first; c; c = c->next) eval_expr(s, e, c);
    v.t = T_LIST;
    v.known = true;
    v.list = n;
    return v;
  case AST_EXTEND: {
    Decl *d = sema_inline_decl(s, e, n);
    return d ? v_decl(d) : v_error();
  }
  default: sema_err_env(s, e, n->span, "this is not an expression"); return v_error();
  }
}

/* --- checking a value against a field ------------------------------------------------ */

static bool check_range(Sema *s, Env *e, AstNode *n, Value v, const FieldDef *fd, const char *what) {
  if (!v.known) return true;
  char lo[192] = "", hi[192] = "";
  bool bad = false;
  if (fd->flags & F_HAS_MIN) bad |= (fd->flags & F_MIN_OPEN) ? v.num <= fd->min : v.num < fd->min;
  if (fd->flags & F_HAS_MAX) bad |= v.num > fd->max;
  if (!bad) return true;
  char unit[64] = ""; /* a quantity's bounds other than 0, and its value, in base units */
  if (fd->type == FT_QTY && (fd->min != 0 || fd->max != 0)) {
    char d[64];
    dim_describe(fd->dim, d, sizeof d);
    snprintf(unit, sizeof unit, " %.*s", (int)strcspn(d, " "), d); /* "seconds (time)": " seconds" */
  }
  if (fd->flags & F_HAS_MIN)
    snprintf(lo, sizeof lo, "%s %g%s", (fd->flags & F_MIN_OPEN) ? "more than" : "at least", fd->min,
             fd->min != 0 ? unit : "");
  if (fd->flags & F_HAS_MAX) snprintf(hi, sizeof hi, "%sat most %g%s", lo[0] ? " and " : "", fd->max, unit);
  if (fd->type == FT_QTY && !unit[0])
    sema_err_env(s, e, n->span, "`%s` must be %s%s", what, lo, hi);
  else
    sema_err_env(s, e, n->span, "`%s` must be %s%s, found %g%s", what, lo, hi, v.num, unit);
  return false;
}

/* Does a bare name mean something here (a field, a let, a root, a declaration)?  If not,
 * where a word is expected it is a misspelt word. */
static bool name_in_scope(Sema *s, Env *e, const char *name) {
  if (e->kind == ENV_DECL && schema_field(e->self->schema, name)) return true;
  if (e->kind == ENV_BLOCK && (find_let(s, e->self, name) || enum_has(eval_block_roots, name))) return true;
  if (e->kind == ENV_SWEEP && enum_has(sweep_roots, name)) return true;
  return sema_table_get(s, name) != NULL;
}

/* Every word a may take is one b allows. */
static bool enums_within(const char *const *a, const char *const *b) {
  for (; a && *a; a++)
    if (!enum_has(b, *a)) return false;
  return true;
}

static Value check_word(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what) {
  char b[512];
  if (n->kind == AST_NAME && enum_has(fd->enums, n->name)) {
    Value v = {0};
    v.t = T_ENUM;
    v.known = true;
    v.str = n->name;
    v.enums = fd->enums;
    return v;
  }
  if (n->kind == AST_NAME && !name_in_scope(s, e, n->name)) {
    Suggest sg;
    suggest_init(&sg, n->name);
    for (int i = 0; fd->enums[i]; i++) suggest_offer(&sg, fd->enums[i]);
    sema_err_env(s, e, n->span, "`%s` is not a valid %s: expected %s%s", n->name, what,
                 enum_list(fd->enums, b, sizeof b), suggest_hint(&sg, true));
    return v_error();
  }
  Value v = eval_expr(s, e, n);
  if (v.t == T_ERROR) return v;
  char d[128], l[512];
  if (v.t == T_ENUM) {
    if (v.known ? enum_has(fd->enums, v.str) : enums_within(v.enums, fd->enums)) return v;
    if (v.known)
      sema_err_env(s, e, n->span, "`%s` takes one of %s; found `%s`", what, enum_list(fd->enums, b, sizeof b), v.str);
    else
      sema_err_env(s, e, n->span, "`%s` takes one of %s; this value is one of %s", what,
                   enum_list(fd->enums, b, sizeof b), enum_list(v.enums, l, sizeof l));
    return v_error();
  }
  sema_err_env(s, e, n->span, "`%s` takes one of %s; found %s", what, enum_list(fd->enums, b, sizeof b),
               eval_describe(v, d, sizeof d));
  return v_error();
}

static Value check_enum_list(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what) {
  if (n->kind != AST_LIST) {
    Value v = eval_expr(s, e, n);
    char d[128];
    if (v.t != T_LIST && v.t != T_ERROR) {
      sema_err_env(s, e, n->span, "`%s` takes a list like [tp, dp, pp]; found %s", what, eval_describe(v, d, sizeof d));
      return v_error();
    }
    return v;
  }
  bool ok = true;
  for (AstNode *c = n->u.list.first; c; c = c->next) {
    Value w = check_word(s, e, c, fd, what);
    ok &= w.t == T_ENUM;
    for (AstNode *o = n->u.list.first; ok && o != c; o = o->next)
      if (o->kind == AST_NAME && c->kind == AST_NAME && o->name == c->name) {
        sema_err_env(s, e, c->span, "`%s` appears twice in `%s`", c->name, what);
        ok = false;
      }
  }
  Value v = {0};
  v.t = ok ? T_LIST : T_ERROR;
  v.known = true;
  v.list = n;
  return v;
}

static Value check_ref(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what) {
  const Schema *want = schema_of(fd->ref);
  if (n->kind == AST_NAME && !(e->kind == ENV_DECL && schema_field(e->self->schema, n->name))) {
    bool reported;
    Decl *d = sema_lookup(s, e->owner->file, n->name, n->span, &reported);
    if (!d && !reported) {
      Suggest sg;
      suggest_init(&sg, n->name);
      sema_suggest_decls(s, &sg, fd->ref);
      char hint[1200];
      const char *imp = sema_import_hint(s, want->name, n->name, hint, sizeof hint);
      sema_err_env(s, e, n->span, "unknown %s `%s`%s", want->name, n->name, imp ? imp : suggest_hint(&sg, false));
      return v_error();
    }
    if (!d) return v_error();
  }
  Value v = eval_expr(s, e, n);
  if (v.t == T_ERROR) return v;
  char b[128];
  if (v.t != T_DECL || v.schema != want) {
    bool named = n->kind == AST_NAME;
    if (sema_err_env(s, e, n->span, "`%s` needs a %s%s%s%s%s", what, want->name, named ? "; `" : ", found ",
                     named ? n->name : "", named ? "` is " : "", eval_describe(v, b, sizeof b)) &&
        v.known && v.decl)
      sema_note_decl(s, v.decl, "`%s` is declared here", v.decl->name);
    return v_error();
  }
  return v;
}

static Value check_number(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what) {
  Value v = eval_expr(s, e, n);
  if (v.t == T_ERROR) return v;
  char b[128], w[128];
  Dim want = fd->type == FT_QTY ? fd->dim : dim_none();
  if (v.t != T_NUM) {
    sema_err_env(s, e, n->span, "`%s` needs %s, found %s", what,
                 fd->type == FT_COUNT ? "a count" : dim_describe(want, w, sizeof w), eval_describe(v, b, sizeof b));
    return v_error();
  }
  if (!dim_eq(v.dim, want)) {
    if (fd->type == FT_COUNT)
      sema_err_env(s, e, n->span, "`%s` is a count, with no unit; found %s", what, dim_describe(v.dim, b, sizeof b));
    else if (dim_is_none(v.dim) && n->kind == AST_NUM)
      sema_err_env(s, e, n->span, "`%s` needs a unit: expected %s, found a plain number", what,
                   dim_describe(want, w, sizeof w));
    else
      sema_err_env(s, e, n->span, "`%s` expects %s, found %s", what, dim_describe(want, w, sizeof w),
                   dim_describe(v.dim, b, sizeof b));
    return v_error();
  }
  if (fd->type == FT_COUNT && v.known && !is_whole(v.num)) {
    if (n->kind == AST_BINOP && n->u.bin.op == OP_DIV)
      sema_err_env(s, e, n->span, "`%s` must be a whole number, but this division gives %g: the operands do not divide",
                   what, v.num);
    else
      sema_err_env(s, e, n->span, "`%s` must be a whole number, found %g", what, v.num);
    return v_error();
  }
  if (!check_range(s, e, n, v, fd, what)) return v_error();
  return v;
}

/* A count: a pattern's `N * item`, a count list's entry. */
static const FieldDef count_item = {"count", FT_COUNT, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN, 0, 0};

/* An item of a layer pattern: a block, `N * item`, or a list of items.  Adds its layers to
 * *total (NAN once a count is not known statically) and its distinct blocks to b[*nb]. */
static bool pattern_item(Sema *s, Env *e, AstNode *n, const char *what, double times, double *total, Decl **b,
                         int *nb) {
  static const FieldDef block = {"layer", FT_REF, {{0}}, NULL, DK_BLOCK, 0, 0, 0};
  if (n->kind == AST_LIST) {
    bool ok = true;
    for (AstNode *c = n->u.list.first; c; c = c->next) ok &= pattern_item(s, e, c, what, times, total, b, nb);
    return ok;
  }
  if (n->kind == AST_BINOP && n->u.bin.op == OP_MUL) {
    Value k = check_number(s, e, n->u.bin.lhs, &count_item, what);
    if (k.t == T_ERROR) return false;
    return pattern_item(s, e, n->u.bin.rhs, what, k.known ? times * k.num : NAN, total, b, nb);
  }
  if (n->kind != AST_NAME) {
    sema_err_env(s, e, n->span, "`%s` lists layer blocks: a block, `N * item` or a list [a, b]", what);
    return false;
  }
  Value v = check_ref(s, e, n, &block, what);
  if (v.t == T_ERROR) return false;
  if (!v.known) return true;
  int i = 0;
  while (i < *nb && b[i] != v.decl) i++;
  if (i == SEMA_PATTERN_BLOCKS) {
    sema_err_env(s, e, n->span, "`%s` has more than %d kinds of layer block", what, SEMA_PATTERN_BLOCKS);
    return false;
  }
  if (i == *nb) b[(*nb)++] = v.decl;
  *total += times;
  return true;
}

/* A model's `pattern`: its items, and their layers against the model's `layers`. */
static Value check_pattern(Sema *s, Env *e, AstNode *n, const char *what) {
  if (n->kind != AST_LIST) {
    sema_err_env(s, e, n->span, "`%s` takes a list of layer blocks, like [3 * dense_layer, 58 * moe_layer]", what);
    return v_error();
  }
  Decl *b[SEMA_PATTERN_BLOCKS];
  int nb = 0;
  double total = 0;
  if (!pattern_item(s, e, n, what, 1, &total, b, &nb)) return v_error();
  Value layers = e->kind == ENV_DECL ? eval_field_named(s, e->self, "layers") : v_error();
  if (layers.t == T_NUM && layers.known && !isnan(total) && total != layers.num) {
    sema_err_env(s, e, n->span, "the pattern has %.0f layers; the model has layers = %.0f", total, layers.num);
    return v_error();
  }
  Value v = {0};
  v.t = T_LIST;
  v.known = true;
  v.list = n;
  return v;
}

static Value check_count_list(Sema *s, Env *e, AstNode *n, const char *what) {
  if (n->kind != AST_LIST) {
    sema_err_env(s, e, n->span, "`%s` takes a list of whole numbers, like [4, 8, 8, 4]", what);
    return v_error();
  }
  bool ok = true;
  for (AstNode *c = n->u.list.first; c; c = c->next) ok &= check_number(s, e, c, &count_item, what).t != T_ERROR;
  Value v = {0};
  v.t = ok ? T_LIST : T_ERROR;
  v.known = true;
  v.list = n;
  return v;
}

/* Checks the expression n as the value of field fd; "what" names it in messages. */
Value eval_check(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what) {
  Value v;
  char b[128];
  switch (fd->type) {
  case FT_ENUM: return check_word(s, e, n, fd, what);
  case FT_ENUMLIST: return check_enum_list(s, e, n, fd, what);
  case FT_PATTERN: return check_pattern(s, e, n, what);
  case FT_COUNTLIST: return check_count_list(s, e, n, what);
  case FT_REF: return check_ref(s, e, n, fd, what);
  case FT_SPAN:
    if (n->kind == AST_NAME && enum_has(fd->enums, n->name)) return check_word(s, e, n, fd, what);
    if (n->kind == AST_NAME) {
      char l[256];
      sema_err_env(s, e, n->span, "`%s` is %s or a count of nodes; found `%s`", what, enum_list(fd->enums, l, sizeof l),
                   n->name);
      return v_error();
    }
    return check_number(s, e, n, &(FieldDef){what, FT_COUNT, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN, 1, 0}, what);
  case FT_COUNT:
  case FT_QTY:
  case FT_REAL:
  case FT_ANY: return check_number(s, e, n, fd, what);
  case FT_BOOL:
  case FT_STRING:
    v = eval_expr(s, e, n);
    if (v.t == T_ERROR || v.t == (fd->type == FT_BOOL ? T_BOOL : T_STR)) return v;
    sema_err_env(s, e, n->span, "`%s` needs %s, found %s", what, fd->type == FT_BOOL ? "true or false" : "a string",
                 eval_describe(v, b, sizeof b));
    return v_error();
  }
  return v_error();
}
