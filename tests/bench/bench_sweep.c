/* bench_sweep.c - the speed of `llmp sweep`: JIT against interpreter, on one core.
 *
 *   bench_sweep [FILE [SWEEP]]     (default: examples/sweeps/gpt3_175b_selene.llmp)
 *
 * Prints, for the sweep:
 *   - its size: points, graph nodes, kernel calls, levels (loops);
 *   - compile time: lowering + staging, and the JIT's part (IR, default<O2>, machine code);
 *   - points per second on one thread (-j 1) with the JIT-compiled levels, and with the
 *     interpreter running the same levels (graph_eval_level), best of 3 runs of the whole
 *     sweep, and the ratio; each with the pruning of sweep.c (a point whose objective's lower
 *     bound is worse than the worst kept skips its pipeline simulation) and without it
 *     (SweepOptions.no_prune), with how many points it skipped;
 *   - the JIT's run keeping --html's sample (sweep_keep_sample, 1000 of each reason): its
 *     evaluation, and the whole run with the sample's figures, against the same without;
 *   - points per second of the interpreter evaluating each point's whole graph alone
 *     (graph_eval, no staging: what a sweep would cost without compiling it), over a
 *     sample of the points, and the JIT's ratio to that;
 *   - the best point found, with its time and memory.
 * Wall-clock timings: run it on an idle machine, in a Release build.  Not a CTest test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/jit.h"
#include "sweep/sweep.h"
#include "bench.h"

/* Best elapsed seconds of `reps` whole-sweep runs on one thread. */
static double best_run(Sweep *sw, bool jit, bool prune, int reps, SweepMeta *meta, const SweepRow **rows, int *nrows) {
  SweepOptions o = {1, jit, 0, 1, false, NULL, !prune, false, false, 0, NULL};
  double best = INFINITY;
  for (int r = 0; r < reps; r++) {
    rt_pipeline_memo_clear(); /* each run starts cold, as `llmp sweep` does */
    if (sweep_run(sw, &o, meta, rows, nrows) < 0) return NAN;
    if (meta->elapsed < best) best = meta->elapsed;
  }
  return best;
}

/* Best evaluation (*eval, the run's elapsed) and whole sweep_run seconds of `reps` JIT runs
 * keeping --html's sample of per_class points of each reason (0: none). */
static double best_sampled(Sweep *sw, int per_class, int reps, double *eval, int *dots) {
  SweepOptions o = {1, true, 0, 1, false, NULL, false, false, false, 0, NULL};
  SweepMeta m;
  const SweepRow *rows;
  int n;
  double best = INFINITY;
  *eval = INFINITY;
  sweep_keep_sample(sw, per_class);
  for (int r = 0; r < reps; r++) {
    rt_pipeline_memo_clear();
    double t0 = bench_now();
    if (sweep_run(sw, &o, &m, &rows, &n) < 0) return NAN;
    best = fmin(best, bench_now() - t0), *eval = fmin(*eval, m.elapsed);
  }
  *dots = sweep_sample(sw) ? sweep_sample(sw)->n : 0;
  sweep_keep_sample(sw, 0);
  return best;
}

static const char *field_str(const SweepRow *r, const char *key, char *buf, size_t n) {
  for (int i = 0; i < r->nfields; i++)
    if (!strcmp(r->fields[i].key, key)) {
      if (r->fields[i].str) return r->fields[i].str;
      snprintf(buf, n, "%.6g", r->fields[i].num);
      return buf;
    }
  return "-";
}

