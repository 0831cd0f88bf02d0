/* bench_kernels.c - nanoseconds per call of every kernel of runtime/llmp_rt.h, uncalibrated and
 * calibrated: the A100 with the Perlmutter operator tables
 * (hw/calibration/a100-sxm4-80gb-perlmutter), the Perlmutter cluster with its collective tables
 * (hw/calibration/perlmutter).  A sweep calls the kernels millions of times; the target is
 * under 100 ns per call for every kernel.
 *
 * Each kernel cycles through NSHAPES pre-drawn shapes (log-uniform over realistic sizes, some
 * outside the tables' grids; collectives over every calibrated layout), so
 * that no cache keyed on identical arguments could make it look faster than a sweep sees it.
 * The figure is the best of REPS timings of CALLS calls.  Run it from a Release build:
 *
 *   bench_kernels [CALLS [ROOT [KERNEL...]]]
 *       CALLS: default 1000000; ROOT: the source tree whose hw/calibration/ to load, default
 *       the one built from; KERNEL...: only these kernels (names as printed), default all
 *
 * Not a CTest test: timings on a shared machine mean nothing. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusters.h"
#include "llmp_fit.h"
#include "llmp_rt.h"
#include "bench.h"

enum { NSHAPES = 4096, REPS = 5 };

typedef struct Shape {
  RtDtype dt;
  double a[6];
  int flag, nodes, gpn;
} Shape;

static Shape shapes[NSHAPES];
static volatile double sink;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) * 0x1.0p-53;
}
/* log-uniform in [lo, hi], rounded to an integer (shapes are counts). */
static double draw(double lo, double hi) { return round(exp(log(lo) + uniform() * (log(hi) - log(lo)))); }

typedef enum {
  /* clang-format off */
  K_LINEAR, K_BMM, K_SOFTMAX, K_MASKED_FILL, K_ATTENTION, K_FLASH, K_LAYERNORM, K_RMSNORM,
  K_GELU, K_SWIGLU, K_ADD, K_ROPE, K_EMBEDDING, K_CROSS_ENTROPY, K_ADAM, K_NOPS,
  K_ALLREDUCE = K_NOPS, K_ALLGATHER, K_REDUCESCATTER, K_ALLTOALL, K_P2P, K_NKERNELS
  /* clang-format on */
} Kernel;

static const char *const names[K_NKERNELS] = {
    "linear",    "bmm",           "softmax",  "masked_fill", "attention", "flash_attention", "layernorm", "rmsnorm",
    "gelu",      "swiglu",        "add",      "rope",        "embedding", "cross_entropy",   "adam",      "allreduce",
    "allgather", "reducescatter", "alltoall", "p2p"};

/* The calibrated layouts of hw/calibration/perlmutter (nodes, GPUs per node). */
static const int layouts[][2] = {{1, 2}, {1, 4}, {2, 1}, {2, 2}, {2, 4}, {4, 1}, {8, 1}};

static void draw_shapes(Kernel k) {
  for (int i = 0; i < NSHAPES; i++) {
    Shape *s = &shapes[i];
    s->dt = RT_FP16; /* the shipped tables' dtype: every call is corrected */
    s->flag = (i >> 1) & 1;
    double *a = s->a;
    switch (k) {
    case K_LINEAR: a[0] = draw(256, 65536), a[1] = draw(256, 32768), a[2] = draw(256, 65536); break;
    case K_BMM: a[0] = draw(1, 512), a[1] = draw(64, 8192), a[2] = draw(64, 8192), a[3] = draw(64, 8192); break;
    case K_ATTENTION:
    case K_FLASH:
      a[0] = draw(1, 16), a[1] = draw(128, 32768), a[2] = draw(8, 128);
      a[3] = draw(1, a[2]), a[4] = 32 * draw(2, 8);
      break;
    case K_SOFTMAX:
    case K_MASKED_FILL:
    case K_LAYERNORM:
    case K_RMSNORM:
    case K_CROSS_ENTROPY: a[0] = draw(256, 1e6), a[1] = draw(256, 65536); break;
    case K_GELU:
    case K_SWIGLU:
    case K_ADD: a[0] = draw(1e4, 1e10); break;
    case K_ROPE: a[0] = draw(256, 1e6), a[1] = draw(1, 128), a[2] = 32 * draw(2, 8); break;
    case K_EMBEDDING: a[0] = draw(256, 1e6), a[1] = draw(1e3, 2.6e5), a[2] = draw(512, 16384); break;
    case K_ADAM: a[0] = draw(1e6, 1e11), a[1] = draw(1, 2000); break;
    default: { /* collectives */
      int l = (int)(uniform() * (sizeof layouts / sizeof layouts[0]));
      s->nodes = k == K_P2P ? 1 + (i & 1) : layouts[l][0];
      s->gpn = k == K_P2P ? 2 - (i & 1) : layouts[l][1];
      a[0] = draw(1e3, 1e10);
    }
    }
  }
}

