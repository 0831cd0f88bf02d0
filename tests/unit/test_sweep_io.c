/* test_sweep_io.c - unit tests of compiler/sweep/sweep_io.h (sweep_top, sweep_write,
 * sweep_read, sweep_merge, sweep_shard, sweep_progress): the keep-the-best-N heap against a
 * full sort (ties, NaN, both senses, split over heaps and merged); the writers' exact text for
 * a small fixture; JSON Lines read back bit for bit; llmp merge of N shards against the
 * unsharded output, byte for byte, in every format; malformed shard files (each error names
 * its file and line, and the merge fails) and random mutations of a valid one (no crash, no leak under
 * ASan); --shard K/N and auto for every launcher and every error; shard slices tiling [0, P);
 * and the progress bar's text and drawing with a fake clock. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_io.h"

#include "support.h"

/* --- a synthetic sweep ---------------------------------------------------------------------- */

static const char *const recompute_words[] = {"none", "selective", "full", false};
static const char *const reasons[] = {"memory.peak <= cluster.gpu.memory", "model.layers % plan.pp == 0", "never",
                                      false};
enum { NREASONS = 3, NFIELDS = 6 };

/* Point i's fate: the reason it is dropped for (-1: kept) and its objective (many ties, a
 * few NaN). */
static int point_reason(uint64_t i) { return i % 11 == 4 ? 0 : i % 13 == 5 ? 1 : -1; }
static double point_objective(uint64_t i) {
  if (i % 29 == 3) return NAN;
  return (double)((i * 2654435761u) % 17) / 4;
}

static void point_fields(uint64_t i, SweepField *f) {
  f[0] = (SweepField){"plan.tp", (double)(1u << (i % 4)), NULL, false};
  f[1] = (SweepField){"plan.recompute", NAN, recompute_words[i % 3], false};
  f[2] = (SweepField){"iteration_s", point_objective(i), NULL, false};
  f[3] = (SweepField){"mfu", 0.3 + (double)i * 1e-3, NULL, false};
  f[4] = (SweepField){"memory.peak", (double)i * 1e9, NULL, false};
  f[5] = (SweepField){"tokens_per_s", 1e5 / (1.0 + (double)i), NULL, false};
}

/* The hash of the synthetic sweep (a sweep's identity: sweep.c computes it). */
#define HASH "0123456789abcdef"

typedef struct Fixture {
  SweepMeta meta;
  SweepDrop drops[NREASONS];
  SweepRow *rows;
  SweepField *fields;
  int nrows;
} Fixture;

/* Evaluates the points [begin, end) of a sweep of P points: every kept point is pushed into a
 * SweepTop (use_top) or collected and sorted (the reference). */
static void fixture_build(Fixture *fx, uint64_t points, int k, int n, int keep, bool maximize, bool use_top) {
  uint64_t begin, end;
  sweep_shard_range(points, k, n, &begin, &end);
  memset(fx, 0, sizeof *fx);
  for (int r = 0; r < NREASONS; r++) fx->drops[r] = (SweepDrop){reasons[r], 0};
  fx->meta = (SweepMeta){"search",  "examples/sweeps/x.llmp",
                         HASH,      "iteration",
                         maximize,  keep,
                         points,    k,
                         n,         end - begin,
                         0,         NREASONS,
                         fx->drops, NAN,
                         0,         NULL,
                         NULL,      NULL};
  size_t span = (size_t)(end - begin);
  fx->rows = calloc(span + 1, sizeof *fx->rows);
  fx->fields = calloc((span + 1) * NFIELDS, sizeof *fx->fields);
  SweepTop *top = sweep_top_new(keep, maximize);
  for (uint64_t i = begin; i < end; i++) {
    int r = point_reason(i);
    if (r >= 0) {
      fx->drops[r].count++;
      continue;
    }
    fx->meta.kept++;
    SweepField *f = &fx->fields[(size_t)fx->nrows * NFIELDS];
    point_fields(i, f);
    SweepRow row = {i, point_objective(i), NFIELDS, f};
    if (use_top)
      sweep_top_push(top, &row);
    else
      fx->rows[fx->nrows++] = row;
  }
  if (use_top) {
    /* copy the heap's rows out: they live in the heap, which is freed here */
    SweepRow *kept = calloc((size_t)sweep_top_count(top) + 1, sizeof *kept);
    int m = sweep_top_rows(top, kept);
    for (int i = 0; i < m; i++) {
      SweepField *f = &fx->fields[(size_t)i * NFIELDS];
      point_fields(kept[i].point, f);
      fx->rows[i] = (SweepRow){kept[i].point, kept[i].objective, NFIELDS, f};
    }
    fx->nrows = m;
    free(kept);
  } else {
    sweep_sort(fx->rows, fx->nrows, maximize);
    if (fx->nrows > keep) fx->nrows = keep;
  }
  sweep_top_free(top);
}

static void fixture_free(Fixture *fx) {
  free(fx->rows);
  free(fx->fields);
}

static char *write_text(const SweepMeta *m, const SweepRow *rows, int n, SweepFormat fmt) {
  Mem mem;
  assert_int_equal(sweep_write(mem_open(&mem), fmt, m, rows, n), 0);
  return mem_take(&mem);
}

static bool same_double(double a, double b) { return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof a); }

static void assert_rows_equal(const SweepRow *a, const SweepRow *b, int n) {
  for (int i = 0; i < n; i++) {
    assert_true(a[i].point == b[i].point);
    assert_true(same_double(a[i].objective, b[i].objective));
    assert_int_equal(a[i].nfields, b[i].nfields);
    for (int j = 0; j < a[i].nfields; j++) {
      const SweepField *x = &a[i].fields[j], *y = &b[i].fields[j];
      assert_string_equal(x->key, y->key);
      assert_true((x->str == NULL) == (y->str == NULL));
      if (x->str)
        assert_string_equal(x->str, y->str);
      else if (!same_double(x->num, y->num))
        fail_msg("row %d field %s: %.17g != %.17g", i, x->key, x->num, y->num);
    }
  }
}

/* --- the heap --------------------------------------------------------------------------------- */

static uint64_t rng_state = 88172645463325252u;
static uint64_t rng(void) { return xorshift64(&rng_state); }

TEST(top_matches_a_full_sort) {
  enum { N = 3000 };
  SweepRow *all = calloc(N, sizeof *all), *sorted = calloc(N, sizeof *sorted), *got = calloc(N, sizeof *got);
  static const int keeps[] = {0, 1, 2, 7, 100, 2999, 3000, 5000};
  for (int trial = 0; trial < 6; trial++) {
    bool maximize = trial & 1;
    for (int i = 0; i < N; i++) { /* points in random order, objectives with many ties */
      uint64_t r = rng();
      double obj = (double)(r % (trial < 2 ? 5 : 300)) - 2;
      if (r % 97 == 0) obj = NAN;
      if (r % 89 == 0) obj = r % 2 ? INFINITY : -INFINITY;
      all[i] = (SweepRow){(uint64_t)i * 7919 % N, obj, 0, NULL};
    }
    memcpy(sorted, all, N * sizeof *all);
    sweep_sort(sorted, N, maximize);
    for (int i = 1; i < N; i++) assert_true(sweep_row_cmp(&sorted[i - 1], &sorted[i], maximize) < 0);
    for (size_t q = 0; q < sizeof keeps / sizeof keeps[0]; q++) {
      int keep = keeps[q], want = keep < N ? keep : N;
      /* one heap, and the same rows spread over three heaps then merged */
      SweepTop *one = sweep_top_new(keep, maximize), *part[3];
      for (int p = 0; p < 3; p++) part[p] = sweep_top_new(keep, maximize);
      for (int i = 0; i < N; i++) {
        sweep_top_push(one, &all[i]);
        sweep_top_push(part[rng() % 3], &all[i]);
      }
      sweep_top_merge(part[0], part[1]);
      sweep_top_merge(part[0], part[2]);
      for (int h = 0; h < 2; h++) {
        SweepTop *t = h ? part[0] : one;
        assert_int_equal(sweep_top_count(t), want);
        assert_int_equal(sweep_top_rows(t, got), want);
        for (int i = 0; i < want; i++) {
          assert_true(got[i].point == sorted[i].point);
          assert_true(same_double(got[i].objective, sorted[i].objective));
        }
        if (keep < N) { /* full: the first row left out is not wanted */
          assert_false(sweep_top_wants(t, sorted[keep].objective, sorted[keep].point));
          assert_false(sweep_top_push(t, &sorted[keep]));
        }
        if (keep > 0 && keep <= N) /* a row ranking first is wanted */
          assert_true(sweep_top_wants(t, maximize ? INFINITY : -INFINITY, 0) ||
                      (sorted[0].point == 0 && isinf(sorted[0].objective)));
      }
      sweep_top_free(one);
      for (int p = 0; p < 3; p++) sweep_top_free(part[p]);
    }
  }
  free(all);
  free(sorted);
  free(got);
}

