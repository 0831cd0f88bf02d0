/* sample_efficiency.c - how the calibration's error falls with the samples it sees (issue 6).
 *
 *   sample_efficiency DATA_DIR [--reps N] [--no-collectives] [--select random|spread|file]
 *                     [--max-mean PCT] [--min-within N] [--quick]
 *   sample_efficiency --samples DIR GPU [--reps N] [--select random|spread|file] [--max-mean PCT]
 *                     [--quick]
 *
 * DATA_DIR is shared/data.  For the paper's A100 (Perlmutter) and GH200 (Vista) samples
 * (paper-samples/<gpu>/operator/ and nccl/): for each fraction of 1, 5, 10, 20 and 80 % of
 * the rows, a random subset of that fraction of every sample file (stratified per file: at
 * least one row of each; fixed seeds) calibrates the tables (rt_fit for the operators,
 * rt_fit_collective for each collective layout, fed by all files of the layout), and the
 * mean absolute percentage error is measured on the rows of each file that the fit did not
 * see.  Averaged over N repetitions (default 5) with different subsets.  Printed per
 * operator (each paper file, fwd and bwd; `dur` for the optimizer) next to the paper's
 * Best_error% for that operator (paper-regressors.csv, its own hold-out with all its
 * samples), then a summary per fraction: the number of operators within the paper's error
 * and the mean error.
 *
 * --select spread takes, instead of a random subset, the first rows of each file in the order
 * hw/probe samples in (hw/probe/order.py, spread(): coverage first): the row of least work
 * (the physics model's time) first, then each next the row farthest, in log-argument space,
 * from the rows already taken (the probe's priorities aside).  The order is fixed, so there
 * is one repetition.  It measures what a user whose probe ran out of budget at that fraction
 * of the paper's grid gets.
 *
 * --select file takes the first rows of each file as they stand in it: for hw/probe's files,
 * the order the probe measured them in (coverage first, with its priorities), so the fraction
 * is what a probe stopped by its budget at that point would have given.
 *
 * --samples DIR GPU measures one operator sample folder of one of the built-in GPUs (e.g.
 * hw/samples/h100-sxm5-80gb-hbm3 h100_sxm) instead of the paper's two: operators only, no
 * paper figures.  The GPU's sustained figures are left out, as `llmp fit` leaves them.
 *
 * A collective layout fitted from a single row has no table (rt_fit_collective needs two):
 * its error is then that of the physics alone.
 *
 * As a regression guard (CTest): --max-mean PCT fails when the mean operator error at 10 %
 * of the samples (both systems) exceeds PCT; --min-within N when fewer than N operators are
 * within the paper's error at 10 %.  --quick fits the 10 % column alone (the one the guards
 * read; the others are most of the time): for the sanitizer build.  Exit status 0, 1 when a
 * guard fails, 2 on bad usage or missing data. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "clusters.h"
#include "fit_collectives.h"
#include "hash.h"
#include "llmp_fit.h"
#include "llmp_rt.h"
#include "ops.h"
#include "sorted.h"

enum { NFRAC = 5, MAX_ENTRIES = 256, MAX_GROUPS = 32 };
static const double fractions[NFRAC] = {0.01, 0.05, 0.10, 0.20, 0.80};
enum { AT10 = 2 }; /* the index of 10 % */

/* --- a fixed-seed generator ------------------------------------------------------------ */

