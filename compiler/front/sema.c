/* sema.c - semantic analysis of .llmp declarations.
 *
 * The pass, in order:
 *   1. collect the named declarations of every loaded file (unknown kinds, duplicates);
 *   2. for each declaration: resolve `extends` (cycles, kinds), assemble its fields
 *      (inherited, then its own), and check each statement against the kind's schema;
 *   3. evaluate each field's value in the context of the declaration (late binding: a
 *      parent's `ffn = 4 * hidden` sees the child's hidden), checking types, dimensions,
 *      ranges and enumerations, folding constants where they are known;
 *   4. for blocks, check lets and operator calls; for sweeps, axes and objectives;
 *   5. for scenarios, check that the model, cluster and plan they use are complete and
 *      that the plan divides the model and the cluster.
 *
 * Values carry a type and, when known statically, a constant; an unknown value (a field
 * a template leaves unset, a plan field inside a block) is typed but not folded.  An
 * error value is silent: the error that made it was reported where it arose. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash.h"
#include "sema_private.h"

typedef enum { T_ERROR, T_NUM, T_BOOL, T_STR, T_ENUM, T_LIST, T_DECL } TKind;

typedef struct Value {
  TKind t;
  bool known;                 /* constant known statically */
  bool is_int;                /* T_NUM: a whole number (known) or a count (unknown) */
  Dim dim;                    /* T_NUM */
  double num;                 /* T_NUM, T_BOOL */
  const char *str;            /* T_STR text, T_ENUM word */
  Decl *decl;                 /* T_DECL, known */
  const Schema *schema;       /* T_DECL: the kind's schema (known or not) */
  AstNode *list;              /* T_LIST, known */
  const char *const *enums;   /* T_ENUM: the words it may take, when known */
} Value;

typedef struct SubEntry {
  AstNode *node;              /* AST_SUBBLOCK */
  Decl *owner;
} SubEntry;

struct Decl {
  AstNode *node;              /* AST_DECL, or AST_EXTEND for an inline extension */
  const char *name;
  DeclKind kind;
  const Schema *schema;
  int file;                   /* index of the file that declares it */
  const char *parent_name;
  Span parent_span;
  Decl *parent;
  int ext_state;              /* 0 new, 1 resolving, 2 done, 3 failed */
  bool checked;
  AstNode **fields;           /* per schema field: the AST_FIELD that sets it, or NULL */
  Decl **owners;              /* per schema field: the declaration that wrote it */
  Value *vals;                /* per schema field: memoised value */
  unsigned char *vstate;      /* 0 not evaluated, 1 evaluating, 2 done */
  SubEntry *subs;
  int nsubs;
  AstNode **lets;             /* block: lets by name (find_let) */
  unsigned letcap;
};

typedef enum { ENV_DECL, ENV_BLOCK, ENV_SWEEP } EnvKind;

typedef struct Env {
  EnvKind kind;
  Decl *self;                 /* the declaration whose fields bare names refer to */
  Decl *owner;                /* the declaration that wrote the expression */
} Env;

typedef struct LetMemo {      /* aux of an AST_LET in a block */
  int state;
  Value v;
} LetMemo;

enum { MAX_EVAL_DEPTH = 256 };

static Value check_value(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what);
static Value check_word(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what);
static bool name_in_scope(Sema *s, Env *e, const char *name);
static Value eval(Sema *s, Env *e, AstNode *n);
static void check_decl(Sema *s, Decl *d);

/* --- errors ------------------------------------------------------------------------ */

static SrcFile *file_of(Sema *s, Decl *d) { return s->files[d->file].src; }

/* Reports an error once: evaluating an inherited field for several children would
 * otherwise repeat the same message at the same place. */
static bool first_report(Sema *s, SrcFile *f, Span sp, const char *msg) {
  uint64_t h = hash_str(hash_word(hash_word(HASH_BASIS ^ (uint64_t)f->id, sp.start), sp.end), msg);
  if (!h) h = 1;   /* 0 marks an empty slot */
  if (2 * (s->nseen + 1) > s->seencap) {
    unsigned cap = s->seencap ? 2 * s->seencap : 256;
    uint64_t *t = arena_alloc(&s->arena, cap * sizeof *t);
    for (unsigned i = 0; i < s->seencap; i++) {
      if (!s->seen[i]) continue;
      unsigned j = (unsigned)(s->seen[i] & (cap - 1));
      while (t[j]) j = (j + 1) & (cap - 1);
      t[j] = s->seen[i];
    }
    s->seen = t;
    s->seencap = cap;
  }
  unsigned j = (unsigned)(h & (s->seencap - 1));
  for (; s->seen[j]; j = (j + 1) & (s->seencap - 1))
    if (s->seen[j] == h) return false;
  s->seen[j] = h;
  s->nseen++;
  return true;
}

static bool err_at(Sema *s, SrcFile *f, Span sp, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool err_at(Sema *s, SrcFile *f, Span sp, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!first_report(s, f, sp, msg)) return false;
  diag_error(s->diag, f, sp, "%s", msg);
  return true;
}

static const char *decl_title(Decl *d, char *buf, size_t n) {
  snprintf(buf, n, "%s `%s`", decl_kind_names[d->kind], d->name);
  return buf;
}

