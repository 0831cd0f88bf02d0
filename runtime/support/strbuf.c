/* strbuf.c - the growable text buffer, the bounded append, numbers as text. */
#include "strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void strbuf_vprintf(StrBuf *b, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n <= 0) return;
  XGROW(b->p, b->n + (size_t)n + 1, b->cap);
  vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
  b->n += (size_t)n;
}

void strbuf_printf(StrBuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  strbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

void strbuf_free(StrBuf *b) {
  free(b->p);
  *b = (StrBuf){0};
}

void str_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (n > 0) *len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

const char *str_shortest(char *buf, size_t n, double x) {
  char t[STR_NUM_MAX];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(t, sizeof t, "%.*g", prec, x);
    if (strtod(t, NULL) == x) break;
  }
  snprintf(buf, n, "%s", t);
  return buf;
}

const char *str_brief(char *buf, size_t n, double x) {
  snprintf(buf, n, x == floor(x) && fabs(x) < 0x1p53 ? "%.0f" : "%g", x);
  return buf;
}

const char *str_number(char *buf, size_t n, double x) {
  if (x > -0x1p53 && x < 0x1p53 && x == (double)(long long)x && !(x == 0 && signbit(x))) {
    snprintf(buf, n, "%lld", (long long)x);
    return buf;
  }
  return str_shortest(buf, n, x);
}
