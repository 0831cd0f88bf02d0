/* bench_schedule.c - nanoseconds per call of the pipeline kernel (k_pipeline: the schedule with
 * its sends and with free sends) against the same two runs of the full op-by-op simulation
 * (rt_pipeline_reference: what k_pipeline cost before the fast path), for GPT-3 175B plans:
 * 96 layers, per-layer times of a tensor-parallel group of 8 A100s at micro-batch 1 x 2048
 * tokens (6.2 ms forward), the embedding on the first chunk and the head on the last, sends of
 * 0.25 ms or free.  Each figure is the best of 3 timings (the machine may be shared).  Also
 * prints the largest relative difference of the makespans.  Run from a Release build; not a
 * CTest test. */
#include <math.h>
#include <stdio.h>

#include "llmp_kernels.h"
#include "bench.h"

/* The pipeline kernel as it was: two runs of the reference simulation. */
static void k_reference(const void *t, const double *a, double *out) {
  (void)t;
  double buf[4 * RT_MAX_CHUNKS];
  RtPipeline p;
  if (rt_pipeline_of_args(a, &p, buf) < 0) return;
  RtPipeResult with = rt_pipeline_reference(&p, NULL, 0, NULL);
  p.p2p = 0;
  RtPipeResult without = rt_pipeline_reference(&p, NULL, 0, NULL);
  out[0] = with.makespan;
  out[1] = without.makespan;
  out[2] = (double)(with.flags | without.flags);
}

/* ns per call of f(args): the best of 3 timings of at least `budget` seconds each. */
static double bench(RtKernelFn *f, const double *args, double budget, double *out) {
  double best = INFINITY;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = bench_now(), t;
    long n = 0, batch = 1;
    do {
      for (long i = 0; i < batch; i++) f(NULL, args, out);
      n += batch;
      batch *= 2;
    } while ((t = bench_now() - t0) < budget);
    if (t / (double)n < best) best = t / (double)n;
  }
  return best * 1e9;
}

int main(void) {
  static const char *names[RT_NSCHEDULES] = {"gpipe", "1f1b", "interleaved", "zero-bubble"};
  RtKernelFn *f = rt_kernels[RTK_PIPELINE].fn;
  const int pps[] = {8, 16, 32}, ms[] = {16, 64, 256, 1536};
  double worst = 0;
  printf("%-12s %4s %3s %5s %6s %14s %12s %9s %12s\n", "schedule", "pp", "v", "m", "p2p", "reference ns", "fast ns",
         "speed-up", "makespan s");
  for (int s = 0; s < RT_NSCHEDULES; s++)
    for (size_t a = 0; a < sizeof pps / sizeof pps[0]; a++)
      for (size_t b = 0; b < sizeof ms / sizeof ms[0]; b++)
        for (int send = 0; send < 2; send++) {
          int pp = pps[a], m = ms[b], v = s == RT_INTERLEAVED ? (pp == 32 ? 3 : 2) : 1;
          if (v > 1 && m % pp != 0) continue;
          int zb = s == RT_ZERO_BUBBLE;
          /* ZB-H1 splits the backward: B and W of about one forward each. */
          /* clang-format off */
          double args[28] = {s, pp, v, m, 96, 1, 6.2e-3, zb ? 6.2e-3 : 12.4e-3, zb ? 6.2e-3 : 0,
                             0, 0.3e-3, 0.5e-3, 4e-3, 8e-3, send ? 0.25e-3 : 0};
          /* clang-format on */
          double fast[RT_KERNEL_NOUT], ref[RT_KERNEL_NOUT];
          double tr = bench(k_reference, args, 0.03, ref), tf = bench(f, args, 0.03, fast);
          for (int k = 0; k < 2; k++)
            if (fabs(fast[k] - ref[k]) > worst * fabs(ref[k])) worst = fabs(fast[k] - ref[k]) / fabs(ref[k]);
          printf("%-12s %4d %3d %5d %6s %14.0f %12.0f %8.0fx %12.6f\n", names[s], pp, v, m, send ? "0.25ms" : "0", tr,
                 tf, tr / tf, fast[0]);
        }
  printf("largest relative difference of the makespans: %.3g\n", worst);
  return 0;
}
