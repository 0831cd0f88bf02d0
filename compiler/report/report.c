/* report.c - printing a Report: a table for people, JSON Lines and CSV for programs, and
 * the Chrome trace of one iteration.
 *
 * The table, one scenario (every line after the title indented by two):
 *
 *   scenario neox20b (examples/quickstart.llmp)
 *     model gpt_neox_20b on perlmutter (128 x a100_sxm4_80gb)
 *     plan tp=4 pp=4 dp=8 cp=1 ep=1
 *     micro_batch=4 global_batch=512: 32 micro-batches per iteration
 *     dtype=fp16 schedule=1f1b recompute=full zero=1 sequence_parallel=false
 *     iteration                     17.5 s
 *       forward                      4.5 s   25.7 %
 *       ...                                   (parts that are 0 are left out, but forward,
 *       pipeline bubble              2.5 s   14.3 %     backward and the bubble always show)
 *     tokens/s                      59918
 *     model TFLOP/s per GPU         128.4
 *     MFU                          41.2 %
 *     memory per GPU
 *       weights                  9.3 GiB   21.4 %     (percent of the peak)
 *       ...
 *     peak 43.6 GiB of 80 GiB (stage 0), fits
 *     measured 17.37 s, error +0.7 %
 *     kernels: 120 of 140 calls calibrated
 *       (then, where the GPU's sustained figures scale its tensor-core rate:
 *       "; tensor-core rate x 0.615 (sustained_compute)", and for an fp8 plan
 *       ", fp8 GEMMs x 0.575 (sustained_compute_fp8)")
 *
 * A plan that does not fit is never reported as a time: its table has the message of
 * report_fit_message() as the first line after the title and no iteration, tokens/s,
 * TFLOP/s or MFU lines; JSON has null for those (and for the breakdown and error_pct), CSV
 * empty fields.
 *
 * JSON and CSV values are written by emit.h: numbers the shortest text that reads back as
 * the same double (so results can be traced and compared bit for bit), one UTF-8 rule for
 * strings.  NaN and infinities are written null in JSON, empty in CSV.
 *
 * The trace has a process per pipeline stage ("stage D") and four threads in it: compute
 * (0), tp/cp/ep comm (1), pp send/recv (2) and dp comm (3).  Times are written in whole
 * nanoseconds (microseconds with three decimals), and an event's operators are placed by
 * integer arithmetic, so they tile their parent exactly and never stick out of it. */
#include "report.h"

#include "emit.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *key, *label;
} part_info[] = {       /* ORDER ReportPart */
#define X(e, k, l) {k, l},
    REPORT_PARTS(X)
#undef X
};

static const struct {
  const char *key, *label;
} memory_info[] = {     /* ORDER ReportMemory */
#define X(e, k, l) {k, l},
    REPORT_MEMORY(X)
#undef X
};

static const char *str(const char *s) { return s ? s : ""; }

/* --- a FILE that remembers its first error ------------------------------------------- */

typedef struct W {
  FILE *f;
  int err;              /* errno of the first failed write; 0 if none */
} W;

static void w_fail(W *w) {
  if (!w->err) w->err = errno ? errno : EIO;
}

static void w_write(W *w, const char *s, size_t n) {
  if (n && fwrite(s, 1, n, w->f) != n) w_fail(w);
}

static void w_puts(W *w, const char *s) { w_write(w, s, strlen(s)); }

static void w_putc(W *w, char c) { w_write(w, &c, 1); }

static void w_printf(W *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void w_printf(W *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (vfprintf(w->f, fmt, ap) < 0) w_fail(w);
  va_end(ap);
}

/* Flushes; returns 0, or -1 with errno set if anything failed. */
static int w_finish(W *w) {
  if (fflush(w->f) != 0) w_fail(w);
  if (ferror(w->f) && !w->err) w->err = EIO;
  if (w->err) {
    errno = w->err;
    return -1;
  }
  return 0;
}

/* snprintf at buf[*len]; *len stays below n whatever the text's length. */
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...) {
  if (*len + 1 >= n) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *len, n - *len, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  *len = (size_t)k >= n - *len ? n - 1 : *len + (size_t)k;
}

/* --- numbers with units ---------------------------------------------------------------- */

