/* lower_fit.c - for a plan that does not fit in memory, the changes of plan that make it fit.
 *
 * Each candidate is the plan with one or two of its fields changed (tp or pp doubled or
 * quadrupled, dp shrunk to keep the GPUs; recompute selective or full; a higher ZeRO stage;
 * micro_batch 1; overlap_ep off, one layer fewer in flight; cuda_graphs off, which frees
 * their static buffers), lowered as a sweep's point is (its fields as constant axes) and evaluated by
 * the interpreter: the same model as `llmp run`, not an estimate.  Those that fit are kept,
 * fastest first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lower.h"
#include "strbuf.h"

enum { F_TP, F_PP, F_RECOMPUTE, F_ZERO, F_MICRO_BATCH, F_OVERLAP_EP, F_GRAPHS, F_N, MAX_OPTS = 3 };

/* The values each field may take instead of the plan's; words stay words for the text. */
typedef struct Option {
  double value;
  const char *word; /* recompute's, else NULL */
} Option;

typedef struct Search {
  Sema *s;
  HwSet *hw;
  Decl *sc;
  const LowerAxes *base; /* the point's own axes (a sweep's), or NULL */
  const Report *r;
  Diag quiet; /* a candidate that does not divide is dropped, not reported */
  Option opt[F_N][MAX_OPTS];
  int nopt[F_N];
  ReportFix *found;
  int nfound, capfound;
  ReportFix graphs_off; /* cuda_graphs off alone, fitting or not; peak NaN: not tried */
} Search;

static void discard(void *user, const char *text, size_t len) { (void)user, (void)text, (void)len; }

static void add_opt(Search *q, int f, double v, const char *word) {
  if (q->nopt[f] < MAX_OPTS) q->opt[f][q->nopt[f]++] = (Option){v, word};
}

static void options_of(Search *q) {
  const Report *r = q->r;
  for (int k = 2; k <= 4; k *= 2) {
    if (r->dp % k == 0) add_opt(q, F_TP, r->tp * k, NULL), add_opt(q, F_PP, r->pp * k, NULL);
  }
  static const char *const rec[] = {"selective", "full"};
  for (int i = 0; i < 2; i++)
    if (r->recompute && strcmp(r->recompute, "full") && strcmp(r->recompute, rec[i])) {
      double code;
      if (lower_axis_code("recompute", rec[i], &code)) add_opt(q, F_RECOMPUTE, code, rec[i]);
    }
  for (int z = r->zero + 1; z <= 3; z++) add_opt(q, F_ZERO, z, NULL);
  if (r->micro_batch > 1) add_opt(q, F_MICRO_BATCH, 1, NULL);
  if (r->overlap_ep) add_opt(q, F_OVERLAP_EP, 0, "false");
  if (r->cuda_graphs) add_opt(q, F_GRAPHS, 0, "false");
}

/* Sets plan.field among the axes ax[0 .. *na), adding it if absent. */
static void axis_set(LowerAxis *ax, int *na, const char *field, double value) {
  int k = 0;
  while (k < *na && !(strcmp(ax[k].root, "plan") == 0 && strcmp(ax[k].field, field) == 0)) k++;
  ax[k] = (LowerAxis){"plan", field, -1, value};
  *na += k == *na;
}

/* With tp or pp changed, the same GPUs: dp gives way. */
static int dp_gives_way(const Search *q, LowerAxis *ax, int na, int tp, int pp, char *change, size_t n, size_t *len) {
  int dp = (int)((long long)q->r->dp * q->r->tp * q->r->pp / ((long long)tp * pp));
  axis_set(ax, &na, "dp", dp);
  str_appendf(change, n, len, " dp=%d", dp);
  return na;
}

/* The candidate's axes: the base point's, with the changed fields replaced or added. */
static int axes_of(const Search *q, const int *pick, LowerAxis *ax, char *change, size_t n) {
  static const char *const field[F_N] = {"tp", "pp", "recompute", "zero", "micro_batch", "overlap_ep", "cuda_graphs"};
  int na = 0;
  for (int i = 0; q->base && i < q->base->n; i++) ax[na++] = q->base->axis[i];
  size_t len = 0;
  change[0] = '\0';
  int tp = q->r->tp, pp = q->r->pp;
  for (int f = 0; f < F_N; f++) {
    if (pick[f] < 0) continue;
    const Option *o = &q->opt[f][pick[f]];
    axis_set(ax, &na, field[f], o->value);
    if (o->word)
      str_appendf(change, n, &len, "%s%s=%s", len ? " " : "", field[f], o->word);
    else
      str_appendf(change, n, &len, "%s%s=%g", len ? " " : "", field[f], o->value);
    if (f == F_TP) tp = (int)o->value;
    if (f == F_PP) pp = (int)o->value;
    if (f == F_PP || (f == F_TP && pick[F_PP] < 0)) na = dp_gives_way(q, ax, na, tp, pp, change, n, &len);
  }
  return na;
}