TEST(top_copies_what_it_keeps) {
  char key[16] = "plan.tp", word[16] = "full";
  SweepField f[2] = {{key, 4, NULL, false}, {"plan.recompute", NAN, word, false}};
  SweepRow row = {5, 1.0, 2, f};
  SweepTop *t = sweep_top_new(2, false);
  assert_true(sweep_top_push(t, &row));
  strcpy(key, "XXXX"); /* the pusher reuses its buffers */
  strcpy(word, "none");
  f[0].num = 99;
  row = (SweepRow){6, 0.5, 1, f};
  assert_true(sweep_top_push(t, &row));
  row.point = 7;
  row.objective = 2.0;
  assert_false(sweep_top_wants(t, 2.0, 7));
  assert_false(sweep_top_push(t, &row));   /* worse than both */
  assert_true(sweep_top_wants(t, 1.0, 4)); /* ties rank by point */
  assert_false(sweep_top_wants(t, 1.0, 6));
  SweepRow got[2];
  assert_int_equal(sweep_top_rows(t, got), 2);
  assert_true(got[0].point == 6 && got[1].point == 5);
  assert_string_equal(got[1].fields[0].key, "plan.tp");
  assert_true(got[1].fields[0].num == 4);
  assert_string_equal(got[1].fields[1].str, "full");
  assert_string_equal(got[0].fields[0].key, "XXXX");
  /* a replacement reuses the slot's buffer and grows it when needed */
  char longword[200];
  memset(longword, 'w', sizeof longword - 1);
  longword[sizeof longword - 1] = '\0';
  SweepField g = {"k", NAN, longword, false};
  row = (SweepRow){1, 0.25, 1, &g};
  assert_true(sweep_top_push(t, &row));
  assert_int_equal(sweep_top_rows(t, got), 2);
  assert_true(got[0].point == 1 && got[1].point == 6);
  assert_string_equal(got[0].fields[0].str, longword);
  sweep_top_free(t);
  sweep_top_free(NULL);
  assert_false(sweep_top_push(NULL, &row));
  t = sweep_top_new(0, true);
  assert_false(sweep_top_wants(t, 1, 1));
  assert_false(sweep_top_push(t, &row));
  assert_int_equal(sweep_top_count(t), 0);
  sweep_top_free(t);
}

TEST(ranking_orders_nan_last_in_both_senses) {
  SweepRow a = {1, NAN, 0, NULL}, b = {2, -INFINITY, 0, NULL}, c = {0, 3, 0, NULL}, d = {3, 3, 0, NULL};
  for (int mx = 0; mx < 2; mx++) {
    assert_true(sweep_row_cmp(&a, &b, mx) > 0);
    assert_true(sweep_row_cmp(&b, &a, mx) < 0);
    assert_true(sweep_row_cmp(&c, &d, mx) < 0); /* ties: point ascending */
    assert_int_equal(sweep_row_cmp(&c, &c, mx), 0);
  }
  assert_true(sweep_row_cmp(&b, &c, false) < 0);
  assert_true(sweep_row_cmp(&b, &c, true) > 0);
}

/* --- the writers --------------------------------------------------------------------------- */

static const SweepDrop small_drops[] = {
    {"memory.peak <= cluster.gpu.memory", 5}, {"model.layers % plan.pp == 0", 1}, {"never", 0}};
static SweepField small_fields[3][6] = {
    /* clang-format off */
    {{"plan.tp", 4, NULL, false}, {"plan.recompute", NAN, "full", false}, {"iteration_s", 1.5, NULL, false}, {"mfu", 0.412, NULL, false},
     {"memory.peak", 20615843021.0, NULL, false}, {"tokens_per_s", 66043.21, NULL, false}},
    {{"plan.tp", 8, NULL, false}, {"plan.recompute", NAN, "selective", false}, {"iteration_s", 1.5, NULL, false}, {"mfu", 0.4, NULL, false},
     {"memory.peak", 17179869184.0, NULL, false}, {"tokens_per_s", 1234.5678, NULL, false}},
    {{"plan.tp", 2, NULL, false}, {"plan.recompute", NAN, "a, \"b\"", false}, {"iteration_s", 0.1, NULL, false}, {"mfu", NAN, NULL, false},
     {"memory.peak", 1e9, NULL, false}, {"tokens_per_s", 12, NULL, false}},
    /* clang-format on */
};
static const SweepRow small_rows[] = {
    {7, 1.5, 6, small_fields[0]}, {2, 1.5, 6, small_fields[1]}, {3, INFINITY, 6, small_fields[2]}};
static const SweepMeta small_meta = {"search", "f.llmp", HASH, "iteration", false, 3,           10,
                                     0,        1,        10,   4,           3,     small_drops, NAN, 0, NULL, NULL, NULL};

TEST(table_exact) {
  char *t = write_text(&small_meta, small_rows, 3, SWEEP_TABLE_WIDE);
  assert_string_equal(t, "sweep search (f.llmp): minimize iteration, keep 3\n"
                         "  10 points: 10 evaluated, 4 kept, 6 dropped\n"
                         "  dropped: 5 `memory.peak <= cluster.gpu.memory`, 1 `model.layers % plan.pp == 0`\n"
                         "\n"
                         "rank  plan.tp  plan.recompute  iteration_s     mfu  memory.peak  tokens_per_s\n"
                         "   1        4  full                    1.5  41.2 %     19.2 GiB         66043\n"
                         "   2        8  selective               1.5  40.0 %     16.0 GiB          1235\n"
                         "   3        2  a, \"b\"                  0.1       -      0.9 GiB            12\n");
  free(t);
  /* elapsed and rate when known; a shard says which; no rows */
  SweepMeta m = small_meta;
  m.elapsed = 2.5;
  m.shard_k = 1;
  m.shard_n = 4;
  m.ndropped = 0;
  m.kept = 0;
  t = write_text(&m, NULL, 0, SWEEP_TABLE);
  assert_string_equal(t, "sweep search (f.llmp): minimize iteration, keep 3\n"
                         "  shard 1/4 of 10 points: 10 evaluated, 0 kept, 0 dropped\n"
                         "  2.5 s, 4 points/s\n"
                         "\n"
                         "no point met every require\n");
  free(t);
  m.keep = 0;
  m.points = m.evaluated = 2700000;
  m.elapsed = 2.25;
  t = write_text(&m, NULL, 0, SWEEP_TABLE);
  assert_contains(t, "  shard 1/4 of 2,700,000 points: 2,700,000 evaluated");
  assert_contains(t, "  2.25 s, 1.2 M points/s\n\nkeep 0: no rows\n");
  free(t);
}

TEST(table_cells_by_key) {
  SweepField f[] = {{"bytes_sent", 3.0 * 1024 * 1024 * 1024, NULL, false},
                    {"x.mfu", 0.5, NULL, false},
                    {"big", 123456.7, NULL, false},
                    {"tiny", 1.234567e-5, NULL, false},
                    {"neg", -3, NULL, false},
                    {"huge", 1e20, NULL, false}};
  SweepRow r = {0, 1, 6, f};
  SweepMeta m = small_meta;
  m.ndropped = 0;
  char *t = write_text(&m, &r, 1, SWEEP_TABLE_WIDE);
  assert_contains(t, "rank  bytes_sent   x.mfu     big       tiny  neg   huge\n"
                     "   1     3.0 GiB  50.0 %  123457  1.235e-05   -3  1e+20\n");
  free(t);
}

TEST(csv_exact) {
  char *t = write_text(&small_meta, small_rows, 3, SWEEP_CSV);
  assert_string_equal(t, "# llmp_sweep: 2\n"
                         "# sweep: search\n"
                         "# file: f.llmp\n"
                         "# hash: 0123456789abcdef\n"
                         "# objective: iteration\n"
                         "# sense: minimize\n"
                         "# keep: 3\n"
                         "# points: 10\n"
                         "# shard: 0/1\n"
                         "# evaluated: 10\n"
                         "# kept: 4\n"
                         "# dropped: 5 memory.peak <= cluster.gpu.memory\n"
                         "# dropped: 1 model.layers % plan.pp == 0\n"
                         "# dropped: 0 never\n"
                         "rank,point,objective,plan.tp,plan.recompute,iteration_s,mfu,memory.peak,tokens_per_s\n"
                         "1,7,1.5,4,full,1.5,0.412,20615843021,66043.21\n"
                         "2,2,1.5,8,selective,1.5,0.4,17179869184,1234.5678\n"
                         "3,3,inf,2,\"a, \"\"b\"\"\",0.1,,1000000000,12\n");
  free(t);
}

TEST(jsonl_exact) {
  char *t = write_text(&small_meta, small_rows, 3, SWEEP_JSONL);
  assert_string_equal(
      t, "{\"llmp_sweep\":2,\"sweep\":\"search\",\"file\":\"f.llmp\",\"hash\":\"0123456789abcdef\","
         "\"objective\":\"iteration\",\"sense\":\"minimize\","
         "\"keep\":3,\"points\":10,\"shard\":[0,1],\"evaluated\":10,\"kept\":4,\"dropped\":{\"memory.peak <= "
         "cluster.gpu.memory\":5,\"model.layers % plan.pp == 0\":1,\"never\":0}}\n"
         "{\"rank\":1,\"point\":7,\"objective\":1.5,\"plan.tp\":4,\"plan.recompute\":\"full\",\"iteration_s\":1.5,"
         "\"mfu\":0.412,\"memory.peak\":20615843021,\"tokens_per_s\":66043.21}\n"
         "{\"rank\":2,\"point\":2,\"objective\":1.5,\"plan.tp\":8,\"plan.recompute\":\"selective\",\"iteration_s\":1.5,"
         "\"mfu\":0.4,\"memory.peak\":17179869184,\"tokens_per_s\":1234.5678}\n"
         "{\"rank\":3,\"point\":3,\"objective\":1e999,\"plan.tp\":2,\"plan.recompute\":\"a, \\\"b\\\"\","
         "\"iteration_s\":0.1,\"mfu\":null,\"memory.peak\":1000000000,\"tokens_per_s\":12}\n");
  free(t);
}

