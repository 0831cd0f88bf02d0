/* test_fmt.c - unit tests of the formatter (compiler/front/fmt.c): the canonical layout,
 * idempotence, comments, alignment, blank lines, number spelling, parentheses, and that
 * formatting never changes the tree (checked with an AST-equality helper that ignores
 * spans, and with --dump=ast output with the spans removed). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/fmt.h"
#include "support.h"
#include "support_front.h"

typedef ParsedText P;

/* A text that must parse without errors. */
static P *parse_clean(const char *name, const char *src, size_t n) {
  P *t = parse_text(name, src, n);
  if (!t->root || t->d.errors) fail_msg("%s does not parse:\n%s\n---\n%s", name, src, out(t));
  return t;
}

static char *fmt_parsed(P *t) {
  size_t n = 0;
  char *s = fmt_file(t->root, t->f, t->x.p.comments, t->x.p.ncomments, &n);
  assert_non_null(s);
  assert_int_equal(strlen(s), n);
  return s;
}

/* fmt(src), the source must parse. */
static char *fmt_str(const char *src) {
  P *t = parse_clean("in.llmp", src, strlen(src));
  char *s = fmt_parsed(t);
  done(t);
  return s;
}

static char *msgf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *msgf(const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *m = malloc((size_t)n + 1);
  vsnprintf(m, (size_t)n + 1, fmt, aq);
  va_end(aq);
  return m;
}

/* NULL when got and want are equal; else a message naming the first line where they differ
 * (and the texts, when short). */
static char *texts_diff(const char *what, const char *src, const char *got, const char *want) {
  if (strcmp(got, want) == 0) return NULL;
  const char *g = got, *w = want;
  int line = 1;
  while (*g && *g == *w) {
    if (*g == '\n') line++;
    g++;
    w++;
  }
  while (g > got && g[-1] != '\n') g--, w--;
  int gl = (int)strcspn(g, "\n"), wl = (int)strcspn(w, "\n");
  if (strlen(src) + strlen(got) + strlen(want) < 1500)
    return msgf("%s: line %d is\n  `%.*s`\nexpected\n  `%.*s`\nsource:\n%s---\ngot:\n%s---\nexpected:\n%s---", what,
                line, gl, g, wl, w, src, got, want);
  return msgf("%s: line %d is\n  `%.*s`\nexpected\n  `%.*s`", what, line, gl, g, wl, w);
}

static void texts_equal(const char *what, const char *src, const char *got, const char *want) {
  char *m = texts_diff(what, src, got, want);
  if (m) {
    print_error("%s\n", m);
    free(m);
    fail();
  }
}

static void fmt_is(const char *src, const char *want) {
  char *got = fmt_str(src);
  texts_equal("formatting", src, got, want);
  free(got);
}

/* --- AST equality, spans ignored ----------------------------------------------------------- */

static bool str_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static bool ast_eq(const AstNode *a, const AstNode *b, char *why, size_t nwhy);

static bool list_eq(AstList a, AstList b, char *why, size_t nwhy) {
  if (a.count != b.count) {
    snprintf(why, nwhy, "list of %u vs %u elements", a.count, b.count);
    return false;
  }
  const AstNode *x = a.first, *y = b.first;
  for (; x && y; x = x->next, y = y->next)
    if (!ast_eq(x, y, why, nwhy)) return false;
  if (x || y) {
    snprintf(why, nwhy, "list links differ from counts");
    return false;
  }
  return true;
}

