/* llmp_fit.h - fitting calibration tables from measured samples (public, for tools:
 * `llmp fit`, the validation program).  Links with llmprt.
 *
 * Sample files: a folder of CSVs named NAME_DTYPE.csv (a folder with an operator/ subfolder
 * is read there).  NAME is either one of the paper's operators (linear1..4, linear_final,
 * baddbmm, bmm, ScaledUpperTriangMaskedSoftmax, softmax, fillmask, flash_atten, layernorm,
 * RMSlayernorm, gelu, res_add, RoPE, embedding, parallel_cross_entropy_128, optimizer,
 * firstStage/middleStage/lastStage_optimizer) with its raw configuration columns, mapped to
 * shapes as shared/data/README.md says; or a kernel name with the kernel's own arguments as
 * columns (docs/calibration.md, "Sample files"): e.g. linear_fp16.csv with columns
 * m,k,n,bias,F_dur(us),B_dur(us).  Times in microseconds; B_dur(us) may be absent. */
#ifndef LLMP_FIT_H
#define LLMP_FIT_H

#include <stdio.h>

#include "llmp_rt.h"

/* Datasheet RtGpu of a known GPU, by its hw/gpus.llmp name (a100_sxm4_80gb, h100_sxm, gh200)
 * or its calibration folder name; NULL if unknown.  calib is NULL. */
const RtGpu *rt_gpu_builtin(const char *name);

/* Reads samples_dir, fits one table per (kernel, dtype) and writes them as
 * out_dir/KERNEL_DTYPE[_keys].tbl (out_dir must exist); prints the 5-fold cross-validated
 * MAPE per sample file, fwd and bwd, to report (may be NULL).  gpu: a name for
 * rt_gpu_builtin(), or NULL to take it from the samples folder's name.  Returns 0, or 1
 * with a message on report (or stderr) on error. */
int rt_fit_dir(const char *samples_dir, const char *out_dir, const char *gpu, FILE *report);

/* --- the pieces, for validation ------------------------------------------------------ */
enum { RT_FIT_MAX_FILES = 64 };

typedef struct RtSample {
  int file;                 /* index into RtSampleSet.file */
  int op;                   /* RtOp (runtime/ops.def) */
  RtDtype dtype;
  double a[5];              /* the kernel's arguments (runtime/ops.h) */
  double hidden;            /* the model's hidden size where the file has one, else 0 */
  double fwd, bwd;          /* seconds; bwd < 0: not measured */
} RtSample;

typedef struct RtSampleSet {
  int n, nfiles;
  RtSample *s;
  char file[RT_FIT_MAX_FILES][64];   /* operator name of each file, e.g. "linear1" */
  char path[RT_FIT_MAX_FILES][512];
} RtSampleSet;

/* Reads every sample CSV of dir.  Returns 0, or -1 with "FILE:LINE: message" on err. */
int rt_samples_load(const char *dir, RtSampleSet *set, FILE *err);
void rt_samples_free(RtSampleSet *set);

/* Fits tables from the samples with use[i] != 0 (use NULL: all) into a new table set for g
 * (release with rt_calib_free).  NULL on allocation failure. */
RtCalib *rt_fit(const RtGpu *g, const RtSampleSet *set, const unsigned char *use);

/* k-fold cross-validated MAPE (fractions) per file: mape[file][0 fwd, 1 bwd] (-1 where the
 * file has no such time). */
int rt_fit_cv(const RtGpu *g, const RtSampleSet *set, int folds, double (*mape)[2]);

/* MAPE per file of g (with g->calib set as the caller wants) over the samples with
 * use[i] != 0; rows[file] receives the count. */
void rt_fit_mape(const RtGpu *g, const RtSampleSet *set, const unsigned char *use,
                 double (*mape)[2], int *rows);

/* Writes every table of c into out_dir with a provenance header; 0 or -1. */
int rt_calib_write_dir(const RtCalib *c, const char *out_dir, const char *provenance);

#endif
