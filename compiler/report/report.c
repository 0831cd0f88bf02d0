/* report.c - printing a Report: a table for people, JSON Lines and CSV for programs (the
 * Chrome trace of one iteration is trace.c).
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
 *     uncalibrated (datasheet or network tiers alone): allreduce (loss), ...
 *     note: `words` (reducescatter, ...) may be overestimated by up to 38 %: ...
 *       (a line per approximation that moves the times: Report.notes)
 *
 * A plan that does not fit is never reported as a time: its table has the message of
 * report_fit_message() as the first line after the title and no iteration, tokens/s,
 * TFLOP/s or MFU lines; JSON has null for those (and for the breakdown and error_pct), CSV
 * empty fields.
 *
 * JSON and CSV values are written by emit.h: numbers the shortest text that reads back as
 * the same double (so results can be traced and compared bit for bit), one UTF-8 rule for
 * strings.  NaN and infinities are written null in JSON, empty in CSV. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "jsonw.h"
#include "strbuf.h"

typedef struct KeyLabel {
  const char *key, *label;
} KeyLabel;

/* clang-format off */
#define KEY_LABEL(e, k, l) {k, l},
/* clang-format on */
static const KeyLabel part_info[] = {REPORT_PARTS(KEY_LABEL)};    /* ORDER ReportPart */
static const KeyLabel memory_info[] = {REPORT_MEMORY(KEY_LABEL)}; /* ORDER ReportMemory */
#undef KEY_LABEL

static const char *str(const char *s) { return s ? s : ""; }

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

