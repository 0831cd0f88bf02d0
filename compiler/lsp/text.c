/* text.c - file URIs and LSP positions.
 *
 * A position is a line and a character counted in UTF-16 code units (LSP's default
 * encoding): a character outside the Basic Multilingual Plane, four bytes of UTF-8, counts
 * two.  Offsets past the end of a line or of the text are clamped to it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lsp_private.h"
#include "strbuf.h"

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = tolower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *lsp_uri_to_path(const char *uri) {
  if (strncmp(uri, "file://", 7) != 0) return xstrdup(uri);
  const char *s = uri + 7;
  if (*s != '/') s = strchr(s, '/') ? strchr(s, '/') : s + strlen(s); /* file://host/path */
  char *p = xmalloc(strlen(s) + 1), *o = p;
  for (; *s; s++) {
    int hi, lo;
    if (*s == '%' && (hi = hexval(s[1])) >= 0 && (lo = hexval(s[2])) >= 0) {
      *o++ = (char)(hi * 16 + lo);
      s += 2;
    } else {
      *o++ = *s;
    }
  }
  *o = '\0';
  return p;
}

char *lsp_path_to_uri(const char *path) {
  char *real = realpath(path, NULL);
  const char *p = real ? real : path;
  StrBuf b = {0};
  strbuf_puts(&b, "file://");
  for (; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (isalnum(c) || strchr("-._~/", c))
      strbuf_put(&b, (const char *)&c, 1);
    else
      strbuf_printf(&b, "%%%02X", c);
  }
  free(real);
  return b.p;
}

/* UTF-16 code units of the UTF-8 character starting with byte c (0 for a continuation). */
static long units16(unsigned char c) { return (c & 0xC0) == 0x80 ? 0 : c >= 0xF0 ? 2 : 1; }

unsigned lsp_offset(const char *text, size_t len, long line, long character) {
  size_t i = 0;
  for (long l = 0; l < line && i < len; i++)
    if (text[i] == '\n') l++;
  for (long c = 0; i < len && text[i] != '\n' && c < character;) {
    c += units16((unsigned char)text[i++]);
    while (i < len && units16((unsigned char)text[i]) == 0) i++;
  }
  return (unsigned)i;
}

cJSON *lsp_position(const char *text, size_t len, unsigned off) {
  long line = 0, col = 0;
  if (off > len) off = (unsigned)len;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') {
      line++;
      col = 0;
    } else {
      col += units16((unsigned char)text[i]);
    }
  }
  cJSON *p = cJSON_CreateObject();
  cJSON_AddNumberToObject(p, "line", (double)line);
  cJSON_AddNumberToObject(p, "character", (double)col);
  return p;
}

cJSON *lsp_range(const char *text, size_t len, Span sp) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "start", lsp_position(text, len, sp.start));
  cJSON_AddItemToObject(r, "end", lsp_position(text, len, sp.end > sp.start ? sp.end : sp.start));
  return r;
}

cJSON *lsp_location(const char *uri, const char *text, size_t len, Span sp) {
  cJSON *l = cJSON_CreateObject();
  cJSON_AddStringToObject(l, "uri", uri);
  cJSON_AddItemToObject(l, "range", lsp_range(text, len, sp));
  return l;
}

bool lsp_is_ident(int c) { return isalnum(c) || c == '_'; }

Doc *lsp_doc_of(Server *sv, cJSON *params, LspError *e) {
  cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
  cJSON *uri = cJSON_GetObjectItemCaseSensitive(td, "uri");
  if (!cJSON_IsString(uri)) {
    lsp_fail(e, RPC_INVALID_PARAMS, "params.textDocument.uri must be a string");
    return NULL;
  }
  for (int i = 0; i < sv->ndocs; i++)
    if (!strcmp(sv->docs[i]->uri, uri->valuestring)) return sv->docs[i];
  lsp_fail(e, RPC_INVALID_PARAMS, "document %s is not open (textDocument/didOpen first)", uri->valuestring);
  return NULL;
}

Doc *lsp_doc_at(Server *sv, cJSON *params, unsigned *off, LspError *e) {
  Doc *d = lsp_doc_of(sv, params, e);
  if (!d) return NULL;
  cJSON *pos = cJSON_GetObjectItemCaseSensitive(params, "position");
  cJSON *line = cJSON_GetObjectItemCaseSensitive(pos, "line");
  cJSON *ch = cJSON_GetObjectItemCaseSensitive(pos, "character");
  if (!cJSON_IsNumber(line) || !cJSON_IsNumber(ch) || line->valuedouble < 0 || ch->valuedouble < 0) {
    lsp_fail(e, RPC_INVALID_PARAMS, "params.position must have a line and a character, numbers >= 0");
    return NULL;
  }
  double l = line->valuedouble < 1e9 ? line->valuedouble : 1e9, c = ch->valuedouble < 1e9 ? ch->valuedouble : 1e9;
  *off = lsp_offset(d->text, d->len, (long)l, (long)c);
  return d;
}
