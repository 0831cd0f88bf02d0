/* sweep_io.h - what `llmp sweep` reads and writes: ranked rows and their writers (a table,
 * CSV, JSON Lines), the bounded heap that keeps the best N points, the shards of a sweep's
 * point range and the launchers that name them, `llmp merge`, and the progress bar: one file
 * each (sweep_top.c, sweep_write.c, sweep_read.c, sweep_merge.c, sweep_shard.c,
 * sweep_progress.c).
 *
 * A sweep evaluates the points 0 .. P-1 of the product of its `vary` axes.  A point that fails
 * a `require` is dropped and counted under that require's text; the others are ranked by the
 * objective, ascending for `minimize` and descending for `maximize`, ties by point index, and a
 * point whose objective is NaN ranks after every other.  That order is total (the point index
 * is unique), so the best N are the same whatever order the points are pushed in, and the best
 * N of the union of shards are the best N of the whole sweep.
 *
 * Sharding: shard K of N evaluates the contiguous slice [floor(K*P/N), floor((K+1)*P/N)) and
 * writes JSON Lines; `llmp merge` reads the N files, checks they are the N shards of one
 * sweep (one name and split, and one hash of what it evaluates: sweep.h), sums the counts, re-ranks the rows and writes what one machine would have written,
 * byte for byte (the table differs only in leaving out the elapsed time and rate, which a
 * merge does not know).
 *
 * The meaning of the counts, which `llmp merge` checks:
 *   evaluated = the points of the shard's slice (all P when unsharded),
 *   kept      = the points that met every require (candidates for ranking),
 *   evaluated = kept + the sum of the dropped counts,
 *   the rows  = the best min(kept, keep) of the kept points, ranked.
 * The dropped reasons should be every require of the sweep, in declaration order, with zero
 * counts included: a merge lists them in the order the shards do (shard 0's first), so the
 * same list in every shard gives the unsharded order.
 *
 * Ownership: the writers and SweepTop read what they are given and keep nothing of it
 * (SweepTop deep-copies the rows it keeps).  A SweepDoc owns everything it points to, in its
 * arena, until sweep_doc_free.  None of this is thread-safe: each evaluating thread has its
 * own SweepTop, and the threads' heaps are merged at the end (sweep_top_merge). */
#ifndef LLMP_SWEEP_IO_H
#define LLMP_SWEEP_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "front/arena.h"
#include "strbuf.h"

/* --- rows and the sweep's metadata --------------------------------------------------------- */

typedef struct SweepField {
  const char *key; /* "plan.tp", "iteration_s", "memory.peak", "mfu" */
  double num;      /* the value when str is NULL; NaN: none (null, empty) */
  const char *str; /* a text value ("full"), or NULL for a number */
  bool flag;       /* num is a flag, 0 or 1: JSON's and CSV's false and true */
} SweepField;

typedef struct SweepRow {
  uint64_t point;   /* index in the product of the vary axes, from 0 */
  double objective; /* the value ranked by */
  int nfields;
  SweepField *fields; /* the axis values first, then report figures; every row of
                                   one output has the same keys in the same order */
} SweepRow;

typedef struct SweepDrop {
  const char *reason; /* the require's text: "memory.peak <= cluster.gpu.memory" */
  uint64_t count;
} SweepDrop;

typedef struct SweepMeta {
  const char *sweep;        /* the sweep's name */
  const char *file;         /* the file that declares it */
  const char *hash;         /* what it evaluates: 16 hex digits of its files, tables and
                               llmp's version (sweep.c); NULL for a version 1 output */
  const char *objective;    /* the objective's text: "iteration" */
  bool maximize;            /* false: minimize */
  int keep;                 /* how many rows to keep, >= 0 */
  uint64_t points;          /* P: the points of the whole sweep */
  int shard_k, shard_n;     /* this output is shard K of N (0 and 1 when unsharded) */
  uint64_t evaluated, kept; /* see the top of this file */
  int ndropped;
  const SweepDrop *dropped;
  double elapsed; /* seconds of evaluation, NaN when unknown (a merge); only
                                   the table shows it, and no comparison uses it */
  /* A sweep over fields that change the graph (sweep.h's sweep_best): the best point of each
   * structure in this slice, by structure (best_of, ascending), and the fields that make a
   * structure ("cluster.nodes, plan.dtype").  nbest 0 otherwise. */
  int nbest;
  const SweepRow *best;
  const uint64_t *best_of;
  const char *best_axes;
} SweepMeta;