static bool ast_eq(const AstNode *a, const AstNode *b, char *why, size_t nwhy) {
  if (!a || !b) {
    if (a != b) snprintf(why, nwhy, "one node is missing");
    return a == b;
  }
  if (a->kind != b->kind) {
    snprintf(why, nwhy, "kind %d vs %d", a->kind, b->kind);
    return false;
  }
  if (!str_eq(a->name, b->name)) {
    snprintf(why, nwhy, "name `%s` vs `%s`", a->name ? a->name : "(null)", b->name ? b->name : "(null)");
    return false;
  }
  switch (a->kind) {
  case AST_FILE:
  case AST_LIST:
  case AST_CALL:
  case AST_EXTEND: return list_eq(a->u.list, b->u.list, why, nwhy);
  case AST_IMPORT:
  case AST_STR:
  case AST_NAME: return true;
  case AST_DECL:
    if (!str_eq(a->u.decl.kind_word, b->u.decl.kind_word) || !str_eq(a->u.decl.parent, b->u.decl.parent) ||
        a->u.decl.kind != b->u.decl.kind) {
      snprintf(why, nwhy, "declaration header of `%s` differs", a->name);
      return false;
    }
    return list_eq(a->u.decl.body, b->u.decl.body, why, nwhy);
  case AST_SUBBLOCK:
    if (!str_eq(a->u.sub.label, b->u.sub.label)) {
      snprintf(why, nwhy, "block label differs");
      return false;
    }
    return list_eq(a->u.sub.body, b->u.sub.body, why, nwhy);
  case AST_NUM:
    if (a->u.num.value != b->u.num.value || a->u.num.is_int != b->u.num.is_int ||
        !str_eq(a->u.num.unit, b->u.num.unit)) {
      snprintf(why, nwhy, "number %.17g%s %s vs %.17g%s %s", a->u.num.value, a->u.num.is_int ? " int" : "",
               a->u.num.unit ? a->u.num.unit : "", b->u.num.value, b->u.num.is_int ? " int" : "",
               b->u.num.unit ? b->u.num.unit : "");
      return false;
    }
    return true;
  case AST_BOOL:
    if (a->u.boolean != b->u.boolean) {
      snprintf(why, nwhy, "boolean differs");
      return false;
    }
    return true;
  case AST_BINOP:
  case AST_UNOP:
    if (a->u.bin.op != b->u.bin.op) {
      snprintf(why, nwhy, "operator `%s` vs `%s`", binop_text[a->u.bin.op], binop_text[b->u.bin.op]);
      return false;
    }
    return ast_eq(a->u.bin.lhs, b->u.bin.lhs, why, nwhy) && ast_eq(a->u.bin.rhs, b->u.bin.rhs, why, nwhy);
  default: /* FIELD LET OP VARY REQUIRE MINIMIZE MAXIMIZE KEEP MEMBER NAMEDARG */
    return ast_eq(a->u.bin.lhs, b->u.bin.lhs, why, nwhy) && ast_eq(a->u.bin.rhs, b->u.bin.rhs, why, nwhy);
  }
}

