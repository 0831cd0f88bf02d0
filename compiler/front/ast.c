/* ast.c - constructors for the grammar actions and the --dump=ast printer. */
#include "ast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const decl_kind_names[DK_N] = {[DK_UNKNOWN] = "?",
#define X(k, s) [DK_##k] = s,
                                           DECL_KINDS(X)
#undef X
};

DeclKind decl_kind_lookup(const char *word) {
  for (int k = 1; k < DK_N; k++)
    if (strcmp(word, decl_kind_names[k]) == 0) return (DeclKind)k;
  return DK_UNKNOWN;
}

const char *const binop_text[] = {/* ORDER BinOp */
                                  "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "-", "not"};

static const char *const kind_names[] = {
#define X(k, s) s,
#include "ast_kinds.def"
#undef X
};

/* Depth bookkeeping: a node is one deeper than its deepest child.  The first node to pass
 * the limit is remembered; the parser reports it, and nothing walks the tree after that. */
static void set_depth(AstBuilder *b, AstNode *n, const AstNode *c) {
  if (!c) return;
  unsigned d = (unsigned)c->depth + 1u;
  if (d > AST_MAX_DEPTH) {
    d = AST_MAX_DEPTH + 1;
    if (!b->too_deep) {
      b->too_deep = true;
      b->too_deep_at = n->span;
    }
  }
  if (d > n->depth) n->depth = (unsigned short)d;
}

AstNode *ast_new(AstBuilder *b, AstKind k, Span sp) {
  AstNode *n = arena_alloc(b->arena, sizeof *n);
  n->kind = k;
  n->span = sp;
  return n;
}

AstNode *ast_name(AstBuilder *b, AstKind k, Span sp, const char *name, Span name_span) {
  AstNode *n = ast_new(b, k, sp);
  n->name = name;
  n->name_span = name_span;
  return n;
}

AstNode *ast_pair(AstBuilder *b, AstKind k, Span sp, AstNode *lhs, AstNode *rhs) {
  AstNode *n = ast_new(b, k, sp);
  n->u.bin.lhs = lhs;
  n->u.bin.rhs = rhs;
  set_depth(b, n, lhs);
  set_depth(b, n, rhs);
  return n;
}

AstNode *ast_binop(AstBuilder *b, BinOp op, AstNode *l, AstNode *r) {
  AstNode *n = ast_pair(b, AST_BINOP, span_join(l->span, r->span), l, r);
  n->u.bin.op = op;
  return n;
}

AstNode *ast_unop(AstBuilder *b, BinOp op, AstNode *e, Span sp) {
  AstNode *n = ast_pair(b, AST_UNOP, sp, e, NULL);
  n->u.bin.op = op;
  return n;
}

AstNode *ast_named(AstBuilder *b, AstKind k, Span sp, const char *name, Span ns, AstNode *rhs) {
  AstNode *n = ast_pair(b, k, sp, NULL, rhs);
  n->name = name;
  n->name_span = ns;
  return n;
}

/* "1_000_000", "1.26e9": underscores are separators; an integer has neither '.' nor an
 * exponent.  Range errors (1e999) are left to sema, which sees the infinite value. */
AstNode *ast_number(AstBuilder *b, Span sp, const char *text, size_t n) {
  char small[128];
  char *buf = n < sizeof small ? small : arena_alloc(b->arena, n + 1);
  size_t k = 0;
  bool is_int = true;
  for (size_t i = 0; i < n; i++) {
    if (text[i] == '_') continue;
    if (text[i] == '.' || text[i] == 'e' || text[i] == 'E') is_int = false;
    buf[k++] = text[i];
  }
  buf[k] = '\0';
  AstNode *node = ast_new(b, AST_NUM, sp);
  node->u.num.value = strtod(buf, NULL);
  node->u.num.is_int = is_int;
  const char *digits = buf;
  while (digits[0] == '0' && digits[1]) digits++;
  if (is_int && strlen(digits) > 15) { /* up to 15 digits a double holds exactly; beyond, an
                                            integer is exact iff at most 2^53 and it prints back */
    char back[400];
    snprintf(back, sizeof back, "%.0f", node->u.num.value);
    node->u.num.inexact = strcmp(back, digits) != 0 || node->u.num.value > 9007199254740992.0;
  }
  node->u.num.num_span = sp;
  return node;
}

AstNode *ast_with_unit(AstBuilder *b, AstNode *num, Span unit_span, const char *unit) {
  (void)b;
  num->u.num.unit = unit;
  num->u.num.unit_span = unit_span;
  num->span = span_join(num->span, unit_span);
  return num;
}

static void depth_of_list(AstBuilder *b, AstNode *n, AstList l) {
  for (AstNode *c = l.first; c; c = c->next) set_depth(b, n, c);
}

AstNode *ast_listnode(AstBuilder *b, AstKind k, Span sp, const char *name, Span ns, AstList l) {
  AstNode *n = ast_name(b, k, sp, name, ns);
  n->u.list = l;
  depth_of_list(b, n, l);
  return n;
}

AstNode *ast_decl(AstBuilder *b, Span sp, const char *kind, Span ks, const char *name, Span ns, const char *parent,
                  Span ps, AstList body) {
  AstNode *n = ast_name(b, AST_DECL, sp, name, ns);
  n->u.decl.kind_word = kind;
  n->u.decl.kind_span = ks;
  n->u.decl.kind = decl_kind_lookup(kind);
  n->u.decl.parent = parent;
  n->u.decl.parent_span = ps;
  n->u.decl.body = body;
  n->u.decl.file = b->file;
  depth_of_list(b, n, body);
  return n;
}

AstNode *ast_subblock(AstBuilder *b, Span sp, const char *word, Span ws, const char *label, Span ls, AstList body) {
  AstNode *n = ast_name(b, AST_SUBBLOCK, sp, word, ws);
  n->u.sub.label = label;
  n->u.sub.label_span = ls;
  n->u.sub.body = body;
  depth_of_list(b, n, body);
  return n;
}

AstList ast_list1(AstNode *n) {
  AstList l = {n, n, 1};
  n->next = NULL;
  return l;
}

AstList ast_append(AstList l, AstNode *n) {
  n->next = NULL;
  if (l.last)
    l.last->next = n;
  else
    l.first = n;
  l.last = n;
  l.count++;
  return l;
}

/* --dump=ast: one node per line, two spaces per level, with line:col-line:col. */
static void dump_node(FILE *out, const AstNode *n, SrcFile *f, int ind);

static void dump_list(FILE *out, AstList l, SrcFile *f, int ind) {
  for (const AstNode *c = l.first; c; c = c->next) dump_node(out, c, f, ind);
}

static void dump_head(FILE *out, const AstNode *n, SrcFile *f, int ind) {
  unsigned l1, c1, l2, c2;
  srcfile_locate(f, n->span.start, &l1, &c1);
  srcfile_locate(f, n->span.end, &l2, &c2);
  fprintf(out, "%*s%s@%u:%u-%u:%u", 2 * ind, "", kind_names[n->kind], l1, c1, l2, c2);
}

static void dump_node(FILE *out, const AstNode *n, SrcFile *f, int ind) {
  if (!n) return;
  dump_head(out, n, f, ind);
  switch (n->kind) {
  case AST_DECL:
    fprintf(out, " %s %s", n->u.decl.kind_word, n->name);
    if (n->u.decl.parent) fprintf(out, " extends %s", n->u.decl.parent);
    fputc('\n', out);
    dump_list(out, n->u.decl.body, f, ind + 1);
    return;
  case AST_SUBBLOCK:
    fprintf(out, " %s%s%s\n", n->name, n->u.sub.label ? " " : "", n->u.sub.label ? n->u.sub.label : "");
    dump_list(out, n->u.sub.body, f, ind + 1);
    return;
  case AST_NUM:
    fprintf(out, " %.17g%s%s%s\n", n->u.num.value, n->u.num.is_int ? " int" : "", n->u.num.unit ? " " : "",
            n->u.num.unit ? n->u.num.unit : "");
    return;
  case AST_BOOL: fprintf(out, " %s\n", n->u.boolean ? "true" : "false"); return;
  /* clang-format off */
  case AST_STR: case AST_IMPORT: fprintf(out, " \"%s\"\n", n->name); return;
  case AST_BINOP: case AST_UNOP: fprintf(out, " %s\n", binop_text[n->u.bin.op]); break;
  case AST_FILE: case AST_LIST: case AST_CALL: case AST_EXTEND:
    /* clang-format on */
    fprintf(out, "%s%s\n", n->name ? " " : "", n->name ? n->name : "");
    dump_list(out, n->u.list, f, ind + 1);
    return;
  default: fprintf(out, "%s%s\n", n->name ? " " : "", n->name ? n->name : ""); break;
  }
  dump_node(out, n->u.bin.lhs, f, ind + 1);
  dump_node(out, n->u.bin.rhs, f, ind + 1);
}

void ast_dump(FILE *out, const AstNode *root, SrcFile *f) { dump_node(out, root, f, 0); }
