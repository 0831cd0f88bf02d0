/* sweep_write.c - a sweep's result written as a table, CSV or JSON Lines (sweep_io.h has
 * each format's rules).  Values go through emit.h: numbers are the shortest text that reads
 * back as the same double (as llmp run --format json writes them), so a row read back is
 * bit-identical and a merge ranks exactly what one machine ranked. */
#include "sweep_io.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "report/emit.h"
#include "report/report.h"
#include "sweep_io_internal.h"

/* --- text helpers -------------------------------------------------------------------------- */

/* A number for JSON (json) or CSV: NaN null or empty, infinities 1e999 or inf. */
static const char *num_text(char *buf, size_t n, double x, bool json) {
  if (isnan(x)) return json ? "null" : "";
  if (isinf(x)) return x > 0 ? (json ? "1e999" : "inf") : (json ? "-1e999" : "-inf");
  return emit_shortest(buf, n, x);
}

/* A field that is not a string, for JSON (json) or CSV: true/false, or num_text's number. */
static const char *scalar_text(char *buf, size_t n, const SweepField *f, bool json) {
  return f->flag ? (f->num != 0 ? "true" : "false") : num_text(buf, n, f->num, json);
}

const char *sweep_grouped(char *buf, uint64_t v) {
  char digits[24];
  int nd = snprintf(digits, sizeof digits, "%" PRIu64, v), o = 0;
  for (int i = 0; i < nd; i++) {
    if (i && (nd - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = '\0';
  return buf;
}

const char *sweep_rate_text(char *buf, double r) {
  static const char *const prefix[] = {"", " k", " M", " G", " T"};
  int p = 0;
  while (p < 4 && fabs(r) >= 999.95) {
    r /= 1000;
    p++;
  }
  if (!p && fabs(r) < 10 && r != 0)
    snprintf(buf, 32, "%.2g", r);
  else
    snprintf(buf, 32, p ? "%.1f%s" : "%.0f%s", r, prefix[p]);
  return buf;
}

/* Text for a `# key: value` line: control characters become spaces. */
static void comment_text(FILE *out, const char *s) {
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) fputc(*p < 0x20 ? ' ' : *p, out);
}

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
  if (f->flag) return f->num != 0 ? "true" : "false";
  double v = f->num;
  if (isnan(v)) return "-";
  /* clang-format off */
  if (key_is_bytes(key)) one_decimal(buf, n, v / (1024.0 * 1024 * 1024), " GiB");
  else if (key_is_fraction(key)) one_decimal(buf, n, 100 * v, " %");
  else if (fabs(v) < 1e15 && (v == floor(v) || fabs(v) >= 1e4)) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, "%.4g", v);
  /* clang-format on */
  return buf;
}

