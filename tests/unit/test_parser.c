/* test_parser.c - unit tests of the grammar (grammar/parser.y) and the AST constructors
 * (compiler/front/ast.c): the shape of the tree for every construct, operator precedence and
 * associativity, error recovery, and the limits on depth and size. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "support.h"
#include "support_front.h"

typedef ParsedText T;

static T *parse(const char *src) { return parse_text("t.llmp", src, strlen(src)); }

static AstNode *nth(AstList l, unsigned i) {
  AstNode *n = l.first;
  while (n && i--) n = n->next;
  if (!n) fail_msg("list has no element %u", i);
  return n;
}

/* --- a compact printing of expressions, to compare shapes ------------------------------ */

static void sexp(StrBuf *s, const AstNode *n);

static void sexp_list(StrBuf *s, AstList l) {
  for (const AstNode *c = l.first; c; c = c->next) {
    strbuf_printf(s, " ");
    sexp(s, c);
  }
}

static void sexp(StrBuf *s, const AstNode *n) {
  if (!n) {
    strbuf_printf(s, "NULL");
    return;
  }
  switch (n->kind) {
  case AST_NUM:
    strbuf_printf(s, "%.17g%s%s", n->u.num.value, n->u.num.unit ? " " : "", n->u.num.unit ? n->u.num.unit : "");
    break;
  case AST_STR: strbuf_printf(s, "\"%s\"", n->name); break;
  case AST_BOOL: strbuf_printf(s, "%s", n->u.boolean ? "true" : "false"); break;
  case AST_NAME: strbuf_printf(s, "%s", n->name); break;
  case AST_MEMBER:
    strbuf_printf(s, "(. ");
    sexp(s, n->u.bin.lhs);
    strbuf_printf(s, " %s)", n->name);
    break;
  case AST_BINOP:
    strbuf_printf(s, "(%s ", binop_text[n->u.bin.op]);
    sexp(s, n->u.bin.lhs);
    strbuf_printf(s, " ");
    sexp(s, n->u.bin.rhs);
    strbuf_printf(s, ")");
    break;
  case AST_UNOP:
    strbuf_printf(s, "(%s ", n->u.bin.op == OP_NEG ? "neg" : "not");
    sexp(s, n->u.bin.lhs);
    strbuf_printf(s, ")");
    break;
  case AST_CALL:
    strbuf_printf(s, "(call %s", n->name);
    sexp_list(s, n->u.list);
    strbuf_printf(s, ")");
    break;
  case AST_NAMEDARG:
    strbuf_printf(s, "(%s= ", n->name);
    sexp(s, n->u.bin.rhs);
    strbuf_printf(s, ")");
    break;
  case AST_LIST:
    strbuf_printf(s, "[");
    sexp_list(s, n->u.list);
    strbuf_printf(s, " ]");
    break;
  case AST_EXTEND:
    strbuf_printf(s, "(extend %s", n->name);
    sexp_list(s, n->u.list);
    strbuf_printf(s, ")");
    break;
  case AST_FIELD:
    strbuf_printf(s, "(field %s ", n->name);
    sexp(s, n->u.bin.rhs);
    strbuf_printf(s, ")");
    break;
  default: strbuf_printf(s, "<kind %d>", n->kind); break;
  }
}

/* Parses "model m { x = EXPR }" and returns EXPR printed, or "ERROR" on a syntax error. */
static char *shape(const char *expr) {
  char *src = malloc(strlen(expr) + 32);
  sprintf(src, "model m { x = %s }", expr);
  T *t = parse(src);
  free(src);
  StrBuf s = {0};
  if (t->d.errors)
    strbuf_printf(&s, "ERROR");
  else
    sexp(&s, t->root->u.list.first->u.decl.body.first->u.bin.rhs);
  done(t);
  return s.p;
}

static void shape_is(const char *expr, const char *want) {
  char *got = shape(expr);
  if (strcmp(got, want) != 0) fail_msg("`%s` parsed as\n  %s\nexpected\n  %s", expr, got, want);
  free(got);
}

/* --- declarations ------------------------------------------------------------------- */

