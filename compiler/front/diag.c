/* diag.c - printing diagnostics.
 *
 * The human format, one diagnostic:
 *
 *   path:LINE:COL: error: MESSAGE
 *      12 |   hiden = 4096
 *         |   ^~~~~
 *
 * The caret marks the start of the span and tildes the rest of it on that line.  A note
 * has the same shape with "note:".  The short format (--error-format=short) is the first
 * line alone, for tests and editors.  Colours come from a small severity table and are
 * used only when the sink writes to a terminal. */
#include "diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "fileio.h"
#include "strbuf.h"

static const struct {
  const char *label, *colour;
} level_info[] = {
    /* ORDER DiagLevel */
    [DIAG_ERROR] = {"error", "\033[1;31m"},
    [DIAG_WARNING] = {"warning", "\033[1;35m"},
    [DIAG_NOTE] = {"note", "\033[1;36m"},
};

static void write_file(void *user, const char *text, size_t len) { fwrite(text, 1, len, (FILE *)user); }

void diag_init(Diag *d, FILE *out) {
  memset(d, 0, sizeof *d);
  d->write = write_file;
  d->user = out;
  d->colour = out && isatty(fileno(out)) && !getenv("NO_COLOR");
}

void diag_set_writer(Diag *d, DiagWriteFn fn, void *user) {
  d->write = fn;
  d->user = user;
  d->colour = 0;
}

void diag_set_sink(Diag *d, DiagSinkFn fn, void *user) {
  d->sink = fn;
  d->sink_user = user;
}

/* Hands one diagnostic to the sink as data and counts it. */
static void to_sink(Diag *d, DiagLevel lv, SrcFile *f, Span sp, const char *path, const char *fmt, va_list ap) {
  StrBuf b = {0};
  strbuf_vprintf(&b, fmt, ap);
  d->sink(d->sink_user, lv, f, sp, path, b.p ? b.p : "");
  free(b.p);
  if (lv == DIAG_ERROR) d->errors++;
  if (lv == DIAG_WARNING) d->warnings++;
}

typedef struct DiagEntry {
  int file; /* -1 for a diagnostic with no position */
  unsigned off;
  int group; /* the index of its error: a note joins the error before it */
  char *text;
  size_t len;
} DiagEntry;

static void enqueue(Diag *d, SrcFile *f, Span sp, DiagLevel lv, char *text, size_t len) {
  XGROW(d->queue, d->nqueue + 1, d->capqueue);
  DiagEntry *e = &d->queue[d->nqueue];
  e->file = f ? f->id : -1;
  e->off = sp.start;
  e->group = lv == DIAG_NOTE && d->nqueue ? d->queue[d->nqueue - 1].group : d->nqueue;
  e->text = text;
  e->len = len;
  d->nqueue++;
}

void diag_flush(Diag *d) {
  int n = d->nqueue;
  /* Sort keys come from each group's head (its error): file, offset, arrival. */
  int *order = xmalloc((size_t)n * sizeof *order);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (d->queue[i].group == i) order[m++] = i;
  for (int i = 1; i < m; i++) { /* insertion sort: stable, and error counts are small */
    int x = order[i], j = i;
    const DiagEntry *ex = &d->queue[x];
    while (j > 0) {
      const DiagEntry *ey = &d->queue[order[j - 1]];
      bool before = ex->file != ey->file ? (unsigned)ex->file < (unsigned)ey->file : ex->off < ey->off;
      if (!before) break;
      order[j] = order[j - 1];
      j--;
    }
    order[j] = x;
  }
  for (int k = 0; k < m; k++)
    for (int i = order[k]; i < n && d->queue[i].group == order[k]; i++)
      d->write(d->user, d->queue[i].text, d->queue[i].len);
  for (int i = 0; i < n; i++) free(d->queue[i].text);
  free(order);
  d->nqueue = 0;
}

