/* edit.c - answers that write: completion, formatting (front/fmt.c, as `llmp fmt`) and code
 * actions for the diagnostics' "did you mean" fix-its.
 *
 * Completion reads the text before the cursor rather than the tree, since the text being
 * typed seldom parses: the open braces name the declaration or nested block around the
 * cursor, and the statement so far says what is wanted (a field name, a field's value, a
 * unit after a number, an import path). */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "front/fmt.h"
#include "front/parse.h"
#include "lsp_private.h"
#include "strbuf.h"

enum { MAX_NEST = 32, MAX_ITEMS = 2000 };

/* CompletionItemKind */
enum {
  CK_TEXT = 1,
  CK_FIELD = 5,
  CK_MODULE = 9,
  CK_UNIT = 11,
  CK_VALUE = 12,
  CK_KEYWORD = 14,
  CK_FILE = 17,
  CK_REFERENCE = 18,
  CK_ENUM_MEMBER = 20
};

static void item(cJSON *items, const char *label, int kind, const char *detail) {
  if (cJSON_GetArraySize(items) >= MAX_ITEMS) return;
  cJSON *it = cJSON_CreateObject();
  cJSON_AddStringToObject(it, "label", label);
  cJSON_AddNumberToObject(it, "kind", kind);
  if (detail) cJSON_AddStringToObject(it, "detail", detail);
  cJSON_AddItemToArray(items, it);
}

/* --- where the cursor is ------------------------------------------------------------------ */

typedef struct Ctx {
  DeclKind kind;        /* the declaration around the cursor (DK_UNKNOWN at top level) */
  const Schema *schema; /* the innermost declaration, nested block or inline extension */
  int depth;            /* open braces */
  const char *stmt;     /* the statement so far, up to the cursor */
  size_t nstmt;
  bool in_comment, in_string; /* the cursor is inside one */
} Ctx;

static const char *skip_ws(const char *s, const char *end) {
  while (s < end && isspace((unsigned char)*s)) s++;
  return s;
}

static size_t ident_len(const char *s, const char *end) {
  size_t n = 0;
  while (s + n < end && lsp_is_ident((unsigned char)s[n])) n++;
  return n;
}

/* The schema inside a brace opened after `header` within schema `outer`: a nested block
 * (`tier nvlink`), an inline extension (`cluster = eos`) or, at the top, a declaration. */
static const Schema *inner_schema(Ctx *c, const Schema *outer, const char *h, const char *end) {
  h = skip_ws(h, end);
  size_t w = ident_len(h, end);
  char word[64];
  if (!w || w >= sizeof word) return NULL;
  memcpy(word, h, w);
  word[w] = '\0';
  if (!outer) {
    c->kind = decl_kind_lookup(word);
    return schema_of(c->kind);
  }
  const char *eq = skip_ws(h + w, end);
  if (eq < end && *eq == '=') {
    const FieldDef *f = schema_field(outer, word);
    return f && f->type == FT_REF ? schema_of(f->ref) : NULL;
  }
  const SubDef *sd = schema_sub(outer, word);
  return sd ? sd->schema : NULL;
}

static void scan(const char *text, unsigned off, Ctx *c) {
  const char *heads[MAX_NEST], *stmt = text;
  const char *ends[MAX_NEST];
  int depth = 0;
  bool in_comment = false, in_string = false;
  for (unsigned i = 0; i < off; i++) {
    char ch = text[i];
    if (ch == '#') {
      while (i < off && text[i] != '\n') i++;
      in_comment = i == off;
      stmt = text + i + !in_comment;
    } else if (ch == '"') {
      for (i++; i < off && text[i] != '"' && text[i] != '\n'; i++)
        if (text[i] == '\\' && i + 1 < off) i++;
      in_string = i >= off;
      if (i < off && text[i] == '\n') stmt = text + i + 1;
    } else if (ch == '{') {
      if (depth < MAX_NEST) heads[depth] = stmt, ends[depth] = text + i;
      depth++;
      stmt = text + i + 1;
    } else if (ch == '}') {
      depth -= depth > 0;
      stmt = text + i + 1;
    } else if (ch == '\n' || ch == ';') {
      stmt = text + i + 1;
    }
  }
  memset(c, 0, sizeof *c);
  c->depth = depth;
  c->in_comment = in_comment;
  c->in_string = in_string;
  const Schema *s = NULL;
  for (int k = 0; k < depth && k < MAX_NEST; k++) {
    s = inner_schema(c, s, heads[k], ends[k]);
    if (!s) break;
  }
  c->schema = depth > 0 && depth <= MAX_NEST ? s : NULL;
  c->stmt = skip_ws(stmt, text + off);
  c->nstmt = (size_t)(text + off - c->stmt);
}

