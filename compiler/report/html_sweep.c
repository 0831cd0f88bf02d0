/* html_sweep.c - the HTML report's sections for a sweep and for validation (html.h).
 *
 * A sweep, from the rows sweep_write writes (each kept point with its report's figures):
 *   scatter    iteration time against peak memory, a mark per kept point (points that land
 *              on one pixel are drawn once), plans that do not fit crossed, the Pareto front
 *              (no other kept plan is both faster and smaller) joined and circled, the best
 *              five numbered; under them the sweep's sample of the other points evaluated
 *              (SweepSample), a mark per point by what became of it (ranked below the kept,
 *              failed a require, does not fit, equivalent), a group per reason; a table of
 *              each reason's count and marks (points whose plan does not divide have none);
 *              each axis logarithmic where its values span more than LOG_SPAN times
 *   axes       per axis the sweep varies, the best objective among the kept plans with each
 *              value: how the axis moves the objective
 *   dropped    the points dropped, per reason
 * Validation: predicted against measured iteration time on log axes, with the bands of
 * +-5 % and +-10 % around equality, each point numbered (and named when there are few). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "html_private.h"

/* --- reading rows ----------------------------------------------------------------------------- */

static const SweepField *field_of(const SweepRow *r, const char *key) {
  for (int i = 0; i < r->nfields; i++)
    if (!strcmp(r->fields[i].key, key)) return &r->fields[i];
  return NULL;
}

/* A numeric field; NaN when absent or text. */
static double num_of(const SweepRow *r, const char *key) {
  const SweepField *f = field_of(r, key);
  return f && !f->str ? f->num : NAN;
}

/* Whether a row's plan fits: its "fits" field, a word (yes, true) or a number; no field: yes. */
static bool fits_of(const SweepRow *r) {
  const SweepField *f = field_of(r, "fits");
  if (!f) return true;
  if (f->str) return !strcmp(f->str, "yes") || !strcmp(f->str, "true");
  return f->num != 0;
}

/* A field's value as text: a word as it is, a number with up to 6 significant digits. */
static const char *value_text(char *buf, size_t n, const SweepField *f) {
  if (!f)
    snprintf(buf, n, "-");
  else if (f->str)
    snprintf(buf, n, "%s", f->str);
  else if (!isfinite(f->num))
    snprintf(buf, n, "-");
  else if (!strncmp(f->key, "memory.", 7) || strstr(f->key, "bytes"))
    report_bytes(buf, (unsigned)n, f->num);
  else
    snprintf(buf, n, "%.6g", f->num);
  return buf;
}

/* The objective as text: a time where it is the iteration, else a number. */
static const char *objective_text(char *buf, size_t n, const SweepMeta *m, double x) {
  if (m->objective && !strcmp(m->objective, "iteration"))
    report_time(buf, (unsigned)n, x);
  else
    snprintf(buf, n, "%.6g", x);
  return buf;
}

/* --- the rows' table ----------------------------------------------------------------------------- */

static void rows_table(W *w, const char *kind, const SweepMeta *m, const SweepRow *rows, const int *pick, int n) {
  char v[96];
  w_printf(w, "<table data-table=\"%s\"><tr><th class=\"n\">rank</th><th class=\"n\">point</th><th class=\"n\">", kind);
  html_esc(w, m->objective);
  w_puts(w, "</th>");
  for (int f = 0; n && f < rows[pick[0]].nfields; f++) html_tag(w, "th", rows[pick[0]].fields[f].key);
  w_puts(w, "</tr>\n");
  for (int i = 0; i < n; i++) {
    const SweepRow *r = &rows[pick[i]];
    w_printf(w, "<tr><td class=\"n\">%d</td><td class=\"n\">%llu</td>", pick[i] + 1, (unsigned long long)r->point);
    html_tag(w, "td class=\"n\"", objective_text(v, sizeof v, m, r->objective));
    for (int f = 0; f < r->nfields; f++)
      html_tag(w, r->fields[f].str ? "td" : "td class=\"n\"", value_text(v, sizeof v, &r->fields[f]));
    w_puts(w, "</tr>\n");
  }
  w_puts(w, "</table>\n");
}

/* --- the scatter of time against memory ------------------------------------------------------------ */

enum { SC_W = 960, SC_H = 420, SC_L = 80, SC_R = 20, SC_T = 14, SC_B = 46 };
enum { LOG_SPAN = 20 }; /* a scale whose values span more than this factor is logarithmic */

typedef struct Scale {
  double lo, hi; /* the data range drawn */
  double a, b;   /* pixel = a + b * value, or a + b * log10(value) where log */
  bool log;
} Scale;

static double px_of(const Scale *s, double v) { return s->a + s->b * (s->log ? log10(v) : v); }

/* The scale of [lo, hi] onto pixels p0 .. p1, padded: linear, or logarithmic where the values
 * span more than LOG_SPAN times (the dropped points of a sweep may need fifty times the
 * memory its kept plans do). */