/* --dump=ast text with the @L:C-L:C spans taken out. */
static char *dump_without_spans(P *t) {
  char *buf = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&buf, &n);
  assert_non_null(m);
  ast_dump(m, t->root, t->f);
  fclose(m);
  char *w = buf;
  for (const char *r = buf; *r;) {
    if (*r == '@') {
      r++;
      while ((*r >= '0' && *r <= '9') || *r == ':' || *r == '-') r++;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
  return buf;
}

/* The checks every input gets: fmt(fmt(x)) == fmt(x), the tree is unchanged, and every
 * comment is kept, in order.  NULL when they hold, else what went wrong. */
static char *round_trip_problem(const char *name, const char *src, size_t len) {
  P *a = parse_clean(name, src, len);
  char *once = fmt_parsed(a);
  P *b = parse_clean(name, once, strlen(once));
  char *twice = fmt_parsed(b);
  char what[300], why[256] = "";
  snprintf(what, sizeof what, "%s: not idempotent, formatting the formatted text", name);
  char *problem = texts_diff(what, once, twice, once);
  char *da = dump_without_spans(a), *db = dump_without_spans(b);
  if (!problem && !ast_eq(a->root, b->root, why, sizeof why))
    problem = msgf("%s: formatting changed the tree (%s)\nsource:\n%s---\nformatted:\n%s---", name, why, src, once);
  if (!problem && strcmp(da, db) != 0)
    problem = msgf("%s: --dump=ast differs after formatting\n%s---\n%s---", name, da, db);
  if (!problem && a->x.p.ncomments != b->x.p.ncomments)
    problem =
        msgf("%s: %u comments before formatting, %u after\n%s---", name, a->x.p.ncomments, b->x.p.ncomments, once);
  for (unsigned i = 0; !problem && i < a->x.p.ncomments; i++) {
    Span x = a->x.p.comments[i], y = b->x.p.comments[i];
    /* a comment's text ends at the line end; trailing spaces and a \r may be trimmed */
    size_t nx = x.end - x.start, ny = y.end - y.start;
    while (nx && (src[x.start + nx - 1] == ' ' || src[x.start + nx - 1] == '\t' || src[x.start + nx - 1] == '\r')) nx--;
    while (ny && (once[y.start + ny - 1] == ' ' || once[y.start + ny - 1] == '\t' || once[y.start + ny - 1] == '\r'))
      ny--;
    if (nx != ny || memcmp(src + x.start, once + y.start, nx) != 0)
      problem =
          msgf("%s: comment %u was `%.*s`, became `%.*s`", name, i, (int)nx, src + x.start, (int)ny, once + y.start);
  }
  free(da);
  free(db);
  free(once);
  free(twice);
  done(a);
  done(b);
  return problem;
}

static void round_trip(const char *name, const char *src, size_t len) {
  char *m = round_trip_problem(name, src, len);
  if (m) {
    print_error("%s\n", m);
    free(m);
    fail();
  }
}

/* --- inputs -------------------------------------------------------------------------- */

static const char *const inputs[] = {
    "",
    "# only a comment\n",
    "# one\n\n\n# two\n",
    "model m { a = 1 }",
    "model   m{a=1;bb=2\n\n\n c = 3}\n",
    "import \"a\"\nimport \"b\" # why\n\nmodel m {}\n",
    "gpu a {}\n\n\n\n# c\n\n\n\ngpu b {}\n",
    "model m {\n  a = 1\n\n}\n",
    "model m {\r\n  a = 1\r\n}\r\n",
    "model m { # after the brace\n  a = 1\n}\n",
    "model m {\n  # lead\n  a = 1 # one\n\n  # mid\n\n  bbb = 2\n  # end\n}\n# tail\n",
    "model m { s = \"a\\\"b\\\\c\\nd\\te\"; t = \"\" }\n",
    "model m {\n  x = [1,\n    2, # two\n    3]\n  y = 1\n}\n",
    "model m {\n  x = [p {\n    a = 1\n  }, q { b = 2 }]\n}\n",
    "cluster c {\n  gpu = g; nodes = 2\n  tier nv { span = node; bandwidth = 300 GB/s } # nvlink\n"
    "  tier ib {\n  span = system\n    bandwidth = 25 Gb/s\n  latency = 2.5us\n  }\n  measured {}\n}\n",
    "scenario s {\n  model = m\n  cluster = p { nodes = 2 }\n  plan = q {\n    tp = 2\n    # inner\n  }\n"
    "  measured { iteration = 17.370 s }\n}\n",
    "block b {\n  let t = a * (b + c)\n  let vp = model.vocab + (m - model.vocab % m) % m\n"
    "  op x = linear(t, 1, 2, split = column) # c\n  op yy = add(t)\n  op z = attention(1, 2,\n"
    "    3, 4, causal = true)\n}\n",
    "sweep w extends s {\n  vary plan.tp in [1, 2, 4,]\n  vary plan.micro_batch in [1]\n"
    "  let plan.dp = 8 / (plan.tp * plan.pp)\n  require not (a and b) or c\n"
    "  require memory.peak <= cluster.gpu.memory\n  minimize iteration\n  keep 20\n}\n",
    "model m { x = -(a + b) * -c - (d - e) / (f % g); y = not (a or b) and (c == d) }\n",
    "model m { a = 1_000_000; b = 1.26e9; c = 0.25; d = 80GiB; e = 2.5us; f = 2039 GB/s; g = 1E3 }\n",
    "plan p {\n  tp = 1; pp = 2 # both\n  placement = [tp, dp, pp]\n}\n",
    "model m {\n  a = 1\n  # own line\n  long_name = 2\n  c = f(1,\n    2)\n  d = 3\n}\n",
};

/* Every input is checked; the failures are listed together. */
TEST(idempotent_and_tree_preserving_on_inputs) {
  int failed = 0;
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    char name[32];
    snprintf(name, sizeof name, "input%zu.llmp", i);
    char *m = round_trip_problem(name, inputs[i], strlen(inputs[i]));
    if (m) {
      print_error("%s\n\n", m);
      free(m);
      failed++;
    }
  }
  if (failed) fail_msg("%d of %zu inputs failed", failed, sizeof inputs / sizeof inputs[0]);
}