/* --- the items ------------------------------------------------------------------------------ */

static void field_items(cJSON *items, const Schema *s) {
  char doc[600];
  for (const FieldDef *f = s->fields; f->name; f++)
    if (!(f->flags & F_DERIVED)) item(items, f->name, CK_FIELD, lsp_field_doc(f, doc, sizeof doc));
  for (const SubDef *d = s->subs; d && d->word; d++) item(items, d->word, CK_KEYWORD, "nested block");
}

/* The declarations of a kind (DK_UNKNOWN: all) in the document and what it imports. */
static void decl_items(cJSON *items, Doc *doc, DeclKind kind) {
  if (!doc->an) return;
  for (int i = 0; i < sema_nfiles(doc->an->s); i++) {
    AstNode *root = sema_file_root(doc->an->s, i);
    for (AstNode *c = root ? root->u.list.first : NULL; c; c = c->next)
      if (c->kind == AST_DECL && c->name && (kind == DK_UNKNOWN || c->u.decl.kind == kind))
        item(items, c->name, CK_REFERENCE, c->u.decl.kind_word);
  }
}

/* The units of a quantity's dimension (none given: every unit, and the rates per second). */
static void unit_items(cJSON *items, const FieldDef *f) {
  for (int i = 0; unit_name(i); i++) {
    const char *name = unit_name(i);
    Unit u;
    unit_lookup(name, strlen(name), &u);
    char rate[32];
    snprintf(rate, sizeof rate, "%s/s", name);
    Dim per_s = dim_div(u.dim, dim_make(0, 1, 0));
    if (!f || dim_eq(f->dim, u.dim)) item(items, name, CK_UNIT, NULL);
    if (!f || dim_eq(f->dim, per_s)) item(items, rate, CK_UNIT, NULL);
  }
}

static bool listed(cJSON *items, const char *label) {
  cJSON *it;
  cJSON_ArrayForEach(it,
                     items) if (!strcmp(cJSON_GetObjectItemCaseSensitive(it, "label")->valuestring, label)) return true;
  return false;
}

/* The .llmp files under dir (as import paths: relative to base, without the extension). */
static void import_walk(cJSON *items, const char *base, const char *rel, int depth) {
  char path[4096];
  snprintf(path, sizeof path, "%s%s%s", base, *rel ? "/" : "", rel);
  DIR *dir = opendir(path);
  if (!dir) return;
  struct dirent *de;
  while ((de = readdir(dir)) && cJSON_GetArraySize(items) < MAX_ITEMS) {
    if (de->d_name[0] == '.') continue;
    char sub[4096], full[8192];
    snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
    snprintf(full, sizeof full, "%s/%s", base, sub);
    struct stat st;
    if (stat(full, &st) != 0) continue;
    size_t n = strlen(sub);
    if (S_ISDIR(st.st_mode) && depth > 0) {
      import_walk(items, base, sub, depth - 1);
    } else if (S_ISREG(st.st_mode) && n > 5 && !strcmp(sub + n - 5, ".llmp")) {
      sub[n - 5] = '\0';
      if (!listed(items, sub)) item(items, sub, CK_FILE, "import");
    }
  }
  closedir(dir);
}

static void import_items(Server *sv, Doc *doc, cJSON *items) {
  char *slash = strrchr(doc->path, '/');
  if (slash) {
    char *dir = strndup(doc->path, (size_t)(slash - doc->path));
    import_walk(items, *dir ? dir : "/", "", 1);
    free(dir);
  }
  for (int i = 0; i < sv->so.ninclude_dirs; i++) import_walk(items, sv->so.include_dirs[i], "", 2);
  const char *data = sema_data_dir(&sv->so);
  import_walk(items, data, "stdlib", 3);
  import_walk(items, data, "hw", 3);
}

