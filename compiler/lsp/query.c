/* query.c - what is under the cursor, and the answers about it: hover, go to definition,
 * find references and the document's symbols.
 *
 * The compilation is the document's last analysis (analyze.c).  Names of declarations are
 * global across a compilation's files, so a name's definition is the declaration of that
 * name and its references are every use of the name in the document and what it imports. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lower/hw.h"
#include "lower/lower.h"
#include "lsp_private.h"
#include "report/report.h"
#include "strbuf.h"

#include "field_docs.h" /* lsp_field_docs[], from docs/language.md */

const LspFieldDoc *lsp_field_notes(const char *kind, const char *name) {
  for (size_t i = 0; i < sizeof lsp_field_docs / sizeof lsp_field_docs[0]; i++)
    if (!strcmp(lsp_field_docs[i].name, name) && !strcmp(lsp_field_docs[i].kind, kind)) return &lsp_field_docs[i];
  return NULL;
}

typedef enum { HIT_NONE, HIT_DECL, HIT_NAME, HIT_FIELD, HIT_IMPORT, HIT_OP } HitKind;

typedef struct Hit {
  HitKind kind;
  AstNode *node;    /* the node under the cursor */
  AstNode *decl;    /* the declaration around it */
  AstNode *sub;     /* the nested block around it (tier, measured), or NULL */
  AstNode *ext;     /* the inline extension around it (`eos { nodes = 4 }`), or NULL */
  const char *name; /* HIT_DECL, HIT_NAME: the declaration's name (interned) */
} Hit;

static bool within(Span s, unsigned off) { return off >= s.start && off <= s.end; }

static void find_in(AstNode *n, unsigned off, Hit *h);

static void find_list(AstNode *first, unsigned off, Hit *h) {
  for (AstNode *c = first; c && h->kind == HIT_NONE; c = c->next) find_in(c, off, h);
}

static void hit(Hit *h, HitKind k, AstNode *n, const char *name) {
  h->kind = k;
  h->node = n;
  h->name = name;
}

/* The innermost node at off: a declaration's name or parent, a field's name, a name in an
 * expression, an import. */
static void find_in(AstNode *n, unsigned off, Hit *h) {
  if (!n || !within(n->span, off)) return;
  switch (n->kind) {
  case AST_IMPORT: hit(h, HIT_IMPORT, n, NULL); break;
  case AST_DECL:
    h->decl = n;
    if (within(n->name_span, off))
      hit(h, HIT_DECL, n, n->name);
    else if (n->u.decl.parent && within(n->u.decl.parent_span, off))
      hit(h, HIT_NAME, n, n->u.decl.parent);
    else
      find_list(n->u.decl.body.first, off, h);
    break;
  case AST_SUBBLOCK:
    h->sub = n;
    if (n->u.sub.label && within(n->u.sub.label_span, off))
      hit(h, HIT_NAME, n, n->u.sub.label);
    else
      find_list(n->u.sub.body.first, off, h);
    break;
  case AST_FIELD:
    if (within(n->name_span, off))
      hit(h, HIT_FIELD, n, NULL);
    else
      find_in(n->u.bin.rhs, off, h);
    break;
  case AST_EXTEND:
    if (within(n->name_span, off)) {
      hit(h, HIT_NAME, n, n->name);
    } else {
      h->ext = n;
      h->sub = NULL;
      find_list(n->u.list.first, off, h);
    }
    break;
  case AST_NAME: hit(h, HIT_NAME, n, n->name); break;
  case AST_CALL:
    if (within(n->name_span, off))
      hit(h, HIT_OP, n, NULL);
    else
      find_list(n->u.list.first, off, h);
    break;
  case AST_FILE:
  case AST_LIST: find_list(n->u.list.first, off, h); break;
  case AST_NUM:
  case AST_STR:
  case AST_BOOL: break;
  case AST_MEMBER: find_in(n->u.bin.lhs, off, h); break;
  default:
    find_in(n->u.bin.lhs, off, h);
    find_in(n->u.bin.rhs, off, h);
    break;
  }
}

/* The document's analysis and what is at the params' position (h->kind HIT_NONE: nothing). */
static Doc *locate(Server *sv, cJSON *params, Hit *h, LspError *e) {
  unsigned off;
  Doc *d = lsp_doc_at(sv, params, &off, e);
  memset(h, 0, sizeof *h);
  if (d && d->an) find_in(sema_file_root(d->an->s, 0), off, h);
  return d;
}