TEST(formats_by_name_and_extension) {
  SweepFormat f = SWEEP_TABLE;
  assert_int_equal(sweep_format_parse("csv", &f), 0);
  assert_int_equal(f, SWEEP_CSV);
  assert_int_equal(sweep_format_parse("json", &f), 0);
  assert_int_equal(f, SWEEP_JSON);
  assert_int_equal(sweep_format_parse("jsonl", &f), 0);
  assert_int_equal(f, SWEEP_JSONL);
  assert_int_equal(sweep_format_parse("wide", &f), 0);
  assert_int_equal(f, SWEEP_TABLE_WIDE);
  assert_int_equal(sweep_format_parse("table", &f), 0);
  assert_int_equal(f, SWEEP_TABLE);
  assert_int_equal(sweep_format_parse("xml", &f), -1);
  assert_int_equal(sweep_format_parse(NULL, &f), -1);
  static const struct {
    const char *path;
    int rc;
    SweepFormat f;
  } paths[] = {{"a/b.csv", 0, SWEEP_CSV}, {"shard-3.jsonl", 0, SWEEP_JSONL}, {"x.json", 0, SWEEP_JSON},
               {"x.txt", 0, SWEEP_TABLE}, {"dir.csv/x", 0, SWEEP_CSV},       {".hidden", 0, SWEEP_CSV},
               {"x.xlsx", -1, SWEEP_CSV}, {"x.JSON", -1, SWEEP_CSV},         {NULL, 0, SWEEP_CSV}};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    f = SWEEP_CSV; /* left as it is without an extension */
    assert_int_equal(sweep_format_of_path(paths[i].path, &f), paths[i].rc);
    assert_int_equal(f, paths[i].f);
  }
}

TEST(write_failure_returns_minus_one) {
  FILE *f = fopen("/dev/full", "w");
  if (!f) skip();
  assert_int_equal(sweep_write(f, SWEEP_JSONL, &small_meta, small_rows, 3), -1);
  fclose(f);
  assert_int_equal(sweep_write(NULL, SWEEP_CSV, &small_meta, small_rows, 3), -1);
  assert_int_equal(sweep_write(stdout, SWEEP_CSV, NULL, small_rows, 3), -1);
}

/* --- reading back ------------------------------------------------------------------------------ */

static int read_text(const char *text, SweepDoc *doc, char **errtext) {
  FILE *in = fmemopen((void *)text, strlen(text), "r");
  assert_non_null(in);
  Mem err;
  int rc = sweep_read(in, "t.jsonl", doc, mem_open(&err));
  fclose(in);
  char *e = mem_take(&err);
  if (errtext)
    *errtext = e;
  else
    free(e);
  return rc;
}

/* text reads without error and is written again as the same bytes (JSON Lines). */
static void expect_written_again(const char *text) {
  SweepDoc doc;
  char *err;
  if (read_text(text, &doc, &err)) fail_msg("%s\n%s", err, text);
  char *again = write_text(&doc.meta, doc.rows, doc.nrows, SWEEP_JSONL);
  assert_string_equal(again, text);
  free(again);
  free(err);
  sweep_doc_free(&doc);
}

TEST(jsonl_round_trip_is_bit_exact) {
  /* clang-format off */
  static const double odd[] = {0.1, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e21, 1e-7,
                               123456789012345678.0, 1.0 / 3, NAN, INFINITY, -INFINITY, 9007199254740993.0, 42};
  /* clang-format on */
  enum { NODD = sizeof odd / sizeof odd[0] };
  SweepField f[NODD][4];
  SweepRow rows[NODD];
  static const char *const words[] = {"plain", "quote \" back \\ slash", "line\nbreak\ttab\x01\x1f",
                                      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "/"};
  for (int i = 0; i < NODD; i++) {
    f[i][0] = (SweepField){"x", odd[i], NULL, false};
    f[i][1] = (SweepField){"w \"k\"", NAN, words[i % 5], false};
    f[i][2] = (SweepField){"y", odd[(i + 3) % NODD], NULL, false};
    f[i][3] = (SweepField){"e", NAN, "", false};
    rows[i] = (SweepRow){(uint64_t)i * 3, odd[(i + 5) % NODD], 4, f[i]};
  }
  sweep_sort(rows, NODD, true);
  static SweepDrop drops[] = {{"a \"q\"", 3}, {"\xe2\x82\xac", 0}};
  SweepMeta m = {"s\"w", "dir/f \\ .llmp", HASH, "tokens \"per\" s", true, NODD, 50, 0, 1, 50, 47, 2, drops, NAN, 0, NULL, NULL, NULL};
  char *text = write_text(&m, rows, NODD, SWEEP_JSONL);
  SweepDoc doc;
  char *err;
  if (read_text(text, &doc, &err)) fail_msg("%s\n%s", err, text);
  assert_string_equal(err, "");
  assert_string_equal(doc.meta.sweep, m.sweep);
  assert_string_equal(doc.meta.file, m.file);
  assert_string_equal(doc.meta.hash, HASH);
  assert_string_equal(doc.meta.objective, m.objective);
  assert_true(doc.meta.maximize);
  assert_int_equal(doc.meta.keep, NODD);
  assert_true(doc.meta.points == 50 && doc.meta.evaluated == 50 && doc.meta.kept == 47);
  assert_int_equal(doc.meta.ndropped, 2);
  assert_string_equal(doc.meta.dropped[0].reason, "a \"q\"");
  assert_true(doc.meta.dropped[0].count == 3);
  assert_string_equal(doc.meta.dropped[1].reason, "\xe2\x82\xac");
  assert_int_equal(doc.meta_line, 1);
  assert_int_equal(doc.row_line, 2);
  assert_int_equal(doc.nrows, NODD);
  assert_rows_equal(doc.rows, rows, NODD);
  /* written again, the same text */
  char *again = write_text(&doc.meta, doc.rows, doc.nrows, SWEEP_JSONL);
  assert_string_equal(again, text);
  free(again);
  free(text);
  free(err);
  sweep_doc_free(&doc);
}

static char *replaced(const char *text, const char *from, const char *to);

/* A sweep over fields that change the graph writes each structure's best point after the
 * rows ("best" lines); they read back and are written again the same, the table shows them
 * under the rows, and a best line among the rows, or out of structure order, is an error. */
TEST(best_lines_round_trip) {
  SweepField f[3][2] = {{{"cluster.nodes", 8, NULL, false}, {"plan.dtype", NAN, "fp8", false}},
                        {{"cluster.nodes", 16, NULL, false}, {"plan.dtype", NAN, "bf16", false}},
                        {{"cluster.nodes", 16, NULL, false}, {"plan.dtype", NAN, "fp8", false}}};
  SweepRow rows[1] = {{5, 1.25, 2, f[2]}}, best[2] = {{1, 2.5, 2, f[0]}, {5, 1.25, 2, f[2]}};
  static const uint64_t of[2] = {0, 1};
  static SweepDrop drops[] = {{"r", 2}};
  SweepMeta m = {"s", "f.llmp", HASH, "iteration", false, 1, 8, 0, 1, 8, 6, 1, drops, NAN, 2, best, of, "cluster.nodes, plan.dtype"};
  char *text = write_text(&m, rows, 1, SWEEP_JSONL);
  assert_non_null(strstr(text, "\n{\"best\":1,\"axes\":\"cluster.nodes, plan.dtype\",\"point\":5,\"objective\":1.25,"));
  SweepDoc doc;
  char *err;
  if (read_text(text, &doc, &err)) fail_msg("%s\n%s", err, text);
  assert_int_equal(doc.meta.nbest, 2);
  assert_string_equal(doc.meta.best_axes, "cluster.nodes, plan.dtype");
  assert_rows_equal(doc.meta.best, best, 2);
  char *again = write_text(&doc.meta, doc.rows, doc.nrows, SWEEP_JSONL);
  assert_string_equal(again, text);
  char *table = write_text(&doc.meta, doc.rows, doc.nrows, SWEEP_TABLE_WIDE);
  assert_non_null(strstr(table, "\nbest at each cluster.nodes, plan.dtype:\n   #  cluster.nodes  plan.dtype\n   1              8  fp8\n   2             16  fp8\n"));
  free(table);
  free(again);
  free(err);
  sweep_doc_free(&doc);
  char *early = replaced(text, "{\"rank\":1,", "{\"best\":0,\"axes\":\"x\",\"point\":1,\"objective\":2,\"a\":1}\n{\"rank\":1,");
  assert_int_not_equal(read_text(early, &doc, &err), 0);
  assert_non_null(strstr(err, ":2: error: a `best` line before the last row"));
  free(err);
  sweep_doc_free(&doc);
  char *twice = replaced(text, "{\"best\":1,", "{\"best\":0,");
  assert_int_not_equal(read_text(twice, &doc, &err), 0);
  assert_non_null(strstr(err, ":4: error: `best` is 0: best lines are written by structure, each once"));
  free(err);
  sweep_doc_free(&doc);
  free(early);
  free(twice);
  free(text);
}

