/* ops.h - the operator kernels as data (internal: runtime/, the fitter and tests).
 *
 * rt_op_physics() is every operator kernel's physics model behind one entry point, so that
 * the fitter evaluates exactly the model the public kernels evaluate and computes the same
 * table coordinates.  Its argument vector per op (a[]):
 *   LINEAR m k n bias | BMM batch m k n | SOFTMAX, MASKED_SOFTMAX, MASKED_FILL rows cols |
 *   FLASH, FLASH_FULL b l heads kv_heads head_dim | LAYERNORM, RMSNORM tokens hidden |
 *   GELU, SWIGLU, ADD elements | ROPE tokens heads head_dim | EMBEDDING tokens rows hidden |
 *   CROSS_ENTROPY tokens vocab | ADAM params tensors */
#ifndef LLMP_RT_OPS_H
#define LLMP_RT_OPS_H

#include <math.h>

#include "calib.h"

enum { RT_OP_MAX_ARGS = 5 };

/* Number of arguments of op in a[]. */
int rt_op_nargs(RtOp op);

/* The uncalibrated cost of op, and in x[] (rt_op_info[op].naxes values) the coordinates at
 * which its table is read.  Arguments are not checked: callers check them first
 * (rt_op_eval() does; sizes must be >= 1 and finite, the GPU's figures positive). */
RtCost rt_op_physics(const RtGpu *g, RtOp op, RtDtype dt, const double *a, double *x);

/* A time no run of op can beat: the matrix products' FLOPs at g's datasheet peak for dt
 * (ops.c has the derivation); 0 for the ops whose work is memory traffic.  flops (may be
 * NULL) receives those FLOPs, fwd [0] and bwd [1].  Arguments as rt_op_physics(); below the
 * physics wherever they are in range. */
RtCost rt_op_min_time(const RtGpu *g, RtOp op, RtDtype dt, const double *a, double *flops);

/* Physics, then the table's correction: what the public kernels return. */
RtCost rt_op_eval(const RtGpu *g, RtOp op, RtDtype dt, const double *a);

/* One GEMM (batch x [m,k]x[k,n]) on g, uncalibrated: seconds.  Exposed for the validation
 * against published achievable-matmul figures. */
double rt_gemm_time(const RtGpu *g, RtDtype dt, double batch, double m, double k, double n);

/* rt_gemm_time() in parts, for kernels that run several GEMMs on one GPU and dtype: the
 * per-(GPU, dtype) constants once, each size's tile counts once.  rt_gemm_q() returns exactly
 * rt_gemm_time(g, dt, batch, m, k, n) when q comes from (g, dt) and dm, dn from m, n. */
enum { RT_GEMM_TILES = 5 };
typedef struct RtGemm {
  double sms, eb, inv_bw, in_flight; /* rt_mem_time()'s figures, its division by the
                                        * bandwidth a product with inv_bw */
  double depth_s[RT_GEMM_TILES];     /* seconds of one SM per tile and unit of K depth, for the
                                    * tiles 256x128, 128x256, 128x128, 128x64, 64x64 (gemm.c) */
} RtGemm;
typedef struct RtGemmDim {
  double c[3]; /* ceil(v / 64), ceil(v / 128), ceil(v / 256) */
} RtGemmDim;
void rt_gemm_setup(const RtGpu *g, RtDtype dt, RtGemm *q);
/* The part's matmul_ceiling over its generation's ceiling, or 1: scales all tensor-core work. */
double rt_ceiling_scale(const RtGpu *g);
/* The share of the modelled tensor-core rate a non-GEMM kernel's tensor and special-function
 * work holds: the stack's sustained figure for dt times rt_ceiling_scale. */
double rt_tensor_share(const RtGpu *g, RtDtype dt);
void rt_gemm_dim(double v, RtGemmDim *d);
double rt_gemm_q(const RtGemm *q, double batch, double m, const RtGemmDim *dm, double k, double n, const RtGemmDim *dn);

#endif

#ifndef LLMP_RT_OPS_H_MEM
#define LLMP_RT_OPS_H_MEM
/* Seconds to stream `bytes` through HBM at the size-dependent achieved bandwidth.  It rises
 * with size: a kernel needs about 32 KiB in flight per SM to cover HBM latency (Little's law),
 * so below a few MB the fixed latency dominates.  Streaming kernels reach about 88 % of the
 * datasheet figure. */
#define RT_MEM_IN_FLIGHT_PER_SM 32768.0 /* bytes */
#define RT_MEM_EFFICIENCY 0.88
static inline double rt_mem_time(const RtGpu *g, double bytes) {
  return (bytes + RT_MEM_IN_FLIGHT_PER_SM * g->sms) / (RT_MEM_EFFICIENCY * g->memory_bandwidth);
}
/* The FLOP/s a dtype runs at on g: its own peak, else the nearest wider type's (an fp8 GEMM
 * on a GPU without fp8 runs in fp16; mxfp8 and nvfp4 fall back to fp8 first); 0 if none. */
double rt_peak(const RtGpu *g, RtDtype dt);
/* Fixed cost of one kernel in an operator's profiled span: the gap between back-to-back
 * kernels plus the ramp of a kernel's first wave. */
#define RT_KERNEL_OVERHEAD 2.5e-6
/* Fixed cost of an optimizer step per parameter tensor it updates.  The fused Adam kernel
 * walks all tensors in a few multi_tensor_apply launches (apex/PyTorch: up to 110 tensors of
 * 64 Ki-element chunks per launch), but the step around it does work per tensor: Python's
 * walk over the parameters to hand each gradient to its fp32 main copy and to build the
 * per-tensor address lists of every multi_tensor_apply call (unscale and inf check, gradient
 * norm, Adam, copy back to the model's weights).  The default, two kernel overheads per
 * tensor, is an order of magnitude, not a measured figure: the `adam` table's `tensors` axis
 * carries what a system measures (the paper's GH200 steps cost ~50 us per tensor). */
#define RT_ADAM_TENSOR_OVERHEAD (2 * RT_KERNEL_OVERHEAD)

/* ceil(x), bit for bit, without a libm call for the values the model rounds up (> 0, below
 * 2^52, where truncation through int64 is exact); anything else goes to ceil(). */
static inline double rt_ceil_pos(double x) {
  if (!(x > 0 && x < 0x1p52)) return ceil(x);
  long long i = (long long)x;
  return (double)(i + ((double)i < x)); /* no branch on the fraction: shapes are random */
}
#endif
