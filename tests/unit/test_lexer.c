/* test_lexer.c - unit tests of the scanner (grammar/lexer.l), through parse_file() on small
 * in-memory sources: numbers, units, words, strings, comments, newlines inside brackets,
 * keywords, bad characters, and the byte spans of what it produces. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "support_front.h"

typedef ParsedText T;

static T *parse_n(const char *src, size_t n) { return parse_text("t.llmp", src, n); }

static T *parse(const char *src) { return parse_n(src, strlen(src)); }

static void span_is(Span s, unsigned start, unsigned end) {
  if (s.start != start || s.end != end) fail_msg("span [%u, %u), expected [%u, %u)", s.start, s.end, start, end);
}

/* The source "model m { x = EXPR }": EXPR starts at byte 14. */
enum { X = 14 };

static T *value_of(const char *expr, AstNode **v) {
  char *src = malloc(strlen(expr) + 32);
  sprintf(src, "model m { x = %s }", expr);
  T *t = parse(src);
  free(src);
  assert_non_null(t->root);
  AstNode *d = t->root->u.list.first;
  *v = NULL;
  if (d && d->kind == AST_DECL && d->u.decl.body.first && d->u.decl.body.first->kind == AST_FIELD)
    *v = d->u.decl.body.first->u.bin.rhs;
  return t;
}

/* A value that must scan and parse cleanly. */
static AstNode *clean_value(T **tp, const char *expr) {
  AstNode *v;
  *tp = value_of(expr, &v);
  no_errors(*tp);
  assert_non_null(v);
  return v;
}

/* --- numbers ------------------------------------------------------------------------ */

static void number_is(const char *text, double value, bool is_int) {
  T *t;
  AstNode *v = clean_value(&t, text);
  assert_int_equal(v->kind, AST_NUM);
  if (v->u.num.value != value) fail_msg("`%s`: value %.17g, expected %.17g", text, v->u.num.value, value);
  if (v->u.num.is_int != is_int) fail_msg("`%s`: is_int %d, expected %d", text, v->u.num.is_int, is_int);
  assert_null(v->u.num.unit);
  span_is(v->span, X, X + (unsigned)strlen(text));
  span_is(v->u.num.num_span, X, X + (unsigned)strlen(text));
  done(t);
}

TEST(numbers_value_and_is_int) {
  number_is("4096", 4096, true);
  number_is("0", 0, true);
  number_is("1_000_000", 1000000, true);
  number_is("1_0", 10, true);
  number_is("1.26e9", 1.26e9, false);
  number_is("0.25", 0.25, false);
  number_is("1e3", 1000, false);
  number_is("2E-3", 0.002, false);
  number_is("1.5e+2", 150, false);
  number_is("9007199254740993", 9007199254740992.0, true); /* parsed as a double */
}

/* A numeral longer than the scanner's work buffer is still the number it spells: a long
 * fraction is not infinite, and digit separators do not count against the length. */
TEST(long_number_literals) {
  char text[300];
  strcpy(text, "0.");
  memset(text + 2, '1', 200);
  text[202] = '\0';
  number_is(text, strtod(text, NULL), false);
  strcpy(text, "1");
  for (int i = 0; i < 40; i++) strcat(text, "_000"); /* 1e120, written in 161 characters */
  AstNode *v;
  T *t = value_of(text, &v);
  no_errors(t);
  assert_int_equal(v->kind, AST_NUM);
  if (v->u.num.value != 1e120) fail_msg("`1_000_..._000` (40 groups) has value %.17g, expected 1e120", v->u.num.value);
  done(t);
}

/* --- numbers with units --------------------------------------------------------------- */

static void unit_is(const char *text, double value, const char *unit, unsigned num_len, unsigned unit_off,
                    unsigned unit_len) {
  T *t;
  AstNode *v = clean_value(&t, text);
  if (v->kind != AST_NUM)
    fail_msg("`%s` scanned as %s `%s`, not as a number with a unit", text, v->kind == AST_NAME ? "the name" : "a node",
             v->kind == AST_NAME ? v->name : "");
  if (v->u.num.value != value) fail_msg("`%s`: value %.17g, expected %.17g", text, v->u.num.value, value);
  if (!v->u.num.unit) fail_msg("`%s`: no unit, expected `%s`", text, unit);
  assert_string_equal(v->u.num.unit, unit);
  assert_ptr_equal(v->u.num.unit, intern_cstr(&t->x.in, unit)); /* interned */
  span_is(v->u.num.num_span, X, X + num_len);
  span_is(v->u.num.unit_span, X + unit_off, X + unit_off + unit_len);
  span_is(v->span, X, X + unit_off + unit_len);
  done(t);
}

