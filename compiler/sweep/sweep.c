/* sweep.c - `llmp sweep` (see sweep.h): axes, staging, the threaded loop nest, the kept
 * points' reports. */
#include "sweep.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "hash.h"
#include "strbuf.h"
#include "jit/jit.h"
#include "lower/lower.h"
#include "report/report.h"
#include "front/units.h"
#include "sweep_io_internal.h"
#include "sweep_part.h"

enum { MAX_AXES = 64 };

typedef struct Axis {
  const char *root, *field;
  int n;
  double *vals;       /* the values, coded (lower_axis_code) */
  const char **words; /* their words for enumerations and flags, else NULL */
  bool flags;         /* every value is true or false */
} Axis;

/* An axis without effect at a point (equiv_setup): where `cond` holds (always: cond < 0), a
 * value other than the one of digit `canon` gives the plan of canon; dropped as `reason`. */
typedef struct Equiv {
  int axis, pos;            /* the axis, and its loop position */
  int canon;                /* its canonical value's index */
  int distinct;             /* a value that stays apart, or -1 */
  const char *size, *size2; /* the outputs that are 1 where the axis has no effect: "plan.tp" */
  GId cond;
  int reason;
} Equiv;

struct Sweep {
  Sema *s;
  HwSet *hw;
  Diag *d;
  Decl *decl;
  Decl *scenario; /* what is lowered: decl, or a structural point's (sweep_set.c) */
  SweepSet *set;  /* with structural axes: the graphs it runs, and this is their union */
  Arena arena;
  Axis *ax;
  int nax, nlower; /* axes, and those lowering takes (nax is 1 more where the sweep has none) */
  LowerAxis *la;
  Lowered l;
  /* the loop nest: position k loops over axis order[k]; point = sum digit[k] * stride[k] */
  int order[MAX_AXES];
  uint64_t radix[MAX_AXES], stride[MAX_AXES];
  uint64_t points;
  GLevel *lv; /* one per loop position, then its lazy part (lv[nax + k]: what
                                   only the objective needs, evaluated for points that pass) */
  GId *lists;
  int **reason_of; /* per level, per check: the reason index */
  /* reasons: the checks' (deduplicated), then one per require */
  const char **reasons;
  int nreasons, ncheck_reasons;
  GId *req;
  int nreq;
  GId obj;
  int fit_reason; /* the reason of a plan that does not fit (its require is req[nreq - 1]); -1 */
  Equiv *eq;      /* axes without effect at some points */
  int neq;
  /* pruning (see prune_setup): the objective with each pipeline simulation replaced by its
   * lower bound, and the signs it needs (conds[i] >= 0, or > 0 where strict[i]); -1: none */
  GId obj_bound;
  GId *conds;
  bool *strict;
  int nconds;
  const char *objective;
  int keep;
  char hash[17]; /* what it evaluates (sweep_hash), in hexadecimal */
  Jit *jit;
  bool shared_jit; /* another structure's graph, equal to this one's: its Jit */
  JitLevelFn *fns;
  /* the result of sweep_run */
  SweepRow *rows;
  int nrows;
  SweepDrop *drops;
  uint64_t pruned;        /* points whose objective's bound skipped the rest */
  double est_s, est_rate; /* the run's estimated time and measured rate (sweep_estimate) */
  uint64_t est_span;       /* the points that estimate is of: this graph's and the structures' after it */
  /* the sample of the points evaluated (sweep_keep_sample): class r < nreasons the points
   * dropped for reason r, class nreasons those ranked */
  int sample_k;      /* points kept per class; 0: no sample */
  int threads;       /* the last run's: what evaluates the sample's figures */
  uint64_t base;     /* this graph's first point in the whole sweep's numbering (sweep_set.c) */
  int nn0;           /* the nodes before staging: what a sampled point's figures evaluate */
  GId *narrowed;     /* the pipeline calls stage_live narrowed to their makespan */
  int nnarrowed;
  int fit_require;   /* the reason of a require on memory.peak that stands for fit_setup's, or -1 */
  SweepTop **sample; /* the last run's, per class */
  SweepDot *dots;    /* sweep_sample's */
  SweepSample smp;
};

static void sample_free(Sweep *sw);
static void point_values(const Sweep *sw, uint64_t point, int *index);

double sweep_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

const char *sweep_src_text(Sema *s, Decl *decl, Arena *a, AstNode *n) {
  SrcFile *f;
  Span at;
  sema_decl_at(s, decl, &f, &at);
  if (!f || n->span.end > f->len || n->span.start >= n->span.end) return "?";
  return arena_strndup(a, f->text + n->span.start, n->span.end - n->span.start);
}

static const char *text_of(Sweep *sw, AstNode *n) { return sweep_src_text(sw->s, sw->decl, &sw->arena, n); }

/* The source text of a statement's expression (a require's, the objective's), as written: the
 * expression's span leaves out its outer parentheses, the statement's keeps them. */
static const char *stmt_text(Sweep *sw, AstNode *c) {
  SrcFile *f;
  Span at;
  sema_decl_at(sw->s, sw->decl, &f, &at);
  AstNode *x = c->u.bin.rhs;
  if (!f || c->span.end > f->len || x->span.start < c->span.start || x->span.start >= c->span.end)
    return text_of(sw, x);
  unsigned b = x->span.start;
  while (b > c->span.start && strchr("( \t", f->text[b - 1])) b--;
  while (f->text[b] == ' ' || f->text[b] == '\t') b++;
  return arena_strndup(&sw->arena, f->text + b, c->span.end - b);
}

/* --- axes ---------------------------------------------------------------------------------- */

static bool read_axes(Sweep *sw) {
  SrcFile *f;
  Span at;
  sema_decl_at(sw->s, sw->decl, &f, &at);
  for (AstNode *c = sema_block_body(sw->decl).first; c; c = c->next)
    if (c->kind == AST_VARY && !sweep_vary_structural(sw->s, sw->decl, c)) sw->nax++;
  if (sw->nax > MAX_AXES) {
    diag_error(sw->d, f, at, "sweep `%s` has %d axes; llmp sweeps at most %d", sema_decl_name(sw->decl), sw->nax,
               MAX_AXES);
    return false;
  }
  sw->nlower = sw->nax;
  sw->ax = arena_alloc(&sw->arena, (size_t)(sw->nax + 1) * sizeof *sw->ax);
  sw->la = arena_alloc(&sw->arena, (size_t)(sw->nax + 1) * sizeof *sw->la);
  int i = 0;
  sw->points = 1;
  for (AstNode *c = sema_block_body(sw->decl).first; c; c = c->next) {
    if (c->kind != AST_VARY || sweep_vary_structural(sw->s, sw->decl, c)) continue;
    AstNode *p = c->u.bin.lhs, *list = c->u.bin.rhs;
    Axis *a = &sw->ax[i];
    a->root = p->u.bin.lhs->name;
    a->field = p->name;
    a->n = list->u.list.count;
    a->vals = arena_alloc(&sw->arena, (size_t)a->n * sizeof *a->vals);
    int k = 0;
    for (AstNode *x = list->u.list.first; x; x = x->next, k++) {
      if (x->kind == AST_NUM) {
        a->vals[k] = unit_value(x->u.num.value, x->u.num.unit, NULL);
        a->flags = false;
        continue;
      }
      if (!a->words) a->words = arena_alloc(&sw->arena, (size_t)a->n * sizeof *a->words);
      if (x->kind == AST_BOOL) {
        a->flags = k == 0 || a->flags;
        a->vals[k] = x->u.boolean;
        a->words[k] = x->u.boolean ? "true" : "false";
      } else if (x->kind == AST_NAME && lower_axis_code(a->field, x->name, &a->vals[k])) {
        a->words[k] = x->name;
        a->flags = false;
      } else {
        diag_error(sw->d, f, x->span,
                   "`%s.%s` cannot be varied over `%s`: a sweep varies numbers, true/false, "
                   "and the words of schedule, recompute and layer_partition",
                   a->root, a->field, text_of(sw, x));
        return false;
      }
    }
    if (a->words) /* a list mixing numbers and words */
      for (k = 0; k < a->n; k++)
        if (!a->words[k]) a->words[k] = arena_printf(&sw->arena, "%g", a->vals[k]);
    if ((double)sw->points * a->n > 9.0e18) {
      diag_error(sw->d, f, c->span, "sweep `%s` has more than 9e18 points", sema_decl_name(sw->decl));
      return false;
    }
    sw->points *= (uint64_t)a->n;
    sw->la[i] = (LowerAxis){a->root, a->field, i, 0};
    i++;
  }
  if (!sw->nax) { /* a structure of a sweep that varies only what changes the graph: one loop of one point */
    static const double zero = 0;
    sw->ax[0] = (Axis){"", "", 1, (double *)&zero, NULL, false};
    sw->nax = 1;
  }
  return true;
}

/* --- staging --------------------------------------------------------------------------------- */

/* Marks with `mark` the unmarked operands of the nodes marked `mark`, transitively. */
static void mark_operands(const Graph *g, unsigned char *live, unsigned char mark) {
  GId ops[RT_KERNEL_MAXARGS];
  for (int i = g->nn - 1; i >= 0; i--) {
    if (live[i] != mark) continue;
    int n = graph_operands(g, i, ops);
    for (int j = 0; j < n; j++)
      if (!live[ops[j]]) live[ops[j]] = mark;
  }
}