void diag_free(Diag *d) {
  diag_flush(d);
  free(d->queue);
  d->queue = NULL;
  d->capqueue = 0;
  for (int i = 0; i < d->nfiles; i++) {
    free(d->files[i]->path);
    free(d->files[i]->text);
    free(d->files[i]->lines);
    free(d->files[i]);
  }
  free(d->files);
  d->files = NULL;
  d->nfiles = d->capfiles = 0;
}

SrcFile *diag_add_file(Diag *d, const char *path, const char *text, size_t len) {
  SrcFile *f = xcalloc(1, sizeof *f);
  f->path = xstrdup(path);
  f->text = xmalloc(len + 1);
  if (len) memcpy(f->text, text, len);
  f->text[len] = '\0';
  f->len = len;
  XGROW(d->files, d->nfiles + 1, d->capfiles);
  f->id = d->nfiles;
  d->files[d->nfiles++] = f;
  return f;
}

SrcFile *diag_load_file(Diag *d, const char *path, const char **why) {
  char *buf;
  size_t len;
  if (file_read(path, &buf, &len, why) != 0) return NULL;
  SrcFile *f = diag_add_file(d, path, buf, len);
  free(buf);
  return f;
}

static void build_lines(SrcFile *f) {
  unsigned n = 1;
  for (size_t i = 0; i < f->len; i++) n += f->text[i] == '\n';
  f->lines = xmalloc(n * sizeof *f->lines);
  f->lines[0] = 0;
  unsigned k = 1;
  for (size_t i = 0; i < f->len; i++)
    if (f->text[i] == '\n') f->lines[k++] = (unsigned)i + 1;
  f->nlines = n;
}