TEST(number_with_unit_and_space) {
  unit_is("80 GiB", 80, "GiB", 2, 3, 3);
  unit_is("2039 GB/s", 2039, "GB/s", 4, 5, 4);
  unit_is("25 Gb/s", 25, "Gb/s", 2, 3, 4);
  unit_is("17.370 s", 17.37, "s", 6, 7, 1);
  unit_is("312 TFLOP/s", 312, "TFLOP/s", 3, 4, 7);
  unit_is("80\tGiB", 80, "GiB", 2, 3, 3);
  unit_is("80   GiB", 80, "GiB", 2, 5, 3);
  unit_is("1.26e9 B", 1.26e9, "B", 6, 7, 1);
}

TEST(number_with_unit_without_space) {
  unit_is("80GiB", 80, "GiB", 2, 2, 3);
  unit_is("2.5us", 2.5, "us", 3, 3, 2);
  unit_is("2us", 2, "us", 1, 1, 2);
  unit_is("2039GB/s", 2039, "GB/s", 4, 4, 4);
  unit_is("1_000GB", 1000, "GB", 5, 5, 2);
  unit_is("1b", 1, "b", 1, 1, 1); /* one bit */
  unit_is("10ms", 10, "ms", 2, 2, 2);
}

/* `1.26e9 B` works with a space; written together, a number with an exponent and a unit
 * must scan the same way: the docs allow a unit after any number, with or without a space. */
TEST(exponent_number_with_unit_without_space) {
  unit_is("4e9FLOP", 4e9, "FLOP", 3, 3, 4);
  unit_is("2e3us", 2e3, "us", 3, 3, 2);
  unit_is("1e9B/s", 1e9, "B/s", 3, 3, 3);
}

TEST(unit_then_division) {
  T *t;
  AstNode *v = clean_value(&t, "3 GB / 2 s");
  assert_int_equal(v->kind, AST_BINOP);
  assert_int_equal(v->u.bin.op, OP_DIV);
  assert_string_equal(v->u.bin.lhs->u.num.unit, "GB");
  assert_string_equal(v->u.bin.rhs->u.num.unit, "s");
  done(t);
  /* "/" followed by something other than `s` is a division, not part of the unit */
  v = clean_value(&t, "4 GB/step");
  assert_int_equal(v->kind, AST_BINOP);
  assert_int_equal(v->u.bin.op, OP_DIV);
  assert_string_equal(v->u.bin.lhs->u.num.unit, "GB");
  assert_int_equal(v->u.bin.rhs->kind, AST_NAME);
  assert_string_equal(v->u.bin.rhs->name, "step");
  done(t);
}

TEST(number_then_non_unit_word_is_not_a_unit) {
  T *t;
  /* a keyword after a number is the keyword, not a unit */
  AstNode *v = clean_value(&t, "1 < 2 and 3 > 2");
  assert_int_equal(v->kind, AST_BINOP);
  assert_int_equal(v->u.bin.op, OP_AND);
  assert_null(v->u.bin.lhs->u.bin.rhs->u.num.unit);
  done(t);
  t = parse("sweep w { vary plan.tp in [1, 2]\n keep 20 }");
  no_errors(t);
  done(t);
  v = clean_value(&t, "[1, 2]");
  assert_int_equal(v->kind, AST_LIST);
  assert_null(v->u.list.first->u.num.unit);
  done(t);
}

/* --- words ---------------------------------------------------------------------------- */

TEST(unit_word_not_after_number_is_a_name) {
  static const char *const words[] = {"GB", "s", "b", "GiB", "ms", "FLOP"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    T *t;
    AstNode *v = clean_value(&t, words[i]);
    assert_int_equal(v->kind, AST_NAME);
    assert_string_equal(v->name, words[i]);
    span_is(v->span, X, X + (unsigned)strlen(words[i]));
    done(t);
  }
  T *t;
  AstNode *v = clean_value(&t, "2 * s");
  assert_int_equal(v->kind, AST_BINOP);
  assert_int_equal(v->u.bin.op, OP_MUL);
  assert_null(v->u.bin.lhs->u.num.unit);
  assert_int_equal(v->u.bin.rhs->kind, AST_NAME);
  assert_string_equal(v->u.bin.rhs->name, "s");
  done(t);
  /* fields may be named like units */
  t = parse("model m { s = 1; b = 2; GB = 3 }");
  no_errors(t);
  AstNode *f = t->root->u.list.first->u.decl.body.first;
  assert_string_equal(f->name, "s");
  assert_string_equal(f->next->name, "b");
  assert_string_equal(f->next->next->name, "GB");
  done(t);
}

