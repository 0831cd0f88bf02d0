/* test_html.c - unit tests of compiler/report/html*.c, the HTML report, without a browser
 * (tests/html loads the pages in Chromium): escaping, the page's frame and its policy, a
 * scenario's section from a lowered scenario (and the figures lowering hands it: memory by
 * stage, kernel calls), a sweep's and validation's sections from rows built here, and a
 * failed write. */
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

#include "report/html_private.h"

#include "support.h"
#include "support_lower.h"

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

static char *escaped(const char *s) {
  Mem m;
  W w = {mem_open(&m), 0};
  html_esc(&w, s);
  return mem_take(&m);
}

/* Markup, quotes, a byte that is not UTF-8, a control character, and UTF-8 kept. */
static void escapes_text(void **state) {
  (void)state;
  char *t = escaped("a<b>&\"'\xff\x01 \xc3\xa9\t");
  assert_string_equal(t, "a&lt;b&gt;&amp;&quot;&#39;\xEF\xBF\xBD\xEF\xBF\xBD \xc3\xa9\t");
  free(t);
  t = escaped(NULL);
  assert_string_equal(t, "");
  free(t);
}

/* The page loads nothing: a policy of default-src 'none', no script, and the title escaped. */
static void page_frame(void **state) {
  (void)state;
  Mem m;
  Html *h = html_open(mem_open(&m), "llmp run: <x>.llmp");
  assert_int_equal(html_close(h), 0);
  const char *t = mem_text(&m);
  assert_non_null(strstr(t, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"));
  assert_non_null(strstr(t, "<title>llmp run: &lt;x&gt;.llmp</title>"));
  assert_null(strstr(t, "<script"));
  assert_null(strstr(t, "http:"));
  assert_null(strstr(t, "https:"));
  assert_int_equal(count(t, "<pattern id=\"h"), HC_N);
  assert_string_equal(t + strlen(t) - 15, "</body></html>\n");
  mem_free(&m);
}

static void tick_steps(void **state) {
  (void)state;
  static const struct {
    double lo, hi;
    int n;
    double step;
  } cases[] = {{0, 17, 8, 2}, {0, 1, 8, 0.1}, {0, 0.001, 5, 0.0002}, {0, 1e10, 4, 2e9}, {0, 30, 4, 10}, {3, 3, 5, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double s = html_tick_step(cases[i].lo, cases[i].hi, cases[i].n);
    if (fabs(s - cases[i].step) > 1e-9 * cases[i].step)
      fail_msg("ticks over [%g, %g] by %d: %g, not %g", cases[i].lo, cases[i].hi, cases[i].n, s, cases[i].step);
  }
}

static const char scenario_text[] =
    "import \"stdlib/transformer\"\n"
    "import \"hw/systems/selene\"\n"
    "model m extends gpt { layers = 8; hidden = 1024; heads = 16; seq = 1024; vocab = 32000 }\n"
    "plan p { tp = 2; pp = 2; micro_batch = 1; global_batch = 16 }\n"
    "scenario s { model = m; cluster = selene { nodes = 1 }; plan = p }\n";

/* What lowering hands the page agrees with the report: the larger stage's memory is the
 * report's by part and its sum the peak; the calls are the report's calls. */
static void stage_memory_and_calls_agree_with_report(void **state) {
  (void)state;
  Fx *x = fx_open(scenario_text);
  fx_eval(x, "s");
  double mem[2][RM_N], sum[2] = {0, 0};
  lower_stage_memory(&x->l, x->vals, mem);
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < RM_N; i++) sum[d] += mem[d][i];
  int big = sum[1] > sum[0];
  assert_int_equal(x->r.peak_stage, big ? x->r.pp - 1 : 0);
  assert_true(sum[big] == x->r.peak);
  for (int i = 0; i < RM_N; i++) assert_true(mem[big][i] == x->r.memory[i]);
  LowerCall *c;
  int n = lower_calls(&x->l, x->vals, &c), cal = 0;
  for (int i = 0; i < n; i++) cal += c[i].calibrated;
  assert_int_equal(n, x->r.calls);
  assert_int_equal(cal, x->r.calibrated_calls);
  free(c);
  fx_close(x);
}

/* A scenario's section: its four charts, a table under each, a timeline row per stage and
 * stream in use, and the report's iteration time. */
static void scenario_section(void **state) {
  (void)state;
  Fx *x = fx_open(scenario_text);
  fx_eval(x, "s");
  Mem m;
  Html *h = html_open(mem_open(&m), "t");
  html_scenario(h, &x->l, x->vals, &x->r);
  assert_int_equal(html_close(h), 0);
  const char *t = mem_text(&m);
  static const char *const charts[] = {"breakdown", "timeline", "memory", "kernels"};
  for (int i = 0; i < 4; i++) {
    char a[64], b[64];
    snprintf(a, sizeof a, "data-chart=\"%s\"", charts[i]);
    snprintf(b, sizeof b, "data-table=\"%s\"", charts[i]);
    assert_int_equal(count(t, a), 1);
    assert_int_equal(count(t, b), 1);
  }
  char it[64], want[96];
  snprintf(want, sizeof want, "<dd>%s</dd>", report_time(it, sizeof it, x->r.iteration));
  assert_non_null(strstr(t, want));
  for (int d = 0; d < 2; d++) {
    snprintf(want, sizeof want, "stage %d compute", d);
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "stage %d pp send/recv", d);
    assert_non_null(strstr(t, want));
  }
  assert_null(strstr(t, "stage 2 compute"));
  mem_free(&m);
  fx_close(x);
}

static SweepField field(const char *key, double num) { return (SweepField){key, num, NULL, false}; }

/* A sweep: the scatter with its Pareto front (the plans no other beats on both time and
 * memory), an axis chart per axis, the dropped reasons escaped. */
static void sweep_section(void **state) {
  (void)state;
  enum { N = 4 };
  static const double tp[N] = {1, 2, 4, 8}, time[N] = {1.0, 2.0, 1.5, 3.0}, peak[N] = {4e9, 2e9, 3e9, 1e9};
  SweepField f[N][3];
  SweepRow rows[N];
  for (int i = 0; i < N; i++) {
    f[i][0] = field("plan.tp", tp[i]), f[i][1] = field("iteration_s", time[i]), f[i][2] = field("memory.peak", peak[i]);
    rows[i] = (SweepRow){(uint64_t)i, time[i], 3, f[i]};
  }
  sweep_sort(rows, N, false);
  SweepDrop drops[2] = {{"memory.peak <= 80 GiB", 5}, {"never", 0}};
  SweepMeta meta = {"s<1>", "f.llmp", NULL, "iteration", false, 4, 9, 0, 1, 9, 4, 2, drops, NAN, 0, NULL, NULL, NULL};
  const char *axes[1] = {"plan.tp"};
  Mem m;
  Html *h = html_open(mem_open(&m), "t");
  html_sweep(h, &meta, rows, N, axes, 1);
  assert_int_equal(html_close(h), 0);
  const char *t = mem_text(&m);
  assert_int_equal(count(t, "data-chart=\"sweep-scatter\""), 1);
  assert_int_equal(count(t, "data-chart=\"axis-effect\""), 1);
  assert_int_equal(count(t, "data-mark=\"front\""), 4); /* 1 s at 4 GB ... 3 s at 1 GB: each beats another */
  assert_non_null(strstr(t, "memory.peak &lt;= 80 GiB"));
  assert_null(strstr(t, ">never<"));
  assert_non_null(strstr(t, "Sweep s&lt;1&gt;"));
  mem_free(&m);
}

/* Pareto: a plan both slower and bigger than another is off the front, and so is one that
 * does not fit (a cross), however fast and small. */
static void sweep_pareto_drops_dominated(void **state) {
  (void)state;
  SweepField f[3][3] = {{{"iteration_s", 1, NULL, false}, {"memory.peak", 1e9, NULL, false}, {"fits", NAN, "yes", false}},
                        {{"iteration_s", 2, NULL, false}, {"memory.peak", 2e9, NULL, false}, {"fits", NAN, "yes", false}},
                        {{"iteration_s", 0.5, NULL, false}, {"memory.peak", 0.5e9, NULL, false}, {"fits", NAN, "no", false}}};
  SweepRow rows[3] = {{2, 0.5, 3, f[2]}, {0, 1, 3, f[0]}, {1, 2, 3, f[1]}};
  SweepMeta meta = {"s", "f", NULL, "iteration", false, 3, 3, 0, 1, 3, 3, 0, NULL, NAN, 0, NULL, NULL, NULL};
  Mem m;
  Html *h = html_open(mem_open(&m), "t");
  html_sweep(h, &meta, rows, 3, NULL, 0);
  assert_int_equal(html_close(h), 0);
  const char *t = mem_text(&m);
  assert_int_equal(count(t, "data-mark=\"front\""), 1);
  assert_int_equal(count(t, "<path d=\"M"), 1); /* the cross */
  assert_non_null(strstr(t, "No point was dropped."));
  mem_free(&m);
}

/* Validation: a mark per row that fits, none for one that does not (listed in the table),
 * the bands, names escaped. */
static void validate_section(void **state) {
  (void)state;
  Report a = {.scenario = "a<b", .file = "x.llmp", .gpus = 8, .tp = 2, .pp = 2, .dp = 2, .fits = true,
              .iteration = 1.02, .measured_iteration = 1.0, .error_pct = 2.0};
  Report b = a, c = a;
  b.scenario = "far", b.iteration = 1.3, b.error_pct = 30;
  c.scenario = "big", c.fits = false;
  Mem m;
  Html *h = html_open(mem_open(&m), "t");
  html_validate_add(h, &a);
  html_validate_add(h, &b);
  html_validate_add(h, &c);
  html_validate(h, 16, 30);
  assert_int_equal(html_close(h), 0);
  const char *t = mem_text(&m);
  assert_int_equal(count(t, "data-point="), 2);
  assert_int_equal(count(t, "<polygon"), 2);
  assert_non_null(strstr(t, "a&lt;b"));
  assert_non_null(strstr(t, "+30.00 %"));
  assert_non_null(strstr(t, "does not fit"));
  assert_non_null(strstr(t, "2 scenarios: mean |error| 16.00 %, max |error| 30.00 %; 1 within 5 %, 1 within 10 %."));
  mem_free(&m);
}

/* A page that cannot be written says so when it is closed. */
static void write_failure(void **state) {
  (void)state;
  FILE *f = fopen("/dev/full", "w");
  if (!f) skip();
  Html *h = html_open(f, "t");
  assert_int_equal(html_close(h), -1);
  fclose(f);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(escapes_text),
      cmocka_unit_test(page_frame),
      cmocka_unit_test(tick_steps),
      cmocka_unit_test(stage_memory_and_calls_agree_with_report),
      cmocka_unit_test(scenario_section),
      cmocka_unit_test(sweep_section),
      cmocka_unit_test(sweep_pareto_drops_dominated),
      cmocka_unit_test(validate_section),
      cmocka_unit_test(write_failure),
  };
  return RUN_TESTS(tests);
}
