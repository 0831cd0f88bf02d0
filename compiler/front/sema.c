/* sema.c - semantic analysis of .llmp declarations: the driver and the checks.
 *
 * The pass, in order (step 3 is sema_eval.c):
 *   1. collect the named declarations of every loaded file (unknown kinds, duplicates);
 *   2. for each declaration: resolve `extends` (cycles, kinds), assemble its fields
 *      (inherited, then its own), and check each statement against the kind's schema;
 *   3. evaluate each field's value in the context of the declaration (late binding: a
 *      parent's `ffn = 4 * hidden` sees the child's hidden), checking types, dimensions,
 *      ranges and enumerations, folding constants where they are known;
 *   4. for blocks, check lets and operator calls; for sweeps, axes and objectives;
 *   5. for scenarios, check that the model, cluster and plan they use are complete and
 *      that the plan divides the model and the cluster. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash.h"
#include "sema_private.h"
#include "words.h"

static void check_decl(Sema *s, Decl *d);

/* --- errors ------------------------------------------------------------------------ */

/* Reports an error once: evaluating an inherited field for several children would
 * otherwise repeat the same message at the same place. */
static bool first_report(Sema *s, SrcFile *f, Span sp, const char *msg) {
  uint64_t h = hash_str(hash_word(hash_word(HASH_BASIS ^ (uint64_t)f->id, sp.start), sp.end), msg);
  if (!h) h = 1; /* 0 marks an empty slot */
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
bool sema_err_env(Sema *s, Env *e, Span sp, const char *fmt, ...) {
  char msg[1024], t[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* One report per place and message, whichever declaration inherited the expression. */
  if (!first_report(s, file_of(s, e->owner), sp, msg)) return false;
  if (e->self && e->owner && e->self != e->owner && n > 0 && (size_t)n < sizeof msg)
    snprintf(msg + n, sizeof msg - (size_t)n, " (in %s, which inherits this field)", decl_title(e->self, t, sizeof t));
  diag_error(s->diag, file_of(s, e->owner), sp, "%s", msg);
  return true;
}

void sema_note_decl(Sema *s, Decl *d, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_note(s->diag, file_of(s, d), d->node->name_span, "%s", msg);
}

/* --- the declaration table ----------------------------------------------------------- */

Decl *sema_table_get(Sema *s, const char *name) {
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
      if (sema_table_get(s, x->name) != x) continue; /* only the first of duplicates */
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
             "unknown declaration kind `%s`%s: a declaration is a gpu, cluster, block, model, plan, scenario or sweep",
             c->u.decl.kind_word, suggest_hint(&sg, true));
      continue;
    }
    Decl *d = decl_new(s, c, c->u.decl.kind, fi);
    d->parent_name = c->u.decl.parent;
    d->parent_span = c->u.decl.parent_span;
    c->aux = d;
    Decl *prev = sema_table_get(s, d->name);
    XGROW(s->decls, s->ndecls + 1, s->capdecls);
    s->decls[s->ndecls++] = d;
    if (prev) {
      char t[256];
      err_at(s, s->files[fi].src, c->name_span, "`%s` is declared twice", d->name);
      sema_note_decl(s, prev, "first declared here as %s", decl_title(prev, t, sizeof t));
      d->checked = true; /* the duplicate is not checked further */
      d->ext_state = 3;
      continue;
    }
    table_put(s, d);
  }
}

