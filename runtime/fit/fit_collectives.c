/* fit_collectives.c - fits the collective calibration tables from NCCL samples.
 *
 * For one (kernel, layout) the samples become points (log bytes, log(measured / physics)).
 * A table evaluates as a piecewise-linear function of those (calib.h: log-log interpolation,
 * clamped at the edges), i.e. a linear spline with "hat" basis functions on its grid nodes, so
 * fitting it is a linear problem.  We minimise the sum of absolute residuals (least absolute
 * deviations, by iteratively reweighted least squares) because the NCCL samples are bimodal
 * in places: a minority of calls runs several times slower, and a least-squares fit would sit
 * between the modes, wrong for both.  |log ratio| is also, to first order, the relative error
 * that the validation measures.  Each normal-equation system is tridiagonal (a hat overlaps
 * only its neighbours), solved in O(nodes).
 *
 * The grid nodes sit at quantiles of log bytes, so every interval holds samples; their number
 * is chosen by 5-fold cross-validation among a few candidates.  A small penalty on the
 * difference of neighbouring values keeps an interval with few samples from swinging. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fit_collectives.h"
#include "sorted.h"
#include "strbuf.h"

/* FIT_MIN_CV: fewer samples than that get one node, the mean correction (no choice). */
enum { FIT_FOLDS = 5, FIT_IRLS_ITERS = 40, FIT_MIN_CV = 16 };
static const double fit_ridge = 1e-3; /* per sample, on neighbour differences */
static const double fit_floor = 1e-4; /* smallest residual an IRLS weight divides by */
/* Knot counts tried, up to a knot per sample: the samples of one campaign vary with size in
 * steps and drifts finer than any smooth curve (NCCL's chunking, the network's load over the
 * sampling run), and held-out samples follow their neighbours, so the cross-validation often
 * picks hundreds (docs/calibration.md, "Collective tables"). */
static const int fit_candidates[] = {2,   3,   4,   6,   8,   12,  16,   24,   32,   48,   64,  96,
                                     128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};

/* The table is the mean of the fits of the chosen knot count and of its FIT_AVG neighbours on
 * each side in fit_candidates (those the cross-validation tried; fewer where their knots
 * together would pass the table's limit): a mean over nearby resolutions, one curve whose
 * knots are all of theirs (docs/calibration.md, "Collective tables"). */
enum { FIT_AVG = 2 };

typedef struct FitPt {
  double lx, y; /* log bytes, log(measured / physics) */
  double x;     /* bytes: a knot at lx is written as x (fit_table()) */
} FitPt;

/* A point's place on a spline's knots: its interval and its weight on the interval's end. */
typedef struct FitLoc {
  int j;
  double w;
} FitLoc;

static int fit_cmp(const void *a, const void *b) {
  double x = ((const FitPt *)a)->lx, y = ((const FitPt *)b)->lx;
  return (x > y) - (x < y);
}

