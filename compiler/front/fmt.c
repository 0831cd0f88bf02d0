/* fmt.c - the canonical layout of a .llmp file (`llmp fmt`).
 *
 * The layout is a function of the tree and of three facts kept from the source: where the
 * comments are, where blank lines were (runs of them become one), and whether a nested
 * block or inline extension was written on one line.  So formatting a formatted file
 * changes nothing.  Rules:
 *   - two spaces of indent per level, one statement per line, `;` never;
 *   - `=` (or `in`) aligned within a run of consecutive one-line statements of one kind
 *     (fields, lets, ops, varys; a blank line or a comment on its own line ends the run);
 *   - a comment on its own line stays on its own line before what followed it; a comment
 *     after a statement stays after it, and the trailing comments of a run start in one
 *     column, two spaces after the longest of those lines;
 *   - numbers keep their spelling (1_000_000, 1.26e9), a unit follows after one space;
 *   - expressions get the parentheses their precedence needs and no more. */
#include "fmt.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strbuf.h"

typedef struct Out {
  StrBuf b; /* the text so far */
  const SrcFile *f;
  const Span *comments;
  unsigned ncomments, ci; /* next comment to place */
  unsigned last_end;      /* source offset of the last thing placed */
} Out;

static void put(Out *o, const char *s, size_t n) { strbuf_put(&o->b, s, n); }

static void puts_(Out *o, const char *s) { strbuf_puts(&o->b, s); }

static void indent(Out *o, int level) {
  for (int i = 0; i < level; i++) put(o, "  ", 2);
}

static unsigned newlines_between(const SrcFile *f, unsigned a, unsigned b) {
  unsigned n = 0;
  for (unsigned i = a; i < b && i < f->len; i++) n += f->text[i] == '\n';
  return n;
}

/* No newline in [a, b): looks only as far as the end of a's line. */
static bool same_line(const SrcFile *f, unsigned a, unsigned b) {
  if (b > f->len) b = (unsigned)f->len;
  return a >= b || !memchr(f->text + a, '\n', b - a);
}

static bool after_open(const Out *o) { return o->b.n >= 2 && o->b.p[o->b.n - 2] == '{'; }

/* Own-line comments that start before `off`, each on its own line. */
static void comments_before(Out *o, unsigned off, int level) {
  while (o->ci < o->ncomments && o->comments[o->ci].start < off) {
    Span c = o->comments[o->ci++];
    if (newlines_between(o->f, o->last_end, c.start) >= 2 && o->b.n && !after_open(o)) put(o, "\n", 1);
    indent(o, level);
    put(o, o->f->text + c.start, c.end - c.start);
    put(o, "\n", 1);
    o->last_end = c.end;
  }
}

/* A comment on the same source line as `end`, before the next statement (`limit`), goes
 * after the statement: with `a = 1; b = 2  # c` the comment belongs to `b`. */
static void trailing_comment(Out *o, unsigned end, unsigned limit) {
  if (o->ci < o->ncomments && o->comments[o->ci].start >= end && o->comments[o->ci].start < limit &&
      same_line(o->f, end, o->comments[o->ci].start)) {
    Span c = o->comments[o->ci++];
    put(o, "  ", 2);
    put(o, o->f->text + c.start, c.end - c.start);
    o->last_end = c.end;
  }
}

static bool comment_inside(const Out *o, Span sp) {
  for (unsigned i = o->ci; i < o->ncomments && o->comments[i].start < sp.end; i++)
    if (o->comments[i].start >= sp.start) return true;
  return false;
}

/* --- expressions --------------------------------------------------------------------- */

static int prec_of(const AstNode *n) {
  if (n->kind == AST_UNOP) return n->u.bin.op == OP_NOT ? 3 : 7;
  if (n->kind != AST_BINOP) return 8;
  switch (n->u.bin.op) {
  case OP_OR: return 1;
  case OP_AND: return 2;
  case OP_ADD:
  case OP_SUB: return 5;
  case OP_MUL:
  case OP_DIV:
  case OP_MOD: return 6;
  default: return 4;
  }
}

static void expr(Out *o, const AstNode *n, int level);

static void expr_prec(Out *o, const AstNode *n, int min, int level) {
  bool paren = prec_of(n) < min;
  if (paren) put(o, "(", 1);
  expr(o, n, level);
  if (paren) put(o, ")", 1);
}

static void string_lit(Out *o, const char *s) {
  put(o, "\"", 1);
  for (; *s; s++) {
    /* clang-format off */
    if (*s == '"' || *s == '\\') { put(o, "\\", 1); put(o, s, 1); }
    else if (*s == '\n') puts_(o, "\\n");
    else if (*s == '\t') puts_(o, "\\t");
    else put(o, s, 1);
    /* clang-format on */
  }
  put(o, "\"", 1);
}

