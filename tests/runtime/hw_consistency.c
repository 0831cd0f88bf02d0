/* hw_consistency.c - the built-in GPUs and clusters (runtime/fit/builtin.c, which the
 * validation programs, the fitter and the tests use) against hw/gpus.llmp and hw/systems/ as
 * `llmp op` and `llmp fit` read them (compiler/lower/hw.c).  gen_builtin writes the former
 * from the latter at build time; this checks that what it wrote compiles back to the very
 * same values, bit for bit, and that it was regenerated after hw/ changed: the collective
 * tables are corrections relative to the physics of one description.  Every field of every
 * builtin cluster, its tiers and its GPU is compared (calib pointers aside: the built-in ones
 * carry none), and each builtin GPU with its hw/gpus.llmp declaration.  Prints each
 * difference; exit status 1 if any.
 * Usage: hw_consistency SOURCE_DIR (the repository: its hw/ is read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusters.h"
#include "front/diag.h"
#include "lower/hw.h"
#include "llmp_fit.h"
#include "front/sema.h"

static int diffs;

static void num(const char *what, const char *field, double llmp, double c) {
  if (memcmp(&llmp, &c, sizeof c) == 0) return;
  printf("%s: %s is %.17g in hw/ but %.17g built in\n", what, field, llmp, c);
  diffs++;
}

static void str(const char *what, const char *field, const char *llmp, const char *c) {
  if (llmp && c && strcmp(llmp, c) == 0) return;
  printf("%s: %s is \"%s\" in hw/ but \"%s\" built in\n", what, field, llmp ? llmp : "(none)", c ? c : "(none)");
  diffs++;
}

static void gpu(const char *what, const RtGpu *a, const RtGpu *b) {
  str(what, "name", a->name, b->name);
  num(what, "memory", a->memory, b->memory);
  num(what, "memory_bandwidth", a->memory_bandwidth, b->memory_bandwidth);
  for (int t = 0; t < RT_NDTYPES; t++) {
    char f[32];
    snprintf(f, sizeof f, "peak_%s", rt_dtype_name((RtDtype)t));
    num(what, f, a->peak[t], b->peak[t]);
  }
  num(what, "sms", a->sms, b->sms);
  num(what, "l2_cache", a->l2_cache, b->l2_cache);
  num(what, "sustained_compute", a->sustained_compute, b->sustained_compute);
  num(what, "sustained_compute_fp8", a->sustained_fp8, b->sustained_fp8);
  num(what, "sustained_compute_fp4", a->sustained_fp4, b->sustained_fp4);
  num(what, "peak_exp", a->peak_exp, b->peak_exp);
  num(what, "matmul_ceiling", a->matmul_ceiling, b->matmul_ceiling);
}

static void cluster(const RtCluster *a, const RtCluster *b) {
  const char *w = b->name;
  str(w, "name", a->name, b->name);
  num(w, "gpus_per_node", a->gpus_per_node, b->gpus_per_node);
  num(w, "nodes", a->nodes, b->nodes);
  num(w, "tiers", a->ntiers, b->ntiers);
  char gw[96];
  snprintf(gw, sizeof gw, "%s gpu", w);
  gpu(gw, a->gpu, b->gpu);
  for (int i = 0; i < a->ntiers && i < b->ntiers; i++) {
    const RtTier *x = &a->tiers[i], *y = &b->tiers[i];
    char tw[96];
    snprintf(tw, sizeof tw, "%s tier %d", w, i);
    str(tw, "name", x->name, y->name);
    num(tw, "span_nodes", x->span_nodes, y->span_nodes);
    num(tw, "bandwidth", x->bandwidth, y->bandwidth);
    num(tw, "latency", x->latency, y->latency);
    num(tw, "links_per_node", x->links_per_node, y->links_per_node);
    num(tw, "efficiency", x->efficiency, y->efficiency);
    num(tw, "switch_reduction", x->switch_reduction, y->switch_reduction);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SOURCE_DIR\n", argv[0]);
    return 2;
  }
  SemaOptions so = {NULL, 0, argv[1]};
  HwSession hs;
  HwSet *h = hw_session_open(&hs, "<hw_consistency>", &so, NULL, 0);
  static const char *const clusters[] = {"perlmutter", "vista",       "selene",     "eos",
                                         "hgx_h200",   "aws_p6_b200", "mi300x_node"};
  static const char *const gpus[] = {"a100_sxm4_80gb", "h100_sxm", "gh200", "h200", "b200", "mi300x"};
  int n = 0;
  for (size_t i = 0; h && i < sizeof clusters / sizeof *clusters; i++, n++) {
    const RtCluster *a = hw_cluster(h, clusters[i]), *b = rt_cluster_builtin(clusters[i]);
    if (!a || !b) {
      printf("%s: missing in %s\n", clusters[i], a ? "the built-in clusters" : "hw/systems/");
      diffs++;
      continue;
    }
    cluster(a, b);
  }
  for (size_t i = 0; h && i < sizeof gpus / sizeof *gpus; i++, n++) {
    const RtGpu *a = hw_gpu(h, gpus[i]), *b = rt_gpu_builtin(gpus[i]);
    if (!a || !b) {
      printf("%s: missing in %s\n", gpus[i], a ? "the built-in GPUs" : "hw/gpus.llmp");
      diffs++;
      continue;
    }
    gpu(gpus[i], a, b);
  }
  diag_flush(&hs.diag);
  int errors = hs.diag.errors;
  hw_session_close(&hs);
  if (!h || errors || n == 0) return printf("hw/ does not load\n"), 1;
  printf("%d declarations compared, %d difference(s)\n", n, diffs);
  return diffs ? 1 : 0;
}