TEST(decl_with_and_without_extends) {
  T *t = parse("model base {}\nmodel big extends base { layers = 2 }\nplan p {\n}\n");
  no_errors(t);
  assert_int_equal(t->root->kind, AST_FILE);
  assert_int_equal(t->root->u.list.count, 3);
  AstNode *a = nth(t->root->u.list, 0), *b = nth(t->root->u.list, 1), *c = nth(t->root->u.list, 2);
  assert_int_equal(a->kind, AST_DECL);
  assert_string_equal(a->u.decl.kind_word, "model");
  assert_int_equal(a->u.decl.kind, DK_MODEL);
  assert_string_equal(a->name, "base");
  assert_null(a->u.decl.parent);
  assert_int_equal(a->u.decl.body.count, 0);
  assert_ptr_equal(a->u.decl.file, t->f);
  assert_string_equal(b->name, "big");
  assert_string_equal(b->u.decl.parent, "base");
  assert_ptr_equal(b->u.decl.parent, a->name); /* interned */
  assert_int_equal(b->u.decl.body.count, 1);
  assert_int_equal(c->u.decl.kind, DK_PLAN);
  done(t);
}

TEST(decl_kind_words) {
  static const struct {
    const char *word;
    DeclKind kind;
  } kinds[] = {{"gpu", DK_GPU},   {"cluster", DK_CLUSTER},   {"block", DK_BLOCK}, {"model", DK_MODEL},
               {"plan", DK_PLAN}, {"scenario", DK_SCENARIO}, {"sweep", DK_SWEEP}, {"modle", DK_UNKNOWN}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    char src[64];
    snprintf(src, sizeof src, "%s x {}", kinds[i].word);
    T *t = parse(src);
    no_errors(t); /* the grammar knows no kind names: sema checks them */
    AstNode *d = t->root->u.list.first;
    assert_int_equal(d->u.decl.kind, kinds[i].kind);
    assert_string_equal(d->u.decl.kind_word, kinds[i].word);
    done(t);
    assert_int_equal(decl_kind_lookup(kinds[i].word), kinds[i].kind);
  }
}

TEST(imports) {
  T *t = parse("import \"stdlib/transformer\"\nimport \"a.llmp\"; model m {}\n");
  no_errors(t);
  assert_int_equal(t->root->u.list.count, 3);
  assert_int_equal(nth(t->root->u.list, 0)->kind, AST_IMPORT);
  assert_string_equal(nth(t->root->u.list, 0)->name, "stdlib/transformer");
  assert_string_equal(nth(t->root->u.list, 1)->name, "a.llmp");
  assert_int_equal(nth(t->root->u.list, 2)->kind, AST_DECL);
  done(t);
  t = parse("import stdlib\n");
  assert_true(t->d.errors >= 1);
  done(t);
}

TEST(nested_blocks_with_and_without_labels) {
  T *t = parse("cluster c {\n  gpu = g\n  tier nvlink { span = node; bandwidth = 300 GB/s }\n"
               "  tier ib {\n    span = system\n  }\n  measured {}\n  outer { inner { z = 1 } }\n}\n");
  no_errors(t);
  AstNode *d = t->root->u.list.first;
  assert_int_equal(d->u.decl.body.count, 5);
  AstNode *f = nth(d->u.decl.body, 0), *t1 = nth(d->u.decl.body, 1), *t2 = nth(d->u.decl.body, 2);
  AstNode *m = nth(d->u.decl.body, 3), *o = nth(d->u.decl.body, 4);
  assert_int_equal(f->kind, AST_FIELD);
  assert_int_equal(t1->kind, AST_SUBBLOCK);
  assert_string_equal(t1->name, "tier");
  assert_string_equal(t1->u.sub.label, "nvlink");
  assert_int_equal(t1->u.sub.body.count, 2);
  assert_string_equal(nth(t1->u.sub.body, 1)->name, "bandwidth");
  assert_string_equal(t2->u.sub.label, "ib");
  assert_int_equal(t2->u.sub.body.count, 1);
  assert_int_equal(m->kind, AST_SUBBLOCK);
  assert_string_equal(m->name, "measured");
  assert_null(m->u.sub.label);
  assert_int_equal(m->u.sub.body.count, 0);
  assert_int_equal(o->kind, AST_SUBBLOCK);
  AstNode *in = o->u.sub.body.first;
  assert_int_equal(in->kind, AST_SUBBLOCK);
  assert_string_equal(in->name, "inner");
  assert_string_equal(in->u.sub.body.first->name, "z");
  done(t);
}

