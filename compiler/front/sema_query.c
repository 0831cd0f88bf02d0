/* sema_query.c - what an editor asks of a compilation (llmp lsp): each file's tree, the
 * declaration a name or a declaration node stands for, and, for each field of a declaration,
 * the statement that sets it, the declaration that wrote it and the value it holds. */
#include "sema_private.h"

AstNode *sema_file_root(Sema *s, int i) { return i >= 0 && i < s->nfiles ? s->files[i].root : NULL; }

Decl *sema_decl_named(Sema *s, const char *name) { return name ? sema_table_get(s, name) : NULL; }

Decl *sema_decl_of(const AstNode *n) {
  return n && (n->kind == AST_DECL || n->kind == AST_EXTEND) ? (Decl *)n->aux : NULL;
}

const SrcFile *sema_import_file(Sema *s, int i, const AstNode *import) {
  if (i < 0 || i >= s->nfiles) return NULL;
  for (int k = 0; k < s->files[i].nimports; k++)
    if (s->files[i].imports[k].node == import) return sema_file(s, s->files[i].imports[k].target);
  return NULL;
}

DeclKind sema_decl_kind(const Decl *d) { return d->kind; }
const Schema *sema_decl_schema(const Decl *d) { return d->schema; }
bool sema_decl_assembled(const Decl *d) { return d->ext_state == 2; }

AstNode *sema_field_stmt(Decl *d, int i, Decl **owner) {
  if (d->ext_state != 2 || i < 0 || i >= schema_nfields(d->schema)) return NULL;
  if (owner) *owner = d->owners[i];
  return d->fields[i];
}

SemaValue sema_field_value(Sema *s, Decl *d, int i) {
  SemaValue r = {SV_UNKNOWN, 0, {{0}}, false, NULL, NULL, 0};
  if (d->ext_state != 2 || i < 0 || i >= schema_nfields(d->schema)) return r;
  Value v = eval_field(s, d, i);
  if (v.t == T_ERROR || !v.known) return r;
  r.num = v.num;
  r.dim = v.dim;
  r.is_int = v.is_int;
  r.text = v.str;
  r.decl = v.decl;
  r.count = v.t == T_LIST && v.list ? v.list->u.list.count : 0;
  switch (v.t) {
  case T_NUM: r.kind = SV_NUMBER; break;
  case T_BOOL: r.kind = SV_BOOL; break;
  case T_STR: r.kind = SV_STRING; break;
  case T_ENUM: r.kind = SV_WORD; break;
  case T_LIST: r.kind = SV_LIST; break;
  case T_DECL: r.kind = SV_DECL; break;
  default: break;
  }
  return r;
}