/* Lowers and evaluates one candidate; keeps it if it fits. */
static void try_candidate(Search *q, const int *pick) {
  LowerAxis ax[64];
  char change[96];
  if (q->base && q->base->n > 64 - F_N - 1) return;
  int na = axes_of(q, pick, ax, change, sizeof change);
  LowerAxes axes = {ax, na, q->base ? q->base->sweep : NULL}; /* a sweep's lets derive as for its point */
  Lowered l;
  if (lower_with_axes(q->s, q->hw, q->sc, &axes, &q->quiet, &l) == 0) {
    bool ok = true;
    for (int c = 0; c < l.nchecks && ok; c++) {
      double v;
      ok = !(g_is_const(&l.g, l.checks[c].ok, &v) && v == 0);
    }
    if (ok) {
      double *vals = xcalloc((size_t)(l.g.nn ? l.g.nn : 1), sizeof *vals);
      graph_eval(&l.g, NULL, vals);
      Report r;
      lower_report(&l, vals, &r);
      bool graphs_alone = pick[F_GRAPHS] >= 0;
      for (int f = 0; f < F_GRAPHS; f++) graphs_alone &= pick[f] < 0;
      if (graphs_alone) {
        snprintf(q->graphs_off.change, sizeof q->graphs_off.change, "%s", change);
        q->graphs_off.iteration = r.fits ? r.iteration : NAN, q->graphs_off.peak = r.peak;
      }
      if (r.fits && isfinite(r.iteration)) {
        XGROW(q->found, q->nfound + 1, q->capfound);
        ReportFix *x = &q->found[q->nfound++];
        snprintf(x->change, sizeof x->change, "%s", change);
        x->iteration = r.iteration, x->peak = r.peak;
      }
      free(vals);
    }
  }
  lower_free(&l);
}

static int by_time(const void *a, const void *b) {
  const ReportFix *x = a, *y = b;
  if (x->iteration != y->iteration) return x->iteration > y->iteration ? 1 : -1;
  size_t m = strlen(x->change), n = strlen(y->change); /* the fewer changes first */
  return m != n ? (m > n) - (m < n) : strcmp(x->change, y->change);
}

void lower_fit_changes(Sema *s, HwSet *hw, Decl *scenario, const LowerAxes *axes, Report *r) {
  r->nfix = 0;
  r->graphs_saves = 0;
  if (r->fits) return;
  Search q = {.s = s, .hw = hw, .sc = scenario, .base = axes, .r = r};
  q.graphs_off.peak = NAN;
  diag_init(&q.quiet, NULL);
  diag_set_writer(&q.quiet, discard, NULL);
  options_of(&q);
  int pick[F_N];
  /* one field changed, then two */
  for (int f = 0; f < F_N; f++)
    for (int i = 0; i < q.nopt[f]; i++) {
      for (int k = 0; k < F_N; k++) pick[k] = -1;
      pick[f] = i;
      try_candidate(&q, pick);
      for (int g = f + 1; g < F_N; g++)
        for (int j = 0; j < q.nopt[g]; j++) {
          if (f == F_TP && g == F_PP && r->dp % (int)(q.opt[f][i].value * q.opt[g][j].value / (r->tp * r->pp)))
            continue;
          pick[g] = j;
          try_candidate(&q, pick);
          pick[g] = -1;
        }
    }
  if (q.nfound) qsort(q.found, (size_t)q.nfound, sizeof *q.found, by_time);
  for (int i = 0; i < q.nfound && i < REPORT_FIXES; i++) r->fix[r->nfix++] = q.found[i];
  if (q.graphs_off.peak < r->peak) r->graphs_off = q.graphs_off, r->graphs_saves = r->peak - q.graphs_off.peak;
  free(q.found);
  diag_free(&q.quiet);
}
