/* lower_private.h - what the files of lowering share (lower.h is the interface): the state of
 * one lowering, the per-block accumulators, the node-building shorthands, and each file's
 * entry points.
 *
 *   lower.c        the entry points: checks, blocks, sweep outputs; the Report and the trace
 *   lower_expr.c   values: plan, model and cluster fields, a sweep's axes and lets, block
 *                  expressions
 *   lower_ops.c    a block's operators, one function per operator kind, and their collectives
 *   lower_plan.c   the plan: its values as nodes, the checks that it divides, placement
 *   lower_iter.c   the iteration: pipeline, parts, data parallelism, optimizer, memory
 *   lower_notes.c  the Report's notes: approximations that move its times
 *
 * The graph shares identical nodes, so a node's index depends on the order nodes are first
 * built: `llmp graph` shows the indices, so that order is part of the output. */
#ifndef LLMP_LOWER_PRIVATE_H
#define LLMP_LOWER_PRIVATE_H

#include <limits.h>
#include <math.h>

#include "lower.h"

/* --- state --------------------------------------------------------------------------- */

enum { CM_TP, CM_CP, CM_EP, CM_DP, CM_N }; /* communication streams of a layer */

typedef struct Acc {              /* one block, one micro-batch, one rank */
  GId fc, bc;                     /* compute seconds, forward and backward */
  GId wg;                         /* the weight-gradient share of bc (zero-bubble's W) */
  GId comm_f[CM_N], comm_b[CM_N]; /* exposed communication seconds per stream */
  GId sel;                        /* forward seconds that selective recompute re-runs */
  GId act;                        /* activation bytes saved for backward, no recompute */
  GId act_sel;                    /* of which selective recompute does not keep */
  GId in_bytes;                   /* the block's input (what full recompute keeps) */
  GId params;                     /* parameters on this rank */
  GId trainable;                  /* of which trained (not frozen): gradients, optimizer, dp */
  GId wtotal, wactive;            /* the block's parameters in the whole model, and those a token uses */
  GId wtied;                      /* of which a vocabulary-parallel embedding's (a tied head's) */
  GId tensors;                    /* the parameter tensors (weights, biases) holding them */
  GId eparams, etensors;          /* of which the experts': replicated over edp, not dp x cp */
  GId flops;                      /* model FLOP of the forward on this rank */
  GId sel_flops;                  /* of which selective recompute re-runs (attention) */
  GId launches;                   /* kernel launches of the forward (the backward: as many) */
  GId blaunches;                  /* the backward's beyond the forward's (the SSD scan's, the cp ring's sums) */
  GId xf, xb;                     /* of fc and bc, the routed experts' GEMMs and activation */
  GId edf, edb;                   /* of comm_f and comm_b[CM_EP], the dispatch's and its gradient's
                                   * (the rest: the combine's and its gradient's) */
  GId sync_fc, sync_launches;     /* of fc + comm_f and launches, those after a device-to-host
                                   * sync (a dropless router's), which the host cannot run ahead of */
  bool sync;                      /* it has such a sync */
} Acc;

/* The software stack's semantics (the scenario's `framework`; docs/frameworks.md), with the
 * defaults of a scenario that names none. */
typedef struct Stack {
  Decl *decl;             /* the framework, or NULL */
  bool fused_residual;    /* parallel_residual_reduction = fused */
  bool sharded_allreduce; /* sharded_reduction = all_reduce */
  bool zero2_every;       /* zero2_reduction = every_micro_batch */
  bool reshard;           /* reshard_after_forward */
  double prefetch;        /* ZeRO-3 units gathered ahead */
  double prefetch_el;     /* ZeRO-3 elements gathered ahead at most; INFINITY: whole units */
  int bwd_prefetch;       /* 0 pre, 1 post, 2 none */
  double max_live;        /* ZeRO-3 gathered elements resident at most; INFINITY: no bound */
  bool fp8_gather;        /* fp8_param_gather: ZeRO-3 gathers an fp8 plan's layer weights in fp8 */
  double grad_layers;     /* unsharded_grad_layers: ZeRO-3 layers of unsharded gradients held; < 0: a bucket */
  bool tp_span_node;      /* overlap_tp only inside a node */
  bool tp_bwd_overlap;    /* backward TP collectives overlap without overlap_tp */
  bool tp_needs_sp;       /* overlap_tp only with sequence parallelism */
  double tp_overlap_sms;  /* SMs a bulk or pipelined overlapped TP exchange takes from its GEMM */
  double tp_overlap_splits; /* GEMMs a pipelined reduce-scatter splits into; 0: overlap unsplit */
  bool dp_overlap_pp;     /* the DP reduction may overlap with pp > 1 */
  bool grouped_gemm;      /* moe_grouped_gemm: one grouped GEMM over the local experts */
  bool multi_tensor;      /* optimizer_kernel = multi_tensor */
  double launch;          /* seconds of host time per kernel launch */
  double grouped_rate;    /* the stack's grouped (expert) GEMMs' rate over the dense GEMM model */
  double mb_overhead;     /* seconds of host time per micro-batch */
  double reserved;        /* bytes the stack holds beyond the model */
  double frag;            /* fraction of allocated memory lost to the allocator */
  const char *dispatcher; /* moe_token_dispatcher: alltoall, allgather or flex (DeepEP) */
  unsigned fused;         /* RtGpu.fused: the operators it runs fused (fused_kernels) */
  bool fused_dropout_add; /* fused_kernels has dropout_add: an add after a dropout is free */
} Stack;

