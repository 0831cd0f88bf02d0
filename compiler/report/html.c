/* html.c - the HTML report (html.h): the page and its drawing primitives, and a scenario's
 * section; a sweep's and validation's are html_sweep.c.
 *
 * The page loads nothing: its style is inline, its charts are inline SVG, it has no script,
 * and a Content-Security-Policy of default-src 'none' makes a browser refuse any request it
 * might make all the same.  Fonts are the reader's own (system-ui).  Every text that comes
 * from a user's file (names, labels, paths) goes through html_esc.
 *
 * A scenario's section, from the structures the text and trace use:
 *   figures     Report: the plan and the headline figures, as `llmp run` prints them
 *   breakdown   Report.part: one stacked bar of the iteration's critical path
 *   timeline    the trace's spans (report_trace_walk over lower_trace_open's input): a row
 *               per stage and stream, each pixel the span kind that covers most of it, lighter
 *               where the stream is busy for part of the pixel's time
 *   memory      lower_stage_memory: the first and the last stage, stacked by part, against
 *               the GPU's capacity
 *   kernels     lower_calls: per kernel, its calls calibrated and not, the latter by label */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "emit.h"
#include "html_private.h"

static const char *const palette[HC_N] = {"#E69F00", "#56B4E9", "#009E73", "#F0E442",
                                          "#0072B2", "#D55E00", "#CC79A7", "#000000"};

/* --- text and drawing ---------------------------------------------------------------------- */

void html_esc(W *w, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    unsigned char c = *p;
    int n = c < 0x80 ? 1 : emit_utf8_len(p);
    if (n > 1)
      w_printf(w, "%.*s", n, (const char *)p);
    else if (n == 0 || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
      w_puts(w, "\xEF\xBF\xBD");
    else if (c == '&')
      w_puts(w, "&amp;");
    else if (c == '<')
      w_puts(w, "&lt;");
    else if (c == '>')
      w_puts(w, "&gt;");
    else if (c == '"')
      w_puts(w, "&quot;");
    else if (c == '\'')
      w_puts(w, "&#39;");
    else
      w_putc(w, (char)c);
    p += n ? n : 1;
  }
}

void html_tag(W *w, const char *tag, const char *text) {
  size_t name = strcspn(tag, " ");
  w_printf(w, "<%s>", tag);
  html_esc(w, text);
  w_printf(w, "</%.*s>", (int)name, tag);
}

void html_svg_begin(W *w, const char *kind, int width, int height, const char *title) {
  w_printf(w,
           "<figure><svg class=\"chart\" data-chart=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
           "role=\"img\" aria-label=\"",
           kind, width, height, width, height);
  html_esc(w, title);
  w_puts(w, "\"><title>");
  html_esc(w, title);
  w_puts(w, "</title>\n");
}

void html_svg_end(W *w) { w_puts(w, "</svg></figure>\n"); }

void html_fill(W *w, const HtmlStyle *s) {
  if (s->hatch)
    w_printf(w, " fill=\"url(#h%d)\"", s->colour);
  else
    w_printf(w, " fill=\"%s\"", palette[s->colour]);
}

/* A coordinate: one decimal, none where it is whole (a timeline has thousands). */
static const char *coord(char *buf, size_t n, double v) {
  snprintf(buf, n, fabs(v - round(v)) < 0.05 ? "%.0f" : "%.1f", v);
  return buf;
}

void html_rect(W *w, double x, double y, double width, double height, const HtmlStyle *s, double opacity,
               const char *tip) {
  char a[32], b[32], c[32], d[32];
  w_printf(w, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"", coord(a, sizeof a, x), coord(b, sizeof b, y),
           coord(c, sizeof c, width), coord(d, sizeof d, height));
  if (s)
    html_fill(w, s);
  else
    w_puts(w, " fill=\"#f0f0f0\"");
  if (opacity < 1) w_printf(w, " fill-opacity=\"%.2f\"", opacity);
  if (tip) {
    w_puts(w, "><title>");
    html_esc(w, tip);
    w_puts(w, "</title></rect>\n");
  } else {
    w_puts(w, "/>\n");
  }
}

