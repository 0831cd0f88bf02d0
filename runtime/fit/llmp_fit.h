/* llmp_fit.h - fitting calibration tables from measured samples (public, for tools:
 * `llmp fit`, the validation programs).  Links with llmprt.
 *
 * Sample files: a folder of CSVs named NAME_DTYPE.csv (a folder with an operator/ subfolder
 * is read there).  NAME is either one of the paper's operators (linear1..4, linear_final,
 * baddbmm, bmm, ScaledUpperTriangMaskedSoftmax, softmax, fillmask, flash_atten, layernorm,
 * RMSlayernorm, gelu, res_add, RoPE, embedding, parallel_cross_entropy_128, optimizer,
 * firstStage/middleStage/lastStage_optimizer) with its raw configuration columns, mapped to
 * shapes as shared/data/README.md says; or a kernel name with the kernel's own arguments as
 * columns (docs/calibration.md, "Sample files"): e.g. linear_fp16.csv with columns
 * m,k,n,bias,F_dur(us),B_dur(us).  Times in microseconds; B_dur(us) may be absent.  Lines
 * whose first non-blank character is `#` are comments, anywhere in a file; `# gpu: ...` and
 * `# date: ...` among them (hw/probe writes them) go into the tables' provenance. */
#ifndef LLMP_FIT_H
#define LLMP_FIT_H

#include <stdio.h>

#include "llmp_rt.h"

/* Datasheet RtGpu of a built-in GPU (builtin.c: a100_sxm4_80gb, h100_sxm, gh200, h200, b200,
 * mi300x of hw/gpus.llmp), by its name or its calibration folder name; NULL if unknown.
 * calib is NULL. */
const RtGpu *rt_gpu_builtin(const char *name);

/* Reads samples_dir, fits one table per (kernel, dtype) and writes them as
 * out_dir/KERNEL_DTYPE[_keys].tbl (out_dir must exist); prints the 5-fold cross-validated
 * MAPE per sample file, per table and over all rows, fwd and bwd, to report (may be NULL).
 * gpu: a name for rt_gpu_builtin(), or NULL to take it from the samples folder's name.
 * Returns 0, or 1 with a message on report (or stderr) on error. */
int rt_fit_dir(const char *samples_dir, const char *out_dir, const char *gpu, FILE *report);

/* rt_fit_dir() for a GPU model the caller has (e.g. a declaration of hw/): the report goes to
 * report (may be NULL), errors (`FILE:LINE: message`) to err.  Returns 0 or 1. */
int rt_fit_gpu_dir(const RtGpu *g, const char *samples_dir, const char *out_dir, FILE *report, FILE *err);

/* --- reading sample CSVs (runtime/fit/samples.c) ------------------------------------------ */
/* Comma-separated fields (no quoting) under a header line naming the columns.  Lines whose
 * first non-blank character is `#` are comments, before the header or between rows; blank
 * lines are skipped; a line ends at LF, CRLF or CR; a UTF-8 byte-order mark is skipped.  A
 * line longer than RT_CSV_MAX_LINE bytes, a NUL byte, more than RT_CSV_MAX_COLS columns, a
 * column named twice, a row with another number of fields than the header are errors. */
enum { RT_CSV_MAX_COLS = 64, RT_CSV_MAX_LINE = 1 << 16 };

typedef struct RtSampleMeta {
  char gpu[96], date[32]; /* from `# gpu: ...` and `# date: ...` (the first of each); "" if none */
  int bwd_bad, bwd_rows;  /* set by rt_samples_clean() when it dropped the backward column:
                             * its impossible times, of its measured ones */
  int whole[2];           /* set by rt_samples_whole_ops(): the forward [0] and backward [1]
                             * times it took as one of 2^k kernels of the op, scaled to the op */
} RtSampleMeta;

typedef struct RtCsv {
  const char *path;
  int line;                     /* the line last read, from 1 */
  int ncols;                    /* the header's columns */
  char *col[RT_CSV_MAX_COLS];   /* their names, trimmed */
  char *field[RT_CSV_MAX_COLS]; /* the fields of the row last read, trimmed */
  RtSampleMeta meta;
  char err[2048]; /* "PATH:LINE: message" after a failure */
  FILE *f;        /* private */
  char *buf, *hdr;
  int rows;
} RtCsv;

/* Opens path and reads up to its header line.  0, or -1 with c->err; rt_csv_close() after
 * either. */
int rt_csv_open(RtCsv *c, const char *path);
/* The index of the column named name, or -1. */
int rt_csv_column(const RtCsv *c, const char *name);
/* Reads the next row into c->field: 1, 0 at the end of the file (an error if the file has
 * no row at all), -1 on error (c->err). */
int rt_csv_row(RtCsv *c);
/* The field of column col of the current row as a number (any strtod() number, nan and inf
 * included): 0, or -1 with c->err "PATH:LINE: column `NAME`: `TEXT` is not a number". */
