/* ops.c - the operator kernels: physics model, then the calibration table's correction.
 *
 * Every kernel is a row of rt_op_physics()'s switch: the GEMM-backed ones call
 * rt_gemm_time(), the rest count the bytes they must move through HBM (reads + writes, at the
 * dtype's width, fp32 where the implementation computes in fp32) and add a fixed overhead
 * per kernel launched.  The byte counts describe a good fused implementation; where the
 * measured implementation is slower (eager PyTorch RMSNorm, unfused RoPE), the calibration
 * table carries the difference, and an uncalibrated GPU gets the fused figure.
 *
 * The public functions check their arguments, pack them into a[] and call rt_op_eval(): no
 * allocation, no string compares; the table pointer comes from RtCalib.op[op][dt]. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fastmath.h"
#include "ops.h"

static const int op_nargs[RT_NOPS] = {
    [RT_OP_LINEAR] = 4,      [RT_OP_BMM] = 4,       [RT_OP_SOFTMAX] = 2,       [RT_OP_MASKED_SOFTMAX] = 2,
    [RT_OP_MASKED_FILL] = 2, [RT_OP_FLASH] = 5,     [RT_OP_FLASH_FULL] = 5,    [RT_OP_LAYERNORM] = 2,
    [RT_OP_RMSNORM] = 2,     [RT_OP_GELU] = 1,      [RT_OP_SWIGLU] = 1,        [RT_OP_ADD] = 1,
    [RT_OP_ROPE] = 3,        [RT_OP_EMBEDDING] = 3, [RT_OP_CROSS_ENTROPY] = 2, [RT_OP_ADAM] = 2,
};

int rt_op_nargs(RtOp op) { return (unsigned)op < RT_NOPS ? op_nargs[op] : 0; }

/* 1 if g, dt and a[] are in range for op. */
static int op_args_ok(const RtGpu *g, RtOp op, RtDtype dt, const double *a) {
  if (!g || (unsigned)dt >= RT_NDTYPES || (unsigned)op >= RT_NOPS) return 0;
  if (!(g->memory_bandwidth > 0) || !isfinite(g->memory_bandwidth) || g->sms < 1) return 0;
  double peak = rt_peak(g, dt);
  if (!(peak > 0 && peak < INFINITY)) return 0;
  int n = op_nargs[op];
  if (op == RT_OP_LINEAR) n = 3; /* a[3] is the bias flag, checked by rt_linear */
  for (int i = 0; i < n; i++)
    if (!(a[i] >= 1 && a[i] < INFINITY)) return 0;
  return 1;
}

/* A memory-bound kernel (or `kernels` of them back to back) moving `bytes`. */
static double stream(const RtGpu *g, double bytes, int kernels) {
  return rt_mem_time(g, bytes) + kernels * RT_KERNEL_OVERHEAD;
}

/* The least power of two >= l (> 0, finite): l itself when its mantissa bits are zero, else
 * 2^(e + 1), both built in the bits for normal l below 2^1023. */
static inline double pow2_ceil(double l) {
  if (!(l >= 0x1p-1022 && l < 0x1p1023)) {
    int e;
    return frexp(l, &e) == 0.5 ? l : ldexp(1, e); /* l = m 2^e, 1/2 <= m < 1 */
  }
  uint64_t u;
  memcpy(&u, &l, sizeof u);
  if (u & 0x000fffffffffffffull) u = ((u >> 52) + 1) << 52;
  double p;
  memcpy(&p, &u, sizeof p);
  return p;
}

/* Megatron's fused causal softmax (scaled_upper_triang_masked_softmax) runs a row per warp
 * of min(P, 32) lanes, P the row length L rounded up to a power of two, each lane holding
 * P/32 elements, loaded 4 at a time once P >= 128: a warp's step is 128 elements (32 for P
 * of 32 or 64, P below).  Its loops run over P, its memory traffic over L in whole steps: on
 * the paper's samples time ~ steps + 0.3 P, and a bucket past 1024 runs slower per element
 * (twice the registers per lane, a lower occupancy), taken as (P / 1024)^0.27
 * (docs/calibration-notes.md has the fit).  Returns the row length the traffic is charged
 * for: L when L is a power of two <= 1024, never less as L grows. */
static double masked_softmax_row(double l) {
  double p = pow2_ceil(l);
  double step = p < 32 ? p : p < 128 ? 32 : 128;
  double occupancy = p > 1024 ? rt_exp(0.27 * rt_log(p * (1.0 / 1024))) : 1;
  return (rt_ceil_pos(l * (1 / step)) * step + 0.3 * p) * (1 / 1.3) * occupancy;
}

