/* fastmath.h - log and exp inline, for the calibration lookups (internal: runtime/).
 *
 * A calibrated kernel call reads its table in log space: a log per coordinate and an exp per
 * correction, and libm's are calls through the PLT, with special-case paths, that the
 * compiler cannot schedule with the lookup around them.
 * These are within 2 ulps of libm's over the ranges the lookups use (tests/runtime/
 * test_calib.c checks them), give the same bits on every IEEE machine that rounds to nearest
 * and does not contract a*b+c (the project builds ISO C11, where GCC and Clang do not), and
 * branch only on the range.
 *
 * log: x = 2^k z, z in [0.6875, 1.375); the top 7 bits of z's offset from 0.6875 pick a cell
 * of rt_log_table (scripts/gen_fastmath_tables.py), whose invc is about 1/z, so that
 * r = z invc - 1 is within 0.004 of 0 and log x = k ln 2 + logc + log1p(r), log1p by its
 * series to r^6 (remainder below 2e-18).
 *
 * exp: x = (64 q + j) ln2/64 + r, |r| <= ln2/128; e^x = 2^q 2^(j/64) e^r, 2^(j/64) from
 * rt_exp_table and e^r by its series to r^6 (remainder below 6e-20).
 *
 * Outside the ranges (log: x not a positive normal number; exp: |x| >= 700; NaN) they call
 * libm, which the lookups do not need: table coordinates are counts >= 1 and corrections are
 * factors between 1e-3 and 1e3. */
#ifndef LLMP_RT_FASTMATH_H
#define LLMP_RT_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { RT_EXP_N = 64, RT_LOG_N = 128 };
extern const double rt_exp_table[RT_EXP_N];    /* 2^(j/64) */
extern const double rt_log_table[RT_LOG_N][2]; /* {invc, logc = -log(invc)} per cell */

#define RT_LN2_HI 0x1.62e42feep-1       /* ln 2 to 32 bits: k RT_LN2_HI is exact */
#define RT_LN2_LO 0x1.a39ef35793c76p-33 /* ln 2 - RT_LN2_HI */

static inline double rt_log(double x) {
  if (!(x >= 0x1p-1022 && x < INFINITY)) return log(x);
  uint64_t ix, tmp;
  memcpy(&ix, &x, sizeof ix);
  tmp = ix - 0x3fe6000000000000ull;           /* x's offset from 0.6875 in the same binade count */
  int k = ((int)(tmp >> 52) ^ 0x800) - 0x800; /* tmp's top 12 bits, sign-extended */
  uint64_t iz = ix - (tmp & 0xfff0000000000000ull);
  double z;
  memcpy(&z, &iz, sizeof z);
  const double *c = rt_log_table[(tmp >> 45) & (RT_LOG_N - 1)];
  double r = z * c[0] - 1, dk = k, r2 = r * r;
  /* log1p(r) = r + r^2 (-1/2 + r/3 + r^2 (-1/4 + r/5 - r^2/6)), in Estrin's order */
  double p = (r * (1.0 / 3) - 0.5) + r2 * ((r * (1.0 / 5) - 0.25) - r2 * (1.0 / 6));
  return (dk * RT_LN2_HI + c[1]) + ((r + p * r2) + dk * RT_LN2_LO);
}

static inline double rt_exp(double x) {
  if (!(x > -700 && x < 700)) return exp(x);
  /* kd = 1.5 2^52 + n, n = x 64/ln 2 rounded to the nearest integer, held in kd's low bits */
  double kd = x * (64 / 0x1.62e42fefa39efp-1) + 0x1.8p52, nf = kd - 0x1.8p52;
  uint64_t u;
  memcpy(&u, &kd, sizeof u);
  u = u - 0x4338000000000000ull + (1 << 20);         /* n + 2^20: |n| < 2^16, so u > 0, u = n mod 64 */
  uint64_t e = ((u >> 6) - (1 << 14) + 0x3ff) << 52; /* 2^floor(n / 64) */
  double scale, r = (x - nf * (RT_LN2_HI / 64)) - nf * (RT_LN2_LO / 64), r2 = r * r;
  memcpy(&scale, &e, sizeof scale);
  double ts = rt_exp_table[u & (RT_EXP_N - 1)] * scale; /* exact: scale is a power of two */
  /* e^r - 1 = (r + r^2 (1/2 + r/6)) + r^4 (1/24 + r/120 + r^2/720), two chains side by side */
  double q = r + r2 * (0.5 + r * (1.0 / 6));
  double w = (r2 * r2) * ((1.0 / 24 + r * (1.0 / 120)) + r2 * (1.0 / 720));
  return ts + ts * (q + w);
}