/* --- the shipped .llmp files ------------------------------------------------------------ */

static char **shipped;
static size_t nshipped;

static int collect_llmp(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  size_t n = strlen(path);
  if (flag == FTW_F && n > 5 && strcmp(path + n - 5, ".llmp") == 0) {
    shipped = realloc(shipped, (nshipped + 1) * sizeof *shipped);
    shipped[nshipped++] = strdup(path);
  }
  return 0;
}

TEST(idempotent_and_tree_preserving_on_shipped_files) {
  static const char *const dirs[] = {"examples", "stdlib", "hw"};
  for (size_t i = 0; i < 3; i++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", LLMP_SOURCE_DIR, dirs[i]);
    nftw(dir, collect_llmp, 16, FTW_PHYS);
  }
  if (nshipped < 5) fail_msg("found only %zu .llmp files under %s", nshipped, LLMP_SOURCE_DIR);
  int failed = 0;
  size_t total = nshipped;
  for (size_t i = 0; i < nshipped; i++) {
    size_t len;
    char *src = read_file(shipped[i], &len);
    char *m = round_trip_problem(shipped[i], src, len);
    if (m) {
      print_error("%s\n\n", m);
      free(m);
      failed++;
    }
    free(src);
    free(shipped[i]);
  }
  free(shipped);
  shipped = NULL;
  nshipped = 0;
  if (failed) fail_msg("%d of %zu shipped files failed", failed, total);
}

/* --- layout rules --------------------------------------------------------------------------- */

TEST(keeps_every_comment) {
  const char *src = "# header\n\n"
                    "model m { # brace\n"
                    "  # before a\n"
                    "  a = 1 # after a\n"
                    "  tier t { x = 1 } # after tier\n"
                    "  inner {\n"
                    "    # only inside\n"
                    "  }\n"
                    "  b = [1, # inside list\n"
                    "    2]\n"
                    "  # last in body\n"
                    "} # after decl\n"
                    "# between\n"
                    "plan p {}\n"
                    "# trailer\n";
  char *got = fmt_str(src);
  static const char *const comments[] = {"# header",     "# brace",       "# before a",    "# after a",
                                         "# after tier", "# only inside", "# inside list", "# last in body",
                                         "# after decl", "# between",     "# trailer"};
  const char *at = got;
  for (size_t i = 0; i < sizeof comments / sizeof comments[0]; i++) {
    const char *c = strstr(at, comments[i]);
    if (!c) fail_msg("comment `%s` lost or out of order in\n%s", comments[i], got);
    at = c + strlen(comments[i]);
  }
  free(got);
  round_trip("comments.llmp", src, strlen(src));
}

TEST(comment_placement) {
  fmt_is("model m {\n  a = 1   # after a\n  # before b\n  b = 2\n}\n",
         "model m {\n  a = 1  # after a\n  # before b\n  b = 2\n}\n");
  fmt_is("# header\n\n\ngpu g {}\n# trailer\n", "# header\n\ngpu g {}\n# trailer\n");
  fmt_is("model m {   # brace\n  a = 1\n}\n", "model m {  # brace\n  a = 1\n}\n");
  fmt_is("model m {\n  a = 1\n      # last\n}\n", "model m {\n  a = 1\n  # last\n}\n");
}