/* FlashAttention-2: the QK^T and PV products of every (sequence, head) pair in 128-query
 * blocks, one block per CTA, waves over the SMs; causal skips the masked half of the key
 * blocks.  Backward recomputes the scores and runs five products instead of two: 2.5x the
 * FLOPs, at a lower efficiency (atomics on dQ).
 * d is the query/key head dim, dv the value head dim (MLA: 192 and 128).  window w > 0: a
 * causal query attends its w latest keys (sliding window, GPT-OSS): a query block reads the
 * whole key blocks that hold them, ceil(w / bm) + 1 of them (fewer near the start, w^2 / 2l
 * keys on average); non-causal, w either side.  On an H100 (PyTorch 2.11 FlexAttention, 64
 * heads of 64, 4096 tokens, bf16) w = 1024 ran in 0.57 of full causal's forward time (this
 * model: 0.49), w = 128 in 0.31 (0.23, bound by reading Q, K, V and O: the measured kernel's
 * fixed cost per block is not modelled).  sinks: a learned logit per head joins each softmax's denominator (GPT-OSS), no
 * product, only its h fp32 values read and their gradient written: counted in the bytes. */
static RtCost flash_core(const RtGpu *g, RtDtype dt, double b, double l, double h, double kvh, double d, double dv,
                         int causal, double w, int sinks) {
  double peak = rt_peak(g, dt), eb = rt_dtype_bytes(dt);
  /* The kernels are instantiated for head dims 32, 64, ..., 256: a head dim runs as the next
   * one up.  Past 128 the query block halves (shared memory). */
  d = d <= 256 ? rt_ceil_pos(d * (1.0 / 32)) * 32 : d;
  dv = dv <= 256 ? rt_ceil_pos(dv * (1.0 / 32)) * 32 : dv;
  double bm = (d > dv ? d : dv) > 128 ? 64 : 128;
  double blocks = b * h * rt_ceil_pos(l * (1 / bm)); /* exact: bm is a power of two */
  double waves = rt_ceil_pos(blocks / g->sms);
  double frac = causal ? 0.5 + bm / 2 / l : 1.0; /* the diagonal blocks are full */
  if (frac > 1) frac = 1;
  double keys = l * frac; /* keys a query block reads, on average */
  if (w > 0) { /* whole key blocks: the window's and the diagonal one, fewer near the start */
    double wl = w < l ? w : l, span = bm * (rt_ceil_pos(wl * (1 / bm)) + 1);
    double wk = causal ? span - wl * wl / (2 * l) : 2 * span;
    if (wk < keys) keys = wk;
  }
  int plain = dv == d && !(w > 0); /* the same figures, in the same order, as ever */
  double block_flop = plain ? 4.0 * bm * l * d * frac : 2.0 * bm * keys * (d + dv); /* QK^T and PV */
  double share = rt_tensor_share(g, dt), per_sm = peak * share / g->sms;
  double fwd = waves * block_flop / (per_sm * 0.70);
  double bwd = waves * 2.5 * block_flop / (per_sm * 0.55);
  /* one exp a score each way (backward recomputes P), on the special-function units, which
   * the kernel overlaps with its products: the slower pipe sets the pace, at the same share
   * of its peak (bound at head dim 64 on a B200: 4 d FLOPs a score outrun 5 T exp/s) */
  if (g->peak_exp > 0) {
    double ex = waves * bm * keys / (g->peak_exp * share / g->sms);
    if (ex / 0.70 > fwd) fwd = ex / 0.70;
    if (ex / 0.55 > bwd) bwd = ex / 0.55;
  }
  double io = dv == d ? b * l * d * (2 * h + 2 * kvh) * eb : b * l * (d + dv) * (h + kvh) * eb; /* q, o; k, v */
  if (sinks) io += 4 * h;
  double mf = rt_mem_time(g, io), mb = rt_mem_time(g, 2.5 * io);
  fwd = (fwd > mf ? fwd : mf) + RT_KERNEL_OVERHEAD;
  bwd = (bwd > mb ? bwd : mb) + 2 * RT_KERNEL_OVERHEAD; /* + dq conversion */
  return (RtCost){fwd, bwd, 0};
}

static RtCost flash(const RtGpu *g, RtDtype dt, const double *a, int causal) {
  return flash_core(g, dt, a[0], a[1], a[2], a[3], a[4], a[4], causal, 0, 0);
}

/* A GEMM layer's three products, [m,k]x[k,n] forward and backward the data gradient
 * (m,n)x(n,k) plus the weight gradient (k,m)x(m,n): rt_gemm_time() of each, sharing the
 * per-GPU constants and the tile counts of m, k and n. */
static RtCost gemm3(const RtGpu *g, RtDtype dt, double batch, double m, double k, double n) {
  RtGemm q;
  RtGemmDim dm, dk, dn;
  rt_gemm_setup(g, dt, &q);
  rt_gemm_dim(m, &dm), rt_gemm_dim(k, &dk), rt_gemm_dim(n, &dn);
  RtCost c = {0, 0, 0};
  c.fwd = rt_gemm_q(&q, batch, m, &dm, k, n, &dn);
  c.bwd = rt_gemm_q(&q, batch, m, &dm, n, k, &dk) + rt_gemm_q(&q, batch, k, &dk, m, n, &dn);
  return c;
}