/* rt_exp of two numbers at once, lane by lane the same operations in the same order (so the
 * same bits), in the vector extension GCC and Clang share (SSE2 on x86-64, NEON on arm64;
 * elsewhere the compiler splits it).  A calibrated call corrects its forward and backward
 * times together: one exp's latency instead of two.  Outside rt_exp's range, rt_exp. */
typedef double RtV2 __attribute__((vector_size(16)));
typedef long long RtV2i __attribute__((vector_size(16)));
typedef unsigned long long RtV2u __attribute__((vector_size(16)));

static inline void rt_exp2(double x0, double x1, double *y0, double *y1) {
  if (!(x0 > -700 && x0 < 700 && x1 > -700 && x1 < 700)) {
    *y0 = rt_exp(x0), *y1 = rt_exp(x1);
    return;
  }
  const RtV2 shift = {0x1.8p52, 0x1.8p52};
  RtV2 x = {x0, x1};
  RtV2 kd = x * (64 / 0x1.62e42fefa39efp-1) + shift, nf = kd - shift;
  RtV2u u = (RtV2u)kd - 0x4338000000000000ull + (1 << 20); /* unsigned, as rt_exp's */
  RtV2u e = ((u >> 6) - (1 << 14) + 0x3ff) << 52;
  RtV2 r = (x - nf * (RT_LN2_HI / 64)) - nf * (RT_LN2_LO / 64), r2 = r * r;
  RtV2 scale = (RtV2)e;
  RtV2 tab = {rt_exp_table[u[0] & (RT_EXP_N - 1)], rt_exp_table[u[1] & (RT_EXP_N - 1)]};
  RtV2 ts = tab * scale;
  RtV2 q = r + r2 * (0.5 + r * (1.0 / 6));
  RtV2 w = (r2 * r2) * ((1.0 / 24 + r * (1.0 / 120)) + r2 * (1.0 / 720));
  RtV2 y = ts + ts * (q + w);
  *y0 = y[0], *y1 = y[1];
}

/* rt_log of two numbers at once, likewise lane for lane (the same bits as two rt_log): a
 * calibrated call's coordinates, two at a time.  Outside rt_log's range, rt_log. */
static inline void rt_log2(double x0, double x1, double *y0, double *y1) {
  if (!(x0 >= 0x1p-1022 && x0 < INFINITY && x1 >= 0x1p-1022 && x1 < INFINITY)) {
    *y0 = rt_log(x0), *y1 = rt_log(x1);
    return;
  }
  RtV2 x = {x0, x1};
  RtV2u ix = (RtV2u)x, tmp = ix - 0x3fe6000000000000ull; /* unsigned: wraps as rt_log's */
  RtV2i k = ((RtV2i)(tmp >> 52) ^ 0x800) - 0x800;        /* 0..4095 to -2048..2047 */
  RtV2 z = (RtV2)(ix - (tmp & 0xfff0000000000000ull));
  const double *c0 = rt_log_table[(tmp[0] >> 45) & (RT_LOG_N - 1)];
  const double *c1 = rt_log_table[(tmp[1] >> 45) & (RT_LOG_N - 1)];
  RtV2 invc = {c0[0], c1[0]}, logc = {c0[1], c1[1]};
  RtV2 r = z * invc - 1, dk = {(double)k[0], (double)k[1]}, r2 = r * r;
  RtV2 p = (r * (1.0 / 3) - 0.5) + r2 * ((r * (1.0 / 5) - 0.25) - r2 * (1.0 / 6));
  RtV2 y = (dk * RT_LN2_HI + logc) + ((r + p * r2) + dk * RT_LN2_LO);
  *y0 = y[0], *y1 = y[1];
}

/* a if cond, else b, chosen in the bits: no branch to mispredict where cond follows the data
 * (a compiler turns `cond ? a : b` and `cond * a` on doubles into a branch when it likes). */
static inline double rt_select(int cond, double a, double b) {
  uint64_t ua, ub, m = -(uint64_t)(cond != 0);
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, sizeof a);
  return a;
}

#endif