/* An error inside an expression; when the expression was inherited, says for whom. */
static bool err_env(Sema *s, Env *e, Span sp, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool err_env(Sema *s, Env *e, Span sp, const char *fmt, ...) {
  char msg[1024], t[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* One report per place and message, whichever declaration inherited the expression. */
  if (!first_report(s, file_of(s, e->owner), sp, msg)) return false;
  if (e->self && e->owner && e->self != e->owner && n > 0 && (size_t)n < sizeof msg)
    snprintf(msg + n, sizeof msg - (size_t)n, " (in %s, which inherits this field)",
             decl_title(e->self, t, sizeof t));
  diag_error(s->diag, file_of(s, e->owner), sp, "%s", msg);
  return true;
}

static void note_decl(Sema *s, Decl *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note_decl(Sema *s, Decl *d, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_note(s->diag, file_of(s, d), d->node->name_span, "%s", msg);
}

static const char *describe(Value v, char *buf, size_t n) {
  switch (v.t) {
  case T_NUM: return dim_describe(v.dim, buf, n);
  case T_BOOL: return "a boolean";
  case T_STR: return "a string";
  case T_ENUM:
    if (v.str) snprintf(buf, n, "the word `%s`", v.str);
    else if (v.enums) {
      char l[400];
      snprintf(buf, n, "a word (%s)", enum_list(v.enums, l, sizeof l));
    } else snprintf(buf, n, "a word");
    return buf;
  case T_LIST: return "a list";
  case T_DECL:
    if (v.decl) snprintf(buf, n, "%s `%s`", v.schema->name, v.decl->name);
    else snprintf(buf, n, "a %s", v.schema->name);
    return buf;
  default: return "an invalid value";
  }
}

/* --- values ------------------------------------------------------------------------ */

static Value v_error(void) { Value v = {0}; return v; }

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
  case FT_REAL: case FT_ANY: return v_unknown_num(dim_none(), false);
  case FT_BOOL: v.t = T_BOOL; return v;
  case FT_STRING: v.t = T_STR; return v;
  case FT_ENUM: case FT_SPAN: v.t = T_ENUM; v.enums = fd->enums; return v;
  case FT_ENUMLIST: v.t = T_LIST; return v;
  case FT_REF: v.t = T_DECL; v.schema = schema_of(fd->ref); return v;
  }
  return v;
}

/* --- the declaration table ----------------------------------------------------------- */

static unsigned ptr_hash(const void *p) {
  unsigned long x = (unsigned long)(uintptr_t)p;
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ul;
  return (unsigned)(x >> 32);
}

static Decl *table_get(Sema *s, const char *name) {
  if (!s->tcap) return NULL;
  for (unsigned j = ptr_hash(name) & (s->tcap - 1); s->table[j]; j = (j + 1) & (s->tcap - 1))
    if (s->table[j]->name == name) return s->table[j];
  return NULL;
}

static void table_put(Sema *s, Decl *d) {
  if (2 * ((unsigned)s->ndecls + 1) > s->tcap) {
    unsigned cap = s->tcap ? 2 * s->tcap : 256;
    Decl **t = arena_alloc(&s->arena, cap * sizeof *t);
    for (int i = 0; i < s->ndecls; i++) {
      Decl *x = s->decls[i];
      if (table_get(s, x->name) != x) continue;   /* only the first of duplicates */
      unsigned j = ptr_hash(x->name) & (cap - 1);
      while (t[j]) j = (j + 1) & (cap - 1);
      t[j] = x;
    }
    s->table = t;
    s->tcap = cap;
  }
  unsigned j = ptr_hash(d->name) & (s->tcap - 1);
  while (s->table[j]) j = (j + 1) & (s->tcap - 1);
  s->table[j] = d;
}

static Decl *decl_new(Sema *s, AstNode *node, DeclKind kind, int file) {
  Decl *d = arena_alloc(&s->arena, sizeof *d);
  d->node = node;
  d->name = node->name;
  d->kind = kind;
  d->schema = schema_of(kind);
  d->file = file;
  int n = schema_nfields(d->schema);
  d->fields = arena_alloc(&s->arena, (size_t)n * sizeof *d->fields);
  d->owners = arena_alloc(&s->arena, (size_t)n * sizeof *d->owners);
  d->vals = arena_alloc(&s->arena, (size_t)n * sizeof *d->vals);
  d->vstate = arena_alloc(&s->arena, (size_t)n);
  return d;
}

static void collect(Sema *s, int fi) {
  AstNode *root = s->files[fi].root;
  if (!root) return;
  for (AstNode *c = root->u.list.first; c; c = c->next) {
    if (c->kind != AST_DECL) continue;
    if (c->u.decl.kind == DK_UNKNOWN) {
      Suggest sg;
      suggest_init(&sg, c->u.decl.kind_word);
      for (int k = 1; k < DK_N; k++) suggest_offer(&sg, decl_kind_names[k]);
      err_at(s, s->files[fi].src, c->u.decl.kind_span,
             "unknown declaration kind `%s`%s%s%s: a declaration is a gpu, cluster, block, model, plan, scenario or sweep",
             c->u.decl.kind_word, sg.best ? " (did you mean `" : "", sg.best ? sg.best : "", sg.best ? "`?)" : "");
      continue;
    }
    Decl *d = decl_new(s, c, c->u.decl.kind, fi);
    d->parent_name = c->u.decl.parent;
    d->parent_span = c->u.decl.parent_span;
    c->aux = d;
    Decl *prev = table_get(s, d->name);
    XGROW(s->decls, s->ndecls + 1, s->capdecls);
    s->decls[s->ndecls++] = d;
    if (prev) {
      char t[256];
      err_at(s, s->files[fi].src, c->name_span, "`%s` is declared twice", d->name);
      note_decl(s, prev, "first declared here as %s", decl_title(prev, t, sizeof t));
      d->checked = true;   /* the duplicate is not checked further */
      d->ext_state = 3;
      continue;
    }
    table_put(s, d);
  }
}

/* A declaration by name as seen from file fi; reports "not imported" itself. */
static Decl *lookup(Sema *s, int fi, const char *name, Span at, bool *reported) {
  Decl *d = table_get(s, name);
  *reported = false;
  if (!d) return NULL;
  if (!s->files[fi].reach[d->file]) {
    err_at(s, s->files[fi].src, at, "`%s` is declared in %s, which this file does not import", name,
           s->files[d->file].src->path);
    *reported = true;
    return NULL;
  }
  return d;
}

static void suggest_decls(Sema *s, Suggest *sg, DeclKind kind) {
  for (int i = 0; i < s->ndecls; i++)
    if (kind == DK_UNKNOWN || s->decls[i]->kind == kind) suggest_offer(sg, s->decls[i]->name);
}

/* --- extends --------------------------------------------------------------------- */

/* A sweep extends a scenario, never a sweep: a sweep's `vary`, `let`, `require`, objective
 * and `keep` are statements, not fields, and a child would inherit its parent's scenario
 * without them, so a child adding one axis would silently sweep that axis alone. */
static bool kinds_compatible(DeclKind child, DeclKind parent) {
  return child == DK_SWEEP ? parent == DK_SCENARIO : child == parent;
}

static void inherit(Sema *s, Decl *d, Decl *p) {
  int n = schema_nfields(d->schema);
  memcpy(d->fields, p->fields, (size_t)n * sizeof *d->fields);
  memcpy(d->owners, p->owners, (size_t)n * sizeof *d->owners);
  d->subs = arena_alloc(&s->arena, (size_t)(p->nsubs ? p->nsubs : 1) * sizeof *d->subs);
  memcpy(d->subs, p->subs, (size_t)p->nsubs * sizeof *d->subs);
  d->nsubs = p->nsubs;
}

/* The body of a declaration: an AST_DECL's or an inline extension's. */
static AstList body_of(Decl *d) { return d->node->kind == AST_DECL ? d->node->u.decl.body : d->node->u.list; }

/* The child's own fields and nested blocks over what it inherited. */
static void assemble(Sema *s, Decl *d) {
  AstList body = body_of(d);
  int own = 0;
  for (AstNode *c = body.first; c; c = c->next) own += c->kind == AST_SUBBLOCK;
  SubEntry *subs = arena_alloc(&s->arena, (size_t)(d->nsubs + own + 1) * sizeof *subs);
  if (d->nsubs) memcpy(subs, d->subs, (size_t)d->nsubs * sizeof *subs);
  d->subs = subs;
  for (AstNode *c = body.first; c; c = c->next) {
    if (c->kind == AST_FIELD) {
      const FieldDef *fd = schema_field(d->schema, c->name);
      if (!fd || (fd->flags & F_DERIVED)) continue;
      int i = schema_field_index(d->schema, fd);
      d->fields[i] = c;
      d->owners[i] = d;
    } else if (c->kind == AST_SUBBLOCK) {
      int k = 0;
      for (; k < d->nsubs; k++) {
        AstNode *o = d->subs[k].node;
        if (o->name == c->name && o->u.sub.label == c->u.sub.label && d->subs[k].owner != d) break;
      }
      d->subs[k] = (SubEntry){c, d};
      if (k == d->nsubs) d->nsubs++;
    }
  }
}

/* The parent of d as written, checked (declared, visible, same kind); NULL if none or bad. */
static Decl *find_parent(Sema *s, Decl *d, bool *ok) {
  *ok = true;
  if (!d->parent_name) return NULL;
  bool reported;
  Decl *p = lookup(s, d->file, d->parent_name, d->parent_span, &reported);
  char t[256], t2[256];
  if (!p && !reported) {
    Suggest sg;
    suggest_init(&sg, d->parent_name);
    suggest_decls(s, &sg, d->kind);
    err_at(s, file_of(s, d), d->parent_span, "%s extends `%s`, which is not declared%s%s%s",
           decl_title(d, t, sizeof t), d->parent_name, sg.best ? "; did you mean `" : "",
           sg.best ? sg.best : "", sg.best ? "`?" : "");
  } else if (p && !kinds_compatible(d->kind, p->kind)) {
    if (d->kind == DK_SWEEP && p->kind == DK_SWEEP)
      err_at(s, file_of(s, d), d->parent_span,
             "%s cannot extend %s: a sweep extends a scenario (its `vary`, `let`, `require`, objective and `keep` "
             "would not be inherited); extend %s%s%s and repeat them",
             decl_title(d, t, sizeof t), decl_title(p, t2, sizeof t2), p->parent_name ? "`" : "its scenario",
             p->parent_name ? p->parent_name : "", p->parent_name ? "`" : "");
    else
      err_at(s, file_of(s, d), d->parent_span, "%s cannot extend %s: a declaration extends one of its own kind",
             decl_title(d, t, sizeof t), decl_title(p, t2, sizeof t2));
    note_decl(s, p, "`%s` is declared here", p->name);
    p = NULL;
  }
  if (!p) *ok = false;
  return p;
}

/* Resolves the extends chain above d without recursion: walks up to the first resolved
 * ancestor (or the root, or a cycle), then assembles the chain from the top down.  So a
 * chain of any length, written in any order, resolves the same way. */
static bool resolve_extends(Sema *s, Decl *d) {
  if (d->ext_state >= 2) return d->ext_state == 2;
  int n = 0, capchain = 0, capok = 0;
  Decl **chain = NULL;
  bool *ok = NULL;
  Decl *x = d;
  while (x && x->ext_state == 0) {
    XGROW(chain, n + 1, capchain);
    XGROW(ok, n + 1, capok);
    x->ext_state = 1;
    chain[n] = x;
    x->parent = find_parent(s, x, &ok[n]);
    n++;
    x = x->parent;
  }
  if (x && x->ext_state == 1) {   /* x is on this chain: a cycle */
    Decl *last = chain[n - 1];
    char text[1024];
    size_t k = 0;
    int j = 0;
    while (chain[j] != x) j++;
    for (int i = j; i < n && k < sizeof text - 64; i++)
      k += (size_t)snprintf(text + k, sizeof text - k, "`%s` extends ", chain[i]->name);
    snprintf(text + k, sizeof text - k, "`%s`", x->name);
    err_at(s, file_of(s, last), last->parent_span, "`extends` cycle: %s", text);
    if (last != x) note_decl(s, x, "`%s` is declared here", x->name);
    ok[n - 1] = false;
  }
  for (int i = n - 1; i >= 0; i--) {
    Decl *y = chain[i];
    bool good = ok[i] && (!y->parent || y->parent->ext_state == 2);
    if (!good) y->parent = NULL;
    if (y->parent) inherit(s, y, y->parent);
    assemble(s, y);
    y->ext_state = good ? 2 : 3;
  }
  free(chain);
  free(ok);
  return d->ext_state == 2;
}

/* --- field values -------------------------------------------------------------------- */

static Value field_value(Sema *s, Decl *d, int i);
static Value let_value(Sema *s, Env *e, AstNode *let);

/* Evaluation nested deeper than MAX_EVAL_DEPTH (a long chain of references) is deferred
 * rather than refused: the field or let is remembered, everything that depended on it is
 * left unevaluated (and silent), and the driver evaluates the deferred ones first in the
 * next round, from a shallow stack.  Each round completes at least the deepest deferred
 * value, so a chain of any length, in any order, evaluates to the same result. */
static void defer(Sema *s, Decl *d, int field, AstNode *let) {
  XGROW(s->deferred, s->ndeferred + 1, s->capdeferred);
  s->deferred[s->ndeferred++] = (Deferred){d, field, let};
}

static void run_deferred(Sema *s, Deferred *list, unsigned n) {
  for (unsigned k = n; k-- > 0;) {   /* deepest first */
    Deferred x = list[k];
    if (x.let) {
      Env e = {ENV_BLOCK, x.decl, x.decl};
      let_value(s, &e, x.let);
    } else {
      field_value(s, x.decl, x.field);
    }
  }
}

static Value derived_value(Sema *s, Decl *d, const FieldDef *fd) {
  if (d->kind == DK_CLUSTER && strcmp(fd->name, "gpus") == 0) {
    Value n = field_value(s, d, schema_field_index(d->schema, schema_field(d->schema, "nodes")));
    Value g = field_value(s, d, schema_field_index(d->schema, schema_field(d->schema, "gpus_per_node")));
    if (n.t == T_NUM && g.t == T_NUM && n.known && g.known) return v_num(n.num * g.num, dim_none(), true);
  }
  return v_of_type(fd);
}

static Value field_value(Sema *s, Decl *d, int i) {
  if (d->vstate[i] == 2) return d->vals[i];
  const FieldDef *fd = &d->schema->fields[i];
  if (d->vstate[i] == 1) {
    AstNode *f = d->fields[i];
    Env e = {ENV_DECL, d, f ? d->owners[i] : d};
    err_env(s, &e, f ? f->name_span : d->node->name_span, "field `%s` depends on its own value", fd->name);
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
    v = check_value(s, &e, d->fields[i]->u.bin.rhs, fd, fd->name);
    s->eval_depth--;
    if (s->ndeferred != deferred) {   /* depends on a deferred value: evaluate again later */
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

static Value field_by_name(Sema *s, Decl *d, const char *name) {
  const FieldDef *fd = schema_field(d->schema, name);
  return fd ? field_value(s, d, schema_field_index(d->schema, fd)) : v_error();
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

static const char *const block_roots[] = {"model", "plan", "cluster", NULL};
static const char *const sweep_roots[] = {"model", "plan", "cluster", "memory", "iteration",
                                          "tokens_per_s", "mfu", NULL};

static Value root_value(const char *name) {
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

static Value let_value(Sema *s, Env *e, AstNode *let) {
  LetMemo *m = let->aux;
  if (!m) let->aux = m = arena_alloc(&s->arena, sizeof *m);
  if (m->state == 2) return m->v;
  if (m->state == 1) {
    err_env(s, e, let->u.bin.lhs->span, "`let %s` depends on its own value", let->u.bin.lhs->name);
    return v_error();
  }
  if (s->eval_depth >= MAX_EVAL_DEPTH) {
    defer(s, e->self, -1, let);
    return v_error();
  }
  m->state = 1;
  unsigned deferred = s->ndeferred;
  s->eval_depth++;
  m->v = eval(s, e, let->u.bin.rhs);
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
    suggest_decls(s, &sg, DK_UNKNOWN);
  } else {
    const char *const *roots = e->kind == ENV_BLOCK ? block_roots : sweep_roots;
    for (int i = 0; roots[i]; i++) suggest_offer(&sg, roots[i]);
    if (e->kind == ENV_BLOCK)
      for (AstNode *c = body_of(e->self).first; c; c = c->next)
        if (c->kind == AST_LET && c->u.bin.lhs->kind == AST_NAME) suggest_offer(&sg, c->u.bin.lhs->name);
  }
  if (sg.best) err_env(s, e, n->span, "unknown name `%s`; did you mean `%s`?", n->name, sg.best);
  else if (e->kind == ENV_BLOCK)
    err_env(s, e, n->span, "unknown name `%s`: a block sees its lets, `model`, `plan` and `cluster`", n->name);
  else err_env(s, e, n->span, "unknown name `%s`", n->name);
}

static Value eval_name(Sema *s, Env *e, AstNode *n) {
  if (e->kind == ENV_DECL) {
    const FieldDef *fd = schema_field(e->self->schema, n->name);
    if (fd) return field_value(s, e->self, schema_field_index(e->self->schema, fd));
  } else if (e->kind == ENV_BLOCK) {
    AstNode *let = find_let(s, e->self, n->name);
    if (let) return let_value(s, e, let);
    if (enum_has(block_roots, n->name)) return root_value(n->name);
  } else if (enum_has(sweep_roots, n->name)) {
    return root_value(n->name);
  }
  bool reported;
  Decl *d = lookup(s, e->owner->file, n->name, n->span, &reported);
  if (d) {
    if (d->ext_state == 0) resolve_extends(s, d);
    return v_decl(d);
  }
  if (!reported) unknown_name(s, e, n);
  return v_error();
}

static Value eval_member(Sema *s, Env *e, AstNode *n) {
  Value obj = eval(s, e, n->u.bin.lhs);
  if (obj.t == T_ERROR) return obj;
  char buf[128];
  if (obj.t != T_DECL) {
    err_env(s, e, n->name_span, "`.%s` needs a declaration on its left, found %s", n->name,
            describe(obj, buf, sizeof buf));
    return v_error();
  }
  const FieldDef *fd = schema_field(obj.schema, n->name);
  if (!fd) {
    Suggest sg;
    suggest_init(&sg, n->name);
    for (const FieldDef *f = obj.schema->fields; f->name; f++) suggest_offer(&sg, f->name);
    err_env(s, e, n->name_span, "unknown field `%s` in %s%s%s%s", n->name, obj.schema->name,
            sg.best ? "; did you mean `" : "", sg.best ? sg.best : "", sg.best ? "`?" : "");
    return v_error();
  }
  if (obj.known) return field_value(s, obj.decl, schema_field_index(obj.schema, fd));
  return v_of_type(fd);
}

/* --- operators -------------------------------------------------------------------- */

static bool need_num(Sema *s, Env *e, AstNode *at, Value v, const char *op) {
  char b[128];
  if (v.t == T_NUM || v.t == T_ERROR) return v.t == T_NUM;
  err_env(s, e, at->span, "`%s` needs numbers, found %s", op, describe(v, b, sizeof b));
  return false;
}

static bool need_bool(Sema *s, Env *e, AstNode *at, Value v, const char *op) {
  char b[128];
  if (v.t == T_BOOL || v.t == T_ERROR) return v.t == T_BOOL;
  err_env(s, e, at->span, "`%s` needs booleans (true, false, comparisons), found %s", op, describe(v, b, sizeof b));
  return false;
}

static Value eval_arith(Sema *s, Env *e, AstNode *n, Value a, Value b) {
  BinOp op = n->u.bin.op;
  const char *ot = binop_text[op];
  bool lhs_ok = need_num(s, e, n->u.bin.lhs, a, ot), rhs_ok = need_num(s, e, n->u.bin.rhs, b, ot);
  if (!lhs_ok || !rhs_ok) return v_error();   /* both sides checked, both reported */
  char da[128], db[128];
  Dim d = a.dim;
  if (op == OP_ADD || op == OP_SUB || op == OP_MOD) {
    if (!dim_eq(a.dim, b.dim)) {
      err_env(s, e, n->span, "`%s` needs operands of the same dimension: %s and %s", ot,
              dim_describe(a.dim, da, sizeof da), dim_describe(b.dim, db, sizeof db));
      return v_error();
    }
  } else if (op == OP_MUL) d = dim_mul(a.dim, b.dim);
  else d = dim_div(a.dim, b.dim);
  bool is_int = a.is_int && b.is_int && op != OP_DIV;
  if (!a.known || !b.known) return v_unknown_num(d, is_int || (op == OP_DIV && a.is_int && b.is_int));
  if ((op == OP_DIV || op == OP_MOD) && b.num == 0) {
    err_env(s, e, n->u.bin.rhs->span, "division by zero");
    return v_error();
  }
  double r = op == OP_ADD ? a.num + b.num : op == OP_SUB ? a.num - b.num : op == OP_MUL ? a.num * b.num
           : op == OP_DIV ? a.num / b.num : fmod(a.num, b.num);
  if (!isfinite(r)) {
    err_env(s, e, n->span, "the result of `%s` is out of range", ot);
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
    err_env(s, e, n->span, "cannot compare %s with %s", describe(a, da, sizeof da), describe(b, db, sizeof db));
    return v_error();
  }
  if (a.t != T_NUM && op != OP_EQ && op != OP_NE) {
    err_env(s, e, n->span, "`%s` compares numbers; found %s", binop_text[op], describe(a, da, sizeof da));
    return v_error();
  }
  if (!a.known || !b.known) return r;
  r.known = true;
  if (a.t == T_NUM) {
    double x = a.num, y = b.num;
    r.num = op == OP_EQ ? x == y : op == OP_NE ? x != y : op == OP_LT ? x < y : op == OP_LE ? x <= y
          : op == OP_GT ? x > y : x >= y;
  } else {
    bool eq = a.t == T_STR || a.t == T_ENUM ? a.str == b.str : a.t == T_DECL ? a.decl == b.decl : a.num == b.num;
    r.num = op == OP_EQ ? eq : !eq;
  }
  return r;
}

/* In `plan.schedule == gpipe`, the bare word takes its meaning from the other side. */
static Value eval_operand(Sema *s, Env *e, AstNode *n, AstNode *other, BinOp op) {
  if ((op == OP_EQ || op == OP_NE) && n->kind == AST_NAME && !name_in_scope(s, e, n->name)) {
    Value o = eval(s, e, other);
    if (o.t == T_ENUM && o.enums) {
      FieldDef fd = {"value here", FT_ENUM, {{0}}, o.enums, DK_UNKNOWN, 0, 0, 0};
      return check_word(s, e, n, &fd, "value here");
    }
  }
  return eval(s, e, n);
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
  Value a = eval(s, e, n->u.bin.lhs);
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
      err_env(s, e, n->name_span, "operator `%s` can only be used as `op NAME = %s(...)` in a block", f, f);
    else
      err_env(s, e, n->name_span, "unknown function `%s`: the functions are min, max, ceil and floor", f);
    return v_error();
  }
  unsigned want = round ? 1 : 2;
  if ((round && n->u.list.count != 1) || (minmax && n->u.list.count < want)) {
    err_env(s, e, n->span, "`%s` takes %s", f, round ? "one argument" : "two or more arguments");
    return v_error();
  }
  Value acc = {0};
  for (AstNode *a = n->u.list.first; a; a = a->next) {
    if (a->kind == AST_NAMEDARG) {
      err_env(s, e, a->name_span, "`%s` takes no named arguments", f);
      return v_error();
    }
    Value v = eval(s, e, a);
    if (!need_num(s, e, a, v, f)) return v_error();
    if (round) {
      acc = v;
      if (v.known) acc.num = f[0] == 'c' ? ceil(v.num) : floor(v.num);
      acc.is_int = true;
      continue;
    }
    if (acc.t == T_ERROR) { acc = v; continue; }
    char da[128], db[128];
    if (!dim_eq(acc.dim, v.dim)) {
      err_env(s, e, a->span, "`%s` needs arguments of one dimension: %s and %s", f,
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
    err_env(s, e, n->span, "number out of range");
    return v_error();
  }
  if (n->u.num.is_int && !n->u.num.unit && n->u.num.inexact) {
    err_env(s, e, n->span, "integer too large to be exact (the limit is 2^53)");
    return v_error();
  }
  return v_num(x, d, is_whole(x));
}

static Decl *inline_decl(Sema *s, Env *e, AstNode *n);

static Value eval(Sema *s, Env *e, AstNode *n) {
  Value v = {0};
  switch (n->kind) {
  case AST_NUM: return eval_number(s, e, n);
  case AST_STR: v.t = T_STR; v.known = true; v.str = n->name; return v;
  case AST_BOOL: v.t = T_BOOL; v.known = true; v.num = n->u.boolean; return v;
  case AST_NAME: return eval_name(s, e, n);
  case AST_MEMBER: return eval_member(s, e, n);
  case AST_BINOP: return eval_binop(s, e, n);
  case AST_UNOP: return eval_unop(s, e, n);
  case AST_CALL: return eval_call(s, e, n);
  case AST_LIST:
    for (AstNode *c = n->u.list.first; c; c = c->next) eval(s, e, c);
    v.t = T_LIST; v.known = true; v.list = n;
    return v;
  case AST_EXTEND: {
    Decl *d = inline_decl(s, e, n);
    return d ? v_decl(d) : v_error();
  }
  default:
    err_env(s, e, n->span, "this is not an expression");
    return v_error();
  }
}

/* --- checking a value against a field ------------------------------------------------ */

static bool check_range(Sema *s, Env *e, AstNode *n, Value v, const FieldDef *fd, const char *what) {
  if (!v.known) return true;
  char lo[64] = "", hi[64] = "";
  bool bad = false;
  if (fd->flags & F_HAS_MIN) bad |= (fd->flags & F_MIN_OPEN) ? v.num <= fd->min : v.num < fd->min;
  if (fd->flags & F_HAS_MAX) bad |= v.num > fd->max;
  if (!bad) return true;
  if (fd->flags & F_HAS_MIN) snprintf(lo, sizeof lo, "%s %g", (fd->flags & F_MIN_OPEN) ? "more than" : "at least", fd->min);
  if (fd->flags & F_HAS_MAX) snprintf(hi, sizeof hi, "%sat most %g", lo[0] ? " and " : "", fd->max);
  if (fd->type == FT_QTY) err_env(s, e, n->span, "`%s` must be %s%s", what, lo, hi);
  else err_env(s, e, n->span, "`%s` must be %s%s, found %g", what, lo, hi, v.num);
  return false;
}

/* Does a bare name mean something here (a field, a let, a root, a declaration)?  If not,
 * where a word is expected it is a misspelt word. */
static bool name_in_scope(Sema *s, Env *e, const char *name) {
  if (e->kind == ENV_DECL && schema_field(e->self->schema, name)) return true;
  if (e->kind == ENV_BLOCK && (find_let(s, e->self, name) || enum_has(block_roots, name))) return true;
  if (e->kind == ENV_SWEEP && enum_has(sweep_roots, name)) return true;
  return table_get(s, name) != NULL;
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
    err_env(s, e, n->span, "`%s` is not a valid %s: expected %s%s%s%s", n->name, what,
            enum_list(fd->enums, b, sizeof b), sg.best ? " (did you mean `" : "", sg.best ? sg.best : "",
            sg.best ? "`?)" : "");
    return v_error();
  }
  Value v = eval(s, e, n);
  if (v.t == T_ERROR) return v;
  char d[128], l[512];
  if (v.t == T_ENUM) {
    if (v.known ? enum_has(fd->enums, v.str) : enums_within(v.enums, fd->enums)) return v;
    if (v.known)
      err_env(s, e, n->span, "`%s` takes one of %s; found `%s`", what, enum_list(fd->enums, b, sizeof b), v.str);
    else
      err_env(s, e, n->span, "`%s` takes one of %s; this value is one of %s", what, enum_list(fd->enums, b, sizeof b),
              enum_list(v.enums, l, sizeof l));
    return v_error();
  }
  err_env(s, e, n->span, "`%s` takes one of %s; found %s", what, enum_list(fd->enums, b, sizeof b),
          describe(v, d, sizeof d));
  return v_error();
}

static Value check_enum_list(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what) {
  if (n->kind != AST_LIST) {
    Value v = eval(s, e, n);
    char d[128];
    if (v.t != T_LIST && v.t != T_ERROR) {
      err_env(s, e, n->span, "`%s` takes a list like [tp, dp, pp]; found %s", what, describe(v, d, sizeof d));
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
        err_env(s, e, c->span, "`%s` appears twice in `%s`", c->name, what);
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
    Decl *d = lookup(s, e->owner->file, n->name, n->span, &reported);
    if (!d && !reported) {
      Suggest sg;
      suggest_init(&sg, n->name);
      suggest_decls(s, &sg, fd->ref);
      err_env(s, e, n->span, "unknown %s `%s`%s%s%s", want->name, n->name, sg.best ? "; did you mean `" : "",
              sg.best ? sg.best : "", sg.best ? "`?" : "");
      return v_error();
    }
    if (!d) return v_error();
  }
  Value v = eval(s, e, n);
  if (v.t == T_ERROR) return v;
  char b[128];
  if (v.t != T_DECL || v.schema != want) {
    bool named = n->kind == AST_NAME;
    if (err_env(s, e, n->span, "`%s` needs a %s%s%s%s%s", what, want->name, named ? "; `" : ", found ",
                named ? n->name : "", named ? "` is " : "", describe(v, b, sizeof b)) && v.known && v.decl)
      note_decl(s, v.decl, "`%s` is declared here", v.decl->name);
    return v_error();
  }
  return v;
}

static Value check_number(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what) {
  Value v = eval(s, e, n);
  if (v.t == T_ERROR) return v;
  char b[128], w[128];
  Dim want = fd->type == FT_QTY ? fd->dim : dim_none();
  if (v.t != T_NUM) {
    err_env(s, e, n->span, "`%s` needs %s, found %s", what,
            fd->type == FT_COUNT ? "a count" : dim_describe(want, w, sizeof w), describe(v, b, sizeof b));
    return v_error();
  }
  if (!dim_eq(v.dim, want)) {
    if (fd->type == FT_COUNT)
      err_env(s, e, n->span, "`%s` is a count, with no unit; found %s", what, dim_describe(v.dim, b, sizeof b));
    else if (dim_is_none(v.dim) && n->kind == AST_NUM)
      err_env(s, e, n->span, "`%s` needs a unit: expected %s, found a plain number", what,
              dim_describe(want, w, sizeof w));
    else
      err_env(s, e, n->span, "`%s` expects %s, found %s", what, dim_describe(want, w, sizeof w),
              dim_describe(v.dim, b, sizeof b));
    return v_error();
  }
  if (fd->type == FT_COUNT && v.known && !is_whole(v.num)) {
    if (n->kind == AST_BINOP && n->u.bin.op == OP_DIV)
      err_env(s, e, n->span, "`%s` must be a whole number, but this division gives %g: the operands do not divide",
              what, v.num);
    else err_env(s, e, n->span, "`%s` must be a whole number, found %g", what, v.num);
    return v_error();
  }
  if (!check_range(s, e, n, v, fd, what)) return v_error();
  return v;
}

/* Checks the expression n as the value of field fd; "what" names it in messages. */
static Value check_value(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what) {
  Value v;
  char b[128];
  switch (fd->type) {
  case FT_ENUM: return check_word(s, e, n, fd, what);
  case FT_ENUMLIST: return check_enum_list(s, e, n, fd, what);
  case FT_REF: return check_ref(s, e, n, fd, what);
  case FT_SPAN:
    if (n->kind == AST_NAME && enum_has(fd->enums, n->name)) return check_word(s, e, n, fd, what);
    if (n->kind == AST_NAME) {
      char l[256];
      err_env(s, e, n->span, "`%s` is %s or a count of nodes; found `%s`", what, enum_list(fd->enums, l, sizeof l),
              n->name);
      return v_error();
    }
    return check_number(s, e, n, &(FieldDef){what, FT_COUNT, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN, 1, 0}, what);
  case FT_COUNT: case FT_QTY: case FT_REAL: case FT_ANY: return check_number(s, e, n, fd, what);
  case FT_BOOL: case FT_STRING:
    v = eval(s, e, n);
    if (v.t == T_ERROR || v.t == (fd->type == FT_BOOL ? T_BOOL : T_STR)) return v;
    err_env(s, e, n->span, "`%s` needs %s, found %s", what, fd->type == FT_BOOL ? "true or false" : "a string",
            describe(v, b, sizeof b));
    return v_error();
  }
  return v_error();
}

/* `cluster = perlmutter { nodes = 32 }`: an anonymous declaration extending perlmutter. */
static Decl *inline_decl(Sema *s, Env *e, AstNode *n) {
  if (n->aux) return n->aux;
  bool reported;
  Decl *base = lookup(s, e->owner->file, n->name, n->name_span, &reported);
  if (!base) {
    if (!reported) {
      Suggest sg;
      suggest_init(&sg, n->name);
      suggest_decls(s, &sg, DK_UNKNOWN);
      err_env(s, e, n->name_span, "cannot extend `%s`: it is not declared%s%s%s", n->name,
              sg.best ? "; did you mean `" : "", sg.best ? sg.best : "", sg.best ? "`?" : "");
    }
    return NULL;
  }
  if (base->ext_state == 0) resolve_extends(s, base);
  Decl *d = decl_new(s, n, base->kind, e->owner->file);
  d->name = arena_printf(&s->arena, "%s { ... }", base->name);
  d->parent = base;
  n->aux = d;
  inherit(s, d, base);
  assemble(s, d);
  d->ext_state = 2;
  check_decl(s, d);
  return d;
}

/* --- statements of a declaration --------------------------------------------------- */

static bool only_in(Sema *s, Decl *d, AstNode *c, DeclKind k1, DeclKind k2, const char *what) {
  if (d->kind == k1 || d->kind == k2) return true;
  err_at(s, file_of(s, d), c->span, "%s is only allowed in a %s%s%s", what, decl_kind_names[k1],
         k2 != k1 ? " or a " : "", k2 != k1 ? decl_kind_names[k2] : "");
  return false;
}

static void dup_check(Sema *s, Decl *d, AstNode *first, AstNode *c, const char *name, Span at, const char *what) {
  for (AstNode *o = first; o && o != c; o = o->next) {
    const char *oname = o->kind == AST_LET && o->u.bin.lhs->kind == AST_NAME ? o->u.bin.lhs->name
                        : (o->kind == AST_FIELD || o->kind == AST_OP) ? o->name : NULL;
    if (oname != name) continue;
    if (err_at(s, file_of(s, d), at, "%s `%s` is set twice", what, name))
      diag_note(s->diag, file_of(s, d), o->span, "first set here");
    return;
  }
}

static void unknown_field(Sema *s, Decl *d, AstNode *c, const Schema *sc) {
  Suggest sg;
  suggest_init(&sg, c->name);
  for (const FieldDef *f = sc->fields; f->name; f++) suggest_offer(&sg, f->name);
  for (const SubDef *sd = sc->subs; sd && sd->word; sd++) suggest_offer(&sg, sd->word);
  err_at(s, file_of(s, d), c->name_span, "unknown field `%s` in %s%s%s%s", c->name, sc->name,
         sg.best ? "; did you mean `" : "", sg.best ? sg.best : "", sg.best ? "`?" : "");
}

/* The fields of a nested block (tier, measured): checked where they are written. */
static void check_sub(Sema *s, Decl *d, AstNode *c) {
  const SubDef *sd = schema_sub(d->schema, c->name);
  if (!sd) {
    Suggest sg;
    suggest_init(&sg, c->name);
    for (const SubDef *x = d->schema->subs; x && x->word; x++) suggest_offer(&sg, x->word);
    err_at(s, file_of(s, d), c->name_span, "%s has no nested block `%s`%s%s%s", d->schema->name, c->name,
           sg.best ? "; did you mean `" : "", sg.best ? sg.best : "", sg.best ? "`?" : "");
    return;
  }
  if (sd->labelled && !c->u.sub.label) {
    err_at(s, file_of(s, d), c->name_span, "a `%s` needs a name: `%s NAME { ... }`", sd->word, sd->word);
  } else if (!sd->labelled && c->u.sub.label) {
    err_at(s, file_of(s, d), c->u.sub.label_span, "a `%s` block takes no name", sd->word);
  }
  for (AstNode *o = body_of(d).first; o != c; o = o->next)
    if (o->kind == AST_SUBBLOCK && o->name == c->name && o->u.sub.label == c->u.sub.label) {
      err_at(s, file_of(s, d), c->span, "`%s%s%s` appears twice", c->name, c->u.sub.label ? " " : "",
             c->u.sub.label ? c->u.sub.label : "");
      diag_note(s->diag, file_of(s, d), o->span, "first here");
      return;
    }
  const Schema *sc = sd->schema;
  Env e = {ENV_DECL, d, d};
  for (AstNode *f = c->u.sub.body.first; f; f = f->next) {
    if (f->kind != AST_FIELD) {
      err_at(s, file_of(s, d), f->span, "a `%s` block holds only fields", sd->word);
      continue;
    }
    const FieldDef *fd = schema_field(sc, f->name);
    if (!fd) {
      unknown_field(s, d, f, sc);
      continue;
    }
    dup_check(s, d, c->u.sub.body.first, f, f->name, f->name_span, "field");
    check_value(s, &e, f->u.bin.rhs, fd, f->name);
  }
  for (const FieldDef *fd = sc->fields; fd->name; fd++) {
    if (!(fd->flags & F_REQ)) continue;
    AstNode *f = c->u.sub.body.first;
    while (f && !(f->kind == AST_FIELD && !strcmp(f->name, fd->name))) f = f->next;
    if (!f) err_at(s, file_of(s, d), c->name_span, "`%s%s%s` is missing required field `%s`", c->name,
                   c->u.sub.label ? " " : "", c->u.sub.label ? c->u.sub.label : "", fd->name);
  }
}

/* op NAME = linear(t, h, 3 * h, split = column) */
static void check_op(Sema *s, Decl *d, AstNode *c) {
  Env e = {ENV_BLOCK, d, d};
  AstNode *call = c->u.bin.rhs;
  if (call->kind != AST_CALL) {
    err_at(s, file_of(s, d), call->span, "an `op` is an operator call, like `linear(t, model.hidden, model.ffn)`");
    return;
  }
  const OpDef *od = op_lookup(call->name);
  if (!od) {
    Suggest sg;
    suggest_init(&sg, call->name);
    for (int i = 0; i < OPK_N; i++) suggest_offer(&sg, op_defs[i].name);
    err_at(s, file_of(s, d), call->name_span, "unknown operator `%s`%s%s%s", call->name,
           sg.best ? "; did you mean `" : "", sg.best ? sg.best : "", sg.best ? "`?" : "");
    return;
  }
  int npos = 0;
  while (od->params[npos].name && (od->params[npos].flags & F_POS)) npos++;
  const AstNode *given[32] = {0};
  int k = 0;
  for (AstNode *a = call->u.list.first; a; a = a->next) {
    const FieldDef *fd;
    if (a->kind == AST_NAMEDARG) {
      fd = NULL;
      for (const FieldDef *p = od->params; p->name; p++)
        if (!strcmp(p->name, a->name)) fd = p;
      if (!fd) {
        Suggest sg;
        suggest_init(&sg, a->name);
        for (const FieldDef *p = od->params; p->name; p++) suggest_offer(&sg, p->name);
        err_at(s, file_of(s, d), a->name_span, "`%s` has no parameter `%s`%s%s%s", od->name, a->name,
               sg.best ? "; did you mean `" : "", sg.best ? sg.best : "", sg.best ? "`?" : "");
        continue;
      }
    } else {
      if (k >= npos) {
        err_at(s, file_of(s, d), a->span, "`%s` takes %d positional argument%s", od->name, npos, npos == 1 ? "" : "s");
        continue;
      }
      fd = &od->params[k++];
    }
    int idx = (int)(fd - od->params);
    if (idx < 32 && given[idx]) {
      err_at(s, file_of(s, d), a->span, "parameter `%s` of `%s` is given twice", fd->name, od->name);
      continue;
    }
    if (idx < 32) given[idx] = a;
    check_value(s, &e, a->kind == AST_NAMEDARG ? a->u.bin.rhs : a, fd, fd->name);
  }
  for (int i = 0; od->params[i].name; i++)
    if ((od->params[i].flags & F_REQ) && !given[i])
      err_at(s, file_of(s, d), call->span, "`%s` is missing argument `%s`", od->name, od->params[i].name);
}

/* The field a sweep path names: plan.tp, cluster.gpu.memory.  NULL after an error. */
static const FieldDef *sweep_path(Sema *s, Decl *d, AstNode *p, const Schema **owner) {
  AstNode *chain[16];
  int n = 0;
  for (AstNode *x = p; x && n < 16; x = x->kind == AST_MEMBER ? x->u.bin.lhs : NULL) chain[n++] = x;
  AstNode *root = chain[n - 1];
  if (root->kind != AST_NAME || n < 2 || !enum_has(block_roots, root->name)) {
    err_at(s, file_of(s, d), p->span, "a sweep sets fields of the scenario: `plan.X`, `model.X` or `cluster.X`");
    return NULL;
  }
  const Schema *sc = root_value(root->name).schema;
  const FieldDef *fd = NULL;
  for (int i = n - 2; i >= 0; i--) {
    fd = schema_field(sc, chain[i]->name);
    if (!fd) {
      Suggest sg;
      suggest_init(&sg, chain[i]->name);
      for (const FieldDef *f = sc->fields; f->name; f++) suggest_offer(&sg, f->name);
      err_at(s, file_of(s, d), chain[i]->name_span, "unknown field `%s` in %s%s%s%s", chain[i]->name, sc->name,
             sg.best ? "; did you mean `" : "", sg.best ? sg.best : "", sg.best ? "`?" : "");
      return NULL;
    }
    *owner = sc;
    if (i > 0) {
      if (fd->type != FT_REF) {
        err_at(s, file_of(s, d), chain[i]->name_span, "`%s` is not a declaration; it has no fields", fd->name);
        return NULL;
      }
      sc = schema_of(fd->ref);
    }
  }
  if (fd->flags & F_DERIVED) {
    err_at(s, file_of(s, d), p->span, "`%s` is computed from other fields and cannot be set", fd->name);
    return NULL;
  }
  return fd;
}

static bool same_path(const AstNode *a, const AstNode *b) {
  while (a && b && a->kind == b->kind && a->name == b->name) {
    if (a->kind == AST_NAME) return true;
    a = a->u.bin.lhs;
    b = b->u.bin.lhs;
  }
  return false;
}

static void check_sweep_stmt(Sema *s, Decl *d, AstNode *c, int *objectives) {
  Env e = {ENV_SWEEP, d, d};
  char b[128];
  const Schema *owner;
  if (c->kind == AST_VARY || c->kind == AST_LET) {
    for (AstNode *o = body_of(d).first; o != c; o = o->next)
      if ((o->kind == AST_VARY || o->kind == AST_LET) && same_path(o->u.bin.lhs, c->u.bin.lhs)) {
        if (err_at(s, file_of(s, d), c->u.bin.lhs->span, "this field is already set by the sweep"))
          diag_note(s->diag, file_of(s, d), o->span, "set here");
        return;
      }
    const FieldDef *fd = sweep_path(s, d, c->u.bin.lhs, &owner);
    if (!fd) return;
    if (c->kind == AST_LET) {
      check_value(s, &e, c->u.bin.rhs, fd, fd->name);
      return;
    }
    AstNode *l = c->u.bin.rhs;
    if (l->kind != AST_LIST) {
      err_at(s, file_of(s, d), l->span, "`vary` takes a list of values, like [1, 2, 4, 8]");
      return;
    }
    if (!l->u.list.count) err_at(s, file_of(s, d), l->span, "`vary` over an empty list evaluates nothing");
    for (AstNode *x = l->u.list.first; x; x = x->next) check_value(s, &e, x, fd, fd->name);
    return;
  }
  Value v = eval(s, &e, c->u.bin.rhs);
  if (v.t == T_ERROR) return;
  if (c->kind == AST_REQUIRE && v.t != T_BOOL)
    err_at(s, file_of(s, d), c->u.bin.rhs->span, "`require` needs a condition, found %s", describe(v, b, sizeof b));
  if ((c->kind == AST_MINIMIZE || c->kind == AST_MAXIMIZE)) {
    if (v.t != T_NUM)
      err_at(s, file_of(s, d), c->u.bin.rhs->span, "the objective must be a number, found %s", describe(v, b, sizeof b));
    if (++*objectives == 2)
      err_at(s, file_of(s, d), c->span, "a sweep has one objective (`minimize` or `maximize`)");
  }
  if (c->kind == AST_KEEP)
    check_value(s, &e, c->u.bin.rhs, &(FieldDef){"keep", FT_COUNT, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN, 1, 0}, "keep");
}

static void check_stmt(Sema *s, Decl *d, AstNode *c, int *objectives) {
  AstList body = body_of(d);
  switch (c->kind) {
  case AST_FIELD: {
    const FieldDef *fd = schema_field(d->schema, c->name);
    if (!fd) unknown_field(s, d, c, d->schema);
    else if (fd->flags & F_DERIVED)
      err_at(s, file_of(s, d), c->name_span, "`%s` is computed from other fields and cannot be set", c->name);
    else dup_check(s, d, body.first, c, c->name, c->name_span, "field");
    break;
  }
  case AST_SUBBLOCK: check_sub(s, d, c); break;
  case AST_LET:
    if (d->kind == DK_SWEEP) { check_sweep_stmt(s, d, c, objectives); break; }
    if (!only_in(s, d, c, DK_BLOCK, DK_SWEEP, "`let`")) break;
    if (c->u.bin.lhs->kind != AST_NAME) {
      err_at(s, file_of(s, d), c->u.bin.lhs->span, "in a block, `let` names a local value; a dotted path is set in a sweep");
      break;
    }
    if (enum_has(block_roots, c->u.bin.lhs->name))
      err_at(s, file_of(s, d), c->u.bin.lhs->span, "`let %s` would hide the scenario's %s", c->u.bin.lhs->name,
             c->u.bin.lhs->name);
    dup_check(s, d, body.first, c, c->u.bin.lhs->name, c->u.bin.lhs->span, "name");
    {
      Env e = {ENV_BLOCK, d, d};
      let_value(s, &e, c);
    }
    break;
  case AST_OP:
    if (!only_in(s, d, c, DK_BLOCK, DK_BLOCK, "`op`")) break;
    dup_check(s, d, body.first, c, c->name, c->name_span, "name");
    check_op(s, d, c);
    break;
  case AST_VARY: case AST_REQUIRE: case AST_MINIMIZE: case AST_MAXIMIZE: case AST_KEEP:
    if (only_in(s, d, c, DK_SWEEP, DK_SWEEP, c->kind == AST_VARY ? "`vary`" : c->kind == AST_REQUIRE ? "`require`"
                : c->kind == AST_KEEP ? "`keep`" : "an objective"))
      check_sweep_stmt(s, d, c, objectives);
    break;
  default: break;
  }
}

/* --- scenarios ------------------------------------------------------------------------ */

static bool complete(Sema *s, Decl *d, Decl *user, Span use) {
  bool ok = true;
  for (Decl *x = d; x; x = x->parent)   /* its extends already failed, and was reported */
    if (x->ext_state == 3) return false;
  char t[256], u[256];
  for (const FieldDef *fd = d->schema->fields; fd->name; fd++) {
    if (!(fd->flags & F_REQ) || d->fields[schema_field_index(d->schema, fd)]) continue;
    Decl *at = d->node->kind == AST_EXTEND ? d->parent : d;
    while (at && at->node->kind == AST_EXTEND) at = at->parent;
    if (!at) at = d;
    if (err_at(s, file_of(s, at), at->node->name_span, "%s is missing required field `%s`", decl_title(at, t, sizeof t),
               fd->name) && at != user)
      diag_note(s->diag, file_of(s, user), use, "needed by %s", decl_title(user, u, sizeof u));
    ok = false;
  }
  if (d->kind == DK_CLUSTER) {
    int tiers = 0;
    for (int i = 0; i < d->nsubs; i++) tiers += !strcmp(d->subs[i].node->name, "tier");
    if (!tiers) {
      err_at(s, file_of(s, d), d->node->name_span, "%s has no network `tier`: add at least `tier NAME { span = node; bandwidth = ...; latency = ... }`",
             decl_title(d, t, sizeof t));
      ok = false;
    }
  }
  return ok;
}

/* A known count field, or def when unset; -1 when not known. */
static double count_of(Sema *s, Decl *d, const char *name, double def) {
  const FieldDef *fd = schema_field(d->schema, name);
  int i = schema_field_index(d->schema, fd);
  if (!d->fields[i] && !(fd->flags & F_DERIVED)) return def;
  Value v = field_value(s, d, i);
  return v.t == T_NUM && v.known ? v.num : -1;
}

static const char *word_of(Sema *s, Decl *d, const char *name) {
  Value v = field_by_name(s, d, name);
  return v.t == T_ENUM && v.known ? v.str : NULL;
}

static Span field_span(Decl *d, const char *name) {
  const FieldDef *fd = schema_field(d->schema, name);
  AstNode *f = d->fields[schema_field_index(d->schema, fd)];
  return f ? f->span : d->node->name_span;
}

/* The divisibility rules of a scenario, with the numbers. */
static void check_divides(Sema *s, Decl *sc, Decl *m, Decl *c, Decl *p) {
  double tp = count_of(s, p, "tp", 1), pp = count_of(s, p, "pp", 1), cp = count_of(s, p, "cp", 1);
  double ep = count_of(s, p, "ep", 1), vs = count_of(s, p, "virtual_stages", 1);
  double dp = count_of(s, p, "dp", 0), gpus = count_of(s, c, "gpus", -1);
  double heads = count_of(s, m, "heads", -1), kv = count_of(s, m, "kv_heads", heads);
  double layers = count_of(s, m, "layers", -1), seq = count_of(s, m, "seq", -1);
  double hidden = count_of(s, m, "hidden", -1), experts = count_of(s, m, "experts", 0);
  double mb = count_of(s, p, "micro_batch", -1), gb = count_of(s, p, "global_batch", -1);
  if (tp < 0 || pp < 0 || cp < 0 || ep < 0 || vs < 0 || dp < 0 || gpus < 0 || heads < 0 || kv < 0 ||
      layers < 0 || seq < 0 || hidden < 0 || experts < 0 || mb < 0 || gb < 0)
    return;   /* something is not known statically: checked when the plan is evaluated */
  SrcFile *f = file_of(s, sc);
  Span at = field_span(sc, "plan");
  const char *n = sc->name;
  if (dp == 0) {
    if (fmod(gpus, tp * pp * cp) != 0) {
      err_at(s, f, at, "scenario `%s`: the cluster's %g GPUs do not divide by tp*pp*cp = %g*%g*%g = %g", n, gpus, tp,
             pp, cp, tp * pp * cp);
      return;
    }
    dp = gpus / (tp * pp * cp);
  } else if (tp * pp * dp * cp != gpus) {
    err_at(s, f, at, "scenario `%s`: the plan uses tp*pp*dp*cp = %g*%g*%g*%g = %g GPUs, but the cluster has %g", n,
           tp, pp, dp, cp, tp * pp * dp * cp, gpus);
  }
  if (fmod(heads, kv)) err_at(s, f, at, "scenario `%s`: model.heads = %g does not divide by model.kv_heads = %g", n, heads, kv);
  if (fmod(heads, tp)) err_at(s, f, at, "scenario `%s`: model.heads = %g does not divide by plan.tp = %g", n, heads, tp);
  else if (fmod(kv, tp))
    err_at(s, f, at, "scenario `%s`: model.kv_heads = %g does not divide by plan.tp = %g", n, kv, tp);
  const char *part = word_of(s, p, "layer_partition");
  bool balanced = part && !strcmp(part, "balanced");
  if (!balanced && fmod(layers, pp * vs))
    err_at(s, f, at, "scenario `%s`: model.layers = %g does not divide by plan.pp * plan.virtual_stages = %g*%g = %g"
           " (set layer_partition = balanced for stages that differ by one layer)", n, layers, pp, vs, pp * vs);
  if (balanced && layers < pp * vs)
    err_at(s, f, at, "scenario `%s`: model.layers = %g is fewer than the %g pipeline stages", n, layers, pp * vs);
  if (fmod(gb, mb * dp))
    err_at(s, f, at, "scenario `%s`: plan.global_batch = %g does not divide by micro_batch * dp = %g*%g = %g", n, gb, mb,
           dp, mb * dp);
  if (fmod(seq, cp)) err_at(s, f, at, "scenario `%s`: model.seq = %g does not divide by plan.cp = %g", n, seq, cp);
  if (experts > 0 && fmod(experts, ep))
    err_at(s, f, at, "scenario `%s`: model.experts = %g does not divide by plan.ep = %g", n, experts, ep);
  if (experts == 0 && ep > 1) err_at(s, f, at, "scenario `%s`: plan.ep = %g but the model has no experts", n, ep);
  const FieldDef *hd = schema_field(m->schema, "head_dim");
  if (!m->fields[schema_field_index(m->schema, hd)] && fmod(hidden, heads))
    err_at(s, f, at, "scenario `%s`: model.hidden = %g does not divide by model.heads = %g; set `head_dim`", n, hidden,
           heads);
  const char *sched = word_of(s, p, "schedule");
  if (!sched) sched = "1f1b";   /* the default schedule */
  if (vs > 1 && strcmp(sched, "interleaved"))
    err_at(s, f, at, "scenario `%s`: plan.virtual_stages = %g needs schedule = interleaved, not %s", n, vs, sched);
}

static void check_scenario(Sema *s, Decl *d) {
  Value vm = field_by_name(s, d, "model"), vc = field_by_name(s, d, "cluster"), vp = field_by_name(s, d, "plan");
  bool ok = complete(s, d, d, d->node->name_span);
  Decl *m = vm.t == T_DECL && vm.known ? vm.decl : NULL;
  Decl *c = vc.t == T_DECL && vc.known ? vc.decl : NULL;
  Decl *p = vp.t == T_DECL && vp.known ? vp.decl : NULL;
  if (m) ok &= complete(s, m, d, field_span(d, "model"));
  if (p) ok &= complete(s, p, d, field_span(d, "plan"));
  if (c) {
    ok &= complete(s, c, d, field_span(d, "cluster"));
    Value g = field_by_name(s, c, "gpu");
    if (g.t == T_DECL && g.known) ok &= complete(s, g.decl, d, field_span(d, "cluster"));
  }
  if (ok && m && c && p && d->kind == DK_SCENARIO && m->ext_state == 2 && c->ext_state == 2 && p->ext_state == 2)
    check_divides(s, d, m, c, p);
}

static void check_decl(Sema *s, Decl *d) {
  if (d->checked) return;
  d->checked = true;
  if (d->ext_state == 0) resolve_extends(s, d);
  int objectives = 0;
  for (AstNode *c = body_of(d).first; c; c = c->next) check_stmt(s, d, c, &objectives);
  int n = schema_nfields(d->schema);
  for (int i = 0; i < n; i++) field_value(s, d, i);
  if (d->kind == DK_SWEEP) {
    int vary = 0;
    for (AstNode *c = body_of(d).first; c; c = c->next) vary += c->kind == AST_VARY;
    if (!vary) err_at(s, file_of(s, d), d->node->name_span, "sweep `%s` varies nothing: add `vary plan.X in [...]`", d->name);
  }
  if (d->kind == DK_SCENARIO || d->kind == DK_SWEEP) check_scenario(s, d);
}

/* --- driver ------------------------------------------------------------------------ */

Sema *sema_new(Diag *d, const SemaOptions *opt) {
  Sema *s = xcalloc(1, sizeof *s);
  arena_init(&s->arena);
  intern_init(&s->in, &s->arena);
  s->diag = d;
  if (opt) s->opt = *opt;
  return s;
}

void sema_free(Sema *s) {
  if (!s) return;
  arena_free(&s->arena);
  free(s->files);
  free(s->decls);
  free(s->deferred);
  free(s);
}

static int check_loaded(Sema *s, int root, bool check, int before);

int sema_run(Sema *s, const char *path, bool check) {
  int before = s->diag->errors;
  return check_loaded(s, load_root(s, path), check, before);
}

int sema_run_text(Sema *s, const char *name, const char *text) {
  int before = s->diag->errors;
  return check_loaded(s, load_root_text(s, name, text), true, before);
}

static int check_loaded(Sema *s, int root, bool check, int before) {
  if (root < 0 || !check || s->broken) return s->diag->errors - before;
  if (s->files[root].root && !s->files[root].root->u.list.first) {
    diag_plain(s->diag, s->files[root].src->path, "the file declares nothing%s",
               s->files[root].src->len ? " (it holds only comments and blank lines)" : " (it is empty)");
    return s->diag->errors - before;
  }
  load_reach(s);
  for (int i = 0; i < s->nfiles; i++) collect(s, i);
  for (int i = 0; i < s->ndecls; i++) check_decl(s, s->decls[i]);
  while (s->ndeferred) {   /* rounds for reference chains deeper than MAX_EVAL_DEPTH */
    Deferred *list = s->deferred;
    unsigned n = s->ndeferred;
    s->deferred = NULL;
    s->ndeferred = s->capdeferred = 0;
    run_deferred(s, list, n);
    free(list);
    for (int i = 0; i < s->ndecls; i++) {   /* errors already reported are not repeated */
      s->decls[i]->checked = false;
      check_decl(s, s->decls[i]);
    }
  }
  return s->diag->errors - before;
}

AstNode *sema_root(Sema *s, SrcFile **file) {
  if (!s->nfiles) return NULL;
  if (file) *file = s->files[0].src;
  return s->files[0].root;
}

int sema_ndecls(Sema *s) { return s->ndecls; }
int sema_nfiles(Sema *s) { return s->nfiles; }

/* --- reading a checked compilation ------------------------------------------------- */

Decl *sema_find(Sema *s, const char *name, DeclKind kind) {
  Decl *d = table_get(s, intern_cstr(&s->in, name));
  return d && d->kind == kind && d->ext_state == 2 ? d : NULL;
}

const char *sema_decl_name(const Decl *d) { return d->name; }
const char *sema_decl_path(Sema *s, const Decl *d) { return s->files[d->file].src->path; }

bool sema_number(Sema *s, Decl *d, const char *field, double *out) {
  Value v = field_by_name(s, d, field);
  if (v.t != T_NUM || !v.known) return false;
  *out = v.num;
  return true;
}

bool sema_bool(Sema *s, Decl *d, const char *field, bool *out) {
  Value v = field_by_name(s, d, field);
  if (v.t != T_BOOL || !v.known) return false;
  *out = v.num != 0;
  return true;
}

int sema_word_list(Sema *s, Decl *d, const char *field, const char **words, int max) {
  Value v = field_by_name(s, d, field);
  if (v.t != T_LIST || !v.known || !v.list) return -1;
  int n = 0;
  for (AstNode *c = v.list->u.list.first; c; c = c->next) {
    if (c->kind != AST_NAME) return -1;
    if (n < max) words[n] = c->name;
    n++;
  }
  return n;
}

AstList sema_block_body(Decl *d) { return body_of(d); }

void sema_decl_at(Sema *s, Decl *d, SrcFile **file, Span *span) {
  Decl *at = d;
  while (at->node->kind == AST_EXTEND && at->parent) at = at->parent;
  *file = file_of(s, at);
  *span = at->node->name_span;
}

int sema_root_decls(Sema *s, DeclKind kind, Decl **out, int max) {
  int n = 0;
  for (int i = 0; i < s->ndecls; i++)
    if (s->decls[i]->file == 0 && s->decls[i]->kind == kind && s->decls[i]->ext_state == 2) {
      if (n < max) out[n] = s->decls[i];
      n++;
    }
  return n;
}

const char *sema_word(Sema *s, Decl *d, const char *field) {
  Value v = field_by_name(s, d, field);
  return (v.t == T_ENUM || v.t == T_STR) && v.known ? v.str : NULL;
}

Decl *sema_ref(Sema *s, Decl *d, const char *field) {
  Value v = field_by_name(s, d, field);
  return v.t == T_DECL && v.known ? v.decl : NULL;
}

static SubEntry *nth_sub(Decl *d, const char *word, int i) {
  for (int k = 0; k < d->nsubs; k++)
    if (!strcmp(d->subs[k].node->name, word) && i-- == 0) return &d->subs[k];
  return NULL;
}

int sema_nsubs(Decl *d, const char *word) {
  int n = 0;
  for (int k = 0; k < d->nsubs; k++) n += !strcmp(d->subs[k].node->name, word);
  return n;
}

const char *sema_sub_label(Decl *d, const char *word, int i) {
  SubEntry *e = nth_sub(d, word, i);
  return e ? e->node->u.sub.label : NULL;
}

/* A nested block's field, evaluated as the check evaluated it (errors already reported). */
static Value sub_value(Sema *s, Decl *d, const char *word, int i, const char *field) {
  SubEntry *e = nth_sub(d, word, i);
  const SubDef *sd = e ? schema_sub(d->schema, word) : NULL;
  const FieldDef *fd = sd ? schema_field(sd->schema, field) : NULL;
  if (!fd) return v_error();
  for (AstNode *f = e->node->u.sub.body.first; f; f = f->next)
    if (f->kind == AST_FIELD && !strcmp(f->name, field)) {
      Env env = {ENV_DECL, d, e->owner};
      return check_value(s, &env, f->u.bin.rhs, fd, field);
    }
  return v_error();
}

bool sema_sub_number(Sema *s, Decl *d, const char *word, int i, const char *field, double *out) {
  Value v = sub_value(s, d, word, i, field);
  if (v.t != T_NUM || !v.known) return false;
  *out = v.num;
  return true;
}

bool sema_sub_bool(Sema *s, Decl *d, const char *word, int i, const char *field, bool *out) {
  Value v = sub_value(s, d, word, i, field);
  if (v.t != T_BOOL || !v.known) return false;
  *out = v.num != 0;
  return true;
}

const char *sema_sub_word(Sema *s, Decl *d, const char *word, int i, const char *field) {
  Value v = sub_value(s, d, word, i, field);
  return (v.t == T_ENUM || v.t == T_STR) && v.known ? v.str : NULL;
}

/* --dump=sema: each declaration of the root file with its assembled fields, their values in
 * base units (B, s, FLOP) and the declaration each was written in. */
static void dump_value(FILE *out, Value v) {
  char b[128];
  if (v.t == T_ERROR) { fputs("<error>", out); return; }
  if (!v.known) { fprintf(out, "? (%s)", describe(v, b, sizeof b)); return; }
  switch (v.t) {
  case T_NUM: {
    static const char *base[DIM_N] = {"B", "s", "FLOP"};
    fprintf(out, "%.15g", v.num);
    for (int i = 0; i < DIM_N; i++)
      if (v.dim.e[i] > 0) fprintf(out, v.dim.e[i] == 1 ? " %s" : " %s^%d", base[i], v.dim.e[i]);
    for (int i = 0; i < DIM_N; i++)
      if (v.dim.e[i] < 0) fprintf(out, v.dim.e[i] == -1 ? "/%s" : "/%s^%d", base[i], -v.dim.e[i]);
    break;
  }
  case T_BOOL: fputs(v.num ? "true" : "false", out); break;
  case T_STR: fprintf(out, "\"%s\"", v.str); break;
  case T_ENUM: fputs(v.str, out); break;
  case T_LIST: fprintf(out, "[%u items]", v.list ? v.list->u.list.count : 0); break;
  case T_DECL: fprintf(out, "%s %s", v.schema->name, v.decl->name); break;
  default: break;
  }
}

static void dump_decl(Sema *s, FILE *out, Decl *d, int ind) {
  fprintf(out, "%*s%s %s", ind, "", decl_kind_names[d->kind], d->name);
  if (d->parent) fprintf(out, " extends %s", d->parent->name);
  fputc('\n', out);
  int n = schema_nfields(d->schema);
  for (int i = 0; i < n; i++) {
    if (!d->fields[i] && !(d->schema->fields[i].flags & F_DERIVED)) continue;
    Value v = field_value(s, d, i);
    fprintf(out, "%*s  %s = ", ind, "", d->schema->fields[i].name);
    dump_value(out, v);
    if (d->owners[i] && d->owners[i] != d) fprintf(out, "  (from %s)", d->owners[i]->name);
    fputc('\n', out);
    if (v.t == T_DECL && v.known && v.decl->node->kind == AST_EXTEND && ind < 8) dump_decl(s, out, v.decl, ind + 4);
  }
  for (int i = 0; i < d->nsubs; i++) {
    AstNode *sub = d->subs[i].node;
    fprintf(out, "%*s  %s%s%s {", ind, "", sub->name, sub->u.sub.label ? " " : "", sub->u.sub.label ? sub->u.sub.label : "");
    Env e = {ENV_DECL, d, d->subs[i].owner};
    const SubDef *sd = schema_sub(d->schema, sub->name);
    for (AstNode *f = sub->u.sub.body.first; sd && f; f = f->next) {
      const FieldDef *fd = f->kind == AST_FIELD ? schema_field(sd->schema, f->name) : NULL;
      if (!fd) continue;
      fprintf(out, " %s = ", f->name);
      dump_value(out, check_value(s, &e, f->u.bin.rhs, fd, f->name));
      fputc(';', out);
    }
    if (d->subs[i].owner != d) fprintf(out, " }  (from %s)\n", d->subs[i].owner->name);
    else fputs(" }\n", out);
  }
}

void sema_dump(Sema *s, FILE *out) {
  for (int i = 0; i < s->ndecls; i++)
    if (s->decls[i]->file == 0 && s->decls[i]->ext_state == 2) dump_decl(s, out, s->decls[i], 0);
}
