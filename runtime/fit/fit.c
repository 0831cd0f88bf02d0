/* fit.c - `llmp fit`: calibration tables from measured samples.
 *
 * For every (kernel, dtype) with samples: evaluate the physics model at each sample, take
 * r = log(measured / model), and fit a grid of log corrections over the kernel's axes so
 * that the runtime's own log-log multilinear interpolation reproduces r.
 *  - Grid: per axis, the distinct sampled values when there are few (sweeps usually sample a
 *    handful of sizes: then every sample sits on a node), else that many quantiles of them;
 *    how many at most per axis is chosen per table by an inner cross-validation on its rows.
 *  - Values: least squares on the interpolation's own hat basis, solved by damped
 *    backfitting (scatter each sample's residual to its cell's corners with the hat weights,
 *    normalise per node, repeat).  Nodes no sample touches are filled from their neighbours
 *    along the axes, so a sparse corner of the grid continues its surroundings.  A table with
 *    few samples per node (a small sample set) is smoothed: a penalty pulls each node toward
 *    its neighbours' mean, so nodes with one or two noisy samples do not overfit them.
 * Quality is reported as k-fold cross-validated MAPE per sample file, per table and over all
 * rows (rt_fit_cv_full); rt_fit_gpu_dir() is `llmp fit --gpu`: read, report, fit, write. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib.h"
#include "fastmath.h"
#include "llmp_fit.h"
#include "ops.h"
#include "sorted.h"
#include "strbuf.h"

/* The most grid points per axis for 1, 2, 3 or 4 axes: where the choice below stops.  The
 * fitter's per-axis scratch arrays hold FIT_MAX_GRID (a table may have more: RT_MAX_POINTS). */
enum { FIT_MAX_GRID = 32 };
static const int grid_max[RT_MAX_AXES + 1] = {0, FIT_MAX_GRID, 24, 16, 12};

/* A table with fewer than sparse_density samples per grid node is sparse: its nodes are pulled
 * toward the mean of their axis neighbours with the weight sparse_smoothing (in units of a
 * sample's hat weight) while it is fitted.  Every table fitted from all of the paper's samples,
 * or from the 4/5 of them a cross-validation fold sees, has at least 0.39 samples per node
 * (bmm, at the finest grid the choice allows), so the shipped tables are not smoothed
 * (docs/calibration.md, "How a table is fitted"). */
static const double sparse_density = 0.35, sparse_smoothing = 0.2;

/* A table of two axes or more may be pulled toward its additive part (additive_prior()): each
 * node's squared distance from it costs mu, in units of a sample's hat weight, so a node that
 * many samples touch follows them and one that few touch follows what its axes say alone.
 * llmp fit tries each mu of prior_mu on the grid choose_caps() chose and keeps the one of
 * smallest inner cross-validated error, 0 (no pull) unless another is better: it is chosen
 * where the full grid's nodes see few rows (docs/calibration-notes.md). */
static const double prior_mu[] = {0.3, 1.0};

/* Adam's tables are fitted robustly: a sample's log residual counts at most adam_clip (a
 * factor of 1.5).  An optimizer step is a host-driven loop over the parameter tensors, and a
 * stalled host makes some steps take orders of magnitude longer (39 of the 478 GH200
 * first-stage rows take seconds instead of milliseconds); a least-squares fit would move every
 * node those rows touch by their log-distance.  The other tables are fitted as before. */
static const double adam_clip = 0.4054651081081644; /* log(1.5) */

/* Adam's grid is coarse: at most 6 points on `params`, 4 on `tensors`.  A stage's tensor count
 * is 12 per layer plus the first and last stage's 1 or 3: the stages of one layer count sit
 * 2 % to 6 % apart, and nodes at each of them would fit each stage's rows alone (the first
 * stage's stalled steps included); a fine params grid likewise leaves nodes that a few
 * stalled steps decide.  The correction varies slowly along both axes, so 6 x 4 nodes lose
 * little (docs/calibration-notes.md). */
static const int adam_points[2] = {6, 4};

/* How op's table is fitted: the residual clip (0: least squares) and the most grid points on
 * axis a.  Adam is the one op fitted otherwise (above). */
static double fit_clip(RtOp op) { return op == RT_OP_ADAM ? adam_clip : 0; }
static int fit_points(RtOp op, int a, int naxes) { return op == RT_OP_ADAM ? adam_points[a] : grid_max[naxes]; }

/* Sorts v[0..n) and keeps its distinct values (those more than 1e-9 apart, relatively) at its
 * front; returns how many. */
static int sort_distinct(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int nd = 0;
  for (int i = 0; i < n; i++)
    if (nd == 0 || v[i] > v[nd - 1] * (1 + 1e-9)) v[nd++] = v[i];
  return nd;
}

/* Grid points of one axis from the sampled values v[0..n). */
static int choose_points(double *v, int n, int gmax, double *pts) {
  int nd = sort_distinct(v, n);
  if (nd <= gmax) {
    memcpy(pts, v, (size_t)nd * sizeof *v);
    return nd;
  }
  int np = 0;
  for (int j = 0; j < gmax; j++) {
    double p = v[(int)floor((double)j * (nd - 1) / (gmax - 1) + 0.5)];
    if (np == 0 || p > pts[np - 1]) pts[np++] = p;
  }
  return np;
}

/* Coordinate v's cell on axis a of t (as rt_table_eval), clamped at the edges: its lower
 * point *lo and the fraction *fr of the way to the next. */
static void axis_cell(const RtTable *t, int a, double v, int *lo, double *fr) {
  const double *p = t->logx[a];
  int n = t->npts[a];
  double lx = rt_log(v);
  if (n == 1 || lx <= p[0])
    *lo = 0, *fr = 0;
  else if (lx >= p[n - 1])
    *lo = n - 2, *fr = 1;
  else {
    int i = 0;
    while (p[i + 1] < lx) i++;
    *lo = i, *fr = lx == p[i + 1] ? 1 : (lx - p[i]) * t->inv_width[a][i];
  }
}

/* The cell corners of x and their hat weights (as rt_table_eval), clamped at the edges. */
static int corners(const RtTable *t, const double *x, int *idx, double *w) {
  int lo[RT_MAX_AXES];
  double fr[RT_MAX_AXES];
  for (int a = 0; a < t->naxes; a++) axis_cell(t, a, x[a], &lo[a], &fr[a]);
  int k = 0;
  for (int c = 0; c < (1 << t->naxes); c++) {
    double ww = 1;
    int id = 0;
    for (int a = 0; a < t->naxes; a++) {
      int up = (c >> a) & 1;
      if (t->npts[a] == 1 && up) ww = 0;
      ww *= up ? fr[a] : 1 - fr[a];
      id = id * t->npts[a] + (t->npts[a] == 1 ? 0 : lo[a] + up);
    }
    if (ww > 0) idx[k] = id, w[k++] = ww;
  }
  return k;
}

/* Fills nodes without data from the mean of their filled neighbours, wave by wave. */
static void fill_empty(const RtTable *t, double *v, unsigned char *known) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < t->nvals; i++) {
      if (known[i]) continue;
      double sum = 0;
      int cnt = 0, stride = 1;
      for (int a = t->naxes - 1; a >= 0; stride *= t->npts[a], a--) {
        int pos = (i / stride) % t->npts[a];
        if (pos > 0 && known[i - stride] == 1) sum += v[i - stride], cnt++;
        if (pos + 1 < t->npts[a] && known[i + stride] == 1) sum += v[i + stride], cnt++;
      }
      if (cnt) v[i] = sum / cnt, known[i] = 2, changed = 1;
    }
    for (int i = 0; i < t->nvals; i++)
      if (known[i] == 2) known[i] = 1;
  }
}

typedef struct Pt {
  double x[RT_MAX_AXES], r[2]; /* r[1] NAN: no backward measurement */
} Pt;

/* Every sample's cell corners and hat weights in t, located once per grid: the fit's 40
 * sweeps and the inner cross-validation read them instead of searching the axes again. */
typedef struct Cells {
  int stride;   /* 1 << naxes */
  int *k, *idx; /* k[i] corners of sample i at idx[i * stride ..] */
  double *w;
} Cells;