/* --- text of values and fields ------------------------------------------------------------ */

/* v with an SI prefix and unit ("2.039 TB/s"). */
static const char *si(double v, const char *unit, char *buf, size_t n) {
  static const char *const pre[] = {"", "K", "M", "G", "T", "P", "E"};
  int k = 0;
  for (; k < 6 && fabs(v) >= 1000; k++) v /= 1000;
  snprintf(buf, n, "%.4g %s%s", v, pre[k], unit);
  return buf;
}

/* A number with its dimension in units that read well ("74.5 GiB (80000000000 B)", "2 TB/s"). */
static const char *quantity(double v, Dim d, bool is_int, char *buf, size_t n) {
  char num[STR_NUM_MAX], dimbuf[96];
  if (dim_is_none(d)) {
    snprintf(buf, n, "%s", is_int ? str_number(num, sizeof num, v) : str_brief(num, sizeof num, v));
    return buf;
  }
  if (dim_eq(d, dim_make(1, 0, 0))) {
    char b[64];
    snprintf(buf, n, "%s (%s B)", report_bytes(b, sizeof b, v), str_number(num, sizeof num, v));
    return buf;
  }
  if (dim_eq(d, dim_make(0, 1, 0))) return report_time(buf, (unsigned)n, v);
  if (dim_eq(d, dim_make(1, -1, 0))) return si(v, "B/s", buf, n);
  if (dim_eq(d, dim_make(0, -1, 1))) return si(v, "FLOP/s", buf, n);
  if (dim_eq(d, dim_make(0, 0, 1))) return si(v, "FLOP", buf, n);
  snprintf(buf, n, "%s %s", str_brief(num, sizeof num, v), dim_describe(d, dimbuf, sizeof dimbuf));
  return buf;
}

static void range_text(const FieldDef *f, StrBuf *b) {
  char lo[STR_NUM_MAX], hi[STR_NUM_MAX];
  str_brief(lo, sizeof lo, f->min);
  str_brief(hi, sizeof hi, f->max);
  bool open = f->flags & F_MIN_OPEN;
  if ((f->flags & F_HAS_MIN) && (f->flags & F_HAS_MAX))
    strbuf_printf(b, " in %s%s, %s]", open ? "(" : "[", lo, hi);
  else if (f->flags & F_HAS_MIN)
    strbuf_printf(b, " %s %s", open ? ">" : "≥", lo);
}

const char *lsp_field_doc(const FieldDef *f, char *buf, size_t n) {
  StrBuf b = {0};
  char words[512], dim[96];
  switch (f->type) {
  case FT_COUNT: strbuf_puts(&b, "count"); break;
  case FT_QTY: strbuf_puts(&b, dim_describe(f->dim, dim, sizeof dim)); break;
  case FT_REAL: strbuf_puts(&b, "number"); break;
  case FT_BOOL: strbuf_puts(&b, "`true` or `false`"); break;
  case FT_STRING: strbuf_puts(&b, "string"); break;
  case FT_ENUM: strbuf_printf(&b, "one of %s", enum_list(f->enums, words, sizeof words)); break;
  case FT_ENUMLIST: strbuf_printf(&b, "list of %s, each at most once", enum_list(f->enums, words, sizeof words)); break;
  case FT_REF:
    strbuf_printf(&b, "a %s: its name, or `name { field = value }` to extend it here", decl_kind_names[f->ref]);
    break;
  case FT_SPAN: strbuf_printf(&b, "%s, or a count of nodes", enum_list(f->enums, words, sizeof words)); break;
  case FT_PATTERN: strbuf_puts(&b, "list of blocks: a block, `N * item`, or a list `[a, b]` of items"); break;
  case FT_COUNTLIST: strbuf_puts(&b, "list of whole numbers ≥ 0"); break;
  case FT_ANY: break;
  }
  if (f->type == FT_COUNT || f->type == FT_QTY || f->type == FT_REAL) range_text(f, &b);
  if (f->flags & F_REQ) strbuf_puts(&b, ", required");
  if (f->flags & F_DERIVED) strbuf_puts(&b, ", derived: read, not set");
  snprintf(buf, n, "%s", b.p ? b.p : "");
  strbuf_free(&b);
  return buf;
}

