/* jsonw.c - W, a FILE that remembers its first error, and J, JSON written member by member
 * (jsonw.h). */
#include "jsonw.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "emit.h"

void w_fail(W *w) {
  if (!w->err) w->err = errno ? errno : EIO;
}

static void w_write(W *w, const char *s, size_t n) {
  if (n && fwrite(s, 1, n, w->f) != n) w_fail(w);
}

void w_puts(W *w, const char *s) { w_write(w, s, strlen(s)); }

void w_putc(W *w, char c) { w_write(w, &c, 1); }

void w_printf(W *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (vfprintf(w->f, fmt, ap) < 0) w_fail(w);
  va_end(ap);
}

/* A JSON string (NULL: null) and a JSON number (not finite: null). */
static void w_string(W *w, const char *s) {
  if (!s)
    w_puts(w, "null");
  else if (emit_json_string(w->f, s))
    w_fail(w);
}

static void w_number(W *w, double x) {
  if (emit_json_number(w->f, x)) w_fail(w);
}

int w_finish(W *w) {
  if (fflush(w->f) != 0) w_fail(w);
  if (ferror(w->f) && !w->err) w->err = EIO;
  if (w->err) {
    errno = w->err;
    return -1;
  }
  return 0;
}

static void j_sep(J *j) {
  if (!j->first) w_putc(j->w, ',');
  j->first = false;
}

void j_key(J *j, const char *key) {
  j_sep(j);
  if (!key) return; /* an array's element */
  w_string(j->w, key);
  w_putc(j->w, ':');
}

void j_open(J *j, const char *key, char bracket) {
  if (key) {
    j_key(j, key);
  } else {
    j_sep(j);
    if (j->depth && j->depth == j->break_depth) w_putc(j->w, '\n');
  }
  w_putc(j->w, bracket);
  j->first = true;
  j->depth++;
}

void j_close(J *j, char bracket) {
  w_putc(j->w, bracket);
  j->first = false;
  j->depth--;
}

void j_num(J *j, const char *key, double x) {
  j_key(j, key);
  w_number(j->w, x);
}

void j_int(J *j, const char *key, long long x) {
  j_key(j, key);
  w_printf(j->w, "%lld", x);
}

void j_bool(J *j, const char *key, bool x) {
  j_key(j, key);
  w_puts(j->w, x ? "true" : "false");
}

void j_str(J *j, const char *key, const char *s) {
  j_key(j, key);
  w_string(j->w, s);
}
