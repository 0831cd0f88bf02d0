/* sweep_merge.c - `llmp merge`: the shards' JSON Lines files read back, checked to be the
 * shards 0 .. N-1 of one sweep, and written as one machine would have written the sweep. */
#include "sweep_io.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "sweep_io_internal.h"

/* --- llmp merge -------------------------------------------------------------------------------- */

typedef struct Merge {
  const char *const *paths;
  SweepDoc *docs;
  int ndocs;
  int *order;                   /* the docs by shard */
  SweepMeta meta;
  SweepDrop *drops;
  SweepRow *rows;
  int nrows;
} Merge;

static void merge_free(Merge *m) {
  for (int i = 0; m->docs && i < m->ndocs; i++) sweep_doc_free(&m->docs[i]);
  free(m->docs);
  free(m->order);
  free(m->drops);
  free(m->rows);
}

/* Doc i against doc 0: the same sweep, split the same way, with the same fields. */
static int merge_same(const Merge *m, int i, FILE *err) {
  const SweepDoc *a = &m->docs[0], *b = &m->docs[i];
  const SweepMeta *x = &a->meta, *y = &b->meta;
  const char *p = m->paths[i], *p0 = m->paths[0];
  char what[320] = "";
  if (strcmp(x->sweep, y->sweep)) snprintf(what, sizeof what, "sweep `%.80s`, but %s is of sweep `%.80s`", y->sweep, p0, x->sweep);
  else if (strcmp(x->objective, y->objective))
    snprintf(what, sizeof what, "objective `%.80s`, but %s's is `%.80s`", y->objective, p0, x->objective);
  else if (x->maximize != y->maximize)
    snprintf(what, sizeof what, "sense %s, but %s's is %s", sweep_sense(y), p0, sweep_sense(x));
  else if (x->keep != y->keep) snprintf(what, sizeof what, "keep %d, but %s's is %d", y->keep, p0, x->keep);
  else if (x->points != y->points)
    snprintf(what, sizeof what, "%" PRIu64 " points, but %s has %" PRIu64, y->points, p0, x->points);
  else if (x->shard_n != y->shard_n)
    snprintf(what, sizeof what, "shard %d/%d, but %s is shard %d/%d", y->shard_k, y->shard_n, p0, x->shard_k, x->shard_n);
  if (what[0]) {
    fprintf(err, "%s:%d: error: %s: not shards of one sweep\n", p, b->meta_line, what);
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
  if (from == to) snprintf(buf + len, n - len, "%s%d", sep, from);
  else snprintf(buf + len, n - len, "%s%d-%d", sep, from, to);
}

/* Each shard 0 .. N-1 once: order holds the docs sorted by shard. */
static int merge_cover(Merge *m, FILE *err) {
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
static void merge_drops(Merge *m) {
  int cap = 0, nd = 0;
  for (int i = 0; i < m->ndocs; i++) cap += m->docs[i].meta.ndropped;
  m->drops = xmalloc((size_t)(cap ? cap : 1) * sizeof *m->drops);
  for (int i = 0; i < m->ndocs; i++) {
    const SweepMeta *s = &m->docs[m->order[i]].meta;
    for (int r = 0; r < s->ndropped; r++) {
      int at = 0;             /* a few reasons: a linear search */
      while (at < nd && strcmp(m->drops[at].reason, s->dropped[r].reason)) at++;
      if (at == nd) m->drops[nd++] = (SweepDrop){s->dropped[r].reason, 0};
      m->drops[at].count += s->dropped[r].count;
    }
  }
  m->meta.dropped = m->drops;
  m->meta.ndropped = nd;
}

/* The merged metadata, counts and rows: what one machine would have written. */
static void merge_combine(Merge *m) {
  const SweepDoc *first = &m->docs[m->order[0]];
  size_t total = 0;
  m->meta = first->meta;
  m->meta.shard_k = 0;
  m->meta.shard_n = 1;
  m->meta.evaluated = m->meta.kept = 0;
  m->meta.elapsed = NAN;
  for (int i = 0; i < m->ndocs; i++) {
    m->meta.evaluated += m->docs[i].meta.evaluated;   /* the slices tile the points: no overflow */
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
}

/* Reads and checks every file; returns 0, or -1 after reporting every problem found. */
static int merge_load(Merge *m, const char *const *paths, int npaths, FILE *err) {
  memset(m, 0, sizeof *m);
  m->paths = paths;
  m->ndocs = npaths;
  m->docs = xmalloc((size_t)(npaths ? npaths : 1) * sizeof *m->docs);
  memset(m->docs, 0, (size_t)(npaths ? npaths : 1) * sizeof *m->docs);
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
  merge_combine(m);
  return 0;
}

int sweep_merge(const char *const *paths, int npaths, SweepFormat fmt, FILE *out, FILE *err) {
  Merge m;
  err = err ? err : stderr;
  int rc = merge_load(&m, paths, npaths, err) ? 1 : 0;
  if (!rc && sweep_write(out, fmt, &m.meta, m.rows, m.nrows)) {
    fprintf(err, "llmp merge: error: cannot write the output\n");
    rc = 1;
  }
  merge_free(&m);
  return rc;
}

static const char usage_merge[] =
    "usage: llmp merge [OPTIONS] SHARD.jsonl...\n"
    "\n"
    "Combines the outputs of the shards of one sweep (`llmp sweep --shard K/N --out\n"
    "FILE.jsonl`, JSON Lines) into what the sweep run on one machine writes: the counts\n"
    "summed, the points ranked again, the best `keep` kept. Every shard 0 .. N-1 must be\n"
    "given, once. Exit status 0; 1 when a file is malformed, a shard is missing or given\n"
    "twice, or the files are not of one sweep; 2 for a bad command line.\n"
    "\n"
    "options:\n"
    "  --format FORMAT  table (default), csv or json (JSON Lines, as the shards)\n"
    "  --out FILE       write to FILE instead of standard output; without --format, the\n"
    "                   format follows its extension (.csv; .jsonl or .json; else table)\n"
    "  -h, --help       this text\n";

static int merge_usage_error(const char *fmt, const char *arg) {
  fputs("llmp merge: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nTry `llmp merge --help`.\n", stderr);
  return 2;
}

typedef struct MergeArgs {
  const char **files;
  int nfiles;
  const char *format, *out;
} MergeArgs;

/* Returns -1 to go on, else an exit status. */
static int merge_args(int argc, char **argv, MergeArgs *a) {
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i], **opt = NULL;
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      fputs(usage_merge, stdout);
      return 0;
    }
    if (!strcmp(s, "--format") || !strncmp(s, "--format=", 9)) opt = &a->format;
    else if (!strcmp(s, "--out") || !strcmp(s, "-o") || !strncmp(s, "--out=", 6)) opt = &a->out;
    if (opt) {
      const char *eq = strchr(s, '=');
      if (!eq && i + 1 == argc) return merge_usage_error("%s needs a value", s);
      *opt = eq ? eq + 1 : argv[++i];
    } else if (!strcmp(s, "--")) {
      while (++i < argc) a->files[a->nfiles++] = argv[i];
    } else if (s[0] == '-' && s[1]) return merge_usage_error("unknown option `%s`", s);
    else a->files[a->nfiles++] = s;
  }
  if (!a->nfiles) return merge_usage_error("%s", "no input files");
  return -1;
}