/* --- pruning ------------------------------------------------------------------------------- */

/* How a node moves with the pipeline simulations' makespans: bits P_UP (never down when they
 * grow), P_DOWN; both: unknown. */
enum { P_NONE = 0, P_UP = 1, P_DOWN = 2, P_ANY = 3 };
static int p_neg(int s) { return (s & P_UP ? P_DOWN : 0) | (s & P_DOWN ? P_UP : 0); }

/* What prune_setup finds out: per node, whether it depends on an objective-only simulation
 * (dep) and how it moves with the makespans (sign); the conditions its signs rely on
 * (conds[i] >= 0, or > 0 where strict[i]; -1 - y: the bound of node y, mapped later). */
typedef struct Prune {
  unsigned char *sign, *dep;
  GId *conds;
  bool *strict;
  int nconds, npipe;
} Prune;

/* The sign of x * y (or x / y) where y does not depend on the makespans: y's sign where it is
 * a constant, else that of x with the condition y >= 0 (y > 0: strict). */
static int p_scaled(Sweep *sw, Prune *p, int sx, GId y, bool strict) {
  double k;
  if (g_is_const(&sw->l.g, y, &k)) return k > 0 || (k == 0 && !strict) ? sx : k < 0 ? p_neg(sx) : P_ANY;
  p->conds[p->nconds] = y, p->strict[p->nconds++] = strict;
  return sx;
}

/* The sign of lazy node i (live 2) from its operands'. */
static int p_sign(Sweep *sw, Prune *p, const GNode *n, int no) {
  const unsigned char *dep = p->dep;
  int sa = p->sign[n->a], sb = no > 1 ? p->sign[n->b] : P_NONE;
  switch (n->op) {
  case GN_ADD:
  case GN_MIN:
  case GN_MAX: return sa | sb;
  case GN_SUB: return sa | p_neg(sb);
  case GN_NEG: return p_neg(sa);
  case GN_CEIL:
  case GN_FLOOR: return sa;
  case GN_SELECT: return dep[n->a] ? P_ANY : sb | p->sign[n->c];
  case GN_MUL:
    if (dep[n->a] && dep[n->b]) return P_ANY;
    if (dep[n->a]) return p_scaled(sw, p, sa, n->b, false);
    return p_scaled(sw, p, sb, n->a, false);
  case GN_DIV:
    if (dep[n->a] && dep[n->b]) return P_ANY;
    if (dep[n->a]) return p_scaled(sw, p, sa, n->b, true);
    if (sb == P_UP) { /* x / y, y only grows: y's bound > 0 and x >= 0 (below) */
      int s = p_scaled(sw, p, P_DOWN, n->a, false);
      p->conds[p->nconds] = -1 - n->b, p->strict[p->nconds++] = true; /* the bound of y */
      return s;
    }
    return P_ANY;
  default: return P_ANY; /* a call, a result of one, a comparison, ... */
  }
}

/* Signs of the lazy part's nodes, in topological order. */
static void prune_signs(Sweep *sw, const unsigned char *live, Prune *p) {
  const Graph *g = &sw->l.g;
  GId ops[RT_KERNEL_MAXARGS];
  for (int i = 0; i < g->nn; i++) {
    if (live[i] != 2) continue;
    const GNode *n = &g->n[i];
    if (n->op == GN_CALL && n->kernel == RTK_PIPELINE_MAKESPAN) {
      p->dep[i] = 1, p->sign[i] = P_UP, p->npipe++;
      continue;
    }
    int no = graph_operands(g, i, ops);
    for (int j = 0; j < no; j++) p->dep[i] |= p->dep[ops[j]];
    if (p->dep[i]) p->sign[i] = (unsigned char)p_sign(sw, p, n, no);
  }
}

/* The bound part: each of the first nn nodes that is lazy and depends on a simulation,
 * cloned with the simulations replaced by their lower bounds; returns map, node -> clone. */
static GId *prune_clone(Sweep *sw, const unsigned char *live, const Prune *p, int nn) {
  Graph *g = &sw->l.g;
  const unsigned char *dep = p->dep;
  GId *map = xcalloc((size_t)nn, sizeof *map);
  for (int i = 0; i < nn; i++) {
    if (live[i] != 2 || !dep[i]) continue;
    const GNode n = g->n[i]; /* a copy: the graph grows */
    GId m = -1;
#define M(x) (dep[x] ? map[x] : (x))
    if (n.op == GN_CALL) {
      GId args[RT_KERNEL_MAXARGS];
      memcpy(args, &g->args[n.arg0], (size_t)n.nargs * sizeof *args);
      m = g_call(g, RTK_PIPELINE_BOUND, args, n.nargs, "pipeline bound");
    } else if (n.op == GN_SELECT) {
      m = g_select(g, n.a, M(n.b), M(n.c));
    } else if (n.op == GN_NEG || n.op == GN_CEIL || n.op == GN_FLOOR) {
      m = g_un(g, (GOp)n.op, M(n.a));
    } else {
      m = g_bin(g, (GOp)n.op, M(n.a), M(n.b));
    }
#undef M
    map[i] = m;
  }
  return map;
}

/* Marks the clones (live 3) and the lazy nodes they bound (live 4), and keeps the bound and
 * its conditions in sw, as graph outputs too, so that the JIT stores what run_range reads.
 * Returns live, grown with the graph. */
static unsigned char *prune_install(Sweep *sw, unsigned char *live, Prune *p, const GId *map, int nn) {
  Graph *g = &sw->l.g;
  int nc = p->nconds;
  live = xrealloc(live, (size_t)g->nn);
  memset(live + nn, 0, (size_t)(g->nn - nn));
  for (int i = 0; i < nn; i++)
    if (live[i] == 2 && p->dep[i]) live[i] = 4, live[map[i]] = 3;
  for (int c = 0; c < nc; c++)
    if (p->conds[c] < 0) p->conds[c] = map[-1 - p->conds[c]];
  sw->obj_bound = map[sw->obj];
  sw->conds = arena_alloc(&sw->arena, (size_t)(nc + 1) * sizeof *sw->conds);
  sw->strict = arena_alloc(&sw->arena, (size_t)(nc + 1) * sizeof *sw->strict);
  memcpy(sw->conds, p->conds, (size_t)nc * sizeof *p->conds);
  memcpy(sw->strict, p->strict, (size_t)nc * sizeof *p->strict);
  sw->nconds = nc;
  graph_output(g, "objective.bound", sw->obj_bound);
  for (int c = 0; c < nc; c++) graph_output(g, arena_printf(&sw->arena, "objective.bound.sign.%d", c), sw->conds[c]);
  return live;
}

/* A sweep with `keep N` and an objective that only grows (minimize) or only shrinks
 * (maximize) with the makespans of its objective-only pipeline simulations can skip a
 * simulation: the objective over each makespan's lower bound (pipeline_bound) bounds it, and
 * a point whose bound is worse than the N-th best kept so far cannot be kept.  This clones
 * what the objective computes from the simulations, with the bounds in their place: live 3,
 * the bound part of each level, evaluated before the rest (live 4) of what the simulations
 * feed.  The signs come from the operations (sums, max, min, ceilings; products and quotients
 * by a factor that does not depend on the makespans, checked >= 0 or > 0 for each point).
 * Returns live, grown with the graph. */
static unsigned char *prune_setup(Sweep *sw, unsigned char *live) {
  int nn = sw->l.g.nn;
  sw->obj_bound = -1;
  Prune p = {xcalloc((size_t)nn, 1),
             xcalloc((size_t)nn, 1),
             xcalloc((size_t)nn * 2 + 1, sizeof(GId)),
             xcalloc((size_t)nn * 2 + 1, sizeof(bool)),
             0,
             0};
  prune_signs(sw, live, &p);
  int want = sw->l.maximize ? P_DOWN : P_UP;
  if (p.npipe && p.dep[sw->obj] && p.sign[sw->obj] == want && sw->keep > 0) {
    GId *map = prune_clone(sw, live, &p, nn);
    live = prune_install(sw, live, &p, map, nn);
    free(map);
  }
  free(p.sign);
  free(p.dep);
  free(p.conds);
  free(p.strict);
  return live;
}

/* live = 1: what the checks and the requires need, 2: what only the objective and the
 * equivalence rules need (the lazy part of its level: a point that fails a require never
 * pays for it); nothing else is evaluated (a kept point's report comes from lowering it
 * again alone).  A pipeline whose makespan with free sends is not needed simulates once. */
