/* lower.h - from a checked scenario to its cost graph, and from the evaluated graph to a
 * Report.
 *
 * lower_scenario() reads the scenario's model, cluster and plan (through sema), walks the
 * model's blocks (embedding, layer, head) operator by operator, and builds the graph of one
 * training iteration: per-operator kernel calls for forward and backward, the
 * tensor-/context-/expert-parallel collectives that `split` and the plan imply, recompute,
 * the pipeline schedule over the stages' real times, the data-parallel gradient reduction
 * by ZeRO stage and bucket, the optimizer step, and memory per GPU.  Its named outputs
 * (see lower.c, `outputs`) are what lower_report() reads into a Report.
 *
 * Axes: a plan field listed in LowerAxes becomes a graph input instead of a constant (the
 * sweep's arguments); with none, every plan value is a constant and the graph folds to
 * kernel calls and arithmetic on their results. */
#ifndef LLMP_LOWER_H
#define LLMP_LOWER_H

#include "arena.h"
#include "graph.h"
#include "hw.h"
#include "report.h"
#include "sema.h"

/* One operator of a block as the trace shows it: compute or communication, with the nodes
 * that hold its forward and backward seconds for one micro-batch. */
typedef struct LowerOp {
  const char *name;             /* "qkv", "qkv tp allreduce" (arena of the Lowered) */
  char stream;                  /* 'c' compute, 't' TP/CP/EP communication */
  GId fwd, bwd;
} LowerOp;

enum { LB_EMBEDDING, LB_LAYER, LB_HEAD, LB_N };

typedef struct Lowered {
  Graph g;
  Report meta;                  /* names and plan, filled by lowering */
  LowerOp *ops[LB_N];           /* per block, in execution order */
  int nops[LB_N], capops[LB_N];
  GId pipe;                     /* the pipeline kernel call */
  Arena names;                  /* the op names */
} Lowered;

/* Builds the graph; 0 on success, or -1 after reporting the reason to d (a plan that does
 * not divide, a missing block, an operator argument that is not a whole number, ...). */
int lower_scenario(Sema *s, HwSet *hw, Decl *scenario, Diag *d, Lowered *out);
void lower_free(Lowered *l);

/* Fills r from the evaluated values (vals from graph_eval over l->g). */
void lower_report(const Lowered *l, const double *vals, Report *r);

/* The trace of one iteration (report_trace), from the evaluated values.  0, or -1 if the
 * file could not be written. */
int lower_trace(const Lowered *l, const double *vals, const Report *r, FILE *out);

#endif
