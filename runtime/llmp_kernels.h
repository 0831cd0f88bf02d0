/* llmp_kernels.h - the runtime's kernels behind one calling convention, for evaluators.
 *
 * The cost graph (compiler/lower/graph.c) is a DAG of scalar nodes; a kernel node calls
 *   fn(target, args, out)
 * where target is the graph's RtGpu (G kernels) or RtCluster (C kernels) or NULL, args the
 * kernel's arguments as doubles (dtypes, flags and counts too: they are small integers,
 * exact in a double), and out receives RT_KERNEL_NOUT doubles:
 *   G kernels:  out[0] forward s, out[1] backward s, out[2] flags (RT_CALIBRATED, ...)
 *   C kernels:  out[0] s of one call, out[1] 0, out[2] flags
 *   pipeline:   out[0] makespan s, out[1] makespan with free sends s, out[2] flags
 *   pipeline_makespan: out[0] as pipeline's (the same bits), out[1] NaN, out[2] flags
 * One signature keeps the JIT's code generation a loop over this table. */
#ifndef LLMP_KERNELS_H
#define LLMP_KERNELS_H

#include <stddef.h>

#include "llmp_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
#define X(e, name, fn, nargs, target, argnames) RTK_##e,
#include "kernels.def"
#undef X
  RTK_N
} RtKernel;

/* The pipeline kernels' arguments (kernels.def), the most any kernel takes, and where the
 * layout id sits among them. */
enum { RT_PIPE_NARGS = 28, RT_PIPE_LAYOUT = 15 };
enum { RT_KERNEL_NOUT = 3, RT_KERNEL_MAXARGS = RT_PIPE_NARGS };

typedef void RtKernelFn(const void *target, const double *args, double *out);

typedef struct RtKernelInfo {
  const char *name;
  int nargs;
  char target;          /* 'G', 'C' or 'N' */
  const char *argnames; /* space-separated */
  RtKernelFn *fn;
} RtKernelInfo;

extern const RtKernelInfo rt_kernels[RTK_N];

/* Why kernel k answers RT_BAD_ARGS for args on target (as rt_kernels[k].fn takes them): the
 * first limit they break, as a phrase into why (n bytes), for messages.  It restates the
 * wrappers' checks; what it cannot pin to one argument (sizes whose product overflows, a
 * pipeline whose stage times do) it says as such. */
void rt_kernel_why(RtKernel k, const void *target, const double *args, char *why, size_t n);

/* Empties the calling thread's memos of pipeline results and of the end devices' layers
 * (layers_on) (benchmarks: each run starts cold). */
void rt_pipeline_memo_clear(void);

/* The nodes x gpus_per_node layout of a group of `size` ranks whose consecutive members are
 * `stride` ranks apart, on nodes of gpn GPUs (ranks fill a node before the next one):
 * stride >= gpn puts every member on its own node; size * stride <= gpn keeps them in one
 * node; otherwise gpn / stride members share each node.  Returns 0, or -1 if the group
 * does not tile the nodes evenly (stride and gpn not multiples of one another). */
int rt_group_layout(int size, int stride, int gpn, int *nodes, int *gpus_per_node);

/* The pipeline kernel's arguments (kernels.def) as the RtPipeline they describe: chunk c's
 * times are its layers' (rt_partition_layers) plus the embedding's on the first chunk and the
 * head's on the last.  The arrays point into buf (4 * stages * chunks doubles, at most
 * 4 * RT_MAX_CHUNKS).  Returns 0, or -1 if the arguments describe no pipeline. */
int rt_pipeline_of_args(const double *args, RtPipeline *p, double *buf);

#ifdef __cplusplus
}
#endif

#endif
