/* fit.c - `llmp fit`: calibration tables from measured samples.
 *
 * For every (kernel, dtype) with samples: evaluate the physics model at each sample, take
 * r = log(measured / model), and fit a grid of log corrections over the kernel's axes so
 * that the runtime's own log-log multilinear interpolation reproduces r.
 *  - Grid: per axis, the distinct sampled values when there are few (sweeps usually sample a
 *    handful of sizes: then every sample sits on a node), else that many quantiles of them.
 *  - Values: least squares on the interpolation's own hat basis, solved by damped
 *    backfitting (scatter each sample's residual to its cell's corners with the hat weights,
 *    normalise per node, repeat).  Nodes no sample touches are filled from their neighbours
 *    along the axes, so a sparse corner of the grid continues its surroundings.  A table with
 *    few samples per node (a small sample set) is smoothed: a penalty pulls each node toward
 *    its neighbours' mean, so nodes with one or two noisy samples do not overfit them.
 * Quality is reported as k-fold cross-validated MAPE per sample file, per table and over all
 * rows (rt_fit_cv_full); rt_fit_gpu_dir() is `llmp fit --gpu`: read, report, fit, write. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib.h"
#include "llmp_fit.h"
#include "ops.h"

static const int grid_max[RT_MAX_AXES + 1] = {0, 32, 24, 16, 12};

/* A table with fewer than sparse_density samples per grid node is sparse: its nodes are pulled
 * toward the mean of their axis neighbours with the weight sparse_smoothing (in units of a
 * sample's hat weight) while it is fitted.  Every table fitted from all of the paper's samples,
 * or from the 4/5 of them a cross-validation fold sees, has at least 0.39 samples per node
 * (bmm), so the shipped tables are fitted as before (docs/calibration.md, "How a table is
 * fitted"). */
static const double sparse_density = 0.35, sparse_smoothing = 0.2;

/* Adam's tables are fitted robustly: a sample's log residual counts at most adam_clip (a
 * factor of 1.5).  An optimizer step is a host-driven loop over the parameter tensors, and a
 * stalled host makes some steps take orders of magnitude longer (39 of the 478 GH200
 * first-stage rows take seconds instead of milliseconds); a least-squares fit would move every
 * node those rows touch by their log-distance.  The other tables are fitted as before. */
static const double adam_clip = 0.4054651081081644;   /* log(1.5) */

/* Adam's grid is coarse: at most 6 points on `params`, 4 on `tensors`.  A stage's tensor count
 * is 12 per layer plus the first and last stage's 1 or 3: the stages of one layer count sit
 * 2 % to 6 % apart, and nodes at each of them would fit each stage's rows alone (the first
 * stage's stalled steps included); a fine params grid likewise leaves nodes that a few
 * stalled steps decide (with 10 % of the GH200 samples, 12 or more points put some
 * predictions off by 10x-100x).  The correction varies slowly along both axes: on the
 * paper's samples, 6 x 4 nodes give the stage files' 5-fold error within 1 point of the best
 * grid tried (2 to 24 points per axis) on both GPUs. */
static const int adam_points[2] = {6, 4};

/* How op's table is fitted: the residual clip (0: least squares) and the most grid points on
 * axis a.  Adam is the one op fitted otherwise (above). */