int main(int argc, char **argv) {
  const char *file = argc > 1 ? argv[1] : LLMP_SOURCE_DIR "/examples/sweeps/gpt3_175b_selene.llmp";
  const char *name = argc > 2 ? argv[2] : NULL;
  Diag d;
  diag_init(&d, stderr);
  SemaOptions so = {NULL, 0, NULL};
  Sema *s = sema_new(&d, &so);
  if (sema_run(s, file, true)) return 1;
  HwSet *hw = hw_new(s, &d, &so);
  Decl *list[16];
  int n = sema_root_decls(s, DK_SWEEP, list, 16);
  Decl *decl = NULL;
  for (int i = 0; i < n && i < 16 && !decl; i++)
    if (!name || !strcmp(sema_decl_name(list[i]), name)) decl = list[i];
  if (!decl) {
    fprintf(stderr, "bench_sweep: %s has no sweep%s%s\n", file, name ? " named " : "", name ? name : "");
    return 1;
  }
  SweepOptions oj = {1, true, 0, 1, false, NULL, false, false, false, 0, NULL}, oi = {1, false, 0, 1, false, NULL, false, false, false, 0, NULL};
  double t0 = bench_now();
  Sweep *sj = sweep_new(s, hw, decl, &d, &oj);
  double tj = bench_now() - t0;
  t0 = bench_now();
  Sweep *si = sweep_new(s, hw, decl, &d, &oi);
  double ti = bench_now() - t0;
  if (!sj || !si) return 1;
  const Graph *g = sweep_graph(sj);
  int calls = 0;
  for (int i = 0; i < g->nn; i++) calls += g->n[i].op == GN_CALL;
  uint64_t P = sweep_points(sj);
  printf("sweep %s (%s)\n", sema_decl_name(decl), file);
  printf("  points %llu, graph nodes %d, kernel calls %d, loops %d\n", (unsigned long long)P, g->nn, calls,
         sweep_levels(sj));
  for (int k = 0; k < sweep_levels(sj); k++) {
    int nv, nn, nc;
    const char *ax = sweep_loop(sj, k, &nv, &nn, &nc);
    printf("    loop %d: %-18s %2d values, %5d nodes, %3d kernel calls each time it advances\n", k, ax, nv, nn, nc);
  }
  printf("  compile: lowering + staging %.1f ms; JIT %.1f ms (total with JIT %.1f ms)\n", 1e3 * ti,
         1e3 * sweep_jit_seconds(sj), 1e3 * tj);
  int distinct;
  double lowering;
  int structures = sweep_structures(sj, &distinct, &lowering);
  if (structures > 1) /* the figures of one graph above are the first structure's */
    printf("  structures %d, %d distinct graphs: lowering %.2f ms and JIT %.1f ms a graph (on one thread)\n", structures,
           distinct, 1e3 * lowering / structures, 1e3 * sweep_jit_seconds(sj) / distinct);

  SweepMeta mj, mi;
  const SweepRow *rj, *ri;
  int nj, ni;
  SweepMeta mj0, mi0;
  const SweepRow *rj0, *ri0;
  int nj0, ni0;
  double ej0 = best_run(sj, true, false, 3, &mj0, &rj0, &nj0);
  double ei0 = best_run(si, false, false, 3, &mi0, &ri0, &ni0);
  /* the next runs of sj and si free these rows: keep copies (point, objective) */
  SweepRow *cj0 = calloc((size_t)nj0 + 1, sizeof *cj0), *ci0 = calloc((size_t)ni0 + 1, sizeof *ci0);
  if (!cj0 || !ci0) return 1;
  memcpy(cj0, rj0, (size_t)nj0 * sizeof *cj0);
  memcpy(ci0, ri0, (size_t)ni0 * sizeof *ci0);
  rj0 = cj0, ri0 = ci0;
  double ej = best_run(sj, true, true, 3, &mj, &rj, &nj);
  double ei = best_run(si, false, true, 3, &mi, &ri, &ni);
  printf("  pruning: %llu of the %llu points that pass skip their pipeline simulation\n",
         (unsigned long long)sweep_pruned(sj), (unsigned long long)mj.kept);
  printf("  JIT:                      %10.3f ms for %llu points = %12.0f points/s on one core\n", 1e3 * ej,
         (unsigned long long)P, (double)P / ej);
  printf("  JIT, no pruning:          %10.3f ms for %llu points = %12.0f points/s on one core\n", 1e3 * ej0,
         (unsigned long long)P, (double)P / ej0);
  printf("  interpreter:              %10.3f ms for %llu points = %12.0f points/s on one core (same levels)\n",
         1e3 * ei, (unsigned long long)P, (double)P / ei);
  printf("  interpreter, no pruning:  %10.3f ms for %llu points = %12.0f points/s on one core (same levels)\n",
         1e3 * ei0, (unsigned long long)P, (double)P / ei0);
  printf("  JIT / interpreter (same levels): %.1fx, without pruning %.1fx\n", ei / ej, ei0 / ej0);

  /* each point's whole graph, no staging */
  double *vals = calloc((size_t)g->nn, sizeof *vals), *in = calloc((size_t)sweep_levels(sj) + 1, sizeof *in);
  uint64_t sample = P < 3000 ? P : 3000, step = P / sample;
  t0 = bench_now();
  for (uint64_t k = 0; k < sample; k++) {
    sweep_point_inputs(sj, k * step, in);
    graph_eval(g, in, vals);
  }
  double ef = (bench_now() - t0) / (double)sample;
  printf("  interpreter, whole graph per point: %.2f us per point = %.0f points/s (sample of %llu)\n", 1e6 * ef, 1 / ef,
         (unsigned long long)sample);
  printf("  JIT / whole-graph interpreter: %.0fx (JIT without pruning: %.0fx)\n", ef * (double)P / ej,
         ef * (double)P / ej0);
  bool same = nj == ni && mj.kept == mi.kept && nj == nj0 && nj == ni0;
  for (int i = 0; same && i < nj; i++)
    same = rj[i].point == ri[i].point && !memcmp(&rj[i].objective, &ri[i].objective, sizeof(double)) &&
           rj[i].point == rj0[i].point && !memcmp(&rj[i].objective, &rj0[i].objective, sizeof(double)) &&
           rj[i].point == ri0[i].point && !memcmp(&rj[i].objective, &ri0[i].objective, sizeof(double));
  printf("  JIT and interpreter, with and without pruning, kept the same points, bit for bit: %s\n",
         same ? "yes" : "NO");
  free(cj0);
  free(ci0);
  printf("  kept %llu of %llu points (%d dropped reasons)\n", (unsigned long long)mj.kept, (unsigned long long)P,
         mj.ndropped);
  if (nj > 0) {
    char b[9][64];
    printf("  best: tp %s pp %s dp %s micro_batch %s recompute %s schedule %s sp %s zero %s vs %s\n",
           field_str(&rj[0], "plan.tp", b[0], 64), field_str(&rj[0], "plan.pp", b[1], 64),
           field_str(&rj[0], "plan.dp", b[2], 64), field_str(&rj[0], "plan.micro_batch", b[3], 64),
           field_str(&rj[0], "plan.recompute", b[4], 64), field_str(&rj[0], "plan.schedule", b[5], 64),
           field_str(&rj[0], "plan.sequence_parallel", b[6], 64), field_str(&rj[0], "plan.zero", b[7], 64),
           field_str(&rj[0], "plan.virtual_stages", b[8], 64));
    printf("        iteration %s s, memory peak %s B, mfu %s\n", field_str(&rj[0], "iteration_s", b[1], 64),
           field_str(&rj[0], "memory.peak", b[2], 64), field_str(&rj[0], "mfu", b[3], 64));
  }
  /* last: re-running sj frees the rows above */
  double e0, e1;
  int d0, d1;
  double w0 = best_sampled(sj, 0, 3, &e0, &d0), w1 = best_sampled(sj, 1000, 3, &e1, &d1);
  printf("  JIT with --html's sample: %10.3f ms evaluating (%10.3f without), %.1f ms the whole run (%.1f without; "
         "%d points sampled)\n", 1e3 * e1, 1e3 * e0, 1e3 * w1, 1e3 * w0, d1);
  free(vals);
  free(in);
  sweep_free(sj);
  sweep_free(si);
  hw_free(hw);
  sema_free(s);
  diag_free(&d);
  jit_shutdown();
  return same ? 0 : 1;
}