/* Index of the interval [k[j], k[j+1]] holding x (clamped), and x's weight on k[j+1]. */
static int fit_locate(const double *k, int K, double x, double *w) {
  if (K < 2 || x <= k[0]) return *w = 0, 0;
  if (x >= k[K - 1]) return *w = 1, K - 2;
  int lo = 0, hi = K - 1;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (k[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  *w = (x - k[lo]) / (k[lo + 1] - k[lo]);
  return lo;
}

static double fit_eval(const double *k, const double *a, int K, double x) {
  double w;
  if (K == 1) return a[0];
  int j = fit_locate(k, K, x, &w);
  return (1 - w) * a[j] + w * a[j + 1];
}

/* Solves the tridiagonal system (sub d[-1], diag d, super u) in place (Thomas); x -> b. */
static void fit_thomas(double *lo, double *d, double *up, double *b, int K) {
  for (int j = 1; j < K; j++) {
    double m = lo[j] / d[j - 1];
    d[j] -= m * up[j - 1];
    b[j] -= m * b[j - 1];
  }
  b[K - 1] /= d[K - 1];
  for (int j = K - 2; j >= 0; j--) b[j] = (b[j] - up[j] * b[j + 1]) / d[j];
}

/* Least-absolute-deviation linear spline through pts on knots k[0..K-1] into a; scratch:
 * 4 K doubles; loc: n, each point located once for all the iterations. */
static void fit_spline(const FitPt *pts, int n, const double *k, int K, double *a, double *scratch, FitLoc *loc) {
  double *lo = scratch, *d = lo + K, *up = d + K, *b = up + K;
  double lam = fit_ridge * n / K;
  size_t bytes = (size_t)K * sizeof *a;
  memset(a, 0, bytes);
  for (int i = 0; i < n && K > 1; i++) loc[i].j = fit_locate(k, K, pts[i].lx, &loc[i].w);
  for (int it = 0; it < FIT_IRLS_ITERS; it++) {
    memset(lo, 0, bytes), memset(d, 0, bytes), memset(up, 0, bytes), memset(b, 0, bytes);
    for (int i = 0; i < n; i++) {
      if (K == 1) {
        double wt = it == 0 ? 1 : 1 / fmax(fabs(pts[i].y - a[0]), fit_floor);
        d[0] += wt, b[0] += wt * pts[i].y;
        continue;
      }
      int j = loc[i].j;
      double w = loc[i].w, r = pts[i].y - ((1 - w) * a[j] + w * a[j + 1]); /* fit_eval() */
      double wt = it == 0 ? 1 : 1 / fmax(fabs(r), fit_floor);
      d[j] += wt * (1 - w) * (1 - w), d[j + 1] += wt * w * w;
      up[j] += wt * (1 - w) * w, lo[j + 1] += wt * (1 - w) * w;
      b[j] += wt * (1 - w) * pts[i].y, b[j + 1] += wt * w * pts[i].y;
    }
    for (int j = 0; j + 1 < K; j++) {
      d[j] += lam, d[j + 1] += lam, up[j] -= lam, lo[j + 1] -= lam;
    }
    for (int j = 0; j < K; j++) d[j] += 1e-12; /* an empty interval stays solvable */
    fit_thomas(lo, d, up, b, K);
    memcpy(a, b, bytes);
  }
}

/* K knots at quantiles of the sorted lx (samples' own sizes, which a table file writes
 * exactly), duplicates dropped; returns the count kept. */
static int fit_knots(const FitPt *pts, int n, int K, double *k) {
  int m = 0;
  for (int j = 0; j < K; j++) {
    double x = pts[K == 1 ? 0 : (int)((double)j * (n - 1) / (K - 1) + 0.5)].lx;
    if (m == 0 || x > k[m - 1]) k[m++] = x;
  }
  return m;
}

/* Mean relative error |exp(s - y) - 1| of a K-knot fit, by FIT_FOLDS-fold cross-validation;
 * pred (if not NULL) receives each sample's held-out prediction s.  scratch: 6 K doubles;
 * loc: n. */
static double fit_cv(const FitPt *pts, int n, int K, FitPt *tmp, double *scratch, FitLoc *loc, double *pred) {
  double *k = scratch, *a = k + K, err = 0;
  for (int f = 0; f < FIT_FOLDS; f++) {
    int m = 0;
    for (int i = 0; i < n; i++)
      if (i % FIT_FOLDS != f) tmp[m++] = pts[i];
    int kk = fit_knots(tmp, m, K, k);
    fit_spline(tmp, m, k, kk, a, a + K, loc);
    for (int i = f; i < n; i += FIT_FOLDS) {
      double s = fit_eval(k, a, kk, pts[i].lx);
      if (pred) pred[i] = s;
      err += fabs(exp(s - pts[i].y) - 1);
    }
  }
  return err / n;
}

/* The mean of the fits on pts of the knot counts fit_candidates[lo..hi], as one spline: its
 * knots (all of theirs) into *k and values into *a, both malloc'ed; returns the knot count,
 * or -1 (out of memory).  loc: n. */
static int fit_mean(const FitPt *pts, int n, int lo, int hi, FitLoc *loc, double **k, double **a) {
  int sum = 0, nc = 0, m = 0, rc = -1;
  for (int c = lo; c <= hi; c++) sum += fit_candidates[c];
  double *kn = malloc((size_t)sum * sizeof *kn), *v = malloc((size_t)sum * sizeof *v);
  double *kc = malloc((size_t)sum * sizeof *kc), *ac = malloc((size_t)sum * sizeof *ac);
  double *scratch = malloc(5 * (size_t)fit_candidates[hi] * sizeof *scratch);
  int *off = malloc((size_t)(hi - lo + 2) * sizeof *off);
  if (!kn || !v || !kc || !ac || !scratch || !off) goto out;
  off[0] = 0;
  for (int c = lo; c <= hi; c++, nc++) { /* each fit's knots and values, one after another */
    int K = fit_knots(pts, n, fit_candidates[c], kc + off[nc]);
    fit_spline(pts, n, kc + off[nc], K, ac + off[nc], scratch, loc);
    off[nc + 1] = off[nc] + K;
  }
  memcpy(kn, kc, (size_t)off[nc] * sizeof *kn);
  qsort(kn, (size_t)off[nc], sizeof *kn, cmp_double);
  for (int j = 0; j < off[nc]; j++)
    if (m == 0 || kn[j] > kn[m - 1]) kn[m++] = kn[j];
  for (int j = 0; j < m; j++) { /* each fit is linear between the merged knots: exact */
    double s = 0;
    for (int c = 0; c < nc; c++) s += fit_eval(kc + off[c], ac + off[c], off[c + 1] - off[c], kn[j]);
    v[j] = s / nc;
  }
  *k = kn, *a = v, kn = v = NULL, rc = m;
out:
  free(kn), free(v), free(kc), free(ac), free(scratch), free(off);
  return rc;
}

static int fit_fail(char *err, size_t errlen, const char *msg, const char *kernel) {
  snprintf(err, errlen, "%s: %s", kernel, msg);
  return -1;
}

int rt_fit_collective(const RtCluster *c, const char *kernel, int nodes, int gpus_per_node, const double *bytes,
                      const double *seconds, int n, int max_points, RtTable *out, char *err, size_t errlen) {
  return rt_fit_collective_cv(c, kernel, nodes, gpus_per_node, bytes, seconds, n, max_points, out, NULL, err, errlen);
}

enum { NCAND = sizeof fit_candidates / sizeof *fit_candidates };

/* The window of candidate knot counts lo..hi whose fits the table averages: the best count
 * by cross-validation (more nodes only for a real gain), then the widest window of at most
 * FIT_AVG neighbours a side whose knots stay within max_points (knots sit at samples' sizes:
 * there are at most n of them).  pts holds n sorted points and room for n more; pred gets
 * each candidate's held-out predictions.  Returns the best candidate, or -1 when there are
 * too few samples to choose. */
static int fit_choose(FitPt *pts, int n, int kmax, int max_points, double *scratch, FitLoc *loc, double *pred, int *lo,
                      int *hi) {
  int best_c = -1, last_c = -1;
  double best = INFINITY;
  for (int ci = 0; ci < NCAND; ci++) {
    int K = fit_candidates[ci];
    /* At most a knot per training sample */
    if (n < FIT_MIN_CV || K > kmax || K * FIT_FOLDS > n * (FIT_FOLDS - 1)) break;
    double e = fit_cv(pts, n, K, pts + n, scratch, loc, pred + (size_t)ci * n);
    last_c = ci;
    if (e < best * 0.999) best = e, best_c = ci;
  }
  *lo = *hi = best_c;
  for (int w = FIT_AVG; w > 0 && best_c >= 0; w--) {
    int l = best_c - w < 0 ? 0 : best_c - w, h = best_c + w > last_c ? last_c : best_c + w, sum = 0;
    for (int ci = l; ci <= h; ci++) sum += fit_candidates[ci];
    if ((sum < n ? sum : n) <= max_points) {
      *lo = l, *hi = h;
      break;
    }
  }
  return best_c;
}

/* The held-out error of the table fit_choose() chose: of the mean of the window's fits, or
 * (best_c < 0) of one node; NAN with fewer than FIT_FOLDS samples. */
static double fit_cv_error(FitPt *pts, int n, int best_c, int lo, int hi, const double *pred, double *scratch,
                           FitLoc *loc) {
  if (best_c < 0) return n >= FIT_FOLDS ? fit_cv(pts, n, 1, pts + n, scratch, loc, NULL) : NAN;
  double e = 0;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int ci = lo; ci <= hi; ci++) s += pred[(size_t)ci * n + i];
    e += fabs(exp(s / (hi - lo + 1) - pts[i].y) - 1);
  }
  return e / n;
}