static double run(Kernel k, const RtGpu *g, const RtCluster *c, long calls) {
  double acc = 0, t0 = bench_now();
  for (long i = 0; i < calls; i++) {
    const Shape *s = &shapes[i & (NSHAPES - 1)];
    const double *a = s->a;
    RtCost r;
    switch (k) {
    case K_LINEAR: r = rt_linear(g, s->dt, a[0], a[1], a[2], s->flag); break;
    case K_BMM: r = rt_bmm(g, s->dt, a[0], a[1], a[2], a[3]); break;
    case K_SOFTMAX: r = rt_softmax(g, s->dt, a[0], a[1], s->flag); break;
    case K_MASKED_FILL: r = rt_masked_fill(g, s->dt, a[0], a[1]); break;
    case K_ATTENTION: r = rt_attention(g, s->dt, a[0], a[1], a[2], a[4], s->flag); break;
    case K_FLASH: r = rt_flash_attention(g, s->dt, a[0], a[1], a[2], a[3], a[4], s->flag); break;
    case K_LAYERNORM: r = rt_layernorm(g, s->dt, a[0], a[1]); break;
    case K_RMSNORM: r = rt_rmsnorm(g, s->dt, a[0], a[1]); break;
    case K_GELU: r = rt_gelu(g, s->dt, a[0]); break;
    case K_SWIGLU: r = rt_swiglu(g, s->dt, a[0]); break;
    case K_ADD: r = rt_add(g, s->dt, a[0]); break;
    case K_ROPE: r = rt_rope(g, s->dt, a[0], a[1], a[2]); break;
    case K_EMBEDDING: r = rt_embedding(g, s->dt, a[0], a[1], a[2]); break;
    case K_CROSS_ENTROPY: r = rt_cross_entropy(g, s->dt, a[0], a[1]); break;
    case K_ADAM: r = rt_adam(g, s->dt, a[0], a[1]); break;
    case K_ALLREDUCE: r = rt_allreduce(c, a[0], s->nodes, s->gpn); break;
    case K_ALLGATHER: r = rt_allgather(c, a[0], s->nodes, s->gpn); break;
    case K_REDUCESCATTER: r = rt_reducescatter(c, a[0], s->nodes, s->gpn); break;
    case K_ALLTOALL: r = rt_alltoall(c, a[0], s->nodes, s->gpn); break;
    default: r = rt_p2p(c, a[0], s->nodes, s->gpn); break;
    }
    acc += r.fwd + r.bwd;
  }
  double t = bench_now() - t0;
  sink = acc;
  return t / (double)calls * 1e9;
}

static double best(Kernel k, const RtGpu *g, const RtCluster *c, long calls) {
  double b = INFINITY;
  for (int r = 0; r < REPS; r++) {
    double t = run(k, g, c, calls);
    if (t < b) b = t;
  }
  return b;
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? atol(argv[1]) : 1000000;
  const char *root = argc > 2 ? argv[2] : LLMP_SOURCE_DIR;
  if (calls < 1) return fprintf(stderr, "usage: bench_kernels [CALLS [ROOT [KERNEL...]]]\n"), 2;
  int only[K_NKERNELS] = {0}, nonly = 0;
  for (int i = 3; i < argc; i++) {
    int k = 0;
    while (k < K_NKERNELS && strcmp(argv[i], names[k]) != 0) k++;
    if (k == K_NKERNELS) return fprintf(stderr, "bench_kernels: no kernel '%s'\n", argv[i]), 2;
    only[k] = 1, nonly++;
  }
  char err[1024], path[768];
  snprintf(path, sizeof path, "%s/hw/calibration/a100-sxm4-80gb-perlmutter", root);
  RtCalib *ops = rt_calib_load(path, err, sizeof err);
  if (!ops) return fprintf(stderr, "%s\n", err), 1;
  snprintf(path, sizeof path, "%s/hw/calibration/perlmutter", root);
  RtCalib *colls = rt_calib_load(path, err, sizeof err);
  if (!colls) return fprintf(stderr, "%s\n", err), 1;
  RtGpu bare = *rt_gpu_builtin("a100_sxm4_80gb"), cal = bare;
  cal.calib = ops;
  RtCluster cbare = *rt_cluster_builtin("perlmutter"), ccal = cbare;
  ccal.calib = colls;
  cbare.gpu = ccal.gpu = &bare;

  printf("ns per call, best of %d x %ld calls over %d shapes (target < 100)\n", REPS, calls, NSHAPES);
  printf("%-16s %14s %14s\n", "kernel", "uncalibrated", "calibrated");
  int over = 0;
  for (int k = 0; k < K_NKERNELS; k++) {
    if (nonly && !only[k]) continue;
    draw_shapes((Kernel)k);
    double u = best((Kernel)k, &bare, &cbare, calls);
    double c = best((Kernel)k, &cal, &ccal, calls);
    over += u >= 100 || c >= 100;
    printf("%-16s %14.1f %14.1f%s\n", names[k], u, c, u >= 100 || c >= 100 ? "   > 100" : "");
  }
  printf("%d kernel%s at or over 100 ns\n", over, over == 1 ? "" : "s");
  rt_calib_free(ops);
  rt_calib_free(colls);
  return 0;
}