static Scale scale_of(double lo, double hi, double p0, double p1) {
  if (lo > 0 && hi / lo > LOG_SPAN) {
    double l0 = log10(lo), l1 = log10(hi), pad = 0.04 * (l1 - l0);
    l0 -= pad, l1 += pad;
    return (Scale){pow(10, l0), pow(10, l1), p0 - (p1 - p0) / (l1 - l0) * l0, (p1 - p0) / (l1 - l0), true};
  }
  if (!(hi > lo)) lo -= 0.5 * (fabs(lo) > 0 ? fabs(lo) : 1), hi = lo + (fabs(lo) > 0 ? 2 * fabs(lo) : 2);
  double pad = 0.05 * (hi - lo);
  lo = lo - pad < 0 && lo >= 0 ? 0 : lo - pad, hi += pad;
  return (Scale){lo, hi, p0 - (p1 - p0) / (hi - lo) * lo, (p1 - p0) / (hi - lo), false};
}

/* An axis's ticks, round in units of `unit` (GiB, seconds): linear, steps of 1, 2 or 5 times a
 * power of ten; logarithmic, 1, 2 and 5 of each decade (1 alone over more than 4), or where
 * binary (bytes), the powers of two (every other over more than 10).  Returns the count (at
 * most max). */
static int scale_ticks(const Scale *s, double unit, bool binary, double *t, int max) {
  int n = 0;
  if (!s->log) {
    double step = html_tick_step(s->lo / unit, s->hi / unit, 6);
    for (double v = ceil(s->lo / unit / step) * step; v <= s->hi / unit && n < max; v += step) t[n++] = v * unit;
    return n;
  }
  if (binary) {
    int e0 = (int)floor(log2(s->lo / unit)), e1 = (int)ceil(log2(s->hi / unit)), step = e1 - e0 > 10 ? 2 : 1;
    for (int e = e0 - (e0 % step + step) % step; e <= e1 && n < max; e += step) /* even powers where every other */
      if (ldexp(unit, e) >= s->lo && ldexp(unit, e) <= s->hi) t[n++] = ldexp(unit, e);
    return n;
  }
  int e0 = (int)floor(log10(s->lo / unit)), e1 = (int)ceil(log10(s->hi / unit));
  for (int e = e0; e <= e1; e++)
    for (int m = 1; m <= 5 && (m == 1 || e1 - e0 <= 4); m += m == 1 ? 1 : 3) {
      double v = m * pow(10, e) * unit;
      if (v >= s->lo && v <= s->hi && n < max) t[n++] = v;
    }
  return n;
}

/* The Pareto front of the plans that fit: no other is both faster and smaller.  Marks
 * front[i]; returns its size. */
static int pareto(const SweepRow *rows, int n, const double *x, const double *y, bool *front) {
  int *ord = xmalloc((size_t)(n ? n : 1) * sizeof *ord), k = 0, count = 0;
  for (int i = 0; i < n; i++)
    if (fits_of(&rows[i]) && isfinite(x[i]) && isfinite(y[i])) ord[k++] = i;
  for (int i = 1; i < k; i++) { /* by memory, then time */
    int v = ord[i], j = i;
    while (j > 0 && (x[ord[j - 1]] > x[v] || (x[ord[j - 1]] == x[v] && y[ord[j - 1]] > y[v]))) ord[j] = ord[j - 1], j--;
    ord[j] = v;
  }
  double best = INFINITY;
  for (int i = 0; i < k; i++)
    if (y[ord[i]] < best) best = y[ord[i]], front[ord[i]] = true, count++;
  free(ord);
  return count;
}

static void scatter_axes(W *w, const Scale *sx, const Scale *sy) {
  char t[48];
  double v[64];
  int n = scale_ticks(sx, 1024.0 * 1024 * 1024, true, v, 64); /* memory ticks at round GiB */
  html_line(w, SC_L, SC_H - SC_B, SC_W - SC_R, SC_H - SC_B, "#333", 1, false);
  html_line(w, SC_L, SC_T, SC_L, SC_H - SC_B, "#333", 1, false);
  for (int i = 0; i < n; i++) {
    double px = px_of(sx, v[i]);
    html_line(w, px, SC_H - SC_B, px, SC_H - SC_B + 5, "#333", 1, false);
    html_text(w, px, SC_H - SC_B + 18, "middle", false, report_bytes(t, sizeof t, v[i]));
  }
  html_text(w, (SC_L + SC_W - SC_R) / 2.0, SC_H - 8, "middle", false,
            sx->log ? "peak memory per GPU (log scale)" : "peak memory per GPU");
  n = scale_ticks(sy, 1, false, v, 64);
  for (int i = 0; i < n; i++) {
    double py = px_of(sy, v[i]);
    html_line(w, SC_L - 5, py, SC_L, py, "#333", 1, false);
    html_line(w, SC_L, py, SC_W - SC_R, py, "#ddd", 1, false);
    html_text(w, SC_L - 8, py + 4, "end", false, report_time(t, sizeof t, v[i]));
  }
  w_printf(w, "<text transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
           (SC_T + SC_H - SC_B) / 2, sy->log ? "iteration time (log scale)" : "iteration time");
}

/* The marks: a dot per kept plan (one per pixel), a cross where it does not fit. */
static void scatter_marks(W *w, const SweepRow *rows, int n, const double *x, const double *y, const Scale *sx,
                          const Scale *sy) {
  enum { PW = SC_W, PH = SC_H };
  unsigned char *seen = xcalloc((size_t)PW * PH, 1);
  w_printf(w, "<g data-marks=\"points\" fill=\"#0072B2\" fill-opacity=\"0.55\" stroke=\"#D55E00\">\n");
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i]) || !isfinite(y[i])) continue;
    int px = (int)lround(px_of(sx, x[i])), py = (int)lround(px_of(sy, y[i]));
    bool fit = fits_of(&rows[i]);
    if (px < 0 || px >= PW || py < 0 || py >= PH || seen[py * PW + px] & (fit ? 1 : 2)) continue;
    seen[py * PW + px] |= fit ? 1 : 2;
    if (fit)
      w_printf(w, "<circle cx=\"%d\" cy=\"%d\" r=\"3\" stroke=\"none\"/>\n", px, py);
    else
      w_printf(w, "<path d=\"M%d %dl6 6m0 -6l-6 6\" stroke-width=\"1.5\"/>\n", px - 3, py - 3);
  }
  w_puts(w, "</g>\n");
  free(seen);
}

