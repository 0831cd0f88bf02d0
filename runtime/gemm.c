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

/* The candidate tiles, the same five shapes on both generations (m x n): 256x128, 128x256,
 * 128x128, 128x64, 64x64, in this order in RtGemm.depth_s and rt_gemm_q(); per generation,
 * their efficiency.  Ampere-class (and older): mma.sync kernels, 128x128 and 256x128 the
 * workhorses.  Hopper-class: wgmma warp-group kernels want 128-row tiles, 256 wide at best. */
static const double tile_m[RT_GEMM_TILES] = {256, 128, 128, 128, 64};
static const double tile_n[RT_GEMM_TILES] = {128, 256, 128, 64, 64};
static const double eff_sm80[RT_GEMM_TILES] = {1.00, 1.00, 0.95, 0.85, 0.70};
static const double eff_sm90[RT_GEMM_TILES] = {1.00, 1.00, 0.92, 0.80, 0.60};

enum { RT_K0 = 64 };

double rt_peak(const RtGpu *g, RtDtype dt) {
  /* clang-format off */
  static const RtDtype wider[RT_NDTYPES][4] = {
      [RT_FP32] = {RT_FP32, RT_FP32, RT_FP32, RT_FP32},
      [RT_TF32] = {RT_TF32, RT_FP32, RT_FP32, RT_FP32},
      [RT_FP16] = {RT_FP16, RT_BF16, RT_TF32, RT_FP32},
      [RT_BF16] = {RT_BF16, RT_FP16, RT_TF32, RT_FP32},
      [RT_FP8] = {RT_FP8, RT_FP16, RT_BF16, RT_FP32},
      [RT_MXFP8] = {RT_MXFP8, RT_FP8, RT_FP16, RT_BF16},
      [RT_NVFP4] = {RT_NVFP4, RT_FP8, RT_FP16, RT_BF16},
  };
  /* clang-format on */
  for (int i = 0; i < 4; i++)
    if (g->peak[wider[dt][i]] > 0) return g->peak[wider[dt][i]];
  return 0;
}

/* The fraction of the modelled tensor-core rate a part sustains through a training run (power
 * and clock limits that a short benchmark does not reach), from hw/gpus.llmp: scales GEMMs and
 * attention, not the memory-bound kernels.  Quantized work (fp8, mxfp8, nvfp4) has its own
 * figure where the part sets one (Transformer Engine's quantized GEMMs hold a smaller share
 * of their peak than bf16 ones: casts, scaling, amax reductions), and nvfp4 its own beside
 * that (its recipe's casts, Hadamard transforms and scale handling weigh more at twice the rate). */
double rt_sustained(const RtGpu *g, RtDtype dt) {
  if (dt == RT_NVFP4 && g->sustained_fp4 > 0 && g->sustained_fp4 <= 1) return g->sustained_fp4;
  if (rt_dtype_quantized(dt) && g->sustained_fp8 > 0 && g->sustained_fp8 <= 1) return g->sustained_fp8;
  return g->sustained_compute > 0 && g->sustained_compute <= 1 ? g->sustained_compute : 1;
}

/* The fraction of datasheet peak a perfectly shaped GEMM sustains: Hopper parts throttle
 * clocks under dense tensor-core load more than Ampere (published max achievable matmul:
 * A100 87 %, H100 80 %).  Generation is told by the per-SM rate: > 5 TFLOP/s/SM at fp16 is
 * Hopper or later. */
static int is_sm90(const RtGpu *g) { return rt_peak(g, RT_FP16) > 5e12 * g->sms; }
static double generation_ceiling(const RtGpu *g) { return is_sm90(g) ? 0.84 : 0.90; }

/* A part's own ceiling (`matmul_ceiling`) over its generation's: its clock and power limits
 * slow all its tensor-core work alike (flash attention, the SSD scan), not its GEMMs alone. */
double rt_ceiling_scale(const RtGpu *g) {
  return g->matmul_ceiling > 0 && g->matmul_ceiling <= 1 ? g->matmul_ceiling / generation_ceiling(g) : 1;
}

double rt_tensor_share(const RtGpu *g, RtDtype dt) { return rt_sustained(g, dt) * rt_ceiling_scale(g); }

void rt_gemm_setup(const RtGpu *g, RtDtype dt, RtGemm *q) {
  double peak = rt_peak(g, dt);
  int hopper = is_sm90(g);
  double sustained = generation_ceiling(g) * rt_ceiling_scale(g);
  const double *eff = hopper ? eff_sm90 : eff_sm80;
  double sec_per_flop_sm = g->sms / (peak * sustained * rt_sustained(g, dt));
  q->sms = g->sms;
  q->eb = rt_dtype_bytes(dt);
  q->inv_bw = 1 / (RT_MEM_EFFICIENCY * g->memory_bandwidth);
  q->in_flight = RT_MEM_IN_FLIGHT_PER_SM * g->sms;
  for (int i = 0; i < RT_GEMM_TILES; i++) q->depth_s[i] = 2 * tile_m[i] * tile_n[i] / eff[i] * sec_per_flop_sm;
}

