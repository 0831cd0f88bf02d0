/* graph.h - the cost graph: a DAG of scalar nodes that one evaluation of a scenario runs.
 *
 * Lowering (compiler/lower/lower*.c) builds it from a scenario: constants (model and cluster figures, the
 * plan's fields), inputs (a sweep's axes, numbered 0..ninputs-1), arithmetic, selections and
 * kernel calls into the runtime (llmp_kernels.h).  Nodes are appended in dependence order,
 * so index order is a topological order and an evaluation is one pass over the array.
 * The builder folds arithmetic on constants and shares identical nodes (hash-consing), so a
 * layer lowered twice costs one set of kernel calls.  Kernel calls are never folded: they
 * stay in the graph for `llmp graph`, the trace and the JIT, which calls the same functions
 * in the same order as graph_eval (docs/architecture.md).
 *
 * A kernel call node k holds out[0]; nodes k+1 .. k+RT_KERNEL_NOUT-1 are its other results
 * (GN_RESULT), so every value has a node index.  Named outputs (iteration, memory.peak, ...)
 * are the graph's results. */
#ifndef LLMP_GRAPH_H
#define LLMP_GRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include "llmp_kernels.h"

typedef enum {
  /* clang-format off */
  GN_CONST, GN_INPUT, GN_ADD, GN_SUB, GN_MUL, GN_DIV, GN_MOD, GN_MIN, GN_MAX, GN_CEIL,
  GN_FLOOR, GN_EQ, GN_NE, GN_LT, GN_LE, GN_GT, GN_GE, GN_AND, GN_OR, GN_NOT, GN_NEG,
  GN_SELECT,                    /* a ? b : c */
  GN_CALL,                      /* kernel `kernel` over args[arg0 .. arg0+nargs-1] */
  GN_RESULT,                    /* result `a` of the call just before it */
  /* clang-format on */
  GN_NOPS
} GOp;

typedef int GId; /* a node index */

typedef struct GNode {
  unsigned char op;     /* GOp */
  unsigned char kernel; /* RtKernel, for GN_CALL */
  unsigned short nargs;
  GId a, b, c;       /* operands; GN_INPUT: a = input index; GN_RESULT: a = slot */
  int arg0;          /* GN_CALL: index into Graph.args */
  double k;          /* GN_CONST */
  const char *label; /* GN_CALL: what it costs ("layer qkv"); not owned */
} GNode;

typedef struct GOutput {
  const char *name; /* not owned */
  GId id;
} GOutput;

typedef struct Graph {
  GNode *n;
  int nn, capn;
  GId *args;
  int nargs, capargs;
  GId *hash; /* open addressing over node indices, -1 empty */
  unsigned hcap;
  GOutput *out;
  int nout, capout;
  int ninputs;
  const void *gpu;     /* RtGpu for G kernels */
  const void *cluster; /* RtCluster for C kernels */
} Graph;

void graph_init(Graph *g, const void *gpu, const void *cluster);
void graph_free(Graph *g);

GId g_const(Graph *g, double x);
GId g_input(Graph *g, int index);
GId g_bin(Graph *g, GOp op, GId a, GId b);
GId g_un(Graph *g, GOp op, GId a);
GId g_select(Graph *g, GId cond, GId a, GId b);
/* A kernel call; returns its first result (out[0]); result i is the node returned + i. */
GId g_call(Graph *g, RtKernel k, const GId *args, int nargs, const char *label);

static inline GId g_add(Graph *g, GId a, GId b) { return g_bin(g, GN_ADD, a, b); }
static inline GId g_sub(Graph *g, GId a, GId b) { return g_bin(g, GN_SUB, a, b); }
static inline GId g_mul(Graph *g, GId a, GId b) { return g_bin(g, GN_MUL, a, b); }
static inline GId g_div(Graph *g, GId a, GId b) { return g_bin(g, GN_DIV, a, b); }
static inline GId g_max(Graph *g, GId a, GId b) { return g_bin(g, GN_MAX, a, b); }
static inline GId g_min(Graph *g, GId a, GId b) { return g_bin(g, GN_MIN, a, b); }

bool g_is_const(const Graph *g, GId a, double *value);

/* The nodes node i reads, into ops (room for RT_KERNEL_MAXARGS): a call's arguments, an
 * operation's operands, a result's call; none for a constant or an input.  Returns the count. */
int graph_operands(const Graph *g, GId i, GId *ops);

void graph_output(Graph *g, const char *name, GId id);
GId graph_find_output(const Graph *g, const char *name); /* -1 if none */

/* Evaluates every node: vals has g->nn slots; inputs g->ninputs values. */
void graph_eval(const Graph *g, const double *inputs, double *vals);

/* A staged evaluation, as a sweep runs it.  The nodes are split into levels; level k is
 * evaluated again whenever the k-th axis of the sweep's loop nest changes, so a node that
 * depends only on outer axes is evaluated once for all the inner points.  A level evaluates
 * its guard nodes (what its checks need: arithmetic only, never a kernel call), then tests
 * its checks in order: at the first whose value is 0 the level stops and returns 1 + that
 * check's index; otherwise it evaluates its body and returns 0.  Every node a level
 * evaluates is written to vals[node] (a call writes its RT_KERNEL_NOUT results there);
 * nodes of earlier levels are read from vals.  Node lists are in index (topological)
 * order; GN_RESULT nodes may appear in them and cost nothing. */
typedef struct GLevel {
  const GId *guard;
  int nguard;
  const GId *checks; /* each a node of guard or of an earlier level */
  int nchecks;
  const GId *body;
  int nbody;
} GLevel;

/* The interpreter's evaluation of one level (the reference for the JIT's level functions). */
int graph_eval_level(const Graph *g, const GLevel *lv, const double *inputs, double *vals);

const char *gop_name(GOp op);

#endif
