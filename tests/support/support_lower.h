/* support_lower.h - what the lowering tests (tests/unit/test_lower.c, test_lower_ops.c) share:
 * a scenario file given as text, checked, lowered and evaluated into a Report, its
 * diagnostics captured in the short format.  Include after support.h. */
#ifndef LLMP_TEST_SUPPORT_LOWER_H
#define LLMP_TEST_SUPPORT_LOWER_H

#include "front/diag.h"
#include "front/sema.h"
#include "lower/graph.h"
#include "lower/hw.h"
#include "lower/lower.h"
#include "report/report.h"

typedef struct Fx {
  Diag d;
  Cap cap;        /* diagnostics, short format */
  SemaOptions so; /* sema and the HwSet keep pointers to it: Fx does not move */
  Sema *s;
  HwSet *hw;
  char *text;
  Lowered l;
  double *vals;
  Report r;
  int rc; /* lower_scenario's result */
} Fx;

static inline const char *diag_text(Fx *x) { return cap_text(&x->cap); }

/* Checks text (the stdlib and hw from the source tree); it must have no error. */
static inline Fx *fx_open(const char *text) {
  Fx *x = calloc(1, sizeof *x);
  assert_non_null(x);
  x->text = strdup(text);
  assert_non_null(x->text);
  diag_init(&x->d, NULL);
  diag_set_writer(&x->d, cap_write, &x->cap);
  x->d.format = DIAG_SHORT;
  x->d.buffered = true;
  x->so = (SemaOptions){NULL, 0, LLMP_SOURCE_DIR};
  x->s = sema_new(&x->d, &x->so);
  assert_non_null(x->s);
  int errors = sema_run_text(x->s, "test.llmp", x->text);
  diag_flush(&x->d);
  if (errors) fail_msg("the scenario text has %d error(s):\n%s--- text:\n%s", errors, diag_text(x), x->text);
  x->hw = hw_new(x->s, &x->d, &x->so);
  assert_non_null(x->hw);
  return x;
}

static inline void fx_unlower(Fx *x) {
  free(x->vals);
  x->vals = NULL;
  lower_free(&x->l);
}

/* Lowers scenario `name`; when that succeeds, evaluates the graph and fills x->r. */
static inline int fx_lower(Fx *x, const char *name) {
  fx_unlower(x);
  Decl *sc = sema_find(x->s, name, DK_SCENARIO);
  if (!sc) fail_msg("no scenario `%s` in:\n%s", name, x->text);
  x->rc = lower_scenario(x->s, x->hw, sc, &x->d, &x->l);
  diag_flush(&x->d);
  if (x->rc == 0) {
    x->vals = malloc((size_t)(x->l.g.nn ? x->l.g.nn : 1) * sizeof *x->vals);
    assert_non_null(x->vals);
    graph_eval(&x->l.g, NULL, x->vals);
    lower_report(&x->l, x->vals, &x->r);
  }
  return x->rc;
}

/* Lowers and evaluates; lowering must succeed. */
static inline void fx_eval(Fx *x, const char *name) {
  if (fx_lower(x, name) != 0) fail_msg("lowering `%s` failed:\n%s--- text:\n%s", name, diag_text(x), x->text);
}

static inline void fx_close(Fx *x) {
  fx_unlower(x);
  hw_free(x->hw);
  sema_free(x->s);
  diag_free(&x->d);
  free(x->cap.p);
  free(x->text);
  free(x);
}

#endif