static int cells_init(Cells *c, const RtTable *t, const Pt *p, int n) {
  c->stride = 1 << t->naxes;
  c->k = malloc((size_t)(n + 1) * sizeof *c->k);
  c->idx = malloc((size_t)(n + 1) * (size_t)c->stride * sizeof *c->idx);
  c->w = malloc((size_t)(n + 1) * (size_t)c->stride * sizeof *c->w);
  if (!c->k || !c->idx || !c->w) return -1;
  for (int i = 0; i < n; i++) c->k[i] = corners(t, p[i].x, c->idx + i * c->stride, c->w + i * c->stride);
  return 0;
}

static void cells_free(Cells *c) { free(c->k), free(c->idx), free(c->w); }

/* The log correction that grid values v give at sample i of c. */
static double cells_at(const Cells *c, const double *v, int i) {
  const int *idx = c->idx + i * c->stride;
  const double *w = c->w + i * c->stride;
  double pred = 0;
  for (int j = 0; j < c->k[i]; j++) pred += w[j] * v[idx[j]];
  return pred;
}

/* Per node of t: cnt[j] its neighbours along the axes and, if v, sum[j] their values. */
static void neighbour_sums(const RtTable *t, const double *v, double *sum, int *cnt) {
  memset(cnt, 0, (size_t)t->nvals * sizeof *cnt);
  if (v) memset(sum, 0, (size_t)t->nvals * sizeof *sum);
  int stride = 1;
  for (int a = t->naxes - 1; a >= 0; stride *= t->npts[a], a--) {
    int np = t->npts[a], block = stride * np;
    for (int b = 0; b < t->nvals; b += block)
      for (int pos = 0; pos < np; pos++)
        for (int j = b + pos * stride, e = j + stride; j < e; j++) {
          if (pos > 0) cnt[j]++;
          if (pos + 1 < np) cnt[j]++;
          if (!v) continue;
          if (pos > 0) sum[j] += v[j - stride];
          if (pos + 1 < np) sum[j] += v[j + stride];
        }
  }
}

/* Axis function f (np points) at the point lo + w of the way to the next. */
static double axis_at(const double *f, int np, int lo, double w) {
  return (1 - w) * f[lo] + (np > 1 ? w * f[lo + 1] : 0);
}

/* The additive part of a table's log correction: per axis a function of that axis alone,
 * piecewise linear between its grid points, fitted to the rows by backfitting (each axis in
 * turn to what the others leave); *node_add then holds, per grid node, the sum of the axes'
 * values there.  Many rows inform each axis point, where a node of the full grid sees few:
 * it is the prior the nodes are pulled toward (fit_values()). */
static int additive_prior(const RtTable *t, int which, const Pt *p, int n, double *node_add) {
  int naxes = t->naxes, rc = -1;
  int *lo = malloc((size_t)(n + 1) * RT_MAX_AXES * sizeof *lo);
  double *fr = malloc((size_t)(n + 1) * RT_MAX_AXES * sizeof *fr);
  double f[RT_MAX_AXES][FIT_MAX_GRID] = {{0}};
  if (!lo || !fr) goto out;
  for (int i = 0; i < n; i++)
    for (int a = 0; a < naxes; a++) axis_cell(t, a, p[i].x[a], &lo[i * RT_MAX_AXES + a], &fr[i * RT_MAX_AXES + a]);
  for (int sweep = 0; sweep < 8; sweep++)
    for (int a = 0; a < naxes; a++) {
      int np = t->npts[a];
      double num[FIT_MAX_GRID] = {0}, den[FIT_MAX_GRID] = {0};
      for (int i = 0; i < n; i++) {
        if (!isfinite(p[i].r[which])) continue;
        double others = 0;
        for (int b = 0; b < naxes; b++)
          if (b != a) others += axis_at(f[b], t->npts[b], lo[i * RT_MAX_AXES + b], fr[i * RT_MAX_AXES + b]);
        int l = lo[i * RT_MAX_AXES + a];
        double w = fr[i * RT_MAX_AXES + a];
        double d = p[i].r[which] - others - axis_at(f[a], np, l, w);
        num[l] += (1 - w) * d, den[l] += 1 - w;
        if (np > 1) num[l + 1] += w * d, den[l + 1] += w;
      }
      for (int k = 0; k < np; k++)
        if (den[k] > 1e-9) f[a][k] += num[k] / den[k];
    }
  for (int j = 0; j < t->nvals; j++) {
    double sum = 0;
    for (int a = naxes - 1, rest = j; a >= 0; rest /= t->npts[a], a--) sum += f[a][rest % t->npts[a]];
    node_add[j] = sum;
  }
  rc = 0;
out:
  free(lo), free(fr);
  return rc;
}

/* The log corrections of one direction (0 fwd, 1 bwd); lam > 0: smoothed (sparse tables);
 * clip > 0: robust, each sample's residual counts at most clip (a Huber loss); mu > 0 (not
 * with clip, and for two axes or more): pulled toward the additive prior, in the place of
 * the smoothing. */
static void fit_values(RtTable *t, const Cells *c, int which, const Pt *p, int n, double lam, double clip, double mu) {
  double *v = t->logc[which];
  double *old = malloc((size_t)t->nvals * sizeof *old);
  double *sum = malloc((size_t)t->nvals * sizeof *sum);
  int *cnt = malloc((size_t)t->nvals * sizeof *cnt);
  double *num = calloc((size_t)t->nvals, sizeof *num), *den = calloc((size_t)t->nvals, sizeof *den);
  unsigned char *known = calloc((size_t)t->nvals, 1);
  double *prior = NULL;
  if (!num || !den || !known || !old || !sum || !cnt) goto out;
  neighbour_sums(t, NULL, NULL, cnt);
  if (mu > 0 && clip == 0 && t->naxes > 1) {
    prior = malloc((size_t)t->nvals * sizeof *prior);
    if (!prior || additive_prior(t, which, p, n, prior) != 0) goto out;
    memcpy(v, prior, (size_t)t->nvals * sizeof *v);
  }
  for (int iter = 0; iter < 40; iter++) {
    memset(num, 0, (size_t)t->nvals * sizeof *num);
    memset(den, 0, (size_t)t->nvals * sizeof *den);
    for (int i = 0; i < n; i++) {
      if (!isfinite(p[i].r[which])) continue;
      const int *idx = c->idx + i * c->stride;
      const double *w = c->w + i * c->stride;
      double d = p[i].r[which] - cells_at(c, v, i);
      if (clip > 0) d = fmax(-clip, fmin(clip, d));
      for (int j = 0; j < c->k[i]; j++) num[idx[j]] += w[j] * d, den[idx[j]] += w[j];
    }
    if (!prior && lam > 0 && iter > 0) {
      /* Sparse: minimise the squared residuals + lam * (node - mean of its axis neighbours)^2,
       * by the same damped per-node steps; nodes without data follow their neighbours. */
      memcpy(old, v, (size_t)t->nvals * sizeof *v);
      neighbour_sums(t, old, sum, cnt);
      for (int j = 0; j < t->nvals; j++) {
        double pen = cnt[j] ? lam * (old[j] - sum[j] / cnt[j]) : 0;
        v[j] += 0.6 * (num[j] - pen) / (den[j] + (cnt[j] ? lam : 0) + 1e-12);
      }
      continue;
    }
    if (prior) {
      for (int j = 0; j < t->nvals; j++) v[j] += 0.6 * (num[j] - mu * (v[j] - prior[j])) / (den[j] + mu);
      continue;
    }
    for (int j = 0; j < t->nvals; j++)
      if (den[j] > 1e-9) v[j] += (iter == 0 ? 1.0 : 0.6) * num[j] / den[j], known[j] = 1;
    if (iter == 0) fill_empty(t, v, known);
  }
out:
  free(num), free(den), free(known), free(old), free(sum), free(cnt), free(prior);
}

/* Grid resolution, chosen per table from its rows: the most points per axis is the entry of
 * cap_ladder (never above fit_points()) whose fit has the smallest error on the rows it did
 * not see, by an inner cv_folds-fold cross-validation on the rows the fit is given (the error
 * as the reports measure it: MAPE of the corrected times, fwd and bwd rows together).  A
 * table with fewer than cv_min_rows rows keeps the finest grid. */
static const int cap_ladder[] = {2, 3, 4, 6, 8, 12, 16, 24, 32};
enum { NCAPS = sizeof cap_ladder / sizeof cap_ladder[0], cv_folds = 3, cv_min_rows = 12 };
static const double finer_slack = 1.01;