static uint64_t mix(uint64_t z) { /* splitmix64's finaliser */
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t seed_of(const char *s, int a, int b) {
  /* FNV-1a of the name, then the numbers.  The basis is not HASH_BASIS (a digit short): the
   * published efficiencies were drawn with it, so it stays. */
  uint64_t h = hash_str(1469598103934665603ull, s);
  return mix(h ^ mix((uint64_t)a * 0x9E3779B97F4A7C15ull + (uint64_t)b));
}

/* Shuffles idx[0..n) (Fisher-Yates) with a generator seeded by seed. */
static void shuffle(int *idx, int n, uint64_t seed) {
  for (int i = n - 1; i > 0; i--) {
    seed += 0x9E3779B97F4A7C15ull;
    int j = (int)(mix(seed) % (uint64_t)(i + 1));
    int t = idx[i];
    idx[i] = idx[j], idx[j] = t;
  }
}

/* The rows a fraction takes of n: rounded, at least 1, fewer than n where n > 1. */
static int take(double frac, int n) {
  int k = (int)(frac * n + 0.5);
  if (k < 1) k = 1;
  if (k >= n && n > 1) k = n - 1;
  return k;
}

/* Orders idx[0..n) coverage first (hw/probe/order.py spread(), without its priorities): the
 * point of least work first, then each next the point whose squared distance to the nearest
 * point taken is largest (ties: the earlier in idx).  pts[i * dim ..] are point i's coordinates
 * (logs of its sizes), work[i] its work. */
static void spread(int *idx, int n, const double *pts, int dim, const double *work) {
  if (n <= 1) return;
  double *dmin = malloc((size_t)n * sizeof *dmin);
  if (!dmin) abort();
  int first = 0;
  for (int i = 1; i < n; i++)
    if (work[idx[i]] < work[idx[first]]) first = i;
  int t = idx[0];
  idx[0] = idx[first], idx[first] = t;
  for (int i = 1; i < n; i++) dmin[i] = INFINITY;
  for (int k = 1; k < n; k++) {
    const double *c = pts + (size_t)idx[k - 1] * dim;
    int best = k;
    for (int i = k; i < n; i++) {
      const double *x = pts + (size_t)idx[i] * dim;
      double d = 0;
      for (int a = 0; a < dim; a++) d += (x[a] - c[a]) * (x[a] - c[a]);
      if (d < dmin[i]) dmin[i] = d;
      if (dmin[i] > dmin[best]) best = i;
    }
    t = idx[k], idx[k] = idx[best], idx[best] = t;
    double dt = dmin[k];
    dmin[k] = dmin[best], dmin[best] = dt;
  }
  free(dmin);
}

/* --- the paper's figures ---------------------------------------------------------------- */

/* The last field of a line (Best_error%, a fraction); the config field before it holds
 * quoted commas. */
static double last_field(const char *line) {
  const char *last = strrchr(line, ',');
  return last ? atof(last + 1) : -1;
}

/* operator/paper-regressors.csv: the error of op/prop ("fwd", "bwd", "dur"), or -1. */
static double paper_op_error(const char *dir, const char *op, const char *prop) {
  char path[2048], line[4096];
  snprintf(path, sizeof path, "%s/operator/paper-regressors.csv", dir);
  FILE *f = fopen(path, "r");
  double e = -1;
  while (f && e < 0 && fgets(line, sizeof line, f)) {
    char fn[128], pr[16];
    if (sscanf(line, "%*[^,],%127[^,],%*[^,],%15[^,],", fn, pr) == 2 && strcmp(fn, op) == 0 && strcmp(pr, prop) == 0)
      e = last_field(line);
  }
  if (f) fclose(f);
  return e;
}

/* nccl/paper-regressors.csv: the error of file stem fn (allreduce_large, ...) at a layout. */
static double paper_coll_error(const char *dir, const char *fn, int nodes, int gpn) {
  char path[2048], line[4096];
  snprintf(path, sizeof path, "%s/nccl/paper-regressors.csv", dir);
  FILE *f = fopen(path, "r");
  double e = -1;
  while (f && e < 0 && fgets(line, sizeof line, f)) {
    char name[128];
    int n, g;
    if (sscanf(line, "%*[^,],%127[^,],%*[^,],%d,%d,", name, &n, &g) == 3 && strcmp(name, fn) == 0 && n == nodes &&
        g == gpn)
      e = last_field(line);
  }
  if (f) fclose(f);
  return e;
}

/* --- one row of the table ---------------------------------------------------------------- */

typedef struct Entry {
  char name[96]; /* a file name (up to 63) and a dtype */
  const char *prop;
  int rows;
  double paper;      /* fraction, or -1 */
  double err[NFRAC]; /* mean over the repetitions of the held-out MAPE */
  int reps[NFRAC];
} Entry;

typedef struct Table {
  const char *sys, *what;
  int n;
  Entry e[MAX_ENTRIES];
  char note[1024]; /* columns not measured, one line each */
} Table;

static void print_table(const Table *t, int reps) {
  printf("\n== %s: %s, MAPE on the rows the fit did not see (mean of %d repetitions) ==\n", t->sys, t->what, reps);
  printf("%-34s %-4s %6s %7s", "operator", "", "rows", "paper");
  for (int k = 0; k < NFRAC; k++) printf(" %6.0f%%", 100 * fractions[k]);
  printf("\n");
  for (int i = 0; i < t->n; i++) {
    const Entry *e = &t->e[i];
    printf("%-34s %-4s %6d", e->name, e->prop, e->rows);
    if (e->paper < 0)
      printf(" %7s", "-");
    else
      printf(" %6.2f%%", 100 * e->paper);
    for (int k = 0; k < NFRAC; k++)
      if (e->reps[k])
        printf(" %6.2f%%", 100 * e->err[k] / e->reps[k]);
      else
        printf(" %7s", "-");
    printf("\n");
  }
  if (t->note[0]) printf("%s", t->note);
}

/* Summary over the tables' entries: per fraction, the number within the paper's error (of
 * those with a paper figure), the mean and the median error; *mean10 and *within10 receive
 * the 10 % column's figures. */
static void summary(const char *title, const Table *const *ts, int nt, double *mean10, int *within10) {
  static double v[NFRAC + 1][2 * MAX_ENTRIES];
  int nv[NFRAC + 1] = {0}, within[NFRAC] = {0}, with_paper = 0, n = 0;
  double sum[NFRAC + 1] = {0};
  for (int t = 0; t < nt; t++)
    for (int i = 0; i < ts[t]->n; i++) {
      const Entry *e = &ts[t]->e[i];
      n++;
      if (e->paper >= 0) with_paper++, sum[NFRAC] += e->paper, v[NFRAC][nv[NFRAC]++] = e->paper;
      for (int k = 0; k < NFRAC; k++) {
        if (!e->reps[k]) continue;
        double x = e->err[k] / e->reps[k];
        sum[k] += x, v[k][nv[k]++] = x;
        within[k] += e->paper >= 0 && x < e->paper;
      }
    }
  printf("\n-- %s: %d operators, %d with the paper's figure --\n", title, n, with_paper);
  printf("%-34s", "fraction of the samples seen");
  for (int k = 0; k < NFRAC; k++) printf(" %6.0f%%", 100 * fractions[k]);
  printf("   paper\n");
  if (with_paper) {
    printf("%-34s", "within the paper's error");
    for (int k = 0; k < NFRAC; k++)
      if (nv[k])
        printf(" %3d/%-3d", within[k], with_paper);
      else
        printf(" %7s", "-");
    printf("\n");
  }
  printf("%-34s", "mean error");
  for (int k = 0; k <= NFRAC; k++)
    if (nv[k])
      printf(" %6.2f%%", 100 * sum[k] / nv[k]);
    else
      printf(" %7s", "-");
  printf("\n%-34s", "median error");
  for (int k = 0; k <= NFRAC; k++)
    if (nv[k])
      printf(" %6.2f%%", 100 * rt_median(v[k], nv[k]));
    else
      printf(" %7s", "-");
  printf("\n");
  if (mean10) *mean10 = nv[AT10] ? sum[AT10] / nv[AT10] : NAN;
  if (within10) *within10 = within[AT10];
}

/* --- operators ----------------------------------------------------------------------------- */

enum { BY_RANDOM, BY_SPREAD, BY_FILE };
static int show_dtype; /* operator names with their dtype (--samples) */
static int quick;      /* --quick: the fraction AT10 only */

/* The operator samples of folder dir (a system of the paper's, or --samples), fitted on GPU
 * gpu's model without its sustained figures (as `llmp fit`). */
static int operators(const char *dir, const char *sys, const char *gpu, int reps, int by, Table *t) {
  const RtGpu *builtin = rt_gpu_builtin(gpu);
  if (!builtin) return -1;
  RtGpu bench = *builtin;
  bench.sustained_compute = bench.sustained_fp8 = 0;
  const RtGpu *g = &bench;
  int by_spread = by == BY_SPREAD;
  RtSampleSet set;
  if (rt_samples_load(dir, &set, stderr) != 0) return -1;
  /* As `llmp fit` does (docs/calibration.md): a backward column most of whose times beat the
   * GPU's peak is not used, and has no error to measure (noted under the table). */
  if (rt_samples_clean(g, &set, NULL) != 0) return -1; /* and one kernel's times scaled */
  for (int f = 0; f < set.nfiles; f++)
    if (set.meta[f].bwd_rows)
      snprintf(t->note + strlen(t->note), sizeof t->note - strlen(t->note),
               "%s bwd: not measured: %d of its %d times are faster than %s's peak allows\n", set.file[f],
               set.meta[f].bwd_bad, set.meta[f].bwd_rows, g->name);
  int n = set.n, nf = set.nfiles;
  int *order = malloc((size_t)n * sizeof *order), *start = calloc((size_t)nf + 1, sizeof *start);
  unsigned char *use = malloc((size_t)n), *test = malloc((size_t)n);
  if (!order || !start || !use || !test) abort();
  /* The rows of each file, contiguous in order[] (samples load file by file). */
  for (int i = 0; i < n; i++) start[set.s[i].file + 1]++;
  for (int f = 0; f < nf; f++) start[f + 1] += start[f];
  int *fill = calloc((size_t)nf, sizeof *fill);
  for (int i = 0; i < n; i++) order[start[set.s[i].file] + fill[set.s[i].file]++] = i;
  free(fill);
  /* The entries: each file's fwd and bwd (dur for the optimizer steps). */
  int entry[RT_FIT_MAX_FILES][2];
  t->sys = sys, t->what = "operators", t->n = 0;
  for (int f = 0; f < nf; f++)
    for (int w = 0; w < 2; w++) {
      entry[f][w] = -1;
      int has = 0;
      for (int i = start[f]; i < start[f + 1] && !has; i++) has = w ? set.s[order[i]].bwd > 0 : 1;
      if (!has || t->n == MAX_ENTRIES) continue;
      Entry *e = &t->e[entry[f][w] = t->n++];
      memset(e, 0, sizeof *e);
      if (show_dtype) /* --samples: a probe's folder holds each operator in several dtypes */
        snprintf(e->name, sizeof e->name, "%s %s", set.file[f], rt_dtype_name((RtDtype)set.s[order[start[f]]].dtype));
      else
        snprintf(e->name, sizeof e->name, "%s", set.file[f]);
      e->prop = strstr(set.file[f], "optimizer") || !strcmp(set.file[f], "adam") ? "dur" : w ? "bwd" : "fwd";
      e->rows = start[f + 1] - start[f];
      e->paper = paper_op_error(dir, set.file[f], e->prop);
    }
  double *pts = NULL, *work = NULL;
  if (by_spread) { /* log kernel arguments, and the physics time as the work */
    pts = malloc((size_t)n * RT_OP_MAX_ARGS * sizeof *pts), work = malloc((size_t)n * sizeof *work);
    if (!pts || !work) abort();
    for (int i = 0; i < n; i++) {
      const RtSample *x = &set.s[i];
      double xs[RT_MAX_AXES];
      for (int a = 0; a < RT_OP_MAX_ARGS; a++)
        pts[(size_t)i * RT_OP_MAX_ARGS + a] = a < rt_op_nargs((RtOp)x->op) && x->a[a] > 0 ? log(x->a[a]) : 0;
      work[i] = rt_op_physics(g, (RtOp)x->op, x->dtype, x->a, xs).fwd;
    }
    for (int f = 0; f < nf; f++) spread(order + start[f], start[f + 1] - start[f], pts, RT_OP_MAX_ARGS, work);
  }
  for (int r = 0; r < reps; r++) {
    for (int f = 0; f < nf && by == BY_RANDOM; f++)
      shuffle(order + start[f], start[f + 1] - start[f], seed_of(sys, r, f));
    for (int k = 0; k < NFRAC; k++) {
      if (quick && k != AT10) continue;
      memset(use, 0, (size_t)n);
      for (int f = 0; f < nf; f++) {
        int m = start[f + 1] - start[f];
        for (int i = 0; i < take(fractions[k], m); i++) use[order[start[f] + i]] = 1;
      }
      for (int i = 0; i < n; i++) test[i] = !use[i];
      RtCalib *c = rt_fit(g, &set, use);
      if (!c) abort();
      RtGpu gc = *g;
      gc.calib = c;
      double mape[RT_FIT_MAX_FILES][2];
      int rows[RT_FIT_MAX_FILES];
      rt_fit_mape(&gc, &set, test, mape, rows);
      for (int f = 0; f < nf; f++)
        for (int w = 0; w < 2; w++)
          if (entry[f][w] >= 0 && mape[f][w] >= 0) {
            t->e[entry[f][w]].err[k] += mape[f][w];
            t->e[entry[f][w]].reps[k]++;
          }
      rt_calib_free(c);
    }
  }
  free(order), free(start), free(use), free(test), free(pts), free(work);
  rt_samples_free(&set);
  return 0;
}

/* --- collectives --------------------------------------------------------------------------- */

typedef struct File {
  char stem[RT_NAME_MAX]; /* allreduce_large */
  int n, dropped;         /* samples kept, and dropped as faster than the links allow */
  double *bytes, *sec;
  int entry;
} File;

typedef struct Group {
  char kernel[RT_NAME_MAX];
  int nodes, gpn, nfiles;
  File file[2]; /* the plain and the _large file */
} Group;

/* The groups of an nccl/ folder: files KERNEL[_large]_fp16_N_G.csv, by (kernel, layout). */
static int load_groups(const RtCluster *sys, const char *dir, Group *gs, int *ng) {
  char **names;
  int nn = dir_list(dir, ".csv", &names);
  if (nn < 0) return -1;
  *ng = 0;
  int rc = 0;
  for (int i = 0; i < nn; i++) {
    char stem[RT_NAME_MAX], kernel[RT_NAME_MAX];
    int nodes, gpn;
    const char *fp = strstr(names[i], "_fp16_");
    if (rc || !fp || (size_t)(fp - names[i]) >= sizeof stem || sscanf(fp, "_fp16_%d_%d.csv", &nodes, &gpn) != 2)
      continue;
    snprintf(stem, sizeof stem, "%.*s", (int)(fp - names[i]), names[i]);
    memcpy(kernel, stem, sizeof kernel);
    char *large = strstr(kernel, "_large");
    if (large) *large = '\0';
    int j = 0;
    while (j < *ng && !(strcmp(gs[j].kernel, kernel) == 0 && gs[j].nodes == nodes && gs[j].gpn == gpn)) j++;
    if (j == *ng) {
      if (*ng == MAX_GROUPS)
        rc = -1;
      else
        memset(&gs[j], 0, sizeof gs[j]), snprintf(gs[j].kernel, sizeof gs[j].kernel, "%s", kernel),
            gs[j].nodes = nodes, gs[j].gpn = gpn, (*ng)++;
    }
    if (rc == 0 && gs[j].nfiles < 2) {
      File *f = &gs[j].file[gs[j].nfiles++];
      char path[2048], err[512];
      snprintf(f->stem, sizeof f->stem, "%s", stem);
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      f->n = rt_collective_csv_read(path, kernel, nodes, gpn, &f->bytes, &f->sec, NULL, err, sizeof err);
      if (f->n < 0) fprintf(stderr, "%s\n", err), rc = -1, f->n = 0;
      /* As `llmp fit` does: no sample faster than the links allow. */
      int kept = rt_collective_keep_possible(kernel, sys, nodes, gpn, f->bytes, f->sec, NULL, f->n);
      f->dropped = f->n - kept, f->n = kept;
    }
  }
  dir_list_free(names, nn);
  return rc;
}

static int collectives(const char *data, const char *gpudir, const char *cluster, int reps, int by, Table *t) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/paper-samples/%s/nccl", data, gpudir);
  const RtCluster *sys = rt_cluster_builtin(cluster);
  static Group gs[MAX_GROUPS];
  int ng = 0;
  if (!sys || load_groups(sys, dir, gs, &ng) != 0) return -1;
  RtCluster bare = *sys;
  bare.calib = NULL;
  t->sys = cluster, t->what = "collectives", t->n = 0;
  for (int j = 0; j < ng; j++) {
    /* A layout most of whose samples are impossible gets no table from `llmp fit`: nothing
     * credible to measure (docs/calibration.md). */
    int kept = 0, dropped = 0;
    for (int k = 0; k < gs[j].nfiles; k++) kept += gs[j].file[k].n, dropped += gs[j].file[k].dropped;
    if (!rt_collective_layout_credible(kept, dropped)) {
      for (int k = 0; k < gs[j].nfiles; k++)
        snprintf(t->note + strlen(t->note), sizeof t->note - strlen(t->note),
                 "%s %dx%d: not measured: %d of its %d samples are faster than the links allow\n", gs[j].file[k].stem,
                 gs[j].nodes, gs[j].gpn, gs[j].file[k].dropped, gs[j].file[k].n + gs[j].file[k].dropped);
      for (int k = 0; k < gs[j].nfiles; k++) free(gs[j].file[k].bytes), free(gs[j].file[k].sec);
      gs[j].nfiles = 0;
    }
  }
  for (int j = 0; j < ng; j++)
    for (int k = 0; k < gs[j].nfiles && t->n < MAX_ENTRIES; k++) {
      File *f = &gs[j].file[k];
      Entry *e = &t->e[f->entry = t->n++];
      memset(e, 0, sizeof *e);
      snprintf(e->name, sizeof e->name, "%s %dx%d", f->stem, gs[j].nodes, gs[j].gpn);
      e->prop = "";
      e->rows = f->n;
      char pdir[1024];
      snprintf(pdir, sizeof pdir, "%s/paper-samples/%s", data, gpudir);
      e->paper = paper_coll_error(pdir, f->stem, gs[j].nodes, gs[j].gpn);
    }
  for (int j = 0; j < ng; j++) {
    Group *g = &gs[j];
    int total = 0;
    for (int k = 0; k < g->nfiles; k++) total += g->file[k].n;
    int *order[2] = {NULL, NULL};
    double *tb = malloc((size_t)total * sizeof *tb), *ts = malloc((size_t)total * sizeof *ts);
    for (int k = 0; k < g->nfiles; k++) order[k] = malloc((size_t)g->file[k].n * sizeof *order[k]);
    for (int r = 0; r < reps; r++) {
      for (int k = 0; k < g->nfiles; k++) {
        File *f = &g->file[k];
        for (int i = 0; i < f->n; i++) order[k][i] = i;
        if (by == BY_FILE) continue; /* the rows as the file holds them */
        if (by == BY_RANDOM) {
          shuffle(order[k], f->n, seed_of(f->stem, r, 1000 * g->nodes + g->gpn));
          continue;
        }
        double *lb = malloc((size_t)f->n * sizeof *lb); /* log bytes; the work: the bytes */
        if (!lb) abort();
        for (int i = 0; i < f->n; i++) lb[i] = log(f->bytes[i]);
        spread(order[k], f->n, lb, 1, f->bytes);
        free(lb);
      }
      for (int q = 0; q < NFRAC; q++) {
        if (quick && q != AT10) continue;
        int m = 0, seen[2];
        for (int k = 0; k < g->nfiles; k++) {
          seen[k] = take(fractions[q], g->file[k].n);
          for (int i = 0; i < seen[k]; i++)
            tb[m] = g->file[k].bytes[order[k][i]], ts[m++] = g->file[k].sec[order[k][i]];
        }
        RtTable tab;
        char err[256];
        int fitted = rt_fit_collective(sys, g->kernel, g->nodes, g->gpn, tb, ts, m, 0, &tab, err, sizeof err) == 0;
        for (int k = 0; k < g->nfiles; k++) {
          const File *f = &g->file[k];
          double sum = 0;
          for (int i = seen[k]; i < f->n; i++) {
            double b = f->bytes[order[k][i]], p = rt_collective_named(g->kernel, &bare, b, g->nodes, g->gpn).fwd;
            unsigned fl = 0;
            double pred = fitted ? p * rt_table_eval(&tab, 0, &b, &fl) : p;
            sum += fabs(pred - f->sec[order[k][i]]) / f->sec[order[k][i]];
          }
          if (f->n > seen[k]) t->e[f->entry].err[q] += sum / (f->n - seen[k]), t->e[f->entry].reps[q]++;
        }
        if (fitted) rt_table_release(&tab);
      }
    }
    for (int k = 0; k < g->nfiles; k++) free(order[k]), free(g->file[k].bytes), free(g->file[k].sec);
    free(tb), free(ts);
  }
  return 0;
}