/* The table of a fit (K knots k in log bytes, values a) for kernel on one layout, into out.
 * Each knot is the lx of a sample of pts (n, sorted): its grid point is that sample's bytes,
 * exactly. */
static int fit_table(RtTable *out, const char *kernel, int nodes, int gpus_per_node, const double *k, const double *a,
                     int K, const FitPt *pts, int n, char *err, size_t errlen) {
  double *pts_x = K > 0 ? malloc((size_t)K * sizeof *pts_x) : NULL;
  if (!pts_x) return fit_fail(err, errlen, "out of memory", kernel);
  char keys[64];
  for (int j = 0, i = 0; j < K; j++) {
    while (i < n - 1 && pts[i].lx < k[j]) i++;
    pts_x[j] = pts[i].lx == k[j] ? pts[i].x : exp(k[j]);
  }
  snprintf(keys, sizeof keys, "gpus_per_node=%d nodes=%d", gpus_per_node, nodes);
  const char *axis[] = {"bytes"};
  const double *points[] = {pts_x};
  int rc = rt_table_init(out, kernel, RT_FP16, keys, 1, axis, &K, points, 0);
  if (rc == 0) memcpy(out->logc[0], a, (size_t)K * sizeof *a);
  free(pts_x);
  return rc == 0 ? 0 : fit_fail(err, errlen, "cannot build the table", kernel);
}

