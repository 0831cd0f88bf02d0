/* gemm.c - the GEMM roofline: tile and wave quantisation over the SMs, a K-depth efficiency,
 * and the memory roof; plus the memory-bound time every other kernel uses.
 *
 * A cuBLAS-like library picks, per shape, one of a few CTA tile shapes; each CTA computes a
 * tm x tn tile of C over the full K, one CTA per SM at a time for the large tiles.  The time
 * is then waves x (time of one tile on one SM): partial tiles at the matrix edge cost a full
 * tile (tile quantisation), and a last wave with fewer tiles than SMs costs a full wave (wave
 * quantisation).  We evaluate every candidate tile and keep the fastest, as the library's
 * heuristic tries to.  Smaller tiles waste less at the edges but reuse operands less, which
 * is their efficiency factor.  Each tile also pays a prologue/epilogue (filling the pipeline,
 * writing C) worth RT_K0 of K depth, so thin-K GEMMs run below peak. */
#include <math.h>

#include "ops.h"

typedef struct Tile {
  double m, n, eff;
} Tile;

/* Ampere-class (and older): mma.sync kernels, 128x128 and 256x128 the workhorses. */
static const Tile tiles_sm80[] = {
    {256, 128, 1.00}, {128, 256, 1.00}, {128, 128, 0.95}, {128, 64, 0.85}, {64, 64, 0.70}};
/* Hopper-class: wgmma warp-group kernels want 128-row tiles, 256 wide at best. */
static const Tile tiles_sm90[] = {
    {128, 256, 1.00}, {256, 128, 1.00}, {128, 128, 0.92}, {128, 64, 0.80}, {64, 64, 0.60}};

enum { RT_K0 = 64 };

double rt_peak(const RtGpu *g, RtDtype dt) {
  static const RtDtype wider[RT_NDTYPES][4] = {
      [RT_FP32] = {RT_FP32, RT_FP32, RT_FP32, RT_FP32},
      [RT_TF32] = {RT_TF32, RT_FP32, RT_FP32, RT_FP32},
      [RT_FP16] = {RT_FP16, RT_BF16, RT_TF32, RT_FP32},
      [RT_BF16] = {RT_BF16, RT_FP16, RT_TF32, RT_FP32},
      [RT_FP8] = {RT_FP8, RT_FP16, RT_BF16, RT_FP32},
  };
  for (int i = 0; i < 4; i++)
    if (g->peak[wider[dt][i]] > 0) return g->peak[wider[dt][i]];
  return 0;
}

/* Achieved bandwidth rises with size: a kernel needs about 32 KiB in flight per SM to cover
 * HBM latency (Little's law), so below a few MB the fixed latency dominates.  Streaming
 * kernels reach about 88 % of the datasheet figure. */
double rt_mem_time(const RtGpu *g, double bytes) {
  double bw = 0.88 * g->memory_bandwidth;
  double in_flight = 32768.0 * g->sms;
  return (bytes + in_flight) / bw;
}

/* The fraction of datasheet peak a perfectly shaped GEMM sustains: Hopper parts throttle
 * clocks under dense tensor-core load more than Ampere (published max achievable matmul:
 * A100 87 %, H100 80 %).  Generation is told by the per-SM rate: > 5 TFLOP/s/SM at fp16 is
 * Hopper or later. */
static int is_sm90(const RtGpu *g) { return rt_peak(g, RT_FP16) / g->sms > 5e12; }

double rt_gemm_time(const RtGpu *g, RtDtype dt, double batch, double m, double k, double n) {
  double peak = rt_peak(g, dt);
  int hopper = is_sm90(g);
  double sustained = hopper ? 0.84 : 0.90;
  const Tile *tiles = hopper ? tiles_sm90 : tiles_sm80;
  int ntiles = 5;
  double per_sm = peak * sustained / g->sms;
  double best = INFINITY;
  for (int i = 0; i < ntiles; i++) {
    const Tile *t = &tiles[i];
    double count = batch * ceil(m / t->m) * ceil(n / t->n);
    double waves = ceil(count / g->sms);
    double tile_s = 2.0 * t->m * t->n * (k + RT_K0) / (per_sm * t->eff);
    if (waves * tile_s < best) best = waves * tile_s;
  }
  double eb = rt_dtype_bytes(dt);
  double mem = rt_mem_time(g, batch * (m * k + k * n + m * n) * eb);
  return (best > mem ? best : mem) + RT_KERNEL_OVERHEAD;
}
