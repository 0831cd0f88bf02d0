/* strbuf.h - text built a piece at a time: a growable, always NUL-terminated buffer that
 * aborts when memory runs out (StrBuf), and the bounded append into a fixed buffer that a
 * header line or a message is written with (str_appendf). */
#ifndef LLMP_STRBUF_H
#define LLMP_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct StrBuf {
  char *p; /* NULL until the first write, then NUL-terminated */
  size_t n, cap;
} StrBuf;

void strbuf_put(StrBuf *b, const char *s, size_t n);
void strbuf_puts(StrBuf *b, const char *s);
void strbuf_vprintf(StrBuf *b, const char *fmt, va_list ap);
void strbuf_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_free(StrBuf *b);

/* snprintf at buf + *len, *len advanced and kept below cap: a text too long is cut. */
void str_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
