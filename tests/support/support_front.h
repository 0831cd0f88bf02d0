/* support_front.h - what the front end's tests (tests/unit/test_lexer.c, test_parser.c,
 * test_fmt.c) share: one in-memory text parsed on its own (parse_alone), its diagnostics
 * captured in the short format.  Include after support.h. */
#ifndef LLMP_TEST_SUPPORT_FRONT_H
#define LLMP_TEST_SUPPORT_FRONT_H

#include "front/parse.h"

typedef struct ParsedText {
  Diag d;
  Cap cap; /* the diagnostics */
  Parsed x;
  SrcFile *f;    /* the text, copied and NUL-terminated */
  AstNode *root; /* possibly partial after syntax errors */
} ParsedText;

static inline ParsedText *parse_text(const char *name, const char *src, size_t n) {
  ParsedText *t = calloc(1, sizeof *t);
  assert_non_null(t);
  diag_init(&t->d, NULL);
  diag_set_writer(&t->d, cap_write, &t->cap);
  t->d.format = DIAG_SHORT;
  t->f = diag_add_file(&t->d, name, src, n);
  parse_alone(&t->x, &t->d, t->f);
  t->root = t->x.root;
  return t;
}

static inline void done(ParsedText *t) {
  parsed_free(&t->x);
  diag_free(&t->d);
  free(t->cap.p);
  free(t);
}

/* The diagnostics so far, "" for none. */
static inline const char *out(ParsedText *t) { return cap_text(&t->cap); }

static inline void no_errors(ParsedText *t) {
  if (t->d.errors) fail_msg("unexpected errors in\n%s\n---\n%s", t->f->text, out(t));
}

#endif