static void body(Out *o, AstList l, Span sp, int level, bool one_line, unsigned open);
static unsigned open_brace(const Out *o, unsigned from);

static bool written_on_one_line(const Out *o, Span sp) { return same_line(o->f, sp.start, sp.end); }

/* The arguments of a call or the items of a list, comma-separated between open and close. */
static void bracketed(Out *o, const char *open, AstList l, const char *close, int level) {
  puts_(o, open);
  for (const AstNode *c = l.first; c; c = c->next) {
    expr(o, c, level);
    if (c->next) put(o, ", ", 2);
  }
  puts_(o, close);
}

static void expr(Out *o, const AstNode *n, int level) {
  int p = prec_of(n);
  switch (n->kind) {
  case AST_NUM:
    put(o, o->f->text + n->u.num.num_span.start, n->u.num.num_span.end - n->u.num.num_span.start);
    if (n->u.num.unit) {
      put(o, " ", 1);
      puts_(o, n->u.num.unit);
    }
    break;
  case AST_STR: string_lit(o, n->name); break;
  case AST_BOOL: puts_(o, n->u.boolean ? "true" : "false"); break;
  case AST_NAME: puts_(o, n->name); break;
  case AST_MEMBER:
    /* A number on the left keeps parentheses: `2 . 81F` written `2.81F` would read back as
     * the number 2.81 and a stray `F`; `(2).81F` reads back as itself. */
    if (n->u.bin.lhs->kind == AST_NUM) {
      put(o, "(", 1);
      expr(o, n->u.bin.lhs, level);
      put(o, ")", 1);
    } else {
      expr_prec(o, n->u.bin.lhs, 8, level);
    }
    put(o, ".", 1);
    puts_(o, n->name);
    break;
  case AST_BINOP: {
    int lmin = p == 4 ? 5 : p, rmin = p + 1;
    expr_prec(o, n->u.bin.lhs, lmin, level);
    put(o, " ", 1);
    puts_(o, binop_text[n->u.bin.op]);
    put(o, " ", 1);
    expr_prec(o, n->u.bin.rhs, rmin, level);
    break;
  }
  case AST_UNOP:
    puts_(o, n->u.bin.op == OP_NOT ? "not " : "-");
    expr_prec(o, n->u.bin.lhs, p, level);
    break;
  case AST_CALL:
    puts_(o, n->name);
    bracketed(o, "(", n->u.list, ")", level);
    break;
  case AST_NAMEDARG:
    puts_(o, n->name);
    put(o, " = ", 3);
    expr(o, n->u.bin.rhs, level);
    break;
  case AST_LIST: bracketed(o, "[", n->u.list, "]", level); break;
  case AST_EXTEND:
    puts_(o, n->name);
    put(o, " ", 1);
    body(o, n->u.list, n->span, level, written_on_one_line(o, n->span), open_brace(o, n->name_span.end));
    break;
  default: break;
  }
}

/* --- statements ------------------------------------------------------------------ */

static bool simple_fields(AstList l);

/* Whether every inline extension in an expression can stay on one line. */
static bool simple_expr(const AstNode *n) {
  if (!n) return true;
  switch (n->kind) {
  case AST_EXTEND: return simple_fields(n->u.list);
  case AST_MEMBER:
  case AST_UNOP: return simple_expr(n->u.bin.lhs);
  case AST_BINOP: return simple_expr(n->u.bin.lhs) && simple_expr(n->u.bin.rhs);
  case AST_NAMEDARG: return simple_expr(n->u.bin.rhs);
  case AST_CALL:
  case AST_LIST:
    for (const AstNode *c = n->u.list.first; c; c = c->next)
      if (!simple_expr(c)) return false;
    return true;
  default: return true;
  }
}

/* A body that stays on one line where it was written on one: fields only, and the same of
 * every extension in their values (one that must break would break its enclosing ones on
 * the next formatting, which must change nothing). */
static bool simple_fields(AstList l) {
  for (const AstNode *c = l.first; c; c = c->next)
    if (c->kind != AST_FIELD || !simple_expr(c->u.bin.rhs)) return false;
  return true;
}

static void stmt(Out *o, const AstNode *c, int level, int pad);
static void stmt_rest(Out *o, const AstNode *c, int level);

static char *rest_of(Out *o, const AstNode *c, int level);