/* The search tries no grid of more than max_nodes_per_row nodes for each row it fits: such a
 * grid is all fill between the samples, and fitting it would take a small sample set most of
 * its time.  Every grid the shipped tables' searches try has at least 0.39 rows per node
 * (above), so this leaves them as they are. */
enum { max_nodes_per_row = 16 };
static int too_fine(const int *cap, int naxes, int n) {
  double nodes = 1;
  for (int a = 0; a < naxes; a++) nodes *= cap[a];
  return nodes > (double)max_nodes_per_row * n;
}

/* The table of op/dt on the rows p[0..n) with at most cap[a] points on axis a: grid and
 * values; keys: its qualifiers, NULL for op's.  vals: scratch for n doubles.  0, or -1 on
 * failure (t released). */
static int fit_grid(RtTable *t, RtOp op, RtDtype dt, const char *keys, const Pt *p, int n, const int *cap, int with_bwd,
                    double mu, double *vals) {
  int naxes = rt_op_info[op].naxes;
  double pts[RT_MAX_AXES][FIT_MAX_GRID];
  const double *pp[RT_MAX_AXES];
  int npts[RT_MAX_AXES];
  for (int a = 0; a < naxes; a++) {
    for (int i = 0; i < n; i++) vals[i] = p[i].x[a];
    npts[a] = choose_points(vals, n, cap[a], pts[a]);
    pp[a] = pts[a];
  }
  if (rt_table_init(t, rt_op_info[op].kernel, dt, keys ? keys : rt_op_info[op].keys, naxes, rt_op_info[op].axis, npts,
                    pp, with_bwd) != 0)
    return -1;
  Cells c;
  if (cells_init(&c, t, p, n) != 0) {
    cells_free(&c);
    rt_table_release(t);
    return -1;
  }
  double lam = n < sparse_density * t->nvals ? sparse_smoothing : 0;
  double clip = fit_clip(op);
  fit_values(t, &c, 0, p, n, lam, clip, mu);
  if (with_bwd) fit_values(t, &c, 1, p, n, lam, clip, mu);
  cells_free(&c);
  return 0;
}

/* How a table's grid was fitted (fit_grid()'s arguments but the rows), to fit it again on the
 * inner folds. */
typedef struct GridSpec {
  RtOp op;
  RtDtype dt;
  const char *keys;
  const int *cap;
  int with_bwd;
  double mu;
} GridSpec;

/* --- the mean of nearby resolutions ---------------------------------------------------
 *
 * The caps choose_caps() picks are the best rung of cap_ladder by an inner cross-validation
 * whose own noise is about the difference between neighbouring rungs.  So a table is the mean,
 * in log, of three grids fitted on its rows: at the chosen caps, one rung coarser and one rung
 * finer on every axis; it takes the finer grid's points, each node the mean of the three grids'
 * values there (between nodes it interpolates as every table does; docs/calibration-notes.md
 * has the figures and the variants tried).  Adam's tables (a fixed coarse grid, fitted
 * robustly) are one grid. */
static int ladder_step(int cap, int dir) {
  int l = 0;
  while (l < NCAPS - 1 && cap_ladder[l] < cap) l++;
  l += dir;
  return cap_ladder[l < 0 ? 0 : l >= NCAPS ? NCAPS - 1 : l];
}

/* The table of gs on the rows p[0..n) (above); vals: scratch for n doubles.  0, or -1 on
 * failure (t released). */
static int fit_mean_grid(RtTable *t, const GridSpec *gs, const Pt *p, int n, double *vals) {
  if (fit_clip(gs->op) != 0) return fit_grid(t, gs->op, gs->dt, gs->keys, p, n, gs->cap, gs->with_bwd, gs->mu, vals);
  int naxes = rt_op_info[gs->op].naxes, caps[3][RT_MAX_AXES];
  for (int a = 0; a < naxes; a++)
    caps[0][a] = ladder_step(gs->cap[a], -1), caps[1][a] = gs->cap[a], caps[2][a] = ladder_step(gs->cap[a], 1);
  RtTable g[3];
  for (int k = 0; k < 3; k++)
    if (fit_grid(&g[k], gs->op, gs->dt, gs->keys, p, n, caps[k], gs->with_bwd, gs->mu, vals) != 0) {
      while (k-- > 0) rt_table_release(&g[k]);
      return -1;
    }
  double pts[RT_MAX_AXES][FIT_MAX_GRID];
  const double *pp[RT_MAX_AXES];
  const char *names[RT_MAX_AXES];
  for (int a = 0; a < naxes; a++) {
    memcpy(pts[a], g[2].x[a], (size_t)g[2].npts[a] * sizeof *pts[a]);
    pp[a] = pts[a], names[a] = g[2].axis_name[a];
  }
  int rc = rt_table_init(t, g[2].kernel, gs->dt, g[2].keys, naxes, names, g[2].npts, pp, g[2].logc[1] != NULL);
  for (int j = 0; rc == 0 && j < t->nvals; j++) {
    double x[RT_MAX_AXES];
    for (int a = naxes - 1, rest = j; a >= 0; rest /= t->npts[a], a--) x[a] = pts[a][rest % t->npts[a]];
    for (int w = 0; w < 2 && t->logc[w]; w++) {
      double sum = 0;
      unsigned fl = 0;
      for (int k = 0; k < 3; k++) sum += log(rt_table_eval(&g[k], w, x, &fl));
      t->logc[w][j] = sum / 3;
    }
  }
  for (int k = 0; k < 3; k++) rt_table_release(&g[k]);
  return rc;
}

/* The summed absolute percentage error of the times corrected by t on the rows p[0..n),
 * fwd and bwd; *cnt counts them. */
static double held_out_error(const RtTable *t, const Pt *p, int n, int *cnt) {
  Cells c;
  double sum = 0;
  if (cells_init(&c, t, p, n) == 0)
    for (int i = 0; i < n; i++)
      for (int w = 0; w < 2; w++) {
        if (!isfinite(p[i].r[w]) || !t->logc[w]) continue;
        sum += fabs(expm1(cells_at(&c, t->logc[w], i) - p[i].r[w])), (*cnt)++;
      }
  else
    sum = INFINITY;
  cells_free(&c);
  return sum;
}

/* Inner fold of row i: a fixed hash of its place among the table's rows (another than the
 * outer folds' hash of the set's rows), so that every run chooses alike. */
static int inner_fold(int i) { return (int)((((unsigned)i * 2246822519u) >> 9) % cv_folds); }

/* The inner cross-validated error (a mean) of fitting p[0..n) with at most cap[a] points on
 * axis a; q: scratch for n rows, vals for n doubles.  INFINITY on failure. */
static double cv_error(RtOp op, RtDtype dt, const Pt *p, int n, const int *cap, int with_bwd, double mu, Pt *q,
                       double *vals) {
  double sum = 0;
  int cnt = 0;
  for (int k = 0; k < cv_folds; k++) {
    int nt = 0, nh = 0;
    for (int i = 0; i < n; i++)
      if (inner_fold(i) != k) q[nt++] = p[i];
    for (int i = 0; i < n; i++)
      if (inner_fold(i) == k) q[nt + nh++] = p[i];
    if (nt == 0 || nh == 0) continue;
    RtTable t;
    if (fit_grid(&t, op, dt, NULL, q, nt, cap, with_bwd, mu, vals) != 0) return INFINITY;
    sum += held_out_error(&t, q + nt, nh, &cnt);
    rt_table_release(&t);
  }
  return cnt ? sum / cnt : INFINITY;
}

/* --- points: the sampled shapes' own corrections ------------------------------------------
 *
 * A grid is smooth between its nodes; a GEMM library is not between shapes (its kernel choice
 * changes from one shape to the next), and two runs of one shape agree far better than the
 * grid agrees with either: on the paper's GH200 samples, rows of one linear shape measured in
 * different configurations differ by 0.6-0.9 % on average, the grid by 2-4 %.  So a table may
 * hold, for each shape it was fitted on, that shape's mean residual after the grid, shrunk
 * toward 0 as S / (m + k) for the m rows' residual sum S: the point's correction multiplies
 * the grid's where a call has exactly that shape (calib.h, RtPoint).  Whether a table gets
 * points, and k, is decided per direction by the inner folds (inner_fold()): the grid is
 * fitted again on each fold's other rows, their residuals make the points, and the fold's
 * rows are scored without points and with each k of point_shrink; the k of smallest error
 * wins if it lowers the error without points by point_gain at least.  The grid must be
 * refitted: a grid fitted on a shape's rows has already followed them part of the way, so
 * that scoring each row by the others of its shape on it (leave-one-out) undervalues the
 * points.  Where runs of one shape scatter more than the grid errs, points lose and the table
 * has none.  A table of fewer than cv_min_rows rows gets none, and Adam's robust tables none:
 * a stalled step is one row of its shape. */
