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
_Static_assert(sizeof tiles_sm80 / sizeof tiles_sm80[0] == RT_GEMM_TILES, "tiles");
_Static_assert(sizeof tiles_sm90 / sizeof tiles_sm90[0] == RT_GEMM_TILES, "tiles");

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

/* The fraction of the modelled tensor-core rate a part sustains through a training run (power
 * and clock limits that a short benchmark does not reach), from hw/gpus.llmp: scales GEMMs and
 * attention, not the memory-bound kernels.  fp8 work has its own figure where the part sets
 * one (Transformer Engine's fp8 GEMMs hold a smaller share of their peak than bf16 ones). */
double rt_sustained(const RtGpu *g, RtDtype dt) {
  if (dt == RT_FP8 && g->sustained_fp8 > 0 && g->sustained_fp8 <= 1) return g->sustained_fp8;
  return g->sustained_compute > 0 && g->sustained_compute <= 1 ? g->sustained_compute : 1;
}

/* The fraction of datasheet peak a perfectly shaped GEMM sustains: Hopper parts throttle
 * clocks under dense tensor-core load more than Ampere (published max achievable matmul:
 * A100 87 %, H100 80 %).  Generation is told by the per-SM rate: > 5 TFLOP/s/SM at fp16 is
 * Hopper or later. */
static int is_sm90(const RtGpu *g) { return rt_peak(g, RT_FP16) / g->sms > 5e12; }

/* RtGemmDim's slot of a tile extent. */
static int tile_index(double extent) { return extent == 64 ? 0 : extent == 128 ? 1 : 2; }

void rt_gemm_setup(const RtGpu *g, RtDtype dt, RtGemm *q) {
  double peak = rt_peak(g, dt);
  int hopper = is_sm90(g);
  double sustained = hopper ? 0.84 : 0.90;
  const Tile *tiles = hopper ? tiles_sm90 : tiles_sm80;
  double per_sm = peak * sustained * rt_sustained(g, dt) / g->sms;
  q->g = g;
  q->sms = g->sms;
  q->eb = rt_dtype_bytes(dt);
  for (int i = 0; i < RT_GEMM_TILES; i++) {
    q->tm[i] = tile_index(tiles[i].m), q->tn[i] = tile_index(tiles[i].n);
    q->flop2[i] = 2.0 * tiles[i].m * tiles[i].n;   /* exact: small powers of two */
    q->rate[i] = per_sm * tiles[i].eff;
  }
}

/* A size divided by each tile extent (64, 128, 256: exact as a product with the inverse),
 * rounded up. */
void rt_gemm_dim(double v, RtGemmDim *d) {
  d->c[0] = rt_ceil_pos(v * (1.0 / 64)), d->c[1] = rt_ceil_pos(v * (1.0 / 128));
  d->c[2] = rt_ceil_pos(v * (1.0 / 256));
}


/* The reference arithmetic per tile: count = batch * ceil(m / tm) * ceil(n / tn), waves =
 * ceil(count / sms), tile_s = 2 tm tn (k + K0) / (per_sm eff), the time waves x tile_s; the
 * fastest tile wins. */
double rt_gemm_q(const RtGemm *q, double batch, double m, const RtGemmDim *dm, double k, double n,
                 const RtGemmDim *dn) {
  double best = INFINITY;
  for (int i = 0; i < RT_GEMM_TILES; i++) {
    double count = batch * dm->c[q->tm[i]] * dn->c[q->tn[i]];
    double waves = rt_ceil_pos(count / q->sms);
    double tile_s = q->flop2[i] * (k + RT_K0) / q->rate[i];
    if (waves * tile_s < best) best = waves * tile_s;
  }
  double mem = rt_mem_time(q->g, batch * (m * k + k * n + m * n) * q->eb);
  return (best > mem ? best : mem) + RT_KERNEL_OVERHEAD;
}

double rt_gemm_time(const RtGpu *g, RtDtype dt, double batch, double m, double k, double n) {
  RtGemm q;
  RtGemmDim dm, dn;
  rt_gemm_setup(g, dt, &q);
  rt_gemm_dim(m, &dm);
  rt_gemm_dim(n, &dn);
  return rt_gemm_q(&q, batch, m, &dm, k, n, &dn);
}