static void value_text(Sema *s, Decl *d, int i, char *buf, size_t n) {
  SemaValue v = sema_field_value(s, d, i);
  switch (v.kind) {
  case SV_NUMBER: quantity(v.num, v.dim, v.is_int, buf, n); break;
  case SV_BOOL: snprintf(buf, n, "%s", v.num ? "true" : "false"); break;
  case SV_STRING: snprintf(buf, n, "\"%.200s\"", v.text); break;
  case SV_WORD: snprintf(buf, n, "%s", v.text); break;
  case SV_LIST: snprintf(buf, n, "[%u items]", v.count); break;
  case SV_DECL: snprintf(buf, n, "%s `%s`", decl_kind_names[sema_decl_kind(v.decl)], sema_decl_name(v.decl)); break;
  case SV_UNKNOWN: snprintf(buf, n, "%s", "not known statically"); break;
  }
}

/* "path:LINE" of a declaration, for where a value came from. */
static void decl_place(Sema *s, Decl *d, char *buf, size_t n) {
  SrcFile *f;
  Span sp;
  unsigned line, col;
  sema_decl_at(s, d, &f, &sp);
  srcfile_locate(f, sp.start, &line, &col);
  snprintf(buf, n, "%s:%u", f->path, line);
}

/* The source text of a node, cut to fit. */
static void node_text(Sema *s, Decl *owner, AstNode *n, StrBuf *b) {
  SrcFile *f;
  Span sp;
  sema_decl_at(s, owner, &f, &sp);
  if (!f || n->span.end > f->len) return;
  unsigned len = n->span.end - n->span.start;
  strbuf_printf(b, "`%.*s%s`", len > 80 ? 80 : (int)len, f->text + n->span.start, len > 80 ? "..." : "");
}

/* --- hover ---------------------------------------------------------------------------------- */

/* A scenario's figures from the run pipeline: lowered, evaluated by the interpreter. */
static void scenario_figures(Server *sv, Analysis *an, Decl *sc, StrBuf *b) {
  if (an->errors) {
    strbuf_puts(b, "\n\nNot evaluated: the file has errors.");
    return;
  }
  int mark = an->ndiags;
  HwSet *hw = hw_new(an->s, &an->d, &sv->so);
  Lowered l;
  int rc = hw ? lower_scenario(an->s, hw, sc, &an->d, &l) : -1;
  if (rc == 0) {
    double *vals = xmalloc((size_t)(l.g.nn ? l.g.nn : 1) * sizeof *vals);
    graph_eval(&l.g, NULL, vals);
    Report r;
    lower_report(&l, vals, &r);
    char t[64], p[64], c[64], fit[512], why[1024];
    if (!isfinite(r.iteration) || !isfinite(r.peak)) { /* what `llmp run` refuses */
      lower_why_not_finite(&l.g, vals, why, sizeof why);
      strbuf_printf(b, "\n\nNot evaluated: %s", why);
    } else {
      if (r.fits)
        strbuf_printf(b, "\n\n**iteration** %s · **memory peak** %s of %s · fits",
                      report_time(t, sizeof t, r.iteration), report_bytes(p, sizeof p, r.peak),
                      report_bytes(c, sizeof c, r.capacity));
      else
        strbuf_printf(b, "\n\n**memory peak** %s of %s · does not fit", report_bytes(p, sizeof p, r.peak),
                      report_bytes(c, sizeof c, r.capacity));
      if (r.fits && r.has_measured_iteration)
        strbuf_printf(b, " · measured %s (%+.1f %%)", report_time(t, sizeof t, r.measured_iteration), r.error_pct);
      strbuf_printf(b, "\n\n%s", report_fit_message(fit, sizeof fit, &r));
    }
    free(vals);
    lower_free(&l);
  }
  for (int i = mark; i < an->ndiags; i++) { /* why it could not be evaluated */
    if (an->diags[i].level == DIAG_ERROR) strbuf_printf(b, "\n\nNot evaluated: %s", an->diags[i].msg);
    free(an->diags[i].msg);
    free(an->diags[i].path);
  }
  an->ndiags = mark;
  hw_free(hw);
}