static const double point_shrink[] = {0, 0.5, 1, 2, 4, 8};
enum { NSHRINK = sizeof point_shrink / sizeof point_shrink[0] };
static const double point_gain = 0.01;

/* One shape: its coordinates' logs, and the sums and counts of its rows' residuals. */
typedef struct Shape {
  double lx[RT_MAX_AXES];
  double sum[2];
  int m[2];
  int row; /* one of its rows */
} Shape;

static int shape_cmp(const void *a, const void *b) {
  const Shape *x = a, *y = b;
  for (int k = 0; k < RT_MAX_AXES; k++)
    if (x->lx[k] != y->lx[k]) return x->lx[k] < y->lx[k] ? -1 : 1;
  return 0;
}

/* The shapes of the rows p[i] (i < n, own[i] or own NULL) and the sums of their residuals
 * after t, into sh (room for n), sorted; returns their number, or -1 on failure. */
static int shapes_of(const RtTable *t, const Pt *p, int n, const unsigned char *own, Shape *sh) {
  Cells c = {0};
  int ns = 0;
  if (cells_init(&c, t, p, n) != 0) return cells_free(&c), -1;
  for (int i = 0; i < n; i++) {
    if (own && !own[i]) continue;
    Shape *s = &sh[ns++];
    memset(s, 0, sizeof *s);
    for (int a = 0; a < t->naxes; a++) s->lx[a] = rt_log(p[i].x[a]);
    s->row = i;
    for (int w = 0; w < 2; w++)
      if (t->logc[w] && isfinite(p[i].r[w])) s->sum[w] = p[i].r[w] - cells_at(&c, t->logc[w], i), s->m[w] = 1;
  }
  cells_free(&c);
  qsort(sh, (size_t)ns, sizeof *sh, shape_cmp);
  int k = 0; /* merge the rows of one shape */
  for (int i = 0; i < ns; i++) {
    if (k > 0 && shape_cmp(&sh[k - 1], &sh[i]) == 0) {
      for (int w = 0; w < 2; w++) sh[k - 1].sum[w] += sh[i].sum[w], sh[k - 1].m[w] += sh[i].m[w];
      continue;
    }
    sh[k++] = sh[i];
  }
  return k;
}

/* Scores the points of the rows q[0..nt) on the rows q[nt..nt+nh) (own: per row of q, whether
 * it makes or takes a point; NULL: all), over t fitted on q[0..nt): err[w][k] sums the error
 * with shrink k, err[w][NSHRINK] without points.  0, or -1 on failure. */
static int score_points(const RtTable *t, const Pt *q, int nt, int nh, const unsigned char *own, Shape *sh,
                        double (*err)[NSHRINK + 1]) {
  int ns = shapes_of(t, q, nt, own, sh);
  Cells c = {0};
  if (ns < 0 || cells_init(&c, t, q + nt, nh) != 0) return cells_free(&c), -1;
  for (int i = 0; i < nh; i++) {
    if (own && !own[nt + i]) continue;
    Shape key = {{0}, {0, 0}, {0, 0}, 0};
    for (int a = 0; a < t->naxes; a++) key.lx[a] = rt_log(q[nt + i].x[a]);
    const Shape *s = bsearch(&key, sh, (size_t)ns, sizeof *sh, shape_cmp);
    for (int w = 0; w < 2; w++) {
      if (!t->logc[w] || !isfinite(q[nt + i].r[w])) continue;
      double d = q[nt + i].r[w] - cells_at(&c, t->logc[w], i), e0 = fabs(expm1(-d));
      err[w][NSHRINK] += e0;
      for (int k = 0; k < NSHRINK; k++)
        err[w][k] += s && s->m[w] ? fabs(expm1(s->sum[w] / (s->m[w] + point_shrink[k]) - d)) : e0;
    }
  }
  cells_free(&c);
  return 0;
}

/* The points of t, a grid fitted as gs says on the rows p[0..n), for the rows p[i] with own[i]
 * (own NULL: all); q: scratch for n rows, vals for n doubles.  0, or -1 on failure. */
static int fit_shapes(RtTable *t, const GridSpec *gs, const Pt *p, int n, const unsigned char *own, Pt *q,
                      double *vals) {
  if (n < cv_min_rows) return 0;
  int rc = -1;
  Shape *sh = malloc((size_t)(n + 1) * sizeof *sh);
  unsigned char *qown = own ? malloc((size_t)n + 1) : NULL;
  double err[2][NSHRINK + 1] = {{0}};
  if (!sh || (own && !qown)) goto out;
  for (int k = 0; k < cv_folds; k++) {
    int nt = 0, nh = 0;
    for (int pass = 0; pass < 2; pass++) /* the fold's other rows, then its own */
      for (int i = 0; i < n; i++)
        if ((inner_fold(i) == k) == pass) {
          if (qown) qown[nt + nh] = own[i];
          q[nt + nh] = p[i], pass ? nh++ : nt++;
        }
    if (nt == 0 || nh == 0) continue;
    RtTable tf;
    if (fit_mean_grid(&tf, gs, q, nt, vals) != 0) goto out;
    int r = score_points(&tf, q, nt, nh, qown, sh, err);
    rt_table_release(&tf);
    if (r != 0) goto out;
  }
  int best[2] = {-1, -1}, any = 0;
  for (int w = 0; w < 2; w++) {
    double e = err[w][NSHRINK] * (1 - point_gain);
    for (int k = 0; k < NSHRINK; k++)
      if (err[w][k] < e) e = err[w][k], best[w] = k;
    any |= best[w] >= 0;
  }
  int ns = any ? shapes_of(t, p, n, own, sh) : 0;
  rc = ns < 0 ? -1 : 0;
  for (int i = 0; i < ns && rc == 0; i++) {
    double corr[2] = {0, 0};
    for (int w = 0; w < 2; w++)
      if (best[w] >= 0 && sh[i].m[w] > 0) corr[w] = sh[i].sum[w] / (sh[i].m[w] + point_shrink[best[w]]);
    rc = rt_table_add_point(t, p[sh[i].row].x, corr) < 0 ? -1 : 0;
  }
out:
  free(sh), free(qown);
  return rc;
}

/* The caps tried for one table and their errors: the search asks for some twice. */
typedef struct Tried {
  int n, cap[64][RT_MAX_AXES];
  double err[64];
} Tried;

/* cv_error() of cap, from tr if it was tried. */
static double cv_error_once(Tried *tr, RtOp op, RtDtype dt, const Pt *p, int n, const int *cap, int with_bwd, Pt *q,
                            double *vals) {
  size_t len = (size_t)rt_op_info[op].naxes * sizeof *cap;
  for (int i = 0; i < tr->n; i++)
    if (memcmp(tr->cap[i], cap, len) == 0) return tr->err[i];
  double e = cv_error(op, dt, p, n, cap, with_bwd, 0, q, vals);
  if (tr->n < 64) memcpy(tr->cap[tr->n], cap, len), tr->err[tr->n++] = e;
  return e;
}

/* The distinct values of axis a among p[0..n) (vals: scratch for n doubles). */
static int distinct(const Pt *p, int n, int a, double *vals) {
  for (int i = 0; i < n; i++) vals[i] = p[i].x[a];
  return sort_distinct(vals, n);
}

/* The most points per axis, cap[a], for the table of op/dt on the rows p[0..n) (above), and
 * the inner cross-validated error with them (INFINITY: too few rows to tell). */
