/* sweep.h - `llmp sweep`: every point of a sweep's `vary` axes, evaluated by the staged,
 * JIT-compiled cost graph.
 *
 * A sweep is lowered once, with its axes as graph inputs (lower_with_axes).  Its points are
 * the product of the axes, numbered in loop order: the axis that the most kernel calls depend
 * on is the outermost loop, the one the fewest depend on the innermost, so a node is evaluated
 * again only when an axis it depends on changes (the graph's nodes are split into one GLevel
 * per loop).  Only what the objective, the requires and the checks need is evaluated, and
 * what only the objective needs (the pipeline simulation) is each level's lazy part, run for
 * the points that pass.  A point whose plan does not divide fails a check before its kernels
 * run; one that fails a `require` is dropped; both are counted per reason.  The others are
 * ranked by the objective and the best `keep` are kept (a bounded heap per thread), then
 * lowered again one by one with their axes as constants, for their report: the figures a
 * sweep prints are those `llmp run` prints for that plan, and the objective is checked to be
 * the same bits.
 *
 * Points are spread over threads in chunks timed to take a fraction of a second each
 * (sweep_chunk_next); the result does not depend on the number of threads, the chunks or the
 * shard split (the ranking is a total order: objective, then point). */
#ifndef LLMP_SWEEP_H
#define LLMP_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lower/graph.h"
#include "lower/hw.h"
#include "report/report.h"
#include "front/sema.h"
#include "sweep_io.h"

typedef struct Sweep Sweep;

typedef struct SweepOptions {
  int threads;          /* >= 1 */
  bool jit;             /* false: the interpreter (graph_eval_level) */
  int shard_k, shard_n; /* evaluate shard k of n (0 and 1: all points) */
  bool progress;        /* a progress bar on a terminal */
  FILE *dump_ir;        /* print the JIT's module here (NULL: no) */
  bool no_prune;        /* simulate every point's pipeline, even where its lower bound
                                   shows it cannot be kept (benchmarks, tests) */
  bool keep_unfit;      /* rank plans that do not fit in memory (default: dropped) */
  bool keep_equivalent; /* rank plans equivalent to another (default: dropped) */
  double max_seconds;   /* > 0: stop a run whose rate, measured over its first half second,
                                   says it takes longer (sweep_run returns -2); 0: no limit */
  FILE *notes;          /* where a run estimated at more than 10 s says so (NULL: nowhere) */
} SweepOptions;

/* Lowers and stages a sweep, and compiles it when opt->jit.  Returns NULL after reporting
 * to d. */
Sweep *sweep_new(Sema *s, HwSet *hw, Decl *sweep, Diag *d, const SweepOptions *opt);
void sweep_free(Sweep *sw);

/* Evaluates the points of opt's shard.  The rows (the kept points with their report's
 * figures, ranked) and the metadata stay valid until sweep_free.  Returns 0, or -1 after
 * reporting a kept point that could not be evaluated alone.  A run replaces the previous
 * run's rows. */
int sweep_run(Sweep *sw, const SweepOptions *opt, SweepMeta *meta, const SweepRow **rows, int *nrows);
/* The last run's estimate of its whole time in seconds, and the rate it was measured at in
 * points per second (both 0 when the run ended before it could measure). */
double sweep_estimate(const Sweep *sw, double *rate);
/* The report `llmp run` prints for a point, lowered alone.  Returns 0, or -1 after reporting. */
int sweep_point_report(Sweep *sw, uint64_t point, Report *r);

/* Chunks: each thread takes the points a chunk at a time, and sizes its next chunk from how
 * long its last took: chunk points took `seconds`, so the next is about SWEEP_CHUNK_SECONDS'
 * worth (at most 8 times the last, at least 1 point, at most max).  So a chunk ends within a
 * fraction of a second however large the sweep, and the progress bar moves. */
#define SWEEP_CHUNK_SECONDS 0.1
uint64_t sweep_chunk_next(uint64_t chunk, double seconds, uint64_t max);