/* Bytes that are not UTF-8 are written U+FFFD (emit.h), so the output is valid JSON, and a
 * file read back is written again byte for byte: a merge writes what one machine wrote. */
TEST(jsonl_invalid_utf8_becomes_u_fffd_and_round_trips) {
  SweepField f[1] = {{"w\xff", NAN, "bad \xc3( \xed\xa0\x80", false}};
  SweepRow rows[1] = {{0, 1.5, 1, f}};
  static SweepDrop drops[] = {{"r \x80", 0}};
  SweepMeta m = {"s\xfe", "f.llmp", HASH, "o", false, 1, 1, 0, 1, 1, 1, 1, drops, NAN, 0, NULL, NULL, NULL};
  char *text = write_text(&m, rows, 1, SWEEP_JSONL);
#define R "\xef\xbf\xbd"
  assert_non_null(strstr(text, "\"sweep\":\"s" R "\""));
  assert_non_null(strstr(text, "{\"r " R "\":0}"));
  assert_non_null(strstr(text, "\"w" R "\":\"bad " R "( " R R R "\""));
#undef R
  expect_written_again(text);
  free(text);
}

TEST(reader_accepts_escapes_and_blank_lines) {
  const char *text =
      "\n"
      "  { \"llmp_sweep\" : 1 , \"sweep\":\"a\\u00e9\\ud83d\\ude00\\/\",\"file\":\"f\",\"objective\":\"o\","
      "\"sense\":\"maximize\",\"keep\":2,\"points\":3,\"shard\":[ 0 , 1 ],\"evaluated\":3,\"kept\":3,"
      "\"dropped\":{ } }\r\n"
      "{\"rank\":1,\"point\":2,\"objective\":2E+0,\"t\":\"x\\b\\f\\r\"}\n"
      "\n"
      "{\"rank\":2,\"point\":0,\"objective\":-1.5e-0,\"t\":null}"; /* no newline at the end */
  SweepDoc doc;
  char *err;
  if (read_text(text, &doc, &err)) fail_msg("%s", err);
  assert_string_equal(doc.meta.sweep, "a\xc3\xa9\xf0\x9f\x98\x80/");
  assert_int_equal(doc.meta.ndropped, 0);
  assert_int_equal(doc.nrows, 2);
  assert_true(doc.rows[0].objective == 2 && doc.rows[1].objective == -1.5);
  assert_string_equal(doc.rows[0].fields[0].str, "x\b\f\r");
  assert_null(doc.rows[1].fields[0].str);
  assert_true(isnan(doc.rows[1].fields[0].num));
  assert_int_equal(doc.meta_line, 2);
  assert_int_equal(doc.row_line, 3);
  free(err);
  sweep_doc_free(&doc);
}

/* --- merge -------------------------------------------------------------------------------------- */

/* Writes shards 0..n-1 of a synthetic sweep as JSON Lines files (in a shuffled order) and
 * checks that merging them gives the unsharded output byte for byte in every format. */
static void check_merge(uint64_t points, int n, int keep, bool maximize) {
  TmpDir td;
  tmp_open(&td, "sweep_io");
  const char *paths[64];
  int order[64];
  for (int k = 0; k < n; k++) order[k] = k;
  for (int k = n - 1; k > 0; k--) {
    int j = (int)(rng() % (uint64_t)(k + 1)), t = order[k];
    order[k] = order[j];
    order[j] = t;
  }
  for (int i = 0; i < n; i++) {
    Fixture fx;
    fixture_build(&fx, points, order[i], n, keep, maximize, true);
    char *text = write_text(&fx.meta, fx.rows, fx.nrows, SWEEP_JSONL);
    char name[32];
    snprintf(name, sizeof name, "shard-%d.jsonl", order[i]);
    paths[i] = tmp_file(&td, name, text, strlen(text));
    free(text);
    fixture_free(&fx);
  }
  Fixture whole;
  fixture_build(&whole, points, 0, 1, keep, maximize, false);
  for (SweepFormat fmt = SWEEP_TABLE; fmt <= SWEEP_TABLE_WIDE; fmt++) {
    char *want = write_text(&whole.meta, whole.rows, whole.nrows, fmt);
    Mem out, err;
    int rc = sweep_merge(paths, n, fmt, mem_open(&out), mem_open(&err));
    char *got = mem_take(&out), *e = mem_take(&err);
    if (rc || strcmp(got, want))
      fail_msg("P=%" PRIu64 " n=%d keep=%d format %d: rc %d\n%s--- merged:\n%s--- unsharded:\n%s", points, n, keep, fmt,
               rc, e, got, want);
    free(want);
    free(got);
    free(e);
  }
  fixture_free(&whole);
  tmp_close(&td);
}

TEST(merge_equals_unsharded) {
  check_merge(1000, 1, 20, false);
  check_merge(1000, 7, 20, false);
  check_merge(1000, 16, 20, true);
  check_merge(1000, 3, 0, false);
  check_merge(997, 5, 2000, false); /* keep more than the points */
  check_merge(5, 8, 3, false);      /* fewer points than shards: empty shards */
  check_merge(0, 3, 4, true);       /* no points at all */
  check_merge(300, 64, 10, true);
}

TEST(merged_table_leaves_out_elapsed) {
  Fixture a;
  fixture_build(&a, 100, 0, 1, 5, false, false);
  a.meta.elapsed = 3;
  char *with = write_text(&a.meta, a.rows, a.nrows, SWEEP_TABLE);
  assert_contains(with, "\n  3 s, 33 points/s\n");
  a.meta.elapsed = NAN;
  char *without = write_text(&a.meta, a.rows, a.nrows, SWEEP_TABLE);
  assert_null(strstr(without, "points/s"));
  free(with);
  free(without);
  fixture_free(&a);
}

/* Shard files of a 100-point sweep split in 4: text[k] is shard k's JSON Lines. */
static void four_shards(char *text[4]) {
  for (int k = 0; k < 4; k++) {
    Fixture fx;
    fixture_build(&fx, 100, k, 4, 5, false, true);
    text[k] = write_text(&fx.meta, fx.rows, fx.nrows, SWEEP_JSONL);
    fixture_free(&fx);
  }
}

/* Merges files whose texts are given (NULL: no such file) and checks the error. */
static void expect_merge_error(const char *const *texts, int n, const char *expected) {
  TmpDir td;
  tmp_open(&td, "sweep_io");
  const char *paths[8];
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "s%d.jsonl", i);
    if (texts[i])
      paths[i] = tmp_file(&td, name, texts[i], strlen(texts[i]));
    else {
      static char missing[128];
      snprintf(missing, sizeof missing, "%s/%s", td.dir, name);
      paths[i] = missing;
    }
  }
  Mem out, err;
  int rc = sweep_merge(paths, n, SWEEP_TABLE, mem_open(&out), mem_open(&err));
  char *o = mem_take(&out), *e = mem_take(&err);
  /* the expectation names the files s0.jsonl ...: make them relative to the folder */
  char want[512];
  snprintf(want, sizeof want, "%s/%s", td.dir, expected);
  if (rc != -1 || !strstr(e, expected[0] == '!' ? expected + 1 : want))
    fail_msg("rc %d, expected `%s` in:\n%s", rc, expected[0] == '!' ? expected + 1 : want, e);
  assert_string_equal(o, "");
  free(o);
  free(e);
  tmp_close(&td);
}

/* A copy of text with the first `from` replaced by `to`. */
static char *replaced(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (!at) fail_msg("no `%s` in %s", from, text);
  size_t a = (size_t)(at - text), fl = strlen(from), tl = strlen(to), n = strlen(text);
  char *s = malloc(n - fl + tl + 1);
  memcpy(s, text, a);
  memcpy(s + a, to, tl);
  memcpy(s + a + tl, at + fl, n - a - fl + 1);
  return s;
}

/* replaced() in the rows only: the metadata line kept */
static char *in_rows(const char *text, const char *from, const char *to) {
  const char *rows = strchr(text, '\n') + 1;
  char *r = replaced(rows, from, to), *s = malloc(strlen(text) + strlen(to) + 1);
  memcpy(s, text, (size_t)(rows - text));
  strcpy(s + (rows - text), r);
  free(r);
  return s;
}

/* text cut after its line-th newline plus `extra` bytes */
static char *cut(const char *text, int line, int extra) {
  const char *p = text;
  for (int i = 0; i < line; i++) p = strchr(p, '\n') + 1;
  size_t n = (size_t)(p - text) + (size_t)extra;
  char *s = malloc(n + 1);
  memcpy(s, text, n);
  s[n] = '\0';
  return s;
}

/* text with its last row once more */
static char *more_rows(const char *text) {
  const char *last = text + strlen(text) - 1;
  while (last > text && last[-1] != '\n') last--;
  char *s = malloc(strlen(text) + strlen(last) + 1);
  strcpy(s, text);
  strcat(s, last);
  return s;
}