static double choose_caps(RtOp op, RtDtype dt, const Pt *p, int n, int with_bwd, double *vals, int *cap) {
  int naxes = rt_op_info[op].naxes, top[RT_MAX_AXES], nd = 1;
  for (int a = 0; a < naxes; a++) {
    int d = distinct(p, n, a, vals), m = fit_points(op, a, naxes);
    cap[a] = m, top[a] = d < m ? d : m; /* a cap at or above top[a]: the same grid */
    if (top[a] > nd) nd = top[a];
  }
  Pt *q = n >= cv_min_rows ? malloc((size_t)n * sizeof *q) : NULL;
  if (!q) return INFINITY;
  /* One cap for every axis first, from the ladder; then each axis in turn, a step up or down
   * the ladder, while that lowers the error, for two passes.  A search until no step helps
   * fits the sampled sizes better and extrapolates worse (docs/calibration.md, "How a table
   * is fitted"). */
  double err = INFINITY;
  int lvl[RT_MAX_AXES] = {0}, best = 0;
  Tried tr = {0};
  for (int c = 0; c < NCAPS; c++) {
    int try[RT_MAX_AXES];
    for (int a = 0; a < naxes; a++) try[a] = cap_ladder[c] < top[a] ? cap_ladder[c] : top[a];
    if (c > 0 && too_fine(try, naxes, n)) break;
    double e = cv_error_once(&tr, op, dt, p, n, try, with_bwd, q, vals);
    if (e < err * finer_slack) err = fmin(e, err), best = c;
    if (cap_ladder[c] >= nd) break;
  }
  for (int a = 0; a < naxes; a++) {
    lvl[a] = best;
    while (lvl[a] > 0 && cap_ladder[lvl[a] - 1] >= top[a]) lvl[a]--;
  }
  for (int pass = 0; pass < 2; pass++) {
    int moved = 0;
    for (int a = 0; a < naxes; a++)
      for (int dir = -1; dir <= 1; dir += 2) {
        int l = lvl[a] + dir;
        if (l < 0 || l >= NCAPS || (dir > 0 && cap_ladder[lvl[a]] >= top[a])) continue;
        int try[RT_MAX_AXES];
        for (int b = 0; b < naxes; b++) {
          int v = cap_ladder[b == a ? l : lvl[b]];
          try[b] = v < top[b] ? v : top[b];
        }
        if (dir > 0 && too_fine(try, naxes, n)) continue;
        double e = cv_error_once(&tr, op, dt, p, n, try, with_bwd, q, vals);
        if (e < err * (dir > 0 ? finer_slack : 1)) err = fmin(e, err), lvl[a] = l, moved = 1;
      }
    if (!moved) break;
  }
  for (int a = 0; a < naxes; a++) cap[a] = cap_ladder[lvl[a]] < top[a] ? cap_ladder[lvl[a]] : top[a];
  err = cv_error_once(&tr, op, dt, p, n, cap, with_bwd, q, vals);
  free(q);
  return err;
}

/* The used samples of op/dt as fitting rows in p (room for set->n + 1), *with_bwd set when
 * one has a backward time; cls: where non-NULL, each row's bmm class (rt_bmm_class). */
static int gather(const RtGpu *g, const RtSampleSet *set, const unsigned char *use, RtOp op, RtDtype dt, Pt *p,
                  signed char *cls, int *with_bwd) {
  int n = 0;
  *with_bwd = 0;
  for (int i = 0; i < set->n; i++) {
    const RtSample *s = &set->s[i];
    if ((use && !use[i]) || s->op != (int)op || s->dtype != dt) continue;
    RtCost c = rt_op_physics(g, op, dt, s->a, p[n].x);
    p[n].r[0] = log(s->fwd / c.fwd);
    p[n].r[1] = s->bwd > 0 && c.bwd > 0 ? log(s->bwd / c.bwd) : NAN;
    *with_bwd |= isfinite(p[n].r[1]);
    if (cls) cls[n] = (signed char)rt_bmm_class(p[n].x[2], p[n].x[3]);
    n++;
  }
  return n;
}

/* The held-out error, per bmm class, of the bmm table fitted with caps cap on the rows p[0..n)
 * by the inner folds (the rows of every class scored on the fits that did not see them):
 * sum[k] over cnt[k] corrected times.  q: scratch for n rows, vals for n doubles. */
static int class_errors(RtDtype dt, const Pt *p, const signed char *cls, int n, const int *cap, int with_bwd, Pt *q,
                        double *vals, double *sum, int *cnt) {
  for (int k = 0; k < cv_folds; k++) {
    int nt = 0;
    for (int i = 0; i < n; i++)
      if (inner_fold(i) != k) q[nt++] = p[i];
    if (nt == 0 || nt == n) continue;
    RtTable t;
    if (fit_grid(&t, RT_OP_BMM, dt, NULL, q, nt, cap, with_bwd, 0, vals) != 0) return -1;
    for (int c = 0; c < RT_BMM_CLASSES; c++) {
      int nh = 0;
      for (int i = 0; i < n; i++)
        if (inner_fold(i) == k && cls[i] == c) q[nt + nh++] = p[i];
      if (nh) sum[c] += held_out_error(&t, q + nt, nh, &cnt[c]);
    }
    rt_table_release(&t);
  }
  return 0;
}

/* bmm's class tables (calib.h) for dt, from the bmm rows p[0..n) and their classes cls: a
 * class with at least cv_min_rows rows gets a table fitted on them alone, with the `bmm`
 * table's caps cap (a search per class, as choose_caps() does, tripled the fit's time for no
 * better error on the paper's samples), when that table's inner cross-validated error on them
 * is below the `bmm` table's, fitted on all of bmm's rows with the same caps, on the same
 * rows.  The tables go to c->tables[c->ntables..] and c->bmm[][dt].  q: scratch for n rows,
 * vals for n doubles.  0, or -1 on failure. */
static int fit_bmm_classes(RtDtype dt, const Pt *p, const signed char *cls, int n, int with_bwd, const int *cap, Pt *q,
                           double *vals, RtCalib *c) {
  double sum[RT_BMM_CLASSES] = {0};
  int cnt[RT_BMM_CLASSES] = {0}, rows[RT_BMM_CLASSES] = {0}, any = 0;
  for (int i = 0; i < n; i++)
    if (cls[i] >= 0) rows[cls[i]]++;
  for (int k = 0; k < RT_BMM_CLASSES; k++) any |= rows[k] >= cv_min_rows && rows[k] < n;
  if (!any) return 0;
  if (class_errors(dt, p, cls, n, cap, with_bwd, q, vals, sum, cnt) != 0) return -1;
  Pt *pc = malloc((size_t)n * sizeof *pc);
  if (!pc) return -1;
  for (int k = 0; k < RT_BMM_CLASSES; k++) {
    if (rows[k] < cv_min_rows || rows[k] == n || cnt[k] == 0) continue;
    int nc = 0, kb = 0;
    for (int i = 0; i < n; i++)
      if (cls[i] == k) pc[nc] = p[i], kb |= isfinite(p[i].r[1]), nc++;
    if (!(cv_error(RT_OP_BMM, dt, pc, nc, cap, kb, 0, q, vals) < sum[k] / cnt[k])) continue;
    RtTable *t = &c->tables[c->ntables];
    GridSpec gs = {RT_OP_BMM, dt, rt_bmm_class_keys(k), cap, kb, 0};
    if (fit_mean_grid(t, &gs, pc, nc, vals) != 0 || fit_shapes(t, &gs, pc, nc, NULL, q, vals) != 0) {
      free(pc);
      return -1;
    }
    c->bmm[k][dt] = t, c->ntables++;
  }
  free(pc);
  return 0;
}

/* op/dt's table from the used samples, appended to c (and, for bmm, its class tables); 0, or
 * -1 on failure. */
static int fit_table(const RtGpu *g, const RtSampleSet *set, const unsigned char *use, RtOp op, RtDtype dt,
                     RtCalib *c) {
  int with_bwd = 0, rc = -1, cap[RT_MAX_AXES];
  Pt *p = malloc((size_t)(set->n + 1) * sizeof *p), *q = NULL;
  double *vals = malloc((size_t)(set->n + 1) * sizeof *vals);
  signed char *cls = op == RT_OP_BMM ? malloc((size_t)set->n + 1) : NULL;
  if (!p || !vals || (op == RT_OP_BMM && !cls)) goto out;
  int n = gather(g, set, use, op, dt, p, cls, &with_bwd);
  rc = 0;
  if (n == 0) goto out;
  double err = choose_caps(op, dt, p, n, with_bwd, vals, cap), mu = 0;
  rc = -1;
  if (!(q = malloc((size_t)n * sizeof *q))) goto out;
  for (size_t k = 0; k < sizeof prior_mu / sizeof prior_mu[0] && isfinite(err); k++) {
    double e = cv_error(op, dt, p, n, cap, with_bwd, prior_mu[k], q, vals);
    if (e < err) err = e, mu = prior_mu[k];
  }
  RtTable *t = &c->tables[c->ntables];
  GridSpec gs = {op, dt, NULL, cap, with_bwd, mu};
  if (fit_mean_grid(t, &gs, p, n, vals) != 0) goto out;
  c->op[op][dt] = t, c->ntables++;
  if (cls && fit_bmm_classes(dt, p, cls, n, with_bwd, cap, q, vals, c) != 0) goto out;
  if (fit_clip(op) == 0) {
    /* bmm's points: of the shapes that no class table corrects (a class table has its own) */
    unsigned char *own = NULL;
    if (cls && !(own = malloc((size_t)n))) goto out;
    for (int i = 0; own && i < n; i++) own[i] = cls[i] < 0 || !c->bmm[cls[i]][dt];
    int r = fit_shapes(t, &gs, p, n, own, q, vals);
    free(own);
    if (r != 0) goto out;
  }
  rc = 0;
out:
  free(p), free(q), free(vals), free(cls);
  return rc;
}