void html_text(W *w, double x, double y, const char *anchor, bool outlined, const char *s) {
  w_printf(w, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", x, y, anchor, outlined ? " class=\"lbl\"" : "");
  html_esc(w, s);
  w_puts(w, "</text>\n");
}

void html_line(W *w, double x1, double y1, double x2, double y2, const char *colour, double width, bool dashed) {
  w_printf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%g\"%s/>\n", x1, y1,
           x2, y2, colour, width, dashed ? " stroke-dasharray=\"5 3\"" : "");
}

void html_legend(W *w, const HtmlStyle *styles, const char *const *labels, int n) {
  w_puts(w, "<ul class=\"legend\">");
  for (int i = 0; i < n; i++) {
    w_puts(w, "<li><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><rect width=\"14\" height=\"14\"");
    html_fill(w, &styles[i]);
    w_puts(w, " stroke=\"#333\" stroke-width=\"0.5\"/></svg>");
    html_esc(w, labels[i]);
    w_puts(w, "</li>");
  }
  w_puts(w, "</ul>\n");
}

double html_tick_step(double lo, double hi, int n) {
  double span = hi - lo;
  if (!(span > 0) || !isfinite(span)) return 1;
  double raw = span / (n > 0 ? n : 1), p = pow(10, floor(log10(raw))), f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p; /* the nice step nearest raw */
}

/* --- the page ------------------------------------------------------------------------------- */

