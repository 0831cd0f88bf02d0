/* analyze.c - a document's compilation: what `llmp check` runs (imports, sema, and check's
 * further checks) over the editor's text, its diagnostics collected as data and published.
 *
 * A diagnostic in the document gets its own range; one in a file the document imports is
 * shown at the import that names that file (or the first import, for a file imported
 * through another), naming its place, with that place as related information; a note joins
 * the error before it as related information. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lsp_private.h"
#include "strbuf.h"

static void sink(void *user, DiagLevel lv, SrcFile *f, Span sp, const char *path, const char *msg) {
  Analysis *an = user;
  XGROW(an->diags, an->ndiags + 1, an->capdiags);
  an->diags[an->ndiags++] = (LspDiag){lv, f ? f->id : -1, sp, !f && path ? xstrdup(path) : NULL, xstrdup(msg)};
}

void lsp_analysis_free(Analysis *an) {
  if (!an) return;
  for (int i = 0; i < an->ndiags; i++) {
    free(an->diags[i].path);
    free(an->diags[i].msg);
  }
  free(an->diags);
  sema_free(an->s);
  diag_free(&an->d);
  free(an);
}

/* Where a diagnostic of file f shows in the document: the import that loaded f, else (f is
 * imported through another file) the first import. */
static Span import_of(Analysis *an, const SrcFile *f) {
  AstNode *root = sema_file_root(an->s, 0);
  Span first = {0, 0};
  bool any = false;
  for (AstNode *c = root ? root->u.list.first : NULL; c; c = c->next) {
    if (c->kind != AST_IMPORT) continue;
    if (sema_import_file(an->s, 0, c) == f) return c->span;
    if (!any) {
      first = c->span;
      any = true;
    }
  }
  return first;
}

static cJSON *related(Analysis *an, const LspDiag *x, const char *uri_doc) {
  cJSON *r = cJSON_CreateObject();
  SrcFile *f = x->file >= 0 ? an->d.files[x->file] : NULL;
  char *uri = f && f != an->root ? lsp_path_to_uri(f->path) : NULL;
  cJSON_AddItemToObject(r, "location",
                        f ? lsp_location(uri ? uri : uri_doc, f->text, f->len, x->span)
                          : lsp_location(uri_doc, "", 0, (Span){0, 0}));
  cJSON_AddStringToObject(r, "message", x->msg);
  free(uri);
  return r;
}

/* One diagnostic of the list, with its notes as related information. */
static cJSON *to_json(Analysis *an, const LspDiag *x, const Doc *doc) {
  cJSON *j = cJSON_CreateObject();
  SrcFile *f = x->file >= 0 ? an->d.files[x->file] : NULL;
  StrBuf msg = {0};
  if (f == an->root) {
    cJSON_AddItemToObject(j, "range", lsp_range(doc->text, doc->len, x->span));
  } else {
    cJSON_AddItemToObject(j, "range", lsp_range(doc->text, doc->len, f ? import_of(an, f) : (Span){0, 0}));
    unsigned line = 0, col = 0;
    if (f) srcfile_locate(f, x->span.start, &line, &col);
    const char *where = f ? f->path : x->path;
    if (f)
      strbuf_printf(&msg, "%s:%u:%u: ", where, line, col);
    else if (where && strcmp(where, doc->path))
      strbuf_printf(&msg, "%s: ", where);
  }
  strbuf_puts(&msg, x->msg);
  cJSON_AddNumberToObject(j, "severity", x->level == DIAG_ERROR ? 1 : x->level == DIAG_WARNING ? 2 : 3);
  cJSON_AddStringToObject(j, "source", "llmp");
  cJSON_AddStringToObject(j, "message", msg.p);
  strbuf_free(&msg);
  if (f && f != an->root)
    cJSON_AddItemToArray(cJSON_AddArrayToObject(j, "relatedInformation"), related(an, x, doc->uri));
  return j;
}

void lsp_analyze(Server *sv, Doc *doc) {
  lsp_analysis_free(doc->an);
  Analysis *an = doc->an = xcalloc(1, sizeof *an);
  diag_init(&an->d, NULL);
  diag_set_sink(&an->d, sink, an);
  an->s = sema_new(&an->d, &sv->so);
  an->errors = sema_run_buffer(an->s, doc->path, doc->text, doc->len);
  if (!an->errors && sv->more) an->errors = sv->more(an->s, &an->d, &sv->so);
  an->root = an->d.nfiles ? an->d.files[0] : NULL;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "uri", doc->uri);
  cJSON_AddNumberToObject(p, "version", (double)doc->version);
  cJSON *list = cJSON_AddArrayToObject(p, "diagnostics");
  cJSON *last = NULL;
  for (int i = 0; i < an->ndiags; i++) {
    const LspDiag *x = &an->diags[i];
    if (x->level == DIAG_NOTE && last) {
      cJSON *rel = cJSON_GetObjectItemCaseSensitive(last, "relatedInformation");
      if (!rel) rel = cJSON_AddArrayToObject(last, "relatedInformation");
      cJSON_AddItemToArray(rel, related(an, x, doc->uri));
      continue;
    }
    last = to_json(an, x, doc);
    cJSON_AddItemToArray(list, last);
  }
  lsp_notify(sv, "textDocument/publishDiagnostics", p);
}
