/* report.h - what llmp run says about one scenario, and the forms it says it in.
 *
 * A Report is filled by lowering (lower_report in lower/lower.c, from the cost graph's values)
 * and printed by report.c as a table (for people), JSON Lines or CSV (for programs), and, for
 * one iteration, by trace.c as a Chrome trace-event file that Perfetto and chrome://tracing
 * open.
 *
 * Times are seconds, memory bytes, rates per second.  The breakdown is of the critical path
 * of one iteration, so its parts add up to the iteration time: the busiest pipeline device's
 * forward, backward and recompute compute, its tensor/context/expert-parallel communication
 * and pipeline sends, the pipeline bubble (makespan minus that device's busy time), the
 * data-parallel communication not hidden behind the backward pass, and the optimizer step. */
#ifndef LLMP_REPORT_H
#define LLMP_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "llmp_rt.h"

/* Breakdown parts: X(ENUM, "json key", "table label").  ORDER ReportPart */
#define REPORT_PARTS(X) \
  X(FORWARD, "forward", "forward") \
  X(BACKWARD, "backward", "backward") \
  X(RECOMPUTE, "recompute", "recompute") \
  X(TP_COMM, "tp_comm", "TP communication") \
  X(CP_COMM, "cp_comm", "CP communication") \
  X(EP_COMM, "ep_comm", "EP communication") \
  X(PP_COMM, "pp_comm", "pipeline send/receive") \
  X(HOST, "host", "host overhead") \
  X(BUBBLE, "bubble", "pipeline bubble") \
  X(DP_COMM, "dp_comm", "exposed DP communication") \
  X(OPTIMIZER, "optimizer", "optimizer step")
typedef enum {
#define X(e, k, l) RP_##e,
  REPORT_PARTS(X)
#undef X
      RP_N
} ReportPart;

/* Memory parts per GPU (the device that needs most): X(ENUM, "json key", "label"). */
#define REPORT_MEMORY(X) \
  X(WEIGHTS, "weights", "weights") \
  X(GRADIENTS, "gradients", "gradients") \
  X(OPTIMIZER, "optimizer", "optimizer state") \
  X(ACTIVATIONS, "activations", "activations") \
  X(BUFFERS, "buffers", "communication buffers") \
  X(RESERVED, "reserved", "framework reserve")
typedef enum {
#define X(e, k, l) RM_##e,
  REPORT_MEMORY(X)
#undef X
      RM_N
} ReportMemory;

/* A change of plan that makes one that does not fit fit: "tp=16 dp=4" with its figures. */
enum { REPORT_FIXES = 4, REPORT_NOTES = 2 };
typedef struct ReportFix {
  char change[96];
  double iteration, peak; /* seconds, bytes */
} ReportFix;

