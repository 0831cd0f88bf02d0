/* alloc.h - the one allocation helper.  The x* functions exit with a message when memory
 * runs out (the compiler has no way on without it); mem_grow() reports failure instead, for
 * the runtime's loaders, which return errors. */
#ifndef LLMP_ALLOC_H
#define LLMP_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* The capacity to grow an array of cap elements to so that it holds need: doubled, at least
 * 8.  Fails (alloc_fail) if the bytes would overflow size_t. */
size_t grow_cap(size_t cap, size_t need, size_t elem);

/* Makes the array p (cap elements, any integer type) hold at least need, doubling. */
#define XGROW(p, need, cap) \
  do { \
    if ((size_t)(need) > (size_t)(cap)) { \
      size_t grow_c_ = grow_cap((size_t)(cap), (size_t)(need), sizeof *(p)); \
      (p) = xrealloc((p), grow_c_ * sizeof *(p)); \
      (cap) = grow_c_; \
      if ((size_t)(cap) != grow_c_) alloc_fail("capacity"); \
    } \
  } while (0)

/* As XGROW, without failing: false (p and cap untouched) when memory runs out. */
bool mem_grow(void **p, size_t *cap, size_t need, size_t elem);

/* Prints "llmp: out of memory (what)" on standard error and exits with status 1 (once, from
 * whichever thread fails first). */
_Noreturn void alloc_fail(const char *what);

#endif