int rt_fit_collective_cv(const RtCluster *c, const char *kernel, int nodes, int gpus_per_node, const double *bytes,
                         const double *seconds, int n, int max_points, RtTable *out, double *cv, char *err,
                         size_t errlen) {
  if (cv) *cv = NAN;
  if (max_points <= 0 || max_points > RT_MAX_POINTS) max_points = RT_MAX_POINTS;
  if (n < 2) return fit_fail(err, errlen, "fewer than 2 samples", kernel);
  int kmax = n < max_points ? n : max_points;
  FitPt *pts = malloc(2 * (size_t)n * sizeof *pts);
  double *scratch = malloc(6 * (size_t)kmax * sizeof *scratch);
  FitLoc *loc = malloc((size_t)n * sizeof *loc);
  if (!pts || !scratch || !loc) {
    free(pts), free(scratch), free(loc);
    return fit_fail(err, errlen, "out of memory", kernel);
  }
  for (int i = 0; i < n; i++) {
    double p = rt_collective_physics(kernel, c, bytes[i], nodes, gpus_per_node);
    if (!(p > 0) || !(seconds[i] > 0 && seconds[i] < INFINITY) || !(bytes[i] > 0 && bytes[i] < INFINITY)) {
      free(pts), free(scratch), free(loc);
      return fit_fail(err, errlen, "a sample or its layout is out of range", kernel);
    }
    pts[i] = (FitPt){log(bytes[i]), log(seconds[i] / p), bytes[i]};
  }
  /* Sorted by size, the folds taken by index stride are sorted too and interleave sizes. */
  qsort(pts, (size_t)n, sizeof *pts, fit_cmp);
  double *pred = malloc((size_t)n * NCAND * sizeof *pred); /* held-out, per candidate */
  if (!pred) {
    free(pts), free(scratch), free(loc);
    return fit_fail(err, errlen, "out of memory", kernel);
  }
  int lo, hi, best_c = fit_choose(pts, n, kmax, max_points, scratch, loc, pred, &lo, &hi);
  if (cv) *cv = fit_cv_error(pts, n, best_c, lo, hi, pred, scratch, loc);
  free(pred);
  double *k = NULL, *a = NULL;
  int K;
  if (best_c >= 0) {
    K = fit_mean(pts, n, lo, hi, loc, &k, &a);
  } else { /* too few samples to choose: one node, the mean correction */
    k = malloc(sizeof *k), a = malloc(5 * sizeof *a);
    K = k && a ? fit_knots(pts, n, 1, k) : -1;
    if (K > 0) fit_spline(pts, n, k, K, a, a + 1, loc);
  }
  int rc = fit_table(out, kernel, nodes, gpus_per_node, k, a, K, pts, n, err, errlen);
  free(pts), free(scratch), free(loc), free(k), free(a);
  return rc;
}

/* --- nccl/ sample folders ------------------------------------------------------------ */

/* The count at *p, digits after an optional sign (*p advanced past them), into *v: 0; -1 if
 * there are no digits; -2 if it is not 1 to INT_MAX. */
static int name_count(const char **p, int *v) {
  long long x = 0;
  const char *s = *p + (**p == '-' || **p == '+'), *digits = s;
  for (; *s >= '0' && *s <= '9'; s++)
    if (x <= INT_MAX) x = 10 * x + (*s - '0');
  if (s == digits) return -1;
  int neg = **p == '-';
  *p = s;
  if (neg || x < 1 || x > INT_MAX) return -2;
  *v = (int)x;
  return 0;
}

/* Parses "KERNEL[_large]_fp16_N_G.csv" into kernel, nodes, gpus: 0; -1 if name is not of
 * that form; -2 if N or G is not a count from 1 to INT_MAX. */
static int fit_parse_name(const char *name, char *kernel, size_t klen, int *nodes, int *gpn) {
  const char *p = strstr(name, "_fp16_");
  if (!p || (size_t)(p - name) >= klen) return -1;
  const char *q = p + 6;
  int rn = name_count(&q, nodes), rg = *q == '_' ? (q++, name_count(&q, gpn)) : -1;
  if (rn == -1 || rg == -1 || strcmp(q, ".csv") != 0) return -1;
  if (rn || rg) return -2;
  size_t len = (size_t)(p - name);
  memcpy(kernel, name, len);
  kernel[len] = '\0';
  if (len > 6 && strcmp(kernel + len - 6, "_large") == 0) kernel[len - 6] = '\0';
  return 0;
}

/* Fails with "PATH:LINE: message" from the reader. */
static int coll_fail(RtCsv *f, double **bytes, double **seconds, char *err, size_t errlen) {
  snprintf(err, errlen, "%s", f->err);
  rt_csv_close(f);
  free(*bytes), free(*seconds);
  *bytes = *seconds = NULL;
  return -1;
}

/* Room for row n in the row arrays (lines may be NULL: not kept); 0, or -1 out of memory. */
static int coll_grow(int n, size_t *cap, double **bytes, double **seconds, int **lines) {
  size_t need = (size_t)n + 1, cb = *cap, cs = *cap, cl = *cap;
  if (!mem_grow((void **)bytes, &cb, need, sizeof **bytes) ||
      !mem_grow((void **)seconds, &cs, need, sizeof **seconds) ||
      (lines && !mem_grow((void **)lines, &cl, need, sizeof **lines)))
    return -1;
  *cap = cb; /* the same for all three: the rule depends on the old cap and need only */
  return 0;
}

/* A time (a positive, finite number of microseconds, as seconds) or a size (an integer from 1
 * to 2^53, where doubles hold every integer) in column col. */