typedef struct LetVal {
  AstNode *let;
  GId id;
  const char *word;
} LetVal;

typedef struct Val { /* a block expression's value: a number node or a word */
  GId id;
  const char *word; /* enumeration word (layernorm, column), or NULL */
  bool ok;
} Val;

typedef struct Lower {
  Sema *s;
  Diag *d;
  Graph *g;
  Lowered *out;
  Decl *scenario, *model, *plan, *cluster;
  Stack st;
  const RtGpu *gpu;
  const RtCluster *rc;
  SrcFile *file;
  Span at;
  int errors;
  /* the plan, as nodes */
  GId tp, pp, dp, cp, ep, vs, mb, gb, m, seq, hidden;
  GId etp, edp;              /* the expert layers' tensor- and data-parallel sizes */
  GId stride[9];             /* per group, in G_ order */
  GId bytes_act;             /* bytes per activation element */
  RtDtype dt_plan;           /* the plan's dtype */
  RtDtype dt_gemm, dt_other; /* the current block's GEMMs', and the other operators' */
  RtDtype dt_router;         /* the MoE router's (moe_router_dtype) */
  double dt_router_bytes;    /* bytes per element of its input and probabilities */
  RtDtype dt_attn;           /* attention's: attention_dtype, else dt_other */
  /* plan decisions, as nodes (constants unless a sweep varies them) */
  GId sp; /* sequence parallelism in effect (asked for and tp > 1) */
  GId overlap_tp, overlap_dp, overlap_pp, overlap_pg, overlap_ep; /* overlap_pg: overlap_param_gather */
  GId graphs;                                         /* plan.cuda_graphs */
  GId sync_f0, sync_n0; /* the block's forward seconds and launches at a dropless router's sync; -1: none yet */
  GId zero;              /* ZeRO stage 0..3 */
  GId sched;             /* RtSchedule */
  GId rec_full, rec_sel; /* recompute = full, selective */
  GId rec_frac;          /* of the layers, the share full recompute re-runs (recompute_layers) */
  GId balanced;          /* layer_partition = balanced */
  GId layers;
  /* the layers: one block, or a pattern's (groups), and where they go */
  int ngroups;
  Decl *gblk[RT_MAX_GROUPS];
  GId gcount[RT_MAX_GROUPS]; /* layers of each group in the model */
  int layout;                /* rt_layout id; 0: one block placed by rt_partition_layers */
  int nstage;                /* plan.stage_layers' entries, or -1 */
  double first, last;        /* plan.first/last_stage_layers, or -1 */
  double mtp;                /* multi-token prediction depth */
  /* sweeps */
  const LowerAxes *ax;
  bool ready;   /* the plan's nodes above are set */
  bool results; /* evaluating a require/objective: results are names */
  int let_depth;
  AstNode *sweep_let; /* the sweep's `let` being evaluated: its divisors become checks */
  /* the block being lowered */
  Decl *blk;
  int which;     /* LB_* */
  GId out_saved; /* bytes of its output the last operator keeps (flash
                                   attention's O) for its backward, or -1 */
  Acc *acc;
  LetVal lets[64];
  int nlets;
  bool sharded; /* between a column- and a row-parallel linear */
  int row_skip;  /* row linears left whose reduction a fused parallel residual defers */
  int prev_kind; /* the OpKind of the block's operator before, or -1 */
  bool frozen;   /* model.frozen: the model's own weights are not trained (LoRA) */
  int missing;   /* reads of model fields the model leaves unset (reported once per field) */
  const char *missing_seen[16];
  int nmissing_seen;
  unsigned tiles_checked; /* per group (bit G_*): lower_group_tiles has checked it */
} Lower;