/* "-0" (a small negative value rounded) reads as 0. */
static void drop_negative_zero(char *num) {
  if (num[0] == '-' && strspn(num + 1, "0.") == strlen(num + 1)) memmove(num, num + 1, strlen(num));
}

const char *report_time(char *buf, unsigned n, double seconds) {
  static const struct {
    double scale;
    const char *unit;
  } units[] = {{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}};
  enum { S = 3 };
  if (!buf || !n) return "";
  if (!isfinite(seconds)) {
    snprintf(buf, n, "n/a");
    return buf;
  }
  if (seconds == 0) {
    snprintf(buf, n, "0 s");
    return buf;
  }
  double a = fabs(seconds);
  int u = a >= 1 ? S : a >= 1e-3 ? 2 : a >= 1e-6 ? 1 : 0;
  char num[48];
  for (;;) {
    double v = seconds / units[u].scale;
    if (u == S && fabs(v) >= 1000 && fabs(v) < 1e15)
      snprintf(num, sizeof num, "%.0f", v);
    else
      snprintf(num, sizeof num, "%.4g", v);
    /* 0.99996 s rounds to "1000" ms: say "1 s" instead. */
    if (u < S && fabs(strtod(num, NULL)) >= 1000) {
      u++;
      continue;
    }
    break;
  }
  drop_negative_zero(num);
  snprintf(buf, n, "%s %s", num, units[u].unit);
  return buf;
}

const char *report_bytes(char *buf, unsigned n, double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  enum { LAST = sizeof units / sizeof units[0] - 1 };
  if (!buf || !n) return "";
  if (!isfinite(bytes)) {
    snprintf(buf, n, "n/a");
    return buf;
  }
  unsigned u = 0;
  double v = bytes;
  while (u < LAST && fabs(v) >= 1024) {
    v /= 1024;
    u++;
  }
  char num[400];        /* %.1f of up to DBL_MAX / 2^40 */
  for (;;) {
    snprintf(num, sizeof num, u ? "%.1f" : "%.0f", v);
    /* 1023.96 KiB rounds to "1024.0": say "1 MiB" instead. */
    if (u < LAST && fabs(strtod(num, NULL)) >= 1024) {
      v /= 1024;
      u++;
      continue;
    }
    break;
  }
  size_t len = strlen(num);
  if (len > 2 && strcmp(num + len - 2, ".0") == 0) num[len - 2] = '\0';
  drop_negative_zero(num);
  snprintf(buf, n, "%s %s", num, units[u]);
  return buf;
}