/* The Pareto front as a staircase through its plans, each circled; the best five numbered. */
static void scatter_front(W *w, int n, const double *x, const double *y, const bool *front, const Scale *sx,
                          const Scale *sy) {
  w_puts(w, "<polyline data-marks=\"pareto\" fill=\"none\" stroke=\"#E69F00\" stroke-width=\"2\" points=\"");
  double last = NAN, lo = -INFINITY;
  for (;;) { /* the front's plans by memory, ascending: each is faster than the one before */
    int next = -1;
    for (int i = 0; i < n; i++)
      if (front[i] && x[i] > lo && (next < 0 || x[i] < x[next])) next = i;
    if (next < 0) break;
    double px = px_of(sx, x[next]), py = px_of(sy, y[next]);
    if (!isnan(last)) w_printf(w, "%.1f,%.1f ", px, last);
    w_printf(w, "%.1f,%.1f ", px, py);
    last = py, lo = x[next];
  }
  w_puts(w, "\"/>\n");
  for (int i = 0; i < n; i++)
    if (front[i])
      w_printf(w,
               "<circle data-mark=\"front\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"none\" stroke=\"#E69F00\" "
               "stroke-width=\"2\"/>\n",
               px_of(sx, x[i]), px_of(sy, y[i]));
  for (int i = 0; i < n && i < 5; i++) { /* one label where several of them coincide: the best's */
    char t[16];
    double px = px_of(sx, x[i]), py = px_of(sy, y[i]);
    bool under = false;
    for (int j = 0; j < i; j++) under |= fabs(px_of(sx, x[j]) - px) < 4 && fabs(px_of(sy, y[j]) - py) < 4;
    snprintf(t, sizeof t, "#%d", i + 1);
    if (isfinite(px) && isfinite(py) && !under) html_text(w, px + 8, py - 6, "start", true, t);
  }
}

/* --- the points evaluated besides the kept ones (a sample of each reason) ------------------------- */

/* What the page calls each kind, and how it draws it: a group's paint, and a mark per point
 * (shape and colour both differ, for print and for colour-blind readers). */
static const struct {
  const char *name, *paint;
} dot_kinds[] = {
    /* ORDER SweepDotKind */
    {"ranked below the kept", "fill=\"#56B4E9\" stroke=\"#56B4E9\" stroke-width=\"1\""},
    {"failed a require", "fill=\"#CC79A7\" stroke=\"none\""},
    {"does not fit", "fill=\"none\" stroke=\"#D55E00\" stroke-width=\"1.3\""},
    {"equivalent to another plan", "fill=\"none\" stroke=\"#009E73\" stroke-width=\"0.9\""},
};

static void dot_mark(W *w, SweepDotKind k, bool fits, double x, double y) {
  switch (k) {
  case SWEEP_DOT_RANKED:
    if (fits) w_printf(w, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\"/>", x, y);
    else w_printf(w, "<path d=\"M%.1f %.1fl4 4m0 -4l-4 4\" fill=\"none\"/>", x - 2, y - 2);
    break;
  case SWEEP_DOT_REQUIRE: w_printf(w, "<path d=\"M%.1f %.1fl3 5h-6z\"/>", x, y - 3); break;
  case SWEEP_DOT_FIT: w_printf(w, "<path d=\"M%.1f %.1fl5 5m0 -5l-5 5\"/>", x - 2.5, y - 2.5); break;
  case SWEEP_DOT_EQUIVALENT:
    w_printf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"3.5\" height=\"3.5\"/>", x - 1.75, y - 1.75);
    break;
  }
}

/* Whether a point is one of the kept rows (kept: their points, ascending). */
static bool is_kept(const uint64_t *kept, int n, uint64_t p) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (kept[mid] < p) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && kept[lo] == p;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Whether a dot is drawn: it has figures, and a ranked one was not kept (the kept plans'
 * marks show those). */
static bool drawable(const SweepDot *d, const uint64_t *kept, int nkept) {
  return isfinite(d->peak) && isfinite(d->iteration) && (d->reason >= 0 || !is_kept(kept, nkept, d->point));
}

/* The sample's points, a group per reason (data-dots: its index in the dropped reasons, or
 * "ranked"; data-count: its marks), named by its reason, the ranked under the dropped.  Counts
 * each reason's marks in drawn[] (the ranked last). */