/* --- main ------------------------------------------------------------------------------------ */

static int usage(const char *prog) {
  fprintf(stderr,
          "usage: %s DATA_DIR [--reps N] [--no-collectives] [--select random|spread|file] "
          "[--max-mean PCT] [--min-within N] [--quick]\n"
          "       %s --samples DIR GPU [--reps N] [--select random|spread|file] [--max-mean PCT] [--quick]\n",
          prog, prog);
  return 2;
}

int main(int argc, char **argv) {
  const char *data = NULL, *samples = NULL, *samples_gpu = NULL;
  int reps = 5, coll = 1, min_within = -1, by = BY_RANDOM;
  double max_mean = -1;
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = (int)strtol(argv[++i], &end, 10);
      if (*end || reps < 1 || reps > 100) return usage(argv[0]);
    } else if (strcmp(argv[i], "--max-mean") == 0 && i + 1 < argc) {
      max_mean = strtod(argv[++i], &end);
      if (*end || !(max_mean >= 0)) return usage(argv[0]);
    } else if (strcmp(argv[i], "--min-within") == 0 && i + 1 < argc) {
      min_within = (int)strtol(argv[++i], &end, 10);
      if (*end || min_within < 0) return usage(argv[0]);
    } else if (strcmp(argv[i], "--no-collectives") == 0) {
      coll = 0;
    } else if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--select") == 0 && i + 1 < argc) {
      const char *v = argv[++i];
      if (strcmp(v, "spread") == 0)
        by = BY_SPREAD;
      else if (strcmp(v, "file") == 0)
        by = BY_FILE;
      else if (strcmp(v, "random") != 0)
        return usage(argv[0]);
    } else if (strcmp(argv[i], "--samples") == 0 && i + 2 < argc) {
      samples = argv[++i], samples_gpu = argv[++i];
    } else if (argv[i][0] == '-' || data) {
      return usage(argv[0]);
    } else {
      data = argv[i];
    }
  }
  if (!data == !samples) return usage(argv[0]);
  if (by != BY_RANDOM) reps = 1;
  static const char *const order_text[] = {
      "a random fraction of every sample file (fixed\n"
      "seeds, %d repetitions)",
      "the first fraction of every sample file in the\n"
      "order hw/probe samples in (coverage first: least work, then farthest in log-size\n"
      "space)",
      "the first fraction of every sample file in the\n"
      "order of its rows (hw/probe's files: the order the probe measured them in)"};
  if (samples) {
    static Table one;
    show_dtype = 1;
    printf("Sample efficiency of %s (%s): tables fitted from ", samples, samples_gpu);
    printf(order_text[by], reps);
    printf(", MAPE on the rest.\n");
    if (operators(samples, samples, samples_gpu, reps, by, &one) != 0) {
      fprintf(stderr, "%s: cannot load the operator samples of %s (GPU %s)\n", argv[0], samples, samples_gpu);
      return 2;
    }
    print_table(&one, reps);
    const Table *all[1] = {&one};
    double mean10 = NAN;
    summary("operators", all, 1, &mean10, NULL);
    if (max_mean < 0) return 0;
    int ok = mean10 * 100 <= max_mean;
    printf("\nguard: mean operator error at 10 %% of the samples %.2f %% <= %.2f %%: %s\n", 100 * mean10, max_mean,
           ok ? "PASS" : "FAIL");
    return !ok;
  }
  static const char *const systems[2][2] = {{"a100-sxm4-80gb-perlmutter", "perlmutter"}, {"gh200-vista", "vista"}};
  static Table ops[2], colls[2];
  printf("Sample efficiency: tables fitted from ");
  printf(order_text[by], reps);
  printf(", MAPE on the rest; `paper` is arXiv 2509.22832's Best_error%%\n"
         "(its own hold-out, with all its samples).\n");
  static const char *const gpus[2] = {"a100_sxm4_80gb", "gh200"};
  for (int s = 0; s < 2; s++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/paper-samples/%s", data, systems[s][0]);
    if (operators(dir, systems[s][0], gpus[s], reps, by, &ops[s]) != 0) {
      fprintf(stderr, "%s: cannot load the operator samples of %s\n", argv[0], systems[s][0]);
      return 2;
    }
    print_table(&ops[s], reps);
  }
  const Table *all_ops[2] = {&ops[0], &ops[1]};
  double mean10 = NAN;
  int within10 = 0;
  summary("A100 (Perlmutter), operators", all_ops, 1, NULL, NULL);
  summary("GH200 (Vista), operators", all_ops + 1, 1, NULL, NULL);
  summary("both systems, operators", all_ops, 2, &mean10, &within10);
  if (coll) {
    for (int s = 0; s < 2; s++) {
      if (collectives(data, systems[s][0], systems[s][1], reps, by, &colls[s]) != 0) {
        fprintf(stderr, "%s: cannot load the collective samples of %s\n", argv[0], systems[s][0]);
        return 2;
      }
      print_table(&colls[s], reps);
    }
    const Table *all_colls[2] = {&colls[0], &colls[1]};
    summary("both systems, collective layouts", all_colls, 2, NULL, NULL);
  }
  int rc = 0;
  if (max_mean >= 0) {
    int ok = mean10 * 100 <= max_mean;
    printf("\nguard: mean operator error at 10 %% of the samples %.2f %% <= %.2f %%: %s\n", 100 * mean10, max_mean,
           ok ? "PASS" : "FAIL");
    rc |= !ok;
  }
  if (min_within >= 0) {
    int ok = within10 >= min_within;
    printf("guard: operators within the paper's error at 10 %% of the samples %d >= %d: %s\n", within10, min_within,
           ok ? "PASS" : "FAIL");
    rc |= !ok;
  }
  return rc;
}
