/* sweep_io.c - the input and output of llmp sweep (sweep_io.h): ranking, the keep-the-best-N
 * heap, the three writers, a reader of the JSON Lines output, llmp merge, shard slices and
 * launchers, and the progress bar.
 *
 * The JSON reader knows exactly the shape the writer produces: one object per line whose
 * values are strings, numbers or null, except two members of the metadata line, an object of
 * counts ("dropped") and an array of two integers ("shard"), whose own members are scalars.
 * It is an iterative scanner over one line, not a general parser, so no input can make it
 * recurse; lines are bounded (LINE_LIMIT) and every count it takes in is checked against the
 * others before it is used (the slice a shard covers, the rows its counts promise).
 *
 * Numbers are written as the shortest of %.15g, %.16g and %.17g that reads back as the same
 * double (as llmp run --format json does), so a row read back is bit-identical and a merge
 * ranks exactly what one machine ranked. */
#include "sweep_io.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/emit.h"
#include "report/report.h"

static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) {
    fputs("llmp: out of memory\n", stderr);
    abort();
  }
  return p;
}

/* --- ranking --------------------------------------------------------------------------------- */

int sweep_row_cmp(const SweepRow *a, const SweepRow *b, bool maximize) {
  double x = a->objective, y = b->objective;
  bool xn = isnan(x), yn = isnan(y);
  if (xn != yn) return xn ? 1 : -1;                  /* NaN after everything */
  if (!xn && x != y) return (x < y) != maximize ? -1 : 1;
  return a->point < b->point ? -1 : a->point > b->point;
}

static int cmp_minimize(const void *a, const void *b) { return sweep_row_cmp(a, b, false); }
static int cmp_maximize(const void *a, const void *b) { return sweep_row_cmp(a, b, true); }

void sweep_sort(SweepRow *rows, int n, bool maximize) {
  if (rows && n > 1) qsort(rows, (size_t)n, sizeof *rows, maximize ? cmp_maximize : cmp_minimize);
}

/* --- SweepTop: a max-heap whose top is the worst row kept ---------------------------------- */

typedef struct TopSlot {
  SweepRow row;                 /* fields and strings live in buf */
  char *buf;
  size_t cap;
} TopSlot;

struct SweepTop {
  int keep, n, cap;
  bool maximize;
  TopSlot *slot;                /* heap order: slot[i] ranks after its children */
};

SweepTop *sweep_top_new(int keep, bool maximize) {
  SweepTop *t = xrealloc(NULL, sizeof *t);
  *t = (SweepTop){keep > 0 ? keep : 0, 0, 0, maximize, NULL};
  return t;
}

void sweep_top_free(SweepTop *t) {
  if (!t) return;
  for (int i = 0; i < t->cap; i++) free(t->slot[i].buf);
  free(t->slot);
  free(t);
}

int sweep_top_count(const SweepTop *t) { return t ? t->n : 0; }

/* Copies row into s: the fields array first, then every key and text value. */
static void slot_copy(TopSlot *s, const SweepRow *row) {
  int nf = row->nfields > 0 && row->fields ? row->nfields : 0;
  size_t need = (size_t)nf * sizeof(SweepField);
  for (int i = 0; i < nf; i++) {
    need += strlen(row->fields[i].key ? row->fields[i].key : "") + 1;
    if (row->fields[i].str) need += strlen(row->fields[i].str) + 1;
  }
  if (need == 0) need = 1;   /* a row without fields still gets a buffer (no offset on NULL) */
  if (need > s->cap) {
    s->buf = xrealloc(s->buf, need);
    s->cap = need;
  }
  SweepField *f = (SweepField *)(void *)s->buf;
  char *p = s->buf + (size_t)nf * sizeof(SweepField);
  for (int i = 0; i < nf; i++) {
    const SweepField *src = &row->fields[i];
    size_t kl = strlen(src->key ? src->key : "") + 1;
    memcpy(p, src->key ? src->key : "", kl);
    f[i] = (SweepField){p, src->num, NULL};
    p += kl;
    if (src->str) {
      size_t sl = strlen(src->str) + 1;
      memcpy(p, src->str, sl);
      f[i].str = p;
      p += sl;
    }
  }
  s->row = (SweepRow){row->point, row->objective, nf, nf ? f : NULL};
}

static bool top_worse(const SweepTop *t, int i, int j) {
  return sweep_row_cmp(&t->slot[i].row, &t->slot[j].row, t->maximize) > 0;
}

static void top_swap(SweepTop *t, int i, int j) {
  TopSlot s = t->slot[i];
  t->slot[i] = t->slot[j];
  t->slot[j] = s;
}