static void scatter_dots(W *w, const SweepMeta *m, const SweepSample *s, const uint64_t *kept, int nkept,
                         const Scale *sx, const Scale *sy, int *drawn) {
  for (int pass = 0; pass < 2; pass++) /* the ranked first */
    for (int j = 0, k; j < s->n; j = k) {
      int r = s->dot[j].reason, c = 0;
      for (k = j; k < s->n && s->dot[k].reason == r; k++) c += drawable(&s->dot[k], kept, nkept);
      if ((r < 0) != (pass == 0) || !c) continue;
      drawn[r < 0 ? m->ndropped : r] = c;
      w_puts(w, "<g data-dots=\"");
      if (r < 0) w_puts(w, "ranked");
      else w_printf(w, "%d", r);
      w_printf(w, "\" data-count=\"%d\" %s opacity=\"0.7\"><title>", c, dot_kinds[s->dot[j].kind].paint);
      html_esc(w, r < 0 ? "ranked below the kept plans" : m->dropped[r].reason);
      w_puts(w, "</title>\n");
      for (int i = j; i < k; i++)
        if (drawable(&s->dot[i], kept, nkept))
          dot_mark(w, s->dot[i].kind, s->dot[i].fits, px_of(sx, s->dot[i].peak), px_of(sy, s->dot[i].iteration));
      w_puts(w, "\n</g>\n");
    }
}

/* The legend: the kinds drawn. */
static void scatter_legend(W *w, const SweepSample *s, bool unfit_kept) {
  bool seen[4] = {false, false, false, false};
  for (int i = 0; s && i < s->n; i++) seen[s->dot[i].kind] = true;
  w_puts(w, "<ul class=\"legend\"><li><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><circle cx=\"7\" cy=\"7\" "
            "r=\"3.5\" fill=\"#0072B2\"/></svg>kept plan</li>");
  if (unfit_kept)
    w_puts(w, "<li><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><path d=\"M4 4l6 6m0 -6l-6 6\" "
              "stroke=\"#D55E00\" stroke-width=\"1.5\"/></svg>kept plan that does not fit</li>");
  w_puts(w, "<li><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><circle cx=\"7\" cy=\"7\" r=\"5\" fill=\"none\" "
            "stroke=\"#E69F00\" stroke-width=\"2\"/></svg>Pareto front</li>");
  for (int k = 0; k < 4; k++) {
    if (!seen[k]) continue;
    w_printf(w, "<li><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><g %s>", dot_kinds[k].paint);
    dot_mark(w, (SweepDotKind)k, true, 7, 7);
    w_puts(w, "</g></svg>");
    html_esc(w, dot_kinds[k].name);
    w_puts(w, "</li>");
  }
  w_puts(w, "</ul>\n");
}

/* The table beneath: each kind of point with its count and the marks drawn of it. */
static void scatter_counts(W *w, const SweepMeta *m, const SweepSample *s, int nrows, int kept_drawn,
                           const int *drawn) {
  char t[32];
  w_puts(w, "<table data-table=\"points\"><tr><th>points</th><th>drawn as</th><th class=\"n\">count</th>"
            "<th class=\"n\">drawn</th></tr>\n");
  w_printf(w, "<tr data-reason=\"kept\"><td>kept (the best %d)</td><td>kept plan</td><td class=\"n\">%d</td>"
              "<td class=\"n\">%d</td></tr>\n", m->keep, nrows, kept_drawn);
  uint64_t below = m->kept > (uint64_t)nrows ? m->kept - (uint64_t)nrows : 0;
  w_printf(w, "<tr data-reason=\"ranked\"><td>ranked below the kept</td><td>%s</td><td class=\"n\">%llu</td>",
           dot_kinds[0].name, (unsigned long long)below);
  if (s) w_printf(w, "<td class=\"n\">%d</td></tr>\n", drawn[m->ndropped]);
  else w_puts(w, "<td class=\"n\">not recorded</td></tr>\n");
  for (int r = 0; r < m->ndropped; r++) {
    if (!m->dropped[r].count) continue;
    int kind = -1;
    for (int i = 0; s && i < s->n && kind < 0; i++)
      if (s->dot[i].reason == r) kind = (int)s->dot[i].kind;
    w_printf(w, "<tr data-reason=\"%d\">", r);
    html_tag(w, "td", m->dropped[r].reason);
    html_tag(w, "td", kind >= 0 ? dot_kinds[kind].name : "-");
    snprintf(t, sizeof t, "%llu", (unsigned long long)m->dropped[r].count);
    html_tag(w, "td class=\"n\"", t);
    if (kind >= 0) snprintf(t, sizeof t, "%d", drawn[r]);
    html_tag(w, "td class=\"n\"", kind >= 0 ? t : s ? "none: no figures" : "not recorded");
    w_puts(w, "</tr>\n");
  }
  w_puts(w, "</table>\n");
}

typedef struct Extent {
  double x0, x1, y0, y1;
} Extent;

static void extent_add(Extent *e, double x, double y) {
  if (!isfinite(x) || !isfinite(y)) return;
  e->x0 = fmin(e->x0, x), e->x1 = fmax(e->x1, x), e->y0 = fmin(e->y0, y), e->y1 = fmax(e->y1, y);
}

static void scatter_note(W *w, const SweepMeta *m, const SweepSample *s, int n, int nf) {
  char line[1024];
  int len = snprintf(line, sizeof line,
                     "Each kept plan (%d%s) is a dark dot, a kept plan that does not fit a cross. The %d kept "
                     "plans on the Pareto front (no other kept plan is both faster and smaller) are circled and "
                     "joined; #1 to #5 are the best by the objective.",
                     n, (uint64_t)n < m->kept ? ", the sweep's `keep`" : "", nf);
  if (s)
    snprintf(line + len, sizeof line - (size_t)len,
             " The other points evaluated are drawn by what became of them: all of them where a kind has at most "
             "%d, else a uniform sample of %d (the table gives each count). Points whose plan does not divide "
             "fail a check before any kernel runs: they have no figures and are only counted.",
             s->per_class, s->per_class);
  else
    snprintf(line + len, sizeof line - (size_t)len, " The dropped points were not recorded.");
  html_tag(w, "p class=\"note\"", line);
}

