/* test_collectives.c - the collective kernels (runtime/collectives.c) and their tables. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support.h"
#include "calib.h"
#include "clusters.h"
#include "fit_collectives.h"
#include "llmp_kernels.h"
#include "llmp_rt.h"

typedef RtCost (*CollFn)(const RtCluster *, double, int, int);
static const CollFn all_fns[] = {rt_allreduce, rt_allgather, rt_reducescatter, rt_alltoall};

static const RtCluster *sys(const char *name) {
  const RtCluster *c = rt_cluster_builtin(name);
  assert_non_null(c);
  return c;
}

/* Time grows with the message, for every kernel and layout, from 1 byte to 16 GiB. */
TEST(monotonic_in_bytes) {
  const char *names[] = {"perlmutter",  "selene",   "eos",         "vista",       "hgx_h200",   "aws_p6_b200",
                         "mi300x_node", "dgx_b300", "gb200_nvl72", "gb300_nvl72", "mi355x_node"};
  for (int s = 0; s < 11; s++) {
    const RtCluster *c = sys(names[s]);
    for (int f = 0; f < 4; f++)
      for (int nodes = 1; nodes <= 64 && nodes <= c->nodes; nodes *= 4)
        for (int g = 1; g <= c->gpus_per_node; g *= 2) {
          if (nodes * g == 1) continue;
          double prev = 0;
          for (double b = 1; b <= 16e9; b *= 1.37) {
            RtCost r = all_fns[f](c, b, nodes, g);
            assert_int_equal(r.flags, 0);
            assert_true(r.fwd > prev);
            assert_true(r.bwd == 0);
            prev = r.fwd;
          }
        }
  }
}

/* NVLink SHARP: by the rule on a switch of 450 GB/s per GPU or more (H200: an 8-GPU all-reduce
 * moves 9/8 of the bytes per GPU instead of the ring's 14/8); switch_reduction false takes it
 * away (NCCL_NVLS_ENABLE=0), true gives it to a slower switch (Selene's); never to 2 GPUs, a
 * mesh, a group across nodes, or another collective. */
TEST(switch_reduction) {
  RtCluster h = *sys("hgx_h200"), off = h, sel = *sys("selene"), on = sel, mesh = *sys("perlmutter");
  off.tiers[0].switch_reduction = -1;
  on.tiers[0].switch_reduction = 1;
  RtCluster mesh_on = mesh;
  mesh_on.tiers[0].switch_reduction = 1;
  double b = 1 << 30;
  double nvls = rt_allreduce(&h, b, 1, 8).fwd, ring = rt_allreduce(&off, b, 1, 8).fwd;
  assert_true(ring > 1.2 * nvls && ring < 1.5 * nvls);
  assert_true(rt_allreduce(&on, b, 1, 8).fwd < 0.9 * rt_allreduce(&sel, b, 1, 8).fwd);
  assert_true(rt_allreduce(&h, b, 1, 2).fwd == rt_allreduce(&off, b, 1, 2).fwd);
  assert_true(rt_allreduce(&on, b, 1, 2).fwd == rt_allreduce(&sel, b, 1, 2).fwd);
  assert_true(rt_allreduce(&mesh_on, b, 1, 4).fwd == rt_allreduce(&mesh, b, 1, 4).fwd);
  assert_true(rt_allreduce(&on, b, 2, 8).fwd == rt_allreduce(&sel, b, 2, 8).fwd);
  assert_true(rt_allgather(&h, b, 1, 8).fwd == rt_allgather(&off, b, 1, 8).fwd);
  /* small messages: the ring's LL protocol beats NVLS's 25 us either way */
  assert_true(rt_allreduce(&h, 4096, 1, 8).fwd == rt_allreduce(&off, 4096, 1, 8).fwd);
}

/* A group that spans nodes is slower than one of the same size inside a node. */
TEST(tier_crossing) {
  const RtCluster *c = sys("selene");
  for (double b = 1e6; b <= 4e9; b *= 4) {
    assert_true(rt_allreduce(c, b, 2, 4).fwd > rt_allreduce(c, b, 1, 8).fwd);
    assert_true(rt_allgather(c, b, 2, 4).fwd > rt_allgather(c, b, 1, 8).fwd);
    assert_true(rt_p2p(c, b, 2, 1).fwd > rt_p2p(c, b, 1, 2).fwd);
  }
  /* Vista: beyond a 32-node leaf the traffic crosses the fabric tier's higher latency. */
  const RtCluster *v = sys("vista");
  assert_true(rt_allreduce(v, 1e3, 64, 1).fwd > rt_allreduce(v, 1e3, 32, 1).fwd);
}