/* Statements that align: fields, lets, ops and varys written on one line.  Returns the
 * kind that groups a run (0: does not align).  Decided on the output, not the source: a
 * statement fmt joins onto one line aligns the same way the next time, so formatting
 * stays idempotent. */
static int align_kind(Out *o, const AstNode *c) {
  if (c->kind != AST_FIELD && c->kind != AST_LET && c->kind != AST_OP && c->kind != AST_VARY) return 0;
  char *rest = rest_of(o, c, 0);
  bool one_line = !strchr(rest, '\n');
  free(rest);
  return one_line ? (int)c->kind + 1 : 0;
}

/* The part before `=` (or `in`): "hidden", "let t", "op qkv", "vary plan.tp". */
static char *key_of(Out *o, const AstNode *c) {
  Out t = {0};
  t.f = o->f;
  put(&t, "", 0);
  /* clang-format off */
  if (c->kind == AST_FIELD) puts_(&t, c->name);
  else if (c->kind == AST_OP) { puts_(&t, "op "); puts_(&t, c->name); }
  else { puts_(&t, c->kind == AST_LET ? "let " : "vary "); expr(&t, c->u.bin.lhs, 0); }
  /* clang-format on */
  return t.b.p;
}

/* Everything after the key, as stmt_rest writes it. */
static char *rest_of(Out *o, const AstNode *c, int level) {
  Out t = {0};
  t.f = o->f;
  put(&t, "", 0);
  stmt_rest(&t, c, level);
  return t.b.p;
}

static unsigned next_start(const AstNode *c) { return c->next ? c->next->span.start : UINT_MAX; }

/* Is there a comment after c, on its last line, before the next statement?  (Not consumed.) */
static bool has_trailing(const Out *o, const AstNode *c) {
  return o->ci < o->ncomments && o->comments[o->ci].start >= c->span.end && o->comments[o->ci].start < next_start(c) &&
         same_line(o->f, c->span.end, o->comments[o->ci].start);
}

/* The statements from c that align with it. */
static int run_length(Out *o, const AstNode *c) {
  int k = align_kind(o, c), n = 0;
  if (!k) return 0;
  for (const AstNode *x = c; x && align_kind(o, x) == k; x = x->next) {
    n++;
    const AstNode *y = x->next;
    if (!y || newlines_between(o->f, x->span.end, y->span.start) >= 2) break;
    bool own_line_comment = false;
    for (unsigned i = o->ci; i < o->ncomments && o->comments[i].start < y->span.start; i++)
      if (o->comments[i].start >= x->span.end && newlines_between(o->f, x->span.end, o->comments[i].start) > 0)
        own_line_comment = true;
    if (own_line_comment) break;
  }
  return n;
}

/* Emits n aligned statements from c: keys padded to one width, trailing comments at one
 * column.  Returns the last statement emitted. */
static const AstNode *emit_run(Out *o, const AstNode *c, int n, int level) {
  char **keys = xmalloc((size_t)n * sizeof *keys), **rests = xmalloc((size_t)n * sizeof *rests);
  size_t kw = 0, cw = 0;
  const AstNode *x = c;
  unsigned ci = o->ci;
  for (int i = 0; i < n; i++, x = x->next) {
    keys[i] = key_of(o, x);
    rests[i] = rest_of(o, x, level);
    if (strlen(keys[i]) > kw) kw = strlen(keys[i]);
  }
  x = c;
  for (int i = 0; i < n; i++, x = x->next) { /* widest line that carries a comment */
    if (has_trailing(o, x) && kw + strlen(rests[i]) > cw) cw = kw + strlen(rests[i]);
    while (o->ci < o->ncomments && o->comments[o->ci].start < (x->next ? x->next->span.start : x->span.end + 1))
      o->ci++;
  }
  o->ci = ci;
  const AstNode *last = c;
  x = c;
  for (int i = 0; i < n; i++, x = x->next) {
    indent(o, level);
    puts_(o, keys[i]);
    for (size_t k = strlen(keys[i]); k < kw; k++) put(o, " ", 1);
    puts_(o, rests[i]);
    if (has_trailing(o, x))
      for (size_t k = kw + strlen(rests[i]); k < cw; k++) put(o, " ", 1);
    o->last_end = x->span.end;
    trailing_comment(o, x->span.end, next_start(x));
    put(o, "\n", 1);
    free(keys[i]);
    free(rests[i]);
    last = x;
  }
  free(keys);
  free(rests);
  return last;
}

/* The offset of the `{` that opens a body, searched from `from` (after the name). */
static unsigned open_brace(const Out *o, unsigned from) {
  while (from < o->f->len && o->f->text[from] != '{') from++;
  return from;
}

