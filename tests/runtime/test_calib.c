/* test_calib.c - calibration tables (runtime/calib.c): interpolation on hand-written tables in
 * a temporary folder, clamping, the loader's FILE:LINE: errors for every malformed case, the
 * writer (exact grid points; only a table that loads back is saved, whole), and the fast
 * lookup against the plain arithmetic, bit for bit. */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"
#include "calib.h"
#include "fastmath.h"
#include "llmp_fit.h"
#include "llmp_rt.h"

/* --- a temporary folder of table files ------------------------------------------------ */

static TmpDir tmp;

/* Writes tmp/name with the given text; returns its path (valid until tmp_close). */
static const char *put(const char *name, const char *text) { return tmp_file(&tmp, name, text, strlen(text)); }

static RtCalib *load(char *err, size_t len) { return rt_calib_load(tmp.dir, err, len); }

static void near(double got, double want) { assert_true(fabs(got - want) <= 1e-12 * fabs(want)); }

static const char gelu_table[] = "# a hand-written table\n"
                                 "table gelu fp16\n"
                                 "axis elements 1000 100000 10000000\n"
                                 "fwd 1 2 4\n"
                                 "bwd 0.5 0.5 2\n";

static const char ln_table[] = "table layernorm fp16\n"
                               "axis tokens 100 10000\n"
                               "axis hidden 10 1000 100000\n"
                               "fwd 1 2 4\n"
                               "fwd 8 16 32   # values may span lines\n";

/* At the grid's nodes the table gives the written correction, to rounding. */
TEST(exact_at_grid_points) {
  tmp_open(&tmp, "calib");
  put("gelu_fp16.tbl", gelu_table);
  put("layernorm_fp16.tbl", ln_table);
  char err[256];
  RtCalib *c = load(err, sizeof err);
  assert_non_null(c);
  assert_int_equal(rt_calib_ntables(c), 2);
  const RtTable *t = rt_table_find(c, "gelu", RT_FP16, "");
  assert_non_null(t);
  const double x[] = {1000, 100000, 10000000}, f[] = {1, 2, 4}, b[] = {0.5, 0.5, 2};
  for (int i = 0; i < 3; i++) {
    unsigned flags = 0;
    near(rt_table_eval(t, 0, &x[i], &flags), f[i]);
    near(rt_table_eval(t, 1, &x[i], &flags), b[i]);
    assert_int_equal(flags, 0);
  }
  t = rt_table_find(c, "layernorm", RT_FP16, "");
  assert_non_null(t);
  const double tok[] = {100, 10000}, hid[] = {10, 1000, 100000};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      unsigned flags = 0;
      near(rt_table_eval(t, 0, (const double[]){tok[i], hid[j]}, &flags), pow(2, 3 * i + j));
      assert_int_equal(flags, 0);
      /* no bwd grid: the forward's correction serves the backward, bit for bit */
      assert_true(rt_table_eval(t, 1, (const double[]){tok[i], hid[j]}, &flags) ==
                  rt_table_eval(t, 0, (const double[]){tok[i], hid[j]}, &flags));
    }
  rt_calib_free(c);
  tmp_close(&tmp);
}

/* Between nodes the correction is multilinear in (log x, log c): a power law in each axis. */
TEST(between_grid_points) {
  tmp_open(&tmp, "calib");
  put("gelu_fp16.tbl", gelu_table);
  put("layernorm_fp16.tbl", ln_table);
  char err[256];
  RtCalib *c = load(err, sizeof err);
  assert_non_null(c);
  const RtTable *t = rt_table_find(c, "gelu", RT_FP16, "");
  unsigned flags = 0;
  near(rt_table_eval(t, 0, (const double[]){10000}, &flags), sqrt(2)); /* log midpoint */
  near(rt_table_eval(t, 0, (const double[]){1e6}, &flags), sqrt(8));
  near(rt_table_eval(t, 0, (const double[]){1e3 * pow(100, 0.25)}, &flags), pow(2, 0.25));
  near(rt_table_eval(t, 1, (const double[]){1e6}, &flags), 1);
  assert_int_equal(flags, 0);
  /* 2-d: the cell centre is the geometric mean of its four corners; along an edge, of two. */
  t = rt_table_find(c, "layernorm", RT_FP16, "");
  near(rt_table_eval(t, 0, (const double[]){1000, 100}, &flags), pow(1.0 * 2 * 8 * 16, 0.25));
  near(rt_table_eval(t, 0, (const double[]){100, 10000}, &flags), sqrt(2 * 4));
  near(rt_table_eval(t, 0, (const double[]){1000, 1000}, &flags), sqrt(2 * 16));
  assert_int_equal(flags, 0);
  /* The public kernel applies it: the calibrated time is the physics time times the factor. */
  RtGpu g = *rt_gpu_builtin("a100_sxm4_80gb"), bare = g;
  g.calib = c;
  RtCost r = rt_gelu(&g, RT_FP16, 10000), p = rt_gelu(&bare, RT_FP16, 10000);
  assert_int_equal(r.flags, RT_CALIBRATED);
  assert_int_equal(p.flags, 0);
  near(r.fwd, p.fwd * sqrt(2));
  near(r.bwd, p.bwd * 0.5);
  /* no bf16 table: the fp16 correction applies to bf16 (same tensor cores, same rate) */
  assert_int_equal(rt_gelu(&g, RT_BF16, 10000).flags, RT_CALIBRATED);
  near(rt_gelu(&g, RT_BF16, 10000).fwd, rt_gelu(&bare, RT_BF16, 10000).fwd * sqrt(2));
  assert_int_equal(rt_gelu(&g, RT_FP32, 10000).flags, 0); /* but fp32 stays uncalibrated */
  rt_calib_free(c);
  tmp_close(&tmp);
}