static int coll_value(RtCsv *f, int col, int time, double *v) {
  if (rt_csv_number(f, col, v) != 0) return -1;
  if (time && !(*v > 0 && isfinite(*v)))
    return rt_csv_fail(f, "column `%s`: time `%s` is not a positive number of microseconds", f->col[col],
                       f->field[col]);
  if (!time && !(*v >= 1 && *v <= 0x1p53 && *v == floor(*v)))
    return rt_csv_fail(f, "column `%s`: `%s` is not a size (an integer from 1 to 2^53)", f->col[col], f->field[col]);
  if (time) *v *= 1e-6;
  return 0;
}

/* The reader behind both entry points: *bytes are the kernel's `bytes` where *kernel_bytes
 * is set (a `bytes` column), else the rank buffers (2 x `shape`).  nodes, gpn > 0: the
 * layout the file name says, checked against `nodes` and `GPUsPerNode` columns if any.
 * lines (may be NULL) receives each row's line number (malloc'ed, caller frees). */
static int coll_read(const char *path, int nodes, int gpn, double **bytes, double **seconds, int **lines,
                     int *kernel_bytes, RtSampleMeta *meta, char *err, size_t errlen) {
  RtCsv f;
  int n = 0;
  size_t cap = 0;
  *bytes = *seconds = NULL;
  if (lines) *lines = NULL;
  if (rt_csv_open(&f, path) != 0) return coll_fail(&f, bytes, seconds, err, errlen);
  int ibytes = rt_csv_column(&f, "bytes"), ishape = rt_csv_column(&f, "shape");
  int idur = rt_csv_column(&f, "dur(us)");
  if (idur < 0) idur = rt_csv_column(&f, "dur");
  int inodes = rt_csv_column(&f, "nodes"), igpn = rt_csv_column(&f, "GPUsPerNode");
  if (igpn < 0) igpn = rt_csv_column(&f, "gpus_per_node");
  *kernel_bytes = ibytes >= 0;
  if (ibytes < 0 && ishape < 0) {
    rt_csv_fail(&f, "no size column: `shape` (fp16 elements of a rank's buffer) or `bytes` (the kernel's bytes)");
    return coll_fail(&f, bytes, seconds, err, errlen);
  }
  if (idur < 0) {
    rt_csv_fail(&f, "no time column: dur(us) (or dur)");
    return coll_fail(&f, bytes, seconds, err, errlen);
  }
  int rc;
  while ((rc = rt_csv_row(&f)) == 1) {
    double size, sec, v;
    if (coll_value(&f, ibytes >= 0 ? ibytes : ishape, 0, &size) != 0 || coll_value(&f, idur, 1, &sec) != 0) {
      rc = -1;
      break;
    }
    for (int k = 0; rc > 0 && k < 2; k++) { /* the layout columns, if any, agree with the file name */
      int col = k ? igpn : inodes, want = k ? gpn : nodes;
      if (col < 0 || want <= 0) continue;
      if (rt_csv_number(&f, col, &v) != 0)
        rc = -1;
      else if (v != want)
        rc = rt_csv_fail(&f, "column `%s`: %s, but the file name says %d", f.col[col], f.field[col], want);
    }
    if (rc < 0) break;
    if (coll_grow(n, &cap, bytes, seconds, lines) != 0) {
      rt_csv_fail(&f, "out of memory");
      rc = -1;
      break;
    }
    if (lines) (*lines)[n] = f.line;
    (*bytes)[n] = ibytes >= 0 ? size : 2 * size; /* shape: fp16 elements */
    (*seconds)[n++] = sec;
  }
  if (rc < 0) {
    if (lines) free(*lines), *lines = NULL;
    return coll_fail(&f, bytes, seconds, err, errlen);
  }
  if (meta) *meta = f.meta;
  rt_csv_close(&f);
  return n;
}

int rt_nccl_csv_read(const char *path, double **bytes, double **seconds, char *err, size_t errlen) {
  char kernel[RT_NAME_MAX] = "";
  int nodes = 0, gpn = 0, kb = 0;
  const char *base = strrchr(path, '/');
  int named = fit_parse_name(base ? base + 1 : path, kernel, sizeof kernel, &nodes, &gpn) == 0;
  int n = coll_read(path, named ? nodes : 0, named ? gpn : 0, bytes, seconds, NULL, &kb, NULL, err, errlen);
  /* A `bytes` column is the kernel's argument: back to the rank buffer this function gives. */
  for (int i = 0; kb && named && i < n; i++) (*bytes)[i] /= rt_nccl_kernel_bytes(kernel, 1, nodes, gpn);
  return n;
}

/* rt_collective_csv_read(), with each row's line number in *lines (may be NULL). */
static int coll_read_kernel(const char *path, const char *kernel, int nodes, int gpus_per_node, double **bytes,
                            double **seconds, int **lines, RtSampleMeta *meta, char *err, size_t errlen) {
  int kb = 0;
  int n = coll_read(path, nodes, gpus_per_node, bytes, seconds, lines, &kb, meta, err, errlen);
  for (int i = 0; !kb && i < n; i++) (*bytes)[i] = rt_nccl_kernel_bytes(kernel, (*bytes)[i], nodes, gpus_per_node);
  return n;
}