TEST(merge_rejects_malformed_files) {
  char *s[4];
  four_shards(s);
  struct {
    char *text;        /* shard 1's text */
    const char *error; /* expected in the messages */
  } cases[] = {
      {cut(s[1], 2, 40), "s1.jsonl:3: error: the line ends "},
      {cut(s[1], 3, 0), "s1.jsonl:4: error: the file ends after 2 rows, but its header line promises 5"},
      {cut(s[1], 0, 30), "s1.jsonl:1: error: the line ends "},
      {strdup(""), "s1.jsonl:1: error: an empty file"},
      {strdup("hello\n"), "s1.jsonl:1: error: expected a JSON object at column 1"},
      {replaced(s[1], "\"kept\":", "\"kept\":01"), "s1.jsonl:1: error: expected `,` or `}` at column"},
      {replaced(s[1], "\"iteration_s\":", "\"iteration_s\":1.,\"o\":"),
       "s1.jsonl:2: error: a malformed number at column"},
      {replaced(s[1], "\"mfu\":", "\"mfu\":-,\"x\":"), "s1.jsonl:2: error: a malformed number"},
      {replaced(s[1], "\"mfu\":", "\"mfu\":1e,\"x\":"), "s1.jsonl:2: error: a malformed number"},
      {replaced(s[1], "\"mfu\":", "\"mfu\":nan,\"x\":"),
       "s1.jsonl:2: error: expected a string, a number, true, false or null"},
      {replaced(s[1], "\"mfu\":", "\"mfu\":tru,\"x\":"),
       "s1.jsonl:2: error: expected a string, a number, true, false or null"},
      {replaced(s[1], "\"mfu\":", "\"mfu\":[1],\"x\":"),
       "s1.jsonl:2: error: `mfu` is not a number, a string, a flag or null"},
      {replaced(s[1], "\"dropped\":{", "\"dropped\":{\"a\":[1],"), "s1.jsonl:1: error: nested too deep"},
      {replaced(s[1], "\"keep\":5", "\"keep\":-5"), "s1.jsonl:1: error: `keep` is -5, not a whole number"},
      {replaced(s[1], "\"keep\":5", "\"keep\":5.0"), "s1.jsonl:1: error: `keep` is 5.0, not a whole number"},
      {replaced(s[1], "\"points\":100", "\"points\":99999999999999999999"),
       "s1.jsonl:1: error: `points` is 99999999999999999999"},
      {replaced(s[1], "\"sweep\":\"search\"", "\"sweep\":\"se\\qarch\""), "s1.jsonl:1: error: an unknown escape"},
      {replaced(s[1], "\"sweep\":\"search\"", "\"sweep\":\"\\ud800x\""), "s1.jsonl:1: error: a lone surrogate"},
      {replaced(s[1], "\"sweep\":\"search\"", "\"sweep\":\"\\u0000\""), "s1.jsonl:1: error: \\u0000 in a string"},
      {replaced(s[1], "\"sweep\":\"search\"", "\"sweep\":\"\\u12\""),
       "s1.jsonl:1: error: a \\u escape needs four hex digits"},
      {replaced(s[1], "\"sweep\":\"search\"", "\"sweep\":\"a\tb\""),
       "s1.jsonl:1: error: a control character in a string"},
      {replaced(s[1], "}}\n", "}} x\n"), "s1.jsonl:1: error: text after the object"},
      {replaced(s[1], "\"llmp_sweep\":2,", ""), "s1.jsonl:1: error: not an output of llmp sweep"},
      {replaced(s[1], "\"llmp_sweep\":2", "\"llmp_sweep\":3"),
       "s1.jsonl:1: error: `llmp_sweep` is 3: this llmp reads versions 1 and 2"},
      {replaced(s[1], ",\"hash\":\"" HASH "\"", ""), "s1.jsonl:1: error: the header line has no `hash`"},
      {replaced(s[1], "\"llmp_sweep\":2", "\"llmp_sweep\":1"),
       "s1.jsonl:1: error: `hash` in a header line of version 1"},
      {replaced(s[1], HASH, "0123456789ABCDEF"), "s1.jsonl:1: error: `hash` is not a string of 16 hexadecimal digits"},
      {replaced(s[1], HASH, "0123456789abcde"), "s1.jsonl:1: error: `hash` is not a string of 16 hexadecimal digits"},
      {replaced(s[1], "\"" HASH "\"", "12"), "s1.jsonl:1: error: `hash` is not a string of 16 hexadecimal digits"},
      {replaced(s[1], "\"objective\":", "\"hash\":\"" HASH "\",\"objective\":"),
       "s1.jsonl:1: error: `hash` twice in the header line"},
      {replaced(s[1], "\"kept\":", "\"extra\":1,\"kept\":"),
       "s1.jsonl:1: error: unknown member `extra` in the header line"},
      {replaced(s[1], "\"kept\":", "\"keep\":5,\"kept\":"), "s1.jsonl:1: error: `keep` twice in the header line"},
      {replaced(s[1], ",\"file\":\"examples/sweeps/x.llmp\"", ""), "s1.jsonl:1: error: the header line has no `file`"},
      {replaced(s[1], "\"sense\":\"minimize\"", "\"sense\":\"min\""), "s1.jsonl:1: error: `sense` is not"},
      {replaced(s[1], "\"shard\":[1,4]", "\"shard\":[4,4]"), "s1.jsonl:1: error: `shard` is not [K, N]"},
      {replaced(s[1], "\"shard\":[1,4]", "\"shard\":[1]"), "s1.jsonl:1: error: `shard` is not [K, N]"},
      {replaced(s[1], "\"shard\":[1,4]", "\"shard\":{}"), "s1.jsonl:1: error: `shard` is not [K, N]"},
      /* clang-format off */
      {replaced(s[1], "\"evaluated\":25", "\"evaluated\":24"), "s1.jsonl:1: error: shard 1/4 of 100 points has 25 points, but `evaluated` is 24"},
      {replaced(s[1], "\"never\":0", "\"never\":1"), "s1.jsonl:1: error: `kept` and the `dropped` counts do not add up"},
      {replaced(s[1], "\"never\":0", "\"never\":18446744073709551615"), "s1.jsonl:1: error: `kept` and the `dropped` counts do not add up"},
      {replaced(s[1], "\"never\":0", "\"never\":0,\"never\":0"), "s1.jsonl:1: error: the reason `never` twice in `dropped`"},
      /* clang-format on */
      {replaced(s[1], "\"dropped\":{", "\"dropped\":["), "s1.jsonl:1: error: "},
      {replaced(s[1], "{\"rank\":1,", "{\"rank\":2,"), "s1.jsonl:2: error: `rank` is 2, expected 1"},
      {replaced(s[1], "{\"rank\":1,\"point\":", "{\"rank\":1,\"point\":1"), "s1.jsonl:2: error: `point` "},
      {replaced(s[1], "\"rank\":1,", "\"rank\":1,\"rank\":1,"), "s1.jsonl:2: error: `rank` twice in a row"},
      {replaced(s[1], "\"rank\":1,", ""), "s1.jsonl:2: error: a row without `rank`"},
      {replaced(s[1], "\"rank\":2,\"point\":", "\"rank\":2,\"x\":0,\"point\":"),
       "s1.jsonl:3: error: 10 members, but the row of line 2 has 9"},
      {replaced(s[1], "\"rank\":2,\"point\":", "\"rank\":2,\"poinT\":"),
       "s1.jsonl:3: error: `poinT` where the row of line 2 has `point`"},
      {replaced(s[1], "\"rank\":2,\"point\":", "\"rank\":2,\"point\":\"x\",\"p\":"), "s1.jsonl:3: error: "},
      {in_rows(s[1], "\"objective\":", "\"objective\":\"x\",\"o\":"),
       "s1.jsonl:2: error: `objective` is not a number or null"},
      {more_rows(s[1]), "s1.jsonl:7: error: more rows than the header line's counts allow (5"},
  };
  int ncases = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < ncases; i++) {
    const char *texts[4] = {s[0], cases[i].text, s[2], s[3]};
    expect_merge_error(texts, 4, cases[i].error);
    free(cases[i].text);
  }
  /* rows out of rank order: the first two rows swapped, their ranks kept */
  const char *rows = strchr(s[1], '\n') + 1;
  char *r1 = cut(rows, 1, 0), *r2 = cut(rows + strlen(r1), 1, 0);
  char *a = replaced(r1, "\"rank\":1,", "\"rank\":2,"), *b = replaced(r2, "\"rank\":2,", "\"rank\":1,");
  char *t1 = replaced(s[1], r1, b), *t2 = replaced(t1, r2, a);
  const char *texts[4] = {s[0], t2, s[2], s[3]};
  expect_merge_error(texts, 4, "s1.jsonl:3: error: point ");
  free(r1);
  free(r2);
  free(a);
  free(b);
  free(t1);
  free(t2);
  for (int k = 0; k < 4; k++) free(s[k]);
}

