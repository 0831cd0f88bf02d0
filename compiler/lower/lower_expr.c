/* lower_expr.c - values for lowering: the fields of the plan, the model and the cluster as
 * nodes (a sweep's axis, a sweep's `let`, or the declaration's value), and the expressions of
 * a block (`let`s, arguments) and of a sweep's requires and objective over them. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "front/units.h"
#include "lower_private.h"

/* --- fields a sweep may set -------------------------------------------------------------- */

static const LowerAxis *axis_of(Lower *L, const char *root, const char *f) {
  for (int i = 0; L->ax && i < L->ax->n; i++)
    if (!strcmp(L->ax->axis[i].root, root) && !strcmp(L->ax->axis[i].field, f)) return &L->ax->axis[i];
  return NULL;
}

/* The sweep's `let root.f = ...`, or NULL. */
static AstNode *let_of(Lower *L, const char *root, const char *f) {
  if (!L->ax || !L->ax->sweep) return NULL;
  for (AstNode *c = sema_block_body(L->ax->sweep).first; c; c = c->next) {
    AstNode *p = c->u.bin.lhs;
    if (c->kind == AST_LET && p && p->kind == AST_MEMBER && !strcmp(p->name, f) && p->u.bin.lhs->kind == AST_NAME &&
        !strcmp(p->u.bin.lhs->name, root))
      return c;
  }
  return NULL;
}

/* Field f of d as a number: its value, a boolean as 0 or 1, or a word's code; false if unset. */
static bool decl_code(Lower *L, Decl *d, const char *f, double *x) {
  bool b;
  if (sema_number(L->s, d, f, x)) return true;
  if (sema_bool(L->s, d, f, &b)) return *x = b, true;
  const char *w = sema_word(L->s, d, f);
  return w && lower_axis_code(f, w, x);
}

/* A numeric (or boolean, or enumeration-coded) field of the plan or the model: the sweep's
 * axis, its let, or the declaration's value.  A word field read here is coded. */
GId lower_field(Lower *L, Decl *d, const char *root, const char *f, double def) {
  const LowerAxis *a = axis_of(L, root, f);
  if (a) return a->input >= 0 ? g_input(L->g, a->input) : K(L, a->value);
  AstNode *let = let_of(L, root, f);
  if (let && L->let_depth < 16) {
    AstNode *outer = L->sweep_let;
    L->let_depth++;
    L->sweep_let = let;
    Val v = lower_eval(L, let->u.bin.rhs);
    L->sweep_let = outer;
    L->let_depth--;
    double code;
    if (v.ok && v.word && lower_axis_code(f, v.word, &code)) return K(L, code);
    if (v.ok && !v.word) return v.id;
    lower_err_blk(L, let->u.bin.rhs, "`let %s.%s` cannot be evaluated for this sweep", root, f);
    return K(L, NAN);
  }
  double x;
  if (decl_code(L, d, f, &x)) return K(L, x);
  /* a plan field the plan leaves out takes the stack's value, where the stack has the field */
  if (d == L->plan && L->st.decl && decl_code(L, L->st.decl, f, &x)) return K(L, x);
  return K(L, def);
}

/* The plan's fields before read_plan has set them (a sweep's lets read one another). */
GId lower_plan_field(Lower *L, const char *f) {
  /* clang-format off */
  static const struct { const char *name; double def; } defs[] = {
      {"tp", 1}, {"pp", 1}, {"cp", 1}, {"ep", 1}, {"etp", 1}, {"virtual_stages", 1}, {"micro_batch", 1}, {"global_batch", 1},
      {"zero", 0}, {"sequence_parallel", 0}, {"overlap_tp", 0}, {"overlap_dp", 0}, {"overlap_pp", 0}, {"overlap_ep", 0}, {"cuda_graphs", 0}, {"schedule", RT_1F1B},
      {"recompute", 0}, {"layer_partition", 0}};
  /* clang-format on */
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
    if (!strcmp(defs[i].name, f)) return lower_field(L, L->plan, "plan", f, defs[i].def);
  if (!strcmp(f, "dp")) {
    GId dp = lower_field(L, L->plan, "plan", "dp", 0);
    if (!kf(L, dp)) return dp;
    GId gpus = lower_field(L, L->cluster, "cluster", "gpus", 0);
    return DIV(L, gpus, MUL3(L, lower_plan_field(L, "tp"), lower_plan_field(L, "pp"), lower_plan_field(L, "cp")));
  }
  return lower_field(L, L->plan, "plan", f, NAN);
}

