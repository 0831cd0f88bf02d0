/* gen_field_docs.c - docs/language.md's tables of fields (and of a block's operators) as a
 * C table for the language server's hover, so the prose lives in one place, the reference.
 *
 *   gen_field_docs docs/language.md OUT.h
 *
 * Under each "### `kind`" heading, a table whose first column names fields (`a`, `b`) gives
 * one row per name: its type, default (where the table has that column) and notes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CELLS = 8, LINE = 1 << 16 };

/* Writes s as the inside of a C string: quotes, backslashes and '?' (trigraphs) escaped,
 * markdown's "\|" read as "|", surrounding spaces dropped. */
static void put_c(FILE *out, const char *s, size_t n) {
  for (; n && *s == ' '; n--) s++;
  while (n && s[n - 1] == ' ') n--;
  fputc('"', out);
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '\\' && i + 1 < n && s[i + 1] == '|') continue;
    if (c == '"' || c == '\\' || c == '?') fputc('\\', out);
    fputc(c, out);
  }
  fputc('"', out);
}

/* Splits a table row at its unescaped '|': cell k is s[start[k]] .. s[end[k]]. */
static int cells(const char *s, size_t *start, size_t *end) {
  int n = -1;
  for (size_t i = 0; s[i]; i++) {
    if (s[i] != '|' || (i && s[i - 1] == '\\')) continue;
    if (n >= 0 && n < MAX_CELLS) end[n] = i;
    if (++n < MAX_CELLS) start[n] = i + 1;
  }
  return n < MAX_CELLS ? n : MAX_CELLS;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gen_field_docs LANGUAGE_MD OUT_H\n");
    return 2;
  }
  FILE *in = fopen(argv[1], "r"), *out = fopen(argv[2], "w");
  if (!in || !out) {
    perror(in ? argv[2] : argv[1]);
    return 1;
  }
  static char line[LINE];
  char kind[64] = "";
  int cols = 0, deflt = -1, rows = 0; /* the table's columns; the default column, or -1 */
  fprintf(out, "/* Generated from docs/language.md by compiler/lsp/gen_field_docs.c: do not edit. */\n");
  fprintf(out, "static const LspFieldDoc lsp_field_docs[] = {\n");
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\n")] = '\0';
    size_t st[MAX_CELLS], en[MAX_CELLS];
    if (!strncmp(line, "## ", 3)) kind[0] = '\0';
    if (line[0] == '#') cols = 0; /* a heading ends a table */
    sscanf(line, "### `%63[a-z]`", kind);
    if (!kind[0] || line[0] != '|') continue;
    int n = cells(line, st, en);
    if (!cols) { /* the header row */
      cols = n;
      deflt = -1;
      for (int k = 0; k < n; k++)
        if (!strncmp(line + st[k], " default ", 9)) deflt = k;
      continue;
    }
    if (n != cols || line[st[0] + 1] != '`') continue;      /* the |---| row, or a ragged one */
    for (const char *p = line + st[0]; p < line + en[0];) { /* each `name` of the first cell */
      const char *a = strchr(p, '`'), *b = a ? strchr(a + 1, '`') : NULL;
      if (!b || b > line + en[0]) break;
      size_t w = (size_t)(b - a - 1);
      if (w && strspn(a + 1, "abcdefghijklmnopqrstuvwxyz0123456789_") == w) {
        fprintf(out, "    {\"%s\", ", kind);
        put_c(out, a + 1, w);
        fputs(", ", out);
        put_c(out, line + st[1], en[1] - st[1]);
        fputs(", ", out);
        put_c(out, deflt > 0 ? line + st[deflt] : "", deflt > 0 ? en[deflt] - st[deflt] : 0);
        fputs(", ", out);
        put_c(out, line + st[cols - 1], cols > 2 ? en[cols - 1] - st[cols - 1] : 0);
        fputs("},\n", out);
        rows++;
      }
      p = b + 1;
    }
  }
  fprintf(out, "};\n");
  if (fclose(out) != 0 || ferror(in) || !rows) {
    fprintf(stderr, "gen_field_docs: %s\n", rows ? "cannot write the output" : "no field tables found");
    remove(argv[2]); /* no half-written table for the next build to take as done */
    return 1;
  }
  fclose(in);
  return 0;
}