TEST(inline_extension) {
  T *t = parse("scenario s {\n  cluster = perlmutter { nodes = 32; gpus_per_node = 4 }\n  plan = p {}\n}\n");
  no_errors(t);
  AstNode *d = t->root->u.list.first;
  AstNode *v = d->u.decl.body.first->u.bin.rhs;
  assert_int_equal(v->kind, AST_EXTEND);
  assert_string_equal(v->name, "perlmutter");
  assert_int_equal(v->u.list.count, 2);
  assert_int_equal(v->u.list.first->kind, AST_FIELD);
  assert_string_equal(v->u.list.first->name, "nodes");
  AstNode *e = d->u.decl.body.last->u.bin.rhs;
  assert_int_equal(e->kind, AST_EXTEND);
  assert_int_equal(e->u.list.count, 0);
  done(t);
  shape_is("a { b = 1 }", "(extend a (field b 1))");
  shape_is("[a { b = 1 }, c]", "[ (extend a (field b 1)) c ]");
}

TEST(block_statements_let_and_op) {
  T *t = parse("block b {\n  let t = 2 * x\n  op qkv = linear(t, model.hidden, 3, split = column, bias = true)\n}\n");
  no_errors(t);
  AstNode *d = t->root->u.list.first;
  AstNode *let = nth(d->u.decl.body, 0), *op = nth(d->u.decl.body, 1);
  assert_int_equal(let->kind, AST_LET);
  assert_int_equal(let->u.bin.lhs->kind, AST_NAME);
  assert_string_equal(let->u.bin.lhs->name, "t");
  StrBuf s = {0};
  sexp(&s, let->u.bin.rhs);
  assert_string_equal(s.p, "(* 2 x)");
  free(s.p);
  assert_int_equal(op->kind, AST_OP);
  assert_string_equal(op->name, "qkv");
  memset(&s, 0, sizeof s);
  sexp(&s, op->u.bin.rhs);
  assert_string_equal(s.p, "(call linear t (. model hidden) 3 (split= column) (bias= true))");
  free(s.p);
  done(t);
}

TEST(sweep_statements) {
  T *t = parse("sweep w extends s {\n  vary plan.tp in [1, 2, 4]\n  let plan.dp = cluster.gpus / plan.tp\n"
               "  require model.layers % plan.pp == 0\n  minimize iteration\n  maximize mfu\n  keep 20\n}\n");
  no_errors(t);
  AstNode *d = t->root->u.list.first;
  assert_int_equal(d->u.decl.kind, DK_SWEEP);
  assert_int_equal(d->u.decl.body.count, 6);
  static const AstKind kinds[] = {AST_VARY, AST_LET, AST_REQUIRE, AST_MINIMIZE, AST_MAXIMIZE, AST_KEEP};
  static const char *const lhs[] = {"(. plan tp)", "(. plan dp)", NULL, NULL, NULL, NULL};
  static const char *const rhs[] = {
      "[ 1 2 4 ]", "(/ (. cluster gpus) (. plan tp))", "(== (% (. model layers) (. plan pp)) 0)", "iteration", "mfu",
      "20"};
  for (unsigned i = 0; i < 6; i++) {
    AstNode *c = nth(d->u.decl.body, i);
    assert_int_equal(c->kind, kinds[i]);
    StrBuf s = {0};
    if (lhs[i]) {
      sexp(&s, c->u.bin.lhs);
      assert_string_equal(s.p, lhs[i]);
      free(s.p);
      memset(&s, 0, sizeof s);
    } else {
      assert_null(c->u.bin.lhs);
    }
    sexp(&s, c->u.bin.rhs);
    assert_string_equal(s.p, rhs[i]);
    free(s.p);
  }
  done(t);
}

TEST(calls_with_named_args) {
  shape_is("f()", "(call f)");
  shape_is("f(1)", "(call f 1)");
  shape_is("f(1, 2,)", "(call f 1 2)");
  shape_is("f(a = 1)", "(call f (a= 1))");
  shape_is("f(1, b = 2, 3)", "(call f 1 (b= 2) 3)");
  shape_is("f(g(x), y = h(1, 2))", "(call f (call g x) (y= (call h 1 2)))");
  shape_is("f(a = 1 + 2)", "(call f (a= (+ 1 2)))");
  shape_is("f(,)", "ERROR");
  shape_is("f(1,,2)", "ERROR");
}

TEST(lists_with_trailing_comma) {
  shape_is("[]", "[ ]");
  shape_is("[1]", "[ 1 ]");
  shape_is("[1,]", "[ 1 ]");
  shape_is("[1, 2, 3,]", "[ 1 2 3 ]");
  shape_is("[tp, dp, pp]", "[ tp dp pp ]");
  shape_is("[[1, 2], [], [3]]", "[ [ 1 2 ] [ ] [ 3 ] ]");
  shape_is("[1 GB, 2 s]", "[ 1 GB 2 s ]");
  shape_is("[,]", "ERROR");
  shape_is("[1,,2]", "ERROR");
}