/* Outside the grid the edge's correction holds and RT_EXTRAPOLATED is set; on the edge it is not. */
TEST(clamping) {
  tmp_open(&tmp, "calib");
  put("gelu_fp16.tbl", gelu_table);
  put("layernorm_fp16.tbl", ln_table);
  char err[256];
  RtCalib *c = load(err, sizeof err);
  assert_non_null(c);
  const RtTable *t = rt_table_find(c, "gelu", RT_FP16, "");
  unsigned flags = 0;
  near(rt_table_eval(t, 0, (const double[]){10}, &flags), 1);
  assert_int_equal(flags, RT_EXTRAPOLATED);
  flags = 0;
  near(rt_table_eval(t, 0, (const double[]){1e12}, &flags), 4);
  near(rt_table_eval(t, 1, (const double[]){1e12}, &flags), 2);
  assert_int_equal(flags, RT_EXTRAPOLATED);
  flags = 0;
  rt_table_eval(t, 0, (const double[]){1e7}, &flags);
  assert_int_equal(flags, 0);
  /* one axis out, the other interpolated */
  t = rt_table_find(c, "layernorm", RT_FP16, "");
  flags = 0;
  near(rt_table_eval(t, 0, (const double[]){1e9, 100}, &flags), sqrt(8 * 16));
  assert_int_equal(flags, RT_EXTRAPOLATED);
  RtGpu g = *rt_gpu_builtin("a100_sxm4_80gb");
  g.calib = c;
  assert_int_equal(rt_gelu(&g, RT_FP16, 1e12).flags, RT_CALIBRATED | RT_EXTRAPOLATED);
  assert_int_equal(rt_layernorm(&g, RT_FP16, 1000, 1000).flags, RT_CALIBRATED);
  assert_int_equal(rt_layernorm(&g, RT_FP16, 1, 1000).flags, RT_CALIBRATED | RT_EXTRAPOLATED);
  rt_calib_free(c);
  tmp_close(&tmp);
}

/* One malformed file: the loader fails, with "PATH:LINE: " and a message containing `what`. */
static void rejects(const char *text, int line, const char *what) {
  tmp_open(&tmp, "calib");
  const char *path = put("bad.tbl", text);
  char err[512], want[192];
  RtCalib *c = load(err, sizeof err);
  if (c) {
    rt_calib_free(c);
    tmp_close(&tmp);
    fail_msg("accepted:\n%s", text);
  }
  snprintf(want, sizeof want, "%s:%d: ", path, line);
  if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, what)) {
    tmp_close(&tmp);
    fail_msg("got `%s`, want `%s...%s...`", err, want, what);
  }
  tmp_close(&tmp);
}

TEST(bad_header) {
  rejects("table linear\naxis m 1 2\naxis k 1 2\naxis n 1 2\nfwd 1 1 1 1 1 1 1 1\n", 1, "expected `table KERNEL DTYPE");
  rejects("# c\ntable linear fp64\n", 2, "unknown dtype `fp64`");
  rejects("table softmax fp16 causal\n", 1, "key=value");
  rejects("tables gelu fp16\n", 1, "unknown line `tables`");
  rejects("axis elements 1 2\n", 1, "`axis` before any `table` line");
  rejects("fwd 1 2\n", 1, "`fwd` before any `table` line");
}

TEST(unknown_kernel) {
  rejects("table matmul fp16\naxis m 1 2\nfwd 1 1\n", 1, "unknown kernel `matmul`");
  rejects("\n\ntable Linear fp16\naxis m 1 2\nfwd 1 1\n", 3, "unknown kernel `Linear`");
}

TEST(wrong_number_of_values) {
  rejects("table gelu fp16\naxis elements 1 2 3\nfwd 1 1\n", 1, "has 2 fwd values; its axes need 3");
  rejects("table gelu fp16\naxis elements 1 2 3\nfwd 1 1 1\nbwd 1\n", 1, "has 1 bwd values");
  rejects("table gelu fp16\naxis elements 1 2 3\nfwd 1 1\nfwd 1 1\n", 4, "more fwd values");
  rejects("table gelu fp16\naxis elements 1 2\nfwd\n", 1, "has 0 fwd values");
  /* an operator table with the wrong axes */
  rejects("table gelu fp16\naxis n 1 2\nfwd 1 1\n", 1, "takes the axes elements");
}

TEST(non_numeric_value) {
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 x\n", 3, "correction `x` is not a positive");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 0\n", 3, "correction `0`");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 -1\n", 3, "correction `-1`");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1.5e\n", 3, "correction `1.5e`");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 inf\n", 3, "correction `inf`");
  rejects("table gelu fp16\naxis elements 1 two\nfwd 1 1\n", 2, "axis point `two`");
}

TEST(non_increasing_axis) {
  rejects("table gelu fp16\naxis elements 1 3 2\nfwd 1 1 1\n", 2, "axis points must increase (`2`)");
  rejects("table gelu fp16\naxis elements 1 2 2\nfwd 1 1 1\n", 2, "must increase");
  rejects("table gelu fp16\naxis elements 0 2\nfwd 1 1\n", 2, "axis point `0`");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\naxis x 1\n", 4, "`axis` after the values");
}

TEST(duplicate_table) {
  /* in one file */
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\ntable gelu fp16\n", 4, "second table gelu fp16");
  /* qualifiers in another order are the same table */
  rejects("table allreduce fp16 nodes=2 gpus_per_node=4\naxis bytes 1 2\nfwd 1 1\n"
          "table allreduce fp16 gpus_per_node=4  nodes=2\n",
          4, "second table allreduce fp16 gpus_per_node=4 nodes=2");
  /* in two files: reported in the second one read (files load in name order) */
  tmp_open(&tmp, "calib");
  put("a.tbl", "table gelu fp16\naxis elements 1 2\nfwd 1 1\n");
  const char *second = put("b.tbl", "# again\ntable gelu fp16\naxis elements 1 2\nfwd 1 1\n");
  char err[512], want[192];
  RtCalib *c = load(err, sizeof err);
  if (c) rt_calib_free(c);
  assert_null(c);
  snprintf(want, sizeof want, "%s:2: second table gelu fp16 in this folder", second);
  assert_string_equal(err, want);
  tmp_close(&tmp);
}

/* An axis holds up to RT_MAX_POINTS points (a collective table's 2048 load); a grid up to
 * RT_MAX_VALUES nodes, checked before any value is stored. */