/* One collective kernel call (kernels.def: bytes, size, stride), as the lowering makes it. */
static double kernel_time(RtKernel k, const RtCluster *c, double bytes, int size, int stride) {
  double a[3] = {bytes, size, stride}, out[RT_KERNEL_NOUT];
  rt_kernels[k].fn(c, a, out);
  assert_false((unsigned)out[2] & RT_BAD_ARGS);
  return out[0];
}

/* An NVLink tier spanning 18 nodes of 4 GPUs (GB200 NVL72) is one domain: a group inside it
 * runs as in one node of as many GPUs on that tier, bit for bit; one that leaves it (more
 * than 72 GPUs, or strided members over more than 18 nodes) crosses the InfiniBand tier. */
TEST(nvlink_domain) {
  const RtCluster *nvl = sys("gb200_nvl72");
  RtCluster flat = *nvl;
  flat.gpus_per_node = 288, flat.nodes = 1, flat.ntiers = 1, flat.tiers[0].span_nodes = 0;
  assert_int_equal(rt_domain_nodes(nvl), 18);
  assert_int_equal(rt_domain_nodes(&flat), 1);
  assert_int_equal(rt_domain_nodes(sys("dgx_b300")), 1);
  assert_int_equal(rt_domain_nodes(sys("vista")), 1); /* one GPU a node: its leaf is a network */
  for (double b = 1e3; b <= 4e9; b *= 8)
    for (int f = 0; f < 4; f++) {
      assert_true(all_fns[f](nvl, b, 2, 4).fwd == all_fns[f](&flat, b, 1, 8).fwd);   /* tp = 8 */
      assert_true(all_fns[f](nvl, b, 8, 4).fwd == all_fns[f](&flat, b, 1, 32).fwd);  /* ep = 32 */
      assert_true(all_fns[f](nvl, b, 18, 4).fwd == all_fns[f](&flat, b, 1, 72).fwd); /* a rack */
    }
  /* Two racks: the all-to-all's half that crosses goes through one NIC a GPU (50 GB/s against
   * NVLink's 900), and the all-reduce loses NVLink SHARP; a ring all-gather crosses the cut
   * once per channel, so it stays NVLink-bound (the NICs are not its bottleneck). */
  for (double b = 64e6; b <= 4e9; b *= 4) {
    assert_true(rt_alltoall(nvl, b, 36, 4).fwd > 5 * rt_alltoall(&flat, b, 1, 144).fwd);
    assert_true(rt_alltoall(nvl, b, 19, 4).fwd > 5 * rt_alltoall(nvl, b, 18, 4).fwd);
    assert_true(rt_allreduce(nvl, b, 36, 4).fwd > 1.2 * rt_allreduce(&flat, b, 1, 144).fwd);
  }
  /* members 2 nodes apart (tp = 8 inside): 8 of them span 15 nodes, one rack; 16 span 31 */
  for (double b = 1e3; b <= 4e9; b *= 8) {
    assert_true(kernel_time(RTK_ALLREDUCE, nvl, b, 8, 8) == rt_allreduce(&flat, b, 1, 8).fwd);
    assert_true(kernel_time(RTK_ALLREDUCE, nvl, b, 16, 4) == rt_allreduce(&flat, b, 1, 16).fwd);
    assert_true(kernel_time(RTK_ALLTOALL, nvl, b, 16, 8) > rt_alltoall(&flat, b, 1, 16).fwd);
  }
  /* a pipeline send to the next tray stays on NVLink; to the next rack it takes a NIC */
  double b = 64e6;
  assert_true(kernel_time(RTK_P2P, nvl, b, 2, 4) == rt_p2p(&flat, b, 1, 2).fwd);
  assert_true(kernel_time(RTK_P2P, nvl, b, 2, 72) > 2 * kernel_time(RTK_P2P, nvl, b, 2, 4));
  /* the same GB200 nodes, each its own NVLink island: 8 GPUs over 2 of them cross the NICs */
  RtCluster trays = *nvl;
  trays.tiers[0].span_nodes = 0;
  assert_true(rt_allgather(&trays, 1e9, 2, 4).fwd > 2 * rt_allgather(nvl, 1e9, 2, 4).fwd);
}