int rt_collective_csv_read(const char *path, const char *kernel, int nodes, int gpus_per_node, double **bytes,
                           double **seconds, RtSampleMeta *meta, char *err, size_t errlen) {
  return coll_read_kernel(path, kernel, nodes, gpus_per_node, bytes, seconds, NULL, meta, err, errlen);
}

double rt_nccl_kernel_bytes(const char *kernel, double buf_bytes, int nodes, int gpus_per_node) {
  return strcmp(kernel, "allgather") == 0 ? buf_bytes * nodes * gpus_per_node : buf_bytes;
}

typedef struct FitGroup {
  char kernel[RT_NAME_MAX];
  int nodes, gpn, n;
  int dropped; /* samples faster than rt_collective_min_time() allows */
  double *bytes, *seconds;
  char files[2048]; /* "a.csv, b.csv (gpu: ...; date: ...)" */
  char first[256];  /* the first file's name, for errors */
} FitGroup;

enum { FIT_DROPS_SHOWN = 3 }; /* impossible samples warned of one by one, per file */

/* Drops the m samples of one file (rows at line[i]) that beat rt_collective_min_time(): no
 * run can, so they are mismeasured (a timer stopped before the collective ended) and a fit
 * that followed them would predict the impossible.  Warns on warn (if not NULL) of the first
 * FIT_DROPS_SHOWN by line, then of the count.  Returns the samples kept, compacted in place. */
static int fit_drop_impossible(const RtCluster *c, FitGroup *g, const char *path, double *b, double *s, const int *line,
                               int m, FILE *warn) {
  int kept = 0, dropped = 0;
  char t1[32], t2[32], nb[STR_NUM_MAX];
  for (int i = 0; i < m; i++) {
    double lo = rt_collective_min_time(g->kernel, c, b[i], g->nodes, g->gpn);
    if (!(s[i] < lo)) { /* NaN (a layout the cluster cannot hold) is the fitter's error */
      b[kept] = b[i], s[kept++] = s[i];
      continue;
    }
    if (warn && dropped < FIT_DROPS_SHOWN)
      fprintf(warn,
              "%s:%d: warning: %s for a %s-byte %s on %d x %d GPUs is faster than the "
              "links allow (>= %s); sample dropped\n",
              path, line[i], rt_time_str(s[i], t1, sizeof t1), str_number(nb, sizeof nb, b[i]), g->kernel, g->nodes,
              g->gpn, rt_time_str(lo, t2, sizeof t2));
    dropped++;
  }
  if (warn && dropped > FIT_DROPS_SHOWN)
    fprintf(warn, "%s:0: warning: %d of %d samples dropped as faster than the links allow\n", path, dropped, m);
  g->dropped += dropped;
  return kept;
}

int rt_collective_absurd(const char *kernel, const RtCluster *c, int nodes, int gpus_per_node, const double *bytes,
                         const double *seconds, int n) {
  for (int i = 0; i < n; i++) {
    double model = rt_collective_physics(kernel, c, bytes[i], nodes, gpus_per_node);
    if (model > 0 && model < INFINITY &&
        !(seconds[i] / model <= RT_SAMPLE_MAX_OFF && seconds[i] / model >= 1 / RT_SAMPLE_MAX_OFF))
      return i;
  }
  return -1;
}

/* rt_collective_absurd() on the m samples of one file (rows at line[i]): -1 with the first in
 * err, else 0. */
static int coll_refuse_absurd(const RtCluster *c, const FitGroup *g, const char *path, const double *b, const double *s,
                              const int *line, int m, char *err, size_t errlen) {
  int i = rt_collective_absurd(g->kernel, c, g->nodes, g->gpn, b, s, m);
  if (i < 0) return 0;
  double model = rt_collective_physics(g->kernel, c, b[i], g->nodes, g->gpn);
  char t1[32], t2[32], nb[STR_NUM_MAX];
  snprintf(err, errlen,
           "%s:%d: %s for a %s-byte %s on %d x %d GPUs is more than %s times %s than %s's model of it (%s): no run "
           "is that far off it (a wrong unit? a corrupt row?)",
           path, line[i], rt_time_str(s[i], t1, sizeof t1), str_number(nb, sizeof nb, b[i]), g->kernel, g->nodes,
           g->gpn, RT_SAMPLE_MAX_OFF_TEXT, s[i] > model ? "slower" : "faster", c->name ? c->name : "the cluster",
           rt_time_str(model, t2, sizeof t2));
  return -1;
}

int rt_collective_keep_possible(const char *kernel, const RtCluster *c, int nodes, int gpus_per_node, double *bytes,
                                double *seconds, int *tag, int n) {
  int kept = 0;
  for (int i = 0; i < n; i++) {
    if (seconds[i] < rt_collective_min_time(kernel, c, bytes[i], nodes, gpus_per_node)) continue;
    bytes[kept] = bytes[i], seconds[kept] = seconds[i];
    if (tag) tag[kept] = tag[i];
    kept++;
  }
  return kept;
}