TEST(size_limits) {
  enum { N = RT_MAX_POINTS + 1 };
  char *text = malloc(32 * (size_t)N + 64), *p = text;
  p += sprintf(p, "table allreduce fp16 nodes=2 gpus_per_node=1\naxis bytes");
  for (int i = 1; i <= N; i++) p += sprintf(p, " %d", i);
  sprintf(p, "\nfwd 1\n");
  rejects(text, 2, "more than 4096 points");
  p = text + sprintf(text, "table allreduce fp16 nodes=2 gpus_per_node=1\naxis bytes");
  for (int i = 1; i < N; i++) p += sprintf(p, " %d", i);
  p += sprintf(p, "\nfwd");
  for (int i = 1; i < N; i++) p += sprintf(p, " %s", i % 2 ? "1.01" : "0.99");
  sprintf(p, "\n");
  tmp_open(&tmp, "calib");
  put("big.tbl", text);
  char err[256];
  RtCalib *c = load(err, sizeof err);
  assert_non_null(c);
  const RtTable *t = &c->tables[0];
  assert_int_equal(t->npts[0], RT_MAX_POINTS);
  unsigned fl = 0;
  for (int i = 1; i < N; i++) { /* every node comes back, and halfway between two the mean */
    double x = i, mid = i + 0.5;
    assert_true(fabs(rt_table_eval(t, 0, &x, &fl) - (i % 2 ? 1.01 : 0.99)) < 1e-12);
    if (i + 1 < N) assert_true(fabs(log(rt_table_eval(t, 0, &mid, &fl))) < 0.011);
  }
  assert_int_equal(fl, 0);
  rt_calib_free(c);
  tmp_close(&tmp);
  free(text);
  /* 4096 x 4096 x 2 nodes: more than 2^24, refused at the values */
  text = malloc(2 * 32 * (size_t)N + 128);
  p = text + sprintf(text, "table rope fp16\naxis tokens");
  for (int i = 1; i < N; i++) p += sprintf(p, " %d", i);
  p += sprintf(p, "\naxis heads");
  for (int i = 1; i < N; i++) p += sprintf(p, " %d", i);
  sprintf(p, "\naxis head_dim 64 128\nfwd 1\n");
  rejects(text, 5, "table rope fp16: its axes make more than 16777216 values");
  free(text);
}

TEST(missing_fwd) {
  rejects("table gelu fp16\naxis elements 1 2\nbwd 1 1\n", 1, "table gelu fp16 has no fwd values");
  rejects("table gelu fp16\naxis elements 1 2\n", 1, "has no fwd values");
  rejects("table gelu fp16\n", 1, "table gelu fp16 has no axis");
  rejects("table gelu fp16\naxis elements 1 2\ntable add fp16\naxis elements 1\nfwd 1\n", 1,
          "table gelu fp16 has no fwd values");
  rejects("# only a comment\n", 1, "no table in this file");
}

/* bmm's classes (calib.h): the thinner of k and n, and the largest of 8..64 dividing it. */
TEST(bmm_classes) {
  assert_int_equal(rt_bmm_class(64, 1024), 3);   /* Q K^T, head dimension 64 */
  assert_int_equal(rt_bmm_class(1024, 64), 7);   /* P V */
  assert_int_equal(rt_bmm_class(72, 4096), 0);   /* 8 x 9 */
  assert_int_equal(rt_bmm_class(4096, 80), 5);   /* 16 x 5 */
  assert_int_equal(rt_bmm_class(96, 96), 2);     /* a tie is thin k: 32 x 3 */
  assert_int_equal(rt_bmm_class(128, 512), 3);   /* 64 and past: 64 */
  assert_int_equal(rt_bmm_class(100, 1024), -1); /* not a multiple of 8 */
  assert_int_equal(rt_bmm_class(4, 1024), -1);
  assert_int_equal(rt_bmm_class(1024, 85.5), -1);
  assert_string_equal(rt_bmm_class_keys(3), "align=64 thin=k");
  assert_string_equal(rt_bmm_class_keys(4), "align=8 thin=n");
  assert_null(rt_bmm_class_keys(8));
  assert_null(rt_bmm_class_keys(-1));
}

/* A bmm is corrected by its class's table where the folder has one, else by `bmm`'s; the
 * unfused attention's two products look theirs up alike; bf16 uses the fp16 tables. */
TEST(bmm_class_tables) {
  static const char axes[] = "axis batch 1 1000\naxis m 1 100000\naxis k 1 100000\naxis n 1 100000\n";
  char all[512], cls[512];
  snprintf(all, sizeof all, "table bmm fp16\n%sfwd 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2\n", axes);
  snprintf(cls, sizeof cls, "table bmm fp16 thin=k align=64\n%sfwd 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3\n", axes);
  tmp_open(&tmp, "calib");
  put("bmm_fp16.tbl", all);
  put("bmm_fp16_align-64_thin-k.tbl", cls);
  char err[256];
  RtCalib *c = load(err, sizeof err);
  assert_non_null(c);
  assert_true(rt_bmm_table(c, RT_FP16, 64, 1024) == rt_table_find(c, "bmm", RT_FP16, "align=64 thin=k"));
  assert_true(rt_bmm_table(c, RT_FP16, 72, 1024) == rt_table_find(c, "bmm", RT_FP16, ""));
  assert_true(rt_bmm_table(c, RT_FP16, 100, 1024) == rt_table_find(c, "bmm", RT_FP16, ""));
  assert_true(rt_bmm_table(c, RT_BF16, 64, 1024) == rt_bmm_table(c, RT_FP16, 64, 1024));
  assert_null(rt_bmm_table(c, RT_FP32, 64, 1024));
  assert_null(rt_bmm_table(NULL, RT_FP16, 64, 1024));
  RtGpu plain = *rt_gpu_builtin("a100_sxm4_80gb"), cal = plain;
  plain.calib = NULL, cal.calib = c;
  RtCost p = rt_bmm(&plain, RT_FP16, 32, 2048, 64, 2048), q = rt_bmm(&cal, RT_FP16, 32, 2048, 64, 2048);
  near(q.fwd, 3 * p.fwd), near(q.bwd, 3 * p.bwd);
  assert_true(q.flags & RT_CALIBRATED);
  p = rt_bmm(&plain, RT_FP16, 32, 2048, 2048, 64), q = rt_bmm(&cal, RT_FP16, 32, 2048, 2048, 64);
  near(q.fwd, 2 * p.fwd), near(q.bwd, 2 * p.bwd); /* thin n: no table of its own */
  /* attention = scores (thin k: 3x) + softmax (no table) + values (thin n: 2x) */
  RtCost s = rt_bmm(&plain, RT_FP16, 32, 2048, 64, 2048), v = rt_bmm(&plain, RT_FP16, 32, 2048, 2048, 64);
  RtCost m = rt_softmax(&plain, RT_FP16, 32 * 2048, 2048, 1);
  RtCost a = rt_attention(&cal, RT_FP16, 2, 2048, 16, 64, 1);
  near(a.fwd, 3 * s.fwd + m.fwd + 2 * v.fwd), near(a.bwd, 3 * s.bwd + m.bwd + 2 * v.bwd);
  rt_calib_free(c);
  tmp_close(&tmp);
  /* qualifiers other than a class, and a class table with other axes */
  rejects("table bmm fp16 align=7 thin=k\naxis batch 1\naxis m 1\naxis k 1\naxis n 1\nfwd 1\n", 1,
          "bmm's qualifiers are `align=8|16|32|64 thin=k|n`");
  rejects("table bmm fp16 thin=k\naxis batch 1\naxis m 1\naxis k 1\naxis n 1\nfwd 1\n", 1, "bmm's qualifiers");
  rejects("table bmm fp16 align=8 thin=n\naxis batch 1\naxis m 1\naxis n 1\nfwd 1\n", 1,
          "kernel bmm takes the axes batch m k n");
}