/* The memory-bound ops: their bytes streamed at the GPU's rate (stream()), whose passes the
 * comments count.  NaN for another op. */
static RtCost streamed(const RtGpu *g, RtOp op, double eb, const double *a, double *x) {
  RtCost c = {0, 0, 0};
  switch (op) {
  case RT_OP_SOFTMAX: /* read, write; bwd reads y and dy, writes dx */
    x[0] = a[0], x[1] = a[1];
    c.fwd = stream(g, 2 * a[0] * a[1] * eb, 1);
    c.bwd = stream(g, 3 * a[0] * a[1] * eb, 1);
    break;
  case RT_OP_MASKED_SOFTMAX: { /* fused scale + causal mask: reads the lower triangle only */
    x[0] = a[0], x[1] = a[1];
    double row = masked_softmax_row(a[1]);
    c.fwd = stream(g, 1.5 * a[0] * row * eb, 1);
    c.bwd = stream(g, 2.5 * a[0] * row * eb, 1);
    break;
  }
  case RT_OP_MASKED_FILL: /* read scores and a byte mask, write; bwd the same on dy */
    x[0] = a[0], x[1] = a[1];
    c.fwd = stream(g, a[0] * a[1] * (2 * eb + 1), 1);
    c.bwd = stream(g, a[0] * a[1] * (2 * eb + 1), 1);
    break;
  case RT_OP_LAYERNORM: /* fwd read x, write y; bwd read x, dy, write dx + dgamma, dbeta */
  case RT_OP_RMSNORM:
    x[0] = a[0], x[1] = a[1];
    c.fwd = stream(g, 2 * a[0] * a[1] * eb, 1);
    c.bwd = stream(g, 3 * a[0] * a[1] * eb, 2);
    break;
  case RT_OP_GELU: /* elementwise: fwd 1 in 1 out; bwd x, dy in, dx out */
    x[0] = a[0];
    c.fwd = stream(g, 2 * a[0] * eb, 1);
    c.bwd = stream(g, 3 * a[0] * eb, 1);
    break;
  case RT_OP_SWIGLU: /* elements of the output: 2 in 1 out; bwd 3 in 2 out */
    x[0] = a[0];
    c.fwd = stream(g, 3 * a[0] * eb, 1);
    c.bwd = stream(g, 5 * a[0] * eb, 1);
    break;
  case RT_OP_ADD: /* bwd: the residual fork's gradient accumulation, the same add */
    x[0] = a[0];
    c.fwd = c.bwd = stream(g, 3 * a[0] * eb, 1);
    break;
  case RT_OP_ROPE: /* read x and the cos/sin table, write */
    x[0] = a[0], x[1] = a[1], x[2] = a[2];
    c.fwd = stream(g, a[0] * a[1] * a[2] * 2 * eb + a[0] * a[2] * 4, 1);
    c.bwd = c.fwd;
    break;
  case RT_OP_EMBEDDING: /* fwd: gather + vocab-range masking; bwd: zero the fp32 table
                                * gradient, scatter-add the token rows.  The table reads tokens
                                * per table row (ops.def): which of the token rows and the
                                * table dominates turns on that ratio, a diagonal in (tokens,
                                * rows) that a grid along its own axes would cut across */
    x[0] = a[0] / a[1], x[1] = a[1], x[2] = a[2];
    c.fwd = stream(g, 2 * a[0] * a[2] * eb + a[0] * 24, 3);
    c.bwd = stream(g, a[1] * a[2] * 4 + a[0] * a[2] * (eb + 8), 2);
    break;
  case RT_OP_CROSS_ENTROPY: /* Megatron: fp32 logits, max, exp, sum, target gather passes;
                                * bwd: softmax - onehot, one read and one write */
    x[0] = a[0], x[1] = a[1];
    c.fwd = stream(g, a[0] * a[1] * (eb + 4 * 7), 6);
    c.bwd = stream(g, a[0] * a[1] * (4 + 4 + eb), 2);
    break;
  case RT_OP_ADAM: /* fp32 master, m, v read and written, gradient read, model copy written;
                      * and the step's fixed cost per parameter tensor (ops.h) */
    x[0] = a[0], x[1] = a[1];
    c.fwd = stream(g, a[0] * (3 * 4 * 2 + 2 * eb), 1) + a[1] * RT_ADAM_TENSOR_OVERHEAD;
    c.bwd = 0;
    break;
  default: c.fwd = c.bwd = NAN;
  }
  return c;
}

