/* schema.c - the field tables of the language, kept in step with docs/language.md. */
#include "schema.h"

#include <stdio.h>
#include <string.h>

#include "words.h"

/* clang-format off */
#define BYTES {{1, 0, 0}}
#define SECONDS {{0, 1, 0}}
#define BANDWIDTH {{1, -1, 0}}
#define FLOPS {{0, -1, 1}}
#define POWER {{0, -1, 0, 1}}

/* Field constructors, to keep the tables one line a field. */
#define COUNT(n, fl) {n, FT_COUNT, {{0}}, NULL, DK_UNKNOWN, (fl) | F_HAS_MIN, 1, 0}
#define COUNT0(n, fl) {n, FT_COUNT, {{0}}, NULL, DK_UNKNOWN, (fl) | F_HAS_MIN, 0, 0}
#define QTY(n, d, fl) {n, FT_QTY, d, NULL, DK_UNKNOWN, (fl) | F_HAS_MIN, 0, 0}
#define REAL(n, lo, hi, fl) {n, FT_REAL, {{0}}, NULL, DK_UNKNOWN, (fl) | F_HAS_MIN | F_HAS_MAX, lo, hi}
#define BOOL(n) {n, FT_BOOL, {{0}}, NULL, DK_UNKNOWN, 0, 0, 0}
#define STRING(n) {n, FT_STRING, {{0}}, NULL, DK_UNKNOWN, 0, 0, 0}
#define ENUM(n, e, fl) {n, FT_ENUM, {{0}}, e, DK_UNKNOWN, fl, 0, 0}
#define REF(n, k, fl) {n, FT_REF, {{0}}, NULL, k, fl, 0, 0}
#define END {NULL, FT_ANY, {{0}}, NULL, DK_UNKNOWN, 0, 0, 0}