TEST(empty_folder) {
  tmp_open(&tmp, "calib");
  put("README", "not a table\n");
  char err[256], want[128];
  assert_null(load(err, sizeof err));
  snprintf(want, sizeof want, "%s:0: no .tbl file in this folder", tmp.dir);
  assert_string_equal(err, want);
  tmp_close(&tmp);
}

TEST(missing_folder) {
  char err[256];
  assert_null(rt_calib_load("/nonexistent/llmp/calibration", err, sizeof err));
  assert_non_null(strstr(err, "/nonexistent/llmp/calibration:0: cannot open folder"));
  assert_null(rt_calib_load(NULL, err, sizeof err));
  assert_string_equal(err, "(null):0: no folder given");
  /* a tiny error buffer truncates, never overflows; none at all is allowed */
  char tiny[8];
  assert_null(rt_calib_load("/nonexistent", tiny, sizeof tiny));
  assert_int_equal(strlen(tiny), 7);
  assert_null(rt_calib_load("/nonexistent", NULL, 0));
}

/* Every shipped folder loads, and writing a table and reading it back gives the same
 * corrections (to the writer's 4 decimals). */
/* The shipped folders of hw/calibration/, loaded (failing the test if one does not load). */
static const char *const shipped[] = {"a100-sxm4-80gb-perlmutter", "gh200-vista", "perlmutter", "vista"};
enum { NSHIPPED = sizeof shipped / sizeof shipped[0] };

static RtCalib *load_shipped(int i) {
  char path[512], err[512];
  snprintf(path, sizeof path, "%s/hw/calibration/%s", LLMP_SOURCE_DIR, shipped[i]);
  RtCalib *c = rt_calib_load(path, err, sizeof err);
  if (!c) fail_msg("%s", err);
  return c;
}

TEST(shipped_folders_load) {
  for (int i = 0; i < NSHIPPED; i++) {
    RtCalib *c = load_shipped(i);
    assert_true(rt_calib_ntables(c) > 0);
    assert_non_null(rt_calib_table_name(c, 0));
    assert_null(rt_calib_table_name(c, rt_calib_ntables(c)));
    rt_calib_free(c);
  }
}

TEST(write_read_back) {
  tmp_open(&tmp, "calib");
  put("gelu_fp16.tbl", gelu_table);
  char err[256];
  RtCalib *c = load(err, sizeof err);
  assert_non_null(c);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_int_equal(rt_table_write(f, rt_table_find(c, "gelu", RT_FP16, ""), "line one\nline two"), 0);
  fclose(f);
  rt_calib_free(c);
  assert_non_null(strstr(text, "# line one\n# line two\ntable gelu fp16\naxis elements 1000 100000 10000000\n"
                               "fwd 1.0000 2.0000 4.0000\nbwd 0.5000 0.5000 2.0000\n"));
  free(text);
  tmp_close(&tmp);
}

/* --- saving: a table that loads back, or nothing -------------------------------------- */

/* A gelu table over grid points xs[0..n) with the fwd corrections c[0..n). */
static void gelu_of(RtTable *t, const double *xs, const double *c, int n) {
  const char *names[] = {"elements"};
  const double *pts[] = {xs};
  assert_int_equal(rt_table_init(t, "gelu", RT_FP16, "", 1, names, &n, pts, 0), 0);
  for (int i = 0; i < n; i++) t->logc[0][i] = log(c[i]);
}

/* Grid points are written exactly (integers as integers, up to 2^53 - 1, not %g's
 * 1.04858e+06) and read back as the same doubles; a small correction is not written as 0. */
TEST(save_axes_exact) {
  tmp_open(&tmp, "calib");
  const double xs[] = {3, 1048576, 123456789.5, 9007199254740991.0}, c[] = {0.5, 1.5, 0.0012345, 2};
  RtTable t;
  gelu_of(&t, xs, c, 4);
  char err[512] = "";
  const char *path = tmp_path(&tmp, "gelu_fp16.tbl");
  assert_int_equal(rt_table_save(&t, path, "a header", err, sizeof err), 0);
  char *text = read_file(path, NULL);
  assert_string_equal(text, "# a header\ntable gelu fp16\naxis elements 3 1048576 123456789.5 9007199254740991\n"
                            "fwd 0.5000 1.5000 0.001234 2.0000\n");
  free(text);
  RtCalib *cal = load(err, sizeof err);
  assert_non_null(cal);
  const RtTable *u = rt_table_find(cal, "gelu", RT_FP16, "");
  for (int i = 0; i < 4; i++) assert_true(u->x[0][i] == xs[i] && u->logx[0][i] == t.logx[0][i]);
  rt_calib_free(cal);
  rt_table_release(&t);
  tmp_close(&tmp);
}

/* A table whose text the loader would refuse (a correction of 0 after exp) is not written:
 * the error is the loader's, at the line, and the file already there is left as it was, with
 * no temporary file beside it. */
TEST(save_refuses_what_would_not_load) {
  tmp_open(&tmp, "calib");
  const double xs[] = {1024, 2048}, c[] = {1, 1};
  RtTable t;
  gelu_of(&t, xs, c, 2);
  t.logc[0][1] = -800; /* exp: 0 */
  const char *path = put("gelu_fp16.tbl", gelu_table);
  char err[512] = "", want[512];
  assert_int_equal(rt_table_save(&t, path, "line one\nline two", err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:5: correction `0` is not a positive number; the table is not written", path);
  assert_string_equal(err, want);
  char *text = read_file(path, NULL);
  assert_string_equal(text, gelu_table);
  free(text);
  t.logc[0][1] = 1000; /* exp: inf */
  assert_int_equal(rt_table_save(&t, path, NULL, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:3: correction `inf` is not a positive number; the table is not written", path);
  assert_string_equal(err, want);
  DIR *d = opendir(tmp.dir);
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d));) /* gelu_fp16.tbl alone */
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) assert_string_equal(e->d_name, "gelu_fp16.tbl");
  closedir(d);
  rt_table_release(&t);
  tmp_close(&tmp);
}