TEST(merge_rejects_missing_duplicate_and_foreign_shards) {
  char *s[4];
  four_shards(s);
  {
    const char *t[3] = {s[0], s[1], s[3]};
    expect_merge_error(t, 3, "!llmp merge: error: shard 2 of 4 missing");
  }
  {
    const char *t[2] = {s[3], s[2]};
    expect_merge_error(t, 2, "!llmp merge: error: shards 0-1 of 4 missing");
  }
  {
    const char *t[5] = {s[0], s[1], s[2], s[3], s[2]};
    expect_merge_error(t, 5, "s4.jsonl:1: error: shard 2/4 again: ");
  }
  {
    const char *t[4] = {s[0], s[1], s[2], NULL};
    expect_merge_error(t, 4, "s3.jsonl: error: cannot read: ");
  }
  struct {
    const char *from, *to, *error;
  } foreign[] = {
      {"\"sweep\":\"search\"", "\"sweep\":\"other\"", "s2.jsonl:1: error: sweep `other`, but "},
      {"\"objective\":\"iteration\"", "\"objective\":\"mfu\"", "s2.jsonl:1: error: objective `mfu`, but "},
      /* the same name, counts and split, but another sweep: its hash tells */
      {HASH, "fedcba9876543210", "s2.jsonl:1: error: hash fedcba9876543210, but " /* then the first file */},
  };
  for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
    char *x = replaced(s[2], foreign[i].from, foreign[i].to);
    const char *t[4] = {s[0], s[1], x, s[3]};
    expect_merge_error(t, 4, foreign[i].error);
    free(x);
  }
  /* another split of the same sweep, another sense, other points, another keep */
  struct {
    uint64_t points;
    int k, n, keep;
    bool maximize;
    const char *error;
  } other[] = {
      {100, 1, 3, 5, false, "s2.jsonl:1: error: shard 1/3, but "},
      {100, 2, 4, 5, true, "s2.jsonl:1: error: sense maximize, but "},
      {101, 2, 4, 5, false, "s2.jsonl:1: error: 101 points, but "},
      {100, 2, 4, 6, false, "s2.jsonl:1: error: keep 6, but "},
  };
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
    Fixture fx;
    fixture_build(&fx, other[i].points, other[i].k, other[i].n, other[i].keep, other[i].maximize, true);
    char *x = write_text(&fx.meta, fx.rows, fx.nrows, SWEEP_JSONL);
    fixture_free(&fx);
    const char *t[4] = {s[0], s[1], x, s[3]};
    expect_merge_error(t, 4, other[i].error);
    free(x);
  }
  /* other fields */
  char *fields = malloc(strlen(s[2]) * 2);
  strcpy(fields, s[2]);
  for (char *p; (p = strstr(fields, "\"mfu\""));) memcpy(p, "\"MFU\"", 5);
  const char *t6[4] = {s[0], s[1], fields, s[3]};
  expect_merge_error(t6, 4, "s2.jsonl:2: error: field `MFU` where the rows of ");
  free(fields);
  for (int k = 0; k < 4; k++) free(s[k]);
  Mem out, err;
  assert_int_equal(sweep_merge(NULL, 0, SWEEP_JSONL, mem_open(&out), mem_open(&err)), -1);
  char *o = mem_take(&out), *e = mem_take(&err);
  assert_string_equal(o, "");
  assert_string_equal(e, "llmp merge: error: no files to merge\n");
  free(o);
  free(e);
}

/* Merges the texts as files s0.jsonl ...; returns the rc, the output and the messages with the
 * folder's path written DIR. */
static int merge_texts(const char *const *texts, int n, SweepFormat fmt, char **out, char **err) {
  TmpDir td;
  tmp_open(&td, "sweep_io");
  const char *paths[8];
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "s%d.jsonl", i);
    paths[i] = tmp_file(&td, name, texts[i], strlen(texts[i]));
  }
  Mem o, e;
  int rc = sweep_merge(paths, n, fmt, mem_open(&o), mem_open(&e));
  *out = mem_take(&o);
  char *raw = mem_take(&e), *dir;
  while ((dir = strstr(raw, td.dir))) {
    char *t = replaced(raw, td.dir, "DIR");
    free(raw);
    raw = t;
  }
  *err = raw;
  tmp_close(&td);
  return rc;
}

/* A shard of another sweep with the same name, counts and split is told by its hash, and the
 * message names both files; a shard of an older llmp (version 1, no hash) does not merge with
 * shards that have one. */
TEST(merge_names_both_files_of_another_hash_or_version) {
  char *s[4];
  four_shards(s);
  char *other = replaced(s[2], HASH, "fedcba9876543210"), *out, *err;
  const char *t[4] = {s[0], s[1], other, s[3]};
  assert_int_equal(merge_texts(t, 4, SWEEP_JSONL, &out, &err), -1);
  assert_string_equal(out, "");
  assert_string_equal(
      err,
      "DIR/s2.jsonl:1: error: hash fedcba9876543210, but DIR/s0.jsonl's is " HASH
      " (another file, import, calibration table, llmp version, or --keep-unfit or --keep-equivalent): not shards of one sweep\n");
  free(out);
  free(err);
  free(other);
  char *v1 = replaced(s[2], "\"llmp_sweep\":2", "\"llmp_sweep\":1"), *old = replaced(v1, ",\"hash\":\"" HASH "\"", "");
  const char *mixed[4] = {s[0], s[1], old, s[3]};
  assert_int_equal(merge_texts(mixed, 4, SWEEP_JSONL, &out, &err), -1);
  assert_string_equal(err, "DIR/s2.jsonl:1: error: no hash (llmp_sweep 1, an older llmp), but DIR/s0.jsonl has a "
                           "hash: not shards of one sweep\n");
  free(out);
  free(err);
  const char *mixed0[4] = {old, s[1], s[0], s[3]};
  assert_int_equal(merge_texts(mixed0, 4, SWEEP_JSONL, &out, &err), -1);
  assert_contains(err, "DIR/s1.jsonl:1: error: hash, but DIR/s0.jsonl has none (llmp_sweep 1, an older llmp)");
  free(out);
  free(err);
  free(v1);
  free(old);
  for (int k = 0; k < 4; k++) free(s[k]);
}

/* Shards of version 1 (an older llmp, no hash) still merge, with a warning, into what that
 * llmp wrote unsharded: version 1 again. */
TEST(merge_of_version_1_shards_warns) {
  char *s[4];
  const char *t[4];
  for (int k = 0; k < 4; k++) {
    Fixture fx;
    fixture_build(&fx, 100, k, 4, 5, false, true);
    fx.meta.hash = NULL;
    t[k] = s[k] = write_text(&fx.meta, fx.rows, fx.nrows, SWEEP_JSONL);
    static const char v1[] = "{\"llmp_sweep\":1,\"sweep\":\"search\",\"file\":\"examples/sweeps/x.llmp\",\"objective\"";
    assert_true(!strncmp(s[k], v1, sizeof v1 - 1));
    fixture_free(&fx);
  }
  Fixture whole;
  fixture_build(&whole, 100, 0, 1, 5, false, false);
  whole.meta.hash = NULL;
  for (SweepFormat fmt = SWEEP_TABLE; fmt <= SWEEP_TABLE_WIDE; fmt++) {
    char *want = write_text(&whole.meta, whole.rows, whole.nrows, fmt), *out, *err;
    assert_int_equal(merge_texts(t, 4, fmt, &out, &err), 0);
    assert_string_equal(out, want);
    assert_string_equal(err, "llmp merge: warning: the shards are of version 1 (an older llmp), with no hash of "
                             "their sweep: merged on their sweep's name, objective, keep, points and N alone\n");
    static const char csv[] = "# llmp_sweep: 1\n# sweep: search\n# file: examples/sweeps/x.llmp\n# objective: ";
    if (fmt == SWEEP_CSV) assert_true(!strncmp(out, csv, sizeof csv - 1));
    free(want);
    free(out);
    free(err);
  }
  fixture_free(&whole);
  for (int k = 0; k < 4; k++) free(s[k]);
}

/* Bytes that are not UTF-8 are read as U+FFFD, as they are written: two reasons that differ
 * only there are one reason, and a merge's output reads back. */
TEST(reader_takes_invalid_utf8_as_it_is_written) {
  char *s[4];
  four_shards(s);
  char *a = replaced(s[0], "\"never\"", "\"nev\xffr\""), *b = replaced(s[1], "\"never\"", "\"nev\xfer\"");
  char *c = replaced(s[2], "\"never\"", "\"nev\xef\xbf\xbdr\"");
  const char *t[4] = {a, b, c, s[3]};
  char *out, *err;
  assert_int_equal(merge_texts(t, 4, SWEEP_JSONL, &out, &err), 0);
  assert_string_equal(err, "");
  assert_non_null(strstr(out, "\"nev\xef\xbf\xbdr\":0,\"never\":0}"));
  expect_written_again(out);
  free(out);
  free(err);
  free(a);
  free(b);
  free(c);
  for (int k = 0; k < 4; k++) free(s[k]);
}

/* Random damage to a valid shard file: the reader reports or accepts, never crashes (the ASan
 * build checks memory and leaks). */