TEST(primaries) {
  shape_is("4096", "4096");
  shape_is("\"txt\"", "\"txt\"");
  shape_is("true", "true");
  shape_is("name", "name");
  shape_is("a.b.c", "(. (. a b) c)");
  shape_is("f(1).x", "(. (call f 1) x)");
  shape_is("(a + b).c", "(. (+ a b) c)");
  shape_is("(((1)))", "1");
}

TEST(operator_precedence) {
  shape_is("1 + 2 * 3", "(+ 1 (* 2 3))");
  shape_is("1 * 2 + 3", "(+ (* 1 2) 3)");
  shape_is("(1 + 2) * 3", "(* (+ 1 2) 3)");
  shape_is("a - b - c", "(- (- a b) c)");
  shape_is("a - (b - c)", "(- a (- b c))");
  shape_is("a / b / c", "(/ (/ a b) c)");
  shape_is("a % b * c", "(* (% a b) c)");
  shape_is("a + b % c", "(+ a (% b c))");
  shape_is("not a and b", "(and (not a) b)");
  shape_is("not (a and b)", "(not (and a b))");
  shape_is("a and not b", "(and a (not b))");
  shape_is("not a == b", "(not (== a b))");
  shape_is("not not a", "(not (not a))");
  shape_is("-x * y", "(* (neg x) y)");
  shape_is("-(x * y)", "(neg (* x y))");
  shape_is("- -x", "(neg (neg x))");
  shape_is("-a.b", "(neg (. a b))");
  shape_is("a * -b", "(* a (neg b))");
  shape_is("a or b and c", "(or a (and b c))");
  shape_is("a and b or c", "(or (and a b) c)");
  shape_is("a or b or c", "(or (or a b) c)");
  shape_is("a and b and c", "(and (and a b) c)");
  shape_is("a + b < c * d", "(< (+ a b) (* c d))");
  shape_is("a < b and c >= d", "(and (< a b) (>= c d))");
  shape_is("a == b or a != c", "(or (== a b) (!= a c))");
  shape_is("-1 GB + 2 GB", "(+ (neg 1 GB) 2 GB)");
}

TEST(comparisons_do_not_chain) {
  shape_is("a < b < c", "ERROR");
  shape_is("a == b == c", "ERROR");
  shape_is("a < b == c", "ERROR");
  shape_is("(a < b) == c", "(== (< a b) c)");
}

TEST(separators) {
  T *t = parse(";\nmodel m {\n\n  a = 1; b = 2;;\n  c = 3;\n\n}\n;;\nplan p { x = 1 }");
  no_errors(t);
  assert_int_equal(t->root->u.list.count, 2);
  assert_int_equal(t->root->u.list.first->u.decl.body.count, 3);
  done(t);
}

/* --- errors ------------------------------------------------------------------------ */

TEST(syntax_error_recovery_reports_several) {
  T *t = parse("model m {\n  a = 1\n  x =\n  y = = 2\n  z = 3\n}\nplan p {\n  q = 1\n  )\n  w = 1\n}\n"
               "gpu g { a = 1 }\n");
  if (t->d.errors != 3) fail_msg("expected 3 errors, got %d:\n%s", t->d.errors, out(t));
  assert_contains(out(t), "t.llmp:3:6: error:");
  assert_contains(out(t), "t.llmp:4:7: error:");
  assert_contains(out(t), "t.llmp:9:3: error:");
  /* the declarations and the statements after each error survive (the tree of a file with
   * errors is partial: statements before an error in the same body may be dropped) */
  assert_non_null(t->root);
  assert_int_equal(t->root->u.list.count, 3);
  AstNode *m = nth(t->root->u.list, 0), *p = nth(t->root->u.list, 1), *g = nth(t->root->u.list, 2);
  assert_string_equal(m->name, "m");
  assert_string_equal(m->u.decl.body.last->name, "z");
  assert_string_equal(p->name, "p");
  assert_string_equal(p->u.decl.body.last->name, "w");
  assert_string_equal(g->name, "g");
  done(t);
}

/* "Error recovery resumes at the next statement": also when the bad statement is the first
 * of its body, so the errors after it are reported and the declaration is kept. */