/* The lines above the rows; the dropped points on one line (wide) or one line each. */
static void table_header(FILE *out, const SweepMeta *m, bool wide) {
  char a[32], b[32], c[32], d[32];
  uint64_t dropped = 0;
  for (int i = 0; i < m->ndropped; i++) dropped += m->dropped[i].count;
  fprintf(out, "sweep %s (%s): %s %s, keep %d\n", m->sweep ? m->sweep : "?", m->file ? m->file : "?", sweep_sense(m),
          m->objective ? m->objective : "?", m->keep);
  if (m->shard_n > 1)
    fprintf(out, "  shard %d/%d of %s points:", m->shard_k, m->shard_n, sweep_grouped(a, m->points));
  else
    fprintf(out, "  %s points:", sweep_grouped(a, m->points));
  fprintf(out, " %s evaluated, %s kept, %s dropped\n", sweep_grouped(b, m->evaluated), sweep_grouped(c, m->kept),
          sweep_grouped(d, dropped));
  bool first = true;
  size_t w = 0;
  for (int i = 0; i < m->ndropped && !wide; i++)
    if (m->dropped[i].count && strlen(sweep_grouped(a, m->dropped[i].count)) > w) w = strlen(a);
  for (int i = 0; i < m->ndropped; i++) {
    if (!m->dropped[i].count) continue;
    const char *why = m->dropped[i].reason ? m->dropped[i].reason : "";
    if (wide)
      fprintf(out, "%s%s `%s`", first ? "  dropped: " : ", ", sweep_grouped(a, m->dropped[i].count), why);
    else
      fprintf(out, "%s%*s  %s\n", first ? "  dropped: " : "           ", (int)w, sweep_grouped(a, m->dropped[i].count),
              why);
    first = false;
  }
  if (!first && wide) fputc('\n', out);
  if (isfinite(m->elapsed) && m->elapsed >= 0) {
    fprintf(out, "  %s", report_time(a, sizeof a, m->elapsed));
    if (m->elapsed > 0) fprintf(out, ", %s points/s", sweep_rate_text(b, (double)m->evaluated / m->elapsed));
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
  if (right)
    fprintf(out, "%*s%s", pad, "", text);
  else if (last)
    fputs(text, out);
  else
    fprintf(out, "%s%*s", text, pad, "");
}

static void table_rows(FILE *out, const SweepRow *rows, int n, const char *first) {
  int nf = rows[0].nfields;
  size_t *w = xmalloc((size_t)(nf + 1) * sizeof *w);
  table_widths(rows, n, nf, w);
  table_put(out, first, w[0], true, nf == 0, true);
  for (int j = 0; j < nf; j++)
    table_put(out, rows[0].fields[j].key ? rows[0].fields[j].key : "", w[j + 1],
              !rows[0].fields[j].str && !rows[0].fields[j].flag, j == nf - 1, false);
  fputc('\n', out);
  char buf[64];
  for (int i = 0; i < n; i++) {
    snprintf(buf, sizeof buf, "%d", i + 1);
    table_put(out, buf, w[0], true, nf == 0, true);
    for (int j = 0; j < nf; j++) {
      const char *text = j < rows[i].nfields ? table_cell(buf, sizeof buf, &rows[i].fields[j]) : "-";
      table_put(out, text, w[j + 1], !rows[0].fields[j].str && !rows[0].fields[j].flag, j == nf - 1, false);
    }
    fputc('\n', out);
  }
  free(w);
}

static void write_table(FILE *out, const SweepMeta *m, const SweepRow *rows, int n) {
  table_header(out, m, true);
  fputc('\n', out);
  if (n > 0)
    table_rows(out, rows, n, "rank");
  else
    fputs(m->keep ? "no point met every require\n" : "keep 0: no rows\n", out);
  if (m->nbest > 0) {
    fprintf(out, "\nbest at each %s:\n", m->best_axes ? m->best_axes : "structure");
    table_rows(out, m->best, m->nbest, "#");
  }
}

/* --- the table in 100 columns ---------------------------------------------------------------- */

enum { TABLE_COLUMNS = 100 };

/* The figures in the order people ask for them, and their short names; 't': a time. */
static const struct {
  const char *key, *name;
  char kind;
} figures[] = {
    {"iteration_s", "iteration", 't'},  {"tokens_per_s", "tokens/s", 'n'},    {"days_per_1T_tokens", "days/1T", 'n'},
    {"mfu", "MFU", 'n'},
    {"memory.peak", "memory", 'n'},     {"tflops_per_gpu", "TFLOP/s", 'n'},   {"bubble_s", "bubble", 't'},
    {"dp_comm_s", "DP comm", 't'},      {"micro_batches", "micro-batches", 'n'}, {"fits", "fits", 'n'},
};

/* Short names of the plan's fields; others lose their "plan." only. */
static const char *const short_names[][2] = {
    {"plan.micro_batch", "mb"},    {"plan.sequence_parallel", "sp"},      {"plan.virtual_stages", "vs"},
    {"plan.global_batch", "gbs"},  {"plan.overlap_tp", "ovl_tp"},         {"plan.overlap_pp", "ovl_pp"},
    {"plan.overlap_dp", "ovl_dp"}, {"plan.overlap_ep", "ovl_ep"}, {"plan.dp_bucket_elements", "bucket"},
};

static bool key_is_plan(const char *k) {
  return !strncmp(k, "plan.", 5) || !strncmp(k, "model.", 6) || !strncmp(k, "cluster.", 8);
}

static const char *short_name(const char *k) {
  for (size_t i = 0; i < sizeof short_names / sizeof short_names[0]; i++)
    if (!strcmp(k, short_names[i][0])) return short_names[i][1];
  return strncmp(k, "plan.", 5) ? k : k + 5;
}

typedef struct Col {
  int field;
  const char *name;
  char kind;
  size_t width;
  bool right;
} Col;

static const char *compact_cell(char *buf, size_t n, const SweepField *f, char kind) {
  if (kind == 't' && !f->str && !f->flag && isfinite(f->num)) return report_time(buf, (unsigned)n, f->num);
  return table_cell(buf, n, f);
}

/* Whether field j reads the same in every row. */
static bool same_in_all(const SweepRow *rows, int n, int j) {
  char a[64], b[64];
  const char *first = table_cell(a, sizeof a, &rows[0].fields[j]);
  for (int i = 1; i < n; i++)
    if (j >= rows[i].nfields || strcmp(first, table_cell(b, sizeof b, &rows[i].fields[j]))) return false;
  return true;
}

static Col make_col(const SweepRow *rows, int n, int j, const char *name, char kind) {
  char buf[64];
  Col c = {j, name, kind, strlen(name), !rows[0].fields[j].str && !rows[0].fields[j].flag};
  for (int i = 0; i < n; i++) {
    size_t l = j < rows[i].nfields ? strlen(compact_cell(buf, sizeof buf, &rows[i].fields[j], kind)) : 1;
    if (l > c.width) c.width = l;
  }
  return c;
}

/* The plan's fields the same in every row, "  every row: pp = 1, schedule = 1f1b", wrapped. */
static void same_line(FILE *out, const SweepRow *rows, const bool *same) {
  char buf[64];
  size_t col = 0;
  for (int j = 0; j < rows[0].nfields; j++) {
    if (!same[j]) continue;
    const char *name = short_name(rows[0].fields[j].key), *v = table_cell(buf, sizeof buf, &rows[0].fields[j]);
    size_t len = strlen(name) + strlen(v) + 5;
    if (!col)
      col = (size_t)fprintf(out, "  every row: ");
    else if (col + len > TABLE_COLUMNS)
      col = (size_t)fprintf(out, ",\n             ") - 2;
    else
      col += (size_t)fprintf(out, ", ");
    col += (size_t)fprintf(out, "%s = %s", name, v);
  }
  if (col) fputc('\n', out);
}

/* The columns: the plan's fields that differ, then the figures by figures[], then any other
 * field, while the line fits TABLE_COLUMNS (the plan's fields always). */
static int compact_cols(const SweepRow *rows, int n, Col *cols, bool *same, size_t rank_width) {
  int nf = rows[0].nfields, nc = 0;
  size_t used = rank_width;
  bool *taken = xcalloc((size_t)nf + 1, 1);
  for (int j = 0; j < nf; j++) {
    const char *k = rows[0].fields[j].key;
    if (!key_is_plan(k)) continue;
    taken[j] = true;
    if ((same[j] = same_in_all(rows, n, j))) continue;
    cols[nc] = make_col(rows, n, j, short_name(k), 'n');
    used += 2 + cols[nc++].width;
  }
  size_t nfig = sizeof figures / sizeof figures[0];
  for (size_t q = 0; q <= nfig; q++)
    for (int j = 0; j < nf; j++) {
      const char *k = rows[0].fields[j].key;
      if (taken[j] || (q < nfig && strcmp(k, figures[q].key))) continue;
      taken[j] = true;
      if (rows[0].fields[j].flag && same_in_all(rows, n, j)) continue; /* fits, where all do */
      Col c = make_col(rows, n, j, q < nfig ? figures[q].name : k, q < nfig ? figures[q].kind : 'n');
      if (used + 2 + c.width > TABLE_COLUMNS) continue;
      cols[nc++] = c;
      used += 2 + c.width;
    }
  free(taken);
  return nc;
}

static void compact_rows(FILE *out, const SweepRow *rows, int n, const char *first) {
  int nf = rows[0].nfields;
  char buf[64];
  size_t rw = (size_t)snprintf(buf, sizeof buf, "%d", n);
  if (rw < 4) rw = 4;
  Col *cols = xcalloc((size_t)nf + 1, sizeof *cols);
  bool *same = xcalloc((size_t)nf + 1, sizeof *same);
  int nc = compact_cols(rows, n, cols, same, rw);
  same_line(out, rows, same);
  fputc('\n', out);
  table_put(out, first, rw, true, nc == 0, true);
  for (int c = 0; c < nc; c++) table_put(out, cols[c].name, cols[c].width, cols[c].right, c == nc - 1, false);
  fputc('\n', out);
  for (int i = 0; i < n; i++) {
    snprintf(buf, sizeof buf, "%d", i + 1);
    table_put(out, buf, rw, true, nc == 0, true);
    for (int c = 0; c < nc; c++) {
      int j = cols[c].field;
      const char *text = j < rows[i].nfields ? compact_cell(buf, sizeof buf, &rows[i].fields[j], cols[c].kind) : "-";
      table_put(out, text, cols[c].width, cols[c].right, c == nc - 1, false);
    }
    fputc('\n', out);
  }
  free(cols);
  free(same);
}

static void write_compact(FILE *out, const SweepMeta *m, const SweepRow *rows, int n) {
  table_header(out, m, false);
  if (n > 0) {
    compact_rows(out, rows, n, "rank");
  } else {
    fputc('\n', out);
    fputs(m->keep ? "no point met every require\n" : "keep 0: no rows\n", out);
  }
  if (m->nbest > 0) {
    fprintf(out, "\nbest at each %s:\n", m->best_axes ? m->best_axes : "structure");
    compact_rows(out, m->best, m->nbest, "#");
  }
}

/* --- CSV and JSON Lines ---------------------------------------------------------------------- */

static void write_csv(FILE *out, const SweepMeta *m, const SweepRow *rows, int n) {
  static const char *const names[] = {"sweep", "file", "hash", "objective"};
  const char *values[] = {m->sweep, m->file, m->hash, m->objective};
  fprintf(out, "# llmp_sweep: %d\n", m->hash ? 2 : 1);
  for (int i = 0; i < 4; i++) {
    if (i == 2 && !m->hash) continue;
    fprintf(out, "# %s: ", names[i]);
    comment_text(out, values[i]);
    fputc('\n', out);
  }
  fprintf(out, "# sense: %s\n# keep: %d\n# points: %" PRIu64 "\n# shard: %d/%d\n", sweep_sense(m), m->keep, m->points,
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
      if (f->str)
        emit_csv_field(out, f->str);
      else
        fputs(scalar_text(buf, sizeof buf, f, false), out);
    }
    fputc('\n', out);
  }
}