RtCost rt_op_physics(const RtGpu *g, RtOp op, RtDtype dt, const double *a, double *x) {
  double eb = rt_dtype_bytes(dt);
  RtCost c = {0, 0, 0};
  switch (op) {
  case RT_OP_LINEAR: /* fwd: X W (+ bias in the epilogue); bwd: dX = dY W^T, dW = X^T dY, db */
    x[0] = a[0], x[1] = a[1], x[2] = a[2];
    c = gemm3(g, dt, 1, a[0], a[1], a[2]);
    c.bwd += rt_select(a[3] != 0, stream(g, a[0] * a[2] * eb, 1), 0);
    break;
  case RT_OP_BMM:
    x[0] = a[0], x[1] = a[1], x[2] = a[2], x[3] = a[3];
    c = gemm3(g, dt, a[0], a[1], a[2], a[3]);
    break;
  case RT_OP_FLASH:
  case RT_OP_FLASH_FULL:
    x[0] = a[0] * a[2], x[1] = a[1], x[2] = a[4];
    c = flash(g, dt, a, op == RT_OP_FLASH);
    break;
  default: c = streamed(g, op, eb, a, x);
  }
  return c;
}

/* --- a hard lower bound, for the fitter ----------------------------------------------
 *
 * The multiply-adds an op cannot do without, at the GPU's datasheet peak for the dtype: no
 * run beats that.  Only the matrix products count (2 FLOPs per multiply-add):
 *   linear, bmm    fwd 2mkn (x batch); bwd 4mkn, the data and the weight gradient;
 *   flash          fwd 4 d per score (QK^T and PV) over the scores a causal mask keeps,
 *                  l(l+1)/2 per (sequence, head), or l^2; bwd 8 d per score (dV, dP, dQ, dK),
 *                  2x fwd, not counting the recomputed QK^T an implementation may skip.
 * The other ops are memory traffic, and no memory bound is hard: a small tensor runs from
 * L2 faster than HBM allows.  An fp32 product may run on TF32 tensor cores (PyTorch's
 * allow_tf32), so fp32's peak is the larger of the two. */
static void op_min_flops(RtOp op, const double *a, double *f) {
  f[0] = f[1] = 0;
  if (op == RT_OP_LINEAR || op == RT_OP_BMM) {
    f[0] = 2 * (op == RT_OP_BMM ? a[0] * a[1] * a[2] * a[3] : a[0] * a[1] * a[2]);
    f[1] = 2 * f[0];
  } else if (op == RT_OP_FLASH || op == RT_OP_FLASH_FULL) {
    double l = a[1], scores = op == RT_OP_FLASH ? l * (l + 1) / 2 : l * l;
    f[0] = 4 * a[0] * a[2] * a[4] * scores;
    f[1] = 2 * f[0];
  }
}

RtCost rt_op_min_time(const RtGpu *g, RtOp op, RtDtype dt, const double *a, double *flops) {
  double f[2], peak = rt_peak(g, dt);
  if (dt == RT_FP32 && g->peak[RT_TF32] > peak) peak = g->peak[RT_TF32];
  op_min_flops(op, a, f);
  if (flops) flops[0] = f[0], flops[1] = f[1];
  if (!(peak > 0)) return (RtCost){0, 0, 0}; /* no figure, no bound */
  return (RtCost){f[0] / peak, f[1] / peak, 0};
}

static const RtCost bad = {NAN, NAN, RT_BAD_ARGS};

/* The RT_FUSED_* bit of an operator, 0 for one no stack fuses differently. */
static unsigned fused_bit(RtOp op) {
  switch (op) {
  case RT_OP_LAYERNORM:
  case RT_OP_RMSNORM: return RT_FUSED_NORM;
  case RT_OP_ROPE: return RT_FUSED_ROPE;
  case RT_OP_GELU:
  case RT_OP_SWIGLU: return RT_FUSED_ACTIVATION;
  case RT_OP_MASKED_SOFTMAX: return RT_FUSED_SOFTMAX;
  case RT_OP_CROSS_ENTROPY: return RT_FUSED_CROSS_ENTROPY;
  default: return 0;
  }
}

RtCost rt_op_eval(const RtGpu *g, RtOp op, RtDtype dt, const double *a) {
  if (!op_args_ok(g, op, dt, a)) return bad;
  double x[RT_MAX_AXES];
  RtCost c = rt_op_physics(g, op, dt, a, x);
  if (!(g->fused & fused_bit(op))) rt_calibrate(g, op, dt, x, &c);
  if ((op == RT_OP_FLASH || op == RT_OP_FLASH_FULL) && g->attention_rate > 0) /* the stack's kernel */
    c.fwd /= g->attention_rate, c.bwd /= g->attention_rate;
  return c;
}

/* --- the public kernels ------------------------------------------------------------ */

RtCost rt_linear(const RtGpu *g, RtDtype dt, double m, double k, double n, int bias) {
  if (bias != 0 && bias != 1) return bad;
  return rt_op_eval(g, RT_OP_LINEAR, dt, (const double[]){m, k, n, bias});
}

RtCost rt_bmm(const RtGpu *g, RtDtype dt, double batch, double m, double k, double n) {
  return rt_op_eval(g, RT_OP_BMM, dt, (const double[]){batch, m, k, n});
}

RtCost rt_softmax(const RtGpu *g, RtDtype dt, double rows, double cols, int causal) {
  if (causal != 0 && causal != 1) return bad;
  return rt_op_eval(g, causal ? RT_OP_MASKED_SOFTMAX : RT_OP_SOFTMAX, dt, (const double[]){rows, cols});
}