static unsigned char *stage_live(Sweep *sw) {
  Graph *g = &sw->l.g;
  unsigned char *live = xcalloc((size_t)g->nn, 1);
  for (int r = 0; r < sw->nreq; r++) live[sw->req[r]] = 1;
  for (int c = 0; c < sw->l.nchecks; c++) live[sw->l.checks[c].ok] = 1;
  mark_operands(g, live, 1);
  if (!live[sw->obj]) live[sw->obj] = 2;
  for (int q = 0; q < sw->neq; q++)
    if (sw->eq[q].cond >= 0 && !live[sw->eq[q].cond]) live[sw->eq[q].cond] = 2;
  mark_operands(g, live, 2);
  sw->narrowed = arena_alloc(&sw->arena, (size_t)g->nn * sizeof *sw->narrowed);
  for (int i = 0; i < g->nn; i++)
    if (live[i] && g->n[i].op == GN_CALL && g->n[i].kernel == RTK_PIPELINE && !live[i + 1])
      g->n[i].kernel = RTK_PIPELINE_MAKESPAN, sw->narrowed[sw->nnarrowed++] = i;
  return live;
}

/* The loop order, most dependent kernel calls (of the first nn0 nodes) outermost, and each
 * position's radix and stride; pos[a] is axis a's position. */
static void stage_order(Sweep *sw, const uint64_t *mask, int nn0, int *pos) {
  const Graph *g = &sw->l.g;
  int calls[MAX_AXES] = {0};
  for (int i = 0; i < nn0; i++)
    if (g->n[i].op == GN_CALL)
      for (int a = 0; a < sw->nax; a++) calls[a] += (mask[i] >> a) & 1;
  for (int a = 0; a < sw->nax; a++) sw->order[a] = a;
  for (int a = 1; a < sw->nax; a++) /* stable insertion sort: most calls first */
    for (int b = a; b > 0 && calls[sw->order[b]] > calls[sw->order[b - 1]]; b--) {
      int t = sw->order[b];
      sw->order[b] = sw->order[b - 1];
      sw->order[b - 1] = t;
    }
  uint64_t st = 1;
  for (int k = sw->nax - 1; k >= 0; k--) {
    pos[sw->order[k]] = k;
    sw->radix[k] = (uint64_t)sw->ax[sw->order[k]].n;
    sw->stride[k] = st;
    st *= sw->radix[k];
  }
}

/* guard: the nodes a level's checks need, at that level (arithmetic on the axes); nchk[k]:
 * the checks of level k. */
static void stage_guard(Sweep *sw, const int *level, unsigned char *guard, int *nchk) {
  const Graph *g = &sw->l.g;
  GId ops[RT_KERNEL_MAXARGS];
  for (int c = 0; c < sw->l.nchecks; c++) {
    GId ok = sw->l.checks[c].ok;
    nchk[level[ok]]++;
    guard[ok] = 1;
  }
  for (int i = g->nn - 1; i >= 0; i--) { /* reverse topological: mark the operands */
    if (!guard[i]) continue;
    if (g->n[i].op == GN_CALL || g->n[i].op == GN_RESULT) abort(); /* checks are arithmetic on the axes */
    int n = graph_operands(g, i, ops);
    for (int j = 0; j < n; j++)
      if (level[ops[j]] == level[i]) guard[ops[j]] = 1;
  }
}

/* The node lists of the levels: for each loop position its guard, checks and body (live 1),
 * then the lazy (live 2), bound (3) and last (4) parts, each one level per position. */
static void stage_lists(Sweep *sw, const unsigned char *live, const int *level, const unsigned char *guard,
                        const int *nchk) {
  const Graph *g = &sw->l.g;
  int L = sw->nax;
  sw->lv = xcalloc(4 * (size_t)L, sizeof *sw->lv);
  sw->lists = xcalloc((size_t)g->nn + (size_t)sw->l.nchecks, sizeof *sw->lists);
  sw->reason_of = xcalloc((size_t)L, sizeof *sw->reason_of);
  GId *p = sw->lists;
  for (int k = 0; k < L; k++) {
    GLevel *v = &sw->lv[k];
    v->guard = p;
    for (int i = 0; i < g->nn; i++)
      if (level[i] == k && guard[i]) *p++ = i;
    v->nguard = (int)(p - v->guard);
    v->checks = p;
    sw->reason_of[k] = xcalloc((size_t)nchk[k], sizeof **sw->reason_of);
    for (int c = 0; c < sw->l.nchecks; c++)
      if (level[sw->l.checks[c].ok] == k) {
        int r = 0;
        while (strcmp(sw->reasons[r], sw->l.checks[c].reason)) r++;
        sw->reason_of[k][p - v->checks] = r;
        *p++ = sw->l.checks[c].ok;
      }
    v->nchecks = (int)(p - v->checks);
    v->body = p;
    for (int i = 0; i < g->nn; i++)
      if (level[i] == k && !guard[i] && live[i] == 1) *p++ = i;
    v->nbody = (int)(p - v->body);
  }
  for (int part = 1; part < 4; part++)
    for (int k = 0; k < L; k++) {
      GLevel *v = &sw->lv[part * L + k];
      v->guard = v->checks = v->body = p;
      for (int i = 0; i < g->nn; i++)
        if (level[i] == k && live[i] == part + 1) *p++ = i;
      v->nbody = (int)(p - v->body);
    }
}

/* Which axes each node depends on, the loop order (most dependent kernel calls outermost),
 * and the levels: a node is evaluated at the innermost loop of the axes it depends on. */
static void stage(Sweep *sw) {
  const Graph *g = &sw->l.g;
  int nn0 = sw->nn0 = g->nn; /* prune_setup appends the bound part after these */
  GId ops[RT_KERNEL_MAXARGS];
  unsigned char *live = stage_live(sw);
  live = prune_setup(sw, live);
  uint64_t *mask = xcalloc((size_t)g->nn, sizeof *mask); /* bit a: depends on axis a */
  for (int i = 0; i < g->nn; i++) {
    uint64_t m = g->n[i].op == GN_INPUT ? 1ull << g->n[i].a : 0;
    int n = graph_operands(g, i, ops);
    for (int j = 0; j < n; j++) m |= mask[ops[j]];
    mask[i] = m;
  }
  int pos[MAX_AXES];
  stage_order(sw, mask, nn0, pos);
  int *level = xcalloc((size_t)g->nn, sizeof *level);
  for (int i = 0; i < g->nn; i++) {
    int lv = 0;
    for (int a = 0; a < sw->nax; a++)
      if ((mask[i] >> a) & 1 && pos[a] > lv) lv = pos[a];
    level[i] = lv;
  }
  unsigned char *guard = xcalloc((size_t)g->nn, 1);
  int *nchk = xcalloc((size_t)sw->nax, sizeof *nchk);
  stage_guard(sw, level, guard, nchk);
  stage_lists(sw, live, level, guard, nchk);
  free(nchk);
  free(live);
  free(guard);
  free(level);
  free(mask);
}

/* The reasons a point is dropped: the checks' texts, once each, then the requires'. */
static void collect_reasons(Sweep *sw) {
  sw->reasons = arena_alloc(&sw->arena, (size_t)(sw->l.nchecks + sw->l.nrequires + 1) * sizeof *sw->reasons);
  for (int c = 0; c < sw->l.nchecks; c++) {
    int r = 0;
    while (r < sw->nreasons && strcmp(sw->reasons[r], sw->l.checks[c].reason)) r++;
    if (r == sw->nreasons) sw->reasons[sw->nreasons++] = sw->l.checks[c].reason;
  }
  sw->ncheck_reasons = sw->nreasons;
  sw->nreq = sw->l.nrequires;
  sw->req = arena_alloc(&sw->arena, (size_t)(sw->nreq + 1) * sizeof *sw->req);
  int i = 0;
  for (AstNode *c = sema_block_body(sw->decl).first; c; c = c->next) {
    if (c->kind == AST_REQUIRE) {
      char name[32];
      snprintf(name, sizeof name, "require.%d", i);
      sw->req[i++] = graph_find_output(&sw->l.g, name);
      sw->reasons[sw->nreasons++] = stmt_text(sw, c);
    } else if (c->kind == AST_MINIMIZE || c->kind == AST_MAXIMIZE) {
      sw->objective = stmt_text(sw, c);
    }
  }
  sw->obj = graph_find_output(&sw->l.g, "objective");
  if (sw->obj < 0) { /* no objective: the fastest first */
    sw->obj = graph_find_output(&sw->l.g, "iteration");
    sw->objective = "iteration";
  }
}

/* --- plans that do not fit, and equivalent plans ----------------------------------------- */

/* Appends a drop reason; returns its index. */
static int add_reason(Sweep *sw, const char *text) {
  const char **r = arena_alloc(&sw->arena, (size_t)(sw->nreasons + 1) * sizeof *r);
  memcpy(r, sw->reasons, (size_t)sw->nreasons * sizeof *r);
  r[sw->nreasons] = text;
  sw->reasons = r;
  return sw->nreasons++;
}

/* A plan that does not fit in its GPU's memory is dropped after the requires, under its own
 * reason, as a last require: memory.peak <= the GPU's memory; unless a require says as much
 * already (`require memory.peak <= cluster.gpu.memory`: no node more to evaluate a point). */
