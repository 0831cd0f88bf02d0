/* sweep_merge.c - what `llmp merge` does (its command line is cli/merge_cmd.c): the shards'
 * JSON Lines files read back, checked to be the shards 0 .. N-1 of one sweep, and combined
 * into what one machine would have written. */
#include "sweep_io.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strbuf.h"
#include "sweep_io_internal.h"

void sweep_merge_free(SweepMerge *m) {
  for (int i = 0; m->docs && i < m->ndocs; i++) sweep_doc_free(&m->docs[i]);
  free(m->docs);
  free(m->order);
  free(m->drops);
  free(m->rows);
  free(m->best);
  free(m->best_of);
}

/* Each structure's best point: the best of the shards' (the shards cut a structure's points
 * into slices, each with its own best). */
static void merge_best(SweepMerge *m) {
  int cap = 0, n = 0;
  for (int i = 0; i < m->ndocs; i++) cap += m->docs[i].nbest;
  m->best = xmalloc((size_t)(cap ? cap : 1) * sizeof *m->best);
  m->best_of = xmalloc((size_t)(cap ? cap : 1) * sizeof *m->best_of);
  m->meta.best_axes = NULL;
  for (int i = 0; i < m->ndocs; i++) {
    const SweepDoc *d = &m->docs[m->order[i]];
    if (d->nbest && !m->meta.best_axes) m->meta.best_axes = d->meta.best_axes;
    for (int b = 0; b < d->nbest; b++) {
      int at = 0;
      while (at < n && m->best_of[at] < d->best_of[b]) at++;
      if (at < n && m->best_of[at] == d->best_of[b]) {
        if (sweep_row_cmp(&d->best[b], &m->best[at], m->meta.maximize) < 0) m->best[at] = d->best[b];
        continue;
      }
      memmove(&m->best[at + 1], &m->best[at], (size_t)(n - at) * sizeof *m->best);
      memmove(&m->best_of[at + 1], &m->best_of[at], (size_t)(n - at) * sizeof *m->best_of);
      m->best[at] = d->best[b], m->best_of[at] = d->best_of[b];
      n++;
    }
  }
  m->meta.nbest = n, m->meta.best = m->best, m->meta.best_of = m->best_of;
}

/* Doc i against doc 0: the same sweep, split the same way, with the same fields. */
static int merge_same(const SweepMerge *m, int i, FILE *err) {
  const SweepDoc *a = &m->docs[0], *b = &m->docs[i];
  const SweepMeta *x = &a->meta, *y = &b->meta;
  const char *p = m->paths[i], *p0 = m->paths[0];
  StrBuf what = {0};
  if (strcmp(x->sweep, y->sweep))
    strbuf_printf(&what, "sweep `%.80s`, but %s is of sweep `%.80s`", y->sweep, p0, x->sweep);
  else if (strcmp(x->objective, y->objective))
    strbuf_printf(&what, "objective `%.80s`, but %s's is `%.80s`", y->objective, p0, x->objective);
  else if (x->maximize != y->maximize)
    strbuf_printf(&what, "sense %s, but %s's is %s", sweep_sense(y), p0, sweep_sense(x));
  else if (x->keep != y->keep)
    strbuf_printf(&what, "keep %d, but %s's is %d", y->keep, p0, x->keep);
  else if (x->points != y->points)
    strbuf_printf(&what, "%" PRIu64 " points, but %s has %" PRIu64, y->points, p0, x->points);
  else if (x->shard_n != y->shard_n)
    strbuf_printf(&what, "shard %d/%d, but %s is shard %d/%d", y->shard_k, y->shard_n, p0, x->shard_k, x->shard_n);
  else if (!x->hash != !y->hash)
    strbuf_printf(&what, "%s, but %s %s", y->hash ? "hash" : "no hash (llmp_sweep 1, an older llmp)", p0,
                  x->hash ? "has a hash" : "has none (llmp_sweep 1, an older llmp)");
  else if (x->hash && strcmp(x->hash, y->hash))
    strbuf_printf(&what, "hash %s, but %s's is %s (another file, import, calibration table, llmp version, or --keep-unfit or --keep-equivalent)", y->hash,
                  p0, x->hash);
  if (what.p) {
    fprintf(err, "%s:%d: error: %s: not shards of one sweep\n", p, b->meta_line, what.p);
    strbuf_free(&what);
    return -1;
  }
  if (!a->nrows || !b->nrows) return 0;
  const SweepRow *r = &a->rows[0], *s = &b->rows[0];
  for (int f = 0; f < r->nfields || f < s->nfields; f++) {
    const char *k = f < r->nfields ? r->fields[f].key : "(none)", *l = f < s->nfields ? s->fields[f].key : "(none)";
    if (strcmp(k, l)) {
      fprintf(err, "%s:%d: error: field `%.80s` where the rows of %s have `%.80s`: not shards of one sweep\n", p,
              b->row_line, l, p0, k);
      return -1;
    }
  }
  return 0;
}

/* A doc's shard, for sorting the docs by shard (and by position among duplicates). */
typedef struct ShardAt {
  int k, doc;
} ShardAt;

static int cmp_shard_at(const void *a, const void *b) {
  const ShardAt *x = a, *y = b;
  return x->k != y->k ? (x->k < y->k ? -1 : 1) : (x->doc < y->doc ? -1 : x->doc > y->doc);
}

/* Appends ", K" or ", K-L" to a list of missing shards (at most 8 ranges, then "..."). */
static void missing_range(char *buf, size_t n, int *nranges, int from, int to) {
  size_t len = strlen(buf);
  if (++*nranges > 8) {
    if (*nranges == 9) snprintf(buf + len, n - len, ", ...");
    return;
  }
  const char *sep = len ? ", " : "";
  if (from == to)
    snprintf(buf + len, n - len, "%s%d", sep, from);
  else
    snprintf(buf + len, n - len, "%s%d-%d", sep, from, to);
}