TEST(digit_words_are_words) {
  static const char *const words[] = {"1f1b", "2d", "3m", "1x2", "8_way"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    T *t;
    AstNode *v = clean_value(&t, words[i]);
    if (v->kind != AST_NAME) fail_msg("`%s` scanned as kind %d, not a name", words[i], v->kind);
    assert_string_equal(v->name, words[i]);
    span_is(v->span, X, X + (unsigned)strlen(words[i]));
    done(t);
  }
}

TEST(identifiers) {
  T *t;
  AstNode *v = clean_value(&t, "_a_1");
  assert_int_equal(v->kind, AST_NAME);
  assert_string_equal(v->name, "_a_1");
  done(t);
  /* names are interned: the same word gives the same pointer */
  t = parse("model m { a = hidden; b = hidden }");
  no_errors(t);
  AstNode *f = t->root->u.list.first->u.decl.body.first;
  assert_ptr_equal(f->u.bin.rhs->name, f->next->u.bin.rhs->name);
  done(t);
}

/* --- strings ---------------------------------------------------------------------- */

TEST(strings_with_escapes) {
  T *t;
  AstNode *v = clean_value(&t, "\"a\\\"b\\\\c\\nd\\te\"");
  assert_int_equal(v->kind, AST_STR);
  assert_string_equal(v->name, "a\"b\\c\nd\te");
  span_is(v->span, X, X + 15);
  done(t);
  v = clean_value(&t, "\"\"");
  assert_int_equal(v->kind, AST_STR);
  assert_string_equal(v->name, "");
  span_is(v->span, X, X + 2);
  done(t);
  /* `#` inside a string is not a comment */
  v = clean_value(&t, "\"a # b\"");
  assert_string_equal(v->name, "a # b");
  assert_int_equal(t->x.p.ncomments, 0);
  done(t);
  /* UTF-8 is kept as it is */
  v = clean_value(&t, "\"\xc3\xa9t\xc3\xa9\"");
  assert_string_equal(v->name, "\xc3\xa9t\xc3\xa9");
  done(t);
}

TEST(unknown_escape_is_an_error) {
  AstNode *v;
  T *t = value_of("\"ab\\qc\"", &v);
  assert_int_equal(t->d.errors, 1);
  /* the backslash is at byte X + 3 */
  assert_contains(out(t), "t.llmp:1:18: error: unknown escape `\\q` in string");
  done(t);
}

TEST(unterminated_string_error) {
  T *t = parse("model m {\n  x = \"abc\n  y = 1\n}\n");
  assert_int_equal(t->d.errors, 1);
  assert_contains(out(t), "t.llmp:2:7: error: unterminated string");
  /* the rest of the file still parses */
  AstNode *d = t->root->u.list.first;
  assert_non_null(d);
  assert_int_equal(d->u.decl.body.count, 2);
  assert_string_equal(d->u.decl.body.first->u.bin.rhs->name, "abc");
  done(t);
  /* ending in a backslash */
  t = parse("model m {\n  x = \"abc\\\n}\n");
  assert_int_equal(t->d.errors, 1);
  assert_contains(out(t), "unterminated string");
  done(t);
}

/* --- comments --------------------------------------------------------------------- */

TEST(comments_collected_with_spans) {
  const char *src = "# head\nmodel m { # in\n  x = 1 # tail\n}\n# end";
  T *t = parse(src);
  no_errors(t);
  assert_int_equal(t->x.p.ncomments, 4);
  const char *want[] = {"# head", "# in", "# tail", "# end"};
  for (int i = 0; i < 4; i++) {
    const char *at = strstr(src, want[i]);
    span_is(t->x.p.comments[i], (unsigned)(at - src), (unsigned)(at - src + strlen(want[i])));
  }
  done(t);
}