const char *report_fit_message(char *buf, unsigned n, const Report *r) {
  if (!buf || !n) return "";
  buf[0] = '\0';
  if (!r) return buf;
  char need[48], cap[48], part[48];
  size_t len = 0;
  append(buf, n, &len, "%s: needs %s of %s", r->fits ? "fits" : "does not fit",
         report_bytes(need, sizeof need, r->peak), report_bytes(cap, sizeof cap, r->capacity));
  /* The parts, largest first (insertion sort: ties keep the order of REPORT_MEMORY). */
  int order[RM_N], k = 0;
  for (int i = 0; i < RM_N; i++) {
    if (!isfinite(r->memory[i]) || r->memory[i] == 0) continue;
    int j = k++;
    while (j > 0 && r->memory[order[j - 1]] < r->memory[i]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
  for (int i = 0; i < k; i++)
    append(buf, n, &len, "%s%s %s", i ? ", " : ": ", memory_info[order[i]].label,
           report_bytes(part, sizeof part, r->memory[order[i]]));
  return buf;
}

/* --- the table ------------------------------------------------------------------------- */

enum { LABEL_W = 28, VALUE_W = 10 };

/* One row: the label after `indent` spaces fills LABEL_W columns, the value is
 * right-aligned in VALUE_W, then a percentage unless pct is NaN. */
static void row(W *w, int indent, const char *label, const char *value, double pct) {
  w_printf(w, "%*s%-*s%*s", indent, "", LABEL_W - indent, label, VALUE_W, value);
  if (isfinite(pct)) w_printf(w, " %6.1f %%", pct);
  w_putc(w, '\n');
}

static double percent(double part, double whole) {
  return isfinite(part) && isfinite(whole) && whole > 0 ? 100 * part / whole : NAN;
}

/* "%.*f" of x, or "n/a" if x is not finite. */
static const char *fixed(char *buf, size_t n, double x, int decimals) {
  if (isfinite(x))
    snprintf(buf, n, "%.*f", decimals, x);
  else
    snprintf(buf, n, "n/a");
  return buf;
}

static void print_time_lines(W *w, const Report *r) {
  char v[64];
  row(w, 2, "iteration", report_time(v, sizeof v, r->iteration), NAN);
  for (int i = 0; i < RP_N; i++) {
    bool always = i == RP_FORWARD || i == RP_BACKWARD || i == RP_BUBBLE;
    if (r->part[i] == 0 && !always) continue;
    row(w, 4, part_info[i].label, report_time(v, sizeof v, r->part[i]), percent(r->part[i], r->iteration));
  }
  row(w, 2, "tokens/s", fixed(v, sizeof v, r->tokens_per_s, 0), NAN);
  row(w, 2, "model TFLOP/s per GPU", fixed(v, sizeof v, r->tflops_per_gpu / 1e12, 1), NAN);
  if (isfinite(r->mfu))
    snprintf(v, sizeof v, "%.1f %%", 100 * r->mfu);
  else
    snprintf(v, sizeof v, "n/a");
  row(w, 2, "MFU", v, NAN);
}

/* A sustained figure as applied: x in (0, 1), else 1 (a report built without one has 0). */
static double applied(double x) { return x > 0 && x < 1 ? x : 1; }

static void print_table(W *w, const Report *r) {
  char a[48], b[48], msg[512];
  w_printf(w, "scenario %s (%s)\n", str(r->scenario), str(r->file));
  if (!r->fits) w_printf(w, "  %s\n", report_fit_message(msg, sizeof msg, r));
  w_printf(w, "  model %s on %s (%d x %s)\n", str(r->model), str(r->cluster), r->gpus, str(r->gpu));
  w_printf(w, "  plan tp=%d pp=%d dp=%d cp=%d ep=%d", r->tp, r->pp, r->dp, r->cp, r->ep);
  if (r->virtual_stages > 1) w_printf(w, " virtual_stages=%d", r->virtual_stages);
  w_printf(w, "\n  micro_batch=%d global_batch=%d: %d micro-batch%s per iteration\n", r->micro_batch,
           r->global_batch, r->micro_batches, r->micro_batches == 1 ? "" : "es");
  w_printf(w, "  dtype=%s schedule=%s recompute=%s zero=%d sequence_parallel=%s\n", str(r->dtype),
           str(r->schedule), str(r->recompute), r->zero, r->sequence_parallel ? "true" : "false");

  if (r->fits) print_time_lines(w, r);

  w_puts(w, "  memory per GPU\n");
  for (int i = 0; i < RM_N; i++)
    row(w, 4, memory_info[i].label, report_bytes(a, sizeof a, r->memory[i]), percent(r->memory[i], r->peak));
  w_printf(w, "  peak %s of %s (stage %d), %s\n", report_bytes(a, sizeof a, r->peak),
           report_bytes(b, sizeof b, r->capacity), r->peak_stage, r->fits ? "fits" : "does not fit");

  if (r->has_measured_iteration) {
    w_printf(w, "  measured %s", report_time(a, sizeof a, r->measured_iteration));
    if (!r->fits)
      w_puts(w, " (no prediction: the plan does not fit)");
    else if (isfinite(r->error_pct))
      w_printf(w, ", error %+.1f %%", r->error_pct);
    w_putc(w, '\n');
  }
  if (r->has_measured_tflops)
    w_printf(w, "  measured %s TFLOP/s per GPU\n", fixed(a, sizeof a, r->measured_tflops / 1e12, 1));
  w_printf(w, "  kernels: %d of %d calls calibrated", r->calibrated_calls, r->calls);
  double rest = applied(r->sustained), fp8 = applied(r->sustained_fp8);
  if (rest < 1) w_printf(w, "; tensor-core rate x %.3f (sustained_compute)", rest);
  if (r->dtype && !strcmp(r->dtype, "fp8") && fp8 < 1 && fp8 != rest)
    w_printf(w, "%s fp8 GEMMs x %.3f (sustained_compute_fp8)", rest < 1 ? "," : ";", fp8);
  w_putc(w, '\n');
}

/* --- JSON -------------------------------------------------------------------------------- */

/* A string (NULL: null) and a number (not finite: null) through the one JSON writer. */
static void json_string(W *w, const char *s) {
  if (!s)
    w_puts(w, "null");
  else if (emit_json_string(w->f, s))
    w_fail(w);
}

static void json_number(W *w, double x) {
  if (emit_json_number(w->f, x)) w_fail(w);
}

/* Writing objects and arrays: `first` says whether the next member needs no comma; an
 * element opened at nesting depth `break_depth` starts a new line (0 for none). */
typedef struct J {
  W *w;
  bool first;
  int depth, break_depth;
} J;

static void j_sep(J *j) {
  if (!j->first) w_putc(j->w, ',');
  j->first = false;
}

static void j_key(J *j, const char *key) {
  j_sep(j);
  json_string(j->w, key);
  w_putc(j->w, ':');
}

/* Opens '{' or '[' as the member `key`, or as an array element if key is NULL. */
static void j_open(J *j, const char *key, char bracket) {
  if (key) {
    j_key(j, key);
  } else {
    j_sep(j);
    if (j->depth && j->depth == j->break_depth) w_putc(j->w, '\n');
  }
  w_putc(j->w, bracket);
  j->first = true;
  j->depth++;
}

static void j_close(J *j, char bracket) {
  w_putc(j->w, bracket);
  j->first = false;
  j->depth--;
}

static void j_num(J *j, const char *key, double x) {
  j_key(j, key);
  json_number(j->w, x);
}

static void j_int(J *j, const char *key, long long x) {
  j_key(j, key);
  w_printf(j->w, "%lld", x);
}

static void j_bool(J *j, const char *key, bool x) {
  j_key(j, key);
  w_puts(j->w, x ? "true" : "false");
}

static void j_str(J *j, const char *key, const char *s) {
  j_key(j, key);
  json_string(j->w, s);
}

static void print_json(W *w, const Report *r) {
  J j = {w, true, 0, 0};
  bool valid = r->fits;   /* no time for a plan that does not fit */
  j_open(&j, NULL, '{');
  j_str(&j, "scenario", r->scenario);
  j_str(&j, "file", r->file);
  j_str(&j, "model", r->model);
  j_str(&j, "cluster", r->cluster);
  j_str(&j, "gpu", r->gpu);
  j_int(&j, "gpus", r->gpus);
  j_open(&j, "plan", '{');
  j_int(&j, "tp", r->tp);
  j_int(&j, "pp", r->pp);
  j_int(&j, "dp", r->dp);
  j_int(&j, "cp", r->cp);
  j_int(&j, "ep", r->ep);
  j_int(&j, "virtual_stages", r->virtual_stages);
  j_int(&j, "micro_batch", r->micro_batch);
  j_int(&j, "global_batch", r->global_batch);
  j_int(&j, "micro_batches", r->micro_batches);
  j_int(&j, "zero", r->zero);
  j_bool(&j, "sequence_parallel", r->sequence_parallel);
  j_str(&j, "dtype", r->dtype);
  j_str(&j, "schedule", r->schedule);
  j_str(&j, "recompute", r->recompute);
  j_close(&j, '}');
  j_num(&j, "iteration_s", valid ? r->iteration : NAN);
  if (valid) {
    j_open(&j, "breakdown", '{');
    for (int i = 0; i < RP_N; i++) j_num(&j, part_info[i].key, r->part[i]);
    j_close(&j, '}');
  } else {
    j_key(&j, "breakdown");
    w_puts(w, "null");
  }
  j_num(&j, "tokens_per_s", valid ? r->tokens_per_s : NAN);
  j_num(&j, "model_flops", r->model_flops);
  j_num(&j, "hardware_flops", r->hardware_flops);
  j_num(&j, "tflops_per_gpu", valid ? r->tflops_per_gpu / 1e12 : NAN);
  j_num(&j, "mfu", valid ? r->mfu : NAN);
  j_open(&j, "memory", '{');
  for (int i = 0; i < RM_N; i++) j_num(&j, memory_info[i].key, r->memory[i]);
  j_num(&j, "peak", r->peak);
  j_num(&j, "capacity", r->capacity);
  j_close(&j, '}');
  j_int(&j, "peak_stage", r->peak_stage);
  j_bool(&j, "fits", r->fits);
  if (r->has_measured_iteration) {
    j_num(&j, "measured_iteration_s", r->measured_iteration);
    j_num(&j, "error_pct", valid ? r->error_pct : NAN);
  }
  if (r->has_measured_tflops) j_num(&j, "measured_tflops_per_gpu", r->measured_tflops / 1e12);
  j_int(&j, "calls", r->calls);
  j_int(&j, "calibrated_calls", r->calibrated_calls);
  j_num(&j, "sustained_compute", applied(r->sustained));
  j_num(&j, "sustained_compute_fp8", applied(r->sustained_fp8));
  j_close(&j, '}');
  w_putc(w, '\n');
}

/* --- CSV (RFC 4180, LF line ends) -------------------------------------------------------- */

typedef struct C {
  W *w;
  bool first;
} C;

static void c_sep(C *c) {
  if (!c->first) w_putc(c->w, ',');
  c->first = false;
}

static void c_str(C *c, const char *s) {
  c_sep(c);
  if (emit_csv_field(c->w->f, s)) w_fail(c->w);
}

static void c_int(C *c, long long x) {
  c_sep(c);
  w_printf(c->w, "%lld", x);
}

/* Empty where absent or not finite. */
static void c_num(C *c, bool present, double x) {
  char buf[EMIT_NUM_MAX];
  c_sep(c);
  if (present && isfinite(x)) w_puts(c->w, emit_shortest(buf, sizeof buf, x));
}

static void c_bool(C *c, bool x) {
  c_sep(c);
  w_puts(c->w, x ? "true" : "false");
}

static void csv_header(W *w) {
  w_puts(w, "scenario,file,model,cluster,gpus,tp,pp,dp,cp,ep,virtual_stages,micro_batch,global_batch,"
            "zero,sequence_parallel,dtype,schedule,recompute,iteration_s");
  for (int i = 0; i < RP_N; i++) w_printf(w, ",%s_s", part_info[i].key);
  w_puts(w, ",tokens_per_s,tflops_per_gpu,mfu");
  for (int i = 0; i < RM_N; i++) w_printf(w, ",mem_%s_bytes", memory_info[i].key);
  w_puts(w, ",peak_bytes,capacity_bytes,fits,measured_iteration_s,error_pct\n");
}

static void print_csv(W *w, const Report *r) {
  C c = {w, true};
  bool valid = r->fits;
  c_str(&c, r->scenario);
  c_str(&c, r->file);
  c_str(&c, r->model);
  c_str(&c, r->cluster);
  const int ints[] = {r->gpus, r->tp, r->pp, r->dp, r->cp, r->ep, r->virtual_stages, r->micro_batch,
                      r->global_batch, r->zero};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) c_int(&c, ints[i]);
  c_bool(&c, r->sequence_parallel);
  c_str(&c, r->dtype);
  c_str(&c, r->schedule);
  c_str(&c, r->recompute);
  c_num(&c, valid, r->iteration);
  for (int i = 0; i < RP_N; i++) c_num(&c, valid, r->part[i]);
  c_num(&c, valid, r->tokens_per_s);
  c_num(&c, valid, r->tflops_per_gpu / 1e12);
  c_num(&c, valid, r->mfu);
  for (int i = 0; i < RM_N; i++) c_num(&c, true, r->memory[i]);
  c_num(&c, true, r->peak);
  c_num(&c, true, r->capacity);
  c_bool(&c, r->fits);
  c_num(&c, r->has_measured_iteration, r->measured_iteration);
  c_num(&c, r->has_measured_iteration && valid, r->error_pct);
  w_putc(w, '\n');
}

void report_csv_header(FILE *out) {
  if (!out) return;
  W w = {out, 0};
  csv_header(&w);
}

void report_print(FILE *out, const Report *r, ReportFormat f) {
  if (!out || !r) return;
  W w = {out, 0};
  switch (f) {
  case REPORT_TABLE: print_table(&w, r); break;
  case REPORT_JSON: print_json(&w, r); break;
  case REPORT_CSV: print_csv(&w, r); break;
  }
}

/* --- the Chrome trace -------------------------------------------------------------------- */

enum { TID_COMPUTE, TID_TP, TID_PP, TID_DP, NTIDS };
static const char *const thread_names[NTIDS] = {"compute", "tp/cp/ep comm", "pp send/recv", "dp comm"};

typedef long long Ns;   /* nanoseconds: event edges are whole numbers, so nesting is exact */

/* Seconds to nanoseconds; false if s is not finite or beyond what Ns holds (~290 years). */
static bool to_ns(double s, Ns *out) {
  if (!isfinite(s) || fabs(s) > 9e9) return false;
  *out = llround(s * 1e9);
  return true;
}

static void j_us(J *j, const char *key, Ns ns) {
  j_key(j, key);
  if (ns < 0) {
    w_putc(j->w, '-');
    ns = -ns;
  }
  w_printf(j->w, "%lld.%03lld", ns / 1000, ns % 1000);
}

static void j_metadata(J *j, const char *name, int pid, int tid, const char *key, const char *s, int n) {
  j_open(j, NULL, '{');
  j_str(j, "name", name);
  j_str(j, "ph", "M");
  j_int(j, "pid", pid);
  if (tid >= 0) j_int(j, "tid", tid);
  j_open(j, "args", '{');
  if (s)
    j_str(j, key, s);
  else
    j_int(j, key, n);
  j_close(j, '}');
  j_close(j, '}');
}

/* Opens a complete event; the caller may add members (args) and closes it. */
static void j_event(J *j, const char *name, const char *cat, int pid, int tid, Ns start, Ns dur) {
  j_open(j, NULL, '{');
  j_str(j, "name", name);
  j_str(j, "cat", cat);
  j_str(j, "ph", "X");
  j_int(j, "pid", pid);
  j_int(j, "tid", tid);
  j_us(j, "ts", start);
  j_us(j, "dur", dur);
}

static const char *kind_category(char kind) {
  switch (kind) {
  case 'F': return "forward";
  case 'R': return "recompute";
  case 'B': return "backward";
  case 'W': return "weight gradient";
  default: return "compute";
  }
}

/* The chunk's operators inside the event [start, end], end to end, scaled to fill it: op i
 * ends at start + dur * (sum of times up to i) / (sum of all), rounded to the nanosecond,
 * and the last one ends at `end`. */
static void trace_ops(J *j, const TraceInput *t, const RtPipeEvent *e, int nchunks, Ns start, Ns end) {
  int c = e->chunk;
  if (!t->ops || !t->nops || c < 0 || c >= nchunks || !t->ops[c] || t->nops[c] <= 0) return;
  const TraceOp *ops = t->ops[c];
  int n = t->nops[c], last = -1;
  bool fwd = e->kind == 'F' || e->kind == 'R';
  double sum = 0;
  for (int i = 0; i < n; i++) {
    double x = fwd ? ops[i].fwd : ops[i].bwd;
    if (isfinite(x) && x > 0) {
      sum += x;
      last = i;
    }
  }
  if (!(sum > 0) || !isfinite(sum)) return;
  double dur = (double)(end - start), cum = 0;
  Ns at = start;
  for (int i = 0; i <= last; i++) {
    double x = fwd ? ops[i].fwd : ops[i].bwd;
    if (!(isfinite(x) && x > 0)) continue;
    cum += x;
    Ns next = i == last ? end : start + llround(dur * (cum / sum));
    if (next < at) next = at;
    if (next > end) next = end;
    if (next > at) {
      j_event(j, str(ops[i].name), "op", e->device, ops[i].stream == 't' ? TID_TP : TID_COMPUTE, at, next - at);
      j_open(j, "args", '{');
      j_int(j, "micro", e->micro);
      j_int(j, "chunk", c);
      j_num(j, "time_s", x);
      j_close(j, '}');
      j_close(j, '}');
    }
    at = next;
  }
}

/* The pipeline send after a forward (to the next chunk) or a backward (to the previous
 * one), where that chunk is on another device. */
static void trace_send(J *j, const TraceInput *t, const RtPipeEvent *e, int nchunks, Ns end, Ns p2p) {
  int c = e->chunk, to;
  if (t->stages < 2 || c < 0 || c >= nchunks) return;
  if (e->kind == 'F' && c + 1 < nchunks)
    to = c + 1;
  else if (e->kind == 'B' && c > 0)
    to = c - 1;
  else
    return;
  if (to % t->stages == c % t->stages) return;
  char name[96];
  snprintf(name, sizeof name, "send %c mb%d to stage %d", e->kind, e->micro, to % t->stages);
  j_event(j, name, "pp", e->device, TID_PP, end, p2p);
  j_open(j, "args", '{');
  j_int(j, "micro", e->micro);
  j_int(j, "chunk", c);
  j_int(j, "to_chunk", to);
  j_close(j, '}');
  j_close(j, '}');
}

int report_trace(FILE *out, const TraceInput *t) {
  if (!out || !t) {
    errno = EINVAL;
    return -1;
  }
  W w = {out, 0};
  J j = {&w, true, 0, 2};   /* one event a line */
  int nevents = t->events && t->nevents > 0 ? t->nevents : 0;
  int stages = t->stages;
  if (stages < 1) {     /* not given: as many as the events use */
    stages = 0;
    for (int i = 0; i < nevents; i++)
      if (t->events[i].device >= stages) stages = t->events[i].device + 1;
  }
  long long nchunks_ll = (long long)(t->stages > 0 ? t->stages : 0) * (t->chunks > 0 ? t->chunks : 1);
  int nchunks = nchunks_ll > RT_MAX_CHUNKS ? RT_MAX_CHUNKS : (int)nchunks_ll;
  Ns p2p = 0, a, b;
  if (!to_ns(t->p2p, &p2p) || p2p < 0) p2p = 0;

  j_open(&j, NULL, '{');
  j_open(&j, "traceEvents", '[');
  for (int d = 0; d < stages; d++) {
    char name[32];
    snprintf(name, sizeof name, "stage %d", d);
    j_metadata(&j, "process_name", d, -1, "name", name, 0);
    j_metadata(&j, "process_sort_index", d, -1, "sort_index", NULL, d);
    for (int tid = 0; tid < NTIDS; tid++) {
      j_metadata(&j, "thread_name", d, tid, "name", thread_names[tid], 0);
      j_metadata(&j, "thread_sort_index", d, tid, "sort_index", NULL, tid);
    }
  }
  for (int i = 0; i < nevents; i++) {
    const RtPipeEvent *e = &t->events[i];
    if (!to_ns(e->start, &a) || !to_ns(e->end, &b) || b < a) continue;
    char name[96];
    snprintf(name, sizeof name, "%c mb%d chunk%d", e->kind ? e->kind : '?', e->micro, e->chunk);
    j_event(&j, name, kind_category(e->kind), e->device, TID_COMPUTE, a, b - a);
    j_open(&j, "args", '{');
    j_int(&j, "micro", e->micro);
    j_int(&j, "chunk", e->chunk);
    j_close(&j, '}');
    j_close(&j, '}');
    trace_ops(&j, t, e, nchunks, a, b);
    if (p2p > 0) trace_send(&j, t, e, nchunks, b, p2p);
  }
  for (int d = 0; d < stages; d++) {
    if (t->dp_comm > 0 && to_ns(t->dp_start, &a) && to_ns(t->dp_comm, &b)) {
      j_event(&j, "dp gradient reduction", "dp", d, TID_DP, a, b);
      j_close(&j, '}');
    }
    if (t->optimizer > 0 && to_ns(t->optimizer_start, &a) && to_ns(t->optimizer, &b)) {
      j_event(&j, "optimizer step", "optimizer", d, TID_COMPUTE, a, b);
      j_close(&j, '}');
    }
  }
  w_putc(&w, '\n');
  j_close(&j, ']');
  j_str(&j, "displayTimeUnit", "ms");
  if (t->report) {
    j_open(&j, "otherData", '{');
    j_str(&j, "scenario", str(t->report->scenario));
    j_str(&j, "file", str(t->report->file));
    j_close(&j, '}');
  }
  j_close(&j, '}');
  w_putc(&w, '\n');
  return w_finish(&w);
}