/* Values of field f: its words, the declarations it may name, true and false. */
static void value_items(cJSON *items, Doc *doc, const FieldDef *f) {
  switch (f->type) {
  case FT_ENUM:
  case FT_ENUMLIST:
  case FT_SPAN:
    for (const char *const *w = f->enums; *w; w++) item(items, *w, CK_ENUM_MEMBER, f->name);
    break;
  case FT_REF: decl_items(items, doc, f->ref); break;
  case FT_PATTERN: decl_items(items, doc, DK_BLOCK); break;
  case FT_BOOL:
    item(items, "true", CK_VALUE, NULL);
    item(items, "false", CK_VALUE, NULL);
    break;
  default: decl_items(items, doc, DK_UNKNOWN); break;
  }
}

/* Statement words of a declaration's body besides its fields. */
static void statement_items(cJSON *items, DeclKind k) {
  static const char *const block[] = {"let", "op", NULL}, *const sweep[] = {"vary",     "let",  "require", "minimize",
                                                                            "maximize", "keep", NULL};
  const char *const *w = k == DK_BLOCK ? block : k == DK_SWEEP ? sweep : NULL;
  for (; w && *w; w++) item(items, *w, CK_KEYWORD, NULL);
}

cJSON *lsp_completion(Server *sv, cJSON *params, LspError *e) {
  unsigned off;
  Doc *doc = lsp_doc_at(sv, params, &off, e);
  if (!doc) return NULL;
  Ctx c;
  scan(doc->text, off, &c);
  cJSON *items = cJSON_CreateArray();
  const char *s = c.stmt, *end = c.stmt + c.nstmt;
  size_t w = ident_len(s, end);
  const char *after = skip_ws(s + w, end);
  if (c.in_comment || c.in_string) {
    if (c.in_string && w == 6 && !strncmp(s, "import", 6) && after < end && *after == '"') import_items(sv, doc, items);
  } else if (w && after < end && *after == '=' && c.schema) {
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(w < 63 ? w : 63), s);
    const FieldDef *f = schema_field(c.schema, name);
    const char *v = end;
    while (v > after && isalpha((unsigned char)v[-1])) v--; /* a unit being typed */
    while (v > after && v[-1] == ' ') v--;
    if (f && v > after + 1 && isdigit((unsigned char)v[-1]))
      unit_items(items, f->type == FT_QTY ? f : NULL);
    else if (f)
      value_items(items, doc, f);
    else
      decl_items(items, doc, DK_UNKNOWN);
  } else if (w == c.nstmt) { /* the first word of a statement */
    if (c.depth == 0) {
      for (int k = 1; k < DK_N; k++) item(items, decl_kind_names[k], CK_KEYWORD, "declaration");
      item(items, "import", CK_KEYWORD, NULL);
    } else if (c.schema) {
      field_items(items, c.schema);
      statement_items(items, c.kind);
    }
  } else {
    if (c.schema) field_items(items, c.schema);
    decl_items(items, doc, DK_UNKNOWN);
  }
  cJSON *r = cJSON_CreateObject();
  cJSON_AddBoolToObject(r, "isIncomplete", 0);
  cJSON_AddItemToObject(r, "items", items);
  return r;
}

/* --- formatting ----------------------------------------------------------------------------- */

static void first_error(void *user, DiagLevel lv, SrcFile *f, Span sp, const char *path, const char *msg) {
  char *buf = user;
  (void)path;
  if (lv != DIAG_ERROR || buf[0]) return;
  unsigned line = 0, col = 0;
  if (f) srcfile_locate(f, sp.start, &line, &col);
  snprintf(buf, 200, "%u:%u: %s", line, col, msg);
}

cJSON *lsp_formatting(Server *sv, cJSON *params, LspError *e) {
  Doc *doc = lsp_doc_of(sv, params, e);
  if (!doc) return NULL;
  char why[200] = "";
  Diag d;
  diag_init(&d, NULL);
  diag_set_sink(&d, first_error, why);
  SrcFile *f = diag_add_file(&d, doc->path, doc->text, doc->len);
  Parsed x;
  AstNode *root = parse_alone(&x, &d, f);
  cJSON *r = NULL;
  if (!root) {
    lsp_fail(e, LSP_REQUEST_FAILED, "cannot format a file with syntax errors: %s", why[0] ? why : "not text");
  } else {
    size_t n;
    char *text = fmt_file(root, f, x.p.comments, x.p.ncomments, &n);
    r = cJSON_CreateArray();
    if (n != doc->len || memcmp(text, doc->text, n)) {
      cJSON *edit = cJSON_CreateObject();
      cJSON_AddItemToObject(edit, "range", lsp_range(doc->text, doc->len, (Span){0, (unsigned)doc->len}));
      cJSON_AddStringToObject(edit, "newText", text);
      cJSON_AddItemToArray(r, edit);
    }
    free(text);
  }
  parsed_free(&x);
  diag_free(&d);
  return r;
}