/* With fewer NICs than GPUs, the GPUs of a node share them: an all-to-all of the same per-rank
 * buffer over 2 nodes is slower with 8 GPUs per node than with 2. */
TEST(gpus_share_nics) {
  RtCluster c = *sys("selene");
  c.tiers[1].links_per_node = 2;
  double b = 256e6;
  assert_true(rt_alltoall(&c, b, 2, 8).fwd > 1.5 * rt_alltoall(&c, b, 2, 2).fwd);
  /* and with one NIC per GPU, adding GPUs adds NICs: the ring all-reduce does not slow. */
  const RtCluster *full = sys("selene");
  assert_true(rt_allreduce(full, b, 2, 8).fwd < 1.2 * rt_allreduce(full, b, 2, 2).fwd);
}

/* A table for the layout corrects the time and sets RT_CALIBRATED; other layouts are not. */
TEST(calibrated_flag) {
  RtCluster c = *sys("perlmutter");
  double bytes[40], secs[40];
  for (int i = 0; i < 40; i++) {
    bytes[i] = 1e7 * pow(1.1, i);
    secs[i] = 3 * rt_collective_physics("allreduce", &c, bytes[i], 2, 4);
  }
  RtTable t;
  char err[128];
  assert_int_equal(rt_fit_collective(&c, "allreduce", 2, 4, bytes, secs, 40, 0, &t, err, sizeof err), 0);
  RtCalib cal = {.ntables = 1, .tables = &t};
  c.calib = &cal;
  RtCost r = rt_allreduce(&c, 1e8, 2, 4), bare = rt_allreduce(sys("perlmutter"), 1e8, 2, 4);
  assert_int_equal(r.flags, RT_CALIBRATED);
  assert_float_equal(r.fwd / bare.fwd, 3.0, 1e-3);
  assert_int_equal(bare.flags, 0);
  RtCost out = rt_allreduce(&c, 1e12, 2, 4); /* beyond the grid: the edge's factor */
  assert_int_equal(out.flags, RT_CALIBRATED | RT_EXTRAPOLATED);
  assert_int_equal(rt_allreduce(&c, 1e8, 2, 2).flags, 0); /* no table for 2x2 */
  assert_int_equal(rt_allgather(&c, 1e8, 2, 4).flags, 0); /* nor for all-gather */
  rt_table_release(&t);
}

/* The shipped tables load and apply. */
TEST(shipped_tables) {
  char err[256];
  RtCalib *cal = rt_calib_load(LLMP_SOURCE_DIR "/hw/calibration/vista", err, sizeof err);
  assert_non_null(cal);
  RtCluster c = *sys("vista");
  c.calib = cal;
  RtCost r = rt_allreduce(&c, 2 * 50e6, 4, 1);
  assert_true(r.flags & RT_CALIBRATED);
  /* paper-samples/gh200-vista/nccl/allreduce_fp16_4_1.csv: ~3 ms at 50M elements */
  assert_true(r.fwd > 2e-3 && r.fwd < 4e-3);
  rt_calib_free(cal);
}

static void assert_bad(RtCost r) {
  assert_int_equal(r.flags, RT_BAD_ARGS);
  assert_true(isnan(r.fwd) && isnan(r.bwd));
}

TEST(bad_arguments) {
  const RtCluster *c = sys("perlmutter");
  for (int f = 0; f < 4; f++) {
    assert_bad(all_fns[f](c, 1e6, 0, 4)); /* 0 ranks */
    assert_bad(all_fns[f](c, 1e6, 2, 0));
    assert_bad(all_fns[f](c, -1, 2, 4)); /* negative bytes */
    assert_bad(all_fns[f](c, NAN, 2, 4));
    assert_bad(all_fns[f](c, INFINITY, 2, 4));
    assert_bad(all_fns[f](c, 1e6, 257, 4)); /* more nodes than the cluster */
    assert_bad(all_fns[f](c, 1e6, 2, 8));   /* more GPUs than a node */
    assert_bad(all_fns[f](NULL, 1e6, 2, 4));
  }
  assert_bad(rt_p2p(c, 1e6, 2, 2)); /* p2p is between two ranks */
  assert_bad(rt_p2p(c, 1e6, 1, 4));
  RtCost one = rt_allreduce(c, 1e6, 1, 1); /* one rank: nothing to do */
  assert_int_equal(one.flags, 0);
  assert_true(one.fwd == 0);
}

