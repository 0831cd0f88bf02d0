/* sema_read.c - reading a checked compilation (what lowering and the sweep engine ask of
 * it), and --dump=sema. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema_private.h"

/* --- reading a checked compilation ------------------------------------------------- */

Decl *sema_find(Sema *s, const char *name, DeclKind kind) {
  Decl *d = sema_table_get(s, intern_cstr(&s->in, name));
  return d && d->kind == kind && d->ext_state == 2 ? d : NULL;
}

const char *sema_decl_name(const Decl *d) { return d->name; }
Decl *sema_parent(Decl *d) { return d->parent; }
const char *sema_decl_path(Sema *s, const Decl *d) { return s->files[d->file].src->path; }

bool sema_number(Sema *s, Decl *d, const char *field, double *out) {
  Value v = eval_field_named(s, d, field);
  if (v.t != T_NUM || !v.known) return false;
  *out = v.num;
  return true;
}

bool sema_bool(Sema *s, Decl *d, const char *field, bool *out) {
  Value v = eval_field_named(s, d, field);
  if (v.t != T_BOOL || !v.known) return false;
  *out = v.num != 0;
  return true;
}

int sema_word_list(Sema *s, Decl *d, const char *field, const char **words, int max) {
  Value v = eval_field_named(s, d, field);
  if (v.t != T_LIST || !v.known || !v.list) return -1;
  int n = 0;
  for (AstNode *c = v.list->u.list.first; c; c = c->next) {
    if (c->kind != AST_NAME) return -1;
    if (n < max) words[n] = c->name;
    n++;
  }
  return n;
}

/* The index of d's field `field`, or -1 if its schema has none. */
static int field_index(const Decl *d, const char *field) {
  const FieldDef *fd = schema_field(d->schema, field);
  return fd ? schema_field_index(d->schema, fd) : -1;
}

/* Expands item n of a pattern, evaluated in e, `times` over; false if a count is unknown. */
static bool expand(Sema *s, Env *e, AstNode *n, double times, Decl **b, int *nb, unsigned char *g, int max, int *at) {
  if (n->kind == AST_LIST) {
    for (AstNode *c = n->u.list.first; c; c = c->next)
      if (!expand(s, e, c, times, b, nb, g, max, at)) return false;
    return true;
  }
  if (n->kind == AST_BINOP) {
    Value k = eval_expr(s, e, n->u.bin.lhs);
    return k.t == T_NUM && k.known && k.num >= 0 && expand(s, e, n->u.bin.rhs, times * k.num, b, nb, g, max, at);
  }
  Value v = eval_expr(s, e, n);
  if (v.t != T_DECL || !v.known) return false;
  int i = 0;
  while (i < *nb && b[i] != v.decl) i++;
  if (i == SEMA_PATTERN_BLOCKS) return false;
  if (i == *nb) b[(*nb)++] = v.decl;
  for (double k = 0; k < times; k++, (*at)++)
    if (*at >= max) return false;
    else g[*at] = (unsigned char)i;
  return true;
}

int sema_pattern(Sema *s, Decl *d, Decl **blocks, int *nblocks, unsigned char *group, int max) {
  int i = field_index(d, "pattern");
  Value v = i >= 0 ? eval_field(s, d, i) : v_error();
  if (v.t != T_LIST || !v.known || !d->fields[i]) return -1;
  Env e = {ENV_DECL, d, d->owners[i]};
  int at = 0;
  *nblocks = 0;
  return expand(s, &e, v.list, 1, blocks, nblocks, group, max, &at) ? at : -1;
}

int sema_count_list(Sema *s, Decl *d, const char *field, double *out, int max) {
  int i = field_index(d, field);
  Value v = i >= 0 ? eval_field(s, d, i) : v_error();
  if (v.t != T_LIST || !v.known || !v.list || !d->fields[i]) return -1;
  Env e = {ENV_DECL, d, d->owners[i]};
  int n = 0;
  for (AstNode *c = v.list->u.list.first; c; c = c->next, n++) {
    Value x = eval_expr(s, &e, c);
    if (x.t != T_NUM || !x.known) return -1;
    if (n < max) out[n] = x.num;
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

bool sema_field_at(Sema *s, Decl *d, const char *field, SrcFile **file, Span *span) {
  int i = field_index(d, field);
  if (i < 0 || !d->fields[i] || !d->owners[i]) return false;
  *file = file_of(s, d->owners[i]);
  *span = d->fields[i]->span;
  return true;
}

bool sema_in_data_dir(Sema *s, const Decl *d) {
  char *dir = realpath(sema_data_dir(&s->opt), NULL);
  const char *real = s->files[d->file].real;
  size_t n = dir ? strlen(dir) : 0;
  bool in = dir && real && !strncmp(real, dir, n) && (!strncmp(real + n, "/stdlib/", 8) || !strncmp(real + n, "/hw/", 4));
  free(dir);
  return in;
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
  Value v = eval_field_named(s, d, field);
  return (v.t == T_ENUM || v.t == T_STR) && v.known ? v.str : NULL;
}

Decl *sema_ref(Sema *s, Decl *d, const char *field) {
  Value v = eval_field_named(s, d, field);
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
      return eval_check(s, &env, f->u.bin.rhs, fd, field);
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
 * base units (B, s, FLOP, J) and the declaration each was written in. */
static void dump_value(FILE *out, Value v) {
  char b[128];
  /* clang-format off */
  if (v.t == T_ERROR) { fputs("<error>", out); return; }
  if (!v.known) { fprintf(out, "? (%s)", eval_describe(v, b, sizeof b)); return; }
  /* clang-format on */
  switch (v.t) {
  case T_NUM: {
    static const char *base[DIM_N] = {"B", "s", "FLOP", "J"};
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
    Value v = eval_field(s, d, i);
    fprintf(out, "%*s  %s = ", ind, "", d->schema->fields[i].name);
    dump_value(out, v);
    if (d->owners[i] && d->owners[i] != d) fprintf(out, "  (from %s)", d->owners[i]->name);
    fputc('\n', out);
    if (v.t == T_DECL && v.known && v.decl->node->kind == AST_EXTEND && ind < 8) dump_decl(s, out, v.decl, ind + 4);
  }
  for (int i = 0; i < d->nsubs; i++) {
    AstNode *sub = d->subs[i].node;
    fprintf(out, "%*s  %s%s%s {", ind, "", sub->name, sub->u.sub.label ? " " : "",
            sub->u.sub.label ? sub->u.sub.label : "");
    Env e = {ENV_DECL, d, d->subs[i].owner};
    const SubDef *sd = schema_sub(d->schema, sub->name);
    for (AstNode *f = sub->u.sub.body.first; sd && f; f = f->next) {
      const FieldDef *fd = f->kind == AST_FIELD ? schema_field(sd->schema, f->name) : NULL;
      if (!fd) continue;
      fprintf(out, " %s = ", f->name);
      dump_value(out, eval_check(s, &e, f->u.bin.rhs, fd, f->name));
      fputc(';', out);
    }
    if (d->subs[i].owner != d)
      fprintf(out, " }  (from %s)\n", d->subs[i].owner->name);
    else
      fputs(" }\n", out);
  }
}

void sema_dump(Sema *s, FILE *out) {
  for (int i = 0; i < s->ndecls; i++)
    if (s->decls[i]->file == 0 && s->decls[i]->ext_state == 2) dump_decl(s, out, s->decls[i], 0);
}
