/* fit_collectives.h - fitting the collective calibration tables (for tools and tests).
 *
 * A collective table corrects one kernel (allreduce, allgather, reducescatter, alltoall, p2p)
 * for one layout (nodes x gpus_per_node) of one cluster: a 1-axis grid over `bytes` holding
 * log(measured / physics).  The fitter places the grid nodes at quantiles of log bytes and
 * fits the piecewise power law in between by least absolute deviations (so a minority of slow
 * outliers, which the NCCL samples have, does not drag it), choosing the number of nodes by
 * 5-fold cross-validation.  The table's value arrays are owned by the table
 * (rt_table_release()).  The physics and the bound the fitter divides by and filters with,
 * rt_collective_physics() and rt_collective_min_time(), are the runtime's (calib.h). */
#ifndef LLMP_FIT_COLLECTIVES_H
#define LLMP_FIT_COLLECTIVES_H

#include <stddef.h>
#include <stdio.h>

#include "calib.h"
#include "llmp_fit.h"
#include "llmp_rt.h"

/* The index of the first of the n samples (bytes[i], seconds[i]) more than RT_SAMPLE_MAX_OFF
 * times slower or faster than rt_collective_physics() (llmp_fit.h: no measurement; llmp fit
 * refuses such a file), or -1. */
int rt_collective_absurd(const char *kernel, const RtCluster *c, int nodes, int gpus_per_node, const double *bytes,
                         const double *seconds, int n);

/* Keeps, compacted in place, the n samples (bytes[i], seconds[i], and tag[i] if tag is not
 * NULL) that rt_collective_min_time() does not rule out; returns how many. */
int rt_collective_keep_possible(const char *kernel, const RtCluster *c, int nodes, int gpus_per_node, double *bytes,
                                double *seconds, int *tag, int n);

/* Whether a layout's samples can be fitted after `dropped` of them were ruled out and `kept`
 * remain: not when fewer than 2 remain (a fit needs 2), nor when most were ruled out (what is
 * left of a broken file is not a measurement; docs/calibration.md). */
int rt_collective_layout_credible(int kept, int dropped);

/* Fits the table of (kernel, fp16, nodes, gpus_per_node) from n samples (bytes[i], seconds[i],
 * both > 0) into *out (initialised here).  max_points caps the grid (<= RT_MAX_POINTS; 0: the
 * cap).  Returns 0, or -1 with a message in err. */
int rt_fit_collective(const RtCluster *c, const char *kernel, int nodes, int gpus_per_node, const double *bytes,
                      const double *seconds, int n, int max_points, RtTable *out, char *err, size_t errlen);
/* rt_fit_collective(), also giving in *cv the 5-fold cross-validated mean absolute
 * percentage error (a fraction) of the chosen grid; NAN with fewer than 5 samples. */
int rt_fit_collective_cv(const RtCluster *c, const char *kernel, int nodes, int gpus_per_node, const double *bytes,
                         const double *seconds, int n, int max_points, RtTable *out, double *cv, char *err,
                         size_t errlen);

/* Reads every KERNEL[_large]_fp16_NODES_GPUS.csv of an nccl/ sample folder (columns shape =
 * fp16 elements of a rank's buffer, or bytes = the kernel's argument; dur(us)), fits one
 * table per (kernel, layout), merging the _large file into its kernel, and writes
 * OUT_DIR/KERNEL_fp16_NODES_GPUS.tbl with the provenance lines of `header` followed by the
 * fit's own (rows, source files with what their `# gpu:` and `# date:` comments say, grid).
 * Returns the number of tables written, or -1 with a message in err ("FILE:LINE: ..." for a
 * malformed sample file, a sample more than RT_SAMPLE_MAX_OFF times off the physics, a file
 * name whose NODES or GPUSPERNODE is not a count from 1 to INT_MAX, a layout the cluster does
 * not hold).  Each table is written by rt_table_save(). */
int rt_fit_collectives_dir(const RtCluster *c, const char *nccl_dir, const char *out_dir, const char *header, char *err,
                           size_t errlen);
/* The same, printing to report (if not NULL) each table's rows, grid nodes and
 * cross-validated error, and the error over all rows.  Samples faster than
 * rt_collective_min_time() are dropped before the fit, with warnings `FILE:LINE: warning: ...`
 * on warn (if not NULL; rt_fit_collectives_dir() warns on stderr); a layout left with fewer
 * than the 2 samples a fit needs is an error naming its first file. */
int rt_fit_collectives_dir_report(const RtCluster *c, const char *nccl_dir, const char *out_dir, const char *header,
                                  FILE *report, FILE *warn, char *err, size_t errlen);

/* Samples of one collective CSV (the reader of llmp_fit.h: `#` comments, LF, CRLF or CR line
 * ends): *bytes are the kernel's `bytes` argument (llmp_rt.h: the full tensor) from a `bytes`
 * column as they are, or from a `shape` column through rt_nccl_kernel_bytes() (either an
 * integer from 1 to 2^53); *seconds from dur(us) (or dur).  nodes and gpus_per_node are the
 * layout of the file's name; `nodes` and `GPUsPerNode` (or `gpus_per_node`) columns, where
 * present, must agree.  *bytes and *seconds are malloc'ed (caller frees); meta (may be NULL)
 * receives the `# gpu:` and `# date:` comments.  Returns the row count, or -1 with
 * "PATH:LINE: message" in err. */
int rt_collective_csv_read(const char *path, const char *kernel, int nodes, int gpus_per_node, double **bytes,
                           double **seconds, RtSampleMeta *meta, char *err, size_t errlen);

/* Samples of one nccl/ CSV file as rank buffers: *bytes (2 x shape, or a `bytes` column
 * turned back into the buffer a rank passes) and *seconds are malloc'ed (caller frees);
 * returns the row count, or -1 with a message in err.  rt_nccl_kernel_bytes() turns those
 * bytes into the kernel's `bytes` argument. */
int rt_nccl_csv_read(const char *path, double **bytes, double **seconds, char *err, size_t errlen);
/* The kernel's `bytes` argument (llmp_rt.h: the full tensor) for a sample whose rank buffer
 * is buf_bytes: the same, except for all-gather, whose samples give the per-rank input (its
 * `shape`; the gathered output is nodes x gpus_per_node times larger).  The data says so: read
 * that way, every 1-GPU-per-node all-gather file moves the same ~1.2 GB/s per link on
 * Perlmutter (2, 4 and 8 nodes) and ~47 GB/s on Vista's NDR, as the all-reduce files do; read
 * as the output, the rate would halve with every doubling of the nodes. */
double rt_nccl_kernel_bytes(const char *kernel, double buf_bytes, int nodes, int gpus_per_node);

#endif
