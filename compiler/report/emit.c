/* emit.c - JSON strings and numbers, CSV fields: the rules are in emit.h. */
#include "emit.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

const char *emit_shortest(char *buf, size_t n, double x) { return str_shortest(buf, n, x); }

int emit_json_number(FILE *out, double x) {
  char buf[EMIT_NUM_MAX];
  return fputs(isfinite(x) ? emit_shortest(buf, sizeof buf, x) : "null", out) < 0 ? -1 : 0;
}

int emit_utf8_len(const unsigned char *p) {
  unsigned c = p[0], min;
  int n;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, min = 0x10000;
  else
    return 0;
  unsigned cp = c & (0x7fu >> n);
  for (int i = 1; i < n; i++) { /* a NUL fails the test, so this stops at the string's end */
    if ((p[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3fu);
  }
  return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
}

int emit_json_string(FILE *out, const char *s) {
  bool ok = fputc('"', out) != EOF;
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    const unsigned char *run = p; /* bytes that need nothing go out in one write */
    while (*p >= 0x20 && *p != '"' && *p != '\\') {
      if (*p < 0x80) {
        p++;
        continue;
      }
      int n = emit_utf8_len(p);
      if (!n) break;
      p += n;
    }
    size_t len = (size_t)(p - run);
    if (len) ok &= fwrite(run, 1, len, out) == len;
    unsigned c = *p;
    if (!c) break;
    p++;
    if (c == '"' || c == '\\') {
      ok &= fputc('\\', out) != EOF && fputc((int)c, out) != EOF;
    } else if (c >= 0x80) {
      ok &= fputs("\xef\xbf\xbd", out) >= 0; /* U+FFFD for a byte that is not UTF-8 */
    } else {
      switch (c) {
      case '\b': ok &= fputs("\\b", out) >= 0; break;
      case '\f': ok &= fputs("\\f", out) >= 0; break;
      case '\n': ok &= fputs("\\n", out) >= 0; break;
      case '\r': ok &= fputs("\\r", out) >= 0; break;
      case '\t': ok &= fputs("\\t", out) >= 0; break;
      default: ok &= fprintf(out, "\\u%04x", c) >= 0; break;
      }
    }
  }
  ok &= fputc('"', out) != EOF;
  return ok ? 0 : -1;
}

int emit_csv_field(FILE *out, const char *s) {
  if (!s) return 0;
  size_t n = strlen(s);
  bool ok = true;
  if (n && !strpbrk(s, ",\"\r\n") && s[0] != ' ' && s[n - 1] != ' ') return fwrite(s, 1, n, out) == n ? 0 : -1;
  ok &= fputc('"', out) != EOF;
  for (const char *q; (q = strchr(s, '"')); s = q + 1) { /* up to and with each quote, then the quote again */
    size_t len = (size_t)(q - s) + 1;
    ok &= fwrite(s, 1, len, out) == len && fputc('"', out) != EOF;
  }
  ok &= fputs(s, out) >= 0 && fputc('"', out) != EOF;
  return ok ? 0 : -1;
}
