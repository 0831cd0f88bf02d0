/* bench_eval.c - what one scenario costs: check, lower, and one evaluation of its cost graph
 * by the interpreter (graph_eval), the part a sweep repeats per point.
 *
 *   bench_eval FILE...      for each scenario: graph nodes, kernel calls, the lowering time,
 *                           and the best and median time of one evaluation (microseconds)
 *
 * Timings are wall-clock on one core, best of repeated batches.  Not a CTest test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/hw.h"
#include "lower/lower.h"
#include "front/sema.h"
#include "bench.h"
#include "sorted.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_eval FILE...\n");
    return 2;
  }
  printf("%-34s %6s %6s %10s %12s %12s\n", "scenario", "nodes", "calls", "lower us", "eval us best", "eval us med");
  for (int i = 1; i < argc; i++) {
    Diag d;
    diag_init(&d, stderr);
    SemaOptions so = {NULL, 0, NULL};
    Sema *s = sema_new(&d, &so);
    if (sema_run(s, argv[i], true)) {
      sema_free(s);
      diag_free(&d);
      continue;
    }
    HwSet *hw = hw_new(s, &d, &so);
    Decl *list[64];
    int n = sema_root_decls(s, DK_SCENARIO, list, 64);
    for (int k = 0; k < n && k < 64; k++) {
      Lowered l;
      double t0 = bench_now();
      int rc = lower_scenario(s, hw, list[k], &d, &l);
      double tl = bench_now() - t0;
      if (rc == 0) {
        double *vals = malloc((size_t)l.g.nn * sizeof *vals);
        int calls = 0;
        for (int j = 0; j < l.g.nn; j++) calls += l.g.n[j].op == GN_CALL;
        enum { BATCHES = 21 };
        double per[BATCHES];
        int reps = 200;
        for (int b = 0; b < BATCHES; b++) {
          double t = bench_now();
          for (int r = 0; r < reps; r++) graph_eval(&l.g, NULL, vals);
          per[b] = (bench_now() - t) / reps;
        }
        qsort(per, BATCHES, sizeof *per, cmp_double);
        printf("%-34s %6d %6d %10.1f %12.2f %12.2f\n", sema_decl_name(list[k]), l.g.nn, calls, tl * 1e6, per[0] * 1e6,
               per[BATCHES / 2] * 1e6);
        free(vals);
      }
      lower_free(&l);
    }
    hw_free(hw);
    sema_free(s);
    diag_flush(&d);
    diag_free(&d);
  }
  return 0;
}