/* G_DPCP: the dp x cp ranks that hold the same dense weights.  The expert layers fold etp x ep
 * x edp over the same tp x cp x dp ranks (Megatron-Core's MoE parallel folding): G_ETP, G_EP,
 * G_EDP, and G_EMP the etp x ep ranks an all-gather dispatcher gathers over. */
enum { G_TP, G_CP, G_EP, G_DP, G_PP, G_DPCP, G_ETP, G_EDP, G_EMP };
extern const char *const lower_group_names[G_PP + 1]; /* placement's words, in G_ order */

/* --- building nodes -------------------------------------------------------------------- */

static inline GId K(Lower *L, double x) { return g_const(L->g, x); }
static inline GId ADD(Lower *L, GId a, GId b) { return g_add(L->g, a, b); }
static inline GId MUL(Lower *L, GId a, GId b) { return g_mul(L->g, a, b); }
static inline GId DIV(Lower *L, GId a, GId b) { return g_div(L->g, a, b); }
static inline GId MAX(Lower *L, GId a, GId b) { return g_max(L->g, a, b); }
static inline GId SUB(Lower *L, GId a, GId b) { return g_sub(L->g, a, b); }
static inline GId MUL3(Lower *L, GId a, GId b, GId c) { return MUL(L, MUL(L, a, b), c); }
static inline GId EQ(Lower *L, GId a, double x) { return g_bin(L->g, GN_EQ, a, K(L, x)); }
static inline GId GE(Lower *L, GId a, double x) { return g_bin(L->g, GN_GE, a, K(L, x)); }
static inline GId AND(Lower *L, GId a, GId b) { return g_bin(L->g, GN_AND, a, b); }
/* a whole multiple: fmod(a, b) == 0 */
static inline GId DIVIDES(Lower *L, GId a, GId b) { return EQ(L, g_bin(L->g, GN_MOD, a, b), 0); }

/* Constant nodes: known true, known false, the value (NAN if not a constant). */
/* clang-format off */
static inline bool kt(Lower *L, GId c) { double v; return g_is_const(L->g, c, &v) && v != 0; }
static inline bool kf(Lower *L, GId c) { double v; return g_is_const(L->g, c, &v) && v == 0; }
static inline double cv(Lower *L, GId a) { double v; return g_is_const(L->g, a, &v) ? v : NAN; }
/* clang-format on */
/* A constant count as an int for the report's echo; 0 when not a constant or out of range. */
static inline int ci(Lower *L, GId a) {
  double v = cv(L, a);
  return v >= INT_MIN && v <= INT_MAX ? (int)v : 0;
}
/* c ? A : B, building only the side taken when c is a constant (no dead kernel calls). */
#define PICK(L, c, A, B) (kt(L, c) ? (A) : kf(L, c) ? (B) : g_select((L)->g, (c), (A), (B)))

/* --- plan and model values ------------------------------------------------------------- */

static inline bool bool_or(Lower *L, Decl *d, const char *field, bool def) {
  bool x;
  return sema_bool(L->s, d, field, &x) ? x : def;
}

static inline const char *word_or(Lower *L, Decl *d, const char *field, const char *def) {
  const char *w = sema_word(L->s, d, field);
  return w ? w : def;
}

/* A plan word the stack may default (grad_dtype): the plan's, the stack's, or def. */
static inline const char *plan_word(Lower *L, const char *field, const char *def) {
  const char *w = sema_word(L->s, L->plan, field);
  if (!w && L->st.decl) w = sema_word(L->s, L->st.decl, field);
  return w ? w : def;
}

/* --- the files' entry points --------------------------------------------------------------- */

/* lower.c: errors.  lower_err reports at the scenario; lower_err_blk at a node of the block
 * being lowered (or the scenario), with a note naming the scenario. */