static const char *const e_vendor[] = {"nvidia", "amd", NULL};
static const char *const e_span[] = {"node", "system", NULL};
static const char *const e_topology[] = {"switch", "ring", "mesh", "fat_tree", "dragonfly", NULL};
static const char *const e_norm[] = {"layernorm", "rmsnorm", NULL};
static const char *const e_activation[] = {"gelu", "swiglu", "geglu", "relu", "silu", "relu2", "clamped_swiglu", NULL};
static const char *const e_position[] = {"learned", "rotary", "alibi", "none", NULL};
static const char *const e_attention[] = {"flash", "unfused", NULL};
static const char *const e_dtype[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8", "nvfp4", NULL};
/* attention's own type: Transformer Engine's fp8 dot-product attention (NVTE_FP8_DPA, Megatron's
 * --fp8-dot-product-attention) */
static const char *const e_attention_dtype[] = {"bf16", "fp8", NULL};
static const char *const e_schedule[] = {SCHEDULE_WORDS(WORD_STRING) NULL};
static const char *const e_recompute[] = {RECOMPUTE_WORDS(WORD_STRING) NULL};
static const char *const e_groups[] = {"tp", "cp", "ep", "dp", "pp", NULL};
static const char *const e_partition[] = {PARTITION_WORDS(WORD_STRING) NULL};
static const char *const e_optimizer[] = {"adam", "sgd", NULL};
static const char *const e_split[] = {"none", "column", "row", NULL};
static const char *const e_vsplit[] = {"none", "vocab", NULL};
static const char *const e_residual[] = {"separate", "fused", NULL};
static const char *const e_sharded[] = {"reduce_scatter", "all_reduce", NULL};
static const char *const e_zero2[] = {"last_micro_batch", "every_micro_batch", NULL};
static const char *const e_bwd_prefetch[] = {"pre", "post", "none", NULL};
static const char *const e_tp_span[] = {"node", "system", NULL};
static const char *const e_opt_kernel[] = {"multi_tensor", "per_tensor", NULL};
static const char *const e_dispatcher[] = {"alltoall", "allgather", "flex", NULL};
static const char *const e_router_dtype[] = {"fp32", "bf16", "fp16", NULL};
static const char *const e_score[] = {"softmax", "sigmoid", NULL};
static const char *const e_fused[] = {"norm", "rope", "activation", "softmax", "cross_entropy", "dropout_add", NULL};

#define POSQTY(n, d, fl) {n, FT_QTY, d, NULL, DK_UNKNOWN, (fl) | F_HAS_MIN | F_MIN_OPEN, 0, 0}   /* > 0 */
static const FieldDef f_gpu[] = {
    POSQTY("memory", BYTES, F_REQ), POSQTY("memory_bandwidth", BANDWIDTH, F_REQ), COUNT("sms", F_REQ),
    POSQTY("peak_fp16", FLOPS, F_REQ), POSQTY("peak_bf16", FLOPS, 0), POSQTY("peak_fp32", FLOPS, 0),
    POSQTY("peak_tf32", FLOPS, 0), POSQTY("peak_fp8", FLOPS, 0), POSQTY("peak_fp4", FLOPS, 0),
    POSQTY("peak_exp", FLOPS, 0),
    POSQTY("l2_cache", BYTES, 0), POSQTY("tdp", POWER, 0), REAL("sustained_compute", 0, 1, F_MIN_OPEN),
    REAL("sustained_compute_fp8", 0, 1, F_MIN_OPEN), REAL("sustained_compute_fp4", 0, 1, F_MIN_OPEN),
    REAL("matmul_ceiling", 0, 1, F_MIN_OPEN),
    ENUM("vendor", e_vendor, 0),
    STRING("calibration"),
    STRING("description"), STRING("source"), END};

static const FieldDef f_tier[] = {
    {"span", FT_SPAN, {{0}}, e_span, DK_UNKNOWN, F_REQ | F_HAS_MIN, 1, 0},
    QTY("bandwidth", BANDWIDTH, F_REQ | F_MIN_OPEN), QTY("latency", SECONDS, F_REQ),
    COUNT("links_per_node", 0), REAL("efficiency", 0, 1, F_MIN_OPEN),
    ENUM("topology", e_topology, 0), BOOL("switch_reduction"), STRING("description"), END};
static const Schema s_tier = {"tier", DK_UNKNOWN, f_tier, NULL};

static const FieldDef f_cluster[] = {
    REF("gpu", DK_GPU, F_REQ), COUNT("gpus_per_node", F_REQ), COUNT("nodes", F_REQ),
    COUNT("gpus", F_DERIVED), STRING("calibration"), STRING("description"), STRING("source"), END};
static const SubDef sub_cluster[] = {{"tier", &s_tier, true}, {NULL, NULL, false}};

static const FieldDef f_model[] = {
    COUNT("layers", F_REQ), COUNT("hidden", F_REQ), COUNT("heads", F_REQ), COUNT("seq", F_REQ),
    COUNT("vocab", F_REQ), COUNT("ffn", F_REQ), COUNT("kv_heads", 0), COUNT("head_dim", 0),
    ENUM("norm", e_norm, 0), ENUM("activation", e_activation, 0),
    ENUM("position", e_position, 0), REAL("rotary_fraction", 0, 1, 0),
    ENUM("attention", e_attention, 0), BOOL("parallel_residual"), BOOL("bias"),
    BOOL("tied_embeddings"), COUNT("experts", 0), COUNT("top_k", 0), COUNT("moe_ffn", 0),
    COUNT0("shared_experts", 0), COUNT("router_groups", 0), COUNT("router_group_top_k", 0),
    COUNT("q_lora_rank", 0), COUNT("kv_lora_rank", 0), COUNT("qk_rope_head_dim", 0), COUNT("v_head_dim", 0),
    COUNT("sliding_window", 0), COUNT("mamba_heads", 0), COUNT("mamba_head_dim", 0), COUNT("mamba_state", 0),
    COUNT("mamba_groups", 0), COUNT("mamba_chunk", 0), COUNT("mamba_conv", 0), BOOL("frozen"), COUNT0("lora_rank", 0),
    BOOL("layers_only"),
    COUNT("document", 0),
    {"capacity_factor", FT_REAL, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN | F_MIN_OPEN, 0, 0},
    {"moe_imbalance", FT_REAL, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN, 1, 0},
    REF("embedding", DK_BLOCK, 0), REF("layer", DK_BLOCK, 0), REF("head", DK_BLOCK, 0),
    {"pattern", FT_PATTERN, {{0}}, NULL, DK_UNKNOWN, 0, 0, 0}, COUNT0("mtp_layers", 0), REF("mtp", DK_BLOCK, 0),
    STRING("description"), STRING("source"), END};

static const FieldDef f_plan[] = {
    COUNT("tp", 0), COUNT("pp", 0), COUNT("dp", 0), COUNT("cp", 0), COUNT("ep", 0), COUNT("etp", 0),
    COUNT("micro_batch", F_REQ), COUNT("global_batch", F_REQ), BOOL("sequence_parallel"),
    ENUM("dtype", e_dtype, 0), ENUM("schedule", e_schedule, 0), COUNT("virtual_stages", 0),
    ENUM("recompute", e_recompute, 0), COUNT("recompute_layers", 0), ENUM("layer_partition", e_partition, 0),
    {"zero", FT_COUNT, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN | F_HAS_MAX, 0, 3},
    {"placement", FT_ENUMLIST, {{0}}, e_groups, DK_UNKNOWN, 0, 0, 0},
    {"stage_layers", FT_COUNTLIST, {{0}}, NULL, DK_UNKNOWN, 0, 0, 0}, COUNT0("first_stage_layers", 0),
    COUNT0("last_stage_layers", 0),
    COUNT("dp_bucket_elements", 0), ENUM("grad_dtype", e_dtype, 0), BOOL("overlap_dp"), BOOL("overlap_tp"), BOOL("overlap_pp"),
    BOOL("overlap_ep"), BOOL("overlap_param_gather"), BOOL("cuda_graphs"), ENUM("optimizer", e_optimizer, 0), ENUM("attention_dtype", e_attention_dtype, 0),
    ENUM("moe_token_dispatcher", e_dispatcher, 0), ENUM("moe_router_dtype", e_router_dtype, 0),
    STRING("description"), STRING("source"), END};

static const FieldDef f_measured[] = {
    /* no training iteration takes under 1 us; below, the error's percentage leaves the doubles */
    {"iteration", FT_QTY, SECONDS, NULL, DK_UNKNOWN, F_HAS_MIN, 1e-6, 0},
    {"tokens_per_s", FT_REAL, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN | F_MIN_OPEN, 0, 0},
    QTY("tflops_per_gpu", FLOPS, F_MIN_OPEN), REAL("mfu", 0, 1, F_MIN_OPEN), END};
static const Schema s_measured = {"measured", DK_UNKNOWN, f_measured, NULL};

static const FieldDef f_scenario[] = {
    REF("model", DK_MODEL, F_REQ), REF("cluster", DK_CLUSTER, F_REQ), REF("plan", DK_PLAN, F_REQ),
    REF("framework", DK_FRAMEWORK, 0), STRING("description"), STRING("source"), END};
static const SubDef sub_scenario[] = {{"measured", &s_measured, false}, {NULL, NULL, false}};

static const FieldDef f_block[] = {STRING("description"), END};

/* A software stack: the collectives it issues, what it overlaps, its kernels, host and memory
 * overheads, the plans it can run, and per-GPU calibration (docs/frameworks.md). */
static const FieldDef f_fw_gpu[] = {
    REAL("sustained_compute", 0, 1, F_MIN_OPEN), REAL("sustained_compute_fp8", 0, 1, F_MIN_OPEN),
    REAL("sustained_compute_fp4", 0, 1, F_MIN_OPEN), REAL("sustained_attention", 0, 2, F_MIN_OPEN),
    REAL("sustained_grouped_gemm", 0, 1, F_MIN_OPEN), QTY("launch_overhead", SECONDS, 0), STRING("calibration"), STRING("description"), STRING("source"),
    END};
static const Schema s_fw_gpu = {"gpu calibration", DK_UNKNOWN, f_fw_gpu, NULL};
static const FieldDef f_framework[] = {
    STRING("version"), ENUM("parallel_residual_reduction", e_residual, 0), ENUM("sharded_reduction", e_sharded, 0),
    ENUM("zero2_reduction", e_zero2, 0), BOOL("reshard_after_forward"), COUNT0("prefetch", 0),
    COUNT("prefetch_elements", 0), ENUM("backward_prefetch", e_bwd_prefetch, 0), COUNT("max_live_parameters", 0),
    BOOL("fp8_param_gather"), COUNT("unsharded_grad_layers", 0),
    BOOL("overlap_tp"), BOOL("overlap_dp"), BOOL("overlap_pp"), BOOL("overlap_ep"), BOOL("overlap_param_gather"),
    ENUM("tp_overlap_span", e_tp_span, 0), BOOL("tp_backward_overlap"), BOOL("tp_overlap_needs_sp"), COUNT0("tp_overlap_sms", 0),
    COUNT0("tp_overlap_splits", 0),
    BOOL("dp_overlap_with_pp"), BOOL("moe_grouped_gemm"),
    ENUM("grad_dtype", e_dtype, 0), ENUM("layer_partition", e_partition, 0), COUNT("dp_bucket_elements", 0),
    ENUM("schedule", e_schedule, 0), ENUM("attention", e_attention, 0), ENUM("optimizer_kernel", e_opt_kernel, 0),
    {"fused_kernels", FT_ENUMLIST, {{0}}, e_fused, DK_UNKNOWN, 0, 0, 0},
    QTY("launch_overhead", SECONDS, 0), QTY("micro_batch_overhead", SECONDS, 0), QTY("memory_reserved", BYTES, 0),
    {"fragmentation", FT_REAL, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN | F_HAS_MAX, 0, 0.9},
    {"schedules", FT_ENUMLIST, {{0}}, e_schedule, DK_UNKNOWN, 0, 0, 0},
    {"max_zero_with_pp", FT_COUNT, {{0}}, NULL, DK_UNKNOWN, F_HAS_MIN | F_HAS_MAX, 0, 3},
    ENUM("moe_token_dispatcher", e_dispatcher, 0), ENUM("moe_router_dtype", e_router_dtype, 0),
    STRING("description"), STRING("source"), END};
static const SubDef sub_framework[] = {{"gpu", &s_fw_gpu, true}, {NULL, NULL, false}};

static const Schema schemas[DK_N] = {   /* ORDER DeclKind */
    [DK_GPU] = {"gpu", DK_GPU, f_gpu, NULL},
    [DK_CLUSTER] = {"cluster", DK_CLUSTER, f_cluster, sub_cluster},
    [DK_BLOCK] = {"block", DK_BLOCK, f_block, NULL},
    [DK_MODEL] = {"model", DK_MODEL, f_model, NULL},
    [DK_PLAN] = {"plan", DK_PLAN, f_plan, NULL},
    [DK_SCENARIO] = {"scenario", DK_SCENARIO, f_scenario, sub_scenario},
    [DK_SWEEP] = {"sweep", DK_SWEEP, f_scenario, sub_scenario},
    [DK_FRAMEWORK] = {"framework", DK_FRAMEWORK, f_framework, sub_framework},
};

/* What a sweep's require/minimize may read besides the scenario's parts. */
static const FieldDef f_memory[] = {
    QTY("peak", BYTES, F_DERIVED), QTY("weights", BYTES, F_DERIVED),
    QTY("gradients", BYTES, F_DERIVED), QTY("optimizer", BYTES, F_DERIVED),
    QTY("activations", BYTES, F_DERIVED), QTY("buffers", BYTES, F_DERIVED), QTY("reserved", BYTES, F_DERIVED), END};
static const Schema s_memory = {"memory", DK_UNKNOWN, f_memory, NULL};
static const FieldDef f_results[] = {
    QTY("iteration", SECONDS, F_DERIVED),
    {"tokens_per_s", FT_REAL, {{0}}, NULL, DK_UNKNOWN, F_DERIVED, 0, 0},
    {"mfu", FT_REAL, {{0}}, NULL, DK_UNKNOWN, F_DERIVED, 0, 0}, END};
static const Schema s_results = {"results", DK_UNKNOWN, f_results, NULL};
/* clang-format on */

const Schema *schema_of(DeclKind k) { return k > DK_UNKNOWN && k < DK_N ? &schemas[k] : NULL; }
const Schema *schema_results(void) { return &s_results; }
const Schema *schema_memory(void) { return &s_memory; }

const FieldDef *schema_field(const Schema *s, const char *name) {
  for (const FieldDef *f = s->fields; f->name; f++)
    if (f->name[0] == name[0] && strcmp(f->name, name) == 0) return f;
  return NULL;
}

int schema_field_index(const Schema *s, const FieldDef *f) { return (int)(f - s->fields); }

int schema_nfields(const Schema *s) {
  int n = 0;
  while (s->fields[n].name) n++;
  return n;
}

const SubDef *schema_sub(const Schema *s, const char *word) {
  for (const SubDef *d = s->subs; d && d->word; d++)
    if (strcmp(d->word, word) == 0) return d;
  return NULL;
}

/* Operator parameters: positional ones first (F_POS), in call order. */
/* clang-format off */
#define POS(n) {n, FT_COUNT, {{0}}, NULL, DK_UNKNOWN, F_REQ | F_POS | F_HAS_MIN, 0, 0}
#define POSQ(n, d) {n, FT_QTY, d, NULL, DK_UNKNOWN, F_REQ | F_POS | F_HAS_MIN, 0, 0}
#define POSE(n, e) {n, FT_ENUM, {{0}}, e, DK_UNKNOWN, F_REQ | F_POS, 0, 0}
static const FieldDef p_linear[] = {POS("tokens"), POS("in"), POS("out"),
                                    ENUM("split", e_split, 0), BOOL("bias"), BOOL("frozen"),
                                    COUNT0("lora_rank", 0), END};
static const FieldDef p_bmm[] = {POS("batch"), POS("m"), POS("k"), POS("n"), END};
static const FieldDef p_attention[] = {POS("batch"), POS("heads"), POS("seq"), POS("head_dim"),
                                       BOOL("causal"), COUNT("kv_heads", 0),
                                       ENUM("impl", e_attention, 0), BOOL("dropout"), COUNT("v_head_dim", 0),
                                       COUNT0("window", 0), BOOL("sinks"), COUNT0("document", 0), END};
static const FieldDef p_softmax[] = {POS("rows"), POS("cols"), BOOL("causal"), END};
static const FieldDef p_norm[] = {POSE("kind", e_norm), POS("tokens"), POS("hidden"), BOOL("gated"), END};
static const FieldDef p_activation[] = {POSE("kind", e_activation), POS("elements"), END};
static const FieldDef p_elements[] = {POS("elements"), END};
static const FieldDef p_rope[] = {POS("tokens"), POS("heads"), POS("head_dim"), END};
static const FieldDef p_embedding[] = {POS("tokens"), POS("vocab"), POS("hidden"),
                                       ENUM("split", e_vsplit, 0), END};
static const FieldDef p_cross_entropy[] = {POS("tokens"), POS("vocab"), ENUM("split", e_vsplit, 0), END};
static const FieldDef p_router[] = {POS("tokens"), POS("hidden"), POS("experts"), POS("top_k"),
                                    ENUM("score", e_score, 0), END};
static const FieldDef p_experts[] = {POS("tokens"), POS("hidden"), POS("ffn"), POS("experts"),
                                     POS("top_k"), ENUM("activation", e_activation, 0), BOOL("bias"), END};
static const FieldDef p_conv1d[] = {POS("tokens"), POS("channels"), POS("width"), END};
static const FieldDef p_ssd[] = {POS("batch"), POS("seq"), POS("heads"), POS("head_dim"), POS("state"),
                                 POS("groups"), POS("chunk"), END};
static const FieldDef p_collective[] = {POSQ("bytes", BYTES), POSE("group", e_groups), END};

const OpDef op_defs[OPK_N] = {
#define X(e, s, p, c) {s, p, c},
#include "ops.def"
#undef X
};
/* clang-format on */

const OpDef *op_lookup(const char *name) {
  for (int i = 0; i < OPK_N; i++)
    if (strcmp(op_defs[i].name, name) == 0) return &op_defs[i];
  return NULL;
}

bool enum_has(const char *const *enums, const char *word) {
  for (; enums && *enums; enums++)
    if (strcmp(*enums, word) == 0) return true;
  return false;
}

const char *enum_list(const char *const *enums, char *buf, unsigned n) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; enums[i] && k < n; i++) {
    const char *sep = i == 0 ? "" : enums[i + 1] ? ", " : " or ";
    k += (size_t)snprintf(buf + k, n - k, "%s`%s`", sep, enums[i]);
  }
  return buf;
}

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions, so `gtp`
 * is one edit from `gpt`); names are short, rows are small. */
