/* test_lower_fit.c - lower_fit_changes (compiler/lower/lower_fit.c): the changes of plan that
 * make a plan fit, each the model's own figures for the plan so changed.
 *
 *   scenario   a scenario's plan: each change, lowered alone as a plan, gives the listed time
 *              and peak to the bit; nothing for a plan that fits
 *   sweep      a sweep's point: its axes stay, its `let` derives dp for the changed tp */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/diag.h"
#include "front/sema.h"
#include "lower/graph.h"
#include "lower/hw.h"
#include "lower/lower.h"
#include "report/report.h"

#include "support.h"
#include "support_lower.h"

/* Llama 3 70B on 4 Eos nodes, tp 8 x dp 4, no ZeRO: about 170 GiB a GPU. */
static const char *const text =
    "import \"stdlib/models/llama3\"\n"
    "import \"stdlib/frameworks/megatron\"\n"
    "import \"hw/systems/eos\"\n"
    "plan big { tp = 8; dp = 4; micro_batch = 1; global_batch = 64 }\n"
    "scenario big_run { model = llama3_70b; cluster = eos { nodes = 4 }; plan = big; framework = megatron_core }\n"
    "sweep big_sweep extends big_run {\n"
    "  vary plan.tp in [4, 8]\n"
    "  let plan.dp = cluster.gpus / (plan.tp * plan.pp)\n"
    "}\n";

/* decl lowered with axes and evaluated into *r; false if it does not lower. */
static bool eval_axes(Fx *x, Decl *decl, const LowerAxes *axes, Report *r) {
  Lowered l;
  bool ok = lower_with_axes(x->s, x->hw, decl, axes, &x->d, &l) == 0;
  if (ok) {
    double *vals = calloc((size_t)l.g.nn, sizeof *vals);
    assert_non_null(vals);
    graph_eval(&l.g, NULL, vals);
    lower_report(&l, vals, r);
    free(vals);
  }
  lower_free(&l);
  return ok;
}

/* The point of decl with the given plan axes (pairs of field and value, ending with NULL)
 * lowered and evaluated into *r; false if it does not lower. */
static bool point(Fx *x, Decl *decl, Decl *sweep, Report *r, ...) {
  LowerAxis ax[8];
  int n = 0;
  va_list ap;
  va_start(ap, r);
  for (const char *f; n < 8 && (f = va_arg(ap, const char *));) ax[n++] = (LowerAxis){"plan", f, -1, va_arg(ap, double)};
  va_end(ap);
  return eval_axes(x, decl, &(LowerAxes){ax, n, sweep}, r);
}

/* The point of decl (axes tp = base_tp if > 0) with a listed change ("pp=2 dp=2 zero=1",
 * "recompute=selective") applied, into *r. */
static bool changed(Fx *x, Decl *decl, Decl *sweep, double base_tp, const char *change, Report *r) {
  LowerAxis ax[8];
  int n = 0;
  static char words[8][96];
  if (base_tp > 0) ax[n++] = (LowerAxis){"plan", "tp", -1, base_tp};
  char buf[96];
  snprintf(buf, sizeof buf, "%s", change);
  for (char *w = strtok(buf, " "); w && n < 8; w = strtok(NULL, " ")) {
    char *eq = strchr(w, '=');
    assert_non_null(eq);
    *eq = '\0';
    snprintf(words[n], sizeof words[n], "%s", w);
    double v;
    if (!lower_axis_code(w, eq + 1, &v)) v = atof(eq + 1);
    int k = 0;
    while (k < n && strcmp(ax[k].field, words[n])) k++;
    ax[k] = (LowerAxis){"plan", words[n], -1, v};
    n += k == n;
  }
  return eval_axes(x, decl, &(LowerAxes){ax, n, sweep}, r);
}

TEST(scenario_changes_are_the_model_s) {
  Fx *x = fx_open(text);
  fx_eval(x, "big_run");
  assert_false(x->r.fits);
  Decl *sc = sema_find(x->s, "big_run", DK_SCENARIO);
  lower_fit_changes(x->s, x->hw, sc, NULL, &x->r);
  assert_true(x->r.nfix > 0 && x->r.nfix <= REPORT_FIXES);
  for (int i = 0; i < x->r.nfix; i++) {
    const ReportFix *f = &x->r.fix[i];
    if (i) assert_true(f->iteration >= x->r.fix[i - 1].iteration); /* fastest first */
    Report r;
    assert_true(changed(x, sc, NULL, 0, f->change, &r));
    assert_true(r.fits);
    if (r.iteration != f->iteration || r.peak != f->peak)
      fail_msg("%s: listed %.17g s, %.17g B; lowered %.17g s, %.17g B", f->change, f->iteration, f->peak, r.iteration,
               r.peak);
  }
  /* a plan that fits gets none */
  Report fits;
  double full;
  assert_true(lower_axis_code("recompute", "full", &full));
  assert_true(point(x, sc, NULL, &fits, "zero", 1.0, "recompute", full, "pp", 4.0, "dp", 1.0, NULL));
  assert_true(fits.fits);
  fits.nfix = 7;
  lower_fit_changes(x->s, x->hw, sc, NULL, &fits);
  assert_int_equal(fits.nfix, 0);
  fx_close(x);
}

