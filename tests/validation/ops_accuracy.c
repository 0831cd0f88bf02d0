/* ops_accuracy.c - how well the operator kernels predict measured times.
 *
 * 1. Per system (Perlmutter A100, Vista GH200): 5-fold cross-validated MAPE of the calibrated
 *    kernels per sample file, fwd and bwd, next to the paper's Best_error% for that operator
 *    (paper-regressors.csv).  Target: below the paper's figure, and below 5 % for the
 *    GEMM-backed linears.
 * 2. Extrapolation: tables fitted on the rows with hidden <= 6144 only, error on the rows with
 *    hidden 6656..8192.  Target: MAPE < 10 % over those rows.
 * 3. Uncalibrated GEMM: the datasheet model's TFLOP/s at the best shapes of
 *    published/gemm_mamf_max_achievable_matmul.csv, A100 and H100.  Target: within 25 %.
 * Every target is checked.  A target we know we miss is listed in known_fail[] and printed as
 * FAIL (known): it does not fail the CTest run, but one that starts passing or a new failure
 * does, so the list stays true.
 *
 * Usage: ops_accuracy DATA_DIR [--quick] (DATA_DIR: shared/data).  --quick leaves out 1 (five
 * fits per system) for the sanitizer build, which runs the same fitter on the same samples
 * through 2; the Release build checks every figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llmp_fit.h"
#include "ops.h"

static const char *const known_fail[] = {
#include "ops_accuracy_known.h"
    NULL};

#include "verdict.h"

/* The paper's Best_error% (a fraction) of op/prop ("fwd", "bwd", "dur"), or -1. */
static double paper_error(const char *dir, const char *op, const char *prop) {
  char path[2048], line[4096];
  snprintf(path, sizeof path, "%s/operator/paper-regressors.csv", dir);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  double e = -1;
  while (e < 0 && fgets(line, sizeof line, f)) {
    char *save, *gpu = strtok_r(line, ",", &save), *fn = strtok_r(NULL, ",", &save);
    strtok_r(NULL, ",", &save);
    char *pr = strtok_r(NULL, ",", &save);
    if (!gpu || !fn || !pr || strcmp(fn, op) != 0 || strcmp(pr, prop) != 0) continue;
    char *last = strrchr(save, ',');
    if (last) e = atof(last + 1);
  }
  fclose(f);
  return e;
}

/* Part 1 of one system: the 5-fold table, each row against its target; rows[f]: file f's. */
static void cross_validated(const RtGpu *g, const RtSampleSet *set, const char *dir, const char *sys,
                            const int *rows) {
  double cv[RT_FIT_MAX_FILES][2];
  rt_fit_cv(g, set, 5, cv);
  printf("\n== %s (GPU model %s), 5-fold cross-validated MAPE ==\n", sys, g->name);
  printf("%-32s %-4s %6s %8s %8s  %s\n", "operator", "pass", "rows", "ours %", "paper %", "");
  for (int f = 0; f < set->nfiles; f++) {
    int optim = strstr(set->file[f], "optimizer") != NULL;
    int linear = strncmp(set->file[f], "linear", 6) == 0;
    for (int w = 0; w < 2; w++) {
      if (w == 1 && set->meta[f].bwd_rows)
        printf("%-32s %-4s %6d %8s %8.2f  not measured: %d of its %d times are faster than the "
               "peak allows\n",
               set->file[f], "bwd", rows[f], "-", 100 * paper_error(dir, set->file[f], "bwd"), set->meta[f].bwd_bad,
               set->meta[f].bwd_rows);
      if (cv[f][w] < 0) continue;
      const char *prop = optim ? "dur" : w ? "bwd" : "fwd";
      double paper = paper_error(dir, set->file[f], prop);
      int pass = (paper < 0 || cv[f][w] < paper) && (!linear || cv[f][w] < 0.05);
      char what[160];
      snprintf(what, sizeof what, "%s %s %s", sys, set->file[f], prop);
      printf("%-32s %-4s %6d %8.2f %8.2f  %s\n", set->file[f], prop, rows[f], 100 * cv[f][w],
             paper < 0 ? NAN : 100 * paper, verdict(what, pass));
    }
  }
}

/* Part 2 of one system: extrapolation in model width, fit on hidden <= 6144, test on
 * 6656..8192. */
static void extrapolation(const RtGpu *g, const RtSampleSet *set, const char *sys) {
  unsigned char *train = calloc((size_t)set->n + 1, 1), *test = calloc((size_t)set->n + 1, 1);
  int ntest = 0;
  for (int i = 0; i < set->n; i++) {
    double h = set->s[i].hidden;
    train[i] = h > 0 && h <= 6144;
    test[i] = h >= 6656 && h <= 8192;
    ntest += test[i];
  }
  RtCalib *c = rt_fit(g, set, train);
  RtGpu gc = *g;
  gc.calib = c;
  double ex[RT_FIT_MAX_FILES][2];
  int exrows[RT_FIT_MAX_FILES];
  rt_fit_mape(&gc, set, test, ex, exrows);
  printf("\n-- %s extrapolation: tables from hidden <= 6144, error on hidden 6656-8192 --\n", sys);
  double sum = 0;
  int n = 0;
  for (int f = 0; f < set->nfiles; f++) {
    if (exrows[f] == 0) continue;
    printf("%-32s %6d  fwd %6.2f %%  bwd %6.2f %%\n", set->file[f], exrows[f], 100 * ex[f][0],
           ex[f][1] < 0 ? NAN : 100 * ex[f][1]);
    sum += ex[f][0] * exrows[f], n += exrows[f];
    if (ex[f][1] >= 0) sum += ex[f][1] * exrows[f], n += exrows[f];
  }
  char what[160];
  snprintf(what, sizeof what, "%s extrapolation", sys);
  printf("all (%d rows, fwd and bwd): MAPE %.2f %% (target < 10 %%)  %s\n", ntest, 100 * sum / (n ? n : 1),
         verdict(what, n > 0 && sum / n < 0.10));
  rt_calib_free(c);
  free(train), free(test);
}