/* --- code actions --------------------------------------------------------------------------- */

/* The word a "did you mean `best`?" replaces: the diagnostic's span when it is one name,
 * else the first quoted word of the message found as a name inside the span. */
static bool fix_span(const Doc *doc, const LspDiag *x, const char *best, Span *out) {
  const char *t = doc->text;
  Span sp = x->span;
  if (sp.end > doc->len || sp.end <= sp.start) return false;
  if (ident_len(t + sp.start, t + sp.end) == sp.end - sp.start) return *out = sp, true;
  for (const char *q = strchr(x->msg, '`'); q; q = strchr(q + 1, '`')) {
    const char *close = strchr(q + 1, '`');
    if (!close) break;
    size_t n = (size_t)(close - q - 1);
    if (n && strncmp(q + 1, best, n))
      for (unsigned i = sp.start; i + n <= sp.end; i++)
        if (!strncmp(t + i, q + 1, n) && (i == 0 || !lsp_is_ident((unsigned char)t[i - 1])) &&
            !lsp_is_ident((unsigned char)t[i + n]))
          return *out = (Span){i, i + (unsigned)n}, true;
    q = close;
  }
  return false;
}

cJSON *lsp_code_action(Server *sv, cJSON *params, LspError *e) {
  Doc *doc = lsp_doc_of(sv, params, e);
  if (!doc) return NULL;
  cJSON *range = cJSON_GetObjectItemCaseSensitive(params, "range");
  cJSON *st = cJSON_GetObjectItemCaseSensitive(range, "start"), *en = cJSON_GetObjectItemCaseSensitive(range, "end");
  cJSON *sl = cJSON_GetObjectItemCaseSensitive(st, "line"), *sc = cJSON_GetObjectItemCaseSensitive(st, "character");
  cJSON *el = cJSON_GetObjectItemCaseSensitive(en, "line"), *ec = cJSON_GetObjectItemCaseSensitive(en, "character");
  if (!cJSON_IsNumber(sl) || !cJSON_IsNumber(sc) || !cJSON_IsNumber(el) || !cJSON_IsNumber(ec)) {
    lsp_fail(e, RPC_INVALID_PARAMS, "params.range must have a start and an end position");
    return NULL;
  }
#define CLAMP(j) ((long)((j)->valuedouble < 0 ? 0 : (j)->valuedouble < 1e9 ? (j)->valuedouble : 1e9))
  /* The diagnostics on the range's lines, as clients send the cursor's line's. */
  unsigned from = lsp_offset(doc->text, doc->len, CLAMP(sl), 0);
  unsigned to = lsp_offset(doc->text, doc->len, CLAMP(el), 1000000000L); /* the line's end */
#undef CLAMP
  cJSON *out = cJSON_CreateArray();
  for (int i = 0; doc->an && i < doc->an->ndiags; i++) {
    const LspDiag *x = &doc->an->diags[i];
    const char *m = strstr(x->msg, "did you mean `");
    if (x->file != doc->an->root->id || !m || x->span.start > to || x->span.end < from) continue;
    char best[96];
    const char *b = m + 14, *close = strchr(b, '`');
    Span fix;
    if (!close || close - b >= (long)sizeof best) continue;
    snprintf(best, sizeof best, "%.*s", (int)(close - b), b);
    if (!fix_span(doc, x, best, &fix)) continue;
    char title[200];
    snprintf(title, sizeof title, "Replace `%.*s` with `%s`", (int)(fix.end - fix.start), doc->text + fix.start, best);
    cJSON *a = cJSON_CreateObject(), *edit = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "title", title);
    cJSON_AddStringToObject(a, "kind", "quickfix");
    cJSON_AddBoolToObject(a, "isPreferred", 1);
    cJSON_AddItemToObject(edit, "range", lsp_range(doc->text, doc->len, fix));
    cJSON_AddStringToObject(edit, "newText", best);
    cJSON *edits = cJSON_CreateArray();
    cJSON_AddItemToArray(edits, edit);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(a, "edit"), "changes"), doc->uri, edits);
    cJSON_AddItemToArray(out, a);
  }
  return out;
}