/* A declaration: its kind, its extends chain, where it is, its fields as assembled. */
static void decl_hover(Server *sv, Analysis *an, Decl *d, StrBuf *b) {
  Sema *s = an->s;
  char place[600], val[256];
  strbuf_printf(b, "**%s `%s`**", decl_kind_names[sema_decl_kind(d)], sema_decl_name(d));
  for (Decl *p = sema_parent(d); p; p = sema_parent(p)) strbuf_printf(b, " extends `%s`", sema_decl_name(p));
  decl_place(s, d, place, sizeof place);
  strbuf_printf(b, "\n\ndeclared at %s", place);
  if (!sema_decl_assembled(d)) return;
  const Schema *sc = sema_decl_schema(d);
  int nf = schema_nfields(sc), shown = 0;
  for (int i = 0; i < nf && shown < 60; i++) {
    Decl *owner = NULL;
    AstNode *st = sema_field_stmt(d, i, &owner);
    if (!st && !(sc->fields[i].flags & F_DERIVED)) continue;
    if (!strcmp(sc->fields[i].name, "description") || !strcmp(sc->fields[i].name, "source")) continue;
    value_text(s, d, i, val, sizeof val);
    strbuf_printf(b, "%s- `%s` = %s", shown++ ? "\n" : "\n\n", sc->fields[i].name, val);
    if (owner && owner != d) strbuf_printf(b, " (from `%s`)", sema_decl_name(owner));
  }
  if (sema_decl_kind(d) == DK_SCENARIO) scenario_figures(sv, an, d, b);
}

/* A field: its documentation from the schema; in a declaration, its value and where the
 * value it overrides came from through extends. */
static void field_hover(Analysis *an, Hit *h, StrBuf *b) {
  Sema *s = an->s;
  Decl *d = sema_decl_of(h->ext ? h->ext : h->decl);
  if (!d) return;
  const Schema *sc = sema_decl_schema(d);
  const char *where = sc->name;
  if (h->sub) {
    const SubDef *sd = schema_sub(sc, h->sub->name);
    if (!sd) return;
    sc = sd->schema;
    where = sd->word;
  }
  const FieldDef *fd = schema_field(sc, h->node->name);
  char doc[700], val[256], place[600];
  if (!fd) return;
  strbuf_printf(b, "**`%s`**: %s field, %s", fd->name, where, lsp_field_doc(fd, doc, sizeof doc));
  const LspFieldDoc *notes = lsp_field_notes(where, fd->name);
  if (notes && notes->deflt[0]) strbuf_printf(b, "; default %s", notes->deflt);
  if (notes && notes->notes[0]) strbuf_printf(b, "\n\n%s", notes->notes);
  if (h->sub) return;
  int i = schema_field_index(sc, fd);
  value_text(s, d, i, val, sizeof val);
  strbuf_printf(b, "\n\nvalue in `%s`: %s", sema_decl_name(d), val);
  for (Decl *p = sema_parent(d); p; p = sema_parent(p)) {
    Decl *owner = NULL;
    AstNode *st = sema_field_stmt(p, i, &owner);
    if (!st || !owner) continue;
    decl_place(s, owner, place, sizeof place);
    strbuf_printf(b, "\n\noverrides `%s` of `%s` (%s): ", fd->name, sema_decl_name(owner), place);
    node_text(s, owner, st->u.bin.rhs, b);
    break;
  }
}

/* An operator of a block: its parameters from the schema, and the reference's notes. */
static void op_hover(Hit *h, StrBuf *b) {
  const OpDef *od = op_lookup(h->node->name);
  if (!od) return;
  strbuf_printf(b, "**`%s`**: %s operator (", od->name, od->collective ? "collective" : "compute");
  const char *sep = "";
  for (const FieldDef *p = od->params; p->name; p++) { /* positional, then named */
    bool first_named = !(p->flags & F_POS) && p > od->params && (p[-1].flags & F_POS);
    strbuf_printf(b, "%s%s", first_named ? "; " : sep, p->name);
    sep = ", ";
  }
  strbuf_puts(b, ")");
  const LspFieldDoc *notes = lsp_field_notes("block", od->name);
  if (notes) strbuf_printf(b, "\n\n%s", notes->type);
}