TEST(many_comments) {
  size_t n = 1000;
  char *src = malloc(n * 16 + 64);
  size_t k = (size_t)sprintf(src, "model m {\n");
  for (size_t i = 0; i < n; i++) k += (size_t)sprintf(src + k, "  # c%zu\n", i);
  sprintf(src + k, "}\n");
  T *t = parse(src);
  no_errors(t);
  assert_int_equal(t->x.p.ncomments, n);
  for (size_t i = 1; i < n; i++) assert_true(t->x.p.comments[i].start > t->x.p.comments[i - 1].end);
  free(src);
  done(t);
}

TEST(comment_before_crlf) {
  T *t = parse("# a\r\nmodel m {}\r\n");
  no_errors(t);
  assert_int_equal(t->x.p.ncomments, 1);
  /* the comment runs to the end of the line; a \r before the \n is part of it or not,
   * but the newline never is */
  assert_int_equal(t->x.p.comments[0].start, 0);
  assert_true(t->x.p.comments[0].end == 3 || t->x.p.comments[0].end == 4);
  done(t);
}

/* --- newlines ----------------------------------------------------------------------- */

TEST(newlines_inside_brackets_ignored) {
  T *t;
  AstNode *v = clean_value(&t, "[1,\n 2,\n\n 3\n]");
  assert_int_equal(v->kind, AST_LIST);
  assert_int_equal(v->u.list.count, 3);
  done(t);
  v = clean_value(&t, "max(1,\n  2\n)");
  assert_int_equal(v->kind, AST_CALL);
  assert_int_equal(v->u.list.count, 2);
  done(t);
  v = clean_value(&t, "(1 +\n 2)");
  assert_int_equal(v->kind, AST_BINOP);
  done(t);
  v = clean_value(&t, "[[1,\n 2], (3\n)]");
  assert_int_equal(v->u.list.count, 2);
  done(t);
}

TEST(newline_ends_statement_outside_brackets) {
  /* a newline after `+` outside brackets ends the statement: a syntax error */
  T *t = parse("model m {\n  x = 1 +\n  2\n}\n");
  assert_true(t->d.errors >= 1);
  done(t);
  t = parse("model m {\n  x = 1\n  y = 2\n}\n");
  no_errors(t);
  assert_int_equal(t->root->u.list.first->u.decl.body.count, 2);
  done(t);
}

/* An inline extension inside a list: its body uses newlines as separators, and after its
 * `}` the list goes on, where newlines are ignored again. */
TEST(newline_in_list_after_inline_extension) {
  T *t;
  AstNode *v = clean_value(&t, "[a { b = 1 },\n c]");
  assert_int_equal(v->kind, AST_LIST);
  assert_int_equal(v->u.list.count, 2);
  done(t);
  v = clean_value(&t, "f(a {\n  b = 1\n  c = 2\n},\n 3)");
  assert_int_equal(v->kind, AST_CALL);
  assert_int_equal(v->u.list.count, 2);
  assert_int_equal(v->u.list.first->u.list.count, 2);
  done(t);
}

TEST(crlf_line_endings) {
  T *t = parse("model m {\r\n  x = 1\r\n  y = 2 GB\r\n}\r\n");
  no_errors(t);
  AstNode *d = t->root->u.list.first;
  assert_int_equal(d->u.decl.body.count, 2);
  assert_string_equal(d->u.decl.body.last->u.bin.rhs->u.num.unit, "GB");
  done(t);
}

/* --- keywords ------------------------------------------------------------------------ */

TEST(keywords_are_not_names) {
  static const char *const kw[] = {"import",   "extends", "let",  "op",    "vary", "in", "require", "minimize",
                                   "maximize", "keep",    "true", "false", "and",  "or", "not"};
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
    char src[64];
    snprintf(src, sizeof src, "model m { %s = 1 }", kw[i]);
    T *t = parse(src);
    if (t->d.errors == 0) fail_msg("`%s` was accepted as a field name", kw[i]);
    done(t);
  }
}

TEST(words_containing_keywords_are_names) {
  T *t =
      parse("model m { inx = 1; lets = 2; import_path = 3; notes = 4; order = 5; android = 6; truest = 7; op2 = 8 }");
  no_errors(t);
  assert_int_equal(t->root->u.list.first->u.decl.body.count, 8);
  done(t);
}