int rt_collective_layout_credible(int kept, int dropped) { return !dropped || (kept >= 2 && dropped <= kept); }

/* Appends m > 0 samples to the group's; 0, or -1 out of memory. */
static int fit_append(FitGroup *g, const double *b, const double *s, int m) {
  double *nb = realloc(g->bytes, (size_t)(g->n + m) * sizeof *nb);
  if (nb) g->bytes = nb;
  double *ns = nb ? realloc(g->seconds, (size_t)(g->n + m) * sizeof *ns) : NULL;
  if (ns) g->seconds = ns;
  if (!nb || !ns) return -1;
  memcpy(g->bytes + g->n, b, (size_t)m * sizeof *b);
  memcpy(g->seconds + g->n, s, (size_t)m * sizeof *s);
  g->n += m;
  return 0;
}

static int fit_add_file(const RtCluster *c, FitGroup *g, const char *dir, const char *name, FILE *warn, char *err,
                        size_t errlen) {
  char path[1024];
  double *b, *s;
  int *lines;
  RtSampleMeta meta;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int known = 0;
  for (int k = 0; k < RT_NCOLLS; k++) known |= strcmp(g->kernel, rt_coll_kernels[k]) == 0;
  if (!known)
    return snprintf(err, errlen,
                    "%s:0: unknown collective `%s` (allreduce, allgather, "
                    "reducescatter, alltoall, p2p)",
                    path, g->kernel),
           -1;
  if (!(rt_collective_physics(g->kernel, c, 1 << 20, g->nodes, g->gpn) > 0))
    return snprintf(err, errlen, "%s:0: %s has no %s over %d x %d GPUs (%d nodes of %d)", path,
                    c->name ? c->name : "the cluster", g->kernel, g->nodes, g->gpn, c->nodes, c->gpus_per_node),
           -1;
  int m = coll_read_kernel(path, g->kernel, g->nodes, g->gpn, &b, &s, &lines, &meta, err, errlen);
  if (m < 0) return -1;
  if (coll_refuse_absurd(c, g, path, b, s, lines, m, err, errlen) != 0) {
    free(b), free(s), free(lines);
    return -1;
  }
  m = fit_drop_impossible(c, g, path, b, s, lines, m, warn);
  free(lines);
  if (m > 0 && fit_append(g, b, s, m) != 0) {
    free(b), free(s);
    return snprintf(err, errlen, "%s:0: out of memory", path), -1;
  }
  size_t used = strlen(g->files);
  if (!used) snprintf(g->first, sizeof g->first, "%s", name);
  snprintf(g->files + used, sizeof g->files - used, "%s%s", used ? ", " : "", name);
  if (meta.gpu[0] || meta.date[0]) { /* what the samples say of themselves (hw/probe) */
    used = strlen(g->files);
    snprintf(g->files + used, sizeof g->files - used, " (%s%s%s%s%s)", meta.gpu[0] ? "gpu: " : "", meta.gpu,
             meta.gpu[0] && meta.date[0] ? "; " : "", meta.date[0] ? "date: " : "", meta.date);
  }
  free(b), free(s);
  return 0;
}

/* The names of the folder's .csv files, sorted; -1 after writing why into err. */
static int fit_list(const char *dir, char ***names, char *err, size_t errlen) {
  int n = dir_list(dir, ".csv", names);
  if (n == -1) snprintf(err, errlen, "%s:0: cannot open folder: %s", dir, strerror(errno));
  if (n == -2) snprintf(err, errlen, "%s:0: out of memory", dir);
  return n < 0 ? -1 : n;
}

/* Fits and writes one layout's table: 1 written, 0 skipped (every sample but one or none, or
 * most of them, were dropped as impossible: a warning, and an older table of that layout in
 * out_dir is removed, since it would still correct the physics with what no run can do), -1 on
 * error.  Samples most of which no run can produce were not measured as their files say, so
 * the few that pass the bound are not trusted either (docs/calibration.md). */
