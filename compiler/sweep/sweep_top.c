/* sweep_top.c - the ranking of a sweep's rows, and SweepTop, the bounded heap that keeps the
 * best N of them (sweep_io.h). */
#include "sweep_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "sweep_io_internal.h"

/* --- ranking --------------------------------------------------------------------------------- */

int sweep_row_cmp(const SweepRow *a, const SweepRow *b, bool maximize) {
  double x = a->objective, y = b->objective;
  bool xn = isnan(x), yn = isnan(y);
  if (xn != yn) return xn ? 1 : -1; /* NaN after everything */
  if (!xn && x != y) return (x < y) != maximize ? -1 : 1;
  return a->point < b->point ? -1 : a->point > b->point;
}

static int cmp_minimize(const void *a, const void *b) { return sweep_row_cmp(a, b, false); }
static int cmp_maximize(const void *a, const void *b) { return sweep_row_cmp(a, b, true); }

void sweep_sort_rows(SweepRow *rows, size_t n, bool maximize) {
  if (rows && n > 1) qsort(rows, n, sizeof *rows, maximize ? cmp_maximize : cmp_minimize);
}

void sweep_sort(SweepRow *rows, int n, bool maximize) {
  if (n > 1) sweep_sort_rows(rows, (size_t)n, maximize);
}

/* --- SweepTop: a max-heap whose top is the worst row kept ---------------------------------- */

typedef struct TopSlot {
  SweepRow row; /* fields and strings live in buf */
  char *buf;
  size_t cap;
} TopSlot;

struct SweepTop {
  int keep, n, cap;
  bool maximize;
  TopSlot *slot; /* heap order: slot[i] ranks after its children */
};

SweepTop *sweep_top_new(int keep, bool maximize) {
  SweepTop *t = xmalloc(sizeof *t);
  *t = (SweepTop){keep > 0 ? keep : 0, 0, 0, maximize, NULL};
  return t;
}

void sweep_top_free(SweepTop *t) {
  if (!t) return;
  for (int i = 0; i < t->cap; i++) free(t->slot[i].buf);
  free(t->slot);
  free(t);
}

int sweep_top_count(const SweepTop *t) { return t ? t->n : 0; }

/* Copies row into s: the fields array first, then every key and text value. */
static void slot_copy(TopSlot *s, const SweepRow *row) {
  int nf = row->nfields > 0 && row->fields ? row->nfields : 0;
  size_t need = (size_t)nf * sizeof(SweepField);
  for (int i = 0; i < nf; i++) {
    need += strlen(row->fields[i].key ? row->fields[i].key : "") + 1;
    if (row->fields[i].str) need += strlen(row->fields[i].str) + 1;
  }
  if (need == 0) need = 1; /* a row without fields still gets a buffer (no offset on NULL) */
  if (need > s->cap) {
    s->buf = xrealloc(s->buf, need);
    s->cap = need;
  }
  SweepField *f = (SweepField *)(void *)s->buf;
  char *p = s->buf + (size_t)nf * sizeof(SweepField);
  for (int i = 0; i < nf; i++) {
    const SweepField *src = &row->fields[i];
    size_t kl = strlen(src->key ? src->key : "") + 1;
    memcpy(p, src->key ? src->key : "", kl);
    f[i] = (SweepField){p, src->num, NULL, src->flag};
    p += kl;
    if (src->str) {
      size_t sl = strlen(src->str) + 1;
      memcpy(p, src->str, sl);
      f[i].str = p;
      p += sl;
    }
  }
  s->row = (SweepRow){row->point, row->objective, nf, nf ? f : NULL};
}

static bool top_worse(const SweepTop *t, int i, int j) {
  return sweep_row_cmp(&t->slot[i].row, &t->slot[j].row, t->maximize) > 0;
}

static void top_swap(SweepTop *t, int i, int j) {
  TopSlot s = t->slot[i];
  t->slot[i] = t->slot[j];
  t->slot[j] = s;
}

static void top_sift_up(SweepTop *t, int i) {
  while (i > 0 && top_worse(t, i, (i - 1) / 2)) {
    top_swap(t, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static void top_sift_down(SweepTop *t, int i) {
  for (;;) {
    int w = i, l = 2 * i + 1, r = l + 1;
    if (l < t->n && top_worse(t, l, w)) w = l;
    if (r < t->n && top_worse(t, r, w)) w = r;
    if (w == i) return;
    top_swap(t, i, w);
    i = w;
  }
}

bool sweep_top_wants(const SweepTop *t, double objective, uint64_t point) {
  if (!t || !t->keep) return false;
  if (t->n < t->keep) return true;
  SweepRow r = {point, objective, 0, NULL};
  return sweep_row_cmp(&r, &t->slot[0].row, t->maximize) < 0;
}

bool sweep_top_push(SweepTop *t, const SweepRow *row) {
  if (!t || !row || !sweep_top_wants(t, row->objective, row->point)) return false;
  if (t->n < t->keep) {
    if (t->n == t->cap) { /* grow by doubling up to keep; new slots own no buffer yet */
      int cap = t->cap ? (t->cap > t->keep / 2 ? t->keep : 2 * t->cap) : (t->keep < 16 ? t->keep : 16);
      t->slot = xrealloc(t->slot, (size_t)cap * sizeof *t->slot);
      memset(t->slot + t->cap, 0, (size_t)(cap - t->cap) * sizeof *t->slot);
      t->cap = cap;
    }
    slot_copy(&t->slot[t->n], row);
    top_sift_up(t, t->n++);
  } else {
    slot_copy(&t->slot[0], row); /* replaces the worst */
    top_sift_down(t, 0);
  }
  return true;
}

void sweep_top_merge(SweepTop *into, const SweepTop *from) {
  if (!into || !from || into == from) return;
  for (int i = 0; i < from->n; i++) sweep_top_push(into, &from->slot[i].row);
}

int sweep_top_rows(const SweepTop *t, SweepRow *out) {
  if (!t || !out) return 0;
  for (int i = 0; i < t->n; i++) out[i] = t->slot[i].row;
  sweep_sort(out, t->n, t->maximize);
  return t->n;
}
