/* jsonw.h - what report.c and trace.c write through (internal to report/): W, a FILE that
 * remembers its first error, so that a writer checks once at the end (w_finish); and J,
 * JSON objects and arrays written member by member over a W, with commas and nesting kept
 * for the caller.  Strings and numbers go through emit.h. */
#ifndef LLMP_JSONW_H
#define LLMP_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct W {
  FILE *f;
  int err; /* errno of the first failed write; 0 if none */
} W;

void w_fail(W *w);
void w_puts(W *w, const char *s);
void w_putc(W *w, char c);
void w_printf(W *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Flushes; returns 0, or -1 with errno set if anything failed. */
int w_finish(W *w);

/* `first` says whether the next member needs no comma; an element opened at nesting depth
 * `break_depth` starts a new line (0 for none). */
typedef struct J {
  W *w;
  bool first;
  int depth, break_depth;
} J;

/* Opens '{' or '[' as the member `key`, or as an array element if key is NULL. */
void j_open(J *j, const char *key, char bracket);
void j_close(J *j, char bracket);
/* The member's `"key":`; the caller writes its value.  A NULL key writes an array's element
 * (j_num, j_int, j_bool and j_str alike). */
void j_key(J *j, const char *key);
void j_num(J *j, const char *key, double x);
void j_int(J *j, const char *key, long long x);
void j_bool(J *j, const char *key, bool x);
void j_str(J *j, const char *key, const char *s);

#endif