typedef struct Report {
  const char *scenario; /* name of the scenario */
  const char *file;     /* the file that declares it */
  const char *model, *cluster, *gpu;
  /* The plan as evaluated (defaults filled in). */
  int tp, pp, dp, cp, ep, virtual_stages, micro_batch, global_batch, micro_batches, gpus;
  int zero;
  int etp; /* expert tensor parallelism; the text echoes it when > 1 */
  bool sequence_parallel;
  bool cuda_graphs; /* the layers run as CUDA graphs */
  bool overlap_ep;  /* expert-parallel traffic overlapped across micro-batches (overlap_ep) */
  const char *moe_dispatcher; /* moe_token_dispatcher where the model has experts, else NULL */
  const char *dtype, *schedule, *recompute;
  /* Time. */
  double iteration;      /* seconds per iteration */
  double part[RP_N];     /* seconds; they add up to iteration */
  double params_total;   /* the model's parameters (multi-token prediction's included) */
  double params_active;  /* of which one token uses (MoE: its top_k experts) */
  double params_first_stage, params_last_stage; /* the model's, on the first and the last
                                                   pipeline stage (the whole model: pp = 1) */
  double params_per_gpu;                          /* on the GPU that holds most */
  double tokens_per_iteration;                    /* global_batch * seq */
  double tokens_per_s;   /* global_batch * seq / iteration */
  double model_flops;    /* FLOP of one iteration, all GPUs: forward + backward, no recompute */
  double hardware_flops; /* with recompute */
  double tflops_per_gpu; /* model FLOP/s per GPU, in FLOP/s */
  double mfu;            /* model FLOP/s per GPU over the GPU's dense peak for the dtype */
  /* Memory of the device that needs most. */
  double memory[RM_N]; /* bytes */
  double peak;         /* bytes: the sum of the parts */
  double capacity;     /* bytes: the GPU's memory */
  int peak_stage;      /* the pipeline stage (device) that needs most */
  bool fits;           /* peak <= capacity */
  /* Against a measured run, where the scenario has `measured { ... }`. */
  bool has_measured_iteration;
  double measured_iteration; /* seconds */
  double error_pct;          /* 100 * (iteration - measured) / measured */
  bool has_measured_tflops;
  double measured_tflops; /* FLOP/s per GPU as the source reports it */
  /* Provenance: how many kernel calls a calibration table corrected, of how many, and the
   * GPU's sustained figures (rt_sustained()) that scaled its tensor-core rate, for bf16 and
   * the other types and for fp8: 1 (or 0, not set) where the GPU has none. */
  int calls, calibrated_calls;
  char uncalibrated[640]; /* the others, distinct: "kernel (label), ..." */
  int uncalibrated_more;  /* those left out of it for room */
  double sustained, sustained_fp8, sustained_fp4;
  /* The software stack the scenario names (NULL: none), its version, and the stack whose
   * calibration set each sustained figure (NULL: the gpu's own). */
  const char *framework, *framework_version;
  const char *sustained_from, *sustained_fp8_from, *sustained_fp4_from;
  const char *tables_from; /* the stack whose operator tables replaced the gpu's, or NULL */
  double attention_rate;   /* the stack's sustained_attention on this gpu; 0: none */
  const char *attention_from; /* the stack that sets it */
  double grouped_rate;        /* the stack's sustained_grouped_gemm, where expert GEMMs ran; 0: none */
  const char *grouped_from;   /* the stack that sets it */
  double launch_overhead;     /* host seconds per kernel launch (the stack's; 0: not modelled) */
  const char *launch_from;    /* the stack whose gpu block sets it, or NULL (the stack's own field) */
  /* Training to a token count (`llmp run --tokens N`; 0: not asked): days, GPU-hours and the
   * energy at the gpu's `tdp` (W per GPU; 0: it declares none) are derived when printed. */
  double train_tokens, tdp;
  /* A plan that does not fit: the cheapest changes that do, each lowered and evaluated
   * (report_fit_changes), fastest first. */
  ReportFix fix[REPORT_FIXES];
  int nfix;
  /* With cuda_graphs on: the plan with them off alone (iteration NaN where it does not fit),
   * and the bytes of the peak that saves; 0 where it saves none or they are off. */
  ReportFix graphs_off;
  double graphs_saves;
  /* The approximations that move the times of a plan that fits by more than a few per cent
   * (lower_notes in lower/lower_notes.c), one sentence each. */
  char notes[REPORT_NOTES][400];
  int nnotes;
} Report;

typedef enum { REPORT_TABLE, REPORT_JSON, REPORT_CSV } ReportFormat;

/* Writes one scenario's report.  For REPORT_CSV, report_csv_header() first, once.  A table
 * (layout at the top of report.c) ends with a newline and has no blank lines: a caller
 * printing several puts a blank line between them.  JSON is one line (JSON Lines).  A plan
 * that does not fit gets no time: no iteration, tokens/s, TFLOP/s or MFU lines in the table,
 * null in JSON, empty CSV fields.  NULL out or r: nothing is written. */