static void body(Out *o, AstList l, Span sp, int level, bool one_line, unsigned open) {
  if (!l.first && !comment_inside(o, sp)) {
    puts_(o, "{}");
    o->last_end = sp.end;
    return;
  }
  if (one_line && simple_fields(l) && !comment_inside(o, sp)) {
    puts_(o, "{ ");
    for (const AstNode *c = l.first; c; c = c->next) {
      stmt(o, c, level, 0);
      if (c->next) put(o, "; ", 2);
    }
    puts_(o, " }");
    o->last_end = sp.end;
    return;
  }
  puts_(o, "{");
  o->last_end = open + 1;
  trailing_comment(o, open + 1, l.first ? l.first->span.start : UINT_MAX);
  puts_(o, "\n");
  for (const AstNode *c = l.first; c; c = c->next) {
    comments_before(o, c->span.start, level + 1);
    if (newlines_between(o->f, o->last_end, c->span.start) >= 2 && !after_open(o)) put(o, "\n", 1);
    int n = run_length(o, c);
    if (n > 0) {
      c = emit_run(o, c, n, level + 1);
      continue;
    }
    indent(o, level + 1);
    stmt(o, c, level + 1, 0);
    o->last_end = c->span.end;
    trailing_comment(o, c->span.end, next_start(c));
    put(o, "\n", 1);
  }
  comments_before(o, sp.end, level + 1);
  indent(o, level);
  put(o, "}", 1);
  o->last_end = sp.end;
}

/* Everything after the key: " = value", " in [..]". */
static void stmt_rest(Out *o, const AstNode *c, int level) {
  puts_(o, c->kind == AST_VARY ? " in " : " = ");
  expr(o, c->u.bin.rhs, level);
}

static void stmt(Out *o, const AstNode *c, int level, int pad) {
  switch (c->kind) {
  case AST_FIELD:
    puts_(o, c->name);
    for (int i = (int)strlen(c->name); i < pad; i++) put(o, " ", 1);
    stmt_rest(o, c, level);
    break;
  case AST_SUBBLOCK:
    puts_(o, c->name);
    if (c->u.sub.label) {
      put(o, " ", 1);
      puts_(o, c->u.sub.label);
    }
    put(o, " ", 1);
    body(o, c->u.sub.body, c->span, level, written_on_one_line(o, c->span),
         open_brace(o, c->u.sub.label ? c->u.sub.label_span.end : c->name_span.end));
    break;
  case AST_LET:
  case AST_VARY:
    puts_(o, c->kind == AST_LET ? "let " : "vary ");
    expr(o, c->u.bin.lhs, level);
    stmt_rest(o, c, level);
    break;
  case AST_OP:
    puts_(o, "op ");
    puts_(o, c->name);
    stmt_rest(o, c, level);
    break;
  /* clang-format off */
  case AST_REQUIRE: case AST_MINIMIZE: case AST_MAXIMIZE: case AST_KEEP:
    puts_(o, c->kind == AST_REQUIRE ? "require " : c->kind == AST_MINIMIZE ? "minimize "
             : c->kind == AST_MAXIMIZE ? "maximize " : "keep ");
    /* clang-format on */
    expr(o, c->u.bin.rhs, level);
    break;
  default: break;
  }
}

static void top_item(Out *o, const AstNode *c) {
  if (c->kind == AST_IMPORT) {
    puts_(o, "import ");
    string_lit(o, c->name);
  } else {
    puts_(o, c->u.decl.kind_word);
    put(o, " ", 1);
    puts_(o, c->name);
    if (c->u.decl.parent) {
      puts_(o, " extends ");
      puts_(o, c->u.decl.parent);
    }
    put(o, " ", 1);
    body(o, c->u.decl.body, c->span, 0, false,
         open_brace(o, c->u.decl.parent ? c->u.decl.parent_span.end : c->name_span.end));
  }
}

char *fmt_file(const AstNode *root, const SrcFile *f, const Span *comments, unsigned ncomments, size_t *len) {
  Out o = {0};
  o.f = f;
  o.comments = comments;
  o.ncomments = ncomments;
  put(&o, "", 0);
  for (const AstNode *c = root->u.list.first; c; c = c->next) {
    comments_before(&o, c->span.start, 0);
    if (o.b.n && newlines_between(f, o.last_end, c->span.start) >= 2) put(&o, "\n", 1);
    top_item(&o, c);
    o.last_end = c->span.end;
    trailing_comment(&o, c->span.end, next_start(c));
    put(&o, "\n", 1);
  }
  comments_before(&o, (unsigned)f->len + 1, 0);
  *len = o.b.n;
  return o.b.p;
}