const char *report_count(char *buf, unsigned n, double x) {
  if (!buf || !n) return "";
  static const struct { double scale; const char *unit; } units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (unsigned i = 0; i < sizeof units / sizeof units[0]; i++)
    if (fabs(x) >= units[i].scale) {
      double v = x / units[i].scale;
      snprintf(buf, n, "%.*f %s", v >= 100 ? 1 : v >= 10 ? 2 : 3, v, units[i].unit);
      return buf;
    }
  snprintf(buf, n, isfinite(x) ? "%.0f" : "n/a", x);
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
  char num[400]; /* %.1f of up to DBL_MAX / 2^40 */
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
  str_appendf(buf, n, &len, "%s: needs %s of %s", r->fits ? "fits" : "does not fit",
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
    str_appendf(buf, n, &len, "%s%s %s", i ? ", " : ": ", memory_info[order[i]].label,
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

/* Where a factor comes from, after its name: " of STACK on GPU", or "" for the gpu's own. */
static const char *factor_of(char *buf, size_t n, const Report *r, const char *stack) {
  if (!stack) return "";
  snprintf(buf, n, " of %s on %s", stack, str(r->gpu));
  return buf;
}

/* "parameters 70.55 B, 8.82 B per GPU; first stage 9.1 B, last stage 9.4 B" (MoE: the active
 * per token after the total; the stages where there are several). */
static void print_params(W *w, const Report *r) {
  char a[48];
  w_printf(w, "  parameters %s", report_count(a, sizeof a, r->params_total));
  if (r->params_active < r->params_total) w_printf(w, ", %s active per token", report_count(a, sizeof a, r->params_active));
  if (isfinite(r->params_per_gpu) && r->params_per_gpu > 0 && r->gpus > 1)
    w_printf(w, ", %s per GPU", report_count(a, sizeof a, r->params_per_gpu));
  if (r->pp > 1 && r->params_first_stage > 0 && r->params_last_stage > 0) {
    w_printf(w, "; first stage %s", report_count(a, sizeof a, r->params_first_stage));
    w_printf(w, ", last stage %s", report_count(a, sizeof a, r->params_last_stage));
  }
  w_putc(w, '\n');
}

/* Seconds to train on r->train_tokens at the predicted rate. */
static double train_seconds(const Report *r) { return r->train_tokens / r->tokens_per_s; }

/* "to train on 15.00 T tokens: 41.3 days, 1.27 M GPU-hours, 887.6 MWh at 700 W per GPU (TDP)" */
static void print_training(W *w, const Report *r) {
  char a[48], b[48];
  double s = train_seconds(r);
  w_printf(w, "  to train on %s tokens: %.1f days, %s GPU-hours", report_count(a, sizeof a, r->train_tokens), s / 86400,
           report_count(b, sizeof b, s * r->gpus / 3600));
  if (r->tdp > 0)
    w_printf(w, ", %.1f MWh at the GPUs' TDP (%g W each)", s * r->gpus * r->tdp / 3.6e9, r->tdp);
  else
    w_printf(w, "; no energy: gpu %s declares no `tdp`", str(r->gpu));
  w_putc(w, '\n');
}

/* cuda_graphs off alone: the bytes it saves, and whether that fits. */
static void print_graphs_off(W *w, const Report *r) {
  char a[48], b[48], c[48];
  const ReportFix *g = &r->graphs_off;
  w_printf(w, "  %s alone saves %s of static buffers: peak %s, ", g->change, report_bytes(a, sizeof a, r->graphs_saves),
           report_bytes(b, sizeof b, g->peak));
  if (isnan(g->iteration))
    w_puts(w, "still does not fit\n");
  else
    w_printf(w, "fits (%s)\n", report_time(c, sizeof c, g->iteration));
}

/* The changes of plan that fit (lower_fit_changes), or that none of those tried does. */
static void print_fixes(W *w, const Report *r) {
  char a[48], b[48];
  if (!r->nfix) {
    w_printf(w, "  no change of tp, pp, recompute, zero%s micro_batch%s (one or two at a time) fits\n",
             r->cuda_graphs ? "," : " or", r->cuda_graphs ? " or cuda_graphs" : "");
  } else {
    int width = LABEL_W - 4;
    for (int i = 0; i < r->nfix; i++)
      if ((int)strlen(r->fix[i].change) + 1 > width) width = (int)strlen(r->fix[i].change) + 1;
    w_puts(w, "  changes that fit, fastest first:\n");
    for (int i = 0; i < r->nfix; i++)
      w_printf(w, "    %-*s%*s, peak %s\n", width, r->fix[i].change, VALUE_W,
               report_time(a, sizeof a, r->fix[i].iteration), report_bytes(b, sizeof b, r->fix[i].peak));
  }
  if (r->graphs_saves > 0) print_graphs_off(w, r);
}

static void print_table(W *w, const Report *r) {
  char a[48], b[48], msg[512];
  w_printf(w, "scenario %s (%s)\n", str(r->scenario), str(r->file));
  if (!r->fits) w_printf(w, "  %s\n", report_fit_message(msg, sizeof msg, r));
  w_printf(w, "  model %s on %s (%d x %s)\n", str(r->model), str(r->cluster), r->gpus, str(r->gpu));
  if (isfinite(r->params_total)) print_params(w, r);
  if (r->framework)
    w_printf(w, "  stack %s%s%s%s\n", r->framework, r->framework_version ? " (version " : "",
             r->framework_version ? r->framework_version : "", r->framework_version ? ")" : "");
  w_printf(w, "  plan tp=%d pp=%d dp=%d cp=%d ep=%d", r->tp, r->pp, r->dp, r->cp, r->ep);
  if (r->etp > 1) w_printf(w, " etp=%d", r->etp);
  if (r->ep > 1 && r->moe_dispatcher && strcmp(r->moe_dispatcher, "alltoall")) /* the default's not shown */
    w_printf(w, " moe_token_dispatcher=%s", r->moe_dispatcher);
  if (r->virtual_stages > 1) w_printf(w, " virtual_stages=%d", r->virtual_stages);
  w_printf(w, "\n  micro_batch=%d global_batch=%d: %d micro-batch%s per iteration", r->micro_batch, r->global_batch,
           r->micro_batches, r->micro_batches == 1 ? "" : "es");
  if (isfinite(r->tokens_per_iteration) && r->tokens_per_iteration > 0)
    w_printf(w, ", %s tokens", report_count(a, sizeof a, r->tokens_per_iteration));
  w_putc(w, '\n');
  w_printf(w, "  dtype=%s schedule=%s recompute=%s zero=%d sequence_parallel=%s%s%s\n", str(r->dtype), str(r->schedule),
           str(r->recompute), r->zero, r->sequence_parallel ? "true" : "false", r->cuda_graphs ? " cuda_graphs=true" : "",
           r->overlap_ep ? " overlap_ep=true" : "");

  if (r->fits) print_time_lines(w, r);

  w_puts(w, "  memory per GPU\n");
  for (int i = 0; i < RM_N; i++)
    if (i != RM_RESERVED || r->memory[i] != 0) /* a stack's reserve, where it has one */
      row(w, 4, memory_info[i].label, report_bytes(a, sizeof a, r->memory[i]), percent(r->memory[i], r->peak));
  w_printf(w, "  peak %s of %s (stage %d), %s", report_bytes(a, sizeof a, r->peak),
           report_bytes(b, sizeof b, r->capacity), r->peak_stage, r->fits ? "fits" : "does not fit");
  if (!r->fits && isfinite(r->peak - r->capacity))
    w_printf(w, " by %s", report_bytes(a, sizeof a, r->peak - r->capacity));
  w_putc(w, '\n');
  if (!r->fits) print_fixes(w, r);
  if (r->fits && r->train_tokens > 0) print_training(w, r);

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
  if (r->tables_from) w_printf(w, " (tables of %s on %s)", r->tables_from, str(r->gpu));
  double rest = applied(r->sustained);
  if (rest < 1)
    w_printf(w, "; tensor-core rate x %.3f (sustained_compute%s)", rest,
             factor_of(msg, sizeof msg, r, r->sustained_from));
  /* the quantized GEMMs' figure: nvfp4's own where a stack sets one, else the fp8 one */
  bool fp4 = r->dtype && rt_dtype_lookup(r->dtype) == RT_NVFP4 && r->sustained_fp4_from;
  double q = applied(fp4 ? r->sustained_fp4 : r->sustained_fp8);
  if (r->dtype && rt_dtype_quantized((RtDtype)rt_dtype_lookup(r->dtype)) && q < 1)
    w_printf(w, "%s %s GEMMs x %.3f (sustained_compute_%s%s)", rest < 1 ? "," : ";", r->dtype, q, fp4 ? "fp4" : "fp8",
             factor_of(msg, sizeof msg, r, fp4 ? r->sustained_fp4_from : r->sustained_fp8_from));
  if (r->attention_rate > 0 && r->attention_rate != 1)
    w_printf(w, "; flash attention x %.3f (sustained_attention of %s on %s)", r->attention_rate,
             str(r->attention_from ? r->attention_from : r->framework), str(r->gpu));
  if (r->grouped_rate > 0 && r->grouped_rate != 1)
    w_printf(w, "; expert GEMMs x %.3f (sustained_grouped_gemm of %s on %s)", r->grouped_rate,
             str(r->grouped_from ? r->grouped_from : r->framework), str(r->gpu));
  if (r->launch_overhead > 0)
    w_printf(w, "; host %s per kernel launch (launch_overhead of %s%s%s)", report_time(a, sizeof a, r->launch_overhead),
             str(r->launch_from ? r->launch_from : r->framework), r->launch_from ? " on " : "", r->launch_from ? str(r->gpu) : "");
  w_putc(w, '\n');
  if (r->uncalibrated[0]) {
    w_printf(w, "  uncalibrated (datasheet or network tiers alone): %s", r->uncalibrated);
    if (r->uncalibrated_more) w_printf(w, ", %d more", r->uncalibrated_more);
    w_putc(w, '\n');
  }
  for (int i = 0; i < r->nnotes; i++) w_printf(w, "  note: %s\n", r->notes[i]);
}

/* --- JSON -------------------------------------------------------------------------------- */

/* "fit_changes": [{"change": "tp=16 dp=2", "iteration_s": ..., "peak": ...}, ...] */
static void json_fixes(J *j, const Report *r) {
  j_open(j, "fit_changes", '[');
  for (int i = 0; i < r->nfix; i++) {
    j_open(j, NULL, '{');
    j_str(j, "change", r->fix[i].change);
    j_num(j, "iteration_s", r->fix[i].iteration);
    j_num(j, "peak", r->fix[i].peak);
    j_close(j, '}');
  }
  j_close(j, ']');
  if (r->graphs_saves > 0) { /* "cuda_graphs_off": {"saves": ..., "peak": ..., "iteration_s": ... or null} */
    j_open(j, "cuda_graphs_off", '{');
    j_num(j, "saves", r->graphs_saves);
    j_num(j, "peak", r->graphs_off.peak);
    j_num(j, "iteration_s", r->graphs_off.iteration);
    j_close(j, '}');
  }
}

/* --tokens: the time, GPU-hours and energy (null where the plan does not fit or the gpu has
 * no tdp). */
static void json_training(J *j, const Report *r) {
  double s = r->fits ? train_seconds(r) : NAN;
  j_num(j, "train_tokens", r->train_tokens);
  j_num(j, "train_days", s / 86400);
  j_num(j, "train_gpu_hours", s * r->gpus / 3600);
  j_num(j, "tdp_w", r->tdp > 0 ? r->tdp : NAN);
  j_num(j, "train_energy_j", r->tdp > 0 ? s * r->gpus * r->tdp : NAN);
}

/* "uncalibrated": the names of r->uncalibrated, and how many were left out for room. */
static void json_uncalibrated(J *j, const Report *r) {
  char one[sizeof r->uncalibrated];
  j_open(j, "uncalibrated", '[');
  for (const char *p = r->uncalibrated; *p;) {
    const char *e = strstr(p, ", ");
    size_t n = e ? (size_t)(e - p) : strlen(p);
    snprintf(one, sizeof one, "%.*s", (int)n, p);
    j_str(j, NULL, one);
    p += n + (e ? 2 : 0);
  }
  j_close(j, ']');
  j_int(j, "uncalibrated_more", r->uncalibrated_more);
}

static void print_json(W *w, const Report *r) {
  J j = {w, true, 0, 0};
  bool valid = r->fits; /* no time for a plan that does not fit */
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
  j_bool(&j, "cuda_graphs", r->cuda_graphs);
  j_bool(&j, "overlap_ep", r->overlap_ep);
  if (r->moe_dispatcher) j_str(&j, "moe_token_dispatcher", r->moe_dispatcher);
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
  j_num(&j, "parameters", r->params_total);
  j_num(&j, "active_parameters", r->params_active);
  j_num(&j, "parameters_first_stage", r->params_first_stage);
  j_num(&j, "parameters_last_stage", r->params_last_stage);
  j_num(&j, "parameters_per_gpu", r->params_per_gpu);
  j_num(&j, "tokens_per_iteration", r->tokens_per_iteration);
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
  if (!r->fits) json_fixes(&j, r);
  if (r->train_tokens > 0) json_training(&j, r);
  if (r->has_measured_iteration) {
    j_num(&j, "measured_iteration_s", r->measured_iteration);
    j_num(&j, "error_pct", valid ? r->error_pct : NAN);
  }
  if (r->has_measured_tflops) j_num(&j, "measured_tflops_per_gpu", r->measured_tflops / 1e12);
  j_int(&j, "calls", r->calls);
  j_int(&j, "calibrated_calls", r->calibrated_calls);
  json_uncalibrated(&j, r);
  j_num(&j, "sustained_compute", applied(r->sustained));
  j_num(&j, "sustained_compute_fp8", applied(r->sustained_fp8));
  j_num(&j, "sustained_compute_fp4", applied(r->sustained_fp4));
  j_str(&j, "framework", r->framework);
  j_str(&j, "framework_version", r->framework_version);
  j_str(&j, "sustained_compute_from", r->sustained_from ? r->sustained_from : r->gpu);
  j_str(&j, "sustained_compute_fp8_from", r->sustained_fp8_from ? r->sustained_fp8_from : r->gpu);
  j_str(&j, "sustained_compute_fp4_from",
        r->sustained_fp4_from ? r->sustained_fp4_from : r->sustained_fp8_from ? r->sustained_fp8_from : r->gpu);
  j_str(&j, "tables_from", r->tables_from ? r->tables_from : r->gpu);
  j_num(&j, "sustained_attention", r->attention_rate > 0 ? r->attention_rate : 1);
  j_num(&j, "sustained_grouped_gemm", r->grouped_rate > 0 ? r->grouped_rate : 1);
  j_num(&j, "launch_overhead_s", r->launch_overhead);
  j_open(&j, "notes", '[');
  for (int i = 0; i < r->nnotes; i++) j_str(&j, NULL, r->notes[i]);
  j_close(&j, ']');
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
            "zero,sequence_parallel,cuda_graphs,dtype,schedule,recompute,iteration_s");
  for (int i = 0; i < RP_N; i++) w_printf(w, ",%s_s", part_info[i].key);
  w_puts(w, ",tokens_per_s,tflops_per_gpu,mfu");
  for (int i = 0; i < RM_N; i++) w_printf(w, ",mem_%s_bytes", memory_info[i].key);
  w_puts(w, ",peak_bytes,capacity_bytes,fits,measured_iteration_s,error_pct");
  w_puts(w, ",parameters,active_parameters,parameters_first_stage,parameters_last_stage,parameters_per_gpu,"
            "tokens_per_iteration,train_tokens,train_days,train_gpu_hours,tdp_w,train_energy_j,notes\n");
}

/* The planner's figures, as JSON's (the --tokens ones empty without --tokens), and the
 * notes joined by "; ". */
static void csv_planner(C *c, const Report *r) {
  const double params[] = {r->params_total,      r->params_active,  r->params_first_stage,
                           r->params_last_stage, r->params_per_gpu, r->tokens_per_iteration};
  for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) c_num(c, true, params[i]);
  bool tokens = r->train_tokens > 0, energy = tokens && r->tdp > 0;
  double s = r->fits ? train_seconds(r) : NAN;
  c_num(c, tokens, r->train_tokens);
  c_num(c, tokens, s / 86400);
  c_num(c, tokens, s * r->gpus / 3600);
  c_num(c, energy, r->tdp);
  c_num(c, energy, s * r->gpus * r->tdp);
  char notes[REPORT_NOTES * sizeof r->notes[0] + 8] = "";
  size_t len = 0;
  for (int i = 0; i < r->nnotes; i++) str_appendf(notes, sizeof notes, &len, "%s%s", i ? "; " : "", r->notes[i]);
  c_str(c, len ? notes : NULL); /* empty, not "" */
}

static void print_csv(W *w, const Report *r) {
  C c = {w, true};
  bool valid = r->fits;
  c_str(&c, r->scenario);
  c_str(&c, r->file);
  c_str(&c, r->model);
  c_str(&c, r->cluster);
  const int ints[] = {r->gpus,           r->tp,          r->pp,           r->dp,  r->cp, r->ep,
                      r->virtual_stages, r->micro_batch, r->global_batch, r->zero};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) c_int(&c, ints[i]);
  c_bool(&c, r->sequence_parallel);
  c_bool(&c, r->cuda_graphs);
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
  csv_planner(&c, r);
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