/* --- a sample of the evaluated points, for pictures (--html) ----------------------------------- */

/* What became of a sampled point: it met every require (ranked; kept or not), or why it was
 * dropped: a `require` failed, its plan does not fit in memory (the sweep's own rule or a
 * require on memory.peak), or it is equivalent to another plan.  Points whose plan does not
 * divide fail a check before any kernel runs and have no figures: they are never sampled. */
typedef enum { SWEEP_DOT_RANKED, SWEEP_DOT_REQUIRE, SWEEP_DOT_FIT, SWEEP_DOT_EQUIVALENT } SweepDotKind;

typedef struct SweepDot {
  uint64_t point;
  int reason;        /* an index of SweepMeta.dropped, or -1: ranked */
  SweepDotKind kind;
  double iteration;  /* seconds; NaN: none */
  double peak;       /* memory.peak, bytes; NaN: none */
  bool fits;         /* peak within the GPU's memory */
} SweepDot;

/* Of each reason, and of the ranked points, the per_class points with the smallest sample
 * key (a fixed mix of the point index; all of them where there are fewer): a uniform sample
 * of each, the same whatever the threads or the chunks.  Dots by reason (the ranked last),
 * each reason's by point. */
typedef struct SweepSample {
  int per_class;
  int n;
  const SweepDot *dot;
} SweepSample;

/* The ranking: < 0 when a ranks before b, > 0 after, 0 only for the same point index. */
int sweep_row_cmp(const SweepRow *a, const SweepRow *b, bool maximize);
/* Sorts rows into rank order. */
void sweep_sort(SweepRow *rows, int n, bool maximize);

/* --- keeping the best N ------------------------------------------------------------------- */

/* A bounded heap of the best `keep` rows pushed: push is O(log keep) when the row is kept and
 * O(1) when it is not (compare with the worst kept); memory is O(keep rows).  Rows are deep
 * copied (keys, text values and all), so the pusher may reuse its row at once. */
typedef struct SweepTop SweepTop;

SweepTop *sweep_top_new(int keep, bool maximize);
void sweep_top_free(SweepTop *t);
/* Whether a row with this objective and point would be kept now: lets a caller skip
 * building the fields of a point that cannot make the list. */
bool sweep_top_wants(const SweepTop *t, double objective, uint64_t point);
/* Returns whether the row was kept (it may be pushed out later). */
bool sweep_top_push(SweepTop *t, const SweepRow *row);
/* Pushes every row of `from` into `into` (from is unchanged). */
void sweep_top_merge(SweepTop *into, const SweepTop *from);
int sweep_top_count(const SweepTop *t);
/* Writes the kept rows, ranked, into out (room for sweep_top_count rows); they point into
 * t's storage and stay valid until the next push into t or sweep_top_free.  Returns the
 * count. */
int sweep_top_rows(const SweepTop *t, SweepRow *out);

/* --- writing -------------------------------------------------------------------------------- */

/* ORDER SweepFormat: the names of sweep_format_parse */
typedef enum { SWEEP_TABLE, SWEEP_CSV, SWEEP_JSONL, SWEEP_JSON, SWEEP_TABLE_WIDE } SweepFormat;

/* "table", "csv", "jsonl", "json" or "wide"; returns 0, or -1 for another name. */
int sweep_format_parse(const char *name, SweepFormat *f);
/* The format a file name asks for: .csv CSV, .jsonl JSON Lines, .json JSON, .txt the table;
 * a name without an extension leaves *f.  Returns 0, or -1 for another extension. */
int sweep_format_of_path(const char *path, SweepFormat *f);