RtCalib *rt_fit(const RtGpu *g, const RtSampleSet *set, const unsigned char *use) {
  RtCalib *c = calloc(1, sizeof *c);
  if (!c || !(c->tables = calloc((RT_NOPS + RT_BMM_CLASSES) * RT_NDTYPES, sizeof *c->tables))) {
    free(c);
    return NULL;
  }
  for (int op = 0; op < RT_NOPS; op++)
    for (int dt = 0; dt < RT_NDTYPES; dt++)
      if (fit_table(g, set, use, (RtOp)op, (RtDtype)dt, c) != 0) {
        rt_calib_free(c);
        return NULL;
      }
  return c;
}

void rt_fit_mape(const RtGpu *g, const RtSampleSet *set, const unsigned char *use, double (*mape)[2], int *rows) {
  double sum[RT_FIT_MAX_FILES][2] = {{0}};
  int cnt[RT_FIT_MAX_FILES][2] = {{0}};
  for (int i = 0; i < set->n; i++) {
    const RtSample *s = &set->s[i];
    if (use && !use[i]) continue;
    RtCost c = rt_op_eval(g, (RtOp)s->op, s->dtype, s->a);
    sum[s->file][0] += fabs(c.fwd - s->fwd) / s->fwd, cnt[s->file][0]++;
    if (s->bwd > 0) sum[s->file][1] += fabs(c.bwd - s->bwd) / s->bwd, cnt[s->file][1]++;
  }
  for (int f = 0; f < set->nfiles; f++) {
    if (rows) rows[f] = cnt[f][0];
    for (int w = 0; w < 2; w++) mape[f][w] = cnt[f][w] ? sum[f][w] / cnt[f][w] : -1;
  }
}

static void err_add(RtFitErr *e, int which, double ape, double *sum) { sum[which] += ape, e->rows[which]++; }

static void err_done(RtFitErr *e, const double *sum) {
  for (int w = 0; w < 2; w++) e->mape[w] = e->rows[w] ? sum[w] / e->rows[w] : -1;
}

int rt_fit_cv_full(const RtGpu *g, const RtSampleSet *set, int folds, RtFitCv *cv) {
  double sum[RT_FIT_MAX_FILES][2] = {{0}}, tsum[RT_FIT_MAX_FILES][2] = {{0}}, asum[2] = {0};
  int tab_of[RT_NOPS][RT_NDTYPES];
  memset(cv, 0, sizeof *cv);
  unsigned char *use = malloc((size_t)set->n + 1);
  if (!use || folds < 2) {
    free(use);
    return -1;
  }
  /* The tables in the order rt_fit() makes them: ops.def order, then dtype. */
  for (int op = 0; op < RT_NOPS; op++)
    for (int dt = 0; dt < RT_NDTYPES; dt++) tab_of[op][dt] = -1;
  for (int i = 0; i < set->n; i++) tab_of[set->s[i].op][set->s[i].dtype] = 0;
  for (int op = 0; op < RT_NOPS; op++)
    for (int dt = 0; dt < RT_NDTYPES; dt++) {
      if (tab_of[op][dt] < 0) continue;
      int t = tab_of[op][dt] = cv->ntables++; /* a table has files: at most RT_FIT_MAX_FILES */
      const char *keys = rt_op_info[op].keys;
      cv->table[t].op = op, cv->table[t].dtype = (RtDtype)dt;
      snprintf(cv->table[t].name, sizeof cv->table[t].name, "%s %s%s%s", rt_op_info[op].kernel,
               rt_dtype_name((RtDtype)dt), keys[0] ? " " : "", keys);
    }
  for (int k = 0; k < folds; k++) {
    /* Fold of row i: a fixed hash, so the folds are the same on every run and machine. */
    for (int i = 0; i < set->n; i++) use[i] = ((unsigned)i * 2654435761u >> 7) % (unsigned)folds != (unsigned)k;
    RtCalib *c = rt_fit(g, set, use);
    if (!c) {
      free(use);
      return -1;
    }
    RtGpu gc = *g;
    gc.calib = c;
    for (int i = 0; i < set->n; i++) {
      const RtSample *s = &set->s[i];
      if (use[i]) continue;
      RtCost e = rt_op_eval(&gc, (RtOp)s->op, s->dtype, s->a);
      int t = tab_of[s->op][s->dtype];
      for (int w = 0; w < 2; w++) {
        double meas = w ? s->bwd : s->fwd;
        if (!(meas > 0)) continue;
        double ape = fabs((w ? e.bwd : e.fwd) - meas) / meas;
        err_add(&cv->file[s->file], w, ape, sum[s->file]);
        if (t >= 0) err_add(&cv->table[t].err, w, ape, tsum[t]);
        err_add(&cv->all, w, ape, asum);
      }
    }
    rt_calib_free(c);
  }
  for (int f = 0; f < set->nfiles; f++) err_done(&cv->file[f], sum[f]);
  for (int t = 0; t < cv->ntables; t++) err_done(&cv->table[t].err, tsum[t]);
  err_done(&cv->all, asum);
  free(use);
  return 0;
}

int rt_fit_cv(const RtGpu *g, const RtSampleSet *set, int folds, double (*mape)[2]) {
  RtFitCv *cv = malloc(sizeof *cv);
  int rc = cv ? rt_fit_cv_full(g, set, folds, cv) : -1;
  for (int f = 0; rc == 0 && f < set->nfiles; f++)
    for (int w = 0; w < 2; w++) mape[f][w] = cv->file[f].mape[w];
  free(cv);
  return rc;
}

static void table_file_name(const RtTable *t, const char *dir, char *out, size_t len) {
  char keys[RT_KEYS_MAX];
  snprintf(keys, sizeof keys, "%s", t->keys);
  for (char *p = keys; *p; p++)
    if (*p == ' ' || *p == '=') *p = *p == ' ' ? '_' : '-';
  snprintf(out, len, "%s/%s_%s%s%s.tbl", dir, t->kernel, rt_dtype_name(t->dtype), keys[0] ? "_" : "", keys);
}

static int write_one(const RtTable *t, const char *out_dir, const char *header, char *err, size_t errlen) {
  char path[1200];
  table_file_name(t, out_dir, path, sizeof path);
  return rt_table_save(t, path, header, err, errlen);
}

/* The GPU of a samples folder named after its calibration folder (…/gh200-vista). */
static const RtGpu *gpu_of_dir(const char *dir) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", dir);
  for (size_t n = strlen(buf); n > 0 && buf[n - 1] == '/';) buf[--n] = '\0';
  char *base = strrchr(buf, '/');
  if (base && strcmp(base + 1, "operator") == 0) *base = '\0', base = strrchr(buf, '/');
  return rt_gpu_builtin(base ? base + 1 : buf);
}

/* " 12.34%" or "-" for no rows, 10 characters. */
static void pct(FILE *f, double mape) {
  if (mape < 0)
    fprintf(f, " %9s", "-");
  else
    fprintf(f, " %8.2f%%", 100 * mape);
}

static void report_line(FILE *f, const char *name, const RtFitErr *e) {
  fprintf(f, "%-34s %7d", name, e->rows[0]);
  pct(f, e->mape[0]);
  pct(f, e->mape[1]);
  fputc('\n', f);
}

/* The report of `llmp fit --gpu`: the cross-validated error per sample file, per table and
 * over all rows. */