static unsigned edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 1000;
  unsigned r0[64], r1[64], r2[64]; /* rows i-2, i-1, i */
  unsigned *pp = r0, *prev = r1, *cur = r2;
  for (size_t j = 0; j <= lb; j++) prev[j] = (unsigned)j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = (unsigned)i;
    for (size_t j = 1; j <= lb; j++) {
      unsigned best = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < best) best = prev[j] + 1;
      if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < best) best = pp[j - 2] + 1;
      cur[j] = best;
    }
    unsigned *t = pp;
    pp = prev;
    prev = cur;
    cur = t;
  }
  return prev[lb];
}

void suggest_init(Suggest *s, const char *word) {
  s->word = word;
  s->best = NULL;
  s->best_dist = 0;
}

void suggest_offer(Suggest *s, const char *candidate) {
  size_t len = strlen(s->word);
  unsigned limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
  unsigned d = edit_distance(s->word, candidate);
  if (d == 0 || d > limit) return;
  if (!s->best || d < s->best_dist) {
    s->best = candidate;
    s->best_dist = d;
  }
}

const char *suggest_hint(Suggest *s, bool paren) {
  if (!s->best) return "";
  snprintf(s->hint, sizeof s->hint, paren ? " (did you mean `%s`?)" : "; did you mean `%s`?", s->best);
  return s->hint;
}