RtCost rt_masked_fill(const RtGpu *g, RtDtype dt, double rows, double cols) {
  return rt_op_eval(g, RT_OP_MASKED_FILL, dt, (const double[]){rows, cols});
}

/* scores = Q K^T, softmax, out = P V.  Causal uses Megatron's fused scale-mask-softmax; the
 * non-causal path is a plain softmax.  Flags are the union of the parts'.
 *
 * Exactly rt_bmm(bh, l, d, l) + rt_softmax(bh l, l) + rt_bmm(bh, l, l, d), computed once: the
 * two bmm layers' six products are three distinct GEMMs, A = (l,d)x(d,l), B = (l,l)x(l,d),
 * C = (d,l)x(l,l) (scores: fwd A, bwd B + C; values: fwd B, bwd A + B), and the tables'
 * coordinates share their logs. */
RtCost rt_attention(const RtGpu *g, RtDtype dt, double b, double l, double heads, double head_dim, int causal) {
  return rt_attention_ex(g, dt, b, l, heads, heads, head_dim, head_dim, causal);
}

/* With dv != d the value products are their own GEMMs: P V (l,l)x(l,dv) forward; dP = dO V^T
 * (l,dv)x(dv,l) and dV = P^T dO (l,l)x(l,dv) backward.  Grouped-query attention: Megatron's
 * unfused core attention (DotProductAttention) repeat_interleaves K and V to the query heads
 * first, a copy reading kv_heads and writing heads of them (backward: the sum back, the same
 * bytes); the products run on heads. */
RtCost rt_attention_ex(const RtGpu *g, RtDtype dt, double b, double l, double heads, double kv_heads, double head_dim,
                       double v_head_dim, int causal) {
  double bh = b * heads, d = head_dim, dv = v_head_dim;
  if ((causal != 0 && causal != 1) || !(b >= 1) || !(heads >= 1)) return bad;
  if (!(kv_heads >= 1 && kv_heads <= heads) || !(dv >= 1 && dv < INFINITY)) return bad;
  RtOp sm = causal ? RT_OP_MASKED_SOFTMAX : RT_OP_SOFTMAX;
  const double sa[] = {bh, l, d, l}, pa[] = {bh * l, l};
  if (!op_args_ok(g, RT_OP_BMM, dt, sa) || !op_args_ok(g, sm, dt, pa)) return bad;
  RtGemm q;
  RtGemmDim dl, dd, ddv;
  rt_gemm_setup(g, dt, &q);
  rt_gemm_dim(l, &dl), rt_gemm_dim(d, &dd);
  double A = rt_gemm_q(&q, bh, l, &dl, d, l, &dl), B = rt_gemm_q(&q, bh, l, &dl, l, d, &dd),
         C = rt_gemm_q(&q, bh, d, &dd, l, l, &dl);
  double Av = A, Bv = B;
  if (dv != d) {
    rt_gemm_dim(dv, &ddv);
    Av = rt_gemm_q(&q, bh, l, &dl, dv, l, &dl), Bv = rt_gemm_q(&q, bh, l, &dl, l, dv, &ddv);
  }
  RtCost s = {A, B + C, 0}, v = {Bv, Av + Bv, 0};
  double x[RT_MAX_AXES];
  RtCost p = rt_op_physics(g, sm, dt, pa, x);
  const RtTable *ts = rt_bmm_table(g->calib, dt, d, l), *tv = rt_bmm_table(g->calib, dt, l, dv);
  const RtTable *tp = g->calib ? g->calib->op[sm][dt] : NULL;
  if (ts || tv || tp) {
    double lbh, ll, ld, lrows, ldv, lunused;
    rt_log2(bh, l, &lbh, &ll);
    rt_log2(d, pa[0], &ld, &lrows);
    rt_log2(dv, 1, &ldv, &lunused);
    if (ts) rt_calibrate_log(ts, (const double[]){lbh, ll, ld, ll}, &s);
    if (tv) rt_calibrate_log(tv, (const double[]){lbh, ll, ll, ldv}, &v);
    if (tp) rt_calibrate_log(tp, (const double[]){lrows, ll}, &p);
  }
  unsigned f = s.flags | p.flags | v.flags;
  RtCost c = {s.fwd + p.fwd + v.fwd, s.bwd + p.bwd + v.bwd, f};
  if (kv_heads < heads) { /* the expand of K and V: two copies, uncalibrated */
    double e = stream(g, b * l * (kv_heads + heads) * (d + dv) * rt_dtype_bytes(dt), 2);
    c.fwd += e, c.bwd += e;
  }
  return c;
}

RtCost rt_flash_attention(const RtGpu *g, RtDtype dt, double b, double l, double heads, double kv_heads,
                          double head_dim, int causal) {
  if ((causal != 0 && causal != 1) || !(kv_heads <= heads)) return bad;
  return rt_op_eval(g, causal ? RT_OP_FLASH : RT_OP_FLASH_FULL, dt, (const double[]){b, l, heads, kv_heads, head_dim});
}

