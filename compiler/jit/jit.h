/* jit.h - native evaluators of a cost graph, compiled by LLVM's ORC LLJIT.
 *
 * jit_compile() turns a graph and its levels (GLevel, graph.h) into one native function per
 * level, through cg_llvm.c (IR), LLVMRunPasses("default<O2>") and the LLJIT.  Level k's
 * function computes what graph_eval_level(g, &levels[k], inputs, vals) computes, to the bit,
 * and returns the same code; which nodes it writes to vals is jit_stored() (every node it
 * evaluates with JIT_STORE_ALL; else those read by another level or another chunk of their
 * level, and the graph's outputs; cg_llvm.h says why constants are never read from vals).
 * The kernels are the runtime's own functions (rt_kernels[], kernels.def), given to the JIT
 * as absolute symbols, so nothing is looked up in the process.
 *
 * Lifecycle: jit_compile -> jit_level (any number of calls, from any threads: a level
 * function only reads inputs and writes the vals it is given, so each thread owns its own
 * vals) -> jit_free.  jit_shutdown() once at exit, after the last jit_free, releases LLVM's
 * global state (LLVMShutdown); no Jit may be compiled after it.
 *
 * `llmp run` evaluates a whole graph as one level whose body is every node, in index order:
 *     Jit *j = jit_compile_graph(&l.g, JIT_STORE_ALL, &err);     (guard and checks empty)
 *     jit_level(j, 0)(inputs, vals);    -- vals now equals graph_eval(&l.g, inputs, vals)'s
 *
 * Ownership: the Jit does not keep g or levels (they may be freed after jit_compile), but
 * the compiled code holds the graph's gpu and cluster pointers: they must outlive the Jit.
 * An *error is malloc'd: the caller frees it. */
#ifndef LLMP_JIT_H
#define LLMP_JIT_H

#include <stdbool.h>

#include "lower/graph.h"

typedef struct Jit Jit;

typedef int (*JitLevelFn)(const double *inputs, double *vals);

enum {
  JIT_STORE_ALL = 1, /* write every node evaluated to vals (llmp run, its report and trace) */
  JIT_IR = 2,        /* keep the module's text before the IR passes (jit_ir) */
  JIT_IR_OPT = 4,    /* keep it after them */
};

typedef struct JitOptions {
  int flags;       /* JIT_* */
  int chunk_nodes; /* nodes per chunk function (cg_llvm.h); 0: the default */
} JitOptions;

/* Compiles the levels; NULL with *error on failure.  o NULL: the defaults (flags 0). */
Jit *jit_compile(const Graph *g, const GLevel *levels, int nlevels, int flags, char **error);
Jit *jit_compile_opts(const Graph *g, const GLevel *levels, int nlevels, const JitOptions *o, char **error);
/* One level whose body is every node of g: jit_level(j, 0) evaluates what graph_eval does. */
Jit *jit_compile_graph(const Graph *g, int flags, char **error);

JitLevelFn jit_level(const Jit *j, int k);
/* Whether level functions write node id to vals. */
bool jit_stored(const Jit *j, GId id);
/* Wall-clock seconds jit_compile took: code generation, IR passes and machine code. */
double jit_compile_seconds(const Jit *j);
/* The module as text: which = JIT_IR (before the passes) or JIT_IR_OPT (after), if that flag
 * was given to jit_compile; else NULL.  Owned by the Jit. */
const char *jit_ir(const Jit *j, int which);

void jit_free(Jit *j);
void jit_shutdown(void);

#endif