static void sweep_scatter(W *w, const SweepMeta *m, const SweepRow *rows, int n, const SweepSample *s) {
  double *x = xmalloc((size_t)(n ? n : 1) * sizeof *x), *y = xmalloc((size_t)(n ? n : 1) * sizeof *y);
  bool *front = xcalloc((size_t)(n ? n : 1), sizeof *front);
  uint64_t *kept = xmalloc((size_t)(n ? n : 1) * sizeof *kept);
  Extent e = {INFINITY, -INFINITY, INFINITY, -INFINITY};
  int kept_drawn = 0, unfit = 0, *drawn = xcalloc((size_t)m->ndropped + 1, sizeof *drawn);
  for (int i = 0; i < n; i++) {
    x[i] = num_of(&rows[i], "memory.peak"), y[i] = num_of(&rows[i], "iteration_s"), kept[i] = rows[i].point;
    kept_drawn += isfinite(x[i]) && isfinite(y[i]);
    unfit += isfinite(x[i]) && isfinite(y[i]) && !fits_of(&rows[i]);
    extent_add(&e, x[i], y[i]);
  }
  qsort(kept, (size_t)n, sizeof *kept, cmp_u64);
  for (int i = 0; s && i < s->n; i++) extent_add(&e, s->dot[i].peak, s->dot[i].iteration);
  html_tag(w, "h3", "Iteration time against peak memory");
  if (!(e.x1 >= e.x0)) {
    html_tag(w, "p class=\"note\"", "No point evaluated has both an iteration time and a peak memory to draw.");
  } else {
    int nf = pareto(rows, n, x, y, front);
    Scale sx = scale_of(e.x0, e.x1, SC_L, SC_W - SC_R), sy = scale_of(e.y0, e.y1, SC_H - SC_B, SC_T);
    scatter_note(w, m, s, n, nf);
    html_svg_begin(w, "sweep-scatter", SC_W, SC_H, "iteration time against peak memory");
    scatter_axes(w, &sx, &sy);
    if (s) scatter_dots(w, m, s, kept, n, &sx, &sy, drawn);
    scatter_marks(w, rows, n, x, y, &sx, &sy);
    scatter_front(w, n, x, y, front, &sx, &sy);
    html_svg_end(w);
    scatter_legend(w, s, unfit > 0);
    scatter_counts(w, m, s, n, kept_drawn, drawn);
    int *pick = xmalloc((size_t)nf * sizeof *pick + 1), k = 0;
    for (int i = 0; i < n; i++)
      if (front[i]) pick[k++] = i;
    html_tag(w, "p class=\"note\"", "The Pareto front of the kept plans, by rank:");
    rows_table(w, "pareto", m, rows, pick, k);
    free(pick);
  }
  free(x);
  free(y);
  free(front);
  free(kept);
  free(drawn);
}

/* --- how each axis moves the objective ------------------------------------------------------------ */

typedef struct AxisValue {
  const SweepField *f; /* the first row's field with this value */
  double best;         /* the best objective among the rows with it */
  int rank, count;     /* the rank (from 1) of that row; the rows with it */
} AxisValue;

static bool same_value(const SweepField *a, const SweepField *b) {
  if (a->str || b->str) return a->str && b->str && !strcmp(a->str, b->str);
  return a->num == b->num || (isnan(a->num) && isnan(b->num));
}

/* The axis's values among the rows, each with its best row (the rows are ranked: the first
 * row with a value is its best); numbers in ascending order. */
static int axis_values(const SweepRow *rows, int n, const char *key, AxisValue *v, int max) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    const SweepField *f = field_of(&rows[i], key);
    if (!f) continue;
    int j = 0;
    while (j < k && !same_value(v[j].f, f)) j++;
    if (j == k && k == max) continue;
    if (j == k) v[k++] = (AxisValue){f, rows[i].objective, i + 1, 0};
    v[j].count++;
  }
  for (int i = 1; i < k; i++) {
    AxisValue a = v[i];
    int j = i;
    while (j > 0 && !a.f->str && !v[j - 1].f->str && v[j - 1].f->num > a.f->num) v[j] = v[j - 1], j--;
    v[j] = a;
  }
  return k;
}

enum { AX_W = 470 }; /* two charts side by side */

/* A dot per value at its best objective, on the scale [lo, hi] that every axis's chart
 * shares, so that the spread of the dots compares the axes' effect; the best plan's dot is
 * filled dark and ringed. */
