/* html.h - the HTML report of `llmp run`, `llmp sweep` and `llmp validate` (--html FILE): one
 * page that opens offline, with every chart drawn in inline SVG and its numbers in a table
 * beneath it (docs/report.md).
 *
 * The page is written as it goes: html_open writes the head, then each scenario, the sweep or
 * the validation rows add their section, and html_close ends the page.  The figures are those
 * of the reports the text and JSON print (Report, the trace's spans, the sweep's rows): the
 * page draws them and computes nothing of the model.
 *
 * Ownership: the writer keeps nothing it is given, except what html_validate_add copies; it
 * does not own out. */
#ifndef LLMP_HTML_H
#define LLMP_HTML_H

#include <stdio.h>

#include "lower/lower.h"
#include "report/report.h"
#include "sweep/sweep_io.h"

typedef struct Html Html;

/* Starts the page on out; `title` is text (escaped). */
Html *html_open(FILE *out, const char *title);
/* Ends the page, flushes and frees h: 0, or -1 with errno set if a write failed. */
int html_close(Html *h);

/* One evaluated scenario: its figures, the iteration's breakdown, the pipeline schedule per
 * stage and stream, memory per stage against capacity, and its kernel calls. */
void html_scenario(Html *h, const Lowered *l, const double *vals, const Report *r);

/* A sweep's result: its ranked rows (sweep_write's), the axes it varies ("plan.tp"), and a
 * sample of the points it evaluated, kept and dropped (NULL: none recorded), drawn with the
 * rows; HTML_SWEEP_SAMPLE of each reason is what a page draws well. */
enum { HTML_SWEEP_SAMPLE = 1000 };
void html_sweep(Html *h, const SweepMeta *m, const SweepRow *rows, int nrows, const char *const *axes, int naxes,
                const SweepSample *sample);

/* Validation: each row is copied as it is added; html_validate writes them all, with the
 * mean and maximum absolute error in percent that `llmp validate` prints. */
void html_validate_add(Html *h, const Report *r);
void html_validate(Html *h, double mean_abs_error, double max_abs_error);

#endif
