/* strbuf.h - text built a piece at a time: a growable, always NUL-terminated buffer that
 * exits when memory runs out (StrBuf); the bounded append into a fixed buffer that a header
 * line or a message is written with (str_appendf); numbers as text that reads back exactly
 * (str_shortest, str_number). */
#ifndef LLMP_STRBUF_H
#define LLMP_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

typedef struct StrBuf {
  char *p; /* NULL until the first write, then NUL-terminated */
  size_t n, cap;
} StrBuf;

/* Makes room for need bytes (the NUL included), twice what is needed.  Inline, with realloc
 * itself, as strbuf_put is: llmp fmt writes a few bytes at a time (docs/performance.md). */
static inline void strbuf_grow(StrBuf *b, size_t need) {
  if (need <= b->cap) return;
  if (need > SIZE_MAX / 2) alloc_fail("text size");
  b->cap = need * 2;
  b->p = realloc(b->p, b->cap);
  if (!b->p) alloc_fail("text");
}

static inline void strbuf_put(StrBuf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) strbuf_grow(b, b->n + n + 1);
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static inline void strbuf_puts(StrBuf *b, const char *s) { strbuf_put(b, s, strlen(s)); }
void strbuf_vprintf(StrBuf *b, const char *fmt, va_list ap);
void strbuf_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_free(StrBuf *b);

/* Numbers that read back (strtod) as the same double, for finite x: str_shortest() writes the
 * shortest of %.15g, %.16g and %.17g that does; str_number() writes an integer of magnitude
 * below 2^53 as its digits ("1048576", never "1.04858e+06"), any other x as str_shortest().
 * Both write into buf (32 bytes hold any of them) and return it. */
enum { STR_NUM_MAX = 32 };
const char *str_shortest(char *buf, size_t n, double x);
const char *str_number(char *buf, size_t n, double x);
/* A number for a message: a whole number below 2^53 in full, any other to 6 digits (%g). */
const char *str_brief(char *buf, size_t n, double x);

/* snprintf at buf + *len, *len advanced and kept below cap: a text too long is cut. */
void str_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