static const char page_style[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#111;"
    "background:#fff;max-width:1000px;margin:24px auto;padding:0 16px}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:19px;border-bottom:2px solid #333;margin:36px 0 8px}"
    "h3{font-size:15px;margin:24px 0 4px}\n"
    "table{border-collapse:collapse;margin:6px 0 18px;font-variant-numeric:tabular-nums;display:block;"
    "overflow-x:auto;max-width:100%}"
    "th,td{border:1px solid #bbb;padding:2px 8px;text-align:left;vertical-align:top}"
    "th{background:#eee}.n{text-align:right;white-space:nowrap}.path{font-size:12px;color:#444}\n"
    "figure{margin:8px 0 4px}svg.chart{display:block;max-width:100%;height:auto}"
    "svg text{font:12px system-ui,sans-serif;fill:#111}"
    ".lbl{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}\n"
    ".legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 18px}"
    ".legend svg{vertical-align:-2px;margin-right:5px}.note{color:#444;margin:4px 0}\n"
    "dl.fig{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}dt{color:#444}dd{margin:0}\n"
    "details summary{cursor:pointer;margin:6px 0}[data-part=axes] figure{display:inline-block;margin:4px 8px 4px 0}\n"
    "@media print{body{margin:0;max-width:none}figure,table{break-inside:avoid}"
    "*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}\n";

/* The hatched fills: each colour under white diagonal stripes. */
static void page_patterns(W *w) {
  w_puts(w, "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>\n");
  for (int i = 0; i < HC_N; i++)
    w_printf(w,
             "<pattern id=\"h%d\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
             "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"%s\"/>"
             "<rect width=\"2.2\" height=\"6\" fill=\"#fff\" fill-opacity=\"0.75\"/></pattern>\n",
             i, palette[i]);
  w_puts(w, "</defs></svg>\n");
}

Html *html_open(FILE *out, const char *title) {
  Html *h = xcalloc(1, sizeof *h);
  h->w.f = out;
  W *w = &h->w;
  w_puts(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
  html_esc(w, title);
  w_printf(w, "</title>\n<style>\n%s</style></head>\n<body>\n", page_style);
  page_patterns(w);
  html_tag(w, "h1", title);
  return h;
}

int html_close(Html *h) {
  w_puts(&h->w, "<p class=\"note\">Written by llmp. Every chart's numbers are in the table beneath it.</p>\n"
                "</body></html>\n");
  int rc = w_finish(&h->w);
  for (int i = 0; i < h->npts; i++) {
    free(h->pts[i].scenario);
    free(h->pts[i].file);
  }
  free(h->pts);
  free(h);
  return rc;
}

/* --- a scenario: figures ---------------------------------------------------------------------- */

#define LABEL(e, k, l) l,
static const char *const part_labels[RP_N] = {REPORT_PARTS(LABEL)};    /* ORDER ReportPart */
static const char *const memory_labels[RM_N] = {REPORT_MEMORY(LABEL)}; /* ORDER ReportMemory */
#undef LABEL

/* ORDER ReportPart: forward, backward, recompute, tp, cp, ep, pp, host, bubble, dp, optimizer */
static const HtmlStyle part_styles[RP_N] = {
    {HC_BLUE, false},      {HC_ORANGE, false}, {HC_SKY, true},    {HC_VERMILLION, false},
    {HC_VERMILLION, true}, {HC_PURPLE, false}, {HC_GREEN, false}, {HC_BLACK, true},
    {HC_YELLOW, true},     {HC_PURPLE, true},  {HC_BLACK, false},
};
/* ORDER ReportMemory: weights, gradients, optimizer state, activations, buffers, reserve */
static const HtmlStyle memory_styles[RM_N] = {
    {HC_BLUE, false}, {HC_ORANGE, false}, {HC_GREEN, false}, {HC_SKY, false}, {HC_PURPLE, false}, {HC_BLACK, true},
};

static const char *str(const char *s) { return s ? s : ""; }

static void figure(W *w, const char *term, const char *value) {
  html_tag(w, "dt", term);
  html_tag(w, "dd", value);
}

static void scenario_figures(W *w, const Report *r) {
  char a[96], b[96], line[640];
  w_puts(w, "<dl class=\"fig\">\n");
  snprintf(line, sizeof line, "%s on %s (%d x %s)", str(r->model), str(r->cluster), r->gpus, str(r->gpu));
  figure(w, "model", line);
  if (isfinite(r->params_total)) {
    report_count(a, sizeof a, r->params_total);
    report_count(b, sizeof b, r->params_active);
    snprintf(line, sizeof line, r->params_active < r->params_total ? "%s, %s active per token" : "%s", a, b);
    figure(w, "parameters", line);
  }
  if (r->framework) {
    snprintf(line, sizeof line, "%s%s%s%s", r->framework, r->framework_version ? " (version " : "",
             r->framework_version ? r->framework_version : "", r->framework_version ? ")" : "");
    figure(w, "stack", line);
  }
  snprintf(line, sizeof line,
           "tp=%d pp=%d dp=%d cp=%d ep=%d, micro_batch=%d global_batch=%d (%d micro-batches), "
           "%s, schedule %s, recompute %s, zero %d%s%s",
           r->tp, r->pp, r->dp, r->cp, r->ep, r->micro_batch, r->global_batch, r->micro_batches, str(r->dtype),
           str(r->schedule), str(r->recompute), r->zero, r->cuda_graphs ? ", CUDA graphs" : "",
           r->overlap_ep ? ", EP overlap" : "");
  figure(w, "plan", line);
  if (r->fits) {
    figure(w, "iteration", report_time(a, sizeof a, r->iteration));
    snprintf(line, sizeof line, "%.0f", r->tokens_per_s);
    figure(w, "tokens/s", line);
    snprintf(line, sizeof line, "%.1f TFLOP/s per GPU, MFU %.1f %%", r->tflops_per_gpu / 1e12, 100 * r->mfu);
    figure(w, "model FLOP/s", line);
  }
  snprintf(line, sizeof line, "%s of %s (stage %d), %s", report_bytes(a, sizeof a, r->peak),
           report_bytes(b, sizeof b, r->capacity), r->peak_stage, r->fits ? "fits" : "does not fit");
  figure(w, "peak memory", line);
  if (r->has_measured_iteration) {
    report_time(a, sizeof a, r->measured_iteration);
    if (r->fits)
      snprintf(line, sizeof line, "%s, error %+.1f %%", a, r->error_pct);
    else
      snprintf(line, sizeof line, "%s (no prediction: the plan does not fit)", a);
    figure(w, "measured", line);
  }
  w_puts(w, "</dl>\n");
  if (!r->fits) html_tag(w, "p class=\"note\"", report_fit_message(line, sizeof line, r));
}

/* --- a scenario: the breakdown bar ------------------------------------------------------------- */

enum { CHART_W = 960, PLOT_X = 10, PLOT_W = 940 };

/* A time axis under a plot [x0, x0+width] spanning [0, end] seconds, at y. */
static void time_axis(W *w, double x0, double width, double y, double end) {
  double step = html_tick_step(0, end, 8);
  html_line(w, x0, y, x0 + width, y, "#333", 1, false);
  for (int i = 0; i * step <= end * (1 + 1e-9) && i < 64; i++) {
    double x = x0 + width * i * step / end;
    char t[48];
    html_line(w, x, y, x, y + 5, "#333", 1, false);
    html_text(w, x, y + 18, i == 0 ? "start" : "middle", false, report_time(t, sizeof t, i * step));
  }
}

static void breakdown_table(W *w, const Report *r) {
  char t[48], p[32];
  w_puts(w, "<table data-table=\"breakdown\"><tr><th>part</th><th class=\"n\">time</th><th class=\"n\">of the "
            "iteration</th></tr>\n");
  for (int i = 0; i < RP_N; i++) {
    if (!(r->part[i] > 0)) continue;
    w_puts(w, "<tr>");
    html_tag(w, "td", part_labels[i]);
    html_tag(w, "td class=\"n\"", report_time(t, sizeof t, r->part[i]));
    snprintf(p, sizeof p, "%.1f %%", 100 * r->part[i] / r->iteration);
    html_tag(w, "td class=\"n\"", p);
    w_puts(w, "</tr>\n");
  }
  w_printf(w, "<tr><th>iteration</th><th class=\"n\">%s</th><th class=\"n\">100 %%</th></tr></table>\n",
           report_time(t, sizeof t, r->iteration));
}

static void scenario_breakdown(W *w, const Report *r) {
  html_tag(w, "h3", "Iteration breakdown");
  html_tag(w, "p class=\"note\"",
           "The critical path of one iteration, on the busiest pipeline device: its parts "
           "add up to the iteration time.");
  html_svg_begin(w, "breakdown", CHART_W, 80, "iteration breakdown");
  double x = PLOT_X, sum = 0;
  for (int i = 0; i < RP_N; i++) sum += r->part[i] > 0 ? r->part[i] : 0;
  double end = sum > r->iteration ? sum : r->iteration;
  for (int i = 0; i < RP_N; i++) {
    if (!(r->part[i] > 0)) continue;
    double wd = PLOT_W * r->part[i] / end;
    char t[48], tip[128];
    snprintf(tip, sizeof tip, "%s: %s (%.1f %%)", part_labels[i], report_time(t, sizeof t, r->part[i]),
             100 * r->part[i] / r->iteration);
    html_rect(w, x, 8, wd, 36, &part_styles[i], 1, tip);
    if (wd > 46) {
      snprintf(t, sizeof t, "%.0f %%", 100 * r->part[i] / r->iteration);
      html_text(w, x + wd / 2, 30, "middle", true, t);
    }
    x += wd;
  }
  time_axis(w, PLOT_X, PLOT_W, 50, end);
  html_svg_end(w);
  const char *labels[RP_N];
  HtmlStyle styles[RP_N];
  int n = 0;
  for (int i = 0; i < RP_N; i++)
    if (r->part[i] > 0) styles[n] = part_styles[i], labels[n++] = part_labels[i];
  html_legend(w, styles, labels, n);
  breakdown_table(w, r);
}

/* --- a scenario: the pipeline timeline --------------------------------------------------------- */

/* The kinds of span the timeline draws; each has its row (stream) in a stage. */
enum { TK_F, TK_B, TK_R, TK_W, TK_OPT, TK_TP, TK_PP, TK_DP, TK_N };
static const char *const tk_labels[TK_N] = {"forward",        "backward",
                                            "recompute",      "weight gradient",
                                            "optimizer step", "tp/cp/ep communication",
                                            "pipeline send",  "dp gradient reduction"};
static const HtmlStyle tk_styles[TK_N] = {{HC_BLUE, false},  {HC_ORANGE, false}, {HC_SKY, true},
                                          {HC_GREEN, true},  {HC_BLACK, false},  {HC_VERMILLION, false},
                                          {HC_GREEN, false}, {HC_PURPLE, false}};
static const int tk_stream[TK_N] = {TRACE_COMPUTE, TRACE_COMPUTE, TRACE_COMPUTE, TRACE_COMPUTE,
                                    TRACE_COMPUTE, TRACE_TP,      TRACE_PP,      TRACE_DP};

enum { TL_LEFT = 150, TL_W = CHART_W - TL_LEFT - 10 };

typedef struct Timeline {
  int stages;
  long long end; /* ns: the last span's end */
  double ns_bin; /* ns per pixel */
  float *cover;  /* [stage][kind][pixel]: ns of the kind in the pixel */
  double *busy;  /* [stage][kind]: seconds */
  bool used[TRACE_THREADS];
} Timeline;

static int kind_of(const TraceSpan *s) {
  switch (s->thread) {
  case TRACE_TP: return TK_TP;
  case TRACE_PP: return TK_PP;
  case TRACE_DP: return TK_DP;
  default: break;
  }
  static const char *const cats[] = {"forward", "backward", "recompute", "weight gradient", "optimizer"};
  for (int k = 0; k < 5; k++)
    if (!strcmp(s->cat, cats[k])) return k;
  return -1; /* an operator on the compute stream: it tiles its event, drawn already */
}

static void tl_extent(void *ctx, const TraceSpan *s) {
  Timeline *t = ctx;
  if (kind_of(s) >= 0 && s->start + s->dur > t->end) t->end = s->start + s->dur;
}

static void tl_cover(void *ctx, const TraceSpan *s) {
  Timeline *t = ctx;
  int k = kind_of(s);
  if (k < 0 || s->stage < 0 || s->stage >= t->stages || s->dur <= 0) return;
  t->busy[s->stage * TK_N + k] += s->dur * 1e-9;
  t->used[tk_stream[k]] = true;
  float *row = t->cover + ((size_t)s->stage * TK_N + k) * TL_W;
  double a = s->start / t->ns_bin, b = (s->start + s->dur) / t->ns_bin;
  for (int px = (int)a; px <= (int)b && px < TL_W; px++) {
    double lo = a > px ? a : px, hi = b < px + 1 ? b : px + 1;
    if (px >= 0 && hi > lo) row[px] += (float)((hi - lo) * t->ns_bin);
  }
}

/* The kind drawn at pixel px of a stage's stream (the one covering most of it), or -1, and
 * the fraction of the pixel's time the stream is busy. */
static int tl_pixel(const Timeline *t, int stage, int stream, int px, double *busy) {
  int best = -1;
  double sum = 0, most = 0;
  for (int k = 0; k < TK_N; k++) {
    if (tk_stream[k] != stream) continue;
    double c = t->cover[((size_t)stage * TK_N + k) * TL_W + px];
    sum += c;
    if (c > most) most = c, best = k;
  }
  *busy = sum / t->ns_bin;
  return best;
}

/* One stream of one stage: runs of pixels of one kind and about one busy level (quarters)
 * as one rectangle each. */
static void tl_row(W *w, const Timeline *t, int stage, int stream, double y, double height) {
  int px = 0;
  while (px < TL_W) {
    double busy;
    int k = tl_pixel(t, stage, stream, px, &busy);
    int level = (int)ceil(4 * (busy > 1 ? 1 : busy) - 1e-9), end = px + 1;
    while (k >= 0 && end < TL_W) {
      double b2;
      int k2 = tl_pixel(t, stage, stream, end, &b2);
      if (k2 != k || (int)ceil(4 * (b2 > 1 ? 1 : b2) - 1e-9) != level) break;
      end++;
    }
    if (k >= 0 && level > 0) html_rect(w, TL_LEFT + px, y, end - px, height, &tk_styles[k], level / 4.0, NULL);
    px = end;
  }
}

/* The kinds of span the timeline has: show[k]. */
static void tl_kinds(const Timeline *t, bool *show) {
  for (int k = 0; k < TK_N; k++) show[k] = false;
  for (int d = 0; d < t->stages; d++)
    for (int k = 0; k < TK_N; k++) show[k] |= t->busy[d * TK_N + k] > 0;
}

static void timeline_legend(W *w, const Timeline *t) {
  bool show[TK_N];
  const char *labels[TK_N];
  HtmlStyle styles[TK_N];
  int n = 0;
  tl_kinds(t, show);
  for (int k = 0; k < TK_N; k++)
    if (show[k]) styles[n] = tk_styles[k], labels[n++] = tk_labels[k];
  html_legend(w, styles, labels, n);
}

static void timeline_table(W *w, const Timeline *t) {
  bool show[TK_N];
  tl_kinds(t, show);
  w_puts(w, "<table data-table=\"timeline\"><tr><th>stage</th>");
  for (int k = 0; k < TK_N; k++)
    if (show[k]) html_tag(w, "th class=\"n\"", tk_labels[k]);
  w_puts(w, "</tr>\n");
  for (int d = 0; d < t->stages; d++) {
    w_printf(w, "<tr><td>%d</td>", d);
    for (int k = 0; k < TK_N; k++) {
      char v[48];
      if (show[k]) html_tag(w, "td class=\"n\"", report_time(v, sizeof v, t->busy[d * TK_N + k]));
    }
    w_puts(w, "</tr>\n");
  }
  w_puts(w, "</table>\n");
}

static void timeline_draw(W *w, const Timeline *t) {
  int streams = 0;
  for (int s = 0; s < TRACE_THREADS; s++) streams += t->used[s];
  double lane = t->stages * streams > 48 ? 8 : 14, gap = 8, top = 6;
  double stage_h = streams * (lane + 2) + gap;
  int height = (int)(top + t->stages * stage_h + 30);
  html_svg_begin(w, "timeline", CHART_W, height, "pipeline schedule per stage and stream");
  for (int d = 0; d < t->stages; d++) {
    double y = top + d * stage_h;
    char name[64];
    int row = 0;
    for (int s = 0; s < TRACE_THREADS; s++) {
      if (!t->used[s]) continue;
      double ry = y + row++ * (lane + 2);
      snprintf(name, sizeof name, "stage %d %s", d, report_trace_threads[s]);
      html_rect(w, TL_LEFT, ry, TL_W, lane, NULL, 1, name); /* the lane's ground */
      tl_row(w, t, d, s, ry, lane);
      if (lane >= 12 || s == TRACE_COMPUTE) html_text(w, TL_LEFT - 6, ry + lane - 3, "end", false, name);
    }
  }
  time_axis(w, TL_LEFT, TL_W, top + t->stages * stage_h, t->end * 1e-9);
  html_svg_end(w);
}

static void scenario_timeline(W *w, const Lowered *l, const double *vals, const Report *r) {
  LowerTrace lt;
  html_tag(w, "h3", "Pipeline schedule");
  if (lower_trace_open(l, vals, r, &lt) < 0) {
    html_tag(w, "p class=\"note\"", "The pipeline's arguments are not a schedule llmp simulates: no timeline.");
    return;
  }
  Timeline t = {report_trace_stages(&lt.in), 0, 1, NULL, NULL, {false}};
  report_trace_walk(&lt.in, tl_extent, &t);
  if (t.stages > 0 && t.end > 0) {
    t.ns_bin = (double)t.end / TL_W;
    t.cover = xcalloc((size_t)t.stages * TK_N * TL_W, sizeof *t.cover);
    t.busy = xcalloc((size_t)t.stages * TK_N, sizeof *t.busy);
    report_trace_walk(&lt.in, tl_cover, &t);
    html_tag(w, "p class=\"note\"",
             "One iteration as the trace (--trace) shows it: a row per stage and stream. A lighter pixel is one "
             "where the stream is busy for part of its time.");
    timeline_draw(w, &t);
    timeline_legend(w, &t);
    html_tag(w, "p class=\"note\"", "Busy time per stage and kind of span (sums of the trace's spans):");
    timeline_table(w, &t);
    free(t.cover);
    free(t.busy);
  }
  lower_trace_close(&lt);
}

/* --- a scenario: memory per stage --------------------------------------------------------------- */

static void memory_table(W *w, const Report *r, double mem[2][RM_N], const int stage[2], int nstages) {
  char v[48];
  w_puts(w, "<table data-table=\"memory\"><tr><th>part</th>");
  for (int d = 0; d < nstages; d++) w_printf(w, "<th class=\"n\">stage %d</th>", stage[d]);
  w_puts(w, "</tr>\n");
  double sum[2] = {0, 0};
  for (int i = 0; i < RM_N; i++) {
    w_puts(w, "<tr>");
    html_tag(w, "td", memory_labels[i]);
    for (int d = 0; d < nstages; d++) {
      sum[d] += mem[d][i];
      html_tag(w, "td class=\"n\"", report_bytes(v, sizeof v, mem[d][i]));
    }
    w_puts(w, "</tr>\n");
  }
  w_puts(w, "<tr><th>total</th>");
  for (int d = 0; d < nstages; d++) w_printf(w, "<th class=\"n\">%s</th>", report_bytes(v, sizeof v, sum[d]));
  w_printf(w, "</tr>\n<tr><td>capacity</td><td class=\"n\" colspan=\"%d\">%s</td></tr></table>\n", nstages,
           report_bytes(v, sizeof v, r->capacity));
}

static void scenario_memory(W *w, const Lowered *l, const double *vals, const Report *r) {
  double mem[2][RM_N], top = r->capacity;
  lower_stage_memory(l, vals, mem);
  int stage[2] = {0, r->pp - 1}, n = r->pp > 1 ? 2 : 1;
  for (int d = 0; d < n; d++) {
    double sum = 0;
    for (int i = 0; i < RM_N; i++) sum += mem[d][i] > 0 ? mem[d][i] : 0;
    if (sum > top) top = sum;
  }
  top *= 1.08;
  html_tag(w, "h3", "Memory per GPU by stage");
  html_tag(w, "p class=\"note\"",
           "The first and the last pipeline stage, the two the model computes (the report's "
           "peak is the larger), against the GPU's memory.");
  html_svg_begin(w, "memory", CHART_W, 50 * n + 40, "memory per stage against capacity");
  for (int d = 0; d < n; d++) {
    double x = 90, y = 8 + 50 * d;
    char name[32], v[48], tip[128];
    snprintf(name, sizeof name, "stage %d", stage[d]);
    html_text(w, 82, y + 24, "end", false, name);
    html_rect(w, x, y, (CHART_W - 100) * r->capacity / top, 36, NULL, 1, NULL); /* the capacity, as ground */
    for (int i = 0; i < RM_N; i++) {
      if (!(mem[d][i] > 0)) continue;
      double wd = (CHART_W - 100) * mem[d][i] / top;
      snprintf(tip, sizeof tip, "stage %d %s: %s", stage[d], memory_labels[i], report_bytes(v, sizeof v, mem[d][i]));
      html_rect(w, x, y, wd, 36, &memory_styles[i], 1, tip);
      if (wd > 60) html_text(w, x + wd / 2, y + 23, "middle", true, report_bytes(v, sizeof v, mem[d][i]));
      x += wd;
    }
  }
  double cx = 90 + (CHART_W - 100) * r->capacity / top;
  char v[48], cap[64];
  snprintf(cap, sizeof cap, "capacity %s", report_bytes(v, sizeof v, r->capacity));
  html_line(w, cx, 2, cx, 50.0 * n + 12, palette[HC_VERMILLION], 2, true);
  html_text(w, cx, 50.0 * n + 28, "end", true, cap);
  html_svg_end(w);
  html_legend(w, memory_styles, memory_labels, RM_N);
  memory_table(w, r, mem, stage, n);
}

/* --- a scenario: kernel calls ------------------------------------------------------------------- */

typedef struct KernelRow {
  const char *name;
  int calls, calibrated;
} KernelRow;

/* The calls grouped by kernel, in order of first call; returns the count (rows: room for n). */
static int kernel_rows(const LowerCall *c, int n, KernelRow *rows) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    int j = 0;
    while (j < k && strcmp(rows[j].name, c[i].kernel)) j++;
    if (j == k) rows[k++] = (KernelRow){c[i].kernel, 0, 0};
    rows[j].calls++;
    rows[j].calibrated += c[i].calibrated;
  }
  return k;
}