int rt_csv_number(RtCsv *c, int col, double *v);
/* Sets c->err to "PATH:LINE: " and the message; returns -1. */
int rt_csv_fail(RtCsv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_csv_close(RtCsv *c);

/* --- the pieces, for validation ------------------------------------------------------ */
enum { RT_FIT_MAX_FILES = 64 };

typedef struct RtSample {
  int file; /* index into RtSampleSet.file */
  int line; /* its line in that file */
  int op;   /* RtOp (runtime/ops.def) */
  RtDtype dtype;
  double a[5];     /* the kernel's arguments (runtime/ops.h) */
  double hidden;   /* the model's hidden size where the file has one, else 0 */
  double fwd, bwd; /* seconds; bwd < 0: not measured */
} RtSample;

typedef struct RtSampleSet {
  int n, nfiles;
  RtSample *s;
  size_t cap;                      /* rows s has room for */
  char file[RT_FIT_MAX_FILES][64]; /* operator name of each file, e.g. "linear1" */
  char path[RT_FIT_MAX_FILES][512];
  RtSampleMeta meta[RT_FIT_MAX_FILES];
} RtSampleSet;

/* Reads every sample CSV of dir.  Returns 0, or -1 with "FILE:LINE: message" on err.  A
 * file of a known name without a header or without rows is an error; files of other names
 * are skipped. */
int rt_samples_load(const char *dir, RtSampleSet *set, FILE *err);
void rt_samples_free(RtSampleSet *set);

/* PyTorch runs an elementwise op (masked_fill, gelu, swiglu, add) whose tensor spans more than
 * 2^31 bytes as 2^k kernels over equal pieces (32-bit indexing).  A sample file whose forward
 * (or backward) times of such rows are one piece's, the timer having caught one of the
 * kernels, is told by its numbers: per file and pass, those rows' times divided by g's
 * physics, times 2^k, match the file's other rows (median within 20 %), and without the 2^k
 * they do not (median below 0.7 of theirs).  Their times are then multiplied by 2^k, the
 * op's time, with a warning on warn (if not NULL) and the count in the file's meta: a table
 * fitted from one piece's times would predict such an op 2-8x too fast.  Every error a fit
 * is scored by is relative, so scoring the scaled times is scoring the recorded ones against
 * the prediction over 2^k.  Returns the rows scaled. */
int rt_samples_whole_ops(const RtGpu *g, RtSampleSet *set, FILE *warn);

/* A measured time more than RT_SAMPLE_MAX_OFF times slower or faster than the datasheet model
 * of its shape is no measurement of it (a wrong unit, a corrupt row): the operator samples
 * llmp ships lie within 0.06 and 2,500 times their model (the slowest: optimizer steps a
 * stalled host held up), the collective ones within 0.0007 and 42 times, hundreds of times
 * inside the bound either way (docs/calibration.md, "Sample files"). */
#define RT_SAMPLE_MAX_OFF 1e6
#define RT_SAMPLE_MAX_OFF_TEXT "10^6"

/* What `llmp fit` does to samples before fitting, for every program that must see them as it
 * does (the validations, the fuzzer).  First it refuses the samples more than
 * RT_SAMPLE_MAX_OFF times off g's physics (rt_op_physics()): the first such time is an error
 * `FILE:LINE: ...` on warn (if not NULL), and it returns -1.  Then it drops the samples that
 * beat what g can do at all (rt_op_min_time(): the matrix products' FLOPs at the datasheet
 * peak): a row whose forward time does, or only its backward time where that alone does,
 * warning on warn (if not NULL) `FILE:LINE: warning: ...` for the first few per file, then
 * with the count; then, unless a file was left with no row, rt_samples_whole_ops().  Returns
 * 0, or -1 with `FILE:0: ...` on warn when a file has no row left (the samples, or the GPU
 * model, are wrong). */
int rt_samples_clean(const RtGpu *g, RtSampleSet *set, FILE *warn);

/* The kernels PyTorch splits an elementwise op over a tensor of `bytes` (elements of eb
 * bytes) into: 1 while its last byte offset fits in an int32, else twice as many as for half
 * of it. */
double rt_torch_pieces(double bytes, double eb);

/* The median of v[0..n), which it sorts; NAN if n is 0. */
double rt_median(double *v, int n);

/* Fits tables from the samples with use[i] != 0 (use NULL: all) into a new table set for g
 * (release with rt_calib_free).  NULL on allocation failure.  Any number of samples works:
 * a table from one sample is a constant correction; a kernel without samples gets no table. */
RtCalib *rt_fit(const RtGpu *g, const RtSampleSet *set, const unsigned char *use);

/* Mean absolute percentage error (a fraction) over rows, fwd [0] and bwd [1]; mape -1 where
 * there is no row. */
typedef struct RtFitErr {
  int rows[2];
  double mape[2];
} RtFitErr;

/* The k-fold cross-validated error of rt_fit() per sample file, per table (the kernel and
 * dtype that the files feed, in the order rt_fit() makes them) and over all rows. */
typedef struct RtFitCv {
  RtFitErr file[RT_FIT_MAX_FILES];
  int ntables;
  struct {
    int op; /* RtOp */
    RtDtype dtype;
    char name[64]; /* as the table names itself: "softmax fp16 causal=1" */
    RtFitErr err;
  } table[RT_FIT_MAX_FILES];
  RtFitErr all;
} RtFitCv;

/* Fills cv (folds >= 2); 0, or -1 (bad folds, out of memory).  A row whose table has no
 * training row in its fold is predicted by the physics alone. */
int rt_fit_cv_full(const RtGpu *g, const RtSampleSet *set, int folds, RtFitCv *cv);

/* k-fold cross-validated MAPE (fractions) per file: mape[file][0 fwd, 1 bwd] (-1 where the
 * file has no such time). */
int rt_fit_cv(const RtGpu *g, const RtSampleSet *set, int folds, double (*mape)[2]);

/* MAPE per file of g (with g->calib set as the caller wants) over the samples with
 * use[i] != 0; rows[file] receives the count. */
void rt_fit_mape(const RtGpu *g, const RtSampleSet *set, const unsigned char *use, double (*mape)[2], int *rows);

#endif