static void fit_setup(Sweep *sw) {
  Graph *g = &sw->l.g;
  GId peak = graph_find_output(g, "memory.peak");
  if (peak < 0) return;
  for (int r = 0; r < sw->nreq; r++) {
    const GNode *x = &g->n[sw->req[r]];
    double k;
    if (x->op == GN_LE && x->a == peak && g_is_const(g, x->b, &k) && k <= sw->l.meta.capacity) {
      sw->fit_require = sw->ncheck_reasons + r;
      return;
    }
  }
  GId fit = g_bin(g, GN_LE, peak, g_const(g, sw->l.meta.capacity));
  graph_output(g, "sweep.fits", fit);
  GId *req = arena_alloc(&sw->arena, (size_t)(sw->nreq + 1) * sizeof *req);
  memcpy(req, sw->req, (size_t)sw->nreq * sizeof *req);
  req[sw->nreq++] = fit;
  sw->req = req;
  char cap[32];
  sw->fit_reason = add_reason(sw, arena_printf(&sw->arena, "does not fit: memory.peak over the GPU's %s",
                                               report_bytes(cap, sizeof cap, sw->l.meta.capacity)));
}

/* Axes without effect where a plan size is 1: at such a point every value but `canon` (and
 * `distinct`, whose figures differ) gives canon's plan, the same figures at most a rounding
 * apart (tests/sweep/roundtrip.py checks each).  Virtual stages without the interleaved
 * schedule need no rule: a check drops them. */
static const struct {
  const char *field, *size, *size2, *canon, *distinct; /* size2: NULL, or another that must be 1 */
} inert[] = {
    {"sequence_parallel", "plan.tp", NULL, "false", NULL},
    {"overlap_tp", "plan.tp", NULL, "false", NULL},
    {"overlap_pp", "plan.pp", NULL, "false", NULL},
    {"overlap_dp", "plan.dp", NULL, "false", NULL},
    {"overlap_ep", "plan.ep", NULL, "false", NULL},
    {"virtual_stages", "plan.pp", NULL, "1", NULL},
    {"schedule", "plan.pp", NULL, "1f1b", "gpipe"},              /* gpipe holds every micro-batch's activations, */
    {"schedule", "plan.pp", "plan.micro_batches", "1f1b", NULL}, /* unless there is one */
};

/* The index of the value `word` in axis a, or -1. */
static int axis_index(const Axis *a, const char *word) {
  double code;
  if (!strcmp(word, "true") || !strcmp(word, "false"))
    code = !strcmp(word, "true");
  else if (!lower_axis_code(a->field, word, &code))
    code = strtod(word, NULL);
  for (int k = 0; k < a->n; k++)
    if (a->vals[k] == code) return k;
  return -1;
}

/* Whether a rule on field f would be unsafe: a require or the objective names the field (the
 * canonical plan might fail it where another passes).  The checks are not: where a rule
 * applies, each passes for the canonical value if for any (a stack's schedules bind at
 * pp > 1 only). */
static bool equiv_unsafe(const Sweep *sw, const char *f) {
  for (int r = sw->ncheck_reasons; r < sw->ncheck_reasons + sw->l.nrequires; r++)
    if (strstr(sw->reasons[r], f)) return true;
  return sw->objective && strstr(sw->objective, f);
}

/* The rules of inert[] that apply to this sweep's axes, their conditions as graph outputs. */
static void equiv_setup(Sweep *sw) {
  Graph *g = &sw->l.g;
  int n = (int)(sizeof inert / sizeof inert[0]);
  sw->eq = arena_alloc(&sw->arena, (size_t)n * sizeof *sw->eq);
  for (int i = 0; i < n; i++)
    for (int a = 0; a < sw->nax; a++) {
      const Axis *ax = &sw->ax[a];
      GId size = graph_find_output(g, inert[i].size),
          size2 = inert[i].size2 ? graph_find_output(g, inert[i].size2) : -2;
      int canon = axis_index(ax, inert[i].canon);
      if (strcmp(ax->root, "plan") || strcmp(ax->field, inert[i].field) || canon < 0 || size < 0 || size2 == -1 ||
          equiv_unsafe(sw, ax->field))
        continue;
      double k;
      GId cond = g_bin(g, GN_EQ, size, g_const(g, 1));
      if (size2 >= 0) cond = g_bin(g, GN_AND, cond, g_bin(g, GN_EQ, size2, g_const(g, 1)));
      if (g_is_const(g, cond, &k) && k == 0) continue;
      if (g_is_const(g, cond, &k))
        cond = -1;
      else
        graph_output(g, arena_printf(&sw->arena, "sweep.equivalent.%d", sw->neq), cond);
      int distinct = inert[i].distinct ? axis_index(ax, inert[i].distinct) : -1;
      const char *why = arena_printf(&sw->arena, "equivalent to %s = %s (no effect at %s = 1%s)", ax->field,
                                     inert[i].canon, inert[i].size + 5, size2 >= 0 ? " and 1 micro-batch" : "");
      sw->eq[sw->neq++] = (Equiv){a, -1, canon, distinct, inert[i].size, inert[i].size2, cond, add_reason(sw, why)};
    }
}

/* The reason an otherwise kept point is dropped as equivalent to another, or -1. */
static int equivalent(const Sweep *sw, const double *vals, const int *digit) {
  for (int q = 0; q < sw->neq; q++) {
    const Equiv *e = &sw->eq[q];
    int d = digit[e->pos];
    if (d != e->canon && d != e->distinct && (e->cond < 0 || vals[e->cond] != 0)) return e->reason;
  }
  return -1;
}

/* The identity of what the sweep evaluates, which `llmp merge` compares between shards:
 * FNV-1a over llmp's version, the sweep's name, every file of the compilation (its length and
 * bytes, in load order), the calibration tables its hardware loaded, and the options that
 * change which plans are kept (--keep-unfit, --keep-equivalent), where given. */
static void sweep_hash(Sweep *sw, const SweepOptions *opt) {
  uint64_t h = hash_str(HASH_BASIS, "llmp " LLMP_VERSION);
  h = hash_str(hash_word(h, 0), sema_decl_name(sw->decl));
  for (int i = 0; i < sema_nfiles(sw->s); i++) {
    const SrcFile *f = sema_file(sw->s, i);
    h = hash_word(h, f ? (uint64_t)f->len : UINT64_MAX);
    if (f) h = hash_bytes(h, f->text, f->len);
  }
  h = hw_tables_hash(sw->hw, h);
  if (opt->keep_unfit || opt->keep_equivalent)
    h = hash_word(h, (uint64_t)opt->keep_unfit | (uint64_t)opt->keep_equivalent << 1);
  snprintf(sw->hash, sizeof sw->hash, "%016" PRIx64, h);
}

/* The sweep's `keep` (default 20): false after reporting. */
static bool read_keep(Sweep *sw) {
  Sema *s = sw->s;
  Decl *decl = sw->decl;
  Diag *d = sw->d;
  sw->keep = 20;
  for (AstNode *c = sema_block_body(decl).first; c; c = c->next)
    if (c->kind == AST_KEEP) { /* sema checked one count to SEMA_KEEP_MAX; a sweep takes it as a literal */
      if (c->u.bin.rhs->kind != AST_NUM) {
        SrcFile *f;
        Span at;
        sema_decl_at(s, decl, &f, &at);
        diag_error(d, f, c->u.bin.rhs->span, "`keep` takes a number, like `keep 20`");
        return false;
      }
      sw->keep = (int)fmin(c->u.bin.rhs->u.num.value, SEMA_KEEP_MAX);
    }
  return true;
}

Sweep *sweep_part_new(Sema *s, HwSet *hw, Decl *decl, Decl *scenario, Diag *d, const SweepOptions *opt) {
  Sweep *sw = xcalloc(1, sizeof *sw);
  sw->s = s, sw->hw = hw, sw->d = d, sw->decl = decl, sw->scenario = scenario;
  arena_init(&sw->arena);
  if (!read_axes(sw) || !read_keep(sw)) goto fail;
  LowerAxes axes = {sw->la, sw->nlower, decl};
  if (lower_with_axes(s, hw, scenario, &axes, d, &sw->l) < 0) goto fail;
  collect_reasons(sw);
  sw->fit_reason = sw->fit_require = -1;
  if (!opt->keep_unfit) fit_setup(sw);
  if (!opt->keep_equivalent) equiv_setup(sw);
  sweep_hash(sw, opt); /* after lowering, which loads the tables */
  stage(sw);
  for (int q = 0; q < sw->neq; q++) /* axis -> loop position */
    for (int k = 0; k < sw->nax; k++)
      if (sw->order[k] == sw->eq[q].axis) {
        sw->eq[q].pos = k;
        break;
      }
  return sw;
fail:
  sweep_free(sw);
  return NULL;
}

char *sweep_part_compile(Sweep *sw, FILE *dump_ir) {
  char *msg = NULL;
  sw->jit = jit_compile(&sw->l.g, sw->lv, 4 * sw->nax, dump_ir ? JIT_IR_OPT : 0, &msg);
  if (!sw->jit) return msg ? msg : xstrdup("unknown error");
  if (dump_ir) fputs(jit_ir(sw->jit, JIT_IR_OPT), dump_ir);
  sw->fns = xcalloc(4 * (size_t)sw->nax, sizeof *sw->fns);
  for (int k = 0; k < 4 * sw->nax; k++) sw->fns[k] = jit_level(sw->jit, k);
  return NULL;
}

/* Whether two arrays of n nodes hold the same lists. */
static bool same_ids(const GId *a, const GId *b, int n) { return !n || !memcmp(a, b, (size_t)n * sizeof *a); }