/* Writes the metadata and the rows (already ranked: sweep_sort or sweep_top_rows; the rank
 * written is the position, from 1).  Returns 0, or -1 if writing failed.
 *
 * table: for people, in 100 columns where it can.  A title line, a line of counts, a line per
 *   reason points were dropped for (those with a count), one of elapsed time and rate where
 *   m->elapsed is known, one of the plan's fields that are the same in every row; a blank
 *   line; then the rows aligned under short names (plan.micro_batch "mb"), rank first: the
 *   plan's fields that differ between rows, then the figures, most asked for first
 *   (iteration, tokens/s, MFU, memory), as many as fit in 100 columns.  Times with units.
 * wide: every field under its key, and the dropped points on one line.  Cells: text as is; no value "-"; keys
 *   that start with "memory." or hold "bytes": GiB with one decimal ("19.2 GiB"); the key
 *   "mfu" (or ending ".mfu", "_mfu"): percent with one decimal ("41.2 %"); other numbers:
 *   integers as integers, others with 4 significant digits ("15.88", "0.5501"), whole from
 *   10000 on; flags "true" or "false".  Numbers are right-aligned, text and flags left-aligned.
 * csv: `# key: value` comment lines of metadata (no elapsed time), a header line
 *   `rank,point,objective,KEY...` and a line per row; numbers the shortest text that reads
 *   back as the same double, empty for NaN, inf/-inf; flags true or false; RFC 4180 quoting
 *   where needed.
 * jsonl: a line of metadata,
 *   {"llmp_sweep":2,"sweep":S,"file":F,"hash":H,"objective":O,"sense":"minimize","keep":N,
 *    "points":P,"shard":[K,N],"evaluated":E,"kept":K,"dropped":{"REASON":COUNT,...}}
 *   (version 1, written by older llmps, is the same without "hash": it is written so when
 *   m->hash is NULL, and CSV's `# llmp_sweep:` follows),
 *   then a line per row {"rank":R,"point":I,"objective":X,"KEY":VALUE,...} in field order,
 *   then a line per m->best row {"best":S,"axes":A,"point":I,"objective":X,"KEY":VALUE,...}
 *   (S its structure, A m->best_axes).  Flags are JSON's true and false.  The tables show the
 *   best rows as a second table, "best at each A:", numbered from 1 ("#"), under the first;
 *   CSV leaves them out.
 *   Numbers are the shortest text that reads back as the same double, NaN null, infinities
 *   1e999 and -1e999 (which JSON readers take as the largest double or infinity), so that a
 *   row read back compares bit for bit.  Strings and CSV fields follow emit.h (report/): a
 *   byte that is not UTF-8 becomes U+FFFD in JSON.
 * json: one JSON document: the metadata line's object with a member "rows", the array of
 *   the row objects, and "best", the array of the best lines' objects where m->nbest > 0. */
int sweep_write(FILE *out, SweepFormat fmt, const SweepMeta *m, const SweepRow *rows, int n);

/* --- reading JSON Lines back --------------------------------------------------------------- */

typedef struct SweepDoc {
  Arena arena; /* holds every string and array below */
  SweepMeta meta;
  SweepDrop *dropped; /* meta.dropped */
  SweepRow *rows;     /* malloc'd; fields and strings in the arena */
  int nrows;
  SweepRow *best;    /* meta.best, malloc'd */
  uint64_t *best_of; /* meta.best_of, malloc'd */
  int nbest, capbest;
  int meta_line, row_line; /* the lines of the metadata and of the first row */
} SweepDoc;

/* Reads one output of sweep_write(SWEEP_JSONL), checking its shape and its counts (see the
 * top of this file).  `name` is the file's name for messages.  Returns 0, or -1 after writing
 * "NAME:LINE: error: MESSAGE" (or "NAME: error: ..." for the whole file) to err; either way
 * the caller calls sweep_doc_free.  Any input is safe: lines are at most 16 MiB, and the
 * reader knows only the two nested values of the metadata line, so it never recurses. */
int sweep_read(FILE *in, const char *name, SweepDoc *doc, FILE *err);
void sweep_doc_free(SweepDoc *doc);

/* --- llmp merge ------------------------------------------------------------------------------ */

/* The shards of one sweep read back, checked and combined.  meta and rows are what one machine
 * would have written (sweep_write writes them); their strings and fields are in the shards'
 * docs, which the merge holds until sweep_merge_free. */
typedef struct SweepMerge {
  SweepMeta meta; /* shard 0 of 1, the counts summed, elapsed unknown (NaN) */
  SweepRow *rows; /* the best meta.keep of all the shards' rows, ranked */
  int nrows;
  const char *const *paths; /* the rest is the merge's own: the files, as given */
  SweepDoc *docs;           /* one per file */
  int ndocs;
  int *order;       /* the docs by shard */
  SweepDrop *drops; /* meta.dropped */
  SweepRow *best;   /* meta.best: each structure's best of the shards' */
  uint64_t *best_of;
} SweepMerge;

