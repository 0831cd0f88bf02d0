/* llmp_rt.h - the llmp runtime: cost kernels for operators and collectives.
 *
 * This is the one public header of runtime/, the ABI that both the reference interpreter
 * and JIT-compiled evaluators call.  It has no LLVM dependency and no global state: every
 * kernel is a pure function of its arguments (a GPU or cluster description, a dtype and the
 * shape), so it may be called from any number of threads at once.
 *
 * Model: physics first (a roofline with GEMM tile and wave quantisation over the SMs,
 * memory-bound operators at a size-dependent achieved bandwidth, collectives as latency plus
 * size over bandwidth per network tier with the algorithm's step counts, launch overheads),
 * then corrected by calibration tables measured on the real GPU where they exist.  Every
 * answer says whether a calibration table corrected it (RT_CALIBRATED).
 *
 * Units: seconds, bytes, FLOP, FLOP/s, bytes/s.  Sizes are doubles so that the JIT can pass
 * them without conversions; they must be finite and >= 0 (>= 1 where a count is needed);
 * a kernel given a bad argument returns a cost with RT_BAD_ARGS set and times of NaN.
 *
 * Ownership: RtGpu, RtCluster and RtCalib are owned by the caller; kernels only read them.
 * rt_calib_load() returns a table set that rt_calib_free() releases. */
#ifndef LLMP_RT_H
#define LLMP_RT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fp8: E4M3/E5M2 with a scale per tensor (Transformer Engine's delayed or current scaling).
 * mxfp8: OCP Microscaling v1.0, E4M3/E5M2 with an E8M0 scale per 32 elements; nvfp4: E2M1
 * with an E4M3 scale per 16 elements and an fp32 one per tensor (NVIDIA, arXiv 2509.25149). */
typedef enum { RT_FP32, RT_TF32, RT_FP16, RT_BF16, RT_FP8, RT_MXFP8, RT_NVFP4, RT_NDTYPES } RtDtype;

/* Calibration tables of one GPU (operators) or one system (collectives): opaque. */
typedef struct RtCalib RtCalib;

typedef struct RtGpu {
  const char *name;
  double memory;            /* bytes of HBM */
  double memory_bandwidth;  /* bytes/s, datasheet */
  double peak[RT_NDTYPES];  /* dense FLOP/s per dtype; 0 where the GPU has none (mxfp8
                                   runs at the fp8 rate, nvfp4 at the fp4 one) */
  int sms;                  /* streaming multiprocessors (compute units on AMD) */
  double l2_cache;          /* bytes; 0 if unknown */
  const RtCalib *calib;     /* operator tables, or NULL: datasheet model only */
  double sustained_compute; /* fraction of the tensor-core rate held through training,
                                   (0, 1]; 0 means 1 (hw/gpus.llmp `sustained_compute`) */
  double sustained_fp8;     /* the same for fp8 work; 0 means sustained_compute
                                   (hw/gpus.llmp `sustained_compute_fp8`) */
  double attention_rate;    /* the stack's flash-attention kernel's rate over the modelled
                                   one (a framework's `sustained_attention`); 0 means 1 */
  unsigned fused;           /* RT_FUSED_* bits: operators the stack runs as one fused kernel
                                   where the tables timed an unfused one: the physics applies */
  double sustained_fp4;     /* the same for nvfp4 work; 0 means sustained_fp8
                                   (a framework's `sustained_compute_fp4`) */
  double peak_exp;          /* exponentials per second of the special-function units
                                   (softmax's exp2); 0: not a bound (hw/gpus.llmp `peak_exp`) */
  double matmul_ceiling;    /* fraction of the dense peak the best-shaped GEMM holds in a short
                                   benchmark; 0: the generation's (hw/gpus.llmp `matmul_ceiling`) */
} RtGpu;

enum { /* RtGpu.fused */
  RT_FUSED_NORM = 1,         /* layernorm, rmsnorm */
  RT_FUSED_ROPE = 2,         /* rotary embedding */
  RT_FUSED_ACTIVATION = 4,   /* gelu, swiglu */
  RT_FUSED_SOFTMAX = 8,      /* the causal scale-mask-softmax */
  RT_FUSED_CROSS_ENTROPY = 16
};

enum { RT_MAX_TIERS = 4 };

typedef struct RtTier {
  const char *name;
  int span_nodes;       /* 0: inside a node; -1: the whole system; N: N nodes per switch */
  double bandwidth;     /* bytes/s per link and direction */
  double latency;       /* seconds per message step */
  int links_per_node;   /* links of this tier out of a node (NICs); 0: one per GPU */
  double efficiency;    /* achievable fraction of bandwidth, (0, 1]; 0 means 1 */
  int switch_reduction; /* in-switch all-reduce (NVLink SHARP): 0 by the rule of
                                 * collectives.c, 1 where the tier is a switch, -1 never */
} RtTier;