static void axis_chart(W *w, const SweepMeta *m, const char *key, const AxisValue *v, int k, double lo, double hi) {
  enum { X0 = 104, X1 = AX_W - 16 };
  char title[160], t[96], tip[512];
  snprintf(title, sizeof title, "best %s by %s", m->objective ? m->objective : "objective", key);
  html_svg_begin(w, "axis-effect", AX_W, 18 * k + 40, title);
  html_text(w, 4, 14, "start", true, key);
  for (int i = 0; i < k; i++) {
    double y = 26 + 18 * i, x = X0 + (X1 - X0) * (hi > lo ? (v[i].best - lo) / (hi - lo) : 0.5);
    html_text(w, X0 - 8, y + 4, "end", false, value_text(t, sizeof t, v[i].f));
    html_line(w, X0, y, X1, y, "#ddd", 1, false);
    snprintf(tip, sizeof tip, "%s = %s: best %s (rank %d), %d kept plans", key, t,
             objective_text(title, sizeof title, m, v[i].best), v[i].rank, v[i].count);
    w_printf(w, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"#000\" stroke-width=\"%s\"><title>", x, y,
             v[i].rank == 1 ? "#0072B2" : "#56B4E9", v[i].rank == 1 ? "2" : "0.6");
    html_esc(w, tip);
    w_puts(w, "</title></circle>\n");
  }
  double base = 26 + 18 * k;
  html_text(w, X0, base + 8, "start", false, objective_text(t, sizeof t, m, lo));
  html_text(w, X1, base + 8, "end", false, objective_text(t, sizeof t, m, hi));
  html_svg_end(w);
}

static void sweep_axes(W *w, const SweepMeta *m, const SweepRow *rows, int n, const char *const *axes, int naxes) {
  enum { MAXV = 64 };
  AxisValue v[MAXV];
  char line[256], t[96];
  html_tag(w, "h3", "How each axis moves the objective");
  snprintf(line, sizeof line,
           "For each value of each axis, the best %s among the kept plans with that value "
           "(%s is better; the dark, ringed dot is the best plan's). Every axis has the same scale.",
           m->objective ? m->objective : "objective", m->maximize ? "right" : "left");
  html_tag(w, "p class=\"note\"", line);
  double lo = INFINITY, hi = -INFINITY; /* one scale for every axis */
  for (int a = 0; a < naxes; a++) {
    int k = axis_values(rows, n, axes[a], v, MAXV);
    for (int i = 0; i < k; i++)
      if (isfinite(v[i].best)) lo = fmin(lo, v[i].best), hi = fmax(hi, v[i].best);
  }
  w_puts(w, "<div data-part=\"axes\">\n");
  for (int a = 0; a < naxes; a++) {
    int k = axis_values(rows, n, axes[a], v, MAXV);
    if (k) axis_chart(w, m, axes[a], v, k, lo, hi);
  }
  w_puts(w, "</div>\n<table data-table=\"axes\"><tr><th>axis</th><th>value</th><th class=\"n\">best</th>"
            "<th class=\"n\">its rank</th><th class=\"n\">kept plans</th></tr>\n");
  for (int a = 0; a < naxes; a++) {
    int k = axis_values(rows, n, axes[a], v, MAXV);
    for (int i = 0; i < k; i++) {
      w_puts(w, "<tr>");
      html_tag(w, "td", axes[a]);
      html_tag(w, "td", value_text(t, sizeof t, v[i].f));
      html_tag(w, "td class=\"n\"", objective_text(t, sizeof t, m, v[i].best));
      w_printf(w, "<td class=\"n\">%d</td><td class=\"n\">%d</td></tr>\n", v[i].rank, v[i].count);
    }
  }
  w_puts(w, "</table>\n");
}

/* --- dropped points ------------------------------------------------------------------------------ */

static void sweep_dropped(W *w, const SweepMeta *m) {
  uint64_t most = 0;
  int k = 0;
  for (int i = 0; i < m->ndropped; i++)
    if (m->dropped[i].count) most = m->dropped[i].count > most ? m->dropped[i].count : most, k++;
  html_tag(w, "h3", "Dropped points");
  if (!k) {
    html_tag(w, "p class=\"note\"", "No point was dropped.");
    return;
  }
  html_tag(w, "p class=\"note\"",
           "The points dropped, by reason: a plan that does not divide, a failed require, a plan "
           "that does not fit, one equivalent to another. Those with figures are drawn on the chart "
           "of time against memory.");
  static const HtmlStyle bar = {HC_VERMILLION, true};
  html_svg_begin(w, "dropped", SC_W, 22 * k + 8, "dropped points per reason");
  int row = 0;
  for (int i = 0; i < m->ndropped; i++) {
    const SweepDrop *d = &m->dropped[i];
    if (!d->count) continue;
    double y = 4 + 22 * row++, wd = 300.0 * (double)d->count / (double)most;
    char t[32];
    snprintf(t, sizeof t, "%llu", (unsigned long long)d->count);
    html_rect(w, 4, y, wd, 17, &bar, 1, d->reason);
    html_text(w, 10 + wd, y + 13, "start", false, t);
    html_text(w, 360, y + 13, "start", false, d->reason);
  }
  html_svg_end(w);
  w_puts(w, "<table data-table=\"dropped\"><tr><th>reason</th><th class=\"n\">points</th></tr>\n");
  for (int i = 0; i < m->ndropped; i++)
    if (m->dropped[i].count) {
      w_puts(w, "<tr>");
      html_tag(w, "td", m->dropped[i].reason);
      w_printf(w, "<td class=\"n\">%llu</td></tr>\n", (unsigned long long)m->dropped[i].count);
    }
  w_puts(w, "</table>\n");
}