/* Each shard 0 .. N-1 once: order holds the docs sorted by shard. */
static int merge_cover(SweepMerge *m, FILE *err) {
  int n = m->docs[0].meta.shard_n, bad = 0, nranges = 0, next = 0;
  char missing[256] = "";
  ShardAt *at = xmalloc((size_t)m->ndocs * sizeof *at);
  for (int i = 0; i < m->ndocs; i++) at[i] = (ShardAt){m->docs[i].meta.shard_k, i};
  qsort(at, (size_t)m->ndocs, sizeof *at, cmp_shard_at);
  m->order = xmalloc((size_t)m->ndocs * sizeof *m->order);
  for (int i = 0; i < m->ndocs; i++) m->order[i] = at[i].doc;
  free(at);
  for (int i = 0; i < m->ndocs; i++) {
    const SweepDoc *d = &m->docs[m->order[i]];
    int k = d->meta.shard_k;
    if (i && k == m->docs[m->order[i - 1]].meta.shard_k) {
      fprintf(err, "%s:%d: error: shard %d/%d again: %s is shard %d/%d too\n", m->paths[m->order[i]], d->meta_line, k,
              n, m->paths[m->order[i - 1]], k, n);
      bad = 1;
      continue;
    }
    if (k > next) missing_range(missing, sizeof missing, &nranges, next, k - 1);
    next = k + 1;
  }
  if (next < n) missing_range(missing, sizeof missing, &nranges, next, n - 1);
  if (nranges) {
    fprintf(err, "llmp merge: error: shard%s %s of %d missing\n", nranges > 1 || strchr(missing, '-') ? "s" : "",
            missing, n);
    bad = 1;
  }
  return bad ? -1 : 0;
}

/* The dropped reasons of every shard, in shard order, summed. */
static void merge_drops(SweepMerge *m) {
  int cap = 0, nd = 0;
  for (int i = 0; i < m->ndocs; i++) cap += m->docs[i].meta.ndropped;
  m->drops = xmalloc((size_t)(cap ? cap : 1) * sizeof *m->drops);
  for (int i = 0; i < m->ndocs; i++) {
    const SweepMeta *s = &m->docs[m->order[i]].meta;
    for (int r = 0; r < s->ndropped; r++) {
      int at = 0; /* a few reasons: a linear search */
      while (at < nd && strcmp(m->drops[at].reason, s->dropped[r].reason)) at++;
      if (at == nd) m->drops[nd++] = (SweepDrop){s->dropped[r].reason, 0};
      m->drops[at].count += s->dropped[r].count;
    }
  }
  m->meta.dropped = m->drops;
  m->meta.ndropped = nd;
}

/* The merged metadata, counts and rows: what one machine would have written. */
static void merge_combine(SweepMerge *m) {
  const SweepDoc *first = &m->docs[m->order[0]];
  size_t total = 0;
  m->meta = first->meta;
  m->meta.shard_k = 0;
  m->meta.shard_n = 1;
  m->meta.evaluated = m->meta.kept = 0;
  m->meta.elapsed = NAN;
  for (int i = 0; i < m->ndocs; i++) {
    m->meta.evaluated += m->docs[i].meta.evaluated; /* the slices tile the points: no overflow */
    m->meta.kept += m->docs[i].meta.kept;
    total += (size_t)m->docs[i].nrows;
  }
  merge_drops(m);
  m->rows = xmalloc((total ? total : 1) * sizeof *m->rows);
  size_t n = 0;
  for (int i = 0; i < m->ndocs; i++)
    for (int r = 0; r < m->docs[i].nrows; r++) m->rows[n++] = m->docs[i].rows[r];
  sweep_sort_rows(m->rows, n, m->meta.maximize);
  m->nrows = n < (size_t)m->meta.keep ? (int)n : m->meta.keep;
  merge_best(m);
}

int sweep_merge_load(SweepMerge *m, const char *const *paths, int npaths, FILE *err) {
  memset(m, 0, sizeof *m);
  m->paths = paths;
  m->ndocs = npaths;
  m->docs = xcalloc((size_t)(npaths ? npaths : 1), sizeof *m->docs);
  int bad = 0;
  for (int i = 0; i < npaths; i++) {
    FILE *f = fopen(paths[i], "r");
    if (!f) {
      fprintf(err, "%s: error: cannot read: %s\n", paths[i], strerror(errno));
      bad = 1;
      continue;
    }
    bad |= sweep_read(f, paths[i], &m->docs[i], err) != 0;
    fclose(f);
  }
  if (!npaths) fprintf(err, "llmp merge: error: no files to merge\n");
  if (bad || !npaths) return -1;
  for (int i = 1; i < npaths; i++) bad |= merge_same(m, i, err) != 0;
  if (bad || merge_cover(m, err)) return -1;
  if (!m->docs[0].meta.hash)
    fprintf(err, "llmp merge: warning: the shards are of version 1 (an older llmp), with no hash of their sweep: "
                 "merged on their sweep's name, objective, keep, points and N alone\n");
  merge_combine(m);
  return 0;
}

int sweep_merge(const char *const *paths, int npaths, SweepFormat fmt, FILE *out, FILE *err) {
  SweepMerge m;
  err = err ? err : stderr;
  int rc = sweep_merge_load(&m, paths, npaths, err);
  if (!rc && sweep_write(out, fmt, &m.meta, m.rows, m.nrows)) {
    fprintf(err, "llmp merge: error: cannot write the output\n");
    rc = -1;
  }
  sweep_merge_free(&m);
  return rc;
}