TEST(syntax_error_first_in_body_recovers_at_next_statement) {
  T *t = parse("plan p {\n  )\n  w = = 1\n  v = 2 +\n  u = 3\n}\ngpu g { a = 1 }\n");
  if (t->d.errors != 3) fail_msg("expected 3 errors, got %d:\n%s", t->d.errors, out(t));
  assert_contains(out(t), "t.llmp:2:3: error:");
  assert_contains(out(t), "t.llmp:3:7: error:");
  assert_contains(out(t), "t.llmp:4:10: error:");
  assert_int_equal(t->root->u.list.count, 2);
  AstNode *p = nth(t->root->u.list, 0);
  assert_string_equal(p->name, "p");
  assert_string_equal(p->u.decl.body.last->name, "u");
  done(t);
}

TEST(syntax_errors_at_top_level) {
  T *t = parse("x = 1\nmodel m { a = 1 }\n");
  assert_true(t->d.errors >= 1);
  assert_contains(out(t), "t.llmp:1:");
  done(t);
  t = parse("model m { a = 1\n"); /* missing brace */
  assert_true(t->d.errors >= 1);
  assert_non_null(t->root);
  done(t);
  t = parse("model {}\n"); /* missing name */
  assert_true(t->d.errors >= 1);
  done(t);
  t = parse("model m extends {}\n");
  assert_true(t->d.errors >= 1);
  done(t);
  t = parse("}}}}\n");
  assert_true(t->d.errors >= 1);
  done(t);
}

static char *nested(const char *open, const char *leaf, const char *close, int depth) {
  size_t lo = strlen(open), ll = strlen(leaf), lc = strlen(close);
  char *s = malloc(32 + depth * (lo + lc) + ll);
  size_t k = (size_t)sprintf(s, "model m { x = ");
  for (int i = 0; i < depth; i++, k += lo) memcpy(s + k, open, lo);
  memcpy(s + k, leaf, ll);
  k += ll;
  for (int i = 0; i < depth; i++, k += lc) memcpy(s + k, close, lc);
  strcpy(s + k, " }\n");
  return s;
}

TEST(deep_nested_expression_gives_depth_error) {
  static const char *const brackets[][2] = {{"1 + (", ")"}, {"-(", ")"}, {"[", "]"}, {"f(", ")"}};
  for (size_t i = 0; i < sizeof brackets / sizeof brackets[0]; i++) {
    char *src = nested(brackets[i][0], "1", brackets[i][1], 600);
    T *t = parse(src);
    assert_int_equal(t->d.errors, 1);
    assert_contains(out(t), "expression or block nested more than 512 levels deep");
    done(t);
    free(src);
  }
  /* just under the limit is fine */
  char *src = nested("1 + (", "1", ")", 200);
  T *t = parse(src);
  no_errors(t);
  done(t);
  free(src);
}

TEST(deep_parentheses_do_not_crash) {
  /* Parentheses add no node: 300 of them around a number are a tree of depth one. */
  char *src = nested("(", "1", ")", 300);
  T *t = parse(src);
  assert_non_null(t->root);
  if (t->d.errors == 0) {
    AstNode *v = t->root->u.list.first->u.decl.body.first->u.bin.rhs;
    assert_int_equal(v->kind, AST_NUM);
  } else {
    assert_contains(out(t), "nested");
  }
  done(t);
  free(src);
  /* Far more than the parser's stack holds: an error, not a crash. */
  src = nested("(", "1", ")", 20000);
  t = parse(src);
  assert_true(t->d.errors >= 1);
  assert_contains(out(t), "nested too deeply");
  assert_non_null(t->root);
  done(t);
  free(src);
}

TEST(deep_nested_blocks_give_depth_error) {
  int depth = 600;
  char *s = malloc((size_t)depth * 8 + 64);
  size_t k = (size_t)sprintf(s, "model m { ");
  for (int i = 0; i < depth; i++) k += (size_t)sprintf(s + k, "b { ");
  k += (size_t)sprintf(s + k, "x = 1 ");
  for (int i = 0; i < depth; i++) k += (size_t)sprintf(s + k, "} ");
  sprintf(s + k, "}\n");
  T *t = parse(s);
  assert_int_equal(t->d.errors, 1);
  assert_contains(out(t), "nested more than 512 levels deep");
  done(t);
  free(s);
}