/* plan.X inside a block: the plan as lowering completed it (dp derived, defaults filled). */
static Val plan_value(Lower *L, const char *f) {
  if (!L->ready) {
    if (!sema_word(L->s, L->plan, f) || axis_of(L, "plan", f) || let_of(L, "plan", f))
      return (Val){lower_plan_field(L, f), NULL, true};
    return (Val){-1, sema_word(L->s, L->plan, f), true};
  }
  static const struct {
    const char *name;
    size_t off;
  } map[] = {{"tp", offsetof(Lower, tp)},          {"pp", offsetof(Lower, pp)},
             {"dp", offsetof(Lower, dp)},          {"cp", offsetof(Lower, cp)},
             {"ep", offsetof(Lower, ep)},          {"virtual_stages", offsetof(Lower, vs)},
             {"micro_batch", offsetof(Lower, mb)}, {"global_batch", offsetof(Lower, gb)},
             {"etp", offsetof(Lower, etp)}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(map[i].name, f)) return (Val){*(GId *)((char *)L + map[i].off), NULL, true};
  if (!strcmp(f, "sequence_parallel")) return (Val){L->sp, NULL, true};
  if (!strcmp(f, "zero")) return (Val){L->zero, NULL, true};
  if (axis_of(L, "plan", f) || let_of(L, "plan", f)) return (Val){lower_plan_field(L, f), NULL, true};
  double x;
  if (sema_number(L->s, L->plan, f, &x)) return (Val){K(L, x), NULL, true};
  bool b;
  if (sema_bool(L->s, L->plan, f, &b)) return (Val){K(L, b), NULL, true};
  const char *w = sema_word(L->s, L->plan, f);
  if (w) return (Val){-1, w, true};
  return (Val){-1, NULL, false};
}

static Val decl_value(Lower *L, Decl *d, const char *f) {
  const char *root = d == L->model ? "model" : d == L->cluster ? "cluster" : NULL;
  if (root && (axis_of(L, root, f) || let_of(L, root, f))) return (Val){lower_field(L, d, root, f, NAN), NULL, true};
  double x;
  if (sema_number(L->s, d, f, &x)) return (Val){K(L, x), NULL, true};
  bool b;
  if (sema_bool(L->s, d, f, &b)) return (Val){K(L, b), NULL, true};
  const char *w = sema_word(L->s, d, f);
  if (w) return (Val){-1, w, true};
  /* the attention kernel a model leaves open is the stack's */
  if (d == L->model && L->st.decl && !strcmp(f, "attention") && (w = sema_word(L->s, L->st.decl, f)))
    return (Val){-1, w, true};
  return (Val){-1, NULL, false};
}

/* --- block expressions ----------------------------------------------------------------- */

static Val member(Lower *L, AstNode *n) {
  /* a chain root.field[.field]: model.hidden, plan.tp, cluster.gpu.memory */
  AstNode *chain[8];
  int k = 0;
  AstNode *x = n;
  while (x->kind == AST_MEMBER && k < 8) {
    chain[k++] = x;
    x = x->u.bin.lhs;
  }
  if (x->kind != AST_NAME) return (Val){-1, NULL, false};
  Decl *d = NULL;
  if (!strcmp(x->name, "model"))
    d = L->model;
  else if (!strcmp(x->name, "cluster"))
    d = L->cluster;
  else if (!strcmp(x->name, "memory") && L->results && k == 1) {
    char name[64];
    snprintf(name, sizeof name, "memory.%s", chain[0]->name);
    GId id = graph_find_output(L->g, name);
    return (Val){id, NULL, id >= 0};
  } else if (!strcmp(x->name, "plan")) {
    if (k != 1) return (Val){-1, NULL, false};
    return plan_value(L, chain[0]->name);
  } else
    return (Val){-1, NULL, false};
  for (int i = k - 1; i > 0; i--) {
    d = sema_ref(L->s, d, chain[i]->name);
    if (!d) return (Val){-1, NULL, false};
  }
  Val v = decl_value(L, d, chain[0]->name);
  if (!v.ok && d == L->model && L->blk) lower_missing_field(L, n, chain[0]->name);
  return v;
}