/* The fitter's hard bound (rt_collective_min_time) never exceeds the physics model, for every
 * kernel, layout and size over the shipped clusters (rt_cluster_builtin: hw/systems/, which
 * hw_consistency checks): a sample the fitter drops is one the model could not predict
 * either.  It is positive wherever data moves, and grows with the message. */
TEST(bound_below_physics) {
  const char *names[] = {"perlmutter", "selene", "eos", "vista", "gb200_nvl72", "mi355x_node"};
  const char *const *kernels = rt_coll_kernels;
  for (int s = 0; s < 6; s++) {
    const RtCluster *c = sys(names[s]);
    for (int k = 0; k < RT_NCOLLS; k++)
      for (int nodes = 1; nodes <= 256 && nodes <= c->nodes; nodes *= 2)
        for (int g = 1; g <= c->gpus_per_node; g *= 2) {
          if (nodes * g == 1 || (k == 4 && nodes * g != 2)) continue;
          double prev = 0;
          for (double b = 1; b <= 64e9; b *= 1.9) {
            double lo = rt_collective_min_time(kernels[k], c, b, nodes, g);
            double t = rt_collective_physics(kernels[k], c, b, nodes, g);
            if (!(lo > prev && lo < t))
              fail_msg("%s %s %dx%d %.3g bytes: bound %.4g s, physics %.4g s", names[s], kernels[k], nodes, g, b, lo,
                       t);
            prev = lo;
          }
        }
  }
  const RtCluster *v = sys("vista"); /* the paper's 8-node all-gather: 7/8 x 2 GB at 50 GB/s */
  assert_float_equal(rt_collective_min_time("allgather", v, 2e9, 8, 1), 0.035, 1e-12);
  assert_true(isnan(rt_collective_min_time("gather", v, 2e9, 8, 1)));
  assert_true(rt_collective_min_time("allreduce", v, 2e9, 1, 1) == 0);
}

/* C(pool - u, k) / C(pool, k) by its product. */
static double miss_closed(double pool, double u, int k) {
  double p = 1;
  for (int i = 0; i < k; i++) p *= (pool - u - i) / (pool - i);
  return p;
}

/* The chance a token's experts miss a unit: ungrouped, a unit inside a group, a unit of two
 * groups (hypergeometric over the chosen groups), and against a sampled router. */
TEST(dispatch_miss) {
  assert_true(fabs(rt_dispatch_miss(256, 8, 1, 1, 4) - miss_closed(256, 4, 8)) < 1e-12);
  /* DeepSeek-V3: 8 groups of 32, top 4 groups; a node of 32 experts is one group */
  double in = miss_closed(128, 32, 8);
  assert_true(fabs(rt_dispatch_miss(256, 8, 8, 4, 32) - (0.5 + 0.5 * in)) < 1e-12);
  assert_true(fabs(rt_dispatch_miss(256, 8, 8, 4, 4) - (0.5 + 0.5 * miss_closed(128, 4, 8))) < 1e-12);
  /* two groups a unit: none chosen 15/70, one 40/70, both 15/70 (C(2,j) C(6,4-j) / C(8,4)) */
  double two = 15.0 / 70 + 40.0 / 70 * in + 15.0 / 70 * miss_closed(128, 64, 8);
  assert_true(fabs(rt_dispatch_miss(256, 8, 8, 4, 64) - two) < 1e-12);
  assert_true(rt_dispatch_miss(256, 8, 8, 4, 256) == 0);
  assert_true(isnan(rt_dispatch_miss(256, 8, 7, 4, 32)) && isnan(rt_dispatch_miss(256, 8, 8, 9, 32)));
  /* sampled: 4 of 8 groups, then 8 distinct experts of their 128; units of 4, 32 and 64 */
  unsigned long long st = 12345;
  int units[3] = {4, 32, 64}, missed[3] = {0, 0, 0}, n = 200000;
  for (int d = 0; d < n; d++) {
    int g[8] = {0, 1, 2, 3, 4, 5, 6, 7}, pick[128], hit[256] = {0};
    for (int i = 0; i < 4; i++) { /* partial Fisher-Yates */
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      int j = i + (int)((st >> 33) % (unsigned long long)(8 - i)), t = g[i];
      g[i] = g[j], g[j] = t;
    }
    for (int i = 0; i < 128; i++) pick[i] = g[i / 32] * 32 + i % 32;
    for (int i = 0; i < 8; i++) {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      int j = i + (int)((st >> 33) % (unsigned long long)(128 - i)), t = pick[i];
      pick[i] = pick[j], pick[j] = t;
      hit[pick[i]] = 1;
    }
    for (int u = 0; u < 3; u++) { /* the unit of experts 0 .. units[u] - 1 */
      int any = 0;
      for (int e = 0; e < units[u]; e++) any |= hit[e];
      missed[u] += !any;
    }
  }
  for (int u = 0; u < 3; u++)
    assert_true(fabs((double)missed[u] / n - rt_dispatch_miss(256, 8, 8, 4, units[u])) < 0.005);
}