typedef struct RtCluster {
  const char *name;
  const RtGpu *gpu;
  int gpus_per_node, nodes;
  RtTier tiers[RT_MAX_TIERS]; /* innermost first */
  int ntiers;
  const RtCalib *calib; /* collective tables, or NULL */
} RtCluster;

enum {
  RT_CALIBRATED = 1,   /* a calibration table corrected this answer */
  RT_EXTRAPOLATED = 2, /* calibrated, but the shape lies outside the sampled range */
  RT_BAD_ARGS = 4,     /* an argument was out of range: times are NaN */
};

typedef struct RtCost {
  double fwd, bwd; /* seconds: forward, backward (0 where there is none) */
  unsigned flags;
} RtCost;

/* --- operators ----------------------------------------------------------------------- */
/* Y[M,N] = X[M,K] W[K,N] (+ bias).  Backward = data-gradient GEMM (M,N)x(N,K) plus
 * weight-gradient GEMM (K,M)x(M,N) (+ the bias gradient, a reduction over M). */
RtCost rt_linear(const RtGpu *g, RtDtype dt, double m, double k, double n, int bias);
/* batch independent [M,K]x[K,N] products. */
RtCost rt_bmm(const RtGpu *g, RtDtype dt, double batch, double m, double k, double n);
/* rows independent softmaxes over cols; causal: Megatron's fused scale-mask-softmax over
 * rows of an L x L upper-triangular-masked matrix (cols = L). */
RtCost rt_softmax(const RtGpu *g, RtDtype dt, double rows, double cols, int causal);
/* Unfused attention: scores (bmm), softmax (causal: fused masked), values (bmm), for batch b,
 * heads h (per rank), sequence l, head dimension d. */
/* Added with the runtime: masked_fill of a rows x cols score matrix (unfused attention's
 * causal mask: reads the scores and a byte mask, writes the scores). */
RtCost rt_masked_fill(const RtGpu *g, RtDtype dt, double rows, double cols);
RtCost rt_attention(const RtGpu *g, RtDtype dt, double b, double l, double heads, double head_dim, int causal);
/* FlashAttention-2: b sequences of l tokens, heads query heads, kv_heads key/value heads. */
RtCost rt_flash_attention(const RtGpu *g, RtDtype dt, double b, double l, double heads, double kv_heads,
                          double head_dim, int causal);
/* rt_attention with kv_heads key/value heads (expanded to heads first, as Megatron's unfused
 * path does) and a value head dim of its own (MLA). */
RtCost rt_attention_ex(const RtGpu *g, RtDtype dt, double b, double l, double heads, double kv_heads, double head_dim,
                       double v_head_dim, int causal);
/* rt_flash_attention with a value head dim of its own (MLA), a sliding window of `window` keys
 * (0: none) and per-head sink logits (GPT-OSS). */
RtCost rt_flash_attention_ex(const RtGpu *g, RtDtype dt, double b, double l, double heads, double kv_heads,
                             double head_dim, double v_head_dim, int causal, double window, int sinks);
/* Mamba-2: the causal depthwise conv1d, and the SSD chunked scan of `tokens` tokens (heads,
 * head_dim, state, groups, chunk); rt_ssd_flops: the scan's forward FLOPs (the model FLOPs);
 * rt_ssd_work: what its kernels do, forward [0] and backward [1], with elements of elem_bytes
 * (the FLOPs the Triton kernels run, the bytes they move, how many they are). */
typedef struct RtSsdWork {
  double flops[2], bytes[2];
  int kernels[2];
} RtSsdWork;
RtCost rt_conv1d(const RtGpu *g, RtDtype dt, double tokens, double channels, double width);
RtCost rt_ssd(const RtGpu *g, RtDtype dt, double tokens, double heads, double head_dim, double state, double groups,
              double chunk);
double rt_ssd_flops(double tokens, double heads, double head_dim, double state, double groups, double chunk);
RtSsdWork rt_ssd_work(double tokens, double heads, double head_dim, double state, double groups, double chunk,
                      double elem_bytes);