void report_print(FILE *out, const Report *r, ReportFormat f);
void report_csv_header(FILE *out);
/* Writes x seconds (or bytes) with a unit that reads well: "1.234 s", "56.7 ms", "93.1 GiB".
 * Times: s, ms, us or ns with at most 4 significant digits, trailing zeros dropped ("1 s",
 * "12.35 s", "1235 s").  Bytes: B, KiB, MiB, GiB or TiB with one decimal, dropped when it is
 * 0 ("80 GiB", "512 B").  NaN or infinite: "n/a".  Truncated to fit n bytes; returns buf. */
const char *report_time(char *buf, unsigned n, double seconds);
const char *report_bytes(char *buf, unsigned n, double bytes);
/* A count with its scale: "671.0 B", "37.55 B", "124.4 M" (T, B, M, K: powers of 1000). */
const char *report_count(char *buf, unsigned n, double x);

/* "does not fit: needs 93.1 GiB of 80 GiB: activations 61.2 GiB, ..." into buf: the memory
 * parts that are not 0, largest first.  For a plan that fits: "fits: needs ..." alike. */
const char *report_fit_message(char *buf, unsigned n, const Report *r);

/* The Chrome trace of one iteration: a process per pipeline stage with a track for compute
 * and one per communication stream (tp, pp, dp), events from the schedule simulation and the
 * per-stage layer breakdown.  See trace.c for the exact layout. */
typedef struct TraceOp { /* one operator of a model chunk's forward or backward */
  const char *name;      /* "layer 3 qkv", "embedding", "tp allreduce" */
  char stream;           /* 'c' compute, 't' TP/CP/EP communication */
  double fwd, bwd;       /* seconds for one micro-batch */
} TraceOp;

typedef struct TraceInput {
  const Report *report;
  const RtPipeEvent *events; /* from rt_pipeline over the scenario's stages */
  int nevents;
  int stages, chunks;
  /* Per model chunk (stages*chunks, model order): its operators in execution order. */
  const TraceOp *const *ops;
  const int *nops;
  double p2p;               /* seconds of one pipeline send */
  double dp_start, dp_comm; /* the data-parallel gradient reduction: start and length */
  double optimizer_start, optimizer;
} TraceInput;

/* Writes the trace JSON (one event a line) and flushes out; returns 0, or -1 with errno set
 * if writing failed (EINVAL if out or t is NULL).  Events with a time that is not finite are
 * left out; stages < 1 means as many as the events' devices. */
int report_trace(FILE *out, const TraceInput *t);

/* The trace's threads in each stage, in order. */
enum { TRACE_COMPUTE, TRACE_TP, TRACE_PP, TRACE_DP, TRACE_THREADS };
extern const char *const report_trace_threads[TRACE_THREADS]; /* "compute", "tp/cp/ep comm", .. */

typedef struct TraceSpan { /* one event of the trace, as placed */
  const char *name;        /* "F mb0 chunk1", "layer qkv", "send F mb0 to stage 1" (valid
                              during the visit only) */
  const char *cat;         /* "forward", "backward", "recompute", "weight gradient", "op",
                              "pp", "dp", "optimizer" */
  int stage, thread;       /* TRACE_* */
  long long start, dur;    /* nanoseconds */
  int micro, chunk;        /* -1 for the data-parallel reduction and the optimizer step */
  double time_s;           /* an operator's own seconds for one micro-batch; NaN otherwise */
  int to_chunk;            /* a send's destination chunk; -1 otherwise */
} TraceSpan;

/* Hands each event of the trace to visit, in the file's order: each schedule event, its
 * operators and its send, then the reduction and the optimizer step of each stage. */
void report_trace_walk(const TraceInput *t, void (*visit)(void *ctx, const TraceSpan *s), void *ctx);
/* The stages the trace shows: t->stages, or as many as the events' devices. */
int report_trace_stages(const TraceInput *t);

#endif