/* "a comment after a statement stays after it": after `b`, not moved to `a`. */
TEST(trailing_comment_stays_with_its_statement) {
  fmt_is("model m {\n  a = 1; b = 2  # about b\n}\n", "model m {\n  a = 1\n  b = 2  # about b\n}\n");
  fmt_is("block k {\n  let x = 1; op y = add(x)  # about y\n}\n",
         "block k {\n  let x = 1\n  op y = add(x)  # about y\n}\n");
}

TEST(aligns_equals_in_field_runs) {
  fmt_is("model m {\n  a = 1\n  long_name = 2\n  bb = 3\n}\n",
         "model m {\n  a         = 1\n  long_name = 2\n  bb        = 3\n}\n");
  /* already aligned input stays */
  fmt_is("model m {\n  a         = 1\n  long_name = 2\n}\n", "model m {\n  a         = 1\n  long_name = 2\n}\n");
  /* over-padded input is tightened */
  fmt_is("model m {\n  a      =   1\n  bb     =  2\n}\n", "model m {\n  a  = 1\n  bb = 2\n}\n");
  /* trailing comments of a run start in one column */
  fmt_is("model m {\n  a = 1 # x\n  long_name = 2 # y\n  c = 300 # z\n}\n",
         "model m {\n  a         = 1    # x\n  long_name = 2    # y\n  c         = 300  # z\n}\n");
  /* in a nested block too */
  fmt_is("cluster c {\n  tier t {\n    span = node\n    bandwidth = 1 GB/s\n  }\n}\n",
         "cluster c {\n  tier t {\n    span      = node\n    bandwidth = 1 GB/s\n  }\n}\n");
}

TEST(aligns_lets_ops_and_varys) {
  fmt_is("block b {\n  let t = 1\n  let vp = 2\n  op words = add(t)\n  op s = add(vp)\n}\n",
         "block b {\n  let t  = 1\n  let vp = 2\n  op words = add(t)\n  op s     = add(vp)\n}\n");
  fmt_is("sweep w {\n  vary plan.tp in [1]\n  vary plan.micro_batch in [2]\n  keep 1\n}\n",
         "sweep w {\n  vary plan.tp          in [1]\n  vary plan.micro_batch in [2]\n  keep 1\n}\n");
}

TEST(breaks_runs_at_blank_lines_and_comments) {
  fmt_is("model m {\n  a = 1\n\n  long_name = 2\n  bb = 3\n}\n",
         "model m {\n  a = 1\n\n  long_name = 2\n  bb        = 3\n}\n");
  fmt_is("model m {\n  a = 1\n  # own line\n  long_name = 2\n}\n",
         "model m {\n  a = 1\n  # own line\n  long_name = 2\n}\n");
  /* a statement laid out over several lines ends the run */
  fmt_is("model m {\n  a = 1\n  bb = p {\n    x = 1\n  }\n  long_name = 3\n  c = 4\n}\n",
         "model m {\n  a = 1\n  bb = p {\n    x = 1\n  }\n  long_name = 3\n  c         = 4\n}\n");
}

/* A statement written over several lines that fmt puts on one line must be laid out as
 * the second run lays it out: fmt(fmt(x)) == fmt(x). */
TEST(joined_statement_is_idempotent) {
  const char *src = "model m {\n  aa = 1\n  b = f(1,\n    2)\n}\n";
  round_trip("joined.llmp", src, strlen(src));
  const char *blk = "block k {\n  op yy = add(1)\n  op z = add(1 +\n    2)\n}\n";
  round_trip("joined_op.llmp", blk, strlen(blk));
}