RtCost rt_flash_attention_ex(const RtGpu *g, RtDtype dt, double b, double l, double heads, double kv_heads,
                             double head_dim, double v_head_dim, int causal, double window, int sinks) {
  if (v_head_dim == head_dim && window == 0 && sinks == 0)
    return rt_flash_attention(g, dt, b, l, heads, kv_heads, head_dim, causal);
  if ((causal != 0 && causal != 1) || (sinks != 0 && sinks != 1) || !(kv_heads <= heads)) return bad;
  if (!(v_head_dim >= 1 && v_head_dim < INFINITY) || !(window >= 0 && window < INFINITY)) return bad;
  RtOp op = causal ? RT_OP_FLASH : RT_OP_FLASH_FULL;
  const double a[] = {b, l, heads, kv_heads, head_dim};
  if (!op_args_ok(g, op, dt, a)) return bad;
  double x[RT_MAX_AXES] = {b * heads, l, head_dim};
  RtCost c = flash_core(g, dt, b, l, heads, kv_heads, head_dim, v_head_dim, causal, window, sinks);
  rt_calibrate(g, op, dt, x, &c); /* the table's head_dim axis: the query/key dim */
  if (g->attention_rate > 0) c.fwd /= g->attention_rate, c.bwd /= g->attention_rate;
  return c;
}

/* Mamba-2's causal depthwise conv1d (causal_conv1d, with its SiLU fused), `channels` of
 * width taps over `tokens`: 2 width FLOPs an element on the CUDA cores, far below the ridge,
 * so its bytes decide: fwd reads x and writes y.  Backward, as mamba_ssm's
 * mamba_split_conv1d_scan_combined runs it (ssd_combined.py, MambaSplitConv1dScanCombinedFn,
 * recalled): the forward again ("Recompute x, B, C": the function keeps the conv's input, not
 * its output), then causal_conv1d_bwd, which reads x and dy, writes dx and sums the weight
 * gradient.  No calibration table covers it. */
RtCost rt_conv1d(const RtGpu *g, RtDtype dt, double tokens, double channels, double width) {
  if (!g || (unsigned)dt >= RT_NDTYPES || !(g->memory_bandwidth > 0) || !isfinite(g->memory_bandwidth)) return bad;
  if (!(tokens >= 1 && tokens < INFINITY) || !(channels >= 1 && channels < INFINITY)) return bad;
  if (!(width >= 1 && width < INFINITY)) return bad;
  double eb = rt_dtype_bytes(dt), el = tokens * channels, w = channels * (width + 1) * eb;
  double fwd = stream(g, 2 * el * eb + w, 1);
  return (RtCost){fwd, fwd + stream(g, 3 * el * eb + 2 * w, 1), 0};
}

/* Mamba-2's SSD chunked scan (Dao & Gu 2024, arXiv 2405.21060, Section 6) as mamba_ssm's
 * Triton kernels run it (ops/triton/ssd_combined.py _mamba_chunk_scan_combined_fwd and _bwd,
 * recalled), over T tokens of H heads of head_dim P, state N, G groups of B and C, chunks of
 * Q (C = T/Q chunks), elements of e bytes.  Each kernel's bytes, in terms of
 *   X  = T H P e   x, y, dy or dx            Bg = T G N e   B, C, dB or dC
 *   Bf = T G N 4   an fp32 partial dB, dC     CB = T G Q 4   C B^T per chunk, fp32
 *   Sf = C H P N 4 chunk states, fp32         Se = C H P N e chunk states in the dtype
 *   Dt = T H e     the input dt               D  = T H 4     dt, its cumulative sums, ddt
 * and FLOPs, F1 = 2TQNG (C B^T), F2 = 2TQPH (the Q x Q blocks), F3 = 2TNPH (states in or
 * out), F4 = 2CHPN (the states' passing):
 *   forward   chunk_cumsum       Dt + 2D                         -
 *             chunk_state        X + Bg + 2D + Sf                F3
 *             state_passing      Sf + Se (out in C's dtype)      F4
 *             bmm_chunk          2Bg + CB                        F1
 *             chunk_scan         2X + Bg + CB + Se + 2D          F2 + F3
 *   backward  dt.clone           2Dt                             -
 *             the forward's first four again, states in fp32: chunk_cumsum, bmm_chunk,
 *             chunk_state, state_passing (2Sf)
 *             chunk_scan_bwd_dstates          X + Bg + D + Sf                  F3
 *             state_passing_bwd               2Sf + 2Se + D                    F4
 *             chunk_scan_chunk_state_bwd_dx   3X + Bg + CB + Se + 3D           F2 + F3
 *             chunk_state_bwd_db              X + Bg + Se + 3D + Bf            F3
 *             chunk_scan_bwd_dC               X + Bg + Se + 2D + Bf            F3
 *             chunk_scan_bwd_dcb              2X + CB + 2D                     F2
 *             bmm_chunk_bwd, for dB and dC    2Bg + CB + Bf each               F1 each
 *             chunk_scan_bwd_ddAcs_stable     2X + CB + 3D                     F2
 *             ddA's reverse cumsum and sums   10D in five PyTorch kernels
 *             chunk_cumsum_bwd                2D + 2Dt
 * Each kernel is a roofline, its FLOPs at the GPU's sustained rate for the dtype or its bytes
 * at the memory bandwidth, plus one kernel's overhead.  No calibration table covers it. */