/* The hardware the compiled code reads: the same figures (pointers to equal tables). */
static bool same_hw(const Graph *a, const Graph *b) {
  const RtCluster *x = a->cluster, *y = b->cluster;
  const RtGpu *g = a->gpu, *h = b->gpu;
  if (memcmp(g, h, sizeof *g)) return false;
  RtCluster u = *x, v = *y;
  if (memcmp(u.gpu, v.gpu, sizeof *u.gpu)) return false;
  u.gpu = v.gpu = NULL;
  return !memcmp(&u, &v, sizeof u);
}

bool sweep_part_same(const Sweep *a, const Sweep *b) {
  const Graph *g = &a->l.g, *h = &b->l.g;
  if (a->nax != b->nax || g->nn != h->nn || g->nargs != h->nargs || g->ninputs != h->ninputs || g->nout != h->nout ||
      !same_ids(g->args, h->args, g->nargs) || !same_hw(g, h))
    return false;
  for (int i = 0; i < g->nn; i++) {
    const GNode *x = &g->n[i], *y = &h->n[i];
    if (x->op != y->op || x->kernel != y->kernel || x->nargs != y->nargs || x->a != y->a || x->b != y->b ||
        x->c != y->c || x->arg0 != y->arg0 || memcmp(&x->k, &y->k, sizeof x->k))
      return false;
  }
  for (int i = 0; i < g->nout; i++)
    if (g->out[i].id != h->out[i].id || strcmp(g->out[i].name, h->out[i].name)) return false;
  for (int k = 0; k < 4 * a->nax; k++) {
    const GLevel *x = &a->lv[k], *y = &b->lv[k];
    if (x->nguard != y->nguard || x->nchecks != y->nchecks || x->nbody != y->nbody ||
        !same_ids(x->guard, y->guard, x->nguard) || !same_ids(x->checks, y->checks, x->nchecks) ||
        !same_ids(x->body, y->body, x->nbody))
      return false;
  }
  return true;
}

void sweep_part_share(Sweep *sw, const Sweep *from) {
  sw->shared_jit = true;
  sw->jit = from->jit;
  sw->fns = xcalloc(4 * (size_t)sw->nax, sizeof *sw->fns);
  memcpy(sw->fns, from->fns, 4 * (size_t)sw->nax * sizeof *sw->fns);
}

Sweep *sweep_new(Sema *s, HwSet *hw, Decl *decl, Diag *d, const SweepOptions *opt) {
  if (!sweep_lets_ok(s, decl, d)) return NULL;
  if (sweep_set_wanted(s, decl)) {
    Sweep *sw = xcalloc(1, sizeof *sw);
    sw->s = s, sw->hw = hw, sw->d = d, sw->decl = sw->scenario = decl;
    arena_init(&sw->arena);
    if (!read_keep(sw) || !(sw->set = sweep_set_new(s, hw, decl, d, opt))) {
      sweep_free(sw);
      return NULL;
    }
    sweep_hash(sw, opt); /* after every graph is lowered */
    return sw;
  }
  Sweep *sw = sweep_part_new(s, hw, decl, decl, d, opt);
  char *msg = sw && opt->jit ? sweep_part_compile(sw, opt->dump_ir) : NULL;
  if (msg) {
    diag_plain(d, sema_decl_path(s, decl), "the JIT could not compile sweep `%s`: %s", sema_decl_name(decl), msg);
    free(msg);
    sweep_free(sw);
    return NULL;
  }
  return sw;
}

void sweep_free(Sweep *sw) {
  if (!sw) return;
  sweep_set_free(sw->set);
  if (sw->jit && !sw->shared_jit) jit_free(sw->jit);
  free(sw->fns);
  for (int k = 0; sw->reason_of && k < sw->nax; k++) free(sw->reason_of[k]);
  free(sw->reason_of);
  free(sw->lv);
  free(sw->lists);
  free(sw->rows);
  free(sw->drops);
  sample_free(sw);
  lower_free(&sw->l);
  arena_free(&sw->arena);
  free(sw);
}

/* With structural axes, the figures of one graph are the first structure's. */
#define FIRST(sw) ((sw)->set ? sweep_set_first((sw)->set) : (sw))
uint64_t sweep_points(const Sweep *sw) { return sw->set ? sweep_set_points(sw->set) : sw->points; }
Sema *sweep_sema(const Sweep *sw) { return sw->s; }
Decl *sweep_decl(const Sweep *sw) { return sw->decl; }
Diag *sweep_diag(const Sweep *sw) { return sw->d; }
int sweep_axes(const Sweep *sw) { return sw->set ? sweep_set_axes(sw->set) : sw->nlower; }

double sweep_estimate(const Sweep *sw, double *rate) {
  if (sw->set && (sw = sweep_set_estimated(sw->set)) == NULL) return *rate = 0, 0;
  *rate = sw->est_rate;
  return sw->est_s;
}
const char *sweep_hash_text(const Sweep *sw) { return sw->hash; }
int sweep_levels(const Sweep *sw) { return FIRST(sw)->nax; }
uint64_t sweep_pruned(const Sweep *sw) { return sw->set ? sweep_set_pruned(sw->set) : sw->pruned; }
double sweep_jit_seconds(const Sweep *sw) {
  return sw->set ? sweep_set_jit_seconds(sw->set) : sw->jit && !sw->shared_jit ? jit_compile_seconds(sw->jit) : 0;
}
uint64_t sweep_part_pruned(const Sweep *sw) { return sw->pruned; }
Sweep *sweep_point_owner(Sweep *sw, uint64_t point, uint64_t *local) {
  if (!sw->set) return *local = point, sw;
  return sweep_set_part(sw->set, point, local);
}

void sweep_keep_sample(Sweep *sw, int per_class) {
  if (sw->set) sweep_set_keep_sample(sw->set, per_class);
  else sweep_part_sample(sw, per_class, 0);
}

const SweepSample *sweep_sample(const Sweep *sw) {
  if (sw->set) return sweep_set_sample(sw->set);
  return sw->dots ? &sw->smp : NULL;
}

int sweep_best(const Sweep *sw, const SweepRow **rows, const char **axes) {
  return sw->set ? sweep_set_best(sw->set, rows, axes) : 0;
}
int sweep_structures(const Sweep *sw, int *compiled, double *lower_seconds) {
  if (sw->set) return sweep_set_structures(sw->set, compiled, lower_seconds);
  *compiled = 1, *lower_seconds = 0;
  return 1;
}
const char *const *sweep_part_reasons(const Sweep *sw, int *n) { return *n = sw->nreasons, sw->reasons; }
int sweep_part_ncheck(const Sweep *sw) { return sw->ncheck_reasons; }
Decl *sweep_part_scenario(const Sweep *sw) { return sw->scenario; }
bool sweep_part_shares(const Sweep *sw) { return sw->shared_jit; }
void sweep_part_diag(Sweep *sw, Diag *d) { sw->d = d; }
const Graph *sweep_graph(const Sweep *sw) { return &FIRST(sw)->l.g; }

const char *sweep_loop(const Sweep *sw, int k, int *values, int *nodes, int *calls) {
  sw = FIRST(sw);
  const GLevel *v = &sw->lv[k];
  *values = (int)sw->radix[k];
  *nodes = v->nguard + v->nbody;
  *calls = 0;
  for (int i = 0; i < v->nbody; i++) *calls += sw->l.g.n[v->body[i]].op == GN_CALL;
  for (int part = 1; part < 4; part++) { /* the lazy, bound and last parts */
    const GLevel *lz = &sw->lv[part * sw->nax + k];
    *nodes += lz->nbody;
    for (int i = 0; i < lz->nbody; i++) *calls += sw->l.g.n[lz->body[i]].op == GN_CALL;
  }
  const Axis *a = &sw->ax[sw->order[k]];
  return a->field;
}

/* --- the loop nest ------------------------------------------------------------------------------ */

typedef struct Worker {
  Sweep *sw;
  bool jit, prune;
  double *vals, *inputs;
  SweepTop *top;
  uint64_t *dropped; /* per reason */
  uint64_t kept, pruned;
  atomic_uint_fast64_t *next, *done;
  uint64_t end, max_chunk;
  atomic_bool *stop;   /* set: leave the loop now */
  atomic_int *running; /* the workers still running */
  SweepTop **sample;   /* per class (sweep_keep_sample), or NULL */
} Worker;

/* --- the sample of the points evaluated ---------------------------------------------------------- */

/* The key a point is sampled by: its index in the whole sweep through splitmix64's finalizer
 * (a bijection), 53 bits, exact in a double.  A class's sample is its points of smallest key
 * (ties by index), a SweepTop that minimizes the key: the same whatever thread or chunk saw
 * them, and the union of the workers' is the whole run's. */
static double sample_key(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return (double)(x >> 11);
}

static void sample_push(Worker *w, int cls, uint64_t i) {
  SweepTop *t = w->sample[cls];
  double key = sample_key(w->sw->base + i);
  if (sweep_top_wants(t, key, i)) sweep_top_push(t, &(SweepRow){i, key, 0, NULL});
}