/* A run is aligned as a whole, however long. */
TEST(aligns_long_runs_as_one) {
  enum { N = 300 };
  char *src = malloc(N * 32 + 64), *want = malloc(N * 32 + 64);
  size_t k = (size_t)sprintf(src, "model m {\n"), w = (size_t)sprintf(want, "model m {\n");
  for (int i = 0; i < N; i++) {
    k += (size_t)sprintf(src + k, "  f%d = %d\n", i, i);
    w += (size_t)sprintf(want + w, "  f%-21d = %d\n", i, i); /* 22: the longest name */
  }
  /* the widest name comes last */
  strcpy(src + k, "  a_long_name_at_the_end = 1\n}\n");
  strcpy(want + w, "  a_long_name_at_the_end = 1\n}\n");
  fmt_is(src, want);
  free(src);
  free(want);
}

TEST(collapses_blank_lines) {
  fmt_is("gpu a {}\n\n\n\ngpu b {}\n", "gpu a {}\n\ngpu b {}\n");
  fmt_is("gpu a {}\ngpu b {}\n", "gpu a {}\ngpu b {}\n");
  fmt_is("model m {\n  a = 1\n\n\n\n  b = 2\n}\n", "model m {\n  a = 1\n\n  b = 2\n}\n");
  fmt_is("\n\n\nmodel m {\n\n\n  a = 1\n\n\n}\n\n\n", "model m {\n  a = 1\n}\n");
  fmt_is("# a\n\n\n\n# b\n", "# a\n\n# b\n");
}

TEST(keeps_number_spelling) {
  fmt_is("model m { a = 1_000_000; b = 1.26e9; c = 0.25; d = 80GiB; e = 2.5us; f = 2039   GB/s; g = 1E3; h = 007 }\n",
         "model m {\n  a = 1_000_000\n  b = 1.26e9\n  c = 0.25\n  d = 80 GiB\n  e = 2.5 us\n  f = 2039 GB/s\n"
         "  g = 1E3\n  h = 007\n}\n");
}

TEST(string_escapes_kept) {
  fmt_is("model m { s = \"a\\\"b\\\\c\\nd\\te\" }\n", "model m {\n  s = \"a\\\"b\\\\c\\nd\\te\"\n}\n");
}

/* want NULL: any spelling, as long as the tree and idempotence hold. */
static void expr_is(const char *in, const char *want) {
  char src[512], exp[512];
  snprintf(src, sizeof src, "model m { x = %s }\n", in);
  if (want) {
    snprintf(exp, sizeof exp, "model m {\n  x = %s\n}\n", want);
    fmt_is(src, exp);
  }
  round_trip("expr.llmp", src, strlen(src));
}

TEST(parenthesises_by_precedence) {
  expr_is("(a + b) * c", "(a + b) * c");
  expr_is("a + (b * c)", "a + b * c");
  expr_is("(a * b) + c", "a * b + c");
  expr_is("a - (b - c)", "a - (b - c)");
  expr_is("(a - b) - c", "a - b - c");
  expr_is("a / (b * c)", "a / (b * c)");
  expr_is("(a / b) * c", "a / b * c");
  expr_is("a % (b % c)", "a % (b % c)");
  expr_is("-(a + b)", "-(a + b)");
  expr_is("(-a) * b", "-a * b");
  expr_is("a * (-b)", "a * -b");
  expr_is("not (a and b)", "not (a and b)");
  expr_is("(not a) and b", "not a and b");
  expr_is("a and (not b)", "a and not b");
  expr_is("not (a < b)", "not a < b");
  expr_is("(not a) < b", "(not a) < b");
  expr_is("(a or b) and c", "(a or b) and c");
  expr_is("a or (b and c)", "a or b and c");
  expr_is("(a and b) or c", "a and b or c");
  expr_is("(a < b) == c", "(a < b) == c");
  expr_is("a == (b < c)", "a == (b < c)");
  expr_is("(a + b) < (c * d)", "a + b < c * d");
  expr_is("((((x))))", "x");
  expr_is("(a.b).c", "a.b.c");
  expr_is("(a + b).c", "(a + b).c");
  /* a number on the left of `.` keeps its parentheses: `2.81F` would read back as the
   * number 2.81 and a stray `F` (a fuzzer find) */
  expr_is("2 . 81F", "(2).81F");
  expr_is("(2).81F", "(2).81F");
  expr_is("2.5 .x", "(2.5).x");
  expr_is("2 GiB . x", "(2 GiB).x");
  expr_is("f((1 + 2), k = (3))", "f(1 + 2, k = 3)");
  expr_is("[(1), (a or b)]", "[1, a or b]");
  expr_is("(1 GB) * 2", "1 GB * 2");
  expr_is("-(2 GB)", "-2 GB");
  expr_is("a - -b", "a - -b");
  expr_is("-(-x)", NULL);
  expr_is("a == (not b)", "a == (not b)");
  expr_is("not (a + b)", "not a + b");
  expr_is("(not a) or b", "not a or b");
  expr_is("(1).x", NULL);
  expr_is("(1 GB).x", NULL);
  expr_is("(p { a = 1 }).x", NULL);
  expr_is("-(a).b", "-a.b");
  expr_is("min(a, (b - c)) * ceil((d))", "min(a, b - c) * ceil(d)");
}