/* Reads the shards' JSON Lines files, checks they are shards 0 .. N-1 of one sweep, each once
 * (same sweep name, objective, sense, keep, points and N, the same hash; the same keys), and
 * combines them into m.  Errors go to err, naming the file and line, every one found.
 * Shards of version 1 (no hash: an older llmp) merge only with one another, with a warning
 * that they are merged on their name and counts alone: a sweep half run before an upgrade is
 * not lost, and a hash is never taken on trust.  Returns 0, or -1 after an error; either way
 * the caller calls sweep_merge_free. */
int sweep_merge_load(SweepMerge *m, const char *const *paths, int npaths, FILE *err);
void sweep_merge_free(SweepMerge *m);

/* sweep_merge_load, then sweep_write of the result to out (err NULL: stderr).  Nothing is
 * written to out after an error.  Returns 0, or -1 after an error. */
int sweep_merge(const char *const *paths, int npaths, SweepFormat fmt, FILE *out, FILE *err);

/* --- shards ------------------------------------------------------------------------------------- */

/* An environment lookup: getenv, or a test's table. */
typedef const char *(*SweepGetenv)(const char *name);

/* Parses --shard's value: "K/N" (0 <= K < N, N >= 1, K counted from 0) or "auto", which takes
 * K and N from the first launcher whose variables are set:
 *   a Slurm job array   K = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, N = SLURM_ARRAY_TASK_COUNT
 *   Slurm tasks (srun)  K = SLURM_PROCID, N = SLURM_NTASKS
 *   Open MPI (mpirun)   K = OMPI_COMM_WORLD_RANK, N = OMPI_COMM_WORLD_SIZE
 *   PMI (MPICH, Intel)  K = PMI_RANK, N = PMI_SIZE
 * (a variable set to "" counts as unset).  Returns 0, or -1 with a message appended to err
 * (when not NULL), the values it names whole.  sweep_shard_parse looks variables up with
 * getenv; sweep_shard_parse_env with env. */
int sweep_shard_parse(const char *spec, int *k, int *n, StrBuf *err);
int sweep_shard_parse_env(const char *spec, SweepGetenv env, int *k, int *n, StrBuf *err);

/* Shard k of n of the points [0, points): [*begin, *end) with begin = floor(k*points/n),
 * computed without overflow for any points.  The n slices tile [0, points); when points < n
 * some are empty.  Needs 0 <= k < n. */
void sweep_shard_range(uint64_t points, int k, int n, uint64_t *begin, uint64_t *end);

/* --- numbers for people ------------------------------------------------------------------ */

/* 1234567 -> "1,234,567" (buf: at least 32 bytes). */
const char *sweep_grouped(char *buf, uint64_t v);
/* A rate with a metric prefix: "950", "12.3 k", "1.2 M", and below 10 two significant
 * digits: "0.42" (buf: at least 32 bytes). */
const char *sweep_rate_text(char *buf, double r);
/* A duration: "42s", "1m05s", "3h07m", "4d05h", "31.7 years" (buf: at least 32 bytes). */
const char *sweep_duration_text(char *buf, double seconds);

/* --- progress ----------------------------------------------------------------------------------- */

/* A one-line progress bar on a terminal:
 *   [#########...........]  45%  1,234,567/2,700,000 points  1.2 M/s  1m05s left
 * ("starting" in place of the rate and time left until a point is done), drawn over itself
 * with "\r", from one second after start on, at most ten times a second,
 * only when the output is a terminal; finish clears the line.  Update from one thread. */
typedef double (*SweepClock)(void); /* seconds, monotonic */

typedef struct SweepProgress {
  FILE *out;
  bool enabled; /* out is a terminal */
  SweepClock clock;
  uint64_t total;
  double start, last; /* clock at start and at the last drawing */
  bool drawn;         /* the line shows a bar that finish must clear */
} SweepProgress;

/* On stderr, when it is a terminal, with the monotonic clock. */
void sweep_progress_start(SweepProgress *p, uint64_t total);
/* On out, drawing only when enabled, with the given clock (NULL: the monotonic one); tests
 * give a memory stream and a fake clock. */
void sweep_progress_start_on(SweepProgress *p, uint64_t total, FILE *out, bool enabled, SweepClock clock);
void sweep_progress_update(SweepProgress *p, uint64_t done);
void sweep_progress_finish(SweepProgress *p);
/* The bar's text for done of total after elapsed seconds, without "\r" (the drawing's
 * text); returns buf. */
const char *sweep_progress_text(char *buf, size_t n, uint64_t done, uint64_t total, double elapsed);

#endif