TEST(reader_survives_random_damage) {
  char *s[4];
  four_shards(s);
  size_t n = strlen(s[1]);
  static const char junk[] = "{}[]\",:\\0123456789.eE+-nulxu \n\t";
  for (int trial = 0; trial < 3000; trial++) {
    char *t = malloc(n + 8);
    memcpy(t, s[1], n + 1);
    size_t len = n;
    int edits = 1 + (int)(rng() % 4);
    for (int e = 0; e < edits; e++) {
      size_t at = (size_t)(rng() % len);
      switch (rng() % 4) {
      case 0: t[at] = junk[rng() % (sizeof junk - 1)]; break;
      case 1: t[at] = (char)(rng() % 256 ? rng() % 256 : 1); break;
      /* clang-format off */
      case 2: len = at; t[len] = '\0'; break;
      default: memmove(t + at, t + at + 1, len - at); len--; break;
        /* clang-format on */
      }
      if (!len) break;
    }
    SweepDoc doc;
    FILE *in = fmemopen(t, len ? len : 1, "r");
    FILE *err = fopen("/dev/null", "w");
    int rc = sweep_read(in, "x", &doc, err);
    if (!rc) assert_true(doc.nrows >= 0 && doc.nrows <= doc.meta.keep);
    sweep_doc_free(&doc);
    fclose(err);
    fclose(in);
    free(t);
  }
  /* a NUL byte, a line past the limit */
  char nul[] = "{\"llmp_sweep\":1\0}\n";
  FILE *in = fmemopen(nul, sizeof nul - 1, "r");
  Mem err;
  SweepDoc doc;
  assert_int_equal(sweep_read(in, "n", &doc, mem_open(&err)), -1);
  fclose(in);
  char *e = mem_take(&err);
  assert_contains(e, "n:1: error: a NUL byte in the line");
  free(e);
  sweep_doc_free(&doc);
  size_t big = (16u << 20) + 10;
  char *huge = malloc(big + 1);
  memset(huge, ' ', big);
  huge[big] = '\0';
  in = fmemopen(huge, big, "r");
  assert_int_equal(sweep_read(in, "h", &doc, mem_open(&err)), -1);
  fclose(in);
  e = mem_take(&err);
  assert_contains(e, "h:1: error: a line longer than 16 MiB");
  free(e);
  free(huge);
  sweep_doc_free(&doc);
  for (int k = 0; k < 4; k++) free(s[k]);
}

/* sweep_merge_load on the shards' files: the whole sweep's metadata and best rows, for
 * sweep_write in any format; with shards missing it fails (and the caller writes nothing). */
TEST(merge_load_files) {
  char *s[4];
  four_shards(s);
  TmpDir td;
  tmp_open(&td, "sweep_io");
  const char *paths[4];
  for (int k = 0; k < 4; k++) {
    char name[32];
    snprintf(name, sizeof name, "shard-%d.jsonl", k);
    paths[k] = tmp_file(&td, name, s[k], strlen(s[k]));
  }
  SweepMerge m;
  Mem err;
  assert_int_equal(sweep_merge_load(&m, paths, 4, mem_open(&err)), 0);
  char *e = mem_take(&err);
  assert_string_equal(e, "");
  free(e);
  assert_int_equal(m.meta.shard_k, 0);
  assert_int_equal(m.meta.shard_n, 1);
  assert_int_equal(m.meta.points, 100);
  assert_int_equal(m.meta.evaluated, 100);
  assert_int_equal(m.nrows, 5);
  char *csv = write_text(&m.meta, m.rows, m.nrows, SWEEP_CSV);
  char *json = write_text(&m.meta, m.rows, m.nrows, SWEEP_JSONL);
  assert_true(!strncmp(csv, "# llmp_sweep: 2\n", 16));
  assert_true(!strncmp(json, "{\"llmp_sweep\":2,", 16));
  assert_string_equal(m.meta.hash, HASH);
  free(csv);
  free(json);
  sweep_merge_free(&m);
  assert_int_equal(sweep_merge_load(&m, paths, 1, mem_open(&err)), -1); /* shards 1-3 missing */
  e = mem_take(&err);
  assert_string_equal(e, "llmp merge: error: shards 1-3 of 4 missing\n");
  free(e);
  sweep_merge_free(&m);
  tmp_close(&td);
  for (int k = 0; k < 4; k++) free(s[k]);
}

/* --- shards ---------------------------------------------------------------------------------- */

static const char *const *fake_env; /* NAME=VALUE strings, NULL-terminated */
static const char *fake_getenv(const char *name) {
  size_t n = strlen(name);
  for (const char *const *e = fake_env; e && *e; e++)
    if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
  return NULL;
}

static void expect_shard(const char *spec, const char *const *env, int k, int n) {
  StrBuf err = {0};
  int kk = -1, nn = -1;
  fake_env = env;
  if (sweep_shard_parse_env(spec, fake_getenv, &kk, &nn, &err)) fail_msg("--shard %s: %s", spec, err.p);
  if (kk != k || nn != n) fail_msg("--shard %s: %d/%d, expected %d/%d", spec, kk, nn, k, n);
  assert_null(err.p);
}

static void expect_shard_error(const char *spec, const char *const *env, const char *msg) {
  StrBuf err = {0};
  int kk = -7, nn = -7;
  fake_env = env;
  assert_int_equal(sweep_shard_parse_env(spec, fake_getenv, &kk, &nn, &err), -1);
  assert_int_equal(kk, -7);
  assert_non_null(err.p);
  assert_contains(err.p, msg);
  strbuf_free(&err);
}

TEST(shard_k_of_n) {
  expect_shard("0/1", NULL, 0, 1);
  expect_shard("3/16", NULL, 3, 16);
  expect_shard("15/16", NULL, 15, 16);
  expect_shard("2147483646/2147483647", NULL, 2147483646, 2147483647);
  expect_shard_error("16/16", NULL, "`16/16`: K must be below N (shards count from 0: 0/16 .. 15/16)");
  expect_shard_error("0/0", NULL, "`0/0`: N must be at least 1");
  expect_shard_error("1/0", NULL, "N must be at least 1");
  /* clang-format off */
  static const char *const bad[] = {"", "3", "/4", "3/", "-1/4", "1/-4", "a/4", "1/4x", " 1/4", "1/ 4", "1.0/4",
                                    "1/4/5", "+1/4", "AUTO", "1x/99999999999"};
  /* clang-format on */
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_shard_error(bad[i], NULL, "expected K/N");
  expect_shard_error(NULL, NULL, "--shard needs K/N or auto");
  /* counts past 32 bits: refused as such, the value echoed whole */
  expect_shard_error("2147483648/2147483649", NULL, "`2147483648/2147483649`: K and N are at most 2147483647");
  expect_shard_error("18446744073709551615/18446744073709551616", NULL,
                     "--shard `18446744073709551615/18446744073709551616`: K and N are at most 2147483647");
  expect_shard_error("0/123456789012345678901234567890123456789012345678901234567890", NULL,
                     "`0/123456789012345678901234567890123456789012345678901234567890`: K and N are at most");
  expect_shard_error("x1234567890123456789012345678901234567890123456789/4", NULL,
                     "`x1234567890123456789012345678901234567890123456789/4`: expected K/N");
  static const char *const big_rank[] = {"SLURM_PROCID=18446744073709551615", "SLURM_NTASKS=4", NULL, false};
  expect_shard_error("auto", big_rank, "--shard auto: SLURM_PROCID=18446744073709551615 is more than 2147483647");
  static const char *const long_size[] = {"PMI_RANK=0", "PMI_SIZE=4x234567890123456789012345678901234567890123", NULL,
                                          false};
  expect_shard_error("auto", long_size, "PMI_SIZE=4x234567890123456789012345678901234567890123 is not a whole number");
  /* the process environment: without launcher variables, auto fails */
  int k, n;
  assert_int_equal(sweep_shard_parse("1/2", &k, &n, NULL), 0);
  assert_true(k == 1 && n == 2);
}

TEST(shard_auto_launchers) {
  static const char *const array[] = {"SLURM_ARRAY_TASK_ID=7", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_COUNT=16",
                                      "SLURM_PROCID=0",        "SLURM_NTASKS=1",         NULL};
  expect_shard("auto", array, 7, 16);
  static const char *const array_from_1[] = {"SLURM_ARRAY_TASK_ID=16", "SLURM_ARRAY_TASK_MIN=1",
                                             "SLURM_ARRAY_TASK_COUNT=16", NULL};
  expect_shard("auto", array_from_1, 15, 16);
  static const char *const tasks[] = {"SLURM_PROCID=3", "SLURM_NTASKS=8", "OMPI_COMM_WORLD_RANK=1",
                                      "OMPI_COMM_WORLD_SIZE=2", NULL};
  expect_shard("auto", tasks, 3, 8);
  static const char *const ompi[] = {"OMPI_COMM_WORLD_RANK=5",
                                     "OMPI_COMM_WORLD_SIZE=6",
                                     "PMI_RANK=0",
                                     "PMI_SIZE=1",
                                     "SLURM_ARRAY_TASK_ID=",
                                     NULL}; /* set but empty: not there */
  expect_shard("auto", ompi, 5, 6);
  static const char *const pmi[] = {"PMI_RANK=0", "PMI_SIZE=1", NULL, false};
  expect_shard("auto", pmi, 0, 1);
  static const char *const pmi2[] = {"PMI_RANK=9", "PMI_SIZE=10", NULL, false};
  expect_shard("auto", pmi2, 9, 10);
  /* the explicit form ignores the environment */
  expect_shard("1/3", tasks, 1, 3);
}