/* A table is written through a temporary file renamed over the old one, whose mode it keeps;
 * a folder that is not there is an error with the reason. */
TEST(save_replaces_whole) {
  tmp_open(&tmp, "calib");
  const double xs[] = {1024, 2048}, c[] = {1.25, 0.75};
  RtTable t;
  gelu_of(&t, xs, c, 2);
  const char *path = put("gelu_fp16.tbl", gelu_table);
  assert_int_equal(chmod(path, 0640), 0);
  char err[512] = "", want[600];
  assert_int_equal(rt_table_save(&t, path, NULL, err, sizeof err), 0);
  char *text = read_file(path, NULL);
  assert_string_equal(text, "table gelu fp16\naxis elements 1024 2048\nfwd 1.2500 0.7500\n");
  free(text);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0640);
  const char *gone = tmp_path(&tmp, "no/such/folder/gelu_fp16.tbl");
  assert_int_equal(rt_table_save(&t, gone, NULL, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:0: cannot write: %s", gone, strerror(ENOENT));
  assert_string_equal(err, want);
  rt_table_release(&t);
  tmp_close(&tmp);
}

/* --- points: a sampled shape's own correction -------------------------------------------- */

static const char ln_points[] = "table layernorm fp16\n"
                                "axis tokens 100 10000\n"
                                "axis hidden 10 1000 100000\n"
                                "fwd 1 2 4\n"
                                "fwd 8 16 32\n"
                                "bwd 1 1 1 1 1 1\n"
                                "point 1000 100 1.25 0.5   # between the nodes\n"
                                "point 100 10 2 1          # on a node\n"
                                "point 1000 333.33333333333331 0.8 1.1\n";

/* A point multiplies the grid's correction at exactly its coordinates, fwd and bwd apart;
 * anywhere else, even next to it, the grid alone answers. */
TEST(points_exact_only) {
  tmp_open(&tmp, "calib");
  put("layernorm_fp16.tbl", ln_points);
  char err[256];
  RtCalib *c = load(err, sizeof err);
  assert_non_null(c);
  const RtTable *t = rt_table_find(c, "layernorm", RT_FP16, "");
  assert_int_equal(t->npoints, 3);
  unsigned fl = 0;
  /* (1000, 100) lies halfway between the nodes on both axes, in log: (1 2 8 16)^(1/4) */
  double grid = 4, x[] = {1000, 100};
  near(rt_table_eval(t, 0, x, &fl), 1.25 * grid);
  near(rt_table_eval(t, 1, x, &fl), 0.5);
  double x0[] = {100, 10};
  near(rt_table_eval(t, 0, x0, &fl), 2.0);
  double x3[] = {1000, 1000.0 / 3};
  double g3 = exp(0.5 * (log(1) + log(8)) * (1 - log(1000.0 / 3 / 10) / log(100)) +
                  0.5 * (log(2) + log(16)) * (log(1000.0 / 3 / 10) / log(100)));
  assert_true(fabs(rt_table_eval(t, 0, x3, &fl) / (0.8 * g3) - 1) < 1e-12);
  /* (the key is the bits of the coordinates' logs: a coordinate a few ulps away can have the
   * same log, and is then the same shape) */
  double near_x[] = {1000, 100 * (1 + 1e-9)}, off_x[] = {1001, 100};
  assert_true(fabs(rt_table_eval(t, 0, near_x, &fl) / grid - 1) < 1e-9);
  assert_true(fabs(rt_table_eval(t, 0, off_x, &fl) / grid - 1) < 1e-3);
  /* through a kernel: layernorm(tokens 1000, hidden 100) is the physics times 1.25 x grid */
  RtGpu g = *rt_gpu_builtin("a100_sxm4_80gb");
  RtCost raw = rt_layernorm(&g, RT_FP16, 1000, 100);
  g.calib = c;
  RtCost cal = rt_layernorm(&g, RT_FP16, 1000, 100);
  assert_true(fabs(cal.fwd / (raw.fwd * 1.25 * grid) - 1) < 1e-12);
  assert_true(fabs(cal.bwd / (raw.bwd * 0.5) - 1) < 1e-12);
  assert_true(cal.flags & RT_CALIBRATED);
  rt_calib_free(c);
  tmp_close(&tmp);
}

/* Without a bwd grid a point has one correction, which serves the backward time too. */
TEST(points_fwd_only_table) {
  tmp_open(&tmp, "calib");
  put("gelu_fp16.tbl", "table gelu fp16\naxis elements 1000 1000000\nfwd 1 1\npoint 5000 3\n");
  char err[256];
  RtCalib *c = load(err, sizeof err);
  assert_non_null(c);
  RtGpu g = *rt_gpu_builtin("gh200");
  RtCost raw = rt_gelu(&g, RT_FP16, 5000);
  g.calib = c;
  RtCost cal = rt_gelu(&g, RT_FP16, 5000);
  near(cal.fwd, 3 * raw.fwd);
  near(cal.bwd, 3 * raw.bwd);
  rt_calib_free(c);
  tmp_close(&tmp);
}

TEST(points_malformed) {
  rejects("table gelu fp16\naxis elements 1 2\npoint 1 2\nfwd 1 1\n", 3, "`point` before the values");
  rejects("point 1 2\n", 1, "`point` before any `table` line");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\npoint 1\n", 4,
          "a point of table gelu fp16 is 1 coordinates and 1 correction, not 1 numbers");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\nbwd 1 1\npoint 1 2\n", 5,
          "1 coordinates and 2 corrections, not 2 numbers");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\npoint 0 2\n", 4, "point coordinate `0`");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\npoint 1 -2\n", 4, "correction `-2`");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\npoint 1 nan\n", 4, "correction `nan`");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\npoint 1.5 2\npoint 1.50 3\n", 5,
          "point `1.50 ...` twice in table gelu fp16");
  rejects("table gelu fp16\naxis elements 1 2\nfwd 1 1\npoint 1.5 2\nbwd 1 1\n", 5, "`bwd` after `point` lines");
}