RtCost rt_layernorm(const RtGpu *g, RtDtype dt, double tokens, double hidden);
RtCost rt_rmsnorm(const RtGpu *g, RtDtype dt, double tokens, double hidden);
RtCost rt_gelu(const RtGpu *g, RtDtype dt, double elements);
RtCost rt_swiglu(const RtGpu *g, RtDtype dt, double elements); /* elements of the output */
RtCost rt_add(const RtGpu *g, RtDtype dt, double elements);
RtCost rt_rope(const RtGpu *g, RtDtype dt, double tokens, double heads, double head_dim);
/* Vocabulary-parallel embedding lookup: tokens rows gathered from a [rows, hidden] table. */
RtCost rt_embedding(const RtGpu *g, RtDtype dt, double tokens, double rows, double hidden);
/* Vocabulary-parallel cross-entropy over a [tokens, vocab] logit shard (Megatron). */
RtCost rt_cross_entropy(const RtGpu *g, RtDtype dt, double tokens, double vocab);
/* One Adam step (fused, fp32 master weights and moments) over params parameters held in
 * `tensors` parameter tensors (weights and biases; each adds a fixed cost): fwd. */
RtCost rt_adam(const RtGpu *g, RtDtype dt, double params, double tensors);

/* --- collectives ------------------------------------------------------------------- */
/* A group of nodes x gpus_per_node GPUs of the cluster (one GPU per rank), laid out on
 * consecutive GPUs of consecutive nodes.  bytes is the size of the full tensor: the reduced
 * tensor, the gathered output, the all-to-all buffer of one rank, the message sent.
 * The result's fwd is the time of one call; bwd is 0. */
RtCost rt_allreduce(const RtCluster *c, double bytes, int nodes, int gpus_per_node);
RtCost rt_allgather(const RtCluster *c, double bytes, int nodes, int gpus_per_node);
RtCost rt_reducescatter(const RtCluster *c, double bytes, int nodes, int gpus_per_node);
RtCost rt_alltoall(const RtCluster *c, double bytes, int nodes, int gpus_per_node);
/* Send/receive between two ranks: nodes = 1 (same node) or 2, gpus_per_node = 2 or 1. */
RtCost rt_p2p(const RtCluster *c, double bytes, int nodes, int gpus_per_node);
/* The nodes the GPUs' own fabric joins: 1 where the innermost tier spans a node; N where, on
 * nodes of several GPUs, it spans N nodes (an NVL72 rack's NVLink: 18 trays of 4 GPUs), or
 * all of them for `system`.  A group inside such a domain runs on that tier as if in one
 * node; a larger one crosses the next tiers from each domain's links. */
int rt_domain_nodes(const RtCluster *c);

/* --- pipeline schedules -------------------------------------------------------------- */
/* The makespan of one iteration's pipeline, simulated event by event over devices and
 * micro-batches with each model chunk's own times (runtime/schedule.c).  The closed-form
 * bubble formulas ((p-1)/m for GPipe and 1F1B, (p-1)/(v m) for interleaved) hold only for
 * equal stages and free sends; tests check the simulation against them there. */
typedef enum { RT_GPIPE, RT_1F1B, RT_INTERLEAVED, RT_ZERO_BUBBLE, RT_NSCHEDULES } RtSchedule;

enum { RT_MAX_CHUNKS = 1024 }; /* stages * chunks */

typedef struct RtPipeline {
  RtSchedule schedule;
  int stages;        /* pp: devices in the pipeline */
  int chunks;        /* model chunks per device (virtual stages); 1 unless interleaved */
  int micro_batches; /* per iteration, through this pipeline */
  /* Per model chunk c = 0 .. stages*chunks-1 in model order (chunk c runs on device
   * c % stages), seconds for one micro-batch: */
  const double *fwd;       /* forward, with its tensor-parallel communication */
  const double *bwd;       /* backward for the input gradient (B), with its TP communication */
  const double *wgrad;     /* backward for the weight gradient (W); NULL: 0.  Every schedule
                                   but zero-bubble runs it right after B, as one backward */
  const double *recompute; /* forward recomputed before the backward; NULL: 0 */
  double p2p;              /* one send of activations (or their gradient) between chunks
                                   on different devices; the receiver waits for it, the sender
                                   does not */
} RtPipeline;

typedef struct RtPipeEvent {
  int device, chunk, micro; /* chunk: model chunk index (0 .. stages*chunks-1) */
  char kind;                /* 'F' forward, 'R' recompute, 'B' backward (input grad, or the
                                   whole backward), 'W' weight grad (zero-bubble) */
  double start, end;        /* seconds from the iteration's start */
} RtPipeEvent;

typedef struct RtPipeResult {
  double makespan;      /* first forward's start to the last backward's end, seconds */
  double busy;          /* compute time of the busiest device */
  int busiest;          /* that device */
  int in_flight;        /* most micro-batch chunks any device holds activations for
                                   (forward done, backward not yet), the memory model's factor */
  int in_flight_device; /* the device that holds them */
  unsigned flags;       /* RT_BAD_ARGS: makespan NaN */
} RtPipeResult;