cJSON *lsp_hover(Server *sv, cJSON *params, LspError *e) {
  Hit h;
  Doc *doc = locate(sv, params, &h, e);
  if (!doc || h.kind == HIT_NONE || h.kind == HIT_IMPORT) return doc ? cJSON_CreateNull() : NULL;
  StrBuf b = {0};
  if (h.kind == HIT_FIELD) {
    field_hover(doc->an, &h, &b);
  } else if (h.kind == HIT_OP) {
    op_hover(&h, &b);
  } else {
    Decl *d = sema_decl_named(doc->an->s, h.name);
    if (d)
      decl_hover(sv, doc->an, d, &b);
    else if (h.node->kind == AST_NAME)
      field_hover(doc->an, &h, &b); /* a field of the declaration read by name: `4 * hidden` */
  }
  if (!b.p) return cJSON_CreateNull();
  cJSON *r = cJSON_CreateObject(), *c = cJSON_AddObjectToObject(r, "contents");
  cJSON_AddStringToObject(c, "kind", "markdown");
  cJSON_AddStringToObject(c, "value", b.p);
  cJSON_AddItemToObject(r, "range",
                        lsp_range(doc->text, doc->len,
                                  h.node->kind == AST_DECL || h.kind == HIT_FIELD || h.kind == HIT_OP
                                      ? h.node->name_span
                                      : h.node->span));
  strbuf_free(&b);
  return r;
}

/* --- definition and references ---------------------------------------------------------- */

/* A location in file f of the analysis (the document itself for its root). */
static cJSON *location_in(Doc *doc, const SrcFile *f, Span sp) {
  if (f == doc->an->root) return lsp_location(doc->uri, doc->text, doc->len, sp);
  char *uri = lsp_path_to_uri(f->path);
  cJSON *l = lsp_location(uri, f->text, f->len, sp);
  free(uri);
  return l;
}

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return xstrdup(".");
  return slash == path ? xstrdup("/") : strndup(path, (size_t)(slash - path));
}

cJSON *lsp_definition(Server *sv, cJSON *params, LspError *e) {
  Hit h;
  Doc *doc = locate(sv, params, &h, e);
  if (!doc) return NULL;
  if (h.kind == HIT_IMPORT) {
    char *dir = dir_of(doc->path);
    char *p = sema_resolve_import(&sv->so, dir, h.node->name);
    free(dir);
    if (!p) return cJSON_CreateNull();
    char *uri = lsp_path_to_uri(p);
    cJSON *l = lsp_location(uri, "", 0, (Span){0, 0});
    free(uri);
    free(p);
    return l;
  }
  Decl *d = h.kind == HIT_NAME || h.kind == HIT_DECL ? sema_decl_named(doc->an->s, h.name) : NULL;
  if (!d) return cJSON_CreateNull();
  SrcFile *f;
  Span sp;
  sema_decl_at(doc->an->s, d, &f, &sp);
  return location_in(doc, f, sp);
}

/* Every use of name in the tree under n: names, extends, inline extensions, labels. */
static void uses(AstNode *n, const char *name, bool decl_too, cJSON *out, Doc *doc, const SrcFile *f) {
  for (; n; n = n->next) {
    switch (n->kind) {
    case AST_DECL:
      if (decl_too && n->name == name) cJSON_AddItemToArray(out, location_in(doc, f, n->name_span));
      if (n->u.decl.parent == name) cJSON_AddItemToArray(out, location_in(doc, f, n->u.decl.parent_span));
      uses(n->u.decl.body.first, name, decl_too, out, doc, f);
      break;
    case AST_SUBBLOCK:
      if (n->u.sub.label == name) cJSON_AddItemToArray(out, location_in(doc, f, n->u.sub.label_span));
      uses(n->u.sub.body.first, name, decl_too, out, doc, f);
      break;
    case AST_EXTEND:
      if (n->name == name) cJSON_AddItemToArray(out, location_in(doc, f, n->name_span));
      uses(n->u.list.first, name, decl_too, out, doc, f);
      break;
    case AST_NAME:
      if (n->name == name) cJSON_AddItemToArray(out, location_in(doc, f, n->span));
      break;
    case AST_FILE:
    case AST_LIST:
    case AST_CALL: uses(n->u.list.first, name, decl_too, out, doc, f); break;
    case AST_IMPORT:
    case AST_NUM:
    case AST_STR:
    case AST_BOOL: break;
    case AST_MEMBER: uses(n->u.bin.lhs, name, decl_too, out, doc, f); break;
    default:
      uses(n->u.bin.lhs, name, decl_too, out, doc, f);
      uses(n->u.bin.rhs, name, decl_too, out, doc, f);
      break;
    }
  }
}

