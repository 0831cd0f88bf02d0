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
  html_sweep(h, &meta, rows, N, axes, 1, NULL);
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
  html_sweep(h, &meta, rows, 3, NULL, 0, NULL);
  assert_int_equal(html_close(h), 0);
  const char *t = mem_text(&m);
  assert_int_equal(count(t, "data-mark=\"front\""), 1);
  assert_int_equal(count(t, "<path d=\"M"), 2); /* the cross, and its legend's */
  assert_non_null(strstr(t, "No point was dropped."));
  mem_free(&m);
}


/* The marks of group `what` (data-dots="WHAT" data-count="N"): N, checked against the marks
 * inside it; -1 when there is no such group. */
static int group_marks(const char *t, const char *what) {
  char a[64];
  snprintf(a, sizeof a, "<g data-dots=\"%s\" data-count=\"", what);
  const char *g = strstr(t, a);
  if (!g) return -1;
  int n = atoi(g + strlen(a)), marks = 0;
  const char *end = strstr(g, "</g>");
  for (const char *p = strstr(g, "<title>"); p < end; p++)
    marks += !strncmp(p, "<circle", 7) || !strncmp(p, "<path", 5) || !strncmp(p, "<rect", 5);
  assert_int_equal(marks, n);
  return n;
}

/* The points evaluated besides the kept ones: a group of marks per reason with its count, the
 * ranked points that were kept left to the kept marks, points without figures not drawn, each
 * reason's count and marks in the table, a reason without figures said to have none; memory
 * spanning more than 20 times on a log scale. */
static void sweep_dropped_points(void **state) {
  (void)state;
  SweepField f[2][2] = {{{"iteration_s", 1, NULL, false}, {"memory.peak", 2e9, NULL, false}},
                        {{"iteration_s", 1.5, NULL, false}, {"memory.peak", 1e9, NULL, false}}};
  SweepRow rows[2] = {{7, 1, 2, f[0]}, {3, 1.5, 2, f[1]}};
  SweepDrop drops[4] = {{"tp does not divide <heads>", 40}, {"plan.zero <= 1", 2}, {"memory.peak <= 80 GiB", 900},
                        {"equivalent to x", 1}};
  SweepMeta meta = {"s", "f", NULL, "iteration", false, 2, 1000, 0, 1, 1000, 57, 4, drops, NAN, 0, NULL, NULL, NULL};
  SweepDot dots[] = {
      {5, 1, SWEEP_DOT_REQUIRE, 3.0, 0.5e9, true},      {9, 1, SWEEP_DOT_REQUIRE, 2.5, 0.7e9, true},
      {2, 2, SWEEP_DOT_FIT, 1.2, 90e9, false},           {4, 2, SWEEP_DOT_FIT, NAN, NAN, false},
      {6, 2, SWEEP_DOT_FIT, 0.9, 120e9, false},          {8, 3, SWEEP_DOT_EQUIVALENT, 1.0, 2e9, true},
      {3, -1, SWEEP_DOT_RANKED, 1.5, 1e9, true},         {7, -1, SWEEP_DOT_RANKED, 1, 2e9, true},
      {11, -1, SWEEP_DOT_RANKED, 2.0, 3e9, true},        {12, -1, SWEEP_DOT_RANKED, 2.2, 3.5e9, true},
  };
  SweepSample sample = {2, (int)(sizeof dots / sizeof dots[0]), dots};
  Mem m;
  Html *h = html_open(mem_open(&m), "t");
  html_sweep(h, &meta, rows, 2, NULL, 0, &sample);
  assert_int_equal(html_close(h), 0);
  const char *t = mem_text(&m);
  assert_int_equal(group_marks(t, "ranked"), 2); /* 3 and 7 are kept */
  assert_int_equal(group_marks(t, "0"), -1);     /* a check: no figures */
  assert_int_equal(group_marks(t, "1"), 2);
  assert_int_equal(group_marks(t, "2"), 2); /* 4 has none */
  assert_int_equal(group_marks(t, "3"), 1);
  assert_true(strstr(t, "data-dots=\"ranked\"") < strstr(t, "data-dots=\"1\"")); /* under the dropped */
  assert_non_null(strstr(t, "<tr data-reason=\"ranked\"><td>ranked below the kept</td><td>ranked below the kept</td>"
                            "<td class=\"n\">55</td><td class=\"n\">2</td></tr>"));
  assert_non_null(strstr(t, "<tr data-reason=\"0\"><td>tp does not divide &lt;heads&gt;</td><td>-</td>"
                            "<td class=\"n\">40</td><td class=\"n\">none: no figures</td></tr>"));
  assert_non_null(strstr(t, "<tr data-reason=\"2\"><td>memory.peak &lt;= 80 GiB</td><td>does not fit</td>"
                            "<td class=\"n\">900</td><td class=\"n\">2</td></tr>"));
  assert_non_null(strstr(t, "peak memory per GPU (log scale)"));
  assert_non_null(strstr(t, ">iteration time</text>")); /* 0.9 s to 3 s: linear */
  assert_non_null(strstr(t, "a uniform sample of 2"));
  for (int k = 0; k < 4; k++) { /* each kind drawn is in the legend */
    static const char *const names[] = {"ranked below the kept", "failed a require", "does not fit",
                                        "equivalent to another plan"};
    char li[96];
    snprintf(li, sizeof li, "</g></svg>%s</li>", names[k]);
    assert_non_null(strstr(t, li));
  }
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
      cmocka_unit_test(sweep_dropped_points),
      cmocka_unit_test(validate_section),
      cmocka_unit_test(write_failure),
  };
  return RUN_TESTS(tests);
}