static void system_table(const char *data, const char *sys, int quick) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/paper-samples/%s", data, sys);
  const RtGpu *g = rt_gpu_builtin(sys);
  RtSampleSet set;
  if (!g || rt_samples_load(dir, &set, stderr) != 0) {
    printf("%s: cannot load samples\n", sys);
    failures++;
    return;
  }
  /* As `llmp fit` does: no sample faster than the GPU's peak, and no backward column most of
   * whose times are (docs/calibration.md); such a column has no error to measure.  Times of
   * one of an op's 2^k kernels are scaled to the op (rt_samples_whole_ops: its errors are
   * relative, the same as scoring the recorded times against the prediction over 2^k). */
  rt_samples_clean(g, &set, NULL);
  double dummy[RT_FIT_MAX_FILES][2];
  int rows[RT_FIT_MAX_FILES];
  rt_fit_mape(g, &set, NULL, dummy, rows);
  if (!quick) cross_validated(g, &set, dir, sys, rows);
  extrapolation(g, &set, sys);
  rt_samples_free(&set);
}

/* The built-in gpu of each accelerator of the published table that llmp declares. */
static const char *const mamf_gpus[][2] = {
    {"NVIDIA A100 SXM", "a100_sxm4_80gb"}, {"NVIDIA H100 SXM", "h100_sxm"}, {"NVIDIA H200 SXM", "h200"},
    {"NVIDIA GH200 SXM", "gh200"},         {"NVIDIA B200 SXM", "b200"},     {"NVIDIA B300 SXM", "b300"},
    {"NVIDIA GB200 SXM", "gb200"},         {"AMD MI300X", "mi300x"},        {"AMD MI355X", "mi355x"}};

/* Uncalibrated GEMM at the published best shapes (MxNxK) of every gpu llmp declares, bf16 and
 * fp8. */
static void gemm_check(const char *data) {
  char path[2048], line[4096];
  snprintf(path, sizeof path, "%s/published/gemm_mamf_max_achievable_matmul.csv", data);
  FILE *f = fopen(path, "r");
  printf("\n== uncalibrated GEMM vs published max achievable matmul (%s) ==\n", "gemm_mamf_max_achievable_matmul.csv");
  if (!f) {
    printf("cannot open %s\n", path);
    failures++;
    return;
  }
  while (fgets(line, sizeof line, f)) {
    const char *gpu = NULL;
    for (size_t i = 0; i < sizeof mamf_gpus / sizeof *mamf_gpus; i++) {
      size_t n = strlen(mamf_gpus[i][0]);
      if (strncmp(line, mamf_gpus[i][0], n) == 0 && line[n] == ',') gpu = mamf_gpus[i][1];
    }
    if (!gpu) continue;
    char acc[64], dt[32], shape[64];
    double tf;
    if (sscanf(line, "%63[^,],%31[^,],%lf,%*[^,],%*[^,],%63[^,]", acc, dt, &tf, shape) != 4) continue;
    double m, n, k;
    if (sscanf(shape, "%lfx%lfx%lf", &m, &n, &k) != 3) continue;
    RtDtype d = strcmp(dt, "bf16") == 0 ? RT_BF16 : RT_FP8;
    RtGpu burst = *rt_gpu_builtin(gpu);
    burst.sustained_compute = burst.sustained_fp8 = 0; /* a short benchmark: the datasheet model */
    double t = rt_gemm_time(&burst, d, 1, m, k, n);
    double ours = 2 * m * n * k / t / 1e12, err = fabs(ours - tf) / tf;
    char what[160];
    snprintf(what, sizeof what, "gemm %s %s", gpu, dt);
    printf("%-16s %-11s %-18s measured %7.1f  model %7.1f TFLOP/s  %+6.1f %%  %s\n", gpu, dt, shape, tf, ours,
           100 * (ours - tf) / tf, verdict(what, err < 0.25));
  }
  fclose(f);
}

int main(int argc, char **argv) {
  int quick = argc == 3 && strcmp(argv[2], "--quick") == 0;
  if (argc != 2 && !quick) {
    fprintf(stderr, "usage: %s SHARED_DATA_DIR [--quick]\n", argv[0]);
    return 2;
  }
  system_table(argv[1], "a100-sxm4-80gb-perlmutter", quick);
  system_table(argv[1], "gh200-vista", quick);
  gemm_check(argv[1]);
  if (!quick) verdict_unjudged(); /* the listed misses are rows of part 1 */
  printf("\n%d unexpected failure(s), %d known failure(s) now passing or not measured\n", failures, surprises);
  return failures || surprises ? 1 : 0;
}