cJSON *lsp_references(Server *sv, cJSON *params, LspError *e) {
  Hit h;
  Doc *doc = locate(sv, params, &h, e);
  if (!doc) return NULL;
  cJSON *out = cJSON_CreateArray();
  if ((h.kind != HIT_NAME && h.kind != HIT_DECL) || !sema_decl_named(doc->an->s, h.name)) return out;
  cJSON *ctx = cJSON_GetObjectItemCaseSensitive(params, "context");
  bool decl_too = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "includeDeclaration"));
  for (int i = 0; i < sema_nfiles(doc->an->s); i++) {
    AstNode *root = sema_file_root(doc->an->s, i);
    const SrcFile *f = sema_file(doc->an->s, i);
    if (root && f) uses(root->u.list.first, h.name, decl_too, out, doc, f);
  }
  return out;
}

/* --- document symbols ------------------------------------------------------------------- */

static const int symbol_kinds[DK_N] = {
    /* ORDER DeclKind; LSP SymbolKind */
    [DK_UNKNOWN] = 19, [DK_GPU] = 19,      [DK_CLUSTER] = 2, [DK_BLOCK] = 12,    [DK_MODEL] = 5,
    [DK_PLAN] = 23,    [DK_SCENARIO] = 24, [DK_SWEEP] = 11,  [DK_FRAMEWORK] = 4,
};

static cJSON *symbol(Doc *doc, const char *name, const char *detail, int kind, Span range, Span sel) {
  cJSON *s = cJSON_CreateObject();
  cJSON_AddStringToObject(s, "name", name && *name ? name : "?");
  if (detail) cJSON_AddStringToObject(s, "detail", detail);
  cJSON_AddNumberToObject(s, "kind", kind);
  cJSON_AddItemToObject(s, "range", lsp_range(doc->text, doc->len, range));
  cJSON_AddItemToObject(s, "selectionRange", lsp_range(doc->text, doc->len, sel));
  return s;
}

/* The statements of a body as children: fields, nested blocks, lets, operators. */
static void body_symbols(Doc *doc, AstNode *first, cJSON *children) {
  for (AstNode *c = first; c; c = c->next) {
    cJSON *s = NULL;
    if (c->kind == AST_FIELD) s = symbol(doc, c->name, NULL, 8, c->span, c->name_span);
    if (c->kind == AST_OP) s = symbol(doc, c->name, "op", 25, c->span, c->name_span);
    if (c->kind == AST_LET && c->u.bin.lhs && c->u.bin.lhs->name)
      s = symbol(doc, c->u.bin.lhs->name, "let", 13, c->span, c->u.bin.lhs->span);
    if (c->kind == AST_SUBBLOCK) {
      s = symbol(doc, c->u.sub.label ? c->u.sub.label : c->name, c->name, 3, c->span,
                 c->u.sub.label ? c->u.sub.label_span : c->name_span);
      body_symbols(doc, c->u.sub.body.first, cJSON_AddArrayToObject(s, "children"));
    }
    if (s) cJSON_AddItemToArray(children, s);
  }
}

cJSON *lsp_symbols(Server *sv, cJSON *params, LspError *e) {
  Doc *doc = lsp_doc_of(sv, params, e);
  if (!doc) return NULL;
  cJSON *out = cJSON_CreateArray();
  AstNode *root = doc->an ? sema_file_root(doc->an->s, 0) : NULL;
  for (AstNode *c = root ? root->u.list.first : NULL; c; c = c->next) {
    if (c->kind != AST_DECL) continue;
    char detail[300];
    snprintf(detail, sizeof detail, "%s%s%s", c->u.decl.kind_word, c->u.decl.parent ? " extends " : "",
             c->u.decl.parent ? c->u.decl.parent : "");
    cJSON *s = symbol(doc, c->name, detail, symbol_kinds[c->u.decl.kind], c->span, c->name_span);
    body_symbols(doc, c->u.decl.body.first, cJSON_AddArrayToObject(s, "children"));
    cJSON_AddItemToArray(out, s);
  }
  return out;
}