TEST(long_left_deep_chain_gives_depth_error) {
  enum { N = 200000 };
  char *s = malloc((size_t)N * 4 + 64);
  size_t k = (size_t)sprintf(s, "model m { x = 1");
  for (int i = 0; i < N; i++, k += 4) memcpy(s + k, " + 1", 4);
  strcpy(s + k, " }\n");
  T *t = parse(s);
  assert_int_equal(t->d.errors, 1);
  assert_contains(out(t), "expression or block nested more than 512 levels deep");
  assert_non_null(t->root);
  done(t);
  free(s);
}

TEST(long_unary_chain_does_not_crash) {
  enum { N = 200000 };
  char *s = malloc((size_t)N * 2 + 64);
  size_t k = (size_t)sprintf(s, "model m { x = ");
  for (int i = 0; i < N; i++, k += 2) memcpy(s + k, "- ", 2);
  strcpy(s + k, "1 }\n");
  T *t = parse(s);
  assert_true(t->d.errors >= 1);
  assert_contains(out(t), "nested");
  done(t);
  free(s);
}

TEST(hundred_thousand_declarations) {
  enum { N = 100000 };
  char *s = malloc((size_t)N * 32 + 16);
  size_t k = 0;
  for (int i = 0; i < N; i++) k += (size_t)sprintf(s + k, "gpu g%d { sms = %d }\n", i, i);
  T *t = parse(s);
  no_errors(t);
  assert_int_equal(t->root->u.list.count, N);
  AstNode *last = t->root->u.list.last;
  assert_string_equal(last->name, "g99999");
  assert_int_equal(last->u.decl.body.first->u.bin.rhs->u.num.value, N - 1);
  unsigned i = 0;
  for (AstNode *d = t->root->u.list.first; d; d = d->next, i++) assert_int_equal(d->kind, AST_DECL);
  assert_int_equal(i, N);
  done(t);
  free(s);
}

TEST(long_bodies_and_lists) {
  enum { N = 100000 };
  char *s = malloc((size_t)N * 24 + 64);
  size_t k = (size_t)sprintf(s, "model m {\n");
  for (int i = 0; i < N; i++) k += (size_t)sprintf(s + k, "  f%d = %d\n", i, i);
  k += (size_t)sprintf(s + k, "  l = [");
  for (int i = 0; i < N; i++) k += (size_t)sprintf(s + k, "%d,", i % 10);
  sprintf(s + k, "]\n}\n");
  T *t = parse(s);
  no_errors(t);
  AstNode *d = t->root->u.list.first;
  assert_int_equal(d->u.decl.body.count, N + 1);
  assert_int_equal(d->u.decl.body.last->u.bin.rhs->u.list.count, N);
  done(t);
  free(s);
}

TEST(binop_text_matches_ops) {
  assert_string_equal(binop_text[OP_ADD], "+");
  assert_string_equal(binop_text[OP_MOD], "%");
  assert_string_equal(binop_text[OP_LE], "<=");
  assert_string_equal(binop_text[OP_AND], "and");
  assert_string_equal(binop_text[OP_OR], "or");
  assert_string_equal(binop_text[OP_NOT], "not");
  assert_string_equal(decl_kind_names[DK_SWEEP], "sweep");
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decl_with_and_without_extends),
      cmocka_unit_test(decl_kind_words),
      cmocka_unit_test(imports),
      cmocka_unit_test(nested_blocks_with_and_without_labels),
      cmocka_unit_test(inline_extension),
      cmocka_unit_test(block_statements_let_and_op),
      cmocka_unit_test(sweep_statements),
      cmocka_unit_test(calls_with_named_args),
      cmocka_unit_test(lists_with_trailing_comma),
      cmocka_unit_test(primaries),
      cmocka_unit_test(operator_precedence),
      cmocka_unit_test(comparisons_do_not_chain),
      cmocka_unit_test(separators),
      cmocka_unit_test(syntax_error_recovery_reports_several),
      cmocka_unit_test(syntax_error_first_in_body_recovers_at_next_statement),
      cmocka_unit_test(syntax_errors_at_top_level),
      cmocka_unit_test(deep_nested_expression_gives_depth_error),
      cmocka_unit_test(deep_parentheses_do_not_crash),
      cmocka_unit_test(deep_nested_blocks_give_depth_error),
      cmocka_unit_test(long_left_deep_chain_gives_depth_error),
      cmocka_unit_test(long_unary_chain_does_not_crash),
      cmocka_unit_test(hundred_thousand_declarations),
      cmocka_unit_test(long_bodies_and_lists),
      cmocka_unit_test(binop_text_matches_ops),
  };
  return RUN_TESTS(tests);
}
