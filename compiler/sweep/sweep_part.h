/* sweep_part.h - inside the sweep engine: a sweep whose axes include fields that change the
 * graph itself (structural axes: plan.dtype, placement, cluster.nodes, the cluster) is a set
 * of sweeps over the other axes, one per structural point, each lowered from a declaration
 * that sets those fields (sema_derive), staged and compiled as any sweep (sweep.c), and run
 * over its slice of the points; sweep_set.c ranks them together.
 *
 * Points: the structural axes are the outer digits, in declaration order, the last varying
 * fastest: point = structure * P + the structure's own point (P: the points of the other
 * axes, the same for every structure).  So a shard's slice is a run of whole structures and
 * at most two partial ones, and ranking, sharding and merging work as for one graph. */
#ifndef LLMP_SWEEP_PART_H
#define LLMP_SWEEP_PART_H

#include "sweep.h"

typedef struct SweepSet SweepSet;

/* --- sweep.c: one graph ---------------------------------------------------------------------- */

/* The source text of an expression in decl's file (copied into a), for messages and reason
 * names; "?" if it has none. */
const char *sweep_src_text(Sema *s, Decl *decl, Arena *a, AstNode *n);
/* Seconds on the monotonic clock. */
double sweep_now(void);

/* Lowers and stages the sweep decl over its graph-input axes, lowering `scenario` (decl, or a
 * declaration derived from it) with decl's lets, requires and objective.  NULL after
 * reporting to d. */
Sweep *sweep_part_new(Sema *s, HwSet *hw, Decl *decl, Decl *scenario, Diag *d, const SweepOptions *opt);
/* JIT-compiles it: NULL, or the error (malloc'd).  Safe on several parts at once. */
char *sweep_part_compile(Sweep *sw, FILE *dump_ir);
/* Whether the two compile to the same code: the same graph node for node (labels aside), the
 * same levels and equal hardware. */
bool sweep_part_same(const Sweep *a, const Sweep *b);
/* Uses from's compiled code: the graphs are the same, node for node. */
void sweep_part_share(Sweep *sw, const Sweep *from);
/* Evaluates its points [begin, end) (its own numbering); returns the best `keep` (rows with
 * no fields yet), *kept, *elapsed and *status (-2: stopped, estimated past opt->max_seconds
 * for the `whole` points left to run, this part's and the structures' after it); the drops per
 * reason are sweep_part_drops'. */
SweepTop *sweep_part_eval(Sweep *sw, const SweepOptions *opt, uint64_t begin, uint64_t end, uint64_t whole,
                          uint64_t *kept, double *elapsed, int *status);
const SweepDrop *sweep_part_drops(const Sweep *sw, int *n, bool *maximize, const char **objective);
uint64_t sweep_part_pruned(const Sweep *sw);
/* Its reasons (the checks' first, ncheck of them, then the requires'), its declaration lowered,
 * and whether it runs another part's code. */
const char *const *sweep_part_reasons(const Sweep *sw, int *n);
int sweep_part_ncheck(const Sweep *sw);
Decl *sweep_part_scenario(const Sweep *sw);
bool sweep_part_shares(const Sweep *sw);
/* Where it reports from now on (its lowering reported to another). */
void sweep_part_diag(Sweep *sw, Diag *d);
/* A kept row's fields (its report's figures), from the point lowered alone: 0; 1 after
 * reporting that its objective alone differs from the sweep's (the row is filled); -1 after
 * reporting that it fails alone.  Fields are in sw's arena. */
int sweep_part_row(Sweep *sw, SweepRow *row);

/* The sample (sweep.h's sweep_keep_sample): per_class points of each class, keyed by their
 * index in the whole sweep, this graph's first being base.  The last sweep_part_eval's
 * per-class tops (class r < the reasons: dropped for r; the last: ranked), or NULL; freed by
 * sweep_part_sample_free or the next run.  A class's kind. */
void sweep_part_sample(Sweep *sw, int per_class, uint64_t base);
SweepTop *const *sweep_part_sample_tops(const Sweep *sw);
void sweep_part_sample_free(Sweep *sw);
SweepDotKind sweep_part_kind(const Sweep *sw, int cls);
/* The dots of nclass tops (the last: the ranked, reason -1), their points plus offset, figures
 * not yet evaluated (malloc'd; *n of them). */
SweepDot *sweep_sample_dots(SweepTop *const *tops, int nclass, uint64_t offset, int *n);
/* Sorts dots by point, or by reason (the ranked last) and point. */
void sweep_sample_sort(SweepDot *d, int n, bool by_point);
/* The figures of n dots of this graph (their points minus lo are its own): the whole graph,
 * as lowering built it, evaluated by the interpreter. */
void sweep_part_figures(Sweep *sw, SweepDot *d, int n, uint64_t lo);

/* --- sweep_set.c: the structures ------------------------------------------------------------- */

/* Whether a `vary` statement of decl is structural; whether decl has one. */
bool sweep_vary_structural(Sema *s, Decl *decl, AstNode *vary);
bool sweep_set_wanted(Sema *s, Decl *decl);
/* Whether decl's `let`s set only fields a graph takes per point (not cluster.nodes,
 * plan.dtype, ...: those a `vary` sets, one graph per value); false after reporting to d. */
bool sweep_lets_ok(Sema *s, Decl *decl, Diag *d);
/* Derives, lowers and compiles (opt->jit; in parallel, once per distinct graph) every
 * structure.  NULL after reporting. */
SweepSet *sweep_set_new(Sema *s, HwSet *hw, Decl *decl, Diag *d, const SweepOptions *opt);
void sweep_set_free(SweepSet *set);
/* Runs opt's shard: meta comes with the names, hash, keep and shard; the rest is filled in,
 * and *rows (malloc'd) are the ranked kept rows. */
int sweep_set_run(SweepSet *set, const SweepOptions *opt, SweepMeta *meta, SweepRow **rows, int *nrows);
uint64_t sweep_set_points(const SweepSet *set);
uint64_t sweep_set_pruned(const SweepSet *set);
double sweep_set_jit_seconds(const SweepSet *set);
/* The structures; *compiled of them distinct graphs, lowered in *lower_seconds. */
int sweep_set_structures(const SweepSet *set, int *compiled, double *lower_seconds);
/* The part that evaluates point (NULL: its structure failed) and the point in its
 * numbering; the first part that lowered. */
Sweep *sweep_set_part(const SweepSet *set, uint64_t point, uint64_t *inner);
Sweep *sweep_set_first(const SweepSet *set);
int sweep_set_best(SweepSet *set, const SweepRow **rows, const char **axes);
/* sweep.h's sweep_axes and sweep_axis_at over every axis, the structural ones included (a
 * field NULL for a whole declaration, "gpu.memory" for a deeper path; the value as written);
 * the part whose rate estimated the run (NULL before a run). */
int sweep_set_axes(const SweepSet *set);
const char *sweep_set_axis_at(const SweepSet *set, int a, uint64_t point, const char **root, const char **field,
                              char *buf, size_t n);
Sweep *sweep_set_estimated(const SweepSet *set);
double sweep_set_point_objective(SweepSet *set, uint64_t point, int *reason);
void sweep_set_keep_sample(SweepSet *set, int per_class);
const SweepSample *sweep_set_sample(const SweepSet *set);

#endif
