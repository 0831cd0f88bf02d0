/* html_private.h - what html.c (the page, its drawing primitives, a scenario) and
 * html_sweep.c (a sweep, validation) share.
 *
 * Colours are the Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2002), which
 * readers with any common colour-vision deficiency tell apart; a fill may also be hatched, so
 * that neighbours differ in print on a grey-scale printer, and every chart has a legend with
 * its labels and a table of its numbers beneath it. */
#ifndef LLMP_HTML_PRIVATE_H
#define LLMP_HTML_PRIVATE_H

#include <stdbool.h>

#include "html.h"
#include "jsonw.h"

typedef struct HtmlPoint { /* a validation row, copied */
  char *scenario, *file;
  int gpus, tp, pp, dp;
  bool fits;
  double predicted, measured, error_pct; /* seconds, seconds, percent */
} HtmlPoint;

struct Html {
  W w;
  HtmlPoint *pts; /* html_validate_add's */
  int npts, cappts;
};

/* Okabe-Ito: orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple, black. */
enum { HC_ORANGE, HC_SKY, HC_GREEN, HC_YELLOW, HC_BLUE, HC_VERMILLION, HC_PURPLE, HC_BLACK, HC_N };

typedef struct HtmlStyle {
  int colour; /* HC_* */
  bool hatch; /* diagonal white stripes over the colour */
} HtmlStyle;

/* Text with &, <, >, " and ' escaped, each byte that is not UTF-8 (and each control
 * character but tab and line feed) as U+FFFD: safe in an element and in a quoted attribute. */
void html_esc(W *w, const char *s);
/* <TAG>text</TAG>, the text escaped; tag may carry attributes ("td class=n"). */
void html_tag(W *w, const char *tag, const char *text);

/* An SVG chart in a <figure>: kind names it for tests (data-chart), title is its accessible
 * name.  html_svg_end closes both. */
void html_svg_begin(W *w, const char *kind, int width, int height, const char *title);
void html_svg_end(W *w);
/* A rectangle with a style (NULL: the light grey of a chart's ground), an opacity (1: opaque) and a tooltip (NULL: none). */
void html_rect(W *w, double x, double y, double width, double height, const HtmlStyle *s, double opacity,
               const char *tip);
/* Text at (x, y); anchor "start", "middle" or "end"; outlined (readable over any fill). */
void html_text(W *w, double x, double y, const char *anchor, bool outlined, const char *s);
void html_line(W *w, double x1, double y1, double x2, double y2, const char *colour, double width, bool dashed);
/* The fill attribute of a style. */
void html_fill(W *w, const HtmlStyle *s);
/* A legend: a swatch and a label per entry. */
void html_legend(W *w, const HtmlStyle *styles, const char *const *labels, int n);

/* Axis ticks: the step of 1, 2 or 5 times a power of ten nearest (hi - lo) / n. */
double html_tick_step(double lo, double hi, int n);

#endif