void html_sweep(Html *h, const SweepMeta *m, const SweepRow *rows, int nrows, const char *const *axes, int naxes,
                const SweepSample *sample) {
  W *w = &h->w;
  char line[512];
  enum { ALL_MAX = 2000, BEST = 10 };
  w_puts(w, "<section class=\"sweep\">\n");
  snprintf(line, sizeof line, "Sweep %s (%s)", m->sweep ? m->sweep : "", m->file ? m->file : "");
  html_tag(w, "h2", line);
  snprintf(line, sizeof line, "%s %s, keep %d: %llu points, %llu evaluated, %llu kept, %llu dropped; the best %d below.",
           m->maximize ? "maximize" : "minimize", m->objective ? m->objective : "", m->keep,
           (unsigned long long)m->points, (unsigned long long)m->evaluated, (unsigned long long)m->kept,
           (unsigned long long)(m->evaluated - m->kept), nrows);
  html_tag(w, "p", line);
  int *pick = xmalloc((size_t)(nrows ? nrows : 1) * sizeof *pick);
  for (int i = 0; i < nrows; i++) pick[i] = i;
  html_tag(w, "h3", "Best plans");
  rows_table(w, "best", m, rows, pick, nrows < BEST ? nrows : BEST);
  sweep_scatter(w, m, rows, nrows, sample);
  sweep_axes(w, m, rows, nrows, axes, naxes);
  sweep_dropped(w, m);
  snprintf(line, sizeof line, "All %d kept plans%s", nrows,
           nrows > ALL_MAX ? " (the first 2000 by rank; --format csv writes them all)" : "");
  w_puts(w, "<details><summary>");
  html_esc(w, line);
  w_puts(w, "</summary>\n");
  rows_table(w, "all", m, rows, pick, nrows < ALL_MAX ? nrows : ALL_MAX);
  w_puts(w, "</details>\n</section>\n");
  free(pick);
}

/* --- validation ------------------------------------------------------------------------------------ */

void html_validate_add(Html *h, const Report *r) {
  XGROW(h->pts, h->npts + 1, h->cappts);
  h->pts[h->npts++] = (HtmlPoint){xstrdup(r->scenario ? r->scenario : ""),
                                  xstrdup(r->file ? r->file : ""),
                                  r->gpus,
                                  r->tp,
                                  r->pp,
                                  r->dp,
                                  r->fits,
                                  r->iteration,
                                  r->measured_iteration,
                                  r->error_pct};
}

enum { VA_S = 560, VA_M = 70 }; /* the square plot, its margin */

/* The band between (1 - f) and (1 + f) times equality, over [lo, hi] seconds. */
static void band(W *w, const Scale *s, double lo, double hi, double f, const char *colour) {
  double x0 = s->a + s->b * log10(lo), x1 = s->a + s->b * log10(hi);
  double y = VA_S + 2 * VA_M; /* the plot is square: the y pixel of v is (2M + S) - x pixel of v */
  w_printf(w, "<polygon fill=\"%s\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n", colour, x0,
           y - (s->a + s->b * log10(lo * (1 + f))), x1, y - (s->a + s->b * log10(hi * (1 + f))), x1,
           y - (s->a + s->b * log10(hi * (1 - f))), x0, y - (s->a + s->b * log10(lo * (1 - f))));
}

static void validate_axes(W *w, const Scale *s, double lo, double hi) {
  double top = VA_M, bottom = VA_M + VA_S, left = VA_M, right = VA_M + VA_S;
  html_line(w, left, bottom, right, bottom, "#333", 1, false);
  html_line(w, left, top, left, bottom, "#333", 1, false);
  for (int e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)); e++)
    for (int m = 1; m < 10; m++) {
      double v = m * pow(10, e);
      if (v < lo || v > hi) continue;
      double p = s->a + s->b * log10(v), q = 2 * VA_M + VA_S - p;
      html_line(w, p, bottom, p, bottom + (m == 1 ? 6 : 3), "#333", 1, false);
      html_line(w, left - (m == 1 ? 6 : 3), q, left, q, "#333", 1, false);
      if (m == 1 || m == 2 || m == 5) {
        char t[48];
        report_time(t, sizeof t, v);
        html_text(w, p, bottom + 20, "middle", false, t);
        html_text(w, left - 9, q + 4, "end", false, t);
      }
    }
  html_text(w, (left + right) / 2, bottom + 44, "middle", false, "measured iteration time");
  w_printf(w,
           "<text transform=\"translate(16 %.0f) rotate(-90)\" text-anchor=\"middle\">predicted iteration time"
           "</text>\n",
           (top + bottom) / 2);
}

/* A point's mark by its error: within 5 % a circle, within 10 % a square, else a triangle
 * (shape and colour both say it). */
static void validate_mark(W *w, double px, double py, double err, int number, const char *tip) {
  double a = fabs(err);
  if (a <= 5)
    w_printf(w, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"#0072B2\"", px, py);
  else if (a <= 10)
    w_printf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"#E69F00\"", px - 4, py - 4);
  else
    w_printf(w, "<path d=\"M%.1f %.1fl5 9h-10z\" fill=\"#D55E00\"", px, py - 5.5);
  w_printf(w, " stroke=\"#000\" stroke-width=\"0.6\" data-point=\"%d\"><title>", number);
  html_esc(w, tip);
  w_puts(w, "</title></");
  w_puts(w, a <= 5 ? "circle>\n" : a <= 10 ? "rect>\n" : "path>\n");
}

enum {
  LABEL_ALL = 40,
  LABEL_WORST = 12
}; /* up to LABEL_ALL points, each is labelled; beyond,
                                               the LABEL_WORST farthest from equality */