TEST(shard_auto_errors) {
  static const char *const none[] = {"HOME=/root", NULL};
  expect_shard_error("auto", none, "--shard auto: no launcher found: none of SLURM_ARRAY_TASK_ID");
  expect_shard_error("auto", none, "SLURM_PROCID (srun, with SLURM_NTASKS)");
  expect_shard_error("auto", none, "OMPI_COMM_WORLD_RANK (Open MPI, with OMPI_COMM_WORLD_SIZE)");
  expect_shard_error("auto", none, "PMI_RANK (MPICH, with PMI_SIZE)");
  expect_shard_error("auto", NULL, "no launcher found");
  static const char *const no_count[] = {"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_MIN=0", NULL, false};
  expect_shard_error("auto", no_count, "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
  static const char *const no_min[] = {"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_COUNT=4", NULL, false};
  expect_shard_error("auto", no_min, "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN is not");
  static const char *const stepped[] = {"SLURM_ARRAY_TASK_ID=6", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_COUNT=4",
                                        NULL}; /* --array=0-6:2 */
  expect_shard_error(
      "auto", stepped,
      "SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN = 6 is not in [0, SLURM_ARRAY_TASK_COUNT = 4): the array must be contiguous (--array=0-3)");
  static const char *const below_min[] = {"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_MIN=2", "SLURM_ARRAY_TASK_COUNT=4",
                                          NULL};
  expect_shard_error("auto", below_min, "= -1 is not in [0,");
  static const char *const no_ntasks[] = {"SLURM_PROCID=0", NULL};
  expect_shard_error("auto", no_ntasks, "SLURM_PROCID is set but SLURM_NTASKS is not");
  static const char *const rank_past[] = {"SLURM_PROCID=4", "SLURM_NTASKS=4", NULL, false};
  expect_shard_error("auto", rank_past, "--shard auto: SLURM_PROCID=4 is not below SLURM_NTASKS=4");
  static const char *const zero[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=0", NULL, false};
  expect_shard_error("auto", zero, "OMPI_COMM_WORLD_SIZE=0: there must be at least one shard");
  static const char *const junk[] = {"PMI_RANK=x", "PMI_SIZE=4", NULL, false};
  expect_shard_error("auto", junk, "--shard auto: PMI_RANK=x is not a whole number");
  static const char *const neg[] = {"PMI_RANK=1", "PMI_SIZE=-4", NULL, false};
  expect_shard_error("auto", neg, "PMI_SIZE=-4 is not a whole number");
  static const char *const big[] = {"PMI_RANK=1", "PMI_SIZE=99999999999", NULL, false};
  expect_shard_error("auto", big, "PMI_SIZE=99999999999 is more than 2147483647");
}

TEST(shard_ranges_tile_the_points) {
  static const uint64_t big[] = {UINT64_C(1) << 63, (UINT64_C(1) << 63) - 1, UINT64_MAX, UINT64_C(1) << 40,
                                 UINT64_C(2700000)};
  static const int bign[] = {1, 2, 3, 7, 16, 1000, 65535, 2147483647};
  for (uint64_t p = 0; p < 300; p++)
    for (int n = 1; n <= 40; n++) {
      uint64_t prev = 0;
      for (int k = 0; k < n; k++) {
        uint64_t b, e;
        sweep_shard_range(p, k, n, &b, &e);
        assert_true(b == prev && e >= b);
        assert_true(b == (uint64_t)k * p / (uint64_t)n); /* small: exact in 64 bits */
        assert_true(e - b == p / (uint64_t)n || e - b == p / (uint64_t)n + 1);
        prev = e;
      }
      assert_true(prev == p);
    }
  for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
    for (size_t j = 0; j < sizeof bign / sizeof bign[0]; j++) {
      int n = bign[j];
      int ks[] = {0, 1, n / 2, n - 2, n - 1};
      for (size_t q = 0; q < 5; q++) {
        int k = ks[q];
        if (k < 0 || k >= n) continue;
        uint64_t b, e, b2, e2;
        sweep_shard_range(big[i], k, n, &b, &e);
        unsigned __int128 want = (unsigned __int128)k * big[i] / (unsigned)n;
        unsigned __int128 want_end = (unsigned __int128)(k + 1) * big[i] / (unsigned)n;
        assert_true(b == (uint64_t)want && e == (uint64_t)want_end);
        if (k + 1 < n) {
          sweep_shard_range(big[i], k + 1, n, &b2, &e2);
          assert_true(b2 == e);
        }
      }
      uint64_t b, e;
      sweep_shard_range(big[i], n - 1, n, &b, &e);
      assert_true(e == big[i]);
    }
  uint64_t b = 9, e = 9;
  sweep_shard_range(10, 3, 3, &b, &e); /* out of range: empty */
  assert_true(b == 0 && e == 0);
}

/* --- progress ---------------------------------------------------------------------------------- */

static double fake_now;
static double fake_clock(void) { return fake_now; }

TEST(progress_text) {
  char buf[200];
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 1234567, 2700000, 1.0),
                      "[#########...........]  45%  1,234,567/2,700,000 points  1.2 M/s  1s left");
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 1234567, 2700000, 54.0),
                      "[#########...........]  45%  1,234,567/2,700,000 points  22.9 k/s  1m04s left");
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 10, 1000000, 2.0),
                      "[....................]   0%  10/1,000,000 points  5/s  2d07h left");
  /* a slow start on a huge sweep: a rate below 1 a second, and an ETA in years */
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 3, 1000000000000000ull, 25.0),
                      "[....................]   0%  3/1,000,000,000,000,000 points  0.12/s  2.64e+08 years left");
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 7200, 10000, 1.0),
                      "[##############......]  72%  7,200/10,000 points  7.2 k/s  0s left");
  /* no point done yet: no rate to show (not "0/s") and no ETA */
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 0, 100, 2.0),
                      "[....................]   0%  0/100 points  starting");
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 0, 1000000000000000ull, 25.0),
                      "[....................]   0%  0/1,000,000,000,000,000 points  starting");
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 5, 100, 0.0),
                      "[#...................]   5%  5/100 points  starting");
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 100, 100, 2.0),
                      "[####################] 100%  100/100 points  50/s");
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 999999, 1000000, 10.0),
                      "[###################.]  99%  999,999/1,000,000 points  100.0 k/s  0s left");
  assert_string_equal(sweep_progress_text(buf, sizeof buf, 5, 0, 1.0), "[####################] 100%  0/0 points");
  sweep_progress_text(buf, 10, 1, 2, 1); /* truncated, NUL-terminated */
  assert_int_equal(strlen(buf), 9);
}

TEST(progress_draws_after_a_second_at_most_ten_times_a_second) {
  Mem m;
  SweepProgress p;
  fake_now = 100;
  sweep_progress_start_on(&p, 1000, mem_open(&m), true, fake_clock);
  fake_now = 100.5;
  sweep_progress_update(&p, 100); /* too early */
  fake_now = 101.0;
  sweep_progress_update(&p, 200); /* not over a second yet */
  fake_now = 102.0;
  sweep_progress_update(&p, 400); /* drawn */
  fake_now = 102.05;
  sweep_progress_update(&p, 410); /* too soon after */
  fake_now = 102.5;
  sweep_progress_update(&p, 500); /* drawn */
  sweep_progress_finish(&p);
  sweep_progress_finish(&p); /* once */
  char *t = mem_take(&m);
  assert_string_equal(t, "\r[########............]  40%  400/1,000 points  200/s  3s left\033[K"
                         "\r[##########..........]  50%  500/1,000 points  200/s  3s left\033[K"
                         "\r\033[K");
  free(t);
  /* not a terminal: nothing; a sweep over in a second: nothing to clear */
  sweep_progress_start_on(&p, 1000, mem_open(&m), false, fake_clock);
  fake_now += 5;
  sweep_progress_update(&p, 10);
  sweep_progress_finish(&p);
  t = mem_take(&m);
  assert_string_equal(t, "");
  free(t);
  sweep_progress_start_on(&p, 1000, mem_open(&m), true, fake_clock);
  fake_now += 0.5;
  sweep_progress_update(&p, 1000);
  sweep_progress_finish(&p);
  t = mem_take(&m);
  assert_string_equal(t, "");
  free(t);
  /* the real constructor: on stderr (not a terminal under CTest), the monotonic clock */
  sweep_progress_start(&p, 10);
  assert_true(p.out == stderr && p.clock != NULL);
  sweep_progress_update(&p, 5);
  sweep_progress_finish(&p);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(top_matches_a_full_sort),
      cmocka_unit_test(top_copies_what_it_keeps),
      cmocka_unit_test(ranking_orders_nan_last_in_both_senses),
      cmocka_unit_test(table_exact),
      cmocka_unit_test(table_cells_by_key),
      cmocka_unit_test(csv_exact),
      cmocka_unit_test(jsonl_exact),
      cmocka_unit_test(formats_by_name_and_extension),
      cmocka_unit_test(write_failure_returns_minus_one),
      cmocka_unit_test(jsonl_round_trip_is_bit_exact),
      cmocka_unit_test(jsonl_invalid_utf8_becomes_u_fffd_and_round_trips),
      cmocka_unit_test(best_lines_round_trip),
      cmocka_unit_test(reader_accepts_escapes_and_blank_lines),
      cmocka_unit_test(merge_equals_unsharded),
      cmocka_unit_test(merged_table_leaves_out_elapsed),
      cmocka_unit_test(merge_rejects_malformed_files),
      cmocka_unit_test(merge_rejects_missing_duplicate_and_foreign_shards),
      cmocka_unit_test(merge_names_both_files_of_another_hash_or_version),
      cmocka_unit_test(merge_of_version_1_shards_warns),
      cmocka_unit_test(reader_takes_invalid_utf8_as_it_is_written),
      cmocka_unit_test(reader_survives_random_damage),
      cmocka_unit_test(merge_load_files),
      cmocka_unit_test(shard_k_of_n),
      cmocka_unit_test(shard_auto_launchers),
      cmocka_unit_test(shard_auto_errors),
      cmocka_unit_test(shard_ranges_tile_the_points),
      cmocka_unit_test(progress_text),
      cmocka_unit_test(progress_draws_after_a_second_at_most_ten_times_a_second),
  };
  return RUN_TESTS(tests);
}