static unsigned line_index(SrcFile *f, unsigned off) {
  if (!f->lines) build_lines(f);
  unsigned lo = 0, hi = f->nlines; /* last line start <= off */
  while (hi - lo > 1) {
    unsigned mid = lo + (hi - lo) / 2;
    if (f->lines[mid] <= off)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Columns count characters, not bytes: UTF-8 continuation bytes do not advance. */
static unsigned count_cols(const char *s, size_t n) {
  unsigned c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
  return c;
}

void srcfile_locate(SrcFile *f, unsigned off, unsigned *line, unsigned *col) {
  if (off > f->len) off = (unsigned)f->len;
  unsigned li = line_index(f, off);
  *line = li + 1;
  *col = count_cols(f->text + f->lines[li], off - f->lines[li]) + 1;
}

const char *srcfile_line(SrcFile *f, unsigned off, size_t *len) {
  if (off > f->len) off = (unsigned)f->len;
  unsigned li = line_index(f, off);
  const char *s = f->text + f->lines[li];
  size_t n = 0;
  while (s + n < f->text + f->len && s[n] != '\n') n++;
  if (n && s[n - 1] == '\r') n--;
  *len = n;
  return s;
}

/* The source line (control characters shown as spaces so the terminal stays sane) and
 * the underline beneath it. */
static void put_excerpt(Diag *d, StrBuf *b, SrcFile *f, Span sp, unsigned line, DiagLevel lv) {
  size_t n;
  const char *s = srcfile_line(f, sp.start, &n);
  /* A very long line (generated, or not text at all) is shown as a window around the
   * caret, so one diagnostic stays a few lines long. */
  enum { WIDE = 160, BEFORE = 60 };
  size_t lead0 = sp.start - (size_t)(s - f->text);
  bool cut_left = false, cut_right = false;
  if (n > WIDE) {
    size_t from = lead0 > BEFORE ? lead0 - BEFORE : 0;
    while (from > 0 && ((unsigned char)s[from] & 0xC0) == 0x80) from--; /* whole characters */
    cut_left = from > 0;
    s += from;
    n -= from;
    if (n > WIDE) {
      n = WIDE;
      while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
      cut_right = true;
    }
  }
  int w = snprintf(NULL, 0, "%u", line);
  strbuf_printf(b, " %u | %s", line, cut_left ? "..." : "");
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    strbuf_put(b, (unsigned char)c < 0x20 && c != '\t' ? " " : &c, 1);
  }
  strbuf_printf(b, "%s\n %*s | %s", cut_right ? "..." : "", w, "", cut_left ? "   " : "");
  size_t lead = sp.start - (unsigned)(s - f->text);
  for (size_t i = 0; i < lead && i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) strbuf_put(b, s[i] == '\t' ? "\t" : " ", 1);
  if (d->colour) strbuf_puts(b, level_info[lv].colour);
  strbuf_put(b, "^", 1);
  size_t end = sp.end > sp.start ? sp.end - (unsigned)(s - f->text) : lead + 1;
  if (end > n) end = n > lead ? n : lead + 1;
  for (size_t i = lead + 1; i < end; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) strbuf_put(b, "~", 1);
  if (d->colour) strbuf_put(b, "\033[0m", 4);
  strbuf_put(b, "\n", 1);
}

void diag_vreport(Diag *d, DiagLevel lv, SrcFile *f, Span sp, const char *fmt, va_list ap) {
  if (d->sink) {
    to_sink(d, lv, f, sp, f ? f->path : NULL, fmt, ap);
    return;
  }
  StrBuf b = {0};
  unsigned line = 0, col = 0;
  if (f) srcfile_locate(f, sp.start, &line, &col);
  if (d->colour) strbuf_put(&b, "\033[1m", 4);
  if (f) strbuf_printf(&b, "%s:%u:%u: ", f->path, line, col);
  if (d->colour)
    strbuf_printf(&b, "%s%s:\033[0m\033[1m ", level_info[lv].colour, level_info[lv].label);
  else
    strbuf_printf(&b, "%s: ", level_info[lv].label);
  strbuf_vprintf(&b, fmt, ap);
  if (d->colour) strbuf_put(&b, "\033[0m", 4);
  strbuf_put(&b, "\n", 1);
  if (f && d->format == DIAG_HUMAN) put_excerpt(d, &b, f, sp, line, lv);
  if (d->buffered)
    enqueue(d, f, sp, lv, b.p, b.n);
  else {
    d->write(d->user, b.p, b.n);
    free(b.p);
  }
  if (lv == DIAG_ERROR) d->errors++;
  if (lv == DIAG_WARNING) d->warnings++;
}

void diag_report(Diag *d, DiagLevel lv, SrcFile *f, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(d, lv, f, sp, fmt, ap);
  va_end(ap);
}

void diag_error(Diag *d, SrcFile *f, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(d, DIAG_ERROR, f, sp, fmt, ap);
  va_end(ap);
}

void diag_note(Diag *d, SrcFile *f, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(d, DIAG_NOTE, f, sp, fmt, ap);
  va_end(ap);
}

static void plain(Diag *d, DiagLevel lv, const char *path, const char *fmt, va_list ap) {
  if (d->sink) {
    to_sink(d, lv, NULL, (Span){0, 0}, path, fmt, ap);
    return;
  }
  StrBuf b = {0};
  if (path) strbuf_printf(&b, "%s: ", path);
  strbuf_printf(&b, "%s%s:%s ", d->colour ? level_info[lv].colour : "", level_info[lv].label, d->colour ? "\033[0m" : "");
  strbuf_vprintf(&b, fmt, ap);
  strbuf_put(&b, "\n", 1);
  if (d->buffered)
    enqueue(d, NULL, (Span){0, 0}, lv, b.p, b.n);
  else {
    d->write(d->user, b.p, b.n);
    free(b.p);
  }
  if (lv == DIAG_ERROR) d->errors++;
}

void diag_plain(Diag *d, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  plain(d, DIAG_ERROR, path, fmt, ap);
  va_end(ap);
}

void diag_plain_note(Diag *d, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  plain(d, DIAG_NOTE, path, fmt, ap);
  va_end(ap);
}