static int merge_run(const MergeArgs *a) {
  SweepFormat fmt = a->out ? sweep_format_of_path(a->out, SWEEP_TABLE) : SWEEP_TABLE;
  if (a->format && sweep_format_parse(a->format, &fmt))
    return merge_usage_error("unknown format `%s` (table, csv or json)", a->format);
  Merge m;
  int rc = 1;
  if (!merge_load(&m, a->files, a->nfiles, stderr)) {
    FILE *out = a->out ? fopen(a->out, "w") : stdout;
    if (!out) fprintf(stderr, "%s: error: cannot write: %s\n", a->out, strerror(errno));
    else {
      rc = sweep_write(out, fmt, &m.meta, m.rows, m.nrows) ? 1 : 0;
      if (out != stdout && fclose(out)) rc = 1;
      if (rc) fprintf(stderr, "%s: error: cannot write the output\n", a->out ? a->out : "llmp merge");
    }
  }
  merge_free(&m);
  return rc;
}

int merge_main(int argc, char **argv) {
  MergeArgs a = {NULL, 0, NULL, NULL};
  a.files = xmalloc((size_t)(argc > 0 ? argc : 1) * sizeof *a.files);
  int rc = merge_args(argc, argv, &a);
  if (rc < 0) rc = merge_run(&a);
  free(a.files);
  return rc;
}