/* A row's members after its first ones, and its closing brace (a newline after it in lines). */
static void jsonl_fields(FILE *out, const SweepRow *row, bool lines) {
  char buf[40];
  for (int j = 0; j < row->nfields; j++) {
    const SweepField *f = &row->fields[j];
    fputc(',', out);
    emit_json_string(out, f->key);
    fputc(':', out);
    if (f->str)
      emit_json_string(out, f->str);
    else
      fputs(scalar_text(buf, sizeof buf, f, true), out);
  }
  fputs(lines ? "}\n" : "}", out);
}

/* JSON Lines (lines), or one JSON document: the metadata object with the rows in "rows" (and
 * the structures' best points in "best"). */
static void write_jsonl(FILE *out, const SweepMeta *m, const SweepRow *rows, int n, bool lines) {
  fprintf(out, "{\"llmp_sweep\":%d,\"sweep\":", m->hash ? 2 : 1);
  emit_json_string(out, m->sweep);
  fputs(",\"file\":", out);
  emit_json_string(out, m->file);
  if (m->hash) {
    fputs(",\"hash\":", out);
    emit_json_string(out, m->hash);
  }
  fputs(",\"objective\":", out);
  emit_json_string(out, m->objective);
  fprintf(out, ",\"sense\":\"%s\",\"keep\":%d,\"points\":%" PRIu64 ",\"shard\":[%d,%d]", sweep_sense(m), m->keep,
          m->points, m->shard_k, m->shard_n);
  fprintf(out, ",\"evaluated\":%" PRIu64 ",\"kept\":%" PRIu64 ",\"dropped\":{", m->evaluated, m->kept);
  for (int i = 0; i < m->ndropped; i++) {
    if (i) fputc(',', out);
    emit_json_string(out, m->dropped[i].reason);
    fprintf(out, ":%" PRIu64, m->dropped[i].count);
  }
  fputs(lines ? "}}\n" : "},\"rows\":[\n", out);
  char buf[40];
  for (int i = 0; i < n; i++) {
    if (!lines && i) fputs(",\n", out);
    fprintf(out, "{\"rank\":%d,\"point\":%" PRIu64 ",\"objective\":%s", i + 1, rows[i].point,
            num_text(buf, sizeof buf, rows[i].objective, true));
    jsonl_fields(out, &rows[i], lines);
  }
  if (!lines && m->nbest > 0) fputs("],\"best\":[\n", out);
  for (int i = 0; i < m->nbest; i++) {
    if (!lines && i) fputs(",\n", out);
    fprintf(out, "{\"best\":%" PRIu64 ",\"axes\":", m->best_of[i]);
    emit_json_string(out, m->best_axes ? m->best_axes : "");
    fprintf(out, ",\"point\":%" PRIu64 ",\"objective\":%s", m->best[i].point,
            num_text(buf, sizeof buf, m->best[i].objective, true));
    jsonl_fields(out, &m->best[i], lines);
  }
  if (!lines) fputs("]}\n", out);
}