enum { SSD_X, SSD_BG, SSD_BF, SSD_CB, SSD_SF, SSD_SE, SSD_DT, SSD_D, SSD_NB };
enum { SSD_F1, SSD_F2, SSD_F3, SSD_F4, SSD_NF };
typedef struct SsdKernel {
  signed char bwd, n;    /* 1: a backward kernel; n: how many such kernels */
  signed char b[SSD_NB]; /* bytes: multiples of X, Bg, Bf, CB, Sf, Se, Dt, D */
  signed char f[SSD_NF]; /* FLOPs: multiples of F1..F4 */
} SsdKernel;
/* clang-format off */
static const SsdKernel ssd_kernels[] = {
    /*        X Bg Bf CB Sf Se Dt  D     F1 F2 F3 F4 */
    {0, 1, {0, 0, 0, 0, 0, 0, 1, 2}, {0, 0, 0, 0}},   /* chunk_cumsum */
    {0, 1, {1, 1, 0, 0, 1, 0, 0, 2}, {0, 0, 1, 0}},   /* chunk_state */
    {0, 1, {0, 0, 0, 0, 1, 1, 0, 0}, {0, 0, 0, 1}},   /* state_passing */
    {0, 1, {0, 2, 0, 1, 0, 0, 0, 0}, {1, 0, 0, 0}},   /* bmm_chunk */
    {0, 1, {2, 1, 0, 1, 0, 1, 0, 2}, {0, 1, 1, 0}},   /* chunk_scan */
    {1, 1, {0, 0, 0, 0, 0, 0, 2, 0}, {0, 0, 0, 0}},   /* dt.clone */
    {1, 1, {0, 0, 0, 0, 0, 0, 1, 2}, {0, 0, 0, 0}},   /* chunk_cumsum again */
    {1, 1, {0, 2, 0, 1, 0, 0, 0, 0}, {1, 0, 0, 0}},   /* bmm_chunk again */
    {1, 1, {1, 1, 0, 0, 1, 0, 0, 2}, {0, 0, 1, 0}},   /* chunk_state again */
    {1, 1, {0, 0, 0, 0, 2, 0, 0, 0}, {0, 0, 0, 1}},   /* state_passing again, fp32 */
    {1, 1, {1, 1, 0, 0, 1, 0, 0, 1}, {0, 0, 1, 0}},   /* chunk_scan_bwd_dstates */
    {1, 1, {0, 0, 0, 0, 2, 2, 0, 1}, {0, 0, 0, 1}},   /* state_passing_bwd */
    {1, 1, {3, 1, 0, 1, 0, 1, 0, 3}, {0, 1, 1, 0}},   /* chunk_scan_chunk_state_bwd_dx */
    {1, 1, {1, 1, 1, 0, 0, 1, 0, 3}, {0, 0, 1, 0}},   /* chunk_state_bwd_db */
    {1, 1, {1, 1, 1, 0, 0, 1, 0, 2}, {0, 0, 1, 0}},   /* chunk_scan_bwd_dC */
    {1, 1, {2, 0, 0, 1, 0, 0, 0, 2}, {0, 1, 0, 0}},   /* chunk_scan_bwd_dcb */
    {1, 2, {0, 2, 1, 1, 0, 0, 0, 0}, {1, 0, 0, 0}},   /* bmm_chunk_bwd: dB, dC */
    {1, 1, {2, 0, 0, 1, 0, 0, 0, 3}, {0, 1, 0, 0}},   /* chunk_scan_bwd_ddAcs_stable */
    {1, 5, {0, 0, 0, 0, 0, 0, 0, 2}, {0, 0, 0, 0}},   /* ddA: flip, cumsum, flip, two adds */
    {1, 1, {0, 0, 0, 0, 0, 0, 2, 2}, {0, 0, 0, 0}},   /* chunk_cumsum_bwd */
};
/* clang-format on */
enum { SSD_NK = sizeof ssd_kernels / sizeof ssd_kernels[0] };

/* The per-kernel terms of the table above at one shape. */
static void ssd_terms(const double *a, double eb, double *b, double *f) {
  double T = a[0], H = a[1], P = a[2], N = a[3], G = a[4], Q = a[5], C = T / Q;
  b[SSD_X] = T * H * P * eb, b[SSD_BG] = T * G * N * eb, b[SSD_BF] = T * G * N * 4, b[SSD_CB] = T * G * Q * 4;
  b[SSD_SF] = C * H * P * N * 4, b[SSD_SE] = C * H * P * N * eb, b[SSD_DT] = T * H * eb, b[SSD_D] = T * H * 4;
  f[SSD_F1] = 2 * T * Q * N * G, f[SSD_F2] = 2 * T * Q * P * H, f[SSD_F3] = 2 * T * N * P * H;
  f[SSD_F4] = 2 * C * H * P * N;
}