static int fit_write_group(const RtCluster *c, const FitGroup *g, const char *nccl_dir, const char *out_dir,
                           const char *header, FILE *report, FILE *warn, double *sum, int *rows, char *err,
                           size_t errlen) {
  RtTable t;
  char path[1024], prov[8192], drops[96] = "";
  double cv;
  char why[256];
  snprintf(path, sizeof path, "%s/%s_fp16_%d_%d.tbl", out_dir, g->kernel, g->nodes, g->gpn);
  if (!rt_collective_layout_credible(g->n, g->dropped)) { /* too few left, or most impossible */
    bool stale = remove(path) == 0;
    if (warn)
      fprintf(warn,
              "%s/%s:0: warning: no %s table of %d x %d GPUs: %d of its %d samples are faster "
              "than the links allow%s%s; that layout keeps the physics model\n",
              nccl_dir, g->first, g->kernel, g->nodes, g->gpn, g->dropped, g->dropped + g->n,
              g->n >= 2 ? ", so the others are not trusted either" : "", stale ? " (its old table removed)" : "");
    return 0;
  }
  if (rt_fit_collective_cv(c, g->kernel, g->nodes, g->gpn, g->bytes, g->seconds, g->n, 0, &t, &cv, why, sizeof why) !=
      0)
    return snprintf(err, errlen, "%s/%s:0: the %s table of %d x %d GPUs: %s", nccl_dir, g->first, g->kernel, g->nodes,
                    g->gpn, why + strlen(g->kernel) + 2),
           -1;
  if (g->dropped) snprintf(drops, sizeof drops, " (%d more dropped: faster than the links allow)", g->dropped);
  snprintf(prov, sizeof prov,
           "%s%sfrom %s/{%s}: %d rows%s\n"
           "derived: rt_fit_collectives_dir (runtime/fit/fit_collectives.c): log(measured / physics) "
           "of cluster %s,\nleast-absolute-deviation linear spline over log bytes, %d grid nodes "
           "chosen by 5-fold cross-validation",
           header ? header : "", header && *header ? "\n" : "", nccl_dir, g->files, g->n, drops,
           c->name ? c->name : "?", t.npts[0]);
  int rc = rt_table_save(&t, path, prov, err, errlen);
  if (rc == 0 && report) {
    fprintf(report, "%-42s %7d %5d", t.name, g->n, t.npts[0]);
    if (isfinite(cv))
      fprintf(report, " %8.2f%%\n", 100 * cv), *sum += cv * g->n, *rows += g->n;
    else
      fprintf(report, " %9s\n", "-");
  }
  rt_table_release(&t);
  return rc == 0 ? 1 : -1;
}

int rt_fit_collectives_dir(const RtCluster *c, const char *nccl_dir, const char *out_dir, const char *header, char *err,
                           size_t errlen) {
  return rt_fit_collectives_dir_report(c, nccl_dir, out_dir, header, NULL, stderr, err, errlen);
}

int rt_fit_collectives_dir_report(const RtCluster *c, const char *nccl_dir, const char *out_dir, const char *header,
                                  FILE *report, FILE *warn, char *err, size_t errlen) {
  char **names;
  int nn = fit_list(nccl_dir, &names, err, errlen), written = 0, rc = 0, rows = 0;
  double sum = 0;
  if (nn < 0) return -1;
  FitGroup *groups = calloc((size_t)nn + 1, sizeof *groups);
  int ng = 0;
  for (int i = 0; i < nn && groups && rc == 0; i++) {
    FitGroup key = {0};
    int named = fit_parse_name(names[i], key.kernel, sizeof key.kernel, &key.nodes, &key.gpn);
    if (named == -1) continue; /* paper-regressors.csv and the like */
    if (named == -2) {
      rc = -1, snprintf(err, errlen,
                        "%s/%s:0: the file name's NODES and GPUSPERNODE (KIND_fp16_NODES_GPUSPERNODE.csv) "
                        "are counts from 1 to %d",
                        nccl_dir, names[i], INT_MAX);
      break;
    }
    int j = 0;
    while (j < ng &&
           !(strcmp(groups[j].kernel, key.kernel) == 0 && groups[j].nodes == key.nodes && groups[j].gpn == key.gpn))
      j++;
    if (j == ng) groups[ng++] = key;
    rc = fit_add_file(c, &groups[j], nccl_dir, names[i], warn, err, errlen);
  }
  if (!groups) rc = -1, snprintf(err, errlen, "%s:0: out of memory", nccl_dir);
  if (rc == 0 && ng == 0)
    rc = -1, snprintf(err, errlen, "%s:0: no collective sample files (KIND_fp16_NODES_GPUSPERNODE.csv)", nccl_dir);
  if (rc == 0 && report) {
    fprintf(report, "%d-fold cross-validated error (MAPE) on the rows each fit did not see\n", FIT_FOLDS);
    fprintf(report, "%-42s %7s %5s %9s\n", "table", "rows", "grid", "error");
  }
  for (int j = 0; rc == 0 && j < ng; j++) {
    int w = fit_write_group(c, &groups[j], nccl_dir, out_dir, header, report, warn, &sum, &rows, err, errlen);
    if (w < 0)
      rc = -1;
    else
      written += w;
  }
  if (rc == 0 && ng > 0 && written == 0)
    rc = -1, snprintf(err, errlen,
                      "%s:0: no table left to write: every layout's samples are faster than the links allow", nccl_dir);
  if (rc == 0 && report && rows) fprintf(report, "%-42s %7d %5s %8.2f%%\n", "all", rows, "", 100 * sum / rows);
  for (int j = 0; groups && j < ng; j++) free(groups[j].bytes), free(groups[j].seconds);
  dir_list_free(names, nn);
  free(groups);
  return rc == 0 ? written : -1;
}