static void print_report(FILE *f, const RtSampleSet *set, const RtFitCv *cv, int folds) {
  fprintf(f, "%d-fold cross-validated error (MAPE) on the rows each fit did not see\n", folds);
  fprintf(f, "%-34s %7s %9s %9s\n", "sample file", "rows", "fwd", "bwd");
  for (int i = 0; i < set->nfiles; i++) report_line(f, set->file[i], &cv->file[i]);
  fprintf(f, "%-34s %7s %9s %9s\n", "table", "rows", "fwd", "bwd");
  for (int t = 0; t < cv->ntables; t++) report_line(f, cv->table[t].name, &cv->table[t].err);
  report_line(f, "all", &cv->all);
}

/* --- samples no run can produce --------------------------------------------------------- */

enum { DROPS_SHOWN = 3 }; /* impossible samples warned of one by one, per file */

/* Sample s against rt_op_min_time(): 0 keep it, 1 its backward time goes (bwd = -1), 2 the
 * row goes.  Warns of it on warn (if not NULL). */
static int judge(const RtGpu *g, const RtSampleSet *set, RtSample *s, FILE *warn) {
  double flops[2];
  RtCost lo = rt_op_min_time(g, (RtOp)s->op, s->dtype, s->a, flops);
  int fwd = s->fwd<lo.fwd, bwd = s->bwd> 0 && s->bwd < lo.bwd;
  if (!fwd && !bwd) return 0;
  int w = fwd ? 0 : 1;
  char t1[32], t2[32], fl[STR_NUM_MAX];
  if (warn)
    fprintf(warn,
            "%s:%d: warning: %s time %s for %s FLOP is faster than %s's peak allows "
            "(>= %s); %s dropped\n",
            set->path[s->file], s->line, w ? "backward" : "forward", rt_time_str(w ? s->bwd : s->fwd, t1, sizeof t1),
            str_number(fl, sizeof fl, flops[w]), g->name ? g->name : "the GPU",
            rt_time_str(w ? lo.bwd : lo.fwd, t2, sizeof t2), fwd ? "sample" : "backward time");
  if (fwd) return 2;
  s->bwd = -1;
  return 1;
}

/* The first step of rt_samples_clean() (llmp_fit.h): the first time, fwd or bwd, more than
 * RT_SAMPLE_MAX_OFF times off g's datasheet model of its shape, either way, is an error on
 * err.  0, or -1. */
static int refuse_absurd(const RtGpu *g, const RtSampleSet *set, FILE *err) {
  for (int i = 0; i < set->n; i++) {
    const RtSample *s = &set->s[i];
    double x[RT_MAX_AXES];
    RtCost c = rt_op_physics(g, (RtOp)s->op, s->dtype, s->a, x);
    for (int w = 0; w < 2; w++) {
      double t = w ? s->bwd : s->fwd, model = w ? c.bwd : c.fwd;
      if (t < 0 || !(model > 0 && model < INFINITY)) continue; /* no bwd, or none in the model (adam) */
      if (t / model <= RT_SAMPLE_MAX_OFF && t / model >= 1 / RT_SAMPLE_MAX_OFF) continue;
      char t1[32], t2[32];
      if (err)
        fprintf(err,
                "%s:%d: %s time %s is more than %s times %s than %s's datasheet model of this shape (%s): "
                "no run is that far off it (a wrong unit? a corrupt row?)\n",
                set->path[s->file], s->line, w ? "backward" : "forward", rt_time_str(t, t1, sizeof t1),
                RT_SAMPLE_MAX_OFF_TEXT, t > model ? "slower" : "faster", g->name ? g->name : "the GPU",
                rt_time_str(model, t2, sizeof t2));
      return -1;
    }
  }
  return 0;
}

/* The second step of rt_samples_clean(): drops the samples no run of g can produce.  0, or
 * -1 when a file has no row left. */
static int drop_impossible(const RtGpu *g, RtSampleSet *set, FILE *warn) {
  int rows[RT_FIT_MAX_FILES] = {0}, left[RT_FIT_MAX_FILES] = {0}, hit[RT_FIT_MAX_FILES] = {0};
  int bwds[RT_FIT_MAX_FILES] = {0}, bad_bwd[RT_FIT_MAX_FILES] = {0};
  int kept = 0, rc = 0;
  const char *gpu = g->name ? g->name : "the GPU";
  for (int i = 0; i < set->n; i++) {
    RtSample s = set->s[i];
    int f = s.file;
    rows[f]++;
    bwds[f] += s.bwd > 0;
    int v = judge(g, set, &s, hit[f] < DROPS_SHOWN ? warn : NULL);
    hit[f] += v != 0;
    bad_bwd[f] += v == 1;
    if (v == 2) continue;
    set->s[kept++] = s, left[f]++;
  }
  set->n = kept;
  for (int f = 0; f < set->nfiles; f++) {
    if (warn && hit[f] > DROPS_SHOWN)
      fprintf(warn,
              "%s:0: warning: %d of %d rows had a time faster than %s's peak allows; "
              "dropped\n",
              set->path[f], hit[f], rows[f], gpu);
    if (rows[f] > 0 && left[f] == 0) {
      rc = -1;
      if (warn)
        fprintf(warn,
                "%s:0: every row is faster than %s's peak allows: nothing to fit (samples "
                "of another GPU?)\n",
                set->path[f], gpu);
    }
    /* A backward column most of whose times no run can produce was not measured as the file
     * says (docs/calibration.md, "Samples no run can produce"): its other times are not
     * trusted either, and the table corrects the backward by the forward's correction. */
    if (bwds[f] > 0 && 2 * bad_bwd[f] > bwds[f]) {
      if (warn)
        fprintf(warn,
                "%s:0: warning: %d of %d backward times are faster than %s's peak allows: "
                "the column is not credible; every backward time of this file dropped (the "
                "forward's correction serves the backward)\n",
                set->path[f], bad_bwd[f], bwds[f], gpu);
      for (int i = 0; i < set->n; i++)
        if (set->s[i].file == f) set->s[i].bwd = -1;
      set->meta[f].bwd_bad = bad_bwd[f], set->meta[f].bwd_rows = bwds[f];
    }
  }
  return rc;
}

/* --- samples that time one of an op's kernels ------------------------------------------ */

double rt_torch_pieces(double bytes, double eb) {
  double pieces = 1;
  while (bytes - eb > 2147483647.0 && pieces < 1 << 20) bytes /= 2, pieces *= 2;
  return pieces;
}

/* The bytes of the tensor PyTorch indexes, for the elementwise ops (0: not one). */
static double torch_tensor_bytes(const RtSample *s) {
  double eb = rt_dtype_bytes(s->dtype);
  switch ((RtOp)s->op) {
  case RT_OP_MASKED_FILL: return s->a[0] * s->a[1] * eb; /* the scores */
  case RT_OP_GELU:
  case RT_OP_ADD: return s->a[0] * eb;
  case RT_OP_SWIGLU: return 2 * s->a[0] * eb; /* the input, gate and up */
  default: return 0;
  }
}