static SweepTop **sample_new(const Sweep *sw) {
  SweepTop **t = xcalloc((size_t)sw->nreasons + 1, sizeof *t);
  for (int c = 0; c <= sw->nreasons; c++) t[c] = sweep_top_new(sw->sample_k, false);
  return t;
}

static void sample_tops_free(SweepTop **t, int n) {
  for (int c = 0; t && c < n; c++) sweep_top_free(t[c]);
  free(t);
}

void sweep_part_sample_free(Sweep *sw) { sample_free(sw); }

static void sample_free(Sweep *sw) {
  sample_tops_free(sw->sample, sw->nreasons + 1);
  free(sw->dots);
  sw->sample = NULL, sw->dots = NULL, sw->smp = (SweepSample){0, 0, NULL};
}

void sweep_part_sample(Sweep *sw, int per_class, uint64_t base) { sw->sample_k = per_class, sw->base = base; }

SweepTop *const *sweep_part_sample_tops(const Sweep *sw) { return sw->sample; }

SweepDotKind sweep_part_kind(const Sweep *sw, int cls) {
  if (cls >= sw->nreasons) return SWEEP_DOT_RANKED;
  if (cls == sw->fit_reason || cls == sw->fit_require) return SWEEP_DOT_FIT;
  return cls < sw->ncheck_reasons + sw->l.nrequires ? SWEEP_DOT_REQUIRE : SWEEP_DOT_EQUIVALENT;
}

SweepDot *sweep_sample_dots(SweepTop *const *tops, int nclass, uint64_t offset, int *n) {
  int total = 0;
  for (int c = 0; c < nclass; c++) total += sweep_top_count(tops[c]);
  SweepDot *d = xcalloc((size_t)total + 1, sizeof *d);
  SweepRow *rows = xcalloc((size_t)total + 1, sizeof *rows);
  *n = 0;
  for (int c = 0; c < nclass; c++) {
    int k = sweep_top_rows(tops[c], rows);
    for (int i = 0; i < k; i++)
      d[(*n)++] = (SweepDot){rows[i].point + offset, c == nclass - 1 ? -1 : c, SWEEP_DOT_RANKED, NAN, NAN, false};
  }
  free(rows);
  return d;
}

static int dot_by_point(const void *a, const void *b) {
  uint64_t x = ((const SweepDot *)a)->point, y = ((const SweepDot *)b)->point;
  return (x > y) - (x < y);
}

static int dot_by_class(const void *a, const void *b) {
  const SweepDot *x = a, *y = b;
  unsigned r = (unsigned)x->reason, s = (unsigned)y->reason; /* the ranked (-1) last */
  return r != s ? (r > s) - (r < s) : dot_by_point(a, b);
}

void sweep_sample_sort(SweepDot *d, int n, bool by_point) {
  if (n > 1) qsort(d, (size_t)n, sizeof *d, by_point ? dot_by_point : dot_by_class);
}

/* A share of the dots whose figures sweep_part_figures evaluates, on a thread of its own. */
typedef struct Figures {
  const Sweep *sw;
  const Graph *g; /* the whole graph, read only */
  SweepDot *d;
  int n;
  uint64_t lo;
} Figures;

static void *figures_main(void *arg) {
  const Figures *f = arg;
  const Sweep *sw = f->sw;
  double *vals = xcalloc((size_t)f->g->nn, sizeof *vals), inputs[MAX_AXES + 1];
  GId it = graph_find_output(f->g, "iteration"), peak = graph_find_output(f->g, "memory.peak");
  for (int i = 0; i < f->n; i++) {
    SweepDot *d = &f->d[i];
    int idx[MAX_AXES];
    point_values(sw, d->point - f->lo, idx);
    for (int a = 0; a < sw->nax; a++) inputs[a] = sw->ax[a].vals[idx[a]];
    graph_eval(f->g, inputs, vals);
    d->iteration = it >= 0 ? vals[it] : NAN;
    d->peak = peak >= 0 ? vals[peak] : NAN;
    d->fits = d->peak <= sw->l.meta.capacity;
  }
  free(vals);
  return NULL;
}