/* Many points: the hash table grows and finds every one; written out sorted, read back the same. */
TEST(points_many_write_read) {
  RtTable t;
  const char *ax[] = {"m", "k", "n"};
  int np[] = {2, 2, 2};
  double pts[] = {1, 1e6};
  const double *pp[] = {pts, pts, pts};
  assert_int_equal(rt_table_init(&t, "linear", RT_FP16, "", 3, ax, np, pp, 1), 0);
  for (int i = 0; i < 3000; i++) {
    double x[] = {1 + i % 17, 3 + i / 17, 7.5 + i}, c[] = {i * 1e-4, -i * 1e-4};
    assert_int_equal(rt_table_add_point(&t, x, c), 0);
  }
  double x[] = {1, 3, 7.5}, c[] = {0, 0};
  assert_int_equal(rt_table_add_point(&t, x, c), 1);
  assert_int_equal(t.npoints, 3000);
  for (int i = 0; i < 3000; i++) {
    double lx[] = {rt_log(1 + i % 17), rt_log(3 + i / 17), rt_log(7.5 + i)};
    const RtPoint *p = rt_table_point(&t, lx);
    assert_non_null(p);
    assert_true(p->c[0] == i * 1e-4 && p->c[1] == -i * 1e-4);
  }
  double miss[] = {rt_log(2), rt_log(3), rt_log(7.5)};
  assert_null(rt_table_point(&t, miss));
  tmp_open(&tmp, "calib");
  FILE *f = tmp_fopen(&tmp, "linear_fp16.tbl");
  assert_int_equal(rt_table_write(f, &t, NULL), 0);
  fclose(f);
  char err[256];
  RtCalib *c2 = load(err, sizeof err);
  assert_non_null(c2);
  const RtTable *u = rt_table_find(c2, "linear", RT_FP16, "");
  assert_int_equal(u->npoints, 3000);
  for (int i = 0; i < 3000; i += 7) {
    double lx[] = {rt_log(1 + i % 17), rt_log(3 + i / 17), rt_log(7.5 + i)};
    const RtPoint *p = rt_table_point(u, lx);
    assert_non_null(p);
    assert_true(fabs(p->c[0] - i * 1e-4) < 1e-4 && fabs(p->c[1] + i * 1e-4) < 1e-4); /* %.4f */
  }
  rt_calib_free(c2);
  rt_table_release(&t);
  tmp_close(&tmp);
}

/* --- the fast lookup against the plain arithmetic --------------------------------------- */

/* The reference interpolation, written plainly: per axis the cell by a linear scan, the
 * first i with p[i+1] >= l (clamped: i 0 below the grid, n - 2 above it), and the fraction
 * f = (l - p[i]) x 1/(p[i+1] - p[i]), 1 where l is p[i+1] (an axis of one point: f 1 on
 * its only point); then the blend (1 - f) lower + f upper along each axis, axis 0 outermost,
 * recursively, plus the correction of the point at lx if the table has one (found by a linear
 * scan of its slots); rt_exp of it. */
static double blend(const RtTable *t, const double *v, const int *lo, const double *frac, int a, int off) {
  if (a >= t->naxes || a >= RT_MAX_AXES) return v[off];
  int stride = 1;
  for (int b = a + 1; b < t->naxes && b < RT_MAX_AXES; b++) stride *= t->npts[b];
  int lo_off = off + lo[a] * stride, up_off = t->npts[a] == 1 ? lo_off : lo_off + stride;
  return (1 - frac[a]) * blend(t, v, lo, frac, a + 1, lo_off) + frac[a] * blend(t, v, lo, frac, a + 1, up_off);
}