TEST(booleans) {
  T *t;
  AstNode *v = clean_value(&t, "true");
  assert_int_equal(v->kind, AST_BOOL);
  assert_true(v->u.boolean);
  span_is(v->span, X, X + 4);
  done(t);
  v = clean_value(&t, "false");
  assert_int_equal(v->kind, AST_BOOL);
  assert_false(v->u.boolean);
  done(t);
}

TEST(operators_and_comparisons) {
  static const struct {
    const char *text;
    BinOp op;
  } ops[] = {{"a + b", OP_ADD}, {"a - b", OP_SUB},   {"a * b", OP_MUL}, {"a / b", OP_DIV}, {"a % b", OP_MOD},
             {"a == b", OP_EQ}, {"a != b", OP_NE},   {"a < b", OP_LT},  {"a <= b", OP_LE}, {"a > b", OP_GT},
             {"a >= b", OP_GE}, {"a and b", OP_AND}, {"a or b", OP_OR}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    T *t;
    AstNode *v = clean_value(&t, ops[i].text);
    assert_int_equal(v->kind, AST_BINOP);
    if (v->u.bin.op != ops[i].op) fail_msg("`%s`: op %d, expected %d", ops[i].text, v->u.bin.op, ops[i].op);
    span_is(v->span, X, X + (unsigned)strlen(ops[i].text));
    done(t);
  }
  /* no spaces needed */
  T *t;
  AstNode *v = clean_value(&t, "a<=b");
  assert_int_equal(v->u.bin.op, OP_LE);
  done(t);
}

/* --- bad input ---------------------------------------------------------------------- */

TEST(invalid_characters_one_error_per_run) {
  T *t = parse("model m { x = 1 @@@ }");
  assert_int_equal(t->d.errors, 1);
  assert_contains(out(t), "t.llmp:1:17: error: unexpected characters `@@@`\n");
  /* the bad characters are skipped: the field is there */
  assert_int_equal(t->root->u.list.first->u.decl.body.count, 1);
  done(t);
  /* two runs, two errors */
  t = parse("model m { x = 1 @ $ }");
  assert_int_equal(t->d.errors, 2);
  assert_contains(out(t), "t.llmp:1:17: error: unexpected character `@`\n");
  assert_contains(out(t), "t.llmp:1:19: error: unexpected character `$`\n");
  done(t);
  /* non-ASCII bytes are shown escaped, one error for the character */
  t = parse("model m { x = 1 \xc3\xa9 }");
  assert_int_equal(t->d.errors, 1);
  assert_contains(out(t), "unexpected characters `\\xc3\\xa9`");
  done(t);
  /* a long run is one error, its text shortened */
  char src[300];
  strcpy(src, "model m { x = 1 ");
  memset(src + strlen(src), '@', 200);
  strcpy(src + 16 + 200, " }");
  t = parse(src);
  assert_int_equal(t->d.errors, 1);
  assert_contains(out(t), "...");
  assert_true(strlen(out(t)) < 150);
  done(t);
}

TEST(bang_alone_suggests_not) {
  T *t = parse("model m { x = !a }");
  assert_true(t->d.errors >= 1);
  assert_contains(out(t), "t.llmp:1:15: error: unexpected `!`: write `not` for negation, `!=` for inequality");
  done(t);
  AstNode *v;
  t = value_of("a != b", &v);
  no_errors(t);
  assert_int_equal(v->u.bin.op, OP_NE);
  done(t);
}

TEST(nul_byte_rejects_file) {
  T *t = parse_n("model m {}\0x", 12);
  assert_null(t->root);
  assert_int_equal(t->d.errors, 1);
  assert_contains(out(t), "t.llmp: error: this is not a .llmp text file: it holds a NUL byte (at byte 10)");
  done(t);
}

TEST(empty_and_blank_files_parse) {
  static const char *const srcs[] = {"", "\n\n\n", "# only a comment\n", "   \t \n", ";;\n;"};
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
    T *t = parse(srcs[i]);
    no_errors(t);
    assert_non_null(t->root);
    assert_int_equal(t->root->kind, AST_FILE);
    assert_int_equal(t->root->u.list.count, 0);
    done(t);
  }
}

TEST(unexpected_end_after_number) {
  /* the scanner is in its after-a-number state at the end of the file */
  T *t = parse("model m { x = 1");
  assert_true(t->d.errors >= 1);
  assert_non_null(t->root);
  done(t);
  t = parse("model m { x = 1 GB");
  assert_true(t->d.errors >= 1);
  done(t);
}