void sweep_part_figures(Sweep *sw, SweepDot *d, int n, uint64_t lo) {
  enum { MAX_THREADS = 64, PER_THREAD = 64 }; /* a thread for each 64 points at least */
  if (!n) return;
  Graph g = sw->l.g; /* as lowering built it: the nodes before the bound part, the pipelines whole */
  g.nn = sw->nn0;
  g.n = xmalloc((size_t)g.nn * sizeof *g.n);
  memcpy(g.n, sw->l.g.n, (size_t)g.nn * sizeof *g.n);
  for (int i = 0; i < sw->nnarrowed; i++) g.n[sw->narrowed[i]].kernel = RTK_PIPELINE;
  int T = sw->threads < MAX_THREADS ? sw->threads : MAX_THREADS;
  if (T > (n + PER_THREAD - 1) / PER_THREAD) T = (n + PER_THREAD - 1) / PER_THREAD;
  if (T < 1) T = 1;
  Figures f[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  bool started[MAX_THREADS] = {false};
  for (int t = 0; t < T; t++) { /* contiguous shares: each dot's figures are its own, whoever computes them */
    int b = (int)((int64_t)n * t / T), e = (int)((int64_t)n * (t + 1) / T);
    f[t] = (Figures){sw, &g, d + b, e - b, lo};
    started[t] = t > 0 && pthread_create(&th[t], NULL, figures_main, &f[t]) == 0;
  }
  for (int t = 0; t < T; t++)
    if (!started[t]) figures_main(&f[t]); /* this thread's share, and any whose thread did not start */
  for (int t = 1; t < T; t++)
    if (started[t]) pthread_join(th[t], NULL);
  free(g.n);
}

/* The last run's sample with its figures (sw->dots, sw->smp). */
static void sample_build(Sweep *sw) {
  int n;
  sw->dots = sweep_sample_dots(sw->sample, sw->nreasons + 1, 0, &n);
  sweep_part_figures(sw, sw->dots, n, 0);
  for (int i = 0; i < n; i++) {
    int r = sw->dots[i].reason;
    sw->dots[i].kind = sweep_part_kind(sw, r < 0 ? sw->nreasons : r);
  }
  sweep_sample_sort(sw->dots, n, false);
  sw->smp = (SweepSample){sw->sample_k, n, sw->dots};
}

static void set_inputs(const Sweep *sw, const int *digit, int from, double *inputs) {
  for (int k = from; k < sw->nax; k++) inputs[sw->order[k]] = sw->ax[sw->order[k]].vals[digit[k]];
}

static int eval_level(Worker *w, int k) {
  const Sweep *sw = w->sw;
  return w->jit ? sw->fns[k](w->inputs, w->vals) : graph_eval_level(&sw->l.g, &sw->lv[k], w->inputs, w->vals);
}

/* Whether the point just evaluated, whose bound part is evaluated, cannot be kept: the
 * objective's bound is worse than the worst point this worker keeps (strictly: a tie could
 * still be kept by its index), and every sign the bound relies on holds. */
static bool pruned(const Worker *w) {
  const Sweep *sw = w->sw;
  double bound = w->vals[sw->obj_bound];
  if (isnan(bound)) return false;
  for (int c = 0; c < sw->nconds; c++) {
    double x = w->vals[sw->conds[c]];
    if (!(sw->strict[c] ? x > 0 : x >= 0)) return false;
  }
  return !sweep_top_wants(w->top, bound, 0);
}

/* Points [b, e) in loop order.  Levels from `from` on are evaluated for each point; their
 * lazy parts (what only the objective needs) for a point that passes, each part from the
 * first level whose loop moved since that part was last evaluated: lazy[0] the lazy part,
 * lazy[1] the bound part and lazy[2] the rest, which a pruned point skips (prune_setup). */
static void run_range(Worker *w, uint64_t b, uint64_t e) {
  Sweep *sw = w->sw;
  int L = sw->nax, digit[MAX_AXES], lazy[3] = {0, 0, 0};
  bool bound = w->prune && sw->obj_bound >= 0 && w->top;
  for (int k = 0; k < L; k++) digit[k] = (int)((b / sw->stride[k]) % sw->radix[k]);
  set_inputs(sw, digit, 0, w->inputs);
  int from = 0;
  uint64_t i = b, told = b; /* the points added to w->done */
  while (i < e) {
    if (i - told >= 256) { /* the progress, within a chunk: a chunk may skip fast then crawl */
      atomic_fetch_add_explicit(w->done, i - told, memory_order_relaxed);
      told = i;
      if (atomic_load_explicit(w->stop, memory_order_relaxed)) return;
    }
    int failed = -1, code = 0;
    for (int part = 0; part < 3; part++)
      if (from < lazy[part]) lazy[part] = from;
    for (int k = from; k < L; k++)
      if ((code = eval_level(w, k)) != 0) {
        failed = k;
        break;
      }
    if (failed >= 0) { /* every point until this loop's digit changes fails the same check */
      uint64_t skip = sw->stride[failed] - i % sw->stride[failed];
      if (skip > e - i) skip = e - i;
      w->dropped[sw->reason_of[failed][code - 1]] += skip;
      i += skip;
      if (i >= e) break;
      int k = failed;
      while (k > 0 && (i / sw->stride[k]) % sw->radix[k] == 0) k--; /* the outermost digit that changed */
      for (int j = 0; j < L; j++) digit[j] = (int)((i / sw->stride[j]) % sw->radix[j]);
      from = k;
      set_inputs(sw, digit, from, w->inputs);
      continue;
    }
    int r = 0, eq = -1;
    while (r < sw->nreq && w->vals[sw->req[r]] != 0) r++;
    if (r == sw->nreq) {
      for (; lazy[0] < L; lazy[0]++) eval_level(w, L + lazy[0]);
      if (sw->neq) eq = equivalent(sw, w->vals, digit);
    }
    int cls = sw->nreasons;
    if (r < sw->nreq) {
      w->dropped[cls = sw->ncheck_reasons + r]++;
    } else if (eq >= 0) {
      w->dropped[cls = eq]++;
    } else {
      w->kept++;
      bool skip = false;
      if (bound) {
        for (; lazy[1] < L; lazy[1]++) eval_level(w, 2 * L + lazy[1]);
        skip = pruned(w);
        w->pruned += skip;
      }
      if (!skip) {
        for (; lazy[2] < L; lazy[2]++) eval_level(w, 3 * L + lazy[2]);
        double obj = w->vals[sw->obj];
        if (sweep_top_wants(w->top, obj, i)) sweep_top_push(w->top, &(SweepRow){i, obj, 0, NULL});
      }
    }
    if (w->sample) sample_push(w, cls, i);
    i++;
    int k = L - 1;
    while (k > 0 && ++digit[k] == (int)sw->radix[k]) digit[k--] = 0;
    if (k == 0) digit[0]++;
    from = k;
    if (i < e) set_inputs(sw, digit, from, w->inputs);
  }
  atomic_fetch_add_explicit(w->done, e - told, memory_order_relaxed);
}

uint64_t sweep_chunk_next(uint64_t chunk, double seconds, uint64_t max) {
  double c = (double)(chunk ? chunk : 1), next = 8 * c;
  if (seconds > 0 && c * (SWEEP_CHUNK_SECONDS / seconds) < next) next = c * (SWEEP_CHUNK_SECONDS / seconds);
  if (next > (double)max) next = (double)max;
  return next < 1 ? 1 : (uint64_t)next;
}

static void *worker_main(void *arg) {
  Worker *w = arg;
  uint64_t chunk = 1;
  while (!atomic_load(w->stop)) {
    uint64_t b = atomic_fetch_add(w->next, chunk);
    if (b >= w->end) break;
    uint64_t e = chunk < w->end - b ? b + chunk : w->end;
    double t0 = sweep_now();
    run_range(w, b, e);
    chunk = sweep_chunk_next(chunk, sweep_now() - t0, w->max_chunk);
  }
  atomic_fetch_sub(w->running, 1);
  return NULL;
}

/* The axis values of a point, by axis (declaration order). */
static void point_values(const Sweep *sw, uint64_t point, int *index) {
  for (int k = 0; k < sw->nax; k++) index[sw->order[k]] = (int)((point / sw->stride[k]) % sw->radix[k]);
}

/* A kept point lowered alone, with its axes as constants, and its report. */
static int point_report(Sweep *sw, uint64_t point, Report *r, double *objective, int *reason) {
  int idx[MAX_AXES];
  point_values(sw, point, idx);
  LowerAxis la[MAX_AXES];
  for (int a = 0; a < sw->nlower; a++) la[a] = (LowerAxis){sw->ax[a].root, sw->ax[a].field, -1, sw->ax[a].vals[idx[a]]};
  LowerAxes axes = {la, sw->nlower, sw->decl};
  Lowered l;
  if (lower_with_axes(sw->s, sw->hw, sw->scenario, &axes, sw->d, &l) < 0) {
    lower_free(&l);
    return -1;
  }
  double *vals = xcalloc((size_t)l.g.nn, sizeof *vals);
  *reason = -1;
  for (int c = 0; c < l.nchecks && *reason < 0; c++) { /* constant by now */
    double v;
    if (g_is_const(&l.g, l.checks[c].ok, &v) && v == 0)
      for (int k = 0; k < sw->ncheck_reasons; k++)
        if (!strcmp(sw->reasons[k], l.checks[c].reason)) *reason = k;
  }
  if (*reason < 0) {
    graph_eval(&l.g, NULL, vals);
    for (int q = 0; q < l.nrequires && *reason < 0; q++) {
      char name[32];
      snprintf(name, sizeof name, "require.%d", q);
      if (vals[graph_find_output(&l.g, name)] == 0) *reason = sw->ncheck_reasons + q;
    }
    GId peak = graph_find_output(&l.g, "memory.peak");
    if (*reason < 0 && sw->fit_reason >= 0 && peak >= 0 && !(vals[peak] <= l.meta.capacity)) *reason = sw->fit_reason;
    for (int q = 0; q < sw->neq && *reason < 0; q++) { /* as equivalent() */
      const Equiv *e = &sw->eq[q];
      GId size = graph_find_output(&l.g, e->size), size2 = e->size2 ? graph_find_output(&l.g, e->size2) : -1;
      if (idx[e->axis] != e->canon && idx[e->axis] != e->distinct && size >= 0 && vals[size] == 1 &&
          (!e->size2 || (size2 >= 0 && vals[size2] == 1)))
        *reason = e->reason;
    }
    GId o = graph_find_output(&l.g, "objective");
    *objective = vals[o >= 0 ? o : graph_find_output(&l.g, "iteration")];
    if (r) lower_report(&l, vals, r);
  } else {
    *objective = NAN;
  }
  free(vals);
  lower_free(&l);
  return 0;
}

const char *sweep_axis_at(const Sweep *sw, int a, uint64_t point, const char **root, const char **field, char *buf,
                          size_t n) {
  if (sw->set) return sweep_set_axis_at(sw->set, a, point, root, field, buf, n);
  int idx[MAX_AXES];
  point_values(sw, point, idx);
  const Axis *ax = &sw->ax[a];
  *root = ax->root, *field = ax->field;
  if (ax->words) return ax->words[idx[a]];
  char num[40];
  snprintf(buf, n, "%s", str_number(num, sizeof num, ax->vals[idx[a]]));
  return buf;
}

void sweep_point_inputs(const Sweep *sw, uint64_t point, double *inputs) {
  if (sw->set) sw = sweep_set_part(sw->set, point, &point);
  if (!sw) return; /* a structure that could not be lowered has no inputs */
  int idx[MAX_AXES];
  point_values(sw, point, idx);
  for (int a = 0; a < sw->nax; a++) inputs[a] = sw->ax[a].vals[idx[a]];
}

int sweep_point_report(Sweep *sw, uint64_t point, Report *r) {
  double obj;
  int reason;
  if (sw->set && (sw = sweep_set_part(sw->set, point, &point)) == NULL) return -1;
  return point_report(sw, point, r, &obj, &reason);
}

double sweep_point_objective(Sweep *sw, uint64_t point, int *reason) {
  if (sw->set) return sweep_set_point_objective(sw->set, point, reason);
  double obj = NAN;
  if (point_report(sw, point, NULL, &obj, reason) < 0) *reason = -2;
  return *reason == -1 ? obj : NAN;
}

static SweepField num_field(const char *key, double x) { return (SweepField){key, x, NULL, false}; }

static void fill_row(Sweep *sw, SweepRow *row, const Report *r) {
  int idx[MAX_AXES];
  point_values(sw, row->point, idx);
  SweepField *f = arena_alloc(&sw->arena, (size_t)(sw->nax + 16) * sizeof *f);
  int n = 0;
  for (int a = 0; a < sw->nlower; a++) {
    const Axis *ax = &sw->ax[a];
    const char *key = arena_printf(&sw->arena, "%s.%s", ax->root, ax->field);
    f[n++] = ax->flags   ? (SweepField){key, ax->vals[idx[a]], NULL, true}
             : ax->words ? (SweepField){key, NAN, ax->words[idx[a]], false}
                         : num_field(key, ax->vals[idx[a]]);
  }
  bool has_dp = false;
  for (int a = 0; a < sw->nlower; a++) has_dp |= !strcmp(sw->ax[a].field, "dp") && !strcmp(sw->ax[a].root, "plan");
  if (!has_dp) f[n++] = num_field("plan.dp", r->dp);
  f[n++] = num_field("micro_batches", r->micro_batches);
  f[n++] = num_field("iteration_s", r->iteration);
  f[n++] = num_field("tokens_per_s", r->tokens_per_s);
  f[n++] = num_field("tflops_per_gpu", r->tflops_per_gpu / 1e12);
  f[n++] = num_field("mfu", r->mfu);
  f[n++] = num_field("bubble_s", r->part[RP_BUBBLE]);
  f[n++] = num_field("dp_comm_s", r->part[RP_DP_COMM]);
  f[n++] = num_field("memory.peak", r->peak);
  f[n++] = (SweepField){"fits", r->fits, NULL, true};
  row->fields = f;
  row->nfields = n;
}

/* After half a second, the whole run's time at the rate so far: past opt->max_seconds the
 * workers stop; past 10 s it is said on opt->notes.  Returns whether to go on. */
static bool run_estimate(Sweep *sw, const SweepOptions *opt, uint64_t done, uint64_t span, double elapsed) {
  sw->est_rate = (double)done / elapsed;
  sw->est_s = (double)span / sw->est_rate;
  char a[32], b[32], c[32];
  if (opt->notes && sw->est_s > 10 && !(opt->max_seconds > 0 && sw->est_s > opt->max_seconds))
    fprintf(opt->notes, "llmp sweep: %s points, about %s at %s points/s\n", sweep_grouped(a, span),
            sweep_duration_text(b, sw->est_s), sweep_rate_text(c, sw->est_rate));
  return !(opt->max_seconds > 0 && sw->est_s > opt->max_seconds);
}

/* Runs the workers: on threads, while this one draws the progress bar (on a terminal) of
 * the span points they share and estimates the time (run_estimate); on this thread alone
 * when one worker and neither will do.  Returns -2 when the estimate stopped them, else 0. */
static int run_workers(Sweep *sw, const SweepOptions *opt, Worker *w, int T, bool bar, atomic_uint_fast64_t *done,
                       uint64_t span) {
  if (T == 1 && !bar && !(opt->max_seconds > 0) && !opt->notes) {
    worker_main(&w[0]);
    return 0;
  }
  pthread_t *th = xcalloc((size_t)T, sizeof *th);
  int started = 0;
  for (; started < T; started++)
    if (pthread_create(&th[started], NULL, worker_main, &w[started])) break;
  atomic_fetch_sub(w[0].running, T - started); /* those that did not start */
  if (!started) worker_main(&w[0]);            /* no thread could start: evaluate here */
  SweepProgress pr;
  sweep_progress_start_on(&pr, span, stderr, bar && isatty(2), NULL);
  double t0 = sweep_now();
  bool estimated = false;
  int rc = 0;
  long nap = 1000000; /* 1 ms, doubling to 20: a graph of a few points ends within a millisecond */
  while (atomic_load(w[0].running) > 0) {
    uint64_t d = atomic_load(done);
    double t = sweep_now() - t0;
    if (!estimated && t >= 0.5 && d > 0) {
      estimated = true;
      if (!run_estimate(sw, opt, d, sw->est_span > span ? sw->est_span : span, t)) {
        atomic_store(w[0].stop, true);
        rc = -2;
      }
    }
    sweep_progress_update(&pr, d);
    nanosleep(&(struct timespec){0, nap}, NULL);
    if (nap < 20000000) nap = nap * 2 < 20000000 ? nap * 2 : 20000000;
  }
  sweep_progress_finish(&pr);
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
  free(th);
  return rc;
}

/* Merges the workers' kept points into one heap, their counts into sw->drops, *kept and
 * sw->pruned, and frees them. */
static SweepTop *merge_workers(Sweep *sw, Worker *w, int T, uint64_t *kept) {
  SweepTop *top = sweep_top_new(sw->keep, sw->l.maximize);
  int nr = sw->nreasons;
  *kept = 0;
  if (sw->sample_k > 0) sw->sample = sample_new(sw);
  sw->drops = xcalloc((size_t)nr + 1, sizeof *sw->drops);
  for (int r = 0; r < nr; r++) sw->drops[r].reason = sw->reasons[r];
  for (int t = 0; t < T; t++) {
    sweep_top_merge(top, w[t].top);
    *kept += w[t].kept;
    sw->pruned += w[t].pruned;
    for (int r = 0; r < nr; r++) sw->drops[r].count += w[t].dropped[r];
    for (int c = 0; w[t].sample && c <= nr; c++) sweep_top_merge(sw->sample[c], w[t].sample[c]);
    sample_tops_free(w[t].sample, nr + 1);
    sweep_top_free(w[t].top);
    free(w[t].vals);
    free(w[t].inputs);
    free(w[t].dropped);
  }
  free(w);
  return top;
}

int sweep_part_row(Sweep *sw, SweepRow *row) {
  Report r;
  double obj;
  int reason;
  if (point_report(sw, row->point, &r, &obj, &reason) < 0 || reason >= 0) {
    diag_plain(sw->d, sema_decl_path(sw->s, sw->decl), "internal error: kept point %llu fails when evaluated alone",
               (unsigned long long)row->point);
    return -1;
  }
  int rc = 0;
  if (memcmp(&obj, &row->objective, sizeof obj) != 0) {
    diag_plain(sw->d, sema_decl_path(sw->s, sw->decl),
               "internal error: point %llu's objective evaluated alone (%.17g) differs from the sweep's (%.17g)",
               (unsigned long long)row->point, obj, row->objective);
    rc = 1;
  }
  fill_row(sw, row, &r);
  return rc;
}

/* The kept points, ranked, each with its report's figures (sw->rows): every point is lowered
 * again alone, and its objective must be the sweep's, bit for bit.  Returns 0, or -1 after
 * reporting a point that fails alone. */
static int report_rows(Sweep *sw, SweepTop *top) {
  int n = sweep_top_count(top);
  sw->rows = xcalloc((size_t)n, sizeof *sw->rows);
  sw->nrows = sweep_top_rows(top, sw->rows);
  int rc = 0;
  for (int i = 0; i < sw->nrows; i++) /* rows point into top: fill_row copies what is kept */
    if (sweep_part_row(sw, &sw->rows[i]) != 0) rc = -1;
  return rc;
}

SweepTop *sweep_part_eval(Sweep *sw, const SweepOptions *opt, uint64_t begin, uint64_t end, uint64_t whole,
                          uint64_t *kept, double *elapsed, int *status) {
  free(sw->drops);
  sample_free(sw);
  sw->drops = NULL, sw->pruned = 0, sw->est_span = whole;
  int T = opt->threads < 1 ? 1 : opt->threads;
  sw->threads = T;
  atomic_uint_fast64_t next = begin, done = 0;
  atomic_bool stop = false;
  atomic_int running = T;
  sw->est_s = sw->est_rate = 0;
  uint64_t span = end - begin, chunk = span / ((uint64_t)T * 32); /* the most: 32 chunks a thread at least */
  if (chunk < 1) chunk = 1;
  Worker *w = xcalloc((size_t)T, sizeof *w);
  int nr = sw->nreasons;
  for (int t = 0; t < T; t++) {
    /* clang-format off */
    w[t] = (Worker){sw, sw->jit != NULL, !opt->no_prune, xcalloc((size_t)sw->l.g.nn, sizeof(double)),
                    xcalloc((size_t)sw->nax + 1, sizeof(double)), sweep_top_new(sw->keep, sw->l.maximize),
                    xcalloc((size_t)nr + 1, sizeof(uint64_t)), 0, 0, &next, &done, end, chunk, &stop, &running,
                    sw->sample_k > 0 ? sample_new(sw) : NULL};
    /* clang-format on */
  }
  double t0 = sweep_now();
  int stopped = run_workers(sw, opt, w, T, opt->progress && isatty(2), &done, span);
  *elapsed = sweep_now() - t0;
  *status = stopped;
  return merge_workers(sw, w, T, kept);
}

const SweepDrop *sweep_part_drops(const Sweep *sw, int *n, bool *maximize, const char **objective) {
  *n = sw->nreasons, *maximize = sw->l.maximize, *objective = sw->objective;
  return sw->drops;
}

int sweep_run(Sweep *sw, const SweepOptions *opt, SweepMeta *meta, const SweepRow **rows, int *nrows) {
  free(sw->rows); /* a previous run's result */
  sw->rows = NULL, sw->nrows = 0;
  if (sw->set) {
    *meta = (SweepMeta){sema_decl_name(sw->decl), sema_decl_path(sw->s, sw->decl), sw->hash, NULL, false, sw->keep, 0,
                        opt->shard_n > 1 ? opt->shard_k : 0, opt->shard_n > 1 ? opt->shard_n : 1, 0, 0, 0, NULL, 0,
                        0, NULL, NULL, NULL};
    int rc = sweep_set_run(sw->set, opt, meta, &sw->rows, &sw->nrows);
    *rows = sw->rows, *nrows = sw->nrows;
    return rc;
  }
  uint64_t begin = 0, end = sw->points, kept;
  if (opt->shard_n > 1) sweep_shard_range(sw->points, opt->shard_k, opt->shard_n, &begin, &end);
  double elapsed;
  int stopped;
  SweepTop *top = sweep_part_eval(sw, opt, begin, end, end - begin, &kept, &elapsed, &stopped);
  int rc = stopped ? stopped : report_rows(sw, top);
  if (!stopped && sw->sample) sample_build(sw);
  sweep_top_free(top);
  /* clang-format off */
  *meta = (SweepMeta){sema_decl_name(sw->decl), sema_decl_path(sw->s, sw->decl), sw->hash, sw->objective, sw->l.maximize,
                      sw->keep, sw->points, opt->shard_n > 1 ? opt->shard_k : 0, opt->shard_n > 1 ? opt->shard_n : 1,
                      end - begin, kept, sw->nreasons, sw->drops, elapsed, 0, NULL, NULL, NULL};
  /* clang-format on */
  *rows = sw->rows;
  *nrows = sw->nrows;
  return rc;
}
