/* cg_llvm.h - code generation: the levels of a cost graph as LLVM IR functions.
 *
 * cg_module() emits, for each GLevel k of a graph (graph.h), the function
 *     i32 lvl<k>(ptr inputs, ptr vals)
 * that evaluates exactly what graph_eval_level(g, &levels[k], inputs, vals) evaluates, in the
 * same order and with the same operations (no fast-math flags; fmod as frem, ceil and floor as
 * intrinsics, comparisons as fcmp with C's ordered or unordered predicate), so that both give
 * the same bits; it returns the same code.  Kernel calls go through the one table
 * runtime/kernels.def: each wrapper is declared once under its C name (cg_kernel_symbol) and
 * called with the graph's target pointer as a constant, an args array and an out array.
 *
 * Values stay in SSA registers where they can.  vals[id] is written for a node that is read
 * outside the function that computes it (by a later level, or by another chunk of its
 * level), for every graph output, and with CG_STORE_ALL for every node the level evaluates
 * (as the interpreter does); a kernel call stored writes its RT_KERNEL_NOUT results straight
 * into vals.  Constants are immediates everywhere: a constant node is written to vals only
 * when it is stored, and never read from there.  (The interpreter reads a constant from
 * vals, so the two agree when every constant a level reads was evaluated before it, by an
 * earlier level or earlier in the same level's lists.)  A level of more than chunk_nodes
 * nodes is split into chunk functions (internal, noinline) of guard and body nodes that the
 * level function calls in order, so the backend's time stays linear in the graph's size.
 *
 * Ownership: the module returned belongs to the caller; g and levels are only read. */
#ifndef LLMP_CG_LLVM_H
#define LLMP_CG_LLVM_H

#include <llvm-c/Core.h>

#include "lower/graph.h"

enum {
  CG_STORE_ALL = 1,      /* write every node evaluated to vals, as graph_eval_level does */
  CG_CHUNK_NODES = 1000, /* default nodes per chunk function */
};

typedef struct CgOptions {
  int flags;       /* CG_STORE_ALL */
  int chunk_nodes; /* nodes per chunk function; 0: CG_CHUNK_NODES */
} CgOptions;

/* Builds and verifies the module of the levels in ctx.  stored (g->nn bytes) receives 1 for
 * each node that some level function writes to vals, 0 for the others.  Returns the module,
 * or NULL with *error (malloc'd) if verification fails. */
LLVMModuleRef cg_module(LLVMContextRef ctx, const Graph *g, const GLevel *levels, int nlevels, const CgOptions *o,
                        unsigned char *stored, char **error);

/* The name of level k's function ("lvl<k>") in buf of n bytes. */
void cg_level_name(int k, char *buf, size_t n);

/* The C name of kernel k's wrapper as the IR calls it ("k_linear"), from kernels.def. */
const char *cg_kernel_symbol(RtKernel k);

#endif
