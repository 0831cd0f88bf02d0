/* lower.h - from a checked scenario to its cost graph, and from the evaluated graph to a
 * Report.
 *
 * lower_scenario() reads the scenario's model, cluster and plan (through sema), walks the
 * model's blocks (embedding, layer, head) operator by operator, and builds the graph of one
 * training iteration: per-operator kernel calls for forward and backward, the
 * tensor-/context-/expert-parallel collectives that `split` and the plan imply, recompute,
 * the pipeline schedule over the stages' real times, the data-parallel gradient reduction
 * by ZeRO stage and bucket, the optimizer step, and memory per GPU.  Its named outputs
 * (lower_private.h, LOWER_OUTPUTS, and report.h's parts and memory kinds) are what lower_report() reads into a Report.
 *
 * Axes (sweeps): a plan or model field listed in LowerAxes becomes a graph input instead of
 * a constant (the sweep's arguments), or a given constant (one point of a sweep lowered
 * alone).  Decisions that depend on an axis (sequence parallelism, ZeRO stage, schedule,
 * recompute, overlap) become selections in the graph, and the checks that a plan divides
 * become check nodes (Lowered.checks) instead of errors.  With no axes, every plan value
 * is a constant and the graph folds to kernel calls and arithmetic on their results. */
#ifndef LLMP_LOWER_H
#define LLMP_LOWER_H

#include "front/arena.h"
#include "graph.h"
#include "hw.h"
#include "report/report.h"
#include "front/sema.h"

/* One operator of a block as the trace shows it: compute or communication, with the nodes
 * that hold its forward and backward seconds for one micro-batch. */
typedef struct LowerOp {
  const char *name; /* "qkv", "qkv tp allreduce" (arena of the Lowered) */
  char stream;      /* 'c' compute, 't' TP/CP/EP communication */
  GId fwd, bwd;
} LowerOp;

/* The blocks: embedding, the layers' (a pattern's groups 0 .. 3: LB_LAYER, LB_GROUP1 ..), the
 * head, and multi-token prediction's. */
enum { LB_EMBEDDING, LB_LAYER, LB_HEAD, LB_MTP, LB_GROUP1, LB_GROUP2, LB_GROUP3, LB_N };

/* A field a sweep varies: plan.X or model.X.  Enumerations and booleans are numbered by
 * lower_axis_code. */
typedef struct LowerAxis {
  const char *root;  /* "plan" or "model" */
  const char *field; /* "tp", "schedule", "layers" */
  int input;         /* the graph input holding it, or -1: `value` */
  double value;
} LowerAxis;

typedef struct LowerAxes {
  const LowerAxis *axis;
  int n;
  Decl *sweep; /* its `let`s set fields; its `require`s and objective become
                                   the outputs "require.N" and "objective" */
} LowerAxes;

/* A condition every evaluated point must meet (1) before its kernels run: arithmetic on
 * the axes only.  `reason` says what fails ("model.layers does not divide by pp"). */
typedef struct LowerCheck {
  GId ok;
  const char *reason;
} LowerCheck;

typedef struct Lowered {
  Graph g;
  Report meta;        /* names and plan, filled by lowering */
  LowerOp *ops[LB_N]; /* per block, in execution order */
  int nops[LB_N], capops[LB_N];
  GId pipe;           /* the pipeline kernel call */
  GId stage_memory[2][RM_N]; /* memory by part of the first and of the last stage */
  Arena names;        /* the op names */
  LowerCheck *checks; /* with axes: in the order they are tested */
  int nchecks, capchecks;
  int nrequires; /* outputs require.0 .. require.N-1 */
  bool maximize; /* objective's sense (when the sweep has one) */
} Lowered;

/* Builds the graph; 0 on success, or -1 after reporting the reason to d (a plan that does
 * not divide, a missing block, an operator argument that is not a whole number, ...). */
int lower_scenario(Sema *s, HwSet *hw, Decl *scenario, Diag *d, Lowered *out);

/* The same with axes: a sweep's graph (inputs), or one of its points (constants). */
int lower_with_axes(Sema *s, HwSet *hw, Decl *scenario, const LowerAxes *axes, Diag *d, Lowered *out);

/* Whether a sweep's `vary root.field` can be a graph input: the plan's parallel sizes,
 * batches, zero, bucket, flags and coded enumerations, and a number of the model.  Any other
 * field (plan.dtype, placement, cluster.nodes, the cluster itself) changes the graph: a sweep
 * lowers one graph per value of those (sweep_struct.c). */
bool lower_axis_is_input(Sema *s, Decl *scenario, const char *root, const char *field);

/* The number an axis value stands for: numbers as they are, true/false 1/0, and the words
 * of the enumerations a sweep can vary (schedule, recompute, layer_partition).  False if
 * `word` is not something plan.<field> can be varied over. */
bool lower_axis_code(const char *field, const char *word, double *code);
void lower_free(Lowered *l);

/* Fills r from the evaluated values (vals from graph_eval over l->g). */
void lower_report(const Lowered *l, const double *vals, Report *r);

/* Why figures from vals are not finite (a report's iteration or peak), into why (n bytes):
 * the kernel call that rejected its arguments or answered an infinite time, its arguments
 * and the limit they broke; else the arithmetic between the calls. */
void lower_why_not_finite(const Graph *g, const double *vals, char *why, size_t n);

/* For a report whose plan does not fit: the changes of plan (tp, pp, recompute, ZeRO,
 * micro_batch, cuda_graphs; one or two at a time, on top of axes, a sweep point's, or NULL)
 * that fit, each lowered and evaluated, the fastest REPORT_FIXES into r->fix, and
 * cuda_graphs off alone into r->graphs_off where it saves memory.  Nothing for one that
 * fits. */
void lower_fit_changes(Sema *s, HwSet *hw, Decl *scenario, const LowerAxes *axes, Report *r);

/* The trace of one iteration (report_trace), from the evaluated values.  0, or -1 if the
 * file could not be written. */
int lower_trace(const Lowered *l, const double *vals, const Report *r, FILE *out);

/* What lower_trace writes, as report_trace's input (`in`) and the storage it points to: 0,
 * or -1 if the pipeline's arguments are not a schedule; lower_trace_close after either. */
typedef struct LowerTrace {
  TraceInput in;
  RtPipeEvent *events;
  TraceOp **ops; /* per chunk */
  int *nops, nchunks;
  double *buf;
  int (*counts)[RT_MAX_GROUPS];
} LowerTrace;
int lower_trace_open(const Lowered *l, const double *vals, const Report *r, LowerTrace *t);
void lower_trace_close(LowerTrace *t);

/* The kernel calls the report counts (Report.calls), in graph order: the kernel, the call's
 * label, whether a calibration table corrected it, and its value (seconds, for a time). */
typedef struct LowerCall {
  const char *kernel, *label;
  bool calibrated;
  double value;
} LowerCall;
/* Returns the count; *out is malloc'd (the strings are the graph's and the kernels'). */
int lower_calls(const Lowered *l, const double *vals, LowerCall **out);

/* Memory per GPU, by part, of the first ([0]) and the last ([1]) pipeline stage, the two the
 * model computes (Report.memory is the larger of them). */
void lower_stage_memory(const Lowered *l, const double *vals, double mem[2][RM_N]);

#endif