/* A declaration by name as seen from file fi; reports "not imported" itself. */
Decl *sema_lookup(Sema *s, int fi, const char *name, Span at, bool *reported) {
  Decl *d = sema_table_get(s, name);
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

void sema_suggest_decls(Sema *s, Suggest *sg, DeclKind kind) {
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
  Decl *p = sema_lookup(s, d->file, d->parent_name, d->parent_span, &reported);
  char t[256], t2[256];
  if (!p && !reported) {
    Suggest sg;
    suggest_init(&sg, d->parent_name);
    sema_suggest_decls(s, &sg, d->kind);
    char hint[1200];
    const char *imp = sema_import_hint(s, d->schema->name, d->parent_name, hint, sizeof hint);
    err_at(s, file_of(s, d), d->parent_span, "%s extends `%s`, which is not declared%s", decl_title(d, t, sizeof t),
           d->parent_name, imp ? imp : suggest_hint(&sg, false));
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
    sema_note_decl(s, p, "`%s` is declared here", p->name);
    p = NULL;
  }
  if (!p) *ok = false;
  return p;
}

/* Resolves the extends chain above d without recursion: walks up to the first resolved
 * ancestor (or the root, or a cycle), then assembles the chain from the top down.  So a
 * chain of any length, written in any order, resolves the same way. */
bool sema_resolve_extends(Sema *s, Decl *d) {
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
  if (x && x->ext_state == 1) { /* x is on this chain: a cycle */
    Decl *last = chain[n - 1];
    char text[1024];
    size_t k = 0;
    int j = 0;
    while (chain[j] != x) j++;
    for (int i = j; i < n && k < sizeof text - 64; i++)
      k += (size_t)snprintf(text + k, sizeof text - k, "`%s` extends ", chain[i]->name);
    snprintf(text + k, sizeof text - k, "`%s`", x->name);
    err_at(s, file_of(s, last), last->parent_span, "`extends` cycle: %s", text);
    if (last != x) sema_note_decl(s, x, "`%s` is declared here", x->name);
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

/* `cluster = perlmutter { nodes = 32 }`: an anonymous declaration extending perlmutter. */
Decl *sema_inline_decl(Sema *s, Env *e, AstNode *n) {
  if (n->aux) return n->aux;
  bool reported;
  Decl *base = sema_lookup(s, e->owner->file, n->name, n->name_span, &reported);
  if (!base) {
    if (!reported) {
      Suggest sg;
      suggest_init(&sg, n->name);
      sema_suggest_decls(s, &sg, DK_UNKNOWN);
      sema_err_env(s, e, n->name_span, "cannot extend `%s`: it is not declared%s", n->name, suggest_hint(&sg, false));
    }
    return NULL;
  }
  if (base->ext_state == 0) sema_resolve_extends(s, base);
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

static void check_scenario(Sema *s, Decl *d);

Decl *sema_derive(Sema *s, Decl *base, const char *field, AstNode *value, Decl *ref, Decl *owner, Diag *d) {
  const FieldDef *fd = schema_field(base->schema, field);
  if (!fd || (value == NULL) == (ref == NULL)) return NULL;
  if (ref) { /* the declaration as an inline extension already made */
    AstNode *x = arena_alloc(&s->arena, sizeof *x);
    *x = (AstNode){.kind = AST_EXTEND, .span = ref->node->name_span, .name = ref->name, .aux = ref};
    value = x;
  }
  AstNode *f = arena_alloc(&s->arena, sizeof *f);
  *f = (AstNode){.kind = AST_FIELD, .span = value->span, .name = intern_cstr(&s->in, field), .name_span = value->span};
  f->u.bin.rhs = value;
  AstNode *n = arena_alloc(&s->arena, sizeof *n);
  *n = (AstNode){.kind = AST_EXTEND, .span = value->span, .name = base->name, .name_span = value->span};
  n->u.list = ast_list1(f);
  Decl *x = decl_new(s, n, base->kind, owner->file);
  x->name = base->name;
  x->parent = base;
  inherit(s, x, base);
  assemble(s, x);
  x->ext_state = 2;
  x->checked = true; /* the value was checked at the `vary`; the rest as any declaration */
  Diag *diag = s->diag;
  uint64_t *seen = s->seen;
  unsigned seencap = s->seencap, nseen = s->nseen;
  s->diag = d, s->seen = NULL, s->seencap = s->nseen = 0; /* each derivation reports its own */
  int nf = schema_nfields(x->schema);
  for (int i = 0; i < nf; i++) eval_field(s, x, i);
  if (x->kind == DK_SCENARIO || x->kind == DK_SWEEP) check_scenario(s, x);
  s->diag = diag, s->seen = seen, s->seencap = seencap, s->nseen = nseen;
  return x;
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
                        : (o->kind == AST_FIELD || o->kind == AST_OP)        ? o->name
                                                                             : NULL;
    if (oname != name) continue;
    if (err_at(s, file_of(s, d), at, "%s `%s` is set twice", what, name))
      diag_note(s->diag, file_of(s, d), o->span, "first set here");
    return;
  }
}

/* A tier's field set to a literal word or boolean, or NULL. */
static AstNode *tier_field(AstList body, const char *name, AstKind kind) {
  for (AstNode *f = body.first; f; f = f->next)
    if (f->kind == AST_FIELD && !strcmp(f->name, name) && f->u.bin.rhs->kind == kind) return f;
  return NULL;
}

/* A ring or a mesh has no switch to reduce in: switch_reduction = true there is refused (and
 * lowering gives such a tier no in-switch reduction). */
static void tier_topology(Sema *s, Decl *d, AstList body) {
  AstNode *topo = tier_field(body, "topology", AST_NAME), *red = tier_field(body, "switch_reduction", AST_BOOL);
  if (topo && red && red->u.bin.rhs->u.boolean &&
      (!strcmp(topo->u.bin.rhs->name, "ring") || !strcmp(topo->u.bin.rhs->name, "mesh")))
    err_at(s, file_of(s, d), red->span,
           "`switch_reduction = true` on a tier whose topology is `%s`: a %s has no switch to reduce in; remove "
           "one of them",
           topo->u.bin.rhs->name, topo->u.bin.rhs->name);
}

/* Whether a field of body that sc does not know is a misspelling of `field` (hiden for
 * hidden): the unknown field is reported with its fix, and the required field it leaves
 * unset is its consequence, not reported again. */
static bool misspelt(AstList body, const Schema *sc, const char *field) {
  for (AstNode *c = body.first; c; c = c->next) {
    if (c->kind != AST_FIELD || schema_field(sc, c->name)) continue;
    Suggest sg;
    suggest_init(&sg, c->name);
    for (const FieldDef *f = sc->fields; f->name; f++) suggest_offer(&sg, f->name);
    if (sg.best && !strcmp(sg.best, field)) return true;
  }
  return false;
}

/* Fields llmp once had, with what replaces them. */
static const struct {
  const char *schema, *field, *instead;
} removed_fields[] = {
    {"model", "moe_every",
     "a model whose layers alternate dense and MoE lists them as a `pattern`, e.g. `pattern = [(layers / 2) * "
     "[llama_layer, moe_layer]]` (docs/language.md)"},
    {"measured", "memory",
     "llmp does not compare a measured memory (it predicts each stage's peak per GPU, not what an allocator "
     "reports); remove it, or keep it in a comment"},
};

static void unknown_field(Sema *s, Decl *d, AstNode *c, const Schema *sc) {
  for (size_t i = 0; i < sizeof removed_fields / sizeof removed_fields[0]; i++)
    if (!strcmp(sc->name, removed_fields[i].schema) && !strcmp(c->name, removed_fields[i].field)) {
      err_at(s, file_of(s, d), c->name_span, "unknown field `%s` in %s: %s", c->name, sc->name,
             removed_fields[i].instead);
      return;
    }
  Suggest sg;
  suggest_init(&sg, c->name);
  for (const FieldDef *f = sc->fields; f->name; f++) suggest_offer(&sg, f->name);
  for (const SubDef *sd = sc->subs; sd && sd->word; sd++) suggest_offer(&sg, sd->word);
  err_at(s, file_of(s, d), c->name_span, "unknown field `%s` in %s%s", c->name, sc->name, suggest_hint(&sg, false));
}

/* The fields of a nested block (tier, measured): checked where they are written. */
static void check_sub(Sema *s, Decl *d, AstNode *c) {
  const SubDef *sd = schema_sub(d->schema, c->name);
  if (!sd) {
    Suggest sg;
    suggest_init(&sg, c->name);
    for (const SubDef *x = d->schema->subs; x && x->word; x++) suggest_offer(&sg, x->word);
    err_at(s, file_of(s, d), c->name_span, "%s has no nested block `%s`%s", d->schema->name, c->name,
           suggest_hint(&sg, false));
    return;
  }
  if (sd->labelled && !c->u.sub.label) {
    err_at(s, file_of(s, d), c->name_span, "a `%s` needs a name: `%s NAME { ... }`", sd->word, sd->word);
  } else if (!sd->labelled && c->u.sub.label) {
    err_at(s, file_of(s, d), c->u.sub.label_span, "a `%s` block takes no name", sd->word);
  }
  if (d->kind == DK_FRAMEWORK && sd->labelled && c->u.sub.label) { /* gpu NAME: a declared gpu */
    bool reported;
    Decl *g = sema_lookup(s, d->file, c->u.sub.label, c->u.sub.label_span, &reported);
    if (!reported && (!g || g->kind != DK_GPU)) {
      Suggest sg;
      suggest_init(&sg, c->u.sub.label);
      sema_suggest_decls(s, &sg, DK_GPU);
      err_at(s, file_of(s, d), c->u.sub.label_span, "no gpu named `%s`%s", c->u.sub.label, suggest_hint(&sg, false));
    }
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
    eval_check(s, &e, f->u.bin.rhs, fd, f->name);
  }
  if (!strcmp(sd->word, "tier")) tier_topology(s, d, c->u.sub.body);
  for (const FieldDef *fd = sc->fields; fd->name; fd++) {
    if (!(fd->flags & F_REQ)) continue;
    AstNode *f = c->u.sub.body.first;
    while (f && !(f->kind == AST_FIELD && !strcmp(f->name, fd->name))) f = f->next;
    if (!f && !misspelt(c->u.sub.body, sc, fd->name))
      err_at(s, file_of(s, d), c->name_span, "`%s%s%s` is missing required field `%s`", c->name,
             c->u.sub.label ? " " : "", c->u.sub.label ? c->u.sub.label : "", fd->name);
  }
}

/* The parameter an operator argument sets: by its name, or the next positional one (*k
 * counts them); NULL after an error. */
static const FieldDef *op_param(Sema *s, Decl *d, const OpDef *od, AstNode *a, int *k, int npos) {
  if (a->kind != AST_NAMEDARG) {
    if (*k < npos) return &od->params[(*k)++];
    err_at(s, file_of(s, d), a->span, "`%s` takes %d positional argument%s", od->name, npos, npos == 1 ? "" : "s");
    return NULL;
  }
  const FieldDef *fd = NULL;
  for (const FieldDef *p = od->params; p->name; p++)
    if (!strcmp(p->name, a->name)) fd = p;
  if (!fd) {
    Suggest sg;
    suggest_init(&sg, a->name);
    for (const FieldDef *p = od->params; p->name; p++) suggest_offer(&sg, p->name);
    err_at(s, file_of(s, d), a->name_span, "`%s` has no parameter `%s`%s", od->name, a->name, suggest_hint(&sg, false));
  }
  return fd;
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
    err_at(s, file_of(s, d), call->name_span, "unknown operator `%s`%s", call->name, suggest_hint(&sg, false));
    return;
  }
  int npos = 0;
  while (od->params[npos].name && (od->params[npos].flags & F_POS)) npos++;
  const AstNode *given[32] = {0};
  int k = 0;
  for (AstNode *a = call->u.list.first; a; a = a->next) {
    const FieldDef *fd = op_param(s, d, od, a, &k, npos);
    if (!fd) continue;
    int idx = (int)(fd - od->params);
    if (idx < 32 && given[idx]) {
      err_at(s, file_of(s, d), a->span, "parameter `%s` of `%s` is given twice", fd->name, od->name);
      continue;
    }
    if (idx < 32) given[idx] = a;
    eval_check(s, &e, a->kind == AST_NAMEDARG ? a->u.bin.rhs : a, fd, fd->name);
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
  if (root->kind != AST_NAME || !enum_has(eval_block_roots, root->name)) {
    err_at(s, file_of(s, d), p->span, "a sweep sets fields of the scenario: `plan.X`, `model.X` or `cluster.X`");
    return NULL;
  }
  if (n == 1) { /* the declaration itself: `vary cluster in [eos, selene]` */
    *owner = d->schema;
    return schema_field(d->schema, root->name);
  }
  const Schema *sc = eval_root(root->name).schema;
  const FieldDef *fd = NULL;
  for (int i = n - 2; i >= 0; i--) {
    fd = schema_field(sc, chain[i]->name);
    if (!fd) {
      Suggest sg;
      suggest_init(&sg, chain[i]->name);
      for (const FieldDef *f = sc->fields; f->name; f++) suggest_offer(&sg, f->name);
      err_at(s, file_of(s, d), chain[i]->name_span, "unknown field `%s` in %s%s", chain[i]->name, sc->name,
             suggest_hint(&sg, false));
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
      eval_check(s, &e, c->u.bin.rhs, fd, fd->name);
      return;
    }
    AstNode *l = c->u.bin.rhs;
    if (l->kind != AST_LIST) {
      err_at(s, file_of(s, d), l->span, "`vary` takes a list of values, like [1, 2, 4, 8]");
      return;
    }
    if (!l->u.list.count) err_at(s, file_of(s, d), l->span, "`vary` over an empty list evaluates nothing");
    for (AstNode *x = l->u.list.first; x; x = x->next) eval_check(s, &e, x, fd, fd->name);
    return;
  }
  Value v = eval_expr(s, &e, c->u.bin.rhs);
  if (v.t == T_ERROR) return;
  if (c->kind == AST_REQUIRE && v.t != T_BOOL)
    err_at(s, file_of(s, d), c->u.bin.rhs->span, "`require` needs a condition, found %s",
           eval_describe(v, b, sizeof b));
  if ((c->kind == AST_MINIMIZE || c->kind == AST_MAXIMIZE)) {
    if (v.t != T_NUM)
      err_at(s, file_of(s, d), c->u.bin.rhs->span, "the objective must be a number, found %s",
             eval_describe(v, b, sizeof b));
    if (++*objectives == 2) err_at(s, file_of(s, d), c->span, "a sweep has one objective (`minimize` or `maximize`)");
  }
  if (c->kind == AST_KEEP) {
    for (AstNode *o = body_of(d).first; o != c; o = o->next)
      if (o->kind == AST_KEEP) {
        if (err_at(s, file_of(s, d), c->span, "a sweep has one `keep`"))
          diag_note(s->diag, file_of(s, d), o->span, "the first `keep` is here");
        return;
      }
    v = eval_check(s, &e, c->u.bin.rhs, &(FieldDef){"keep", FT_COUNT, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN, 1, 0},
                   "keep");
    if (v.t == T_NUM && v.known && v.num > SEMA_KEEP_MAX)
      err_at(s, file_of(s, d), c->u.bin.rhs->span, "`keep` must be at most %d, found %.15g", SEMA_KEEP_MAX, v.num);
  }
}

static void check_stmt(Sema *s, Decl *d, AstNode *c, int *objectives) {
  AstList body = body_of(d);
  switch (c->kind) {
  case AST_FIELD: {
    const FieldDef *fd = schema_field(d->schema, c->name);
    if (!fd)
      unknown_field(s, d, c, d->schema);
    else if (fd->flags & F_DERIVED)
      err_at(s, file_of(s, d), c->name_span, "`%s` is computed from other fields and cannot be set", c->name);
    else
      dup_check(s, d, body.first, c, c->name, c->name_span, "field");
    break;
  }
  case AST_SUBBLOCK: check_sub(s, d, c); break;
  case AST_LET:
    if (d->kind == DK_SWEEP) {
      check_sweep_stmt(s, d, c, objectives);
      break;
    }
    if (!only_in(s, d, c, DK_BLOCK, DK_SWEEP, "`let`")) break;
    if (c->u.bin.lhs->kind != AST_NAME) {
      err_at(s, file_of(s, d), c->u.bin.lhs->span,
             "in a block, `let` names a local value; a dotted path is set in a sweep");
      break;
    }
    if (enum_has(eval_block_roots, c->u.bin.lhs->name))
      err_at(s, file_of(s, d), c->u.bin.lhs->span, "`let %s` would hide the scenario's %s", c->u.bin.lhs->name,
             c->u.bin.lhs->name);
    dup_check(s, d, body.first, c, c->u.bin.lhs->name, c->u.bin.lhs->span, "name");
    {
      Env e = {ENV_BLOCK, d, d};
      eval_let(s, &e, c);
    }
    break;
  case AST_OP:
    if (!only_in(s, d, c, DK_BLOCK, DK_BLOCK, "`op`")) break;
    dup_check(s, d, body.first, c, c->name, c->name_span, "name");
    check_op(s, d, c);
    break;
  /* clang-format off */
  case AST_VARY: case AST_REQUIRE: case AST_MINIMIZE: case AST_MAXIMIZE: case AST_KEEP:
    if (only_in(s, d, c, DK_SWEEP, DK_SWEEP, c->kind == AST_VARY ? "`vary`" : c->kind == AST_REQUIRE ? "`require`"
                : c->kind == AST_KEEP ? "`keep`" : "an objective"))
      /* clang-format on */
      check_sweep_stmt(s, d, c, objectives);
    break;
  default: break;
  }
}

/* --- scenarios ------------------------------------------------------------------------ */

static bool complete(Sema *s, Decl *d, Decl *user, Span use) {
  bool ok = true;
  for (Decl *x = d; x; x = x->parent) /* its extends already failed, and was reported */
    if (x->ext_state == 3) return false;
  char t[256], u[256];
  for (const FieldDef *fd = d->schema->fields; fd->name; fd++) {
    if (!(fd->flags & F_REQ) || d->fields[schema_field_index(d->schema, fd)]) continue;
    Decl *at = d->node->kind == AST_EXTEND ? d->parent : d;
    while (at && at->node->kind == AST_EXTEND) at = at->parent;
    if (!at) at = d;
    bool typo = false;
    for (Decl *x = d; x && !typo; x = x->parent) typo = misspelt(body_of(x), x->schema, fd->name);
    if (typo) {
      ok = false;
      continue;
    }
    if (err_at(s, file_of(s, at), at->node->name_span, "%s is missing required field `%s`", decl_title(at, t, sizeof t),
               fd->name) &&
        at != user)
      diag_note(s->diag, file_of(s, user), use, "needed by %s", decl_title(user, u, sizeof u));
    ok = false;
  }
  if (d->kind == DK_CLUSTER) {
    int tiers = 0;
    for (int i = 0; i < d->nsubs; i++) tiers += !strcmp(d->subs[i].node->name, "tier");
    if (!tiers) {
      err_at(s, file_of(s, d), d->node->name_span,
             "%s has no network `tier`: add at least `tier NAME { span = node; bandwidth = ...; latency = ... }`",
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
  Value v = eval_field(s, d, i);
  return v.t == T_NUM && v.known ? v.num : -1;
}

static const char *word_of(Sema *s, Decl *d, const char *name) {
  Value v = eval_field_named(s, d, name);
  return v.t == T_ENUM && v.known ? v.str : NULL;
}

static Span field_span(Decl *d, const char *name) {
  const FieldDef *fd = schema_field(d->schema, name);
  AstNode *f = d->fields[schema_field_index(d->schema, fd)];
  return f ? f->span : d->node->name_span;
}

/* The divisibility rules of a scenario, with the numbers. */
static void check_divides(Sema *s, Decl *sc, Decl *m, Decl *c, Decl *p, Decl *fw) {
  double tp = count_of(s, p, "tp", 1), pp = count_of(s, p, "pp", 1), cp = count_of(s, p, "cp", 1);
  double ep = count_of(s, p, "ep", 1), vs = count_of(s, p, "virtual_stages", 1), etp = count_of(s, p, "etp", 1);
  double moe_ffn = count_of(s, m, "moe_ffn", 0);
  double dp = count_of(s, p, "dp", 0), gpus = count_of(s, c, "gpus", -1);
  double heads = count_of(s, m, "heads", -1), kv = count_of(s, m, "kv_heads", heads);
  double layers = count_of(s, m, "layers", -1), seq = count_of(s, m, "seq", -1);
  double hidden = count_of(s, m, "hidden", -1), experts = count_of(s, m, "experts", 0);
  double mb = count_of(s, p, "micro_batch", -1), gb = count_of(s, p, "global_batch", -1);
  if (tp < 0 || pp < 0 || cp < 0 || ep < 0 || etp < 0 || moe_ffn < 0 || vs < 0 || dp < 0 || gpus < 0 || heads < 0 ||
      kv < 0 || layers < 0 || seq < 0 || hidden < 0 || experts < 0 || mb < 0 || gb < 0)
    return; /* something is not known statically: checked when the plan is evaluated */
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
    err_at(s, f, at, "scenario `%s`: the plan uses tp*pp*dp*cp = %g*%g*%g*%g = %g GPUs, but the cluster has %g", n, tp,
           pp, dp, cp, tp * pp * dp * cp, gpus);
  }
  if (fmod(heads, kv))
    err_at(s, f, at, "scenario `%s`: model.heads = %g does not divide by model.kv_heads = %g", n, heads, kv);
  if (fmod(heads, tp))
    err_at(s, f, at, "scenario `%s`: model.heads = %g does not divide by plan.tp = %g", n, heads, tp);
  else if (fmod(kv, tp))
    err_at(s, f, at, "scenario `%s`: model.kv_heads = %g does not divide by plan.tp = %g", n, kv, tp);
  static const char *const partitions[] = {PARTITION_WORDS(WORD_STRING)};
  const char *part = word_of(s, p, "layer_partition");
  if (!part && fw) part = word_of(s, fw, "layer_partition"); /* the stack's default */
  bool balanced = part && !strcmp(part, partitions[PART_BALANCED]);
  double first = count_of(s, p, "first_stage_layers", -1), last = count_of(s, p, "last_stage_layers", -1);
  double sl[1024];
  int nsl = sema_count_list(s, p, "stage_layers", sl, 1024);
  bool layout = first >= 0 || last >= 0 || nsl >= 0; /* an explicit layout replaces the even split */
  if (nsl >= 0) {
    double sum = 0;
    for (int i = 0; i < nsl && i < 1024; i++) sum += sl[i];
    if (nsl != pp * vs)
      err_at(s, f, at, "scenario `%s`: plan.stage_layers lists %d model chunks; pp * virtual_stages = %g*%g = %g", n,
             nsl, pp, vs, pp * vs);
    else if (sum != layers)
      err_at(s, f, at, "scenario `%s`: plan.stage_layers places %g layers; model.layers = %g", n, sum, layers);
  } else if ((first >= 0 || last >= 0) && pp < 2) {
    err_at(s, f, at, "scenario `%s`: first_stage_layers and last_stage_layers need pp >= 2; pp = %g", n, pp);
  } else if ((first > 0 ? first : 0) + (last > 0 ? last : 0) > layers) {
    err_at(s, f, at, "scenario `%s`: first_stage_layers + last_stage_layers = %g exceed model.layers = %g", n,
           (first > 0 ? first : 0) + (last > 0 ? last : 0), layers);
  }
  if (!layout && !balanced && fmod(layers, pp * vs))
    err_at(s, f, at,
           "scenario `%s`: model.layers = %g does not divide by plan.pp * plan.virtual_stages = %g*%g = %g"
           " (set layer_partition = balanced for stages that differ by one layer)",
           n, layers, pp, vs, pp * vs);
  if (!layout && balanced && layers < pp * vs)
    err_at(s, f, at, "scenario `%s`: model.layers = %g is fewer than the %g pipeline stages", n, layers, pp * vs);
  if (fmod(gb, mb * dp))
    err_at(s, f, at, "scenario `%s`: plan.global_batch = %g does not divide by micro_batch * dp = %g*%g = %g", n, gb,
           mb, dp, mb * dp);
  /* context parallelism splits each sequence into 2 cp chunks (Megatron's causal load balance,
   * get_batch_on_this_cp_rank; recalled) */
  if (cp > 1 && fmod(seq, 2 * cp))
    err_at(s, f, at, "scenario `%s`: model.seq = %g does not divide by 2 * plan.cp = 2*%g = %g (2 cp chunks a sequence)",
           n, seq, cp, 2 * cp);
  if (experts > 0 && fmod(experts, ep))
    err_at(s, f, at, "scenario `%s`: model.experts = %g does not divide by plan.ep = %g", n, experts, ep);
  if (experts == 0 && ep > 1) err_at(s, f, at, "scenario `%s`: plan.ep = %g but the model has no experts", n, ep);
  if (experts == 0 && etp > 1) err_at(s, f, at, "scenario `%s`: plan.etp = %g but the model has no experts", n, etp);
  /* MoE parallel folding: the expert layers split a stage's tp*cp*dp ranks into etp x ep x edp */
  if (fmod(tp * cp * dp, etp))
    err_at(s, f, at, "scenario `%s`: plan.etp = %g does not divide tp*cp*dp = %g*%g*%g = %g", n, etp, tp, cp, dp,
           tp * cp * dp);
  else if (fmod(tp * cp * dp / etp, ep))
    err_at(s, f, at,
           "scenario `%s`: plan.ep = %g does not divide tp*cp*dp/etp = %g*%g*%g/%g = %g (the expert layers fold etp x "
           "ep x edp over the attention layers' tp x cp x dp ranks)",
           n, ep, tp, cp, dp, etp, tp * cp * dp / etp);
  if (moe_ffn > 0 && fmod(moe_ffn, etp))
    err_at(s, f, at, "scenario `%s`: model.moe_ffn = %g does not divide by plan.etp = %g", n, moe_ffn, etp);
  double groups = count_of(s, m, "router_groups", 1), gtop = count_of(s, m, "router_group_top_k", 1);
  double topk = count_of(s, m, "top_k", 1);
  if (groups >= 0 && gtop >= 0 && topk >= 0 && (groups > 1 || gtop > 1)) {
    SrcFile *mf = file_of(s, m);
    Span ga = field_span(m, "router_groups");
    if (experts == 0)
      err_at(s, mf, ga, "model `%s`: router_groups = %g but the model has no experts", m->name, groups);
    else if (fmod(experts, groups))
      err_at(s, mf, ga, "model `%s`: experts = %g do not divide into router_groups = %g", m->name, experts, groups);
    else if (gtop > groups)
      err_at(s, mf, field_span(m, "router_group_top_k"),
             "model `%s`: router_group_top_k = %g exceeds router_groups = %g", m->name, gtop, groups);
    else if (topk > gtop * experts / groups)
      err_at(s, mf, ga,
             "model `%s`: top_k = %g exceeds the %g experts of router_group_top_k = %g groups of %g experts each",
             m->name, topk, gtop * experts / groups, gtop, experts / groups);
  }
  const char *disp = word_of(s, p, "moe_token_dispatcher");
  if (!disp && fw) disp = word_of(s, fw, "moe_token_dispatcher"); /* the stack's default */
  if (disp && !strcmp(disp, "flex") && etp > 1)
    err_at(s, f, at,
           "scenario `%s`: moe_token_dispatcher = flex (DeepEP) dispatches over ep alone; plan.etp = %g, not 1", n,
           etp);
  const FieldDef *hd = schema_field(m->schema, "head_dim");
  if (!m->fields[schema_field_index(m->schema, hd)] && fmod(hidden, heads))
    err_at(s, f, at, "scenario `%s`: model.hidden = %g does not divide by model.heads = %g; set `head_dim`", n, hidden,
           heads);
  static const char *const schedules[] = {SCHEDULE_WORDS(WORD_STRING)};
  const char *sched = word_of(s, p, "schedule");
  if (!sched && fw) sched = word_of(s, fw, "schedule");
  if (!sched) sched = schedules[SCHED_1F1B]; /* the default schedule */
  if (vs > 1 && strcmp(sched, schedules[SCHED_INTERLEAVED]))
    err_at(s, f, at, "scenario `%s`: plan.virtual_stages = %g needs schedule = interleaved, not %s", n, vs, sched);
}

/* The rules of the scenario's stack, where the plan's values are known statically (lowering
 * checks them again for a sweep's points, with the same messages). */
static void check_stack(Sema *s, Decl *sc, Decl *p, Decl *fw) {
  double pp = count_of(s, p, "pp", 1), zero = count_of(s, p, "zero", 0);
  SrcFile *f = file_of(s, sc);
  Span at = field_span(sc, "framework");
  const char *n = sc->name, *stack = fw->name;
  static const char *const schedules[] = {SCHEDULE_WORDS(WORD_STRING)};
  const char *sched = word_of(s, p, "schedule");
  if (!sched) sched = word_of(s, fw, "schedule");
  if (!sched) sched = schedules[SCHED_1F1B];
  const char *list[8];
  int nl = sema_word_list(s, fw, "schedules", list, 8);
  bool listed = nl < 0;
  char names[96] = "";
  size_t k = 0;
  for (int i = 0; i < nl && i < 8; i++) {
    listed |= !strcmp(list[i], sched);
    k += (size_t)snprintf(names + k, sizeof names - (k < sizeof names ? k : sizeof names), "%s%s", i ? ", " : "", list[i]);
  }
  if (pp > 1 && !listed)
    err_at(s, f, at, "scenario `%s`: the stack `%s` runs the pipeline schedules %s only (its `schedules`); the plan asks for %s",
           n, stack, nl ? names : "(none)", sched);
  double mz = count_of(s, fw, "max_zero_with_pp", 3);
  if (pp > 1 && zero > mz && mz >= 0)
    err_at(s, f, at,
           "scenario `%s`: the stack `%s` runs ZeRO stage %g with pipeline parallelism (pp = %g), but at most stage %g (its "
           "`max_zero_with_pp`)",
           n, stack, zero, pp, mz);
  Value ov = eval_field_named(s, p, "overlap_dp"), dv = eval_field_named(s, fw, "dp_overlap_with_pp");
  if (pp > 1 && ov.t == T_BOOL && ov.known && ov.num != 0 && dv.t == T_BOOL && dv.known && dv.num == 0)
    err_at(s, f, at,
           "scenario `%s`: the stack `%s` does not overlap the data-parallel reduction with pipeline parallelism (its "
           "`dp_overlap_with_pp = false`): remove `overlap_dp = true` from the plan or set pp = 1",
           n, stack);
}

/* A quantized dtype needs a gpu that declares its rate: without it the kernels would run it at
 * fp16's rate with the format's bytes, faster than fp16.  mxfp8 runs at the fp8 rate but its
 * per-32 E8M0 scales need block-scaled tensor cores, which the gpus with an fp4 rate have
 * (Blackwell, CDNA 4; Transformer Engine refuses MXFP8 on Hopper).  nvfp4's E4M3 scales per
 * 16 elements are NVIDIA's: CDNA 4 runs fp4 as MXFP4 only. */
static const struct {
  const char *dtype, *peak, *why;
} dtype_needs[] = {
    {"fp8", "peak_fp8", "fp8 runs only on a gpu that declares its fp8 rate"},
    {"mxfp8", "peak_fp8", "mxfp8 runs only on a gpu that declares its fp8 rate"},
    {"mxfp8", "peak_fp4",
     "mxfp8's per-32 block scales need the block-scaled tensor cores of a gpu with an fp4 rate (Blackwell, CDNA 4)"},
    {"nvfp4", "peak_fp4", "nvfp4 runs only on a gpu that declares its fp4 rate"},
};

static bool has_peak(Sema *s, Decl *g, const char *field) {
  Value peak = eval_field_named(s, g, field);
  return peak.t == T_NUM && peak.known && peak.num > 0;
}

/* An error at the plan where it is written; at a sweep's name, which may have changed the
 * cluster. */
static void dtype_err(Sema *s, Decl *sc, const char *field, const char *dt, Decl *g, const char *what) {
  int i = schema_field_index(sc->schema, schema_field(sc->schema, "plan"));
  bool here = sc->kind == DK_SCENARIO && sc->fields[i];
  err_at(s, file_of(s, here ? sc->owners[i] : sc), here ? sc->fields[i]->span : sc->node->name_span,
         "%s `%s`: plan.%s = %s, but gpu `%s` %s", sc->kind == DK_SWEEP ? "sweep" : "scenario", sc->name, field, dt,
         g->name, what);
}

static bool dtype_runs(Sema *s, Decl *sc, const char *field, const char *dt, Decl *g) {
  char what[256];
  for (size_t k = 0; dt && k < sizeof dtype_needs / sizeof *dtype_needs; k++)
    if (!strcmp(dt, dtype_needs[k].dtype) && !has_peak(s, g, dtype_needs[k].peak)) {
      snprintf(what, sizeof what, "has no `%s`: %s", dtype_needs[k].peak, dtype_needs[k].why);
      dtype_err(s, sc, field, dt, g, what);
      return false;
    }
  return true;
}

static void check_dtype(Sema *s, Decl *sc, Decl *p, Decl *g) {
  const char *dt = word_of(s, p, "dtype");
  if (!dtype_runs(s, sc, "attention_dtype", word_of(s, p, "attention_dtype"), g) ||
      !dtype_runs(s, sc, "dtype", dt, g))
    return;
  const char *vendor = word_of(s, g, "vendor");
  if (dt && !strcmp(dt, "nvfp4") && vendor && strcmp(vendor, "nvidia"))
    dtype_err(s, sc, "dtype", dt, g,
              "is not an nvidia gpu: nvfp4's E4M3 scales per 16 elements are NVIDIA's (Blackwell); an amd gpu runs fp4 "
              "as MXFP4");
}

static void check_scenario(Sema *s, Decl *d) {
  Value vm = eval_field_named(s, d, "model"), vc = eval_field_named(s, d, "cluster"),
        vp = eval_field_named(s, d, "plan"), vf = eval_field_named(s, d, "framework");
  Decl *fw = vf.t == T_DECL && vf.known ? vf.decl : NULL;
  bool ok = complete(s, d, d, d->node->name_span);
  Decl *m = vm.t == T_DECL && vm.known ? vm.decl : NULL;
  Decl *c = vc.t == T_DECL && vc.known ? vc.decl : NULL;
  Decl *p = vp.t == T_DECL && vp.known ? vp.decl : NULL;
  if (m) ok &= complete(s, m, d, field_span(d, "model"));
  if (p) ok &= complete(s, p, d, field_span(d, "plan"));
  Decl *g = NULL;
  if (c) {
    ok &= complete(s, c, d, field_span(d, "cluster"));
    Value vg = eval_field_named(s, c, "gpu");
    if (vg.t == T_DECL && vg.known) ok &= complete(s, g = vg.decl, d, field_span(d, "cluster"));
  }
  if (ok && m && c && p && d->kind == DK_SCENARIO && m->ext_state == 2 && c->ext_state == 2 && p->ext_state == 2)
    check_divides(s, d, m, c, p, fw);
  if (ok && p && fw && d->kind == DK_SCENARIO && p->ext_state == 2 && fw->ext_state == 2) check_stack(s, d, p, fw);
  if (ok && p && g && p->ext_state == 2 && g->ext_state == 2) check_dtype(s, d, p, g); /* a sweep may set the cluster */
}

static void check_decl(Sema *s, Decl *d) {
  if (d->checked) return;
  d->checked = true;
  if (d->ext_state == 0) sema_resolve_extends(s, d);
  int objectives = 0;
  for (AstNode *c = body_of(d).first; c; c = c->next) check_stmt(s, d, c, &objectives);
  int n = schema_nfields(d->schema);
  for (int i = 0; i < n; i++) eval_field(s, d, i);
  if (d->kind == DK_SWEEP) {
    int vary = 0;
    for (AstNode *c = body_of(d).first; c; c = c->next) vary += c->kind == AST_VARY;
    if (!vary)
      err_at(s, file_of(s, d), d->node->name_span, "sweep `%s` varies nothing: add `vary plan.X in [...]`", d->name);
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

int sema_run_buffer(Sema *s, const char *path, const char *text, size_t len) {
  int before = s->diag->errors;
  return check_loaded(s, load_root_buffer(s, path, text, len), true, before);
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
  while (s->ndeferred) { /* rounds for reference chains deeper than MAX_EVAL_DEPTH */
    Deferred *list = s->deferred;
    unsigned n = s->ndeferred;
    s->deferred = NULL;
    s->ndeferred = s->capdeferred = 0;
    eval_deferred(s, list, n);
    free(list);
    for (int i = 0; i < s->ndecls; i++) { /* errors already reported are not repeated */
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
const SrcFile *sema_file(Sema *s, int i) { return i >= 0 && i < s->nfiles ? s->files[i].src : NULL; }