static void top_sift_up(SweepTop *t, int i) {
  while (i > 0 && top_worse(t, i, (i - 1) / 2)) {
    top_swap(t, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static void top_sift_down(SweepTop *t, int i) {
  for (;;) {
    int w = i, l = 2 * i + 1, r = l + 1;
    if (l < t->n && top_worse(t, l, w)) w = l;
    if (r < t->n && top_worse(t, r, w)) w = r;
    if (w == i) return;
    top_swap(t, i, w);
    i = w;
  }
}

bool sweep_top_wants(const SweepTop *t, double objective, uint64_t point) {
  if (!t || !t->keep) return false;
  if (t->n < t->keep) return true;
  SweepRow r = {point, objective, 0, NULL};
  return sweep_row_cmp(&r, &t->slot[0].row, t->maximize) < 0;
}

bool sweep_top_push(SweepTop *t, const SweepRow *row) {
  if (!t || !row || !sweep_top_wants(t, row->objective, row->point)) return false;
  if (t->n < t->keep) {
    if (t->n == t->cap) {       /* grow by doubling up to keep; new slots own no buffer yet */
      int cap = t->cap ? (t->cap > t->keep / 2 ? t->keep : 2 * t->cap) : (t->keep < 16 ? t->keep : 16);
      t->slot = xrealloc(t->slot, (size_t)cap * sizeof *t->slot);
      memset(t->slot + t->cap, 0, (size_t)(cap - t->cap) * sizeof *t->slot);
      t->cap = cap;
    }
    slot_copy(&t->slot[t->n], row);
    top_sift_up(t, t->n++);
  } else {
    slot_copy(&t->slot[0], row);        /* replaces the worst */
    top_sift_down(t, 0);
  }
  return true;
}

void sweep_top_merge(SweepTop *into, const SweepTop *from) {
  if (!into || !from || into == from) return;
  for (int i = 0; i < from->n; i++) sweep_top_push(into, &from->slot[i].row);
}

int sweep_top_rows(const SweepTop *t, SweepRow *out) {
  if (!t || !out) return 0;
  for (int i = 0; i < t->n; i++) out[i] = t->slot[i].row;
  sweep_sort(out, t->n, t->maximize);
  return t->n;
}

/* --- text helpers -------------------------------------------------------------------------- */

/* A number for JSON (json) or CSV: NaN null or empty, infinities 1e999 or inf. */
static const char *num_text(char *buf, size_t n, double x, bool json) {
  if (isnan(x)) return json ? "null" : "";
  if (isinf(x)) return x > 0 ? (json ? "1e999" : "inf") : (json ? "-1e999" : "-inf");
  return emit_shortest(buf, n, x);
}

/* 1234567 -> "1,234,567" (buf: at least 32 bytes). */
static const char *grouped(char *buf, uint64_t v) {
  char digits[24];
  int nd = snprintf(digits, sizeof digits, "%" PRIu64, v), o = 0;
  for (int i = 0; i < nd; i++) {
    if (i && (nd - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = '\0';
  return buf;
}

/* A rate with a metric prefix: "950", "12.3 k", "1.2 M" (buf: at least 32 bytes). */
static const char *rate_text(char *buf, double r) {
  static const char *const prefix[] = {"", " k", " M", " G", " T"};
  int p = 0;
  while (p < 4 && fabs(r) >= 999.95) {
    r /= 1000;
    p++;
  }
  snprintf(buf, 32, p ? "%.1f%s" : "%.0f%s", r, prefix[p]);
  return buf;
}

/* Text for a `# key: value` line: control characters become spaces. */
static void comment_text(FILE *out, const char *s) {
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) fputc(*p < 0x20 ? ' ' : *p, out);
}

static const char *sense_of(const SweepMeta *m) { return m->maximize ? "maximize" : "minimize"; }

/* --- the table ------------------------------------------------------------------------------- */

static bool key_is_bytes(const char *k) { return !strncmp(k, "memory.", 7) || strstr(k, "bytes"); }

static bool key_is_fraction(const char *k) {
  size_t n = strlen(k);
  return !strcmp(k, "mfu") || (n > 4 && (!strcmp(k + n - 4, ".mfu") || !strcmp(k + n - 4, "_mfu")));
}

/* "%.1f", or 4 significant digits where that would be long. */
static void one_decimal(char *buf, size_t n, double v, const char *unit) {
  snprintf(buf, n, fabs(v) < 1e9 ? "%.1f%s" : "%.4g%s", v, unit);
}

/* The text of one table cell (the rules are in sweep_io.h). */
static const char *table_cell(char *buf, size_t n, const SweepField *f) {
  const char *key = f->key ? f->key : "";
  if (f->str) return f->str;
  double v = f->num;
  if (isnan(v)) return "-";
  if (key_is_bytes(key)) one_decimal(buf, n, v / (1024.0 * 1024 * 1024), " GiB");
  else if (key_is_fraction(key)) one_decimal(buf, n, 100 * v, " %");
  else if (fabs(v) < 1e15 && (v == floor(v) || fabs(v) >= 1e4)) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, "%.4g", v);
  return buf;
}

static void table_header(FILE *out, const SweepMeta *m) {
  char a[32], b[32], c[32], d[32];
  uint64_t dropped = 0;
  for (int i = 0; i < m->ndropped; i++) dropped += m->dropped[i].count;
  fprintf(out, "sweep %s (%s): %s %s, keep %d\n", m->sweep ? m->sweep : "?", m->file ? m->file : "?",
          sense_of(m), m->objective ? m->objective : "?", m->keep);
  if (m->shard_n > 1) fprintf(out, "  shard %d/%d of %s points:", m->shard_k, m->shard_n, grouped(a, m->points));
  else fprintf(out, "  %s points:", grouped(a, m->points));
  fprintf(out, " %s evaluated, %s kept, %s dropped\n", grouped(b, m->evaluated), grouped(c, m->kept),
          grouped(d, dropped));
  bool first = true;
  for (int i = 0; i < m->ndropped; i++) {
    if (!m->dropped[i].count) continue;
    fprintf(out, "%s%s `%s`", first ? "  dropped: " : ", ", grouped(a, m->dropped[i].count),
            m->dropped[i].reason ? m->dropped[i].reason : "");
    first = false;
  }
  if (!first) fputc('\n', out);
  if (isfinite(m->elapsed) && m->elapsed >= 0) {
    fprintf(out, "  %s", report_time(a, sizeof a, m->elapsed));
    if (m->elapsed > 0) fprintf(out, ", %s points/s", rate_text(b, (double)m->evaluated / m->elapsed));
    fputc('\n', out);
  }
}

/* Width of each column: 0 is the rank, 1.. the fields of rows[0]. */
static void table_widths(const SweepRow *rows, int n, int nf, size_t *w) {
  char buf[64];
  w[0] = strlen("rank");
  for (int j = 0; j < nf; j++) w[j + 1] = strlen(rows[0].fields[j].key ? rows[0].fields[j].key : "");
  for (int i = 0; i < n; i++) {
    int len = snprintf(buf, sizeof buf, "%d", i + 1);
    if ((size_t)len > w[0]) w[0] = (size_t)len;
    for (int j = 0; j < nf && j < rows[i].nfields; j++) {
      size_t l = strlen(table_cell(buf, sizeof buf, &rows[i].fields[j]));
      if (l > w[j + 1]) w[j + 1] = l;
    }
  }
}

/* One cell: numbers right-aligned, text left-aligned (no padding after the last column). */
static void table_put(FILE *out, const char *text, size_t width, bool right, bool last, bool first) {
  int pad = (int)(width - strlen(text));
  if (!first) fputs("  ", out);
  if (right) fprintf(out, "%*s%s", pad, "", text);
  else if (last) fputs(text, out);
  else fprintf(out, "%s%*s", text, pad, "");
}

static void table_rows(FILE *out, const SweepRow *rows, int n) {
  int nf = rows[0].nfields;
  size_t *w = xrealloc(NULL, (size_t)(nf + 1) * sizeof *w);
  table_widths(rows, n, nf, w);
  table_put(out, "rank", w[0], true, nf == 0, true);
  for (int j = 0; j < nf; j++)
    table_put(out, rows[0].fields[j].key ? rows[0].fields[j].key : "", w[j + 1], !rows[0].fields[j].str, j == nf - 1, false);
  fputc('\n', out);
  char buf[64];
  for (int i = 0; i < n; i++) {
    snprintf(buf, sizeof buf, "%d", i + 1);
    table_put(out, buf, w[0], true, nf == 0, true);
    for (int j = 0; j < nf; j++) {
      const char *text = j < rows[i].nfields ? table_cell(buf, sizeof buf, &rows[i].fields[j]) : "-";
      table_put(out, text, w[j + 1], !rows[0].fields[j].str, j == nf - 1, false);
    }
    fputc('\n', out);
  }
  free(w);
}

static void write_table(FILE *out, const SweepMeta *m, const SweepRow *rows, int n) {
  table_header(out, m);
  fputc('\n', out);
  if (n > 0) table_rows(out, rows, n);
  else fputs(m->keep ? "no point met every require\n" : "keep 0: no rows\n", out);
}

/* --- CSV and JSON Lines ---------------------------------------------------------------------- */

static void write_csv(FILE *out, const SweepMeta *m, const SweepRow *rows, int n) {
  static const char *const names[] = {"sweep", "file", "objective"};
  const char *values[] = {m->sweep, m->file, m->objective};
  fputs("# llmp_sweep: 1\n", out);
  for (int i = 0; i < 3; i++) {
    fprintf(out, "# %s: ", names[i]);
    comment_text(out, values[i]);
    fputc('\n', out);
  }
  fprintf(out, "# sense: %s\n# keep: %d\n# points: %" PRIu64 "\n# shard: %d/%d\n", sense_of(m), m->keep, m->points,
          m->shard_k, m->shard_n);
  fprintf(out, "# evaluated: %" PRIu64 "\n# kept: %" PRIu64 "\n", m->evaluated, m->kept);
  for (int i = 0; i < m->ndropped; i++) {
    fprintf(out, "# dropped: %" PRIu64 " ", m->dropped[i].count);
    comment_text(out, m->dropped[i].reason);
    fputc('\n', out);
  }
  fputs("rank,point,objective", out);
  for (int j = 0; n > 0 && j < rows[0].nfields; j++) {
    fputc(',', out);
    emit_csv_field(out, rows[0].fields[j].key);
  }
  fputc('\n', out);
  char buf[40];
  for (int i = 0; i < n; i++) {
    fprintf(out, "%d,%" PRIu64 ",%s", i + 1, rows[i].point, num_text(buf, sizeof buf, rows[i].objective, false));
    for (int j = 0; j < rows[i].nfields; j++) {
      fputc(',', out);
      const SweepField *f = &rows[i].fields[j];
      if (f->str) emit_csv_field(out, f->str);
      else fputs(num_text(buf, sizeof buf, f->num, false), out);
    }
    fputc('\n', out);
  }
}

static void write_jsonl(FILE *out, const SweepMeta *m, const SweepRow *rows, int n) {
  fputs("{\"llmp_sweep\":1,\"sweep\":", out);
  emit_json_string(out, m->sweep);
  fputs(",\"file\":", out);
  emit_json_string(out, m->file);
  fputs(",\"objective\":", out);
  emit_json_string(out, m->objective);
  fprintf(out, ",\"sense\":\"%s\",\"keep\":%d,\"points\":%" PRIu64 ",\"shard\":[%d,%d]", sense_of(m), m->keep,
          m->points, m->shard_k, m->shard_n);
  fprintf(out, ",\"evaluated\":%" PRIu64 ",\"kept\":%" PRIu64 ",\"dropped\":{", m->evaluated, m->kept);
  for (int i = 0; i < m->ndropped; i++) {
    if (i) fputc(',', out);
    emit_json_string(out, m->dropped[i].reason);
    fprintf(out, ":%" PRIu64, m->dropped[i].count);
  }
  fputs("}}\n", out);
  char buf[40];
  for (int i = 0; i < n; i++) {
    fprintf(out, "{\"rank\":%d,\"point\":%" PRIu64 ",\"objective\":%s", i + 1, rows[i].point,
            num_text(buf, sizeof buf, rows[i].objective, true));
    for (int j = 0; j < rows[i].nfields; j++) {
      const SweepField *f = &rows[i].fields[j];
      fputc(',', out);
      emit_json_string(out, f->key);
      fputc(':', out);
      if (f->str) emit_json_string(out, f->str);
      else fputs(num_text(buf, sizeof buf, f->num, true), out);
    }
    fputs("}\n", out);
  }
}

int sweep_write(FILE *out, SweepFormat fmt, const SweepMeta *m, const SweepRow *rows, int n) {
  if (!out || !m || n < 0 || (n > 0 && !rows)) return -1;
  switch (fmt) {
  case SWEEP_TABLE: write_table(out, m, rows, n); break;
  case SWEEP_CSV: write_csv(out, m, rows, n); break;
  case SWEEP_JSONL: write_jsonl(out, m, rows, n); break;
  default: return -1;
  }
  return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

int sweep_format_parse(const char *name, SweepFormat *f) {
  static const struct {
    const char *name;
    SweepFormat f;
  } names[] = {{"table", SWEEP_TABLE}, {"csv", SWEEP_CSV}, {"json", SWEEP_JSONL}, {"jsonl", SWEEP_JSONL}};
  for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i].name)) {
      *f = names[i].f;
      return 0;
    }
  return -1;
}

SweepFormat sweep_format_of_path(const char *path, SweepFormat dflt) {
  const char *dot = path ? strrchr(path, '.') : NULL;
  if (!dot || strchr(dot, '/')) return dflt;
  if (!strcmp(dot, ".csv")) return SWEEP_CSV;
  if (!strcmp(dot, ".jsonl") || !strcmp(dot, ".json")) return SWEEP_JSONL;
  return dflt;
}

/* --- scanning one line of JSON ------------------------------------------------------------- */

enum { LINE_LIMIT = 16 << 20, MSG_MAX = 320 };

typedef enum { JN_NULL, JN_NUM, JN_STR, JN_OBJ, JN_ARR } JKind;

typedef struct JItem {
  JKind kind;
  size_t key;                   /* the member's name: offset in JLine.sb (array elements: none) */
  size_t at, len;               /* JN_NUM: the token in the line; JN_STR: offset and length in sb */
  int first, count;             /* JN_OBJ, JN_ARR: its members, kids[first .. first+count) */
} JItem;

typedef struct JLine {
  const char *s;                /* the line, NUL-terminated, without its newline */
  size_t i, n;                  /* the cursor and the length */
  char *sb;                     /* decoded strings, each NUL-terminated */
  size_t sn, scap;
  JItem *top, *kids;            /* the object's members; the members of its nested values */
  int ntop, nkids, captop, capkids;
  char msg[MSG_MAX];            /* the first error */
} JLine;

static int jfail(JLine *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jfail(JLine *j, const char *fmt, ...) {
  if (!j->msg[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->msg, sizeof j->msg, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

/* The next character after blanks, or -1 at the end of the line. */
static int jpeek(JLine *j) {
  while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\r')) j->i++;
  return j->i < j->n ? (unsigned char)j->s[j->i] : -1;
}

/* "expected WHAT at column C", or that the line ended first. */
static int jexpected(JLine *j, const char *what) {
  if (j->i >= j->n) return jfail(j, "the line ends before %s: a truncated line?", what);
  return jfail(j, "expected %s at column %zu", what, j->i + 1);
}

static void sb_put(JLine *j, const void *p, size_t n) {
  if (!n) return;
  if (j->sn + n > j->scap) {
    j->scap = (j->sn + n) * 2;
    j->sb = xrealloc(j->sb, j->scap);
  }
  memcpy(j->sb + j->sn, p, n);
  j->sn += n;
}

static void sb_utf8(JLine *j, unsigned long c) {
  unsigned char b[4];
  size_t n;
  if (c < 0x80) {
    b[0] = (unsigned char)c;
    n = 1;
  } else if (c < 0x800) {
    b[0] = (unsigned char)(0xC0 | c >> 6);
    b[1] = (unsigned char)(0x80 | (c & 0x3F));
    n = 2;
  } else if (c < 0x10000) {
    b[0] = (unsigned char)(0xE0 | c >> 12);
    b[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
    b[2] = (unsigned char)(0x80 | (c & 0x3F));
    n = 3;
  } else {
    b[0] = (unsigned char)(0xF0 | c >> 18);
    b[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
    b[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
    b[3] = (unsigned char)(0x80 | (c & 0x3F));
    n = 4;
  }
  sb_put(j, b, n);
}

/* The four hex digits of a \u escape, the cursor on the first. */
static int jhex4(JLine *j, unsigned long *v) {
  if (j->n - j->i < 4) return jfail(j, "a \\u escape needs four hex digits (column %zu)", j->i + 1);
  *v = 0;
  for (int k = 0; k < 4; k++) {
    int c = (unsigned char)j->s[j->i + (size_t)k];
    int d = is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return jfail(j, "a \\u escape needs four hex digits (column %zu)", j->i + 1);
    *v = *v * 16 + (unsigned long)d;
  }
  j->i += 4;
  return 0;
}

/* A \u escape (after the u), with a surrogate pair's second half. */
static int jescape_u(JLine *j) {
  unsigned long c, lo;
  if (jhex4(j, &c)) return -1;
  if (c >= 0xDC00 && c < 0xE000) return jfail(j, "a lone surrogate \\u%04lx (column %zu)", c, j->i - 5);
  if (c >= 0xD800 && c < 0xDC00) {
    if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u')
      return jfail(j, "a lone surrogate \\u%04lx (column %zu)", c, j->i - 5);
    j->i += 2;
    if (jhex4(j, &lo)) return -1;
    if (lo < 0xDC00 || lo >= 0xE000) return jfail(j, "a lone surrogate \\u%04lx (column %zu)", c, j->i - 11);
    c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
  }
  if (c == 0) return jfail(j, "\\u0000 in a string (column %zu)", j->i - 5);
  sb_utf8(j, c);
  return 0;
}

/* string = '"' { char | escape } '"', decoded into sb; the cursor on the opening quote. */
static int jstring(JLine *j, size_t *off, size_t *len) {
  static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
  size_t from = ++j->i;
  *off = j->sn;
  for (;;) {
    size_t run = j->i;          /* copy plain bytes in runs */
    while (j->i < j->n && j->s[j->i] != '"' && j->s[j->i] != '\\' && (unsigned char)j->s[j->i] >= 0x20) j->i++;
    sb_put(j, j->s + run, j->i - run);
    if (j->i >= j->n) return jfail(j, "the line ends inside the string from column %zu: a truncated line?", from);
    char c = j->s[j->i++];
    if (c == '"') break;
    if (c != '\\') return jfail(j, "a control character in a string (column %zu)", j->i);
    if (j->i >= j->n) return jfail(j, "the line ends inside the string from column %zu: a truncated line?", from);
    char e = j->s[j->i++];
    const char *k = e ? strchr(esc_in, e) : NULL;
    if (k) sb_put(j, &esc_out[k - esc_in], 1);
    else if (e == 'u') {
      if (jescape_u(j)) return -1;
    } else return jfail(j, "an unknown escape in a string (column %zu)", j->i - 1);
  }
  *len = j->sn - *off;
  sb_put(j, "", 1);
  return 0;
}

/* number = [-] (0 | [1-9][0-9]*) [. [0-9]+] [(e|E) [+-] [0-9]+] */
static int jnumber(JLine *j, size_t *at, size_t *len) {
  const char *s = j->s;
  size_t i = j->i, n = j->n, from = j->i;
  if (i < n && s[i] == '-') i++;
  if (i < n && s[i] == '0') i++;
  else if (i < n && is_digit(s[i]))
    while (i < n && is_digit(s[i])) i++;
  else return jfail(j, "a malformed number at column %zu", from + 1);
  if (i < n && s[i] == '.') {
    if (++i >= n || !is_digit(s[i])) return jfail(j, "a malformed number at column %zu", from + 1);
    while (i < n && is_digit(s[i])) i++;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    if (++i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (i >= n || !is_digit(s[i])) return jfail(j, "a malformed number at column %zu", from + 1);
    while (i < n && is_digit(s[i])) i++;
  }
  *at = from;
  *len = i - from;
  j->i = i;
  return 0;
}

/* scalar = string | number | null */
static int jscalar(JLine *j, JItem *it) {
  int c = jpeek(j);
  if (c == '"') {
    it->kind = JN_STR;
    return jstring(j, &it->at, &it->len);
  }
  if (c == '-' || is_digit(c)) {
    it->kind = JN_NUM;
    return jnumber(j, &it->at, &it->len);
  }
  if (c == 'n' && j->n - j->i >= 4 && !memcmp(j->s + j->i, "null", 4)) {
    it->kind = JN_NULL;
    j->i += 4;
    return 0;
  }
  return jexpected(j, "a string, a number or null");
}

static void push_item(JItem **v, int *n, int *cap, const JItem *it) {
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 32;
    *v = xrealloc(*v, (size_t)*cap * sizeof **v);
  }
  (*v)[(*n)++] = *it;
}

/* nested = '{' [ string ':' scalar { ',' string ':' scalar } ] '}'
 *        | '[' [ scalar { ',' scalar } ] ']'          (one level only: no recursion) */
static int jnested(JLine *j, JItem *it) {
  bool obj = j->s[j->i++] == '{';
  int close = obj ? '}' : ']';
  *it = (JItem){obj ? JN_OBJ : JN_ARR, it->key, 0, 0, j->nkids, 0};
  if (jpeek(j) == close) {
    j->i++;
    return 0;
  }
  for (;;) {
    JItem k = {JN_NULL, SIZE_MAX, 0, 0, 0, 0};
    size_t klen;
    if (obj) {
      if (jpeek(j) != '"') return jexpected(j, "a member name");
      if (jstring(j, &k.key, &klen)) return -1;
      if (jpeek(j) != ':') return jexpected(j, "`:`");
      j->i++;
    }
    int c = jpeek(j);
    if (c == '{' || c == '[') return jfail(j, "nested too deep at column %zu", j->i + 1);
    if (jscalar(j, &k)) return -1;
    push_item(&j->kids, &j->nkids, &j->capkids, &k);
    it->count++;
    c = jpeek(j);
    if (c == ',') j->i++;
    else if (c == close) {
      j->i++;
      return 0;
    } else return jexpected(j, obj ? "`,` or `}`" : "`,` or `]`");
  }
}

/* line = '{' [ member { ',' member } ] '}';  member = string ':' (scalar | nested) */
static int jline_parse(JLine *j, const char *s, size_t n) {
  j->s = s;
  j->n = n;
  j->i = j->sn = 0;
  j->ntop = j->nkids = 0;
  j->msg[0] = '\0';
  if (jpeek(j) != '{') return jexpected(j, "a JSON object");
  j->i++;
  if (jpeek(j) == '}') j->i++;
  else
    for (;;) {
      JItem it = {JN_NULL, 0, 0, 0, 0, 0};
      size_t klen;
      if (jpeek(j) != '"') return jexpected(j, "a member name");
      if (jstring(j, &it.key, &klen)) return -1;
      if (jpeek(j) != ':') return jexpected(j, "`:`");
      j->i++;
      int c = jpeek(j);
      if ((c == '{' || c == '[') ? jnested(j, &it) : jscalar(j, &it)) return -1;
      push_item(&j->top, &j->ntop, &j->captop, &it);
      c = jpeek(j);
      if (c == ',') j->i++;
      else if (c == '}') {
        j->i++;
        break;
      } else return jexpected(j, "`,` or `}`");
    }
  if (jpeek(j) != -1) return jfail(j, "text after the object at column %zu", j->i + 1);
  return 0;
}

static const char *jkey(const JLine *j, const JItem *it) { return j->sb + it->key; }
static const char *jstr(const JLine *j, const JItem *it) { return j->sb + it->at; }

/* A whole number without sign, fraction or exponent that fits in 64 bits. */
static bool jitem_u64(const JLine *j, const JItem *it, uint64_t *v) {
  if (it->kind != JN_NUM || !it->len) return false;
  uint64_t x = 0;
  for (size_t k = 0; k < it->len; k++) {
    int c = j->s[it->at + k];
    if (!is_digit(c) || x > (UINT64_MAX - (uint64_t)(c - '0')) / 10) return false;
    x = x * 10 + (uint64_t)(c - '0');
  }
  *v = x;
  return true;
}

/* A number or null (NaN); strtod stops where the checked token does. */
static bool jitem_num(const JLine *j, const JItem *it, double *v) {
  if (it->kind == JN_NULL) *v = NAN;
  else if (it->kind == JN_NUM) *v = strtod(j->s + it->at, NULL);
  else return false;
  return true;
}

/* The item's text for a message, shortened. */
static const char *jshow(const JLine *j, const JItem *it, char *buf, size_t n) {
  if (it->kind == JN_NUM) snprintf(buf, n, "%.*s", (int)(it->len < 40 ? it->len : 40), j->s + it->at);
  else if (it->kind == JN_STR) snprintf(buf, n, "\"%.40s\"", jstr(j, it));
  else snprintf(buf, n, "%s", it->kind == JN_NULL ? "null" : it->kind == JN_OBJ ? "an object" : "an array");
  return buf;
}

/* --- reading an output back ---------------------------------------------------------------- */

typedef struct Reader {
  const char *name;
  FILE *err;
  SweepDoc *doc;
  Interner in;                  /* keys, reasons and text values, in doc->arena */
  JLine j;
  int line;                     /* of the line being read, from 1 */
  const char **keys;            /* the first row's members, in order (interned) */
  int nkeys, at_rank, at_point, at_objective;
  uint64_t begin, end, expect;  /* the shard's slice, and the rows it promises */
  int caprows;
} Reader;

static int rfail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rfail(Reader *r, const char *fmt, ...) {
  va_list ap;
  fprintf(r->err, "%s:%d: error: ", r->name, r->line);
  va_start(ap, fmt);
  vfprintf(r->err, fmt, ap);
  va_end(ap);
  fputc('\n', r->err);
  return -1;
}

/* The metadata line's members.  ORDER MetaKey */
typedef enum {
  MK_VERSION, MK_SWEEP, MK_FILE, MK_OBJECTIVE, MK_SENSE, MK_KEEP, MK_POINTS, MK_SHARD, MK_EVALUATED, MK_KEPT,
  MK_DROPPED, MK_N
} MetaKey;
static const char *const meta_keys[MK_N] = {"llmp_sweep", "sweep", "file", "objective", "sense", "keep",
                                            "points", "shard", "evaluated", "kept", "dropped"};

static const char *intern_item(Reader *r, const JItem *it) { return intern(&r->in, jstr(&r->j, it), it->len); }

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (const char *const *)a, y = (uintptr_t) * (const char *const *)b;
  return x < y ? -1 : x > y;
}

/* The first of n interned strings that comes twice, or NULL. */
static const char *first_twice(const char **v, int n) {
  if (n < 2) return NULL;
  const char **s = xrealloc(NULL, (size_t)n * sizeof *s);
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_ptr);
  const char *twice = NULL;
  for (int i = 1; i < n && !twice; i++)
    if (s[i] == s[i - 1]) twice = s[i];
  free(s);
  return twice;
}

/* Finds each known member; an unknown one, one that comes twice or one missing is an error. */
static int meta_members(Reader *r, const JItem **at) {
  const JLine *j = &r->j;
  const char *unknown = NULL;
  for (int i = 0; i < j->ntop; i++) {
    const char *key = jkey(j, &j->top[i]);
    int k = 0;
    while (k < MK_N && strcmp(key, meta_keys[k])) k++;
    if (k == MK_N) {
      if (!unknown) unknown = key;
    } else if (at[k]) return rfail(r, "`%s` twice in the header line", key);
    else at[k] = &j->top[i];
  }
  if (!at[MK_VERSION]) return rfail(r, "not an output of llmp sweep: the first line has no `llmp_sweep`");
  if (unknown) return rfail(r, "unknown member `%.60s` in the header line", unknown);
  for (int k = 0; k < MK_N; k++)
    if (!at[k]) return rfail(r, "the header line has no `%s`", meta_keys[k]);
  return 0;
}

static int meta_u64(Reader *r, const JItem *it, const char *what, uint64_t max, uint64_t *v) {
  char buf[64];
  if (!jitem_u64(&r->j, it, v) || *v > max)
    return rfail(r, "`%s` is %s, not a whole number from 0 to %" PRIu64, what, jshow(&r->j, it, buf, sizeof buf), max);
  return 0;
}

static int meta_string(Reader *r, const JItem *it, const char *what, const char **v) {
  if (it->kind != JN_STR) return rfail(r, "`%s` is not a string", what);
  *v = intern_item(r, it);
  return 0;
}

/* "shard": [K, N] with 0 <= K < N. */
static int meta_shard(Reader *r, const JItem *it, SweepMeta *m) {
  uint64_t k, n;
  const JItem *kid = &r->j.kids[it->first];
  if (it->kind != JN_ARR || it->count != 2 || !jitem_u64(&r->j, &kid[0], &k) || !jitem_u64(&r->j, &kid[1], &n) ||
      n < 1 || n > INT_MAX || k >= n)
    return rfail(r, "`shard` is not [K, N] with 0 <= K < N");
  m->shard_k = (int)k;
  m->shard_n = (int)n;
  return 0;
}

/* "dropped": {"REASON": COUNT, ...}, each reason once. */
static int meta_dropped(Reader *r, const JItem *it) {
  SweepDoc *d = r->doc;
  if (it->kind != JN_OBJ) return rfail(r, "`dropped` is not an object of counts");
  d->dropped = arena_alloc(&d->arena, (size_t)it->count * sizeof *d->dropped);
  const char **reasons = arena_alloc(&d->arena, (size_t)it->count * sizeof *reasons);
  for (int i = 0; i < it->count; i++) {
    const JItem *kid = &r->j.kids[it->first + i];
    reasons[i] = intern(&r->in, jkey(&r->j, kid), strlen(jkey(&r->j, kid)));
    d->dropped[i].reason = reasons[i];
    if (meta_u64(r, kid, "dropped", UINT64_MAX, &d->dropped[i].count)) return -1;
  }
  const char *twice = first_twice(reasons, it->count);
  if (twice) return rfail(r, "the reason `%.60s` twice in `dropped`", twice);
  d->meta.dropped = d->dropped;
  d->meta.ndropped = it->count;
  return 0;
}

/* The counts agree with each other and with the shard's slice. */
static int meta_counts(Reader *r) {
  const SweepMeta *m = &r->doc->meta;
  sweep_shard_range(m->points, m->shard_k, m->shard_n, &r->begin, &r->end);
  if (m->evaluated != r->end - r->begin)
    return rfail(r, "shard %d/%d of %" PRIu64 " points has %" PRIu64 " points, but `evaluated` is %" PRIu64
                 ": an unfinished run?", m->shard_k, m->shard_n, m->points, r->end - r->begin, m->evaluated);
  uint64_t sum = m->kept;
  bool over = sum > m->evaluated;
  for (int i = 0; i < m->ndropped && !over; i++) {
    over = m->dropped[i].count > m->evaluated - sum;
    sum += over ? 0 : m->dropped[i].count;
  }
  if (over || sum != m->evaluated)
    return rfail(r, "`kept` and the `dropped` counts do not add up to `evaluated` (%" PRIu64 ")", m->evaluated);
  r->expect = m->kept < (uint64_t)m->keep ? m->kept : (uint64_t)m->keep;
  return 0;
}

static int read_meta(Reader *r) {
  const JItem *at[MK_N] = {0};
  SweepMeta *m = &r->doc->meta;
  uint64_t v;
  if (meta_members(r, at)) return -1;
  if (meta_u64(r, at[MK_VERSION], "llmp_sweep", UINT64_MAX, &v)) return -1;
  if (v != 1) return rfail(r, "`llmp_sweep` is %" PRIu64 ": this llmp reads version 1", v);
  if (meta_string(r, at[MK_SWEEP], "sweep", &m->sweep) || meta_string(r, at[MK_FILE], "file", &m->file) ||
      meta_string(r, at[MK_OBJECTIVE], "objective", &m->objective))
    return -1;
  const JItem *sense = at[MK_SENSE];
  if (sense->kind != JN_STR || (strcmp(jstr(&r->j, sense), "minimize") && strcmp(jstr(&r->j, sense), "maximize")))
    return rfail(r, "`sense` is not \"minimize\" or \"maximize\"");
  m->maximize = !strcmp(jstr(&r->j, sense), "maximize");
  if (meta_u64(r, at[MK_KEEP], "keep", INT_MAX, &v)) return -1;
  m->keep = (int)v;
  if (meta_u64(r, at[MK_POINTS], "points", UINT64_MAX, &m->points) || meta_shard(r, at[MK_SHARD], m) ||
      meta_u64(r, at[MK_EVALUATED], "evaluated", UINT64_MAX, &m->evaluated) ||
      meta_u64(r, at[MK_KEPT], "kept", UINT64_MAX, &m->kept) || meta_dropped(r, at[MK_DROPPED]))
    return -1;
  m->elapsed = NAN;
  r->doc->meta_line = r->line;
  return meta_counts(r);
}

/* The first row fixes the members every row has, in order. */
static int row_keys_first(Reader *r) {
  const JLine *j = &r->j;
  r->keys = xrealloc(NULL, (size_t)(j->ntop ? j->ntop : 1) * sizeof *r->keys);
  r->nkeys = j->ntop;
  r->at_rank = r->at_point = r->at_objective = -1;
  for (int i = 0; i < j->ntop; i++) {
    const char *key = jkey(j, &j->top[i]);
    r->keys[i] = intern(&r->in, key, strlen(key));
    if (!strcmp(key, "rank")) r->at_rank = i;
    else if (!strcmp(key, "point")) r->at_point = i;
    else if (!strcmp(key, "objective")) r->at_objective = i;
  }
  const char *twice = first_twice(r->keys, r->nkeys);
  if (twice) return rfail(r, "`%.60s` twice in a row", twice);
  if (r->at_rank < 0 || r->at_point < 0 || r->at_objective < 0)
    return rfail(r, "a row without `%s`", r->at_rank < 0 ? "rank" : r->at_point < 0 ? "point" : "objective");
  r->doc->row_line = r->line;
  return 0;
}

static int row_keys_same(Reader *r) {
  const JLine *j = &r->j;
  if (j->ntop != r->nkeys)
    return rfail(r, "%d members, but the row of line %d has %d: every row has the same", j->ntop, r->doc->row_line,
                 r->nkeys);
  for (int i = 0; i < j->ntop; i++)
    if (strcmp(jkey(j, &j->top[i]), r->keys[i]))
      return rfail(r, "`%.60s` where the row of line %d has `%.60s`: every row has the same members", jkey(j, &j->top[i]),
                   r->doc->row_line, r->keys[i]);
  return 0;
}

/* A field's value: a number, null (NaN) or text. */
static int row_field(Reader *r, const JItem *it, SweepField *f) {
  f->key = r->keys[it - r->j.top];
  f->str = NULL;
  f->num = NAN;
  if (it->kind == JN_STR) f->str = intern_item(r, it);
  else if (!jitem_num(&r->j, it, &f->num)) return rfail(r, "`%.60s` is not a number, a string or null", f->key);
  return 0;
}

static int read_row(Reader *r) {
  SweepDoc *d = r->doc;
  const JLine *j = &r->j;
  char buf[64];
  if (d->nrows == 0 ? row_keys_first(r) : row_keys_same(r)) return -1;
  if ((uint64_t)d->nrows >= r->expect)
    return rfail(r, "more rows than the header line's counts allow (%" PRIu64 ", the smaller of `kept` and `keep`)",
                 r->expect);
  SweepRow row = {0, NAN, r->nkeys - 3, NULL};
  uint64_t rank;
  const JItem *rk = &j->top[r->at_rank], *pt = &j->top[r->at_point], *ob = &j->top[r->at_objective];
  if (!jitem_u64(j, rk, &rank) || rank != (uint64_t)d->nrows + 1)
    return rfail(r, "`rank` is %s, expected %d: rows are written in rank order", jshow(j, rk, buf, sizeof buf), d->nrows + 1);
  if (!jitem_u64(j, pt, &row.point) || row.point < r->begin || row.point >= r->end)
    return rfail(r, "`point` %s is not in [%" PRIu64 ", %" PRIu64 "), the points of shard %d/%d",
                 jshow(j, pt, buf, sizeof buf), r->begin, r->end, d->meta.shard_k, d->meta.shard_n);
  if (!jitem_num(j, ob, &row.objective)) return rfail(r, "`objective` is not a number or null");
  row.fields = arena_alloc(&d->arena, (size_t)(row.nfields ? row.nfields : 1) * sizeof *row.fields);
  for (int i = 0, f = 0; i < j->ntop; i++)
    if (i != r->at_rank && i != r->at_point && i != r->at_objective && row_field(r, &j->top[i], &row.fields[f++]))
      return -1;
  if (d->nrows && sweep_row_cmp(&d->rows[d->nrows - 1], &row, d->meta.maximize) >= 0)
    return rfail(r, "point %" PRIu64 " ranks before point %" PRIu64 " of the row above: rows are written in rank order",
                 row.point, d->rows[d->nrows - 1].point);
  if (d->nrows == r->caprows) {
    r->caprows = r->caprows ? 2 * r->caprows : 64;
    d->rows = xrealloc(d->rows, (size_t)r->caprows * sizeof *d->rows);
  }
  d->rows[d->nrows++] = row;
  return 0;
}

/* Reads one line (without its newline) into *buf, NUL-terminated: 1, 0 at the end of the
 * input, -1 for a line longer than LINE_LIMIT, -2 for one holding a NUL byte. */
static int read_line(FILE *in, char **buf, size_t *cap, size_t *len) {
  size_t n = 0;
  int c;
  bool nul = false;
  while ((c = getc(in)) != EOF && c != '\n') {
    if (n >= LINE_LIMIT) return -1;
    if (n + 2 > *cap) {
      *cap = *cap ? *cap * 2 : 4096;
      *buf = xrealloc(*buf, *cap);
    }
    nul |= c == 0;
    (*buf)[n++] = (char)c;
  }
  if (c == EOF && n == 0) return 0;
  if (!*cap) {
    *cap = 4096;
    *buf = xrealloc(*buf, *cap);
  }
  (*buf)[n] = '\0';
  *len = n;
  return nul ? -2 : 1;
}

static bool blank(const char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\r') s++;
  return !*s;
}

/* Reads every line; returns 0 or -1 (reported). */
static int read_lines(Reader *r, FILE *in) {
  char *line = NULL;
  size_t cap = 0, len = 0;
  int got, rc = 0;
  bool have_meta = false;
  while (!rc && (got = read_line(in, &line, &cap, &len)) != 0) {
    r->line++;
    if (got == -1) rc = rfail(r, "a line longer than %d MiB", LINE_LIMIT >> 20);
    else if (got == -2) rc = rfail(r, "a NUL byte in the line");
    else if (blank(line)) continue;
    else if (jline_parse(&r->j, line, len)) rc = rfail(r, "%s", r->j.msg);
    else rc = have_meta ? read_row(r) : read_meta(r);
    have_meta = true;
  }
  free(line);
  if (rc) return -1;
  if (ferror(in)) return rfail(r, "cannot read the file: %s", strerror(errno));
  r->line++;
  if (!have_meta) return rfail(r, "an empty file: expected the output of llmp sweep --format json");
  if ((uint64_t)r->doc->nrows < r->expect)
    return rfail(r, "the file ends after %d rows, but its header line promises %" PRIu64
                 " (the smaller of `kept` and `keep`): a truncated file?", r->doc->nrows, r->expect);
  return 0;
}

int sweep_read(FILE *in, const char *name, SweepDoc *doc, FILE *err) {
  memset(doc, 0, sizeof *doc);
  arena_init(&doc->arena);
  doc->meta.elapsed = NAN;
  if (!in) return -1;
  Reader r;
  memset(&r, 0, sizeof r);
  r.name = name ? name : "(input)";
  r.err = err ? err : stderr;
  r.doc = doc;
  intern_init(&r.in, &doc->arena);
  int rc = read_lines(&r, in);
  free(r.j.sb);
  free(r.j.top);
  free(r.j.kids);
  free(r.keys);
  return rc;
}

void sweep_doc_free(SweepDoc *doc) {
  if (!doc) return;
  arena_free(&doc->arena);
  free(doc->rows);
  memset(doc, 0, sizeof *doc);
}

/* --- llmp merge -------------------------------------------------------------------------------- */

typedef struct Merge {
  const char *const *paths;
  SweepDoc *docs;
  int ndocs;
  int *order;                   /* the docs by shard */
  SweepMeta meta;
  SweepDrop *drops;
  SweepRow *rows;
  int nrows;
} Merge;

static void merge_free(Merge *m) {
  for (int i = 0; m->docs && i < m->ndocs; i++) sweep_doc_free(&m->docs[i]);
  free(m->docs);
  free(m->order);
  free(m->drops);
  free(m->rows);
}

/* Doc i against doc 0: the same sweep, split the same way, with the same fields. */
static int merge_same(const Merge *m, int i, FILE *err) {
  const SweepDoc *a = &m->docs[0], *b = &m->docs[i];
  const SweepMeta *x = &a->meta, *y = &b->meta;
  const char *p = m->paths[i], *p0 = m->paths[0];
  char what[320] = "";
  if (strcmp(x->sweep, y->sweep)) snprintf(what, sizeof what, "sweep `%.80s`, but %s is of sweep `%.80s`", y->sweep, p0, x->sweep);
  else if (strcmp(x->objective, y->objective))
    snprintf(what, sizeof what, "objective `%.80s`, but %s's is `%.80s`", y->objective, p0, x->objective);
  else if (x->maximize != y->maximize)
    snprintf(what, sizeof what, "sense %s, but %s's is %s", sense_of(y), p0, sense_of(x));
  else if (x->keep != y->keep) snprintf(what, sizeof what, "keep %d, but %s's is %d", y->keep, p0, x->keep);
  else if (x->points != y->points)
    snprintf(what, sizeof what, "%" PRIu64 " points, but %s has %" PRIu64, y->points, p0, x->points);
  else if (x->shard_n != y->shard_n)
    snprintf(what, sizeof what, "shard %d/%d, but %s is shard %d/%d", y->shard_k, y->shard_n, p0, x->shard_k, x->shard_n);
  if (what[0]) {
    fprintf(err, "%s:%d: error: %s: not shards of one sweep\n", p, b->meta_line, what);
    return -1;
  }
  if (!a->nrows || !b->nrows) return 0;
  const SweepRow *r = &a->rows[0], *s = &b->rows[0];
  for (int f = 0; f < r->nfields || f < s->nfields; f++) {
    const char *k = f < r->nfields ? r->fields[f].key : "(none)", *l = f < s->nfields ? s->fields[f].key : "(none)";
    if (strcmp(k, l)) {
      fprintf(err, "%s:%d: error: field `%.80s` where the rows of %s have `%.80s`: not shards of one sweep\n", p,
              b->row_line, l, p0, k);
      return -1;
    }
  }
  return 0;
}

/* A doc's shard, for sorting the docs by shard (and by position among duplicates). */
typedef struct ShardAt {
  int k, doc;
} ShardAt;

static int cmp_shard_at(const void *a, const void *b) {
  const ShardAt *x = a, *y = b;
  return x->k != y->k ? (x->k < y->k ? -1 : 1) : (x->doc < y->doc ? -1 : x->doc > y->doc);
}

/* Appends ", K" or ", K-L" to a list of missing shards (at most 8 ranges, then "..."). */
static void missing_range(char *buf, size_t n, int *nranges, int from, int to) {
  size_t len = strlen(buf);
  if (++*nranges > 8) {
    if (*nranges == 9) snprintf(buf + len, n - len, ", ...");
    return;
  }
  const char *sep = len ? ", " : "";
  if (from == to) snprintf(buf + len, n - len, "%s%d", sep, from);
  else snprintf(buf + len, n - len, "%s%d-%d", sep, from, to);
}

/* Each shard 0 .. N-1 once: order holds the docs sorted by shard. */
static int merge_cover(Merge *m, FILE *err) {
  int n = m->docs[0].meta.shard_n, bad = 0, nranges = 0, next = 0;
  char missing[256] = "";
  ShardAt *at = xrealloc(NULL, (size_t)m->ndocs * sizeof *at);
  for (int i = 0; i < m->ndocs; i++) at[i] = (ShardAt){m->docs[i].meta.shard_k, i};
  qsort(at, (size_t)m->ndocs, sizeof *at, cmp_shard_at);
  m->order = xrealloc(NULL, (size_t)m->ndocs * sizeof *m->order);
  for (int i = 0; i < m->ndocs; i++) m->order[i] = at[i].doc;
  free(at);
  for (int i = 0; i < m->ndocs; i++) {
    const SweepDoc *d = &m->docs[m->order[i]];
    int k = d->meta.shard_k;
    if (i && k == m->docs[m->order[i - 1]].meta.shard_k) {
      fprintf(err, "%s:%d: error: shard %d/%d again: %s is shard %d/%d too\n", m->paths[m->order[i]], d->meta_line, k,
              n, m->paths[m->order[i - 1]], k, n);
      bad = 1;
      continue;
    }
    if (k > next) missing_range(missing, sizeof missing, &nranges, next, k - 1);
    next = k + 1;
  }
  if (next < n) missing_range(missing, sizeof missing, &nranges, next, n - 1);
  if (nranges) {
    fprintf(err, "llmp merge: error: shard%s %s of %d missing\n", nranges > 1 || strchr(missing, '-') ? "s" : "",
            missing, n);
    bad = 1;
  }
  return bad ? -1 : 0;
}

/* The dropped reasons of every shard, in shard order, summed. */
static void merge_drops(Merge *m) {
  int cap = 0, nd = 0;
  for (int i = 0; i < m->ndocs; i++) cap += m->docs[i].meta.ndropped;
  m->drops = xrealloc(NULL, (size_t)(cap ? cap : 1) * sizeof *m->drops);
  for (int i = 0; i < m->ndocs; i++) {
    const SweepMeta *s = &m->docs[m->order[i]].meta;
    for (int r = 0; r < s->ndropped; r++) {
      int at = 0;             /* a few reasons: a linear search */
      while (at < nd && strcmp(m->drops[at].reason, s->dropped[r].reason)) at++;
      if (at == nd) m->drops[nd++] = (SweepDrop){s->dropped[r].reason, 0};
      m->drops[at].count += s->dropped[r].count;
    }
  }
  m->meta.dropped = m->drops;
  m->meta.ndropped = nd;
}

/* The merged metadata, counts and rows: what one machine would have written. */
static void merge_combine(Merge *m) {
  const SweepDoc *first = &m->docs[m->order[0]];
  size_t total = 0;
  m->meta = first->meta;
  m->meta.shard_k = 0;
  m->meta.shard_n = 1;
  m->meta.evaluated = m->meta.kept = 0;
  m->meta.elapsed = NAN;
  for (int i = 0; i < m->ndocs; i++) {
    m->meta.evaluated += m->docs[i].meta.evaluated;   /* the slices tile the points: no overflow */
    m->meta.kept += m->docs[i].meta.kept;
    total += (size_t)m->docs[i].nrows;
  }
  merge_drops(m);
  m->rows = xrealloc(NULL, (total ? total : 1) * sizeof *m->rows);
  size_t n = 0;
  for (int i = 0; i < m->ndocs; i++)
    for (int r = 0; r < m->docs[i].nrows; r++) m->rows[n++] = m->docs[i].rows[r];
  if (n > 1) qsort(m->rows, n, sizeof *m->rows, m->meta.maximize ? cmp_maximize : cmp_minimize);
  m->nrows = n < (size_t)m->meta.keep ? (int)n : m->meta.keep;
}

/* Reads and checks every file; returns 0, or -1 after reporting every problem found. */
static int merge_load(Merge *m, const char *const *paths, int npaths, FILE *err) {
  memset(m, 0, sizeof *m);
  m->paths = paths;
  m->ndocs = npaths;
  m->docs = xrealloc(NULL, (size_t)(npaths ? npaths : 1) * sizeof *m->docs);
  memset(m->docs, 0, (size_t)(npaths ? npaths : 1) * sizeof *m->docs);
  int bad = 0;
  for (int i = 0; i < npaths; i++) {
    FILE *f = fopen(paths[i], "r");
    if (!f) {
      fprintf(err, "%s: error: cannot read: %s\n", paths[i], strerror(errno));
      bad = 1;
      continue;
    }
    bad |= sweep_read(f, paths[i], &m->docs[i], err) != 0;
    fclose(f);
  }
  if (!npaths) fprintf(err, "llmp merge: error: no files to merge\n");
  if (bad || !npaths) return -1;
  for (int i = 1; i < npaths; i++) bad |= merge_same(m, i, err) != 0;
  if (bad || merge_cover(m, err)) return -1;
  merge_combine(m);
  return 0;
}

int sweep_merge(const char *const *paths, int npaths, SweepFormat fmt, FILE *out, FILE *err) {
  Merge m;
  err = err ? err : stderr;
  int rc = merge_load(&m, paths, npaths, err) ? 1 : 0;
  if (!rc && sweep_write(out, fmt, &m.meta, m.rows, m.nrows)) {
    fprintf(err, "llmp merge: error: cannot write the output\n");
    rc = 1;
  }
  merge_free(&m);
  return rc;
}

static const char usage_merge[] =
    "usage: llmp merge [OPTIONS] SHARD.jsonl...\n"
    "\n"
    "Combines the outputs of the shards of one sweep (`llmp sweep --shard K/N --out\n"
    "FILE.jsonl`, JSON Lines) into what the sweep run on one machine writes: the counts\n"
    "summed, the points ranked again, the best `keep` kept. Every shard 0 .. N-1 must be\n"
    "given, once. Exit status 0; 1 when a file is malformed, a shard is missing or given\n"
    "twice, or the files are not of one sweep; 2 for a bad command line.\n"
    "\n"
    "options:\n"
    "  --format FORMAT  table (default), csv or json (JSON Lines, as the shards)\n"
    "  --out FILE       write to FILE instead of standard output; without --format, the\n"
    "                   format follows its extension (.csv; .jsonl or .json; else table)\n"
    "  -h, --help       this text\n";

static int merge_usage_error(const char *fmt, const char *arg) {
  fputs("llmp merge: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nTry `llmp merge --help`.\n", stderr);
  return 2;
}

typedef struct MergeArgs {
  const char **files;
  int nfiles;
  const char *format, *out;
} MergeArgs;

/* Returns -1 to go on, else an exit status. */
static int merge_args(int argc, char **argv, MergeArgs *a) {
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i], **opt = NULL;
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      fputs(usage_merge, stdout);
      return 0;
    }
    if (!strcmp(s, "--format") || !strncmp(s, "--format=", 9)) opt = &a->format;
    else if (!strcmp(s, "--out") || !strcmp(s, "-o") || !strncmp(s, "--out=", 6)) opt = &a->out;
    if (opt) {
      const char *eq = strchr(s, '=');
      if (!eq && i + 1 == argc) return merge_usage_error("%s needs a value", s);
      *opt = eq ? eq + 1 : argv[++i];
    } else if (!strcmp(s, "--")) {
      while (++i < argc) a->files[a->nfiles++] = argv[i];
    } else if (s[0] == '-' && s[1]) return merge_usage_error("unknown option `%s`", s);
    else a->files[a->nfiles++] = s;
  }
  if (!a->nfiles) return merge_usage_error("%s", "no input files");
  return -1;
}

static int merge_run(const MergeArgs *a) {
  SweepFormat fmt = a->out ? sweep_format_of_path(a->out, SWEEP_TABLE) : SWEEP_TABLE;
  if (a->format && sweep_format_parse(a->format, &fmt))
    return merge_usage_error("unknown format `%s` (table, csv or json)", a->format);
  Merge m;
  int rc = 1;
  if (!merge_load(&m, a->files, a->nfiles, stderr)) {
    FILE *out = a->out ? fopen(a->out, "w") : stdout;
    if (!out) fprintf(stderr, "%s: error: cannot write: %s\n", a->out, strerror(errno));
    else {
      rc = sweep_write(out, fmt, &m.meta, m.rows, m.nrows) ? 1 : 0;
      if (out != stdout && fclose(out)) rc = 1;
      if (rc) fprintf(stderr, "%s: error: cannot write the output\n", a->out ? a->out : "llmp merge");
    }
  }
  merge_free(&m);
  return rc;
}

int merge_main(int argc, char **argv) {
  MergeArgs a = {NULL, 0, NULL, NULL};
  a.files = xrealloc(NULL, (size_t)(argc > 0 ? argc : 1) * sizeof *a.files);
  int rc = merge_args(argc, argv, &a);
  if (rc < 0) rc = merge_run(&a);
  free(a.files);
  return rc;
}

/* --- shards ---------------------------------------------------------------------------------- */

void sweep_shard_range(uint64_t points, int k, int n, uint64_t *begin, uint64_t *end) {
  if (n < 1 || k < 0 || k >= n) {
    *begin = *end = 0;
    return;
  }
  /* P = q*n + r: k*P/n = k*q + k*r/n, and k*r < n*n < 2^62 */
  uint64_t un = (uint64_t)n, q = points / un, r = points % un;
  *begin = (uint64_t)k * q + (uint64_t)k * r / un;
  *end = (uint64_t)(k + 1) * q + (uint64_t)(k + 1) * r / un;
}

/* A count from 0 to INT_MAX in decimal, nothing else. */
static bool parse_count(const char *s, size_t n, int *v) {
  if (!n || n > 10) return false;
  long long x = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_digit(s[i])) return false;
    x = x * 10 + (s[i] - '0');
  }
  if (x > INT_MAX) return false;
  *v = (int)x;
  return true;
}

static int shard_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int shard_fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* The launchers --shard auto knows, in the order it tries them.  A launcher is there when its
 * rank variable is set; base, when not NULL, is subtracted from it. */
static const struct {
  const char *name, *rank, *base, *size;
} launchers[] = {
    {"a Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"},
    {"Slurm tasks", "SLURM_PROCID", NULL, "SLURM_NTASKS"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", NULL, "OMPI_COMM_WORLD_SIZE"},
    {"PMI", "PMI_RANK", NULL, "PMI_SIZE"},
};
enum { NLAUNCHERS = sizeof launchers / sizeof launchers[0] };

static const char *env_value(SweepGetenv env, const char *name) {
  const char *v = name ? env(name) : NULL;
  return v && *v ? v : NULL;
}

/* K and N from launcher l, whose rank variable is set. */
static int shard_from(int l, SweepGetenv env, int *k, int *n, char *err, size_t errlen) {
  const char *names[3] = {launchers[l].rank, launchers[l].base, launchers[l].size};
  int v[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    if (!names[i]) continue;
    const char *s = env_value(env, names[i]);
    if (!s) return shard_fail(err, errlen, "--shard auto: %s is set but %s is not", names[0], names[i]);
    if (!parse_count(s, strlen(s), &v[i]))
      return shard_fail(err, errlen, "--shard auto: %s=%.40s is not a whole number", names[i], s);
  }
  int rank = v[0] - v[1];
  if (v[2] < 1) return shard_fail(err, errlen, "--shard auto: %s=%d: there must be at least one shard", names[2], v[2]);
  if (rank < 0 || rank >= v[2]) {
    if (names[1])
      return shard_fail(err, errlen, "--shard auto: %s - %s = %d is not in [0, %s = %d): the array must be contiguous (--array=0-%d)",
                        names[0], names[1], rank, names[2], v[2], v[2] - 1);
    return shard_fail(err, errlen, "--shard auto: %s=%d is not below %s=%d", names[0], v[0], names[2], v[2]);
  }
  *k = rank;
  *n = v[2];
  return 0;
}

static int shard_auto(SweepGetenv env, int *k, int *n, char *err, size_t errlen) {
  for (int l = 0; l < NLAUNCHERS; l++)
    if (env_value(env, launchers[l].rank)) return shard_from(l, env, k, n, err, errlen);
  return shard_fail(err, errlen,
                    "--shard auto: no launcher found: none of SLURM_ARRAY_TASK_ID (a Slurm job array, with "
                    "SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT), SLURM_PROCID (srun, with SLURM_NTASKS), "
                    "OMPI_COMM_WORLD_RANK (Open MPI, with OMPI_COMM_WORLD_SIZE) or PMI_RANK (MPICH, with PMI_SIZE) "
                    "is set; give --shard K/N");
}

int sweep_shard_parse_env(const char *spec, SweepGetenv env, int *k, int *n, char *err, size_t errlen) {
  if (!spec) return shard_fail(err, errlen, "--shard needs K/N or auto");
  if (!strcmp(spec, "auto")) return shard_auto(env, k, n, err, errlen);
  const char *slash = strchr(spec, '/');
  int kk, nn;
  if (!slash || !parse_count(spec, (size_t)(slash - spec), &kk) || !parse_count(slash + 1, strlen(slash + 1), &nn))
    return shard_fail(err, errlen, "--shard `%.40s`: expected K/N (shard K of N, from 0: 0/4 .. 3/4) or auto", spec);
  if (nn < 1) return shard_fail(err, errlen, "--shard `%s`: N must be at least 1", spec);
  if (kk >= nn)
    return shard_fail(err, errlen, "--shard `%s`: K must be below N (shards count from 0: 0/%d .. %d/%d)", spec, nn,
                      nn - 1, nn);
  *k = kk;
  *n = nn;
  return 0;
}

static const char *process_getenv(const char *name) { return getenv(name); }

int sweep_shard_parse(const char *spec, int *k, int *n, char *err, size_t errlen) {
  return sweep_shard_parse_env(spec, process_getenv, k, n, err, errlen);
}

/* --- progress -------------------------------------------------------------------------------- */

enum { BAR_WIDTH = 20 };

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "42s", "1m05s", "3h07m" (buf: at least 32 bytes). */
static const char *duration_text(char *buf, double s) {
  double r = floor(s + 0.5);
  if (r > 99999 * 3600.0) r = 99999 * 3600.0;
  long t = (long)r;
  if (t < 60) snprintf(buf, 32, "%lds", t);
  else if (t < 3600) snprintf(buf, 32, "%ldm%02lds", t / 60, t % 60);
  else snprintf(buf, 32, "%ldh%02ldm", t / 3600, t / 60 % 60);
  return buf;
}

const char *sweep_progress_text(char *buf, size_t n, uint64_t done, uint64_t total, double elapsed) {
  char bar[BAR_WIDTH + 1], a[32], b[32], c[32], d[32];
  if (done > total) done = total;
  double frac = total ? (double)done / (double)total : 1;
  int filled = (int)(frac * BAR_WIDTH), pct = (int)(frac * 100);
  if (done < total && pct > 99) pct = 99;
  for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < filled ? '#' : '.';
  bar[BAR_WIDTH] = '\0';
  double rate = elapsed > 0 ? (double)done / elapsed : 0;
  int len = snprintf(buf, n, "[%s] %3d%%  %s/%s points  %s/s", bar, pct, grouped(a, done), grouped(b, total),
                     rate_text(c, rate));
  if (rate > 0 && done < total && len >= 0 && (size_t)len < n)
    snprintf(buf + len, n - (size_t)len, "  %s left", duration_text(d, (double)(total - done) / rate));
  return buf;
}

void sweep_progress_start_on(SweepProgress *p, uint64_t total, FILE *out, bool enabled, SweepClock clock) {
  *p = (SweepProgress){out, enabled && out, clock ? clock : monotonic_seconds, total, 0, 0, false};
  p->start = p->last = p->clock();
}

void sweep_progress_start(SweepProgress *p, uint64_t total) {
  sweep_progress_start_on(p, total, stderr, isatty(fileno(stderr)) == 1, monotonic_seconds);
}

void sweep_progress_update(SweepProgress *p, uint64_t done) {
  if (!p->enabled) return;
  double now = p->clock();
  if (now - p->start <= 1.0 || (p->drawn && now - p->last < 0.1)) return;
  char text[200];
  fprintf(p->out, "\r%s\033[K", sweep_progress_text(text, sizeof text, done, p->total, now - p->start));
  fflush(p->out);
  p->last = now;
  p->drawn = true;
}

void sweep_progress_finish(SweepProgress *p) {
  if (!p->enabled || !p->drawn) return;
  fputs("\r\033[K", p->out);
  fflush(p->out);
  p->drawn = false;
}