/* What the sweep evaluates, the SweepMeta.hash sweep_run writes and `llmp merge` compares:
 * 16 hex digits of FNV-1a over llmp's version, the sweep's name, the text of every file of
 * the compilation, the calibration tables lowering loaded, and keep_unfit and
 * keep_equivalent where set. */
const char *sweep_hash_text(const Sweep *sw);

/* From the next run on, keep a sample of the points evaluated, with their figures: of each
 * drop reason and of the ranked points, the per_class points of smallest sample key
 * (SweepSample, sweep_io.h), each evaluated again over the whole graph for its iteration time
 * and peak memory, for the pictures of --html.  0 (the default): none, at no cost.  Points
 * that fail a check (a plan that does not divide) are not sampled: no kernel ran for them. */
void sweep_keep_sample(Sweep *sw, int per_class);
/* The last run's sample (valid until the next run or sweep_free); NULL without one. */
const SweepSample *sweep_sample(const Sweep *sw);

/* With fields that change the graph among the axes (cluster.nodes, plan.dtype, placement,
 * the cluster: sweep_part.h), the last run's best point of each of their values (each
 * structure, in point order; those that kept a point), with the rows' fields and the days
 * 10^12 tokens take at its rate; *axes names those fields ("cluster.nodes, plan.dtype").
 * Without such fields, 0. */
int sweep_best(const Sweep *sw, const SweepRow **rows, const char **axes);
/* The graphs lowered (one per structure), *compiled of them distinct (JIT-compiled), and the
 * seconds deriving and lowering them took; 1, 1 and 0 without structural axes. */
int sweep_structures(const Sweep *sw, int *compiled, double *lower_seconds);

/* The sweep of one graph that evaluates point (sw itself without structural axes, NULL where
 * the point's structure could not be lowered), and the point in its numbering: what a caller
 * that lowers a kept point alone (--explain, --emit) asks about it. */
Sweep *sweep_point_owner(Sweep *sw, uint64_t point, uint64_t *local);

/* What a writer of a sweep's plans reads (sweep_emit.c): its compilation, its declaration,
 * where it reports, and axis a (declaration order) at a point: its root ("plan"), field, and
 * value as a `vary` list writes it ("4", "interleaved", "true"), into buf; returns buf. */
Sema *sweep_sema(const Sweep *sw);
Decl *sweep_decl(const Sweep *sw);
Diag *sweep_diag(const Sweep *sw);
int sweep_axes(const Sweep *sw);
const char *sweep_axis_at(const Sweep *sw, int a, uint64_t point, const char **root, const char **field, char *buf,
                          size_t n);

/* Writes the plans of rows (the last run's) as .llmp scenarios (sweep_emit.c): to a file
 * ending in .llmp, one scenario a plan (NAME_1, NAME_2, ...), or to a folder (one that exists,
 * or a path ending in '/'), a file a plan (NAME_1.llmp, ...), each through a temporary file
 * and a rename.  Returns 0, or -1 after reporting. */
int sweep_emit(Sweep *sw, const SweepRow *rows, int n, const char *path);

/* Figures for benchmarks and tests. */
uint64_t sweep_points(const Sweep *sw);
int sweep_levels(const Sweep *sw);
double sweep_jit_seconds(const Sweep *sw); /* the time the JIT took (0 without) */
/* Of the last run's points that passed, how many skipped their pipeline simulations: the
 * objective's lower bound was already worse than the worst point kept (SweepOptions.no_prune
 * turns this off; the results are the same). */
uint64_t sweep_pruned(const Sweep *sw);
const Graph *sweep_graph(const Sweep *sw);
/* Loop k (0 outermost): the axis it varies ("plan.tp"), its values, and the nodes and kernel
 * calls evaluated each time it advances. */
const char *sweep_loop(const Sweep *sw, int k, int *values, int *nodes, int *calls);
/* The graph inputs (one per axis, declaration order) of a point. */
void sweep_point_inputs(const Sweep *sw, uint64_t point, double *inputs);
/* The objective (NaN when a check or require drops it) and the drop reason index (-1 kept)
 * of one point, evaluated alone by the interpreter over the whole graph. */
double sweep_point_objective(Sweep *sw, uint64_t point, int *reason);

#endif