void lower_err(Lower *L, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lower_err_blk(Lower *L, AstNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A block reads model.<field>, which the model leaves unset: reported once per field at the
 * model, naming the field and the base models that set it; counted in L->missing, so that
 * what the missing value makes fail is not reported again. */
void lower_missing_field(Lower *L, AstNode *n, const char *field);

/* lower_expr.c: a block expression's value; a numeric (or boolean, or enumeration-coded)
 * field of the plan or the model: the sweep's axis, its let, or the declaration's value; the
 * plan's fields before lower_read_plan has set them. */
Val lower_eval(Lower *L, AstNode *n);
GId lower_field(Lower *L, Decl *d, const char *root, const char *f, double def);
GId lower_plan_field(Lower *L, const char *f);

/* lower_ops.c: a kernel call (its first result), a collective over a group, a block's
 * operators into a, and ZeRO-3's per-layer gathers and reduce-scatters (into block which). */
GId lower_call(Lower *L, RtKernel k, const char *label, int n, ...);
GId lower_coll(Lower *L, RtKernel k, GId bytes, int group, const char *label);
/* Whether the stack's or plan's moe_token_dispatcher is `word`. */
bool lower_dispatcher_is(const Lower *L, const char *word);
/* The sum of a block's exposed communication seconds over the streams (comm_f or comm_b). */
GId lower_comm_sum(Lower *L, const GId *c);
void lower_block(Lower *L, Decl *blk, int which, Acc *a);
void lower_zero3(Lower *L, Acc *layer, int which);

/* lower_plan.c: the stack's semantics; the plan's values as nodes, false after an error; bytes
 * per gradient element. */
void lower_read_stack(Lower *L);
/* A divisor in a sweep's `let` (L->sweep_let): a check that it is not zero, whose reason
 * names the let and its line. */
void lower_let_divisor(Lower *L, GId divisor);
/* A sweep's check node (ok: true where the point is valid), with the reason a point fails. */
void lower_check(Lower *L, GId ok, const char *reason);
bool lower_read_plan(Lower *L);
/* A collective over a group (kernel k, label): the group's ranks must tile the nodes as
 * rt_group_layout lays them out (an error for a scenario, a check for a sweep), checked once
 * per group.  False after an error. */
bool lower_group_tiles(Lower *L, int group, GId size, GId stride, RtKernel k, const char *label);
/* The block (LB_*) that lowers group g of the layers. */
static inline int lower_group_block(int g) { return g == 0 ? LB_LAYER : LB_GROUP1 + g - 1; }
static inline bool lower_is_layer(int which) { return which == LB_LAYER || which >= LB_GROUP1; }
/* The plan sets stage_layers or first/last_stage_layers (read by lower_read_plan). */
static inline bool lower_explicit_layout(const Lower *L) { return L->nstage >= 0 || L->first >= 0 || L->last >= 0; }
double lower_grad_bytes(Lower *L);
GId lower_zero3_weight_bytes(Lower *L);

/* lower_iter.c: the iteration from the three blocks, as the graph's named outputs: those
 * below, "part.<part>" and "memory.<kind>" (report.h's tables). */
#define LOWER_OUTPUTS(X) \
  X(ITERATION, "iteration") \
  X(TOKENS, "tokens_per_s") \
  X(MFU, "mfu") \
  X(TFLOPS, "tflops_per_gpu") \
  X(MODEL_FLOPS, "model_flops") X(HW_FLOPS, "hardware_flops") X(PEAK, "memory.peak") \
  X(PARAMS, "params.total") X(ACTIVE, "params.active") X(PARAMS_FIRST, "params.first_stage") \
  X(PARAMS_LAST, "params.last_stage") X(PARAMS_GPU, "params.per_gpu") X(TOKENS_ITER, "tokens_per_iteration") \
      X(PEAK_STAGE, "memory.peak_stage") X(MAKESPAN, "pipeline.makespan") X(DP_TIME, "dp.exposed") \
          X(OPT_TIME, "optimizer")
typedef enum {
#define X(e, s) O_##e,
  LOWER_OUTPUTS(X)
#undef X
      O_N
} OutputId;
extern const char *const lower_output_names[O_N];
extern const char *const lower_part_outputs[RP_N], *const lower_memory_outputs[RM_N];
void lower_assemble(Lower *L, Acc *E, Acc *Ly, Acc *H); /* Ly: L->ngroups of them */

/* The approximations that move the evaluated scenario's times (lower_notes.c), into r->notes;
 * after the rest of the Report (they need r->fits). */
void lower_notes(const Lowered *l, const double *vals, Report *r);

#endif