static double fit_clip(RtOp op) { return op == RT_OP_ADAM ? adam_clip : 0; }
static int fit_points(RtOp op, int a, int naxes) { return op == RT_OP_ADAM ? adam_points[a] : grid_max[naxes]; }

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Grid points of one axis from the sampled values v[0..n). */
static int choose_points(double *v, int n, int gmax, double *pts) {
  qsort(v, (size_t)n, sizeof *v, cmp_dbl);
  int nd = 0;
  for (int i = 0; i < n; i++)
    if (nd == 0 || v[i] > v[nd - 1] * (1 + 1e-9)) v[nd++] = v[i];
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

/* The cell corners of x and their hat weights (as rt_table_eval), clamped at the edges. */
static int corners(const RtTable *t, const double *x, int *idx, double *w) {
  int lo[RT_MAX_AXES];
  double fr[RT_MAX_AXES];
  for (int a = 0; a < t->naxes; a++) {
    const double *p = t->logx[a];
    int n = t->npts[a];
    double lx = log(x[a]);
    if (n == 1 || lx <= p[0]) lo[a] = 0, fr[a] = 0;
    else if (lx >= p[n - 1]) lo[a] = n - 2, fr[a] = 1;
    else {
      int i = 0;
      while (p[i + 1] < lx) i++;
      lo[a] = i, fr[a] = (lx - p[i]) / (p[i + 1] - p[i]);
    }
  }
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
  double x[RT_MAX_AXES], r[2];   /* r[1] NAN: no backward measurement */
} Pt;

/* The log corrections of one direction (0 fwd, 1 bwd); lam > 0: smoothed (sparse tables);
 * clip > 0: robust, each sample's residual counts at most clip (a Huber loss). */
static void fit_values(RtTable *t, int which, const Pt *p, int n, double lam, double clip) {
  double *v = t->logc[which];
  double *old = malloc((size_t)t->nvals * sizeof *old);
  double *num = calloc((size_t)t->nvals, sizeof *num), *den = calloc((size_t)t->nvals, sizeof *den);
  unsigned char *known = calloc((size_t)t->nvals, 1);
  if (!num || !den || !known || !old) goto out;
  int idx[1 << RT_MAX_AXES];
  double w[1 << RT_MAX_AXES];
  for (int iter = 0; iter < 40; iter++) {
    memset(num, 0, (size_t)t->nvals * sizeof *num);
    memset(den, 0, (size_t)t->nvals * sizeof *den);
    for (int i = 0; i < n; i++) {
      if (!isfinite(p[i].r[which])) continue;
      int k = corners(t, p[i].x, idx, w);
      double pred = 0;
      for (int j = 0; j < k; j++) pred += w[j] * v[idx[j]];
      double d = p[i].r[which] - pred;
      if (clip > 0) d = fmax(-clip, fmin(clip, d));
      for (int j = 0; j < k; j++) num[idx[j]] += w[j] * d, den[idx[j]] += w[j];
    }
    if (lam > 0 && iter > 0) {
      /* Sparse: minimise the squared residuals + lam * (node - mean of its axis neighbours)^2,
       * by the same damped per-node steps; nodes without data follow their neighbours. */
      memcpy(old, v, (size_t)t->nvals * sizeof *v);
      for (int j = 0; j < t->nvals; j++) {
        double sum = 0;
        int cnt = 0, stride = 1;
        for (int a = t->naxes - 1; a >= 0; stride *= t->npts[a], a--) {
          int pos = (j / stride) % t->npts[a];
          if (pos > 0) sum += old[j - stride], cnt++;
          if (pos + 1 < t->npts[a]) sum += old[j + stride], cnt++;
        }
        double pen = cnt ? lam * (old[j] - sum / cnt) : 0;
        v[j] += 0.6 * (num[j] - pen) / (den[j] + (cnt ? lam : 0) + 1e-12);
      }
      continue;
    }
    for (int j = 0; j < t->nvals; j++)
      if (den[j] > 1e-9) v[j] += (iter == 0 ? 1.0 : 0.6) * num[j] / den[j], known[j] = 1;
    if (iter == 0) fill_empty(t, v, known);
  }
out:
  free(num), free(den), free(known), free(old);
}

/* One table for op/dt from the used samples; 0 if there is none, -1 on failure. */
static int fit_table(const RtGpu *g, const RtSampleSet *set, const unsigned char *use, RtOp op,
                     RtDtype dt, RtTable *t) {
  int naxes = rt_op_info[op].naxes, n = 0, with_bwd = 0;
  Pt *p = malloc((size_t)(set->n + 1) * sizeof *p);
  double *vals = malloc((size_t)(set->n + 1) * sizeof *vals);
  int rc = -1;
  if (!p || !vals) goto out;
  for (int i = 0; i < set->n; i++) {
    const RtSample *s = &set->s[i];
    if ((use && !use[i]) || s->op != (int)op || s->dtype != dt) continue;
    RtCost c = rt_op_physics(g, op, dt, s->a, p[n].x);
    p[n].r[0] = log(s->fwd / c.fwd);
    p[n].r[1] = s->bwd > 0 && c.bwd > 0 ? log(s->bwd / c.bwd) : NAN;
    with_bwd |= isfinite(p[n].r[1]);
    n++;
  }
  rc = 0;
  if (n == 0) goto out;
  double pts[RT_MAX_AXES][RT_MAX_POINTS];
  const double *pp[RT_MAX_AXES];
  int npts[RT_MAX_AXES];
  for (int a = 0; a < naxes; a++) {
    for (int i = 0; i < n; i++) vals[i] = p[i].x[a];
    npts[a] = choose_points(vals, n, fit_points(op, a, naxes), pts[a]);
    pp[a] = pts[a];
  }
  rc = -1;
  if (rt_table_init(t, rt_op_info[op].kernel, dt, rt_op_info[op].keys, naxes, rt_op_info[op].axis,
                    npts, pp, with_bwd) != 0)
    goto out;
  double lam = n < sparse_density * t->nvals ? sparse_smoothing : 0;
  double clip = fit_clip(op);
  fit_values(t, 0, p, n, lam, clip);
  if (with_bwd) fit_values(t, 1, p, n, lam, clip);
  rc = 1;
out:
  free(p), free(vals);
  return rc;
}

RtCalib *rt_fit(const RtGpu *g, const RtSampleSet *set, const unsigned char *use) {
  RtCalib *c = calloc(1, sizeof *c);
  if (!c || !(c->tables = calloc(RT_NOPS * RT_NDTYPES, sizeof *c->tables))) {
    free(c);
    return NULL;
  }
  for (int op = 0; op < RT_NOPS; op++)
    for (int dt = 0; dt < RT_NDTYPES; dt++) {
      int rc = fit_table(g, set, use, (RtOp)op, (RtDtype)dt, &c->tables[c->ntables]);
      if (rc < 0) {
        rt_calib_free(c);
        return NULL;
      }
      if (rc == 1) c->op[op][dt] = &c->tables[c->ntables++];
    }
  return c;
}

void rt_fit_mape(const RtGpu *g, const RtSampleSet *set, const unsigned char *use,
                 double (*mape)[2], int *rows) {
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

static void err_add(RtFitErr *e, int which, double ape, double *sum) {
  sum[which] += ape, e->rows[which]++;
}

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
      int t = tab_of[op][dt] = cv->ntables++;   /* a table has files: at most RT_FIT_MAX_FILES */
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
  snprintf(out, len, "%s/%s_%s%s%s.tbl", dir, t->kernel, rt_dtype_name(t->dtype),
           keys[0] ? "_" : "", keys);
}

static int write_one(const RtTable *t, const char *out_dir, const char *header) {
  char path[1200];
  table_file_name(t, out_dir, path, sizeof path);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int rc = rt_table_write(f, t, header);
  return fclose(f) != 0 || rc != 0 ? -1 : 0;
}

int rt_calib_write_dir(const RtCalib *c, const char *out_dir, const char *provenance) {
  for (int i = 0; i < c->ntables; i++)
    if (write_one(&c->tables[i], out_dir, provenance) != 0) return -1;
  return 0;
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

/* snprintf at buf + *len, *len advanced and kept within cap (a long header is cut). */
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (n > 0) *len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

/* " 12.34%" or "-" for no rows, 10 characters. */
static void pct(FILE *f, double mape) {
  if (mape < 0) fprintf(f, " %9s", "-");
  else fprintf(f, " %8.2f%%", 100 * mape);
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

enum { DROPS_SHOWN = 3 };   /* impossible samples warned of one by one, per file */

/* Sample s against rt_op_min_time(): 0 keep it, 1 its backward time goes (bwd = -1), 2 the
 * row goes.  Warns of it on warn (if not NULL). */
static int judge(const RtGpu *g, const RtSampleSet *set, RtSample *s, FILE *warn) {
  double flops[2];
  RtCost lo = rt_op_min_time(g, (RtOp)s->op, s->dtype, s->a, flops);
  int fwd = s->fwd < lo.fwd, bwd = s->bwd > 0 && s->bwd < lo.bwd;
  if (!fwd && !bwd) return 0;
  int w = fwd ? 0 : 1;
  char t1[32], t2[32];
  if (warn)
    fprintf(warn, "%s:%d: warning: %s time %s for %.2g FLOP is faster than %s's peak allows "
            "(>= %s); %s dropped\n", set->path[s->file], s->line, w ? "backward" : "forward",
            rt_time_str(w ? s->bwd : s->fwd, t1, sizeof t1), flops[w], g->name ? g->name : "the GPU",
            rt_time_str(w ? lo.bwd : lo.fwd, t2, sizeof t2), fwd ? "sample" : "backward time");
  if (fwd) return 2;
  s->bwd = -1;
  return 1;
}

int rt_samples_drop_impossible(const RtGpu *g, RtSampleSet *set, FILE *warn) {
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
      fprintf(warn, "%s:0: warning: %d of %d rows had a time faster than %s's peak allows; "
              "dropped\n", set->path[f], hit[f], rows[f], gpu);
    if (rows[f] > 0 && left[f] == 0) {
      rc = -1;
      if (warn)
        fprintf(warn, "%s:0: every row is faster than %s's peak allows: nothing to fit (samples "
                "of another GPU?)\n", set->path[f], gpu);
    }
    /* A backward column most of whose times no run can produce was not measured as the file
     * says (docs/calibration.md, "Samples no run can produce"): its other times are not
     * trusted either, and the table corrects the backward by the forward's correction. */
    if (bwds[f] > 0 && 2 * bad_bwd[f] > bwds[f]) {
      if (warn)
        fprintf(warn, "%s:0: warning: %d of %d backward times are faster than %s's peak allows: "
                "the column is not credible; every backward time of this file dropped (the "
                "forward's correction serves the backward)\n", set->path[f], bad_bwd[f],
                bwds[f], gpu);
      for (int i = 0; i < set->n; i++)
        if (set->s[i].file == f) set->s[i].bwd = -1;
      set->meta[f].bwd_bad = bad_bwd[f], set->meta[f].bwd_rows = bwds[f];
    }
  }
  return rc;
}

int rt_fit_gpu_dir(const RtGpu *g, const char *samples_dir, const char *out_dir, FILE *report,
                   FILE *err) {
  if (!err) err = stderr;
  RtSampleSet set;
  if (rt_samples_load(samples_dir, &set, err) != 0) return 1;
  if (rt_samples_drop_impossible(g, &set, err) != 0) {
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
  int paper = strstr(samples_dir, "paper-samples") != NULL;
  char date[32];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  int rc = 0;
  for (int i = 0; rc == 0 && i < c->ntables; i++) {
    const RtTable *t = &c->tables[i];
    char hdr[16384];
    size_t len = 0;
    int n = 0, n1 = 0;
    double s0 = 0, s1 = 0;
    append(hdr, sizeof hdr, &len, "source:");
    for (int f = 0; f < set.nfiles; f++) {
      int mine = 0;
      for (int j = 0; j < set.n && !mine; j++)
        mine = set.s[j].file == f && &c->tables[i] == c->op[set.s[j].op][set.s[j].dtype];
      if (!mine) continue;
      const char *shown = strstr(set.path[f], "shared/data/");   /* repository-relative */
      const RtSampleMeta *m = &set.meta[f];
      append(hdr, sizeof hdr, &len, "\n  %s", shown ? shown : set.path[f]);
      if (m->gpu[0] || m->date[0])   /* what the samples say of themselves (hw/probe's header) */
        append(hdr, sizeof hdr, &len, " (%s%s%s%s%s)", m->gpu[0] ? "gpu: " : "", m->gpu,
               m->gpu[0] && m->date[0] ? "; " : "", m->date[0] ? "date: " : "", m->date);
      if (m->bwd_rows)
        append(hdr, sizeof hdr, &len, "\n    backward column not used: %d of its %d times are "
               "faster than %s's peak allows; the forward's correction serves the backward",
               m->bwd_bad, m->bwd_rows, g->name);
      /* The file's cross-validated MAPE weighted by its rows: the table's over its rows. */
      const RtFitErr *e = &cv->file[f];
      n += e->rows[0], s0 += e->mape[0] * e->rows[0];
      if (e->mape[1] >= 0) s1 += e->mape[1] * e->rows[0], n1 += e->rows[0];
    }
    append(hdr, sizeof hdr, &len, "\nlicence: %s\n",
           paper ? "MIT, copyright 2025 ICICLE: samples of arXiv 2509.22832, "
                   "github.com/DebarghaG/estimate-train-time, src/estimate_train_time/data/regressors/"
                 : "that of the sample files above");
    append(hdr, sizeof hdr, &len,
           "derived: llmp fit on %s from %d rows, GPU model %s (datasheet figures)\n"
           "cv: 5-fold MAPE fwd %.2f %%", date, n, g->name, 100 * s0 / (n ? n : 1));
    if (n1) append(hdr, sizeof hdr, &len, ", bwd %.2f %%", 100 * s1 / n1);
    if (write_one(t, out_dir, hdr) != 0) {
      fprintf(err, "%s: cannot write table %s\n", out_dir, t->name);
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