/* The labels of a kernel's calls that no table calibrated, each once, at most 12. */
static void uncalibrated_labels(W *w, const LowerCall *c, int n, const char *kernel) {
  int shown = 0, more = 0;
  for (int i = 0; i < n; i++) {
    if (c[i].calibrated || strcmp(c[i].kernel, kernel)) continue;
    bool seen = false;
    for (int j = 0; j < i && !seen; j++)
      seen = !c[j].calibrated && !strcmp(c[j].kernel, kernel) && !strcmp(c[j].label, c[i].label);
    if (seen) continue;
    if (shown == 12) {
      more++;
      continue;
    }
    if (shown++) w_puts(w, ", ");
    html_esc(w, c[i].label);
  }
  if (more) w_printf(w, " and %d more", more);
}

static void scenario_kernels(W *w, const Lowered *l, const double *vals, const Report *r) {
  LowerCall *c;
  int n = lower_calls(l, vals, &c);
  KernelRow *rows = xcalloc((size_t)(n ? n : 1), sizeof *rows);
  int k = kernel_rows(c, n, rows), most = 1;
  for (int i = 0; i < k; i++) most = rows[i].calls > most ? rows[i].calls : most;
  char line[160];
  html_tag(w, "h3", "Kernel calls, calibrated and not");
  snprintf(line, sizeof line, "%d of %d calls calibrated: a calibration table corrected their answer.",
           r->calibrated_calls, r->calls);
  html_tag(w, "p class=\"note\"", line);
  static const HtmlStyle cal[2] = {{HC_BLUE, false}, {HC_VERMILLION, true}};
  static const char *const cal_labels[2] = {"calibrated", "not calibrated"};
  html_svg_begin(w, "kernels", CHART_W, 22 * k + 10, "kernel calls calibrated and not");
  for (int i = 0; i < k; i++) {
    double y = 5 + 22 * i, unit = (CHART_W - 260.0) / most, a = unit * rows[i].calibrated;
    double b = unit * (rows[i].calls - rows[i].calibrated);
    html_text(w, 200, y + 13, "end", false, rows[i].name);
    snprintf(line, sizeof line, "%s: %d calibrated", rows[i].name, rows[i].calibrated);
    if (a > 0) html_rect(w, 208, y, a, 17, &cal[0], 1, line);
    snprintf(line, sizeof line, "%s: %d not calibrated", rows[i].name, rows[i].calls - rows[i].calibrated);
    if (b > 0) html_rect(w, 208 + a, y, b, 17, &cal[1], 1, line);
    snprintf(line, sizeof line, "%d / %d", rows[i].calibrated, rows[i].calls);
    html_text(w, 214 + a + b, y + 13, "start", false, line);
  }
  html_svg_end(w);
  html_legend(w, cal, cal_labels, 2);
  w_puts(w, "<table data-table=\"kernels\"><tr><th>kernel</th><th class=\"n\">calls</th><th class=\"n\">calibrated"
            "</th><th>calls not calibrated</th></tr>\n");
  for (int i = 0; i < k; i++) {
    w_puts(w, "<tr>");
    html_tag(w, "td", rows[i].name);
    w_printf(w, "<td class=\"n\">%d</td><td class=\"n\">%d</td><td>", rows[i].calls, rows[i].calibrated);
    uncalibrated_labels(w, c, n, rows[i].name);
    w_puts(w, "</td></tr>\n");
  }
  w_puts(w, "</table>\n");
  free(rows);
  free(c);
}

void html_scenario(Html *h, const Lowered *l, const double *vals, const Report *r) {
  W *w = &h->w;
  char title[512];
  snprintf(title, sizeof title, "Scenario %s (%s)", str(r->scenario), str(r->file));
  w_puts(w, "<section class=\"scenario\">\n");
  html_tag(w, "h2", title);
  scenario_figures(w, r);
  if (r->fits) {
    scenario_breakdown(w, r);
    scenario_timeline(w, l, vals, r);
  }
  scenario_memory(w, l, vals, r);
  scenario_kernels(w, l, vals, r);
  w_puts(w, "</section>\n");
}