/* DeepEP's dispatch: with one expert a token it moves what the all-to-all moves; with eight
 * over nodes it sends a token once per remote node that holds one of its experts. */
TEST(dispatch_dedup) {
  const RtCluster *eos = sys("eos");
  for (double b = 1e4; b <= 4e9; b *= 16) {
    double one = rt_dispatch(eos, b, 64, 1, 1, 1, 1, 8, 1).fwd, a2a = rt_alltoall(eos, b, 1, 8).fwd;
    assert_true(fabs(one / a2a - 1) < 1e-9);
    one = rt_dispatch(eos, b, 64, 1, 1, 1, 8, 8, 1).fwd, a2a = rt_alltoall(eos, b, 8, 8).fwd;
    assert_true(fabs(one / a2a - 1) < 1e-9);
  }
  /* DeepSeek-V3 over 8 nodes of 8 (ep 64): remote nodes 7 (1 - miss) against 7 copies */
  double b = 4e9, miss = rt_dispatch_miss(256, 8, 8, 4, 32);
  double ratio = rt_dispatch(eos, b, 256, 8, 8, 4, 8, 8, 1).fwd / rt_alltoall(eos, 8 * b, 8, 8).fwd;
  assert_true(fabs(ratio - (1 - miss)) < 1e-3);
  assert_true(rt_dispatch(eos, b, 256, 8, 1, 1, 8, 8, 1).fwd > rt_dispatch(eos, b, 256, 8, 8, 4, 8, 8, 1).fwd);
  assert_true(rt_dispatch(eos, b, 256, 8, 8, 4, 1, 1, 1).fwd == 0);
  assert_int_equal(rt_dispatch(eos, b, 100, 8, 1, 1, 8, 8, 1).flags, RT_BAD_ARGS); /* 100 experts over 64 */
  assert_int_equal(rt_dispatch(eos, b, 256, 8, 8, 9, 8, 8, 1).flags, RT_BAD_ARGS);
  /* inside an NVL72 rack the trays forward over NVLink as one node: ep 64 over 16 trays of 4
   * is the dispatch of one 64-GPU node, bit for bit; over two racks it crosses the NICs */
  const RtCluster *nvl = sys("gb200_nvl72");
  RtCluster flat = *nvl;
  flat.gpus_per_node = 288, flat.nodes = 1, flat.ntiers = 1, flat.tiers[0].span_nodes = 0;
  for (double x = 1e4; x <= 4e9; x *= 16) {
    RtCost in = rt_dispatch(nvl, x, 256, 8, 8, 4, 16, 4, 1);
    assert_true(isfinite(in.fwd) && in.flags == 0);
    assert_true(in.fwd == rt_dispatch(&flat, x, 256, 8, 8, 4, 1, 64, 1).fwd);
  }
  assert_true(rt_dispatch(nvl, b, 256, 8, 8, 4, 32, 4, 1).fwd > 2 * rt_dispatch(nvl, b, 256, 8, 8, 4, 16, 4, 1).fwd);
  /* 40 trays span three racks (18 + 18 + 4): counted as 160 / 3 = 53 GPUs each, as rt_path does */
  RtCost odd = rt_dispatch(nvl, b, 160, 8, 1, 1, 40, 4, 1);
  assert_true(isfinite(odd.fwd) && odd.flags == 0);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(monotonic_in_bytes), cmocka_unit_test(switch_reduction),    cmocka_unit_test(tier_crossing),
      cmocka_unit_test(gpus_share_nics),    cmocka_unit_test(calibrated_flag),     cmocka_unit_test(shipped_tables),
      cmocka_unit_test(bad_arguments),      cmocka_unit_test(bound_below_physics), cmocka_unit_test(nvlink_domain),
      cmocka_unit_test(dispatch_miss),      cmocka_unit_test(dispatch_dedup),
  };
  return RUN_TESTS(tests);
}