static double reference(const RtTable *t, int which, const double *lx, unsigned *flags) {
  const double *v = t->logc[which] ? t->logc[which] : t->logc[0];
  double pc = 0;
  for (unsigned i = 0; t->npoints && i <= t->point_mask; i++) {
    int a = 0;
    while (a < t->naxes && t->point[i].lx[a] == lx[a]) a++;
    if (a == t->naxes) pc = t->point[i].c[which && t->logc[1]];
  }
  int lo[RT_MAX_AXES];
  double frac[RT_MAX_AXES];
  for (int a = 0; a < t->naxes; a++) {
    const double *p = t->logx[a];
    int n = t->npts[a];
    double l = lx[a];
    if (n == 1) {
      if (fabs(l - p[0]) > 1e-9) *flags |= RT_EXTRAPOLATED;
      lo[a] = 0, frac[a] = 1;
      continue;
    }
    if (l < p[0] - 1e-9 || l > p[n - 1] + 1e-9) *flags |= RT_EXTRAPOLATED;
    double c = l < p[0] ? p[0] : l > p[n - 1] ? p[n - 1] : l;
    int i = 0;
    while (p[i + 1] < c) i++;
    lo[a] = i, frac[a] = c == p[i + 1] ? 1 : (c - p[i]) * (1 / (p[i + 1] - p[i]));
  }
  return rt_exp(blend(t, v, lo, frac, 0, 0) + pc);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static double uniform01(void) { return unit_double(xorshift64(&rng_state)); }

/* Points on grid nodes, between them, beyond both edges, at integers and at the table's
 * points, through rt_table_eval() (both grids) and rt_calibrate_log(): the same bits and flags
 * as reference(). */
static void check_lookup(const RtTable *t, int points) {
  unsigned slot = 0;
  for (int it = 0; it < points; it++) {
    double x[RT_MAX_AXES], lx[RT_MAX_AXES];
    if (t->npoints && it % 4 == 3) { /* the next point */
      while (isnan(t->point[slot].lx[0])) slot = (slot + 1) & t->point_mask;
      for (int a = 0; a < t->naxes; a++) x[a] = t->point_x[slot][a], lx[a] = rt_log(x[a]);
      slot = (slot + 1) & t->point_mask;
    } else
      for (int a = 0; a < t->naxes; a++) {
        const double *p = t->logx[a];
        int n = t->npts[a];
        double u = uniform01(), l = p[(int)(uniform01() * n)];
        if (u >= 0.2 && u < 0.3)
          l = p[0] - 3 * uniform01();
        else if (u >= 0.3 && u < 0.4)
          l = p[n - 1] + 3 * uniform01();
        else if (u >= 0.4)
          l = p[0] + (p[n - 1] - p[0]) * uniform01();
        if (uniform01() < 0.3) l = log(fmax(1, round(exp(l))));
        x[a] = exp(l), lx[a] = rt_log(x[a]);
      }
    for (int w = 0; w < 2; w++) {
      unsigned f = 0, rf = 0;
      double got = rt_table_eval(t, w, x, &f);
      double want = reference(t, w, lx, &rf);
      if (memcmp(&got, &want, sizeof got) != 0 || f != rf)
        fail_msg("%s grid %d: %a (flags %u), reference %a (%u)", t->name, w, got, f, want, rf);
    }
    RtCost c = {1e-3, it % 5 ? 2e-3 : 0, 0};
    unsigned rf = 0;
    double f0 = reference(t, 0, lx, &rf) * 1e-3;
    double f1 = it % 5 ? reference(t, 1, lx, &rf) * 2e-3 : 0;
    rt_calibrate_log(t, lx, &c);
    if (memcmp(&c.fwd, &f0, sizeof f0) != 0 || memcmp(&c.bwd, &f1, sizeof f1) != 0 || c.flags != (rf | RT_CALIBRATED))
      fail_msg("%s calibrate: %a %a, reference %a %a", t->name, c.fwd, c.bwd, f0, f1);
  }
}

TEST(fast_lookup_matches_reference) {
  for (int i = 0; i < NSHIPPED; i++) { /* every shipped table */
    RtCalib *c = load_shipped(i);
    for (int k = 0; k < rt_calib_ntables(c); k++) check_lookup(&c->tables[k], 2000);
    rt_calib_free(c);
  }
  /* Axes the bucket index finds hard: one point, two, a cluster of close points beside a far
   * one (many points in one bucket), 64 points, and axes of each shape together. */
  static double one[] = {512}, two[] = {1, 1e9}, cluster[] = {1, 1.001, 1.002, 1.003, 1.004, 1e6}, many[64];
  for (int i = 0; i < 64; i++) many[i] = pow(1.3, i) * (i % 2 ? 1.1 : 1); /* uneven steps */
  const double *axes[] = {one, two, cluster, many};
  const int npts[] = {1, 2, 6, 64};
  const char *names4[] = {"a", "b", "c", "d"}, *names4_1[] = {"bytes"};
  /* a collective's axis of thousands of points, unevenly spaced and clustered: 4096 slices */
  static double wide[3000];
  for (int i = 0; i < 3000; i++) wide[i] = 1e6 * exp(i * 0.002 + (i % 7 == 0 ? 0.0015 : 0) + (i > 2000 ? 3 : 0));
  const double *wp[] = {wide};
  const int wn[] = {3000};
  RtTable w1;
  assert_int_equal(rt_table_init(&w1, "allreduce", RT_FP16, "nodes=2", 1, names4_1, wn, wp, 0), 0);
  assert_int_equal(w1.nbuckets[0], 4096);
  for (int v = 0; v < w1.nvals; v++) w1.logc[0][v] = 2 * uniform01() - 1;
  check_lookup(&w1, 20000);
  rt_table_release(&w1);
  for (int shape = 0; shape < 4 * 4 * 4; shape++) {
    int pick[3] = {shape % 4, shape / 4 % 4, shape / 16}, np[3];
    const double *pts[3];
    for (int a = 0; a < 3; a++) pts[a] = axes[pick[a]], np[a] = npts[pick[a]];
    RtTable t;
    assert_int_equal(rt_table_init(&t, "linear", RT_FP16, "", 3, names4, np, pts, shape & 1), 0);
    for (int w = 0; w < 2; w++)
      for (int v = 0; t.logc[w] && v < t.nvals; v++) t.logc[w][v] = 2 * uniform01() - 1;
    check_lookup(&t, 300);
    rt_table_release(&t);
  }
}

static int same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

/* A two-lane function against its one-lane one on every ordered pair of v[0..n): each lane
 * the same bits. */
static void lanes_on_pairs(void (*two)(double, double, double *, double *), double (*one)(double), const double *v,
                           size_t n) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      double ya, yb;
      two(v[i], v[j], &ya, &yb);
      assert_true(same_bits(ya, one(v[i])) && same_bits(yb, one(v[j])));
    }
}

/* rt_exp2 is rt_exp on two lanes, bit for bit: over the whole fast range (the two lanes
 * different numbers, so a lane mix-up shows), at its edges, and outside it in either lane. */
TEST(exp2_is_exp_bit_for_bit) {
  for (int i = 0; i <= 2000000; i++) {
    double a = -699.9 + 1399.8 * i / 2000000, b = 0.37 - 3.1 * i / 2000000, ya, yb;
    rt_exp2(a, b, &ya, &yb);
    if (!same_bits(ya, rt_exp(a)) || !same_bits(yb, rt_exp(b)))
      fail_msg("rt_exp2(%.17g, %.17g) = %.17g, %.17g; rt_exp: %.17g, %.17g", a, b, ya, yb, rt_exp(a), rt_exp(b));
  }
  static const double edge[] = {0, -0.0, 1e-300, -1e-300, 699.999, -699.999, 700, -700, 800, -800, INFINITY, -INFINITY};
  lanes_on_pairs(rt_exp2, rt_exp, edge, sizeof edge / sizeof edge[0]);
  double ya, yb;
  rt_exp2(NAN, 1, &ya, &yb);
  assert_true(isnan(ya) && same_bits(yb, rt_exp(1)));
}

/* rt_log2 likewise: two lanes of rt_log, bit for bit, from subnormal-adjacent to huge, across
 * the cell boundaries around 1, and outside the range in either lane. */
TEST(log2_is_log_bit_for_bit) {
  for (int i = 0; i <= 2000000; i++) {
    double a = exp(-700 + 1400.0 * i / 2000000), b = exp(3.0 - 6.0 * i / 2000000), ya, yb;
    rt_log2(a, b, &ya, &yb);
    if (!same_bits(ya, rt_log(a)) || !same_bits(yb, rt_log(b)))
      fail_msg("rt_log2(%.17g, %.17g) = %.17g, %.17g; rt_log: %.17g, %.17g", a, b, ya, yb, rt_log(a), rt_log(b));
  }
  for (int k = -1022; k <= 1023; k++) { /* powers of two and their neighbours */
    double p = ldexp(1, k), q = nextafter(p, 0), ya, yb;
    rt_log2(p, q, &ya, &yb);
    assert_true(same_bits(ya, rt_log(p)) && same_bits(yb, rt_log(q)));
  }
  static const double edge[] = {1, 0.6875, 1.375, 0x1p-1022, 0x1p-1070, 0, -1, DBL_MAX, INFINITY};
  lanes_on_pairs(rt_log2, rt_log, edge, sizeof edge / sizeof edge[0]);
  double ya, yb;
  rt_log2(NAN, 2, &ya, &yb);
  assert_true(isnan(ya) && same_bits(yb, rt_log(2)));
}