/* A size divided by each tile extent, rounded up: ceil(v / 128) = ceil(ceil(v / 64) / 2), and
 * likewise for 256, so one rounding and two integer halvings (up to 2^52 tiles; past that,
 * the products with the exact inverses). */
void rt_gemm_dim(double v, RtGemmDim *d) {
  double c0 = rt_ceil_pos(v * (1.0 / 64));
  if (!(c0 < 0x1p52)) {
    d->c[0] = c0, d->c[1] = rt_ceil_pos(v * (1.0 / 128)), d->c[2] = rt_ceil_pos(v * (1.0 / 256));
    return;
  }
  long long i0 = (long long)c0, i1 = (i0 + 1) >> 1;
  d->c[0] = c0, d->c[1] = (double)i1, d->c[2] = (double)((i1 + 1) >> 1);
}

/* ceil(count / sms) for whole counts, from the correctly rounded quotient: for count below
 * 2^53 (exact as a double) q = count / sms rounds by at most q 2^-53 < 1 / sms, so a whole q
 * comes out exact and any other, at least 1 / sms from every integer, stays strictly between
 * the two around it: its ceiling is q's.  (Past 2^53 the count itself is rounded.) */
static inline double waves_of(const RtGemm *q, double count) { return ceil(count / q->sms); }

/* Two tiles at a time, in the vector extension GCC and Clang share (SSE2 on x86-64, NEON on
 * arm64; elsewhere the compiler splits it): waves_of() for counts below 2^51, its ceiling by
 * adding and subtracting 2^52, which rounds to the nearest integer exactly (round-to-nearest,
 * as C starts in), then one up if that was below. */
typedef double V2 __attribute__((vector_size(16)));
typedef long long V2i __attribute__((vector_size(16)));

static inline V2 waves_v2(const RtGemm *q, V2 count) {
  const V2 big = {0x1p52, 0x1p52}, one = {1, 1}, sms = {q->sms, q->sms};
  V2 x = count / sms, w = (x + big) - big;
  return w + (V2)((V2i)(w < x) & (V2i)one);
}

static inline V2 vmin(V2 a, V2 b) { /* elementwise a < b ? a : b */
  V2i m = (V2i)(a < b);
  return (V2)((m & (V2i)a) | (~m & (V2i)b));
}

/* The arithmetic per tile: count = batch * ceil(m / tm) * ceil(n / tn), waves =
 * ceil(count / sms), the time waves x (k + K0) x depth_s, depth_s = 2 tm tn / (per_sm eff)
 * the seconds one SM spends on a tile per unit of depth; the fastest tile wins.  The 64x64
 * tile has the most tiles: below 2^51 of them every count takes the vector path. */
double rt_gemm_q(const RtGemm *q, double batch, double m, const RtGemmDim *dm, double k, double n,
                 const RtGemmDim *dn) {
  const double *cm = dm->c, *cn = dn->c; /* [0] 64-wide, [1] 128, [2] 256 */
  double best;
  if (batch * cm[0] * cn[0] < 0x1p51) {
    V2 b = {batch, batch};
    V2 ta = waves_v2(q, b * (V2){cm[2], cm[1]} * (V2){cn[1], cn[2]}) * (V2){q->depth_s[0], q->depth_s[1]};
    V2 tb = waves_v2(q, b * (V2){cm[1], cm[1]} * (V2){cn[1], cn[0]}) * (V2){q->depth_s[2], q->depth_s[3]};
    V2 tc = waves_v2(q, b * (V2){cm[0], cm[0]} * (V2){cn[0], cn[0]}) * (V2){q->depth_s[4], q->depth_s[4]};
    V2 t = vmin(vmin(ta, tb), tc);
    best = t[0] < t[1] ? t[0] : t[1];
  } else {
    double t0 = waves_of(q, batch * cm[2] * cn[1]) * q->depth_s[0];
    double t1 = waves_of(q, batch * cm[1] * cn[2]) * q->depth_s[1];
    double t2 = waves_of(q, batch * cm[1] * cn[1]) * q->depth_s[2];
    double t3 = waves_of(q, batch * cm[1] * cn[0]) * q->depth_s[3];
    double t4 = waves_of(q, batch * cm[0] * cn[0]) * q->depth_s[4];
    double a = t0 < t1 ? t0 : t1, c = t2 < t3 ? t2 : t3;
    a = a < c ? a : c;
    best = a < t4 ? a : t4;
  }
  best *= k + RT_K0;
  double mem = (batch * (m * k + k * n + m * n) * q->eb + q->in_flight) * q->inv_bw;
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
