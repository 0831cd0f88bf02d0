/* bench_collectives.c - nanoseconds per call of the collective kernels, physics alone and with
 * the shipped Perlmutter tables.  Run from a Release build; not a CTest test. */
#include <stdio.h>

#include "clusters.h"
#include "llmp_rt.h"
#include "bench.h"

typedef RtCost (*CollFn)(const RtCluster *, double, int, int);

static double bench(CollFn f, const RtCluster *c, int nodes, int gpn) {
  enum { N = 2000000 };
  volatile double sink = 0;
  double t0 = bench_now();
  for (int i = 0; i < N; i++) sink += f(c, 4e7 + 64.0 * (i & 1023), nodes, gpn).fwd;
  (void)sink;
  return (bench_now() - t0) / N * 1e9;
}

int main(void) {
  char err[256];
  RtCalib *cal = rt_calib_load(LLMP_SOURCE_DIR "/hw/calibration/perlmutter", err, sizeof err);
  if (!cal) return fprintf(stderr, "%s\n", err), 1;
  RtCluster c = *rt_cluster_builtin("perlmutter");
  const char *names[] = {"allreduce", "allgather", "reducescatter", "alltoall", "p2p"};
  CollFn fns[] = {rt_allreduce, rt_allgather, rt_reducescatter, rt_alltoall, rt_p2p};
  printf("%-14s %12s %12s   (perlmutter, 2 nodes x 4 GPUs; p2p 2 x 1; %d tables)\n", "kernel", "physics ns",
         "calibrated ns", rt_calib_ntables(cal));
  for (int k = 0; k < 5; k++) {
    int nodes = 2, gpn = k == 4 ? 1 : 4;
    c.calib = NULL;
    double p = bench(fns[k], &c, nodes, gpn);
    c.calib = cal;
    double q = bench(fns[k], &c, nodes, gpn);
    printf("%-14s %12.1f %12.1f\n", names[k], p, q);
  }
  rt_calib_free(cal);
  return 0;
}
