/* alloc.c - allocation that exits on failure, and array growth. */
#include "alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first thread to fail says so and ends the process; the others wait for it.  _Exit: no
 * atexit handlers or static destructors (LLVM's) run under threads still at work. */
_Noreturn void alloc_fail(const char *what) {
  static atomic_flag failing = ATOMIC_FLAG_INIT;
  if (atomic_flag_test_and_set(&failing))
    for (;;) pause();
  fflush(stdout); /* what was printed before stays */
  fprintf(stderr, "llmp: out of memory (%s)\n", what);
  _Exit(1);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) alloc_fail("malloc");
  return p;
}

void *xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) alloc_fail("calloc");
  return p;
}

void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) alloc_fail("realloc");
  return q;
}

char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(xmalloc(n), s, n);
}

/* grow_cap()'s doubling; 0 if the bytes would overflow size_t. */
static size_t next_cap(size_t cap, size_t need, size_t elem) {
  size_t c = cap < 8 ? 8 : cap;
  while (c < need) {
    if (c > SIZE_MAX / 2) return 0;
    c *= 2;
  }
  return elem && c > SIZE_MAX / elem ? 0 : c;
}

size_t grow_cap(size_t cap, size_t need, size_t elem) {
  size_t c = next_cap(cap, need, elem);
  if (!c) alloc_fail("size overflow");
  return c;
}

bool mem_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t c = next_cap(*cap, need, elem);
  if (!c) return false;
  void *q = realloc(*p, c * elem);
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}