/* rt_log and rt_exp (fastmath.h), which the lookups use, against libm: within 3 ulps (log:
 * or 2.3e-16 absolute, near 1 where the result is tiny) over a log-uniform sweep, libm's
 * answers outside the fast ranges, and exact where the lookups rely on it. */
static double ulp_of(double v) { return nextafter(fabs(v), INFINITY) - fabs(v); }

TEST(fastmath_near_libm) {
  double worst_log = 0, worst_exp = 0;
  for (int i = 0; i <= 2000000; i++) {
    double x = exp(-40 + 120.0 * i / 2000000), y = -700 + 1400.0 * i / 2000000;
    double el = fabs(rt_log(x) - log(x)), ee = fabs(rt_exp(y) - exp(y));
    if (el > 2.3e-16 && el / ulp_of(log(x)) > worst_log) worst_log = el / ulp_of(log(x));
    if (ee / ulp_of(exp(y)) > worst_exp) worst_exp = ee / ulp_of(exp(y));
  }
  if (worst_log > 3 || worst_exp > 3) fail_msg("log %.1f ulps, exp %.1f ulps", worst_log, worst_exp);
  assert_true(rt_log(1) == 0 || fabs(rt_log(1)) < 1e-17);
  assert_true(rt_exp(0) == 1);
  assert_true(isinf(rt_log(0)) && rt_log(0) < 0 && isnan(rt_log(-1)) && isnan(rt_log(NAN)));
  assert_true(isinf(rt_log(INFINITY)) && rt_log(0x1p-1070) == log(0x1p-1070));
  assert_true(isinf(rt_exp(800)) && rt_exp(-800) == 0 && isnan(rt_exp(NAN)));
  for (int k = -60; k <= 60; k++) { /* powers of two: z exactly 1, the cell across 1 */
    double want = log(ldexp(1, k));
    assert_true(fabs(rt_log(ldexp(1, k)) - want) <= (k ? 3 * ulp_of(want) : 1e-17));
  }
}

/* rt_strtod() against libc's strtod on the table format's numbers and around them: random
 * decimals of 1 to 25 digits with and without a point, a sign and an exponent, and the
 * strings its fast path must hand on (hex, inf, nan, spaces, half an exponent): the same
 * bits, the same end, the same errno. */
static void same_as_strtod(const char *s) {
  char *e1, *e2;
  errno = 0;
  double a = rt_strtod(s, &e1);
  int err1 = errno;
  errno = 0;
  double b = strtod(s, &e2);
  int err2 = errno;
  if (memcmp(&a, &b, sizeof a) != 0 || e1 != e2 || err1 != err2)
    fail_msg("`%s`: rt_strtod %.17g (end +%d, errno %d), strtod %.17g (end +%d, errno %d)", s, a, (int)(e1 - s), err1,
             b, (int)(e2 - s), err2);
}

TEST(strtod_same_bits) {
  /* clang-format off */
  static const char *const fixed[] = {
      "0", "-0", "+1", "1.", ".5", "1.2083", "0.0000", "-0.0123", "24576", "3.5e-05", "1e22",
      "1e23", "9007199254740992", "9007199254740993", "0.1", "123456789012345678", "1e-22",
      "4.9406564584124654e-324", "1.7976931348623157e308", "1e400", "1e-400", "0x1p3", "-0X10",
      "inf", "-infinity", "nan", " 1", "1 ", "1e", "1e+", "1.5e-", ".", "-", "", "1..2", "1e5x",
      "00000000000000000000000000000000000000000000000000000000000000000000001.5",
      "1.00000000000000000000000000000000000000000000000000000000000000000000000001"};
  /* clang-format on */
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) same_as_strtod(fixed[i]);
  uint64_t r = 0x853c49e6748fea9bull;
  char buf[64];
  for (int i = 0; i < 300000; i++) {
    int n = 0;
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    unsigned u = (unsigned)(r >> 33);
    if (u & 1) buf[n++] = (u & 2) ? '-' : '+';
    int nd = 1 + (int)((u >> 2) % 25), point = (u >> 8) & 1 ? (int)((u >> 9) % (unsigned)(nd + 1)) : -1;
    for (int d = 0; d < nd; d++) {
      if (d == point) buf[n++] = '.';
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      buf[n++] = (char)('0' + (r >> 33) % 10);
    }
    if ((u >> 14) & 1) n += snprintf(buf + n, sizeof buf - (size_t)n, "e%d", (int)((u >> 15) % 61) - 30);
    buf[n] = '\0';
    same_as_strtod(buf);
  }
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exact_at_grid_points),
      cmocka_unit_test(fastmath_near_libm),
      cmocka_unit_test(exp2_is_exp_bit_for_bit),
      cmocka_unit_test(log2_is_log_bit_for_bit),
      cmocka_unit_test(strtod_same_bits),
      cmocka_unit_test(between_grid_points),
      cmocka_unit_test(clamping),
      cmocka_unit_test(bad_header),
      cmocka_unit_test(unknown_kernel),
      cmocka_unit_test(wrong_number_of_values),
      cmocka_unit_test(non_numeric_value),
      cmocka_unit_test(non_increasing_axis),
      cmocka_unit_test(duplicate_table),
      cmocka_unit_test(size_limits),
      cmocka_unit_test(missing_fwd),
      cmocka_unit_test(empty_folder),
      cmocka_unit_test(missing_folder),
      cmocka_unit_test(bmm_classes),
      cmocka_unit_test(bmm_class_tables),
      cmocka_unit_test(shipped_folders_load),
      cmocka_unit_test(write_read_back),
      cmocka_unit_test(points_exact_only),
      cmocka_unit_test(points_fwd_only_table),
      cmocka_unit_test(points_malformed),
      cmocka_unit_test(points_many_write_read),
      cmocka_unit_test(save_axes_exact),
      cmocka_unit_test(save_refuses_what_would_not_load),
      cmocka_unit_test(save_replaces_whole),
      cmocka_unit_test(fast_lookup_matches_reference),
  };
  return RUN_TESTS(tests);
}