/* A sweep's point keeps its axes, and the sweep's let derives dp where tp changes. */
TEST(sweep_point_keeps_its_axes) {
  Fx *x = fx_open(text);
  Decl *sw = sema_find(x->s, "big_sweep", DK_SWEEP);
  assert_non_null(sw);
  LowerAxis ax = {"plan", "tp", -1, 4};
  LowerAxes axes = {&ax, 1, sw};
  Report r;
  assert_true(point(x, sw, sw, &r, "tp", 4.0, NULL));
  assert_false(r.fits);
  assert_int_equal(r.dp, 8);
  lower_fit_changes(x->s, x->hw, sw, &axes, &r);
  assert_true(r.nfix > 0);
  for (int i = 0; i < r.nfix; i++) { /* tp stays 4 unless the change says otherwise */
    Report again;
    const char *c = r.fix[i].change;
    assert_true(changed(x, sw, sw, 4, c, &again));
    if (again.iteration != r.fix[i].iteration || again.peak != r.fix[i].peak || !again.fits)
      fail_msg("%s: listed %.17g s, %.17g B; lowered %.17g s, %.17g B", c, r.fix[i].iteration, r.fix[i].peak,
               again.iteration, again.peak);
    if (!strstr(c, "tp=")) assert_int_equal(again.tp, 4);
    if (!strstr(c, "tp=") && !strstr(c, "pp=")) assert_int_equal(again.dp, 8); /* the let's */
  }
  fx_close(x);
}

/* cuda_graphs on: turning them off is a change like the others (here the one that fits
 * fastest), and alone it saves the static buffers, 80 layers x (input + output) x 2 x 7680
 * tokens x 8192 / 8 x 2 bytes; with them off already, nothing is said of them. */
TEST(graphs_off_is_a_change) {
  static const char *const g =
      "import \"stdlib/models/llama3\"\n"
      "import \"stdlib/frameworks/megatron\"\n"
      "import \"hw/systems/eos\"\n"
      "plan p { tp = 8; dp = 4; micro_batch = 2; global_batch = 64; zero = 3; sequence_parallel = true; "
      "cuda_graphs = true }\n"
      "scenario on { model = llama3_70b { seq = 7680 }; cluster = eos { nodes = 4 }; plan = p; framework = "
      "megatron_core }\n"
      "scenario off { model = llama3_70b { seq = 7680 }; cluster = eos { nodes = 4 }; plan = p { cuda_graphs = "
      "false; micro_batch = 4 }; framework = megatron_core }\n";
  Fx *x = fx_open(g);
  fx_eval(x, "on");
  assert_false(x->r.fits);
  Decl *sc = sema_find(x->s, "on", DK_SCENARIO);
  lower_fit_changes(x->s, x->hw, sc, NULL, &x->r);
  assert_true(x->r.nfix > 0);
  assert_string_equal(x->r.fix[0].change, "cuda_graphs=false");
  Report r;
  assert_true(changed(x, sc, NULL, 0, "cuda_graphs=false", &r));
  assert_true(r.fits && !r.cuda_graphs);
  assert_true(r.iteration == x->r.graphs_off.iteration && r.peak == x->r.graphs_off.peak);
  assert_true(x->r.graphs_saves == 80.0 * 2 * 2 * 7680 * 8192 / 8 * 2);
  assert_true(x->r.graphs_saves == x->r.peak - r.peak);
  fx_eval(x, "off");
  assert_false(x->r.fits);
  lower_fit_changes(x->s, x->hw, sema_find(x->s, "off", DK_SCENARIO), NULL, &x->r);
  assert_true(x->r.graphs_saves == 0);
  for (int i = 0; i < x->r.nfix; i++) assert_null(strstr(x->r.fix[i].change, "cuda_graphs"));
  fx_close(x);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scenario_changes_are_the_model_s),
      cmocka_unit_test(sweep_point_keeps_its_axes),
      cmocka_unit_test(graphs_off_is_a_change),
  };
  return RUN_TESTS(tests);
}