/* Whether point i is among the LABEL_WORST with the largest |error| (ties: the first). */
static bool among_worst(const HtmlPoint *p, int n, int i) {
  int above = 0;
  for (int j = 0; j < n && above < LABEL_WORST; j++)
    if (p[j].fits && j != i &&
        (fabs(p[j].error_pct) > fabs(p[i].error_pct) || (fabs(p[j].error_pct) == fabs(p[i].error_pct) && j < i)))
      above++;
  return above < LABEL_WORST;
}

static void validate_chart(W *w, const HtmlPoint *p, int n) {
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < n; i++)
    if (p[i].fits && p[i].predicted > 0 && p[i].measured > 0)
      lo = fmin(lo, fmin(p[i].predicted, p[i].measured)), hi = fmax(hi, fmax(p[i].predicted, p[i].measured));
  if (!(hi >= lo)) return;
  lo /= 1.25, hi *= 1.25;
  double l0 = log10(lo), l1 = log10(hi);
  Scale s = {lo, hi, VA_M - VA_S / (l1 - l0) * l0, VA_S / (l1 - l0), true};
  html_svg_begin(w, "validate-scatter", VA_S + 2 * VA_M, VA_S + 2 * VA_M, "predicted against measured iteration time");
  band(w, &s, lo, hi, 0.10, "#f5d9a6");
  band(w, &s, lo, hi, 0.05, "#a9cfee");
  html_line(w, VA_M, VA_M + VA_S, VA_M + VA_S, VA_M, "#333", 1, true);
  validate_axes(w, &s, lo, hi);
  for (int i = 0; i < n; i++) {
    if (!p[i].fits || !(p[i].predicted > 0 && p[i].measured > 0)) continue;
    double px = s.a + s.b * log10(p[i].measured), py = 2 * VA_M + VA_S - (s.a + s.b * log10(p[i].predicted));
    char tip[400], num[16];
    snprintf(tip, sizeof tip, "%d %s: error %+.2f %%", i + 1, p[i].scenario, p[i].error_pct);
    validate_mark(w, px, py, p[i].error_pct, i + 1, tip);
    snprintf(num, sizeof num, "%d", i + 1);
    if (n <= LABEL_ALL || among_worst(p, n, i))
      html_text(w, px + 7, py - 5, "start", true, n <= 20 ? p[i].scenario : num);
  }
  html_svg_end(w);
  static const HtmlStyle keys[3] = {{HC_BLUE, false}, {HC_ORANGE, false}, {HC_VERMILLION, false}};
  static const char *const labels[3] = {"within 5 % (circle; blue band)", "within 10 % (square; sand band)",
                                        "beyond 10 % (triangle)"};
  html_legend(w, keys, labels, 3);
}

static void validate_table(W *w, const HtmlPoint *p, int n) {
  char a[48], b[48];
  w_puts(w, "<table data-table=\"validate\"><tr><th class=\"n\">#</th><th>scenario</th>"
            "<th class=\"n\">GPUs</th><th>tp/pp/dp</th><th class=\"n\">predicted</th><th class=\"n\">measured</th>"
            "<th class=\"n\">error</th><th>file</th></tr>\n");
  for (int i = 0; i < n; i++) {
    w_printf(w, "<tr><td class=\"n\">%d</td>", i + 1);
    html_tag(w, "td", p[i].scenario);
    w_printf(w, "<td class=\"n\">%d</td><td>%d/%d/%d</td>", p[i].gpus, p[i].tp, p[i].pp, p[i].dp);
    if (p[i].fits)
      w_printf(w, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%+.2f %%</td>",
               report_time(a, sizeof a, p[i].predicted), report_time(b, sizeof b, p[i].measured), p[i].error_pct);
    else
      w_printf(w, "<td class=\"n\">does not fit</td><td class=\"n\">%s</td><td class=\"n\">-</td>",
               report_time(b, sizeof b, p[i].measured));
    html_tag(w, "td class=\"path\"", p[i].file);
    w_puts(w, "</tr>\n");
  }
  w_puts(w, "</table>\n");
}

void html_validate(Html *h, double mean_abs_error, double max_abs_error) {
  W *w = &h->w;
  int within5 = 0, within10 = 0, rows = 0;
  for (int i = 0; i < h->npts; i++)
    if (h->pts[i].fits) rows++, within5 += fabs(h->pts[i].error_pct) <= 5, within10 += fabs(h->pts[i].error_pct) <= 10;
  char line[256];
  w_puts(w, "<section class=\"validate\">\n");
  html_tag(w, "h2", "Predicted against measured");
  snprintf(line, sizeof line,
           "%d scenarios: mean |error| %.2f %%, max |error| %.2f %%; %d within 5 %%, %d within "
           "10 %%.",
           rows, mean_abs_error, max_abs_error, within5, within10);
  html_tag(w, "p", line);
  html_tag(w, "p class=\"note\"",
           h->npts <= LABEL_ALL ? "Each scenario with `measured { iteration }` is a point at (measured, predicted) "
                                  "on log axes; the dashed line is equality, the bands +-5 % and +-10 % around it. "
                                  "Points are labelled as in the table."
                                : "Each scenario with `measured { iteration }` is a point at (measured, predicted) "
                                  "on log axes; the dashed line is equality, the bands +-5 % and +-10 % around it. "
                                  "The 12 farthest from equality carry their number in the table; every point "
                                  "names itself in its tooltip.");
  validate_chart(w, h->pts, h->npts);
  validate_table(w, h->pts, h->npts);
  w_puts(w, "</section>\n");
}