/* --- spans --------------------------------------------------------------------------- */

TEST(spans_of_nodes) {
  /*                 0         1         2         3         4
   *                 0123456789012345678901234567890123456789012345 */
  const char *src = "model big extends base {\n  hidden = 4096\n}\n";
  T *t = parse(src);
  no_errors(t);
  AstNode *d = t->root->u.list.first;
  assert_int_equal(d->kind, AST_DECL);
  span_is(d->span, 0, 42);
  span_is(d->u.decl.kind_span, 0, 5);
  span_is(d->name_span, 6, 9);
  span_is(d->u.decl.parent_span, 18, 22);
  AstNode *f = d->u.decl.body.first;
  span_is(f->span, 27, 40);
  span_is(f->name_span, 27, 33);
  span_is(f->u.bin.rhs->span, 36, 40);
  done(t);

  t = parse("import \"hw/gpus\"\n");
  no_errors(t);
  AstNode *im = t->root->u.list.first;
  assert_int_equal(im->kind, AST_IMPORT);
  assert_string_equal(im->name, "hw/gpus");
  span_is(im->span, 0, 16);
  span_is(im->name_span, 7, 16);
  done(t);

  AstNode *v;
  t = value_of("a.b.c + f(1, k = 2)", &v);
  no_errors(t);
  span_is(v->span, X, X + 19);
  AstNode *m = v->u.bin.lhs; /* a.b.c */
  assert_int_equal(m->kind, AST_MEMBER);
  span_is(m->span, X, X + 5);
  span_is(m->name_span, X + 4, X + 5);
  span_is(m->u.bin.lhs->span, X, X + 3);
  AstNode *call = v->u.bin.rhs;
  span_is(call->span, X + 8, X + 19);
  span_is(call->name_span, X + 8, X + 9);
  AstNode *named = call->u.list.last;
  assert_int_equal(named->kind, AST_NAMEDARG);
  span_is(named->span, X + 13, X + 18);
  span_is(named->name_span, X + 13, X + 14);
  done(t);

  t = value_of("-x", &v);
  span_is(v->span, X, X + 2);
  done(t);
  t = value_of("not  x", &v);
  span_is(v->span, X, X + 6);
  done(t);
  t = value_of("[1, 2]", &v);
  span_is(v->span, X, X + 6);
  done(t);
  t = value_of("c { n = 1 }", &v);
  assert_int_equal(v->kind, AST_EXTEND);
  span_is(v->span, X, X + 11);
  span_is(v->name_span, X, X + 1);
  done(t);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(numbers_value_and_is_int),
      cmocka_unit_test(long_number_literals),
      cmocka_unit_test(number_with_unit_and_space),
      cmocka_unit_test(number_with_unit_without_space),
      cmocka_unit_test(exponent_number_with_unit_without_space),
      cmocka_unit_test(unit_then_division),
      cmocka_unit_test(number_then_non_unit_word_is_not_a_unit),
      cmocka_unit_test(unit_word_not_after_number_is_a_name),
      cmocka_unit_test(digit_words_are_words),
      cmocka_unit_test(identifiers),
      cmocka_unit_test(strings_with_escapes),
      cmocka_unit_test(unknown_escape_is_an_error),
      cmocka_unit_test(unterminated_string_error),
      cmocka_unit_test(comments_collected_with_spans),
      cmocka_unit_test(many_comments),
      cmocka_unit_test(comment_before_crlf),
      cmocka_unit_test(newlines_inside_brackets_ignored),
      cmocka_unit_test(newline_ends_statement_outside_brackets),
      cmocka_unit_test(newline_in_list_after_inline_extension),
      cmocka_unit_test(crlf_line_endings),
      cmocka_unit_test(keywords_are_not_names),
      cmocka_unit_test(words_containing_keywords_are_names),
      cmocka_unit_test(booleans),
      cmocka_unit_test(operators_and_comparisons),
      cmocka_unit_test(invalid_characters_one_error_per_run),
      cmocka_unit_test(bang_alone_suggests_not),
      cmocka_unit_test(nul_byte_rejects_file),
      cmocka_unit_test(empty_and_blank_files_parse),
      cmocka_unit_test(unexpected_end_after_number),
      cmocka_unit_test(spans_of_nodes),
  };
  return RUN_TESTS(tests);
}