static Val let_value(Lower *L, AstNode *name) {
  for (int i = 0; i < L->nlets; i++)
    if (L->lets[i].let->u.bin.lhs->name == name->name) return (Val){L->lets[i].id, L->lets[i].word, true};
  for (AstNode *c = sema_block_body(L->blk).first; c; c = c->next)
    if (c->kind == AST_LET && c->u.bin.lhs->kind == AST_NAME && c->u.bin.lhs->name == name->name) {
      Val v = lower_eval(L, c->u.bin.rhs);
      if (v.ok && L->nlets < 64) L->lets[L->nlets++] = (LetVal){c, v.id, v.word};
      return v;
    }
  return (Val){-1, NULL, false};
}

Val lower_eval(Lower *L, AstNode *n) {
  Graph *g = L->g;
  switch (n->kind) {
  case AST_NUM: {
    return (Val){K(L, unit_value(n->u.num.value, n->u.num.unit, NULL)), NULL, true};
  }
  case AST_BOOL: return (Val){K(L, n->u.boolean), NULL, true};
  case AST_NAME: {
    if (L->results) { /* a sweep's require/objective: iteration, tokens_per_s, mfu, ... */
      GId id = graph_find_output(g, n->name);
      if (id >= 0) return (Val){id, NULL, true};
    }
    Val v = L->blk ? let_value(L, n) : (Val){-1, NULL, false};
    if (v.ok) return v;
    return (Val){-1, n->name, true}; /* an enumeration word: column, layernorm */
  }
  case AST_MEMBER: return member(L, n);
  case AST_UNOP: {
    Val a = lower_eval(L, n->u.bin.lhs);
    if (!a.ok || a.word) return (Val){-1, NULL, false};
    return (Val){g_un(g, n->u.bin.op == OP_NEG ? GN_NEG : GN_NOT, a.id), NULL, true};
  }
  case AST_BINOP: {
    Val a = lower_eval(L, n->u.bin.lhs), b = lower_eval(L, n->u.bin.rhs);
    if (!a.ok || !b.ok) return (Val){-1, NULL, false};
    if (a.word || b.word) { /* comparisons of words: model.norm == rmsnorm */
      if (!a.word || !b.word || (n->u.bin.op != OP_EQ && n->u.bin.op != OP_NE)) return (Val){-1, NULL, false};
      bool eq = !strcmp(a.word, b.word);
      return (Val){K(L, n->u.bin.op == OP_EQ ? eq : !eq), NULL, true};
    }
    static const GOp map[] = {GN_ADD, GN_SUB, GN_MUL, GN_DIV, GN_MOD, GN_EQ, GN_NE,
                              GN_LT,  GN_LE,  GN_GT,  GN_GE,  GN_AND, GN_OR};
    if (L->sweep_let && (n->u.bin.op == OP_DIV || n->u.bin.op == OP_MOD)) lower_let_divisor(L, b.id);
    return (Val){g_bin(g, map[n->u.bin.op], a.id, b.id), NULL, true};
  }
  case AST_CALL: {
    const char *f = n->name;
    GOp op = !strcmp(f, "min") ? GN_MIN : !strcmp(f, "max") ? GN_MAX : !strcmp(f, "ceil") ? GN_CEIL : GN_FLOOR;
    GId acc = -1;
    for (AstNode *a = n->u.list.first; a; a = a->next) {
      Val v = lower_eval(L, a);
      if (!v.ok || v.word) return (Val){-1, NULL, false};
      acc = op == GN_CEIL || op == GN_FLOOR ? g_un(g, op, v.id) : acc < 0 ? v.id : g_bin(g, op, acc, v.id);
    }
    return (Val){acc, NULL, acc >= 0};
  }
  default: return (Val){-1, NULL, false};
  }
}