/* Simulates the schedule.  events may be NULL; otherwise up to maxevents events are written
 * in start order per device (device 0's first; R and W events only where they take time),
 * and *nevents (if not NULL) gets the number there were.  Out-of-range arguments (a time
 * negative or not finite, chunks > 1 but for INTERLEAVED, which then needs micro_batches
 * % stages == 0, more than RT_MAX_CHUNKS model chunks) give RT_BAD_ARGS with makespan and
 * busy NaN, devices -1 and *nevents 0.
 * Without events (events NULL or maxevents 0) it takes the fast path of schedule.c: closed
 * forms, and a steady-state fast-forward for the 1F1B family, in time independent of
 * micro_batches; its makespan is rt_pipeline_reference's up to rounding (bit-identical when
 * the times add exactly), and every other field is the same. */
RtPipeResult rt_pipeline(const RtPipeline *p, RtPipeEvent *events, int maxevents, int *nevents);
/* The full op-by-op simulation rt_pipeline runs when it writes events, with the same
 * arguments and results: for tests of the fast path, and as its specification. */
RtPipeResult rt_pipeline_reference(const RtPipeline *p, RtPipeEvent *events, int maxevents, int *nevents);

/* A lower bound on rt_pipeline(p)'s makespan, in time independent of micro_batches and
 * without simulating: for each device d, its first forward waits for micro-batch 0 to cross
 * chunks 0 .. d-1 (with their sends), then it runs all its ops (busy time), and its last
 * backward's gradient still has to cross chunks d-1 .. 0 (in ZB-H1 device d may run up to
 * d + 1 weight-gradient ops after that backward; device 0 runs its last one after its own).
 * The largest over the devices, less 1e-9 of itself for rounding; NaN where rt_pipeline
 * gives RT_BAD_ARGS.  A sweep compares it with its worst kept point to skip simulations. */
double rt_pipeline_bound(const RtPipeline *p);

/* Layers per stage: uniform (layers / (stages*chunks), which must divide) or balanced
 * (DeepSpeed's pipeline engine: chunks differ by at most one layer, the first ones get the
 * extra layers).  Writes stages*chunks counts in model order; returns 0, or -1 if it cannot. */
int rt_partition_layers(int layers, int stages, int chunks, int balanced, int *out);

/* A model of several layer kinds (groups), and where its layers go.  Registered once per
 * compiled graph; the pipeline kernels name it by its id (0: every layer of group 0, placed
 * by rt_partition_layers). */
enum { RT_MAX_GROUPS = 4, RT_MAX_LAYOUTS = 4096 };
typedef struct RtLayout {
  int layers;                 /* in model order */
  const unsigned char *group; /* each layer's group, 0 .. RT_MAX_GROUPS-1 */
  int nstage;                 /* entries of stage; 0: none */
  const int *stage;           /* explicit layers per model chunk, in model order */
  int first, last;            /* layers of the first and of the last pipeline stage; -1: unset */
} RtLayout;
/* Its id (>= 1; the same id for an equal layout), or -1 if malformed or the table is full.
 * Thread-safe; ids stay valid for the life of the process. */
int rt_layout_register(const RtLayout *l);
/* Layers of each group in each model chunk (stages*chunks rows, model order) under layout id
 * (0: `layers` of group 0 by rt_partition_layers).  Returns 0, or -1 if the layout does not
 * place these layers on these chunks. */
int rt_layout_counts(int id, int layers, int stages, int chunks, int balanced, int (*out)[RT_MAX_GROUPS]);

/* --- calibration tables ------------------------------------------------------------- */
/* Loads every table file of a folder (hw/calibration/NAME/).  On error returns NULL and
 * writes "FILE:LINE: message" into err (errlen bytes). */
RtCalib *rt_calib_load(const char *dir, char *err, size_t errlen);
void rt_calib_free(RtCalib *c);
/* Number of tables loaded, and a table's name (for reports). */
int rt_calib_ntables(const RtCalib *c);
const char *rt_calib_table_name(const RtCalib *c, int i);

const char *rt_dtype_name(RtDtype dt);
int rt_dtype_lookup(const char *name); /* -1 if unknown */
/* Bytes an element, the block scales included: mxfp8 1 + 1/32, nvfp4 1/2 + 1/16 (the
 * per-tensor scale is 4 bytes a tensor, left out). */
double rt_dtype_bytes(RtDtype dt);
/* Whether dt is a quantized GEMM format (fp8, mxfp8, nvfp4): the GEMMs of the transformer
 * layers run in it, the other operators in bf16. */
int rt_dtype_quantized(RtDtype dt);
/* The fraction of the modelled tensor-core rate g holds through training for work in dt:
 * sustained_fp8 for the quantized formats where set, else sustained_compute; 1 where unset. */
double rt_sustained(const RtGpu *g, RtDtype dt);

#ifdef __cplusplus
}
#endif

#endif