double rt_median(double *v, int n) {
  if (n == 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int rt_samples_whole_ops(const RtGpu *g, RtSampleSet *set, FILE *warn) {
  int scaled = 0;
  double *one = malloc((size_t)(set->n ? set->n : 1) * sizeof *one);
  double *split = malloc((size_t)(set->n ? set->n : 1) * sizeof *split);
  double *raw = malloc((size_t)(set->n ? set->n : 1) * sizeof *raw);
  if (!one || !split || !raw) {
    free(one), free(split), free(raw);
    return 0;
  }
  for (int f = 0; f < set->nfiles; f++)
    for (int pass = 0; pass < 2; pass++) {
      int n1 = 0, n2 = 0, lo = 2, hi = 1;
      for (int i = 0; i < set->n; i++) {
        const RtSample *s = &set->s[i];
        double t = pass ? s->bwd : s->fwd, bytes = torch_tensor_bytes(s), x[RT_MAX_AXES];
        if (s->file != f || !(t > 0) || bytes <= 0) continue;
        RtCost c = rt_op_physics(g, (RtOp)s->op, s->dtype, s->a, x);
        double model = pass ? c.bwd : c.fwd, pieces = rt_torch_pieces(bytes, rt_dtype_bytes(s->dtype));
        if (!(model > 0)) continue;
        if (pieces == 1)
          one[n1++] = t / model;
        else
          split[n2] = t / model * pieces, raw[n2++] = t / model;
        if (pieces > 1 && pieces < lo) lo = (int)pieces;
        if (pieces > hi) hi = (int)pieces;
      }
      if (n1 < 3 || n2 < 3) continue;
      double m1 = rt_median(one, n1), m2 = rt_median(split, n2) / m1, m0 = rt_median(raw, n2) / m1;
      if (!(m2 > 0.8 && m2 < 1.25 && m0 < 0.7)) continue;
      for (int i = 0; i < set->n; i++) {
        RtSample *s = &set->s[i];
        double *t = pass ? &s->bwd : &s->fwd, bytes = torch_tensor_bytes(s);
        if (s->file != f || !(*t > 0) || bytes <= 0) continue;
        double pieces = rt_torch_pieces(bytes, rt_dtype_bytes(s->dtype));
        if (pieces > 1) *t *= pieces, set->meta[f].whole[pass]++, scaled++;
      }
      char k[32];
      snprintf(k, sizeof k, lo == hi ? "%d" : "%d-%d", lo, hi);
      if (warn)
        fprintf(warn,
                "%s:0: warning: %d %s times of ops over 2 GiB are one of the %s kernels "
                "PyTorch splits such an op into (times %s: %.0f %% of the other rows' time per "
                "byte, as measured %.0f %%); taken as the whole op's\n",
                set->path[f], set->meta[f].whole[pass], pass ? "backward" : "forward", k, k, 100 * m2, 100 * m0);
    }
  free(one), free(split), free(raw);
  return scaled;
}

int rt_samples_clean(const RtGpu *g, RtSampleSet *set, FILE *warn) {
  if (refuse_absurd(g, set, warn) != 0) return -1;
  int rc = drop_impossible(g, set, warn);
  if (rc == 0) rt_samples_whole_ops(g, set, warn);
  return rc;
}

/* What the header of each table written says of its origin. */
typedef struct Provenance {
  const RtSampleSet *set;
  const RtFitCv *cv;
  const RtGpu *g; /* the model fitted against */
  const char *date;
  int paper, sustained; /* the paper's samples; g's sustained figures were left out */
} Provenance;

/* Whether some row of file f is one that table t of c corrects. */
static int file_feeds(const RtCalib *c, const RtTable *t, const RtSampleSet *set, int f) {
  for (int j = 0; j < set->n; j++) {
    const RtSample *sj = &set->s[j];
    if (sj->file == f &&
        (t == c->op[sj->op][sj->dtype] || (sj->op == RT_OP_BMM && t == rt_bmm_table(c, sj->dtype, sj->a[2], sj->a[3]))))
      return 1;
  }
  return 0;
}

/* A source file's lines in a header: its path, what the samples say of themselves (hw/probe's
 * header), and what cleaning them did. */
static void source_lines(char *hdr, size_t cap, size_t *len, const Provenance *p, int f) {
  const char *shown = strstr(p->set->path[f], "shared/data/"); /* repository-relative */
  const RtSampleMeta *m = &p->set->meta[f];
  str_appendf(hdr, cap, len, "\n  %s", shown ? shown : p->set->path[f]);
  if (m->gpu[0] || m->date[0])
    str_appendf(hdr, cap, len, " (%s%s%s%s%s)", m->gpu[0] ? "gpu: " : "", m->gpu, m->gpu[0] && m->date[0] ? "; " : "",
                m->date[0] ? "date: " : "", m->date);
  if (m->bwd_rows)
    str_appendf(hdr, cap, len,
                "\n    backward column not used: %d of its %d times are "
                "faster than %s's peak allows; the forward's correction serves the backward",
                m->bwd_bad, m->bwd_rows, p->g->name ? p->g->name : "the GPU");
  for (int pass = 0; pass < 2; pass++)
    if (m->whole[pass])
      str_appendf(hdr, cap, len,
                  "\n    %d %s times of ops over 2 GiB taken as one of the "
                  "2^k kernels PyTorch splits them into, times 2^k",
                  m->whole[pass], pass ? "backward" : "forward");
}

/* The provenance lines of table t of c, into hdr: its source files, licence, derivation and
 * cross-validated error. */
static void table_header(char *hdr, size_t cap, const Provenance *p, const RtCalib *c, const RtTable *t) {
  size_t len = 0;
  int n = 0, n1 = 0;
  double s0 = 0, s1 = 0;
  str_appendf(hdr, cap, &len, "source:");
  for (int f = 0; f < p->set->nfiles; f++) {
    if (!file_feeds(c, t, p->set, f)) continue;
    source_lines(hdr, cap, &len, p, f);
    /* The file's cross-validated MAPE weighted by its rows: the table's over its rows. */
    const RtFitErr *e = &p->cv->file[f];
    n += e->rows[0], s0 += e->mape[0] * e->rows[0];
    if (e->mape[1] >= 0) s1 += e->mape[1] * e->rows[0], n1 += e->rows[0];
  }
  str_appendf(hdr, cap, &len, "\nlicence: %s\n",
              p->paper ? "MIT, copyright 2025 ICICLE: samples of arXiv 2509.22832, "
                         "github.com/DebarghaG/estimate-train-time, src/estimate_train_time/data/regressors/"
                       : "that of the sample files above");
  str_appendf(hdr, cap, &len,
              "derived: llmp fit on %s from %d rows, GPU model %s (datasheet figures%s)\n"
              "cv: 5-fold MAPE fwd %.2f %%",
              p->date, n, p->g->name,
              p->sustained ? "; its sustained figures left out, to scale the tables' rate at prediction" : "",
              100 * s0 / (n ? n : 1));
  if (n1) str_appendf(hdr, cap, &len, ", bwd %.2f %%", 100 * s1 / n1);
}

int rt_fit_gpu_dir(const RtGpu *g, const char *samples_dir, const char *out_dir, FILE *report, FILE *err) {
  if (!err) err = stderr;
  /* The tables hold the rate the samples show, a short benchmark's: they are fitted against
   * the model without the GPU's sustained figures, which scale the corrected times at
   * prediction (docs/calibration.md, "Tables and sustained figures"). */
  int sustained = rt_sustained(g, RT_BF16) < 1 || rt_sustained(g, RT_FP8) < 1;
  RtGpu bench = *g;
  bench.sustained_compute = bench.sustained_fp8 = 0;
  bench.calib = NULL;
  g = &bench;
  RtSampleSet set;
  if (rt_samples_load(samples_dir, &set, err) != 0) return 1;
  if (rt_samples_clean(g, &set, err) != 0) {
    rt_samples_free(&set);
    return 1;
  }
  if (set.n == 0) {
    fprintf(err, "%s:0: no sample files (NAME_DTYPE.csv: docs/calibration.md)\n", samples_dir);
    rt_samples_free(&set);
    return 1;
  }
  RtFitCv *cv = malloc(sizeof *cv);
  RtCalib *c = cv && rt_fit_cv_full(g, &set, 5, cv) == 0 ? rt_fit(g, &set, NULL) : NULL;
  if (!c) {
    fprintf(err, "llmp fit: out of memory\n");
    free(cv);
    rt_samples_free(&set);
    return 1;
  }
  if (report) print_report(report, &set, cv, 5);
  char date[32];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  Provenance prov = {&set, cv, g, date, strstr(samples_dir, "paper-samples") != NULL, sustained};
  int rc = 0;
  for (int i = 0; rc == 0 && i < c->ntables; i++) {
    const RtTable *t = &c->tables[i];
    char hdr[16384], why[1200];
    table_header(hdr, sizeof hdr, &prov, c, t);
    if (write_one(t, out_dir, hdr, why, sizeof why) != 0) {
      fprintf(err, "%s\n", why);
      rc = 1;
    }
  }
  if (rc == 0 && report) fprintf(report, "wrote %d tables to %s\n", c->ntables, out_dir);
  rt_calib_free(c);
  free(cv);
  rt_samples_free(&set);
  return rc;
}

int rt_fit_dir(const char *samples_dir, const char *out_dir, const char *gpu, FILE *report) {
  const RtGpu *g = gpu ? rt_gpu_builtin(gpu) : gpu_of_dir(samples_dir);
  if (!g) {
    fprintf(report ? report : stderr, "llmp fit: unknown GPU `%s` (a100_sxm4_80gb, h100_sxm, gh200)\n",
            gpu ? gpu : samples_dir);
    return 1;
  }
  return rt_fit_gpu_dir(g, samples_dir, out_dir, report, report);
}
