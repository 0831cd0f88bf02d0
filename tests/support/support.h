/* support.h - what every unit-test program shares: the TEST() signature, a diagnostic
 * writer that captures into a growable buffer, and the main() that runs one named test
 * (for CTest) or all of them.  Include after cmocka.h. */
#ifndef LLMP_TEST_SUPPORT_H
#define LLMP_TEST_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST(name) static void name(void **state __attribute__((unused)))

typedef struct Cap {
  char *p;
  size_t n, cap;
  int calls;            /* writes received: one per diagnostic */
} Cap;

/* A DiagWriteFn: appends to the Cap, NUL-terminated. */
static inline void cap_write(void *user, const char *text, size_t len) {
  Cap *c = user;
  c->calls++;
  if (c->n + len + 1 > c->cap) {
    c->cap = (c->n + len + 1) * 2;
    c->p = realloc(c->p, c->cap);
    assert_non_null(c->p);
  }
  memcpy(c->p + c->n, text, len);
  c->n += len;
  c->p[c->n] = '\0';
}

/* Runs argv[1] alone, or every test.  A name that matches no test is an error (cmocka's
 * filter would run nothing and pass). */
static inline int llmp_run_tests(int argc, char **argv, const struct CMUnitTest *tests, size_t n,
                                 CMFixtureFunction teardown) {
  if (argc > 2) {
    fprintf(stderr, "usage: %s [TEST]\n", argv[0]);
    return 2;
  }
  if (argc > 1) {
    size_t i = 0;
    while (i < n && strcmp(tests[i].name, argv[1]) != 0) i++;
    if (i == n) {
      fprintf(stderr, "%s: no test named `%s`\n", argv[0], argv[1]);
      return 2;
    }
    cmocka_set_test_filter(argv[1]);
  }
  return _cmocka_run_group_tests("tests", tests, n, NULL, teardown);
}

#define RUN_TESTS(tests) llmp_run_tests(argc, argv, tests, sizeof tests / sizeof tests[0], NULL)

#endif