/* One kernel's bytes and FLOPs (one of its s->n) from the terms. */
static void ssd_kernel(const SsdKernel *s, const double *b, const double *f, double *kb, double *kf) {
  *kb = *kf = 0;
  for (int i = 0; i < SSD_NB; i++) *kb += s->b[i] * b[i];
  for (int i = 0; i < SSD_NF; i++) *kf += s->f[i] * f[i];
}

RtSsdWork rt_ssd_work(double tokens, double heads, double head_dim, double state, double groups, double chunk,
                      double elem_bytes) {
  const double a[] = {tokens, heads, head_dim, state, groups, chunk};
  double b[SSD_NB], f[SSD_NF];
  ssd_terms(a, elem_bytes, b, f);
  RtSsdWork w = {{0, 0}, {0, 0}, {0, 0}};
  for (int k = 0; k < SSD_NK; k++) {
    const SsdKernel *s = &ssd_kernels[k];
    double kb, kf;
    ssd_kernel(s, b, f, &kb, &kf);
    w.bytes[s->bwd] += s->n * kb, w.flops[s->bwd] += s->n * kf;
    w.kernels[s->bwd] += s->n;
  }
  return w;
}

RtCost rt_ssd(const RtGpu *g, RtDtype dt, double tokens, double heads, double head_dim, double state, double groups,
              double chunk) {
  const double a[] = {tokens, heads, head_dim, state, groups, chunk};
  if (!g || (unsigned)dt >= RT_NDTYPES || !(g->memory_bandwidth > 0) || !isfinite(g->memory_bandwidth)) return bad;
  double peak = rt_peak(g, dt);
  if (!(peak > 0 && peak < INFINITY)) return bad;
  for (int i = 0; i < 6; i++)
    if (!(a[i] >= 1 && a[i] < INFINITY)) return bad;
  double b[SSD_NB], f[SSD_NF], rate = peak * rt_tensor_share(g, dt), t[2] = {0, 0};
  ssd_terms(a, rt_dtype_bytes(dt), b, f);
  for (int k = 0; k < SSD_NK; k++) {
    const SsdKernel *s = &ssd_kernels[k];
    double kb, kf;
    ssd_kernel(s, b, f, &kb, &kf);
    double m = rt_mem_time(g, kb), c = kf / rate;
    t[s->bwd] += s->n * ((c > m ? c : m) + RT_KERNEL_OVERHEAD);
  }
  return (RtCost){t[0], t[1], 0};
}

double rt_ssd_flops(double T, double H, double P, double N, double G, double Q) {
  return 2 * T * Q * N * G + 2 * T * Q * P * H + 4 * T * N * P * H + 2 * (T / Q) * N * P * H;
}

RtCost rt_layernorm(const RtGpu *g, RtDtype dt, double tokens, double hidden) {
  return rt_op_eval(g, RT_OP_LAYERNORM, dt, (const double[]){tokens, hidden});
}

RtCost rt_rmsnorm(const RtGpu *g, RtDtype dt, double tokens, double hidden) {
  return rt_op_eval(g, RT_OP_RMSNORM, dt, (const double[]){tokens, hidden});
}

RtCost rt_gelu(const RtGpu *g, RtDtype dt, double elements) {
  return rt_op_eval(g, RT_OP_GELU, dt, (const double[]){elements});
}

RtCost rt_swiglu(const RtGpu *g, RtDtype dt, double elements) {
  return rt_op_eval(g, RT_OP_SWIGLU, dt, (const double[]){elements});
}

RtCost rt_add(const RtGpu *g, RtDtype dt, double elements) {
  return rt_op_eval(g, RT_OP_ADD, dt, (const double[]){elements});
}

RtCost rt_rope(const RtGpu *g, RtDtype dt, double tokens, double heads, double head_dim) {
  return rt_op_eval(g, RT_OP_ROPE, dt, (const double[]){tokens, heads, head_dim});
}

RtCost rt_embedding(const RtGpu *g, RtDtype dt, double tokens, double rows, double hidden) {
  return rt_op_eval(g, RT_OP_EMBEDDING, dt, (const double[]){tokens, rows, hidden});
}

RtCost rt_cross_entropy(const RtGpu *g, RtDtype dt, double tokens, double vocab) {
  return rt_op_eval(g, RT_OP_CROSS_ENTROPY, dt, (const double[]){tokens, vocab});
}

RtCost rt_adam(const RtGpu *g, RtDtype dt, double params, double tensors) {
  return rt_op_eval(g, RT_OP_ADAM, dt, (const double[]){params, tensors});
}