TEST(one_line_nested_blocks_stay_one_line) {
  fmt_is("cluster c {\n  tier nv { span = node; bandwidth = 1 GB/s }\n}\n",
         "cluster c {\n  tier nv { span = node; bandwidth = 1 GB/s }\n}\n");
  fmt_is("cluster c {\n  tier nv {span=node;bandwidth=1GB/s}\n}\n",
         "cluster c {\n  tier nv { span = node; bandwidth = 1 GB/s }\n}\n");
  fmt_is("scenario s {\n  cluster = p {nodes=2}\n  measured {}\n}\n",
         "scenario s {\n  cluster = p { nodes = 2 }\n  measured {}\n}\n");
  /* written over several lines, a nested block stays so, re-indented */
  fmt_is("cluster c {\ntier nv {\nspan = node\n}\n}\n", "cluster c {\n  tier nv {\n    span = node\n  }\n}\n");
  fmt_is("scenario s {\n  plan = q {\n      tp = 2\n  }\n}\n", "scenario s {\n  plan = q {\n    tp = 2\n  }\n}\n");
  /* a one-line block holding a block is laid out over lines; the inner one stays one line */
  fmt_is("model m {\n  outer { inner { z = 1 } }\n}\n", "model m {\n  outer {\n    inner { z = 1 }\n  }\n}\n");
  /* an extension that must break (it holds a block) breaks every extension around it, or the
   * next formatting would (the fuzzer's input: a = c { d = e { f g { h = 1 } } }) */
  fmt_is("model n { x = a { b = c { f g { h = 1 } } } }\n",
         "model n {\n  x = a {\n    b = c {\n      f g { h = 1 }\n    }\n  }\n}\n");
  fmt_is("model n { x = [q(a { b = c { f g { h = 1 } } })] }\n",
         "model n {\n  x = [q(a {\n    b = c {\n      f g { h = 1 }\n    }\n  })]\n}\n");
}

TEST(semicolons_split_to_lines) {
  fmt_is("plan p { tp = 1; pp = 2; micro_batch = 4 }\n",
         "plan p {\n  tp          = 1\n  pp          = 2\n  micro_batch = 4\n}\n");
  fmt_is("block b { let t = 1; op s = add(t) }\n", "block b {\n  let t = 1\n  op s = add(t)\n}\n");
  fmt_is("sweep w { vary plan.tp in [1]; require a; minimize b; keep 1 }\n",
         "sweep w {\n  vary plan.tp in [1]\n  require a\n  minimize b\n  keep 1\n}\n");
  fmt_is("gpu a {}; gpu b {}\n", "gpu a {}\ngpu b {}\n");
}