int sweep_write(FILE *out, SweepFormat fmt, const SweepMeta *m, const SweepRow *rows, int n) {
  if (!out || !m || n < 0 || (n > 0 && !rows)) return -1;
  switch (fmt) {
  case SWEEP_TABLE: write_compact(out, m, rows, n); break;
  case SWEEP_TABLE_WIDE: write_table(out, m, rows, n); break;
  case SWEEP_CSV: write_csv(out, m, rows, n); break;
  case SWEEP_JSONL: write_jsonl(out, m, rows, n, true); break;
  case SWEEP_JSON: write_jsonl(out, m, rows, n, false); break;
  default: return -1;
  }
  return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

int sweep_format_parse(const char *name, SweepFormat *f) {
  static const struct {
    const char *name;
    SweepFormat f;
  } names[] = {{"table", SWEEP_TABLE},
               {"csv", SWEEP_CSV},
               {"jsonl", SWEEP_JSONL},
               {"json", SWEEP_JSON},
               {"wide", SWEEP_TABLE_WIDE}};
  for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i].name)) {
      *f = names[i].f;
      return 0;
    }
  return -1;
}

int sweep_format_of_path(const char *path, SweepFormat *f) {
  static const struct {
    const char *ext;
    SweepFormat f;
  } exts[] = {{".csv", SWEEP_CSV}, {".jsonl", SWEEP_JSONL}, {".json", SWEEP_JSON}, {".txt", SWEEP_TABLE}};
  const char *dot = path ? strrchr(path, '.') : NULL, *slash = path ? strrchr(path, '/') : NULL;
  if (!dot || (slash && slash > dot) || dot == path || (slash && dot == slash + 1)) return 0; /* no extension */
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
    if (!strcmp(dot, exts[i].ext)) {
      *f = exts[i].f;
      return 0;
    }
  return -1;
}