/* The canonical layout ends lines with \n alone, comments included. */
TEST(crlf_input_gives_lf_output) {
  fmt_is("model m {\r\n  a = 1\r\n}\r\n", "model m {\n  a = 1\n}\n");
  char *got = fmt_str("# header\r\nmodel m { # brace\r\n  a = 1 # one\r\n  # own\r\n}\r\n");
  if (strchr(got, '\r')) fail_msg("a carriage return is left in\n%s", got);
  free(got);
  /* several carriage returns before a comment's line end go at once (fuzz_front: one a pass) */
  fmt_is("model m {\n  a = 1  # one\r\r\r\n}\n", "model m {\n  a = 1  # one\n}\n");
  fmt_is("# a\r\rb\r\r\nmodel m {}\n", "# a\r\rb\nmodel m {}\n");
}

TEST(declaration_headers_and_imports) {
  fmt_is("import   \"hw/gpus\"\nmodel   big   extends   base{}\n", "import \"hw/gpus\"\nmodel big extends base {}\n");
  fmt_is("model m {\n}\n", "model m {}\n");
  fmt_is("model m { a = f( 1 ,2, ) ; b = [ 1 , 2 , ] }\n", "model m {\n  a = f(1, 2)\n  b = [1, 2]\n}\n");
}

TEST(formatting_preserves_the_tree) {
  const char *src =
      "import \"x\"\n"
      "gpu g { memory = 80GiB; memory_bandwidth = 2039 GB/s; peak_fp16 = 312 TFLOP/s; vendor = nvidia }\n"
      "cluster c extends base {\n  gpu = g\n  tier nv { span = node; bandwidth = 300 GB/s; latency = 2 us }\n"
      "  tier ib {\n    span = 4\n    efficiency = 0.8\n  }\n}\n"
      "model m { ffn = 4 * hidden; heads = hidden / 128; norm = rmsnorm; bias = false; source = \"s \\\"q\\\"\" }\n"
      "block b {\n  let t = plan.micro_batch * model.seq / plan.cp\n"
      "  op qkv = linear(t, model.hidden, (model.heads + 2 * model.kv_heads) * model.head_dim, split = column)\n"
      "  op a = attention(plan.micro_batch, model.heads, model.seq, model.head_dim, causal = true)\n}\n"
      "scenario s { model = m { layers = 2 }; cluster = c; plan = p; measured { iteration = 1.5 s; mfu = 0.4 } }\n"
      "sweep w extends s {\n  vary plan.tp in [1, 2, 4]\n  let plan.dp = cluster.gpus / (plan.tp * plan.pp)\n"
      "  require model.layers % plan.pp == 0 and not (plan.tp > 8 or plan.pp < 1)\n"
      "  require memory.peak <= cluster.gpu.memory - 2 GiB\n  maximize -iteration\n  keep 5\n}\n";
  round_trip("all.llmp", src, strlen(src));
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(idempotent_and_tree_preserving_on_inputs),
      cmocka_unit_test(idempotent_and_tree_preserving_on_shipped_files),
      cmocka_unit_test(keeps_every_comment),
      cmocka_unit_test(comment_placement),
      cmocka_unit_test(trailing_comment_stays_with_its_statement),
      cmocka_unit_test(aligns_equals_in_field_runs),
      cmocka_unit_test(aligns_lets_ops_and_varys),
      cmocka_unit_test(breaks_runs_at_blank_lines_and_comments),
      cmocka_unit_test(joined_statement_is_idempotent),
      cmocka_unit_test(aligns_long_runs_as_one),
      cmocka_unit_test(collapses_blank_lines),
      cmocka_unit_test(keeps_number_spelling),
      cmocka_unit_test(string_escapes_kept),
      cmocka_unit_test(parenthesises_by_precedence),
      cmocka_unit_test(one_line_nested_blocks_stay_one_line),
      cmocka_unit_test(semicolons_split_to_lines),
      cmocka_unit_test(crlf_input_gives_lf_output),
      cmocka_unit_test(declaration_headers_and_imports),
      cmocka_unit_test(formatting_preserves_the_tree),
  };
  return RUN_TESTS(tests);
}
