/* test_lower_ops.c - unit tests of the operators of issue 33 (compiler/lower/lower_ops.c, the
 * runtime's kernels, stdlib/layers.llmp) against closed forms: scenarios written as text,
 * lowered, evaluated, read back as a Report or from the graph's kernel calls.
 *
 *   mla        multi-head latent attention: forward FLOPs per token, activations under each
 *              recompute and DeepSeek-V3's parameters from its shapes; the unsplit down
 *              projections under sequence parallelism
 *   window     sliding-window attention and sinks (GPT-OSS), packed documents
 *   qk_norm    Qwen3's per-head norms inside the tensor-parallel region
 *   gqa        the unfused path's K/V expand and what it keeps
 *   mamba      Mamba-2's conv1d and SSD scan: FLOPs per token, activations, tp split, errors;
 *              the hybrid's attention-only, MLP-only and experts-only layers
 *   relu2      squared ReLU's kernel
 *   grouped    moe_grouped_gemm: one batched GEMM or one GEMM per local expert
 *   experts    the clamped SwiGLU fused or not, expert biases
 *   lora       frozen weights and adapters: trainable parameters, gradients, optimizer */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/diag.h"
#include "front/sema.h"
#include "llmp_kernels.h"
#include "llmp_rt.h"
#include "lower/graph.h"
#include "lower/hw.h"
#include "lower/lower.h"
#include "report/report.h"

#include "support.h"
#include "support_lower.h"

static void expect_near(double got, double want, double rel, const char *what) {
  if (!(fabs(got - want) <= rel * fabs(want)))
    fail_msg("%s: got %.17g, want %.17g (difference %.3g)", what, got, want, got - want);
}

/* --- a scenario from text (support_lower.h) ------------------------------------------------ */

/* Scenario `s`: model m { base fields; layers = L } on one Eos node (8 H100s), plan p, with
 * `extra` declarations before (a framework, ...) and `scen` fields in the scenario. */
static Fx *run(const char *model, int layers, const char *plan, const char *extra, const char *scen) {
  char t[4096];
  snprintf(t, sizeof t,
           "import \"stdlib/transformer\"\nimport \"hw/systems/eos\"\n%s\n"
           "model m extends llama { %s; layers = %d }\n"
           "plan p { pp = 1; micro_batch = 1; dtype = bf16; %s }\n"
           "scenario s { model = m; cluster = eos { nodes = 1 }; plan = p; %s }\n",
           extra, model, layers, plan, scen);
  Fx *x = fx_open(t);
  if (fx_lower(x, "s") != 0) fail_msg("lowering failed:\n%s--- text:\n%s", cap_text(&x->cap), t);
  return x;
}

/* Forward model FLOPs of one layer per token: model_flops (3 x forward, all ranks) of 4
 * layers less that of 2, halved, over the iteration's tokens. */
static double layer_flops_per_token(const char *model, const char *plan, double tokens) {
  Fx *a = run(model, 4, plan, "", ""), *b = run(model, 2, plan, "", "");
  double f = (a->r.model_flops - b->r.model_flops) / 2 / 3 / tokens;
  fx_close(a);
  fx_close(b);
  return f;
}

/* The forward kernel call of operator `name` of the layer block. */
static GId op_call(const Fx *x, const char *name, RtKernel k) {
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++)
    if (!strcmp(x->l.ops[LB_LAYER][i].name, name)) {
      GId id = x->l.ops[LB_LAYER][i].fwd;
      const GNode *n = &x->l.g.n[id];
      if (n->op != GN_CALL || n->kernel != k)
        fail_msg("operator `%s`: its forward is not a %s call", name, rt_kernels[k].name);
      return id;
    }
  fail_msg("no operator `%s` in the layer", name);
  return -1;
}

static double arg(const Fx *x, GId id, int i) {
  const GNode *n = &x->l.g.n[id];
  assert_true(i < n->nargs);
  return x->vals[x->l.g.args[n->arg0 + i]];
}

/* The forward seconds of the call of kernel k labelled `label` whose argument i is v. */
static double call_val(const Fx *x, RtKernel k, const char *label, int i, double v) {
  for (int j = 0; j < x->l.g.nn; j++) {
    const GNode *n = &x->l.g.n[j];
    if (n->op == GN_CALL && n->kernel == k && n->label && !strcmp(n->label, label) && arg(x, j, i) == v)
      return x->vals[j];
  }
  fail_msg("no %s call `%s` with argument %d = %g", rt_kernels[k].name, label, i, v);
  return NAN;
}

/* The element-wise add calls labelled `label` over v elements. */
static int count_add(const Fx *x, const char *label, double v) {
  int c = 0;
  for (int j = 0; j < x->l.g.nn; j++) {
    const GNode *n = &x->l.g.n[j];
    c += n->op == GN_CALL && n->kernel == RTK_ADD && n->label && !strcmp(n->label, label) && arg(x, j, 1) == v;
  }
  return c;
}

/* The GPU of the scenarios: eos's H100, with the tables the shipped hw/ gives it. */
static const RtGpu *h100(Fx *x) {
  const RtCluster *c = hw_cluster(x->hw, "eos");
  assert_non_null(c);
  return c->gpu;
}

/* The forward (backward) seconds of the layer's operator `name`; fails when it has none. */
static double op_time(const Fx *x, const char *name, bool bwd) {
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++)
    if (!strcmp(x->l.ops[LB_LAYER][i].name, name)) return x->vals[bwd ? x->l.ops[LB_LAYER][i].bwd : x->l.ops[LB_LAYER][i].fwd];
  fail_msg("no operator `%s` in the layer", name);
  return NAN;
}

static int calls_of(const Fx *x, RtKernel k) {
  int c = 0;
  for (int i = 0; i < x->l.g.nn; i++) c += x->l.g.n[i].op == GN_CALL && x->l.g.n[i].kernel == k;
  return c;
}

/* ========================================================================================= */
/* MLA                                                                                       */
/* ========================================================================================= */

/* DeepSeek-V3's attention and dense-layer shapes (huggingface.co/deepseek-ai/DeepSeek-V3
 * config.json: hidden_size 7168, num_attention_heads 128, q_lora_rank 1536, kv_lora_rank 512,
 * qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, intermediate_size 18432). */
#define DSV3 \
  "hidden = 7168; heads = 128; head_dim = 128; q_lora_rank = 1536; kv_lora_rank = 512; qk_rope_head_dim = 64; " \
  "v_head_dim = 128; ffn = 18432; vocab = 129280; layer = mla_layer"

TEST(mla_flops_per_token) {
  /* DeepSeek-V2 (arXiv 2405.04434) Section 2.1.2-2.1.3, eqs. (9)-(19), per token:
   * W^DQ h x q_lora, W^UQ and W^QR q_lora x heads (nope + rope), W^DKV and W^KR h x (kv_lora +
   * rope), W^UK and W^UV kv_lora x heads (nope + v), W^O heads v x h; attention: scores over
   * nope + rope, outputs over v, s keys a query (Megatron's convention: causal counted whole);
   * the dense SwiGLU MLP 3 h ffn.  Two FLOPs a multiply-add. */
  double H = 7168, nh = 128, ql = 1536, kvl = 512, dn = 128, dr = 64, dv = 128, F = 18432, s = 4096;
  double lin = H * ql + ql * nh * (dn + dr) + H * (kvl + dr) + kvl * nh * (dn + dv) + nh * dv * H;
  double want = 2 * lin + 2 * s * nh * (dn + dr + dv) + 2 * 3 * H * F;
  double got = layer_flops_per_token(DSV3 "; seq = 4096", "tp = 1; global_batch = 8", 8 * 4096);
  expect_near(got, want, 1e-12, "mla_layer forward FLOPs per token");
  /* the same under tp = 8 with sequence parallelism: the unsplit down projections run on t/8
   * tokens a rank, counted once */
  got = layer_flops_per_token(DSV3 "; seq = 4096", "tp = 8; sequence_parallel = true; global_batch = 8", 8 * 4096);
  expect_near(got, want, 1e-12, "mla_layer forward FLOPs per token, tp 8 + sp");
  got = layer_flops_per_token(DSV3 "; seq = 4096", "tp = 8; global_batch = 8", 8 * 4096);
  expect_near(got, want, 1e-12, "mla_layer forward FLOPs per token, tp 8 without sp");
}

TEST(mla_unsplit_down_projections) {
  for (int sp = 0; sp <= 1; sp++) {
    char plan[128];
    snprintf(plan, sizeof plan, "tp = 8; sequence_parallel = %s; global_batch = 8", sp ? "true" : "false");
    Fx *x = run(DSV3 "; seq = 4096", 2, plan, "", "");
    double t = sp ? 4096.0 / 8 : 4096.0;
    GId q = op_call(x, "q_down", RTK_LINEAR), kv = op_call(x, "kv_down", RTK_LINEAR);
    expect_near(arg(x, q, 1), t, 0, "q_down tokens");
    expect_near(arg(x, q, 2), 7168, 0, "q_down in: whole");
    expect_near(arg(x, q, 3), 1536, 0, "q_down out: whole");
    expect_near(arg(x, kv, 3), 512 + 64, 0, "kv_down out: latent + shared rotary key");
    GId qn = op_call(x, "q_norm", RTK_RMSNORM);
    expect_near(arg(x, qn, 1), t, 0, "q_norm rows");
    /* the column up projections split the heads; attention sees 16 heads of 192 / 128 */
    GId up = op_call(x, "kv_up", RTK_LINEAR);
    expect_near(arg(x, up, 3), 128.0 * 256 / 8, 0, "kv_up out / tp");
    GId at = op_call(x, "attn", RTK_FLASH);
    expect_near(arg(x, at, 3), 16, 0, "local heads");
    expect_near(arg(x, at, 5), 192, 0, "query/key head dim");
    expect_near(arg(x, at, 7), 128, 0, "value head dim");
    fx_close(x);
  }
}

TEST(mla_deepseek_v3_parameters) {
  /* DeepSeek-V3 (arXiv 2412.19437, Section 4.2 and Table 1: 671B total, 37B activated per
   * token; config.json: 61 layers, the first 3 dense (first_k_dense_replace 3), 256 routed
   * experts of 2048, 8 per token, 1 shared, vocabulary 129280, untied), without its MTP module.
   * Closed form per layer: the MLA linears (as in mla_flops_per_token) and its norms (2 h + q_lora
   * + kv_lora); a dense MLP 3 h ffn, or the router h E and (E + shared) experts of 3 h moe_ffn. */
  double H = 7168, nh = 128, ql = 1536, kvl = 512, dn = 128, dr = 64, dv = 128, F = 18432, E = 256, mf = 2048;
  double attn = H * ql + ql * nh * (dn + dr) + H * (kvl + dr) + kvl * nh * (dn + dv) + nh * dv * H + 2 * H + ql + kvl;
  double dense = attn + 3 * H * F, moe = attn + H * E + (E + 1) * 3 * H * mf;
  double emb = 2 * 129280 * H + H; /* embedding, LM head, final norm (129280: a multiple of 128, unpadded at tp = 1) */
  double total = 3 * dense + 58 * moe + emb;
  double active = 3 * dense + 58 * (moe - (E - 8) * 3 * H * mf) + emb;
  char t[2048];
  snprintf(t, sizeof t,
           "import \"stdlib/transformer\"\nimport \"hw/systems/eos\"\n"
           "model m extends llama { %s; seq = 4096; experts = 256; top_k = 8; moe_ffn = 2048; shared_experts = 1; "
           "layers = 61; pattern = [3 * mla_layer, 58 * mla_moe_layer] }\n"
           "plan p { tp = 1; pp = 8; ep = 8; micro_batch = 1; global_batch = 64; dtype = bf16; "
           "layer_partition = balanced }\n"
           "scenario s { model = m; cluster = eos { nodes = 64 }; plan = p }\n",
           DSV3);
  Fx *x = fx_open(t);
  assert_int_equal(fx_lower(x, "s"), 0);
  expect_near(x->r.params_total, total, 1e-12, "DeepSeek-V3 parameters");
  expect_near(x->r.params_active, active, 1e-12, "DeepSeek-V3 active parameters");
  assert_true(fabs(total / 671e9 - 1) < 0.001 && fabs(active / 37e9 - 1) < 0.02); /* the published figures */
  fx_close(x);
}

/* Activation bytes of one layer (4 layers less 2, halved: the embedding's and head's cancel;
 * 1F1B with pp = 1 keeps one micro-batch). */
static double act_per_layer(const char *model, const char *plan) {
  Fx *a = run(model, 4, plan, "", ""), *b = run(model, 2, plan, "", "");
  double d = (a->r.memory[RM_ACTIVATIONS] - b->r.memory[RM_ACTIVATIONS]) / 2;
  fx_close(a);
  fx_close(b);
  return d;
}

TEST(mla_activations) {
  /* bf16, per token: the inputs of ln1, q_down, kv_down (h each), q_norm and q_up (q_lora),
   * kv_norm and kv_up (kv_lora); flash's Q (heads x 192), K (192) and V (128), O (128) and
   * its fp32 log-sum-exp (4 bytes a head), which proj keeps as its input; ln2, up (h), the
   * swiglu (2 ffn) and down (ffn) */
  double H = 7168, ql = 1536, kvl = 512, h = 128, dqk = 192, dv = 128, F = 18432, s = 4096;
  double el = 5 * H + 2 * ql + 2 * kvl + h * dqk + h * (dqk + dv) + h * dv + 3 * F;
  double none = s * (2 * el + 4 * h);
  expect_near(act_per_layer(DSV3 "; seq = 4096", "tp = 1; global_batch = 8; recompute = none"), none, 1e-12, "none");
  expect_near(act_per_layer(DSV3 "; seq = 4096", "tp = 1; global_batch = 8; recompute = selective"), none - s * 4 * h,
              1e-12, "selective: less the log-sum-exp (O stays, proj's input)");
  expect_near(act_per_layer(DSV3 "; seq = 4096", "tp = 1; global_batch = 8; recompute = full"), s * H * 2, 1e-12,
              "full: the layer's input");
}

/* ========================================================================================= */
/* Sliding window, sinks, packed documents                                                   */
/* ========================================================================================= */

/* GPT-OSS-120B's attention (huggingface.co/openai/gpt-oss-120b config.json: hidden_size 2880,
 * num_attention_heads 64, num_key_value_heads 8, head_dim 64, sliding_window 128). */
#define OSS \
  "hidden = 2880; heads = 64; kv_heads = 8; head_dim = 64; ffn = 2880; moe_ffn = 2880; experts = 8; top_k = 4; " \
  "vocab = 201088; bias = true; sliding_window = 128; seq = 4096"

TEST(window_attention_flops) {
  /* attention FLOPs per token: 2 (qk + v dims) heads per attended key; a causal window of w
   * keys over s: 2 s w - w^2 pairs per sequence in Megatron's whole-square convention (s^2 at
   * w = s), so per token (2 s w - w^2) / s keys */
  double s = 4096, w = 128, h = 64, d = 64;
  double full = layer_flops_per_token(OSS "; layer = gpt_oss_full_layer", "tp = 1; global_batch = 8", 8 * s);
  double slid = layer_flops_per_token(OSS "; layer = gpt_oss_sliding_layer", "tp = 1; global_batch = 8", 8 * s);
  expect_near(full - slid, 4 * h * d * (s - (2 * s * w - w * w) / s), 1e-9, "full less sliding attention FLOPs");
  Fx *a = run(OSS "; layer = gpt_oss_full_layer", 2, "tp = 1; global_batch = 8", "", "");
  Fx *b = run(OSS "; layer = gpt_oss_sliding_layer", 2, "tp = 1; global_batch = 8", "", "");
  GId fa = op_call(a, "attn", RTK_FLASH), fb = op_call(b, "attn", RTK_FLASH);
  expect_near(arg(b, fb, 8), 128, 0, "window argument");
  expect_near(arg(b, fb, 9), 1, 0, "sinks argument");
  assert_true(a->vals[fa] > 3 * b->vals[fb]); /* ~4160 keys a block against ~190 */
  /* the sinks: one parameter per head and layer; the same sinks in both */
  expect_near(a->r.memory[RM_WEIGHTS], b->r.memory[RM_WEIGHTS], 0, "weights: the window adds none");
  /* flash with a window at least the sequence is full attention */
  const RtGpu *g = h100(a);
  assert_non_null(g);
  RtCost f = rt_flash_attention(g, RT_BF16, 2, 4096, 64, 8, 64, 1);
  RtCost fw = rt_flash_attention_ex(g, RT_BF16, 2, 4096, 64, 8, 64, 64, 1, 4096, 0);
  expect_near(fw.fwd, f.fwd, 1e-12, "window = seq, forward");
  expect_near(fw.bwd, f.bwd, 1e-12, "window = seq, backward");
  RtCost fs = rt_flash_attention_ex(g, RT_BF16, 2, 4096, 64, 8, 64, 64, 1, 0, 1);
  assert_true(fs.fwd >= f.fwd && fs.fwd < f.fwd * 1.001); /* sinks: a few bytes */
  fx_close(a);
  fx_close(b);
}

/* Context parallelism as Transformer Engine's p2p ring runs it: on 2 ranks, half the pairs of
 * the causal call over the sequence (the steps' share, at that call's rate), each step's output
 * rescaled into O (one pass), dQ and dK, dV summed per step; K and V (4 MiB: 2 x 2048 tokens x
 * 4 heads x 128 x 2 bytes) hop once under the first step (a quarter of the call), K, V and their
 * gradients once under its backward, and the last dK, dV hop is exposed. */
TEST(cp_ring_attention) {
  const char *m = "hidden = 2048; heads = 16; kv_heads = 4; head_dim = 128; ffn = 5632; vocab = 32000; seq = 4096";
  Fx *x = run(m, 2, "tp = 1; cp = 2; global_batch = 8", "", "");
  const RtGpu *g = x->l.g.gpu;
  RtCost whole = rt_flash_attention_ex(g, RT_BF16, 1, 4096, 16, 4, 128, 128, 1, 0, 0);
  double add = rt_add(g, RT_BF16, 2048.0 * 16 * 128).fwd, addkv = rt_add(g, RT_BF16, 2048.0 * 4 * 256).fwd;
  expect_near(op_time(x, "attn", false), whole.fwd / 2 + 2 * add, 1e-12, "forward: half the pairs, a rescale a step");
  expect_near(op_time(x, "attn", true), whole.bwd / 2 + 2 * (add + addkv), 1e-12,
              "backward: half the pairs, dQ and dK, dV summed a step");
  double kv = 2 * 2048.0 * 4 * 128 * 2;
  double hop = call_val(x, RTK_P2P, "attn", 0, kv), hop2 = call_val(x, RTK_P2P, "attn", 0, 2 * kv);
  double cf = op_time(x, "attn cp kv exchange", false), cb = op_time(x, "attn cp kv exchange", true);
  expect_near(cf, fmax(0, hop - whole.fwd / 4), 1e-12, "forward: the hop under the first step");
  expect_near(cb, fmax(0, hop2 - whole.bwd / 4) + hop, 1e-12, "backward: the last dK, dV hop exposed");
  assert_true(cb >= hop && hop > 0);
  fx_close(x);
  /* one rank: the call alone */
  x = run(m, 2, "tp = 1; cp = 1; global_batch = 8", "", "");
  GId at = op_call(x, "attn", RTK_FLASH);
  expect_near(op_time(x, "attn", false), x->vals[at], 0, "cp = 1: the whole call");
  fx_close(x);
  /* host-bound at 1 s a launch, a layer's launches: on 2 ranks 3 more forward (the steps and
   * the rescales beyond the one call) and the kv exchange's, and those again backward with the
   * 2 more of the steps' sums (one micro-batch each) */
  const char *host = "framework h { launch_overhead = 1 s }";
  double per[2];
  for (int cp = 1; cp <= 2; cp++) {
    char plan[96];
    snprintf(plan, sizeof plan, "tp = 1; cp = %d; global_batch = %d", cp, 8 / cp);
    Fx *a = run(m, 4, plan, host, "framework = h"), *b = run(m, 2, plan, host, "framework = h");
    per[cp - 1] = (a->r.iteration - b->r.iteration) / 2;
    fx_close(a), fx_close(b);
  }
  expect_near(per[1] - per[0], 2 * (3 + 1) + 2, 1e-2, "the ring's host launches");
}

TEST(packed_documents) {
  /* documents of D tokens: s / D sequences of D, D^2 pairs each: per token 2 (d + d) h D */
  double s = 4096, D = 512, h = 32, d = 128;
  const char *q = "hidden = 4096; heads = 32; kv_heads = 8; head_dim = 128; ffn = 12288; vocab = 151936; seq = 4096";
  char m[512];
  snprintf(m, sizeof m, "%s; document = 512", q);
  double full = layer_flops_per_token(q, "tp = 1; global_batch = 8", 8 * s);
  double packed = layer_flops_per_token(m, "tp = 1; global_batch = 8", 8 * s);
  expect_near(full - packed, 4 * h * d * (s - D), 1e-9, "attention FLOPs within documents");
  Fx *x = run(m, 2, "tp = 2; global_batch = 8", "", "");
  GId fa = op_call(x, "attn", RTK_FLASH);
  expect_near(arg(x, fa, 1), 1 * s / D, 0, "sequences: documents");
  expect_near(arg(x, fa, 2), D, 0, "sequence length: the document's");
  fx_close(x);
}

/* ========================================================================================= */
/* QK-norm                                                                                   */
/* ========================================================================================= */

TEST(qk_norm_split_over_tp) {
  /* Qwen3-8B's attention (huggingface.co/Qwen/Qwen3-8B config.json: hidden 4096, 32 heads, 8
   * kv heads, head_dim 128): the norms run over head_dim on this rank's heads */
  const char *q = "hidden = 4096; heads = 32; kv_heads = 8; head_dim = 128; ffn = 12288; vocab = 151936; seq = 4096; "
                  "layer = qwen3_layer";
  int tps[] = {1, 4, 8, 16};
  for (int i = 0; i < 4; i++) {
    char plan[96];
    snprintf(plan, sizeof plan, "tp = %d; sequence_parallel = true; global_batch = 8", tps[i]);
    if (tps[i] == 16) continue; /* 32 heads on 16 ranks: eos has 8 GPUs a node; tp <= 8 */
    Fx *x = run(q, 2, plan, "", "");
    GId qn = op_call(x, "q_norm", RTK_RMSNORM), kn = op_call(x, "k_norm", RTK_RMSNORM);
    double kv = 8.0 / tps[i] < 1 ? 1 : 8.0 / tps[i];
    expect_near(arg(x, qn, 1), 4096.0 * 32 / tps[i], 0, "q_norm rows: tokens x local heads");
    expect_near(arg(x, qn, 2), 128, 0, "q_norm width: head_dim");
    expect_near(arg(x, kn, 1), 4096.0 * kv, 0, "k_norm rows: tokens x local kv heads");
    fx_close(x);
  }
}

/* ========================================================================================= */
/* GQA in the unfused path                                                                   */
/* ========================================================================================= */

TEST(gqa_unfused_expand) {
  const char *mha = "hidden = 4096; heads = 32; kv_heads = 32; head_dim = 128; ffn = 11008; vocab = 32000; seq = 2048; "
                    "attention = unfused";
  const char *gqa = "hidden = 4096; heads = 32; kv_heads = 8; head_dim = 128; ffn = 11008; vocab = 32000; seq = 2048; "
                    "attention = unfused";
  Fx *a = run(mha, 2, "tp = 1; global_batch = 8", "", ""), *b = run(gqa, 2, "tp = 1; global_batch = 8", "", "");
  GId ca = op_call(a, "attn", RTK_ATTENTION), cb = op_call(b, "attn", RTK_ATTENTION);
  expect_near(arg(b, cb, 6), 8, 0, "kv_heads argument");
  /* the expand: two copies reading 8 and writing 32 heads of K and V, each way */
  double bytes = 2048.0 * (8 + 32) * (128 + 128) * 2, bw = 3.35e12;
  double e = b->vals[cb] - a->vals[ca];
  assert_true(e > bytes / bw * 0.5 && e < bytes / bw * 2 + 10e-6);
  const RtGpu *g = h100(a);
  RtCost m = rt_attention(g, RT_BF16, 1, 2048, 32, 128, 1);
  RtCost x = rt_attention_ex(g, RT_BF16, 1, 2048, 32, 32, 128, 128, 1);
  expect_near(x.fwd, m.fwd, 0, "kv = heads, dv = d: rt_attention");
  /* what is kept: the expanded K and V, so as much as multi-head attention keeps */
  expect_near(act_per_layer(gqa, "tp = 1; global_batch = 8"), act_per_layer(mha, "tp = 1; global_batch = 8"), 0,
              "unfused GQA keeps the expanded K and V");
  RtCost v = rt_attention_ex(g, RT_BF16, 1, 2048, 32, 32, 192, 128, 1);
  RtCost big = rt_attention_ex(g, RT_BF16, 1, 2048, 32, 32, 192, 192, 1);
  assert_true(v.fwd < big.fwd);
  fx_close(a);
  fx_close(b);
}

/* ========================================================================================= */
/* Mamba-2                                                                                   */
/* ========================================================================================= */

/* Nemotron-H-8B's Mamba layers (arXiv 2504.03624 Table 1; huggingface.co/nvidia/
 * Nemotron-H-8B-Base-8K config.json: hidden 4096, mamba_num_heads 128, mamba_head_dim 64,
 * ssm_state_size 128, n_groups 8, conv_kernel 4, chunk_size 128). */
#define NH \
  "hidden = 4096; heads = 32; kv_heads = 8; ffn = 21504; vocab = 131072; seq = 8192; activation = relu2; " \
  "mamba_heads = 128; mamba_head_dim = 64; mamba_state = 128; mamba_groups = 8; mamba_chunk = 128; mamba_conv = 4"
#define NH_MAMBA NH "; layer = mamba2_layer"

TEST(mamba2_flops_per_token) {
  double H = 4096, nh = 128, P = 64, N = 128, G = 8, Q = 128, W = 4, di = nh * P;
  double in_proj = H * (2 * di + 2 * G * N + nh), out_proj = di * H;
  /* SSD (arXiv 2405.21060 Section 6) per token: CB^T 2QNG, diagonal blocks 2QPH, chunk states
   * and their outputs 4NPH, state passing 2NPH/Q; the conv 2 W per channel */
  double ssd = 2 * Q * N * G + 2 * Q * P * nh + 4 * N * P * nh + 2 * N * P * nh / Q;
  double want = 2 * (in_proj + out_proj) + ssd + 2 * W * (di + 2 * G * N);
  double got = layer_flops_per_token(NH_MAMBA, "tp = 1; global_batch = 8", 8 * 8192);
  expect_near(got, want, 1e-12, "mamba2_layer forward FLOPs per token");
  got = layer_flops_per_token(NH_MAMBA, "tp = 4; sequence_parallel = true; global_batch = 8", 8 * 8192);
  expect_near(got, want, 1e-12, "mamba2_layer forward FLOPs per token, tp 4");
  expect_near(rt_ssd_flops(8192, nh, P, N, G, Q), 8192 * ssd, 1e-12, "rt_ssd_flops");
}

TEST(hybrid_layers_flops_per_token) {
  /* Nemotron-H's other layers: attention alone (GQA, no MLP), the relu2 MLP alone, and (Nemotron
   * 3) routed experts alone: router h E, top_k experts of h ffn + ffn h (relu2: ungated) */
  double H = 4096, h = 32, kv = 8, dh = 128, F = 21504, s = 8192, E = 64, k = 6, mf = 1856;
  double attn =
      layer_flops_per_token(NH "; head_dim = 128; layer = attention_only_layer", "tp = 1; global_batch = 8", 8 * s);
  expect_near(attn, 2 * (H * (h + 2 * kv) * dh + h * dh * H) + 4 * s * h * dh, 1e-12, "attention_only_layer");
  double mlp = layer_flops_per_token(NH "; layer = mlp_only_layer", "tp = 1; global_batch = 8", 8 * s);
  expect_near(mlp, 2 * 2 * H * F, 1e-12, "mlp_only_layer");
  double moe = layer_flops_per_token(NH "; experts = 64; top_k = 6; moe_ffn = 1856; layer = moe_only_layer",
                                     "tp = 1; ep = 8; global_batch = 8", 8 * s);
  expect_near(moe, 2 * H * E + 2 * k * 2 * H * mf, 1e-12, "moe_only_layer");
}

TEST(mamba2_activations) {
  /* bf16, per token, as mamba_split_conv1d_scan_combined keeps them: ln and in_proj's inputs
   * (h each), the conv's (x, B, C), the scan's dt (a head each), the gated norm's two inputs
   * (the scan's output and z) and out_proj's (d_inner each) */
  double H = 4096, nh = 128, P = 64, N = 128, G = 8, di = nh * P, C = di + 2 * G * N, s = 8192;
  double want = s * 2 * (2 * H + C + nh + 2 * di + di);
  expect_near(act_per_layer(NH_MAMBA, "tp = 1; global_batch = 8"), want, 1e-12, "mamba2_layer activations");
  /* tp = 4 with sp: all of it split over the ranks */
  expect_near(act_per_layer(NH_MAMBA, "tp = 4; sequence_parallel = true; global_batch = 8"), want / 4, 1e-12,
              "mamba2_layer activations, tp 4 + sp");
}

TEST(mamba2_split_and_uncalibrated) {
  Fx *x = run(NH_MAMBA, 2, "tp = 4; sequence_parallel = true; global_batch = 8", "", "");
  GId s = op_call(x, "scan", RTK_SSD), c = op_call(x, "conv", RTK_CONV1D);
  expect_near(arg(x, s, 1), 8192, 0, "scan tokens");
  expect_near(arg(x, s, 2), 32, 0, "scan heads / tp");
  expect_near(arg(x, s, 5), 2, 0, "scan groups / tp");
  expect_near(arg(x, c, 2), (8192.0 + 2 * 8 * 128) / 4, 0, "conv channels / tp");
  /* no table covers them: the calls do not count as calibrated */
  assert_int_equal((unsigned)x->vals[s + 2] & RT_CALIBRATED, 0);
  assert_int_equal((unsigned)x->vals[c + 2] & RT_CALIBRATED, 0);
  assert_int_equal(calls_of(x, RTK_SSD), 1);
  /* the roofline at Nemotron-H's shapes on an H100, by the closed form */
  const RtGpu *g = h100(x);
  RtCost k = rt_ssd(g, RT_BF16, 8192, 128, 64, 128, 8, 128);
  double f = rt_ssd_flops(8192, 128, 64, 128, 8, 128);
  double mem = 2 * (2 * 8192.0 * 128 * 64 + 2 * 8192.0 * 8 * 128) +
               4 * (3 * 8192.0 * 128 + 4 * 64.0 * 128 * 64 * 128 + 2 * 8192.0 * 128 * 8);
  double want = fmax(f / (g->peak[RT_BF16] * rt_sustained(g, RT_BF16)), mem / g->memory_bandwidth);
  assert_true(k.fwd >= want && k.fwd <= want * 1.5 + 5 * 2.5e-6);
  assert_int_equal(k.flags & RT_CALIBRATED, 0);
  fx_close(x);
}

/* Nemotron-H-8B's Mamba layers at micro-batch mb on one Eos node, in a stack whose host takes
 * `launch` per kernel launch, with `more` plan fields. */
static Fx *mamba_mb(int layers, int mb, const char *launch, const char *more) {
  char t[2048];
  snprintf(t, sizeof t,
           "import \"stdlib/transformer\"\nimport \"hw/systems/eos\"\nframework f { launch_overhead = %s }\n"
           "model m extends llama { " NH_MAMBA "; layers = %d }\n"
           "plan p { pp = 1; tp = 1; micro_batch = %d; global_batch = %d; dtype = bf16; %s }\n"
           "scenario s { model = m; cluster = eos { nodes = 1 }; plan = p; framework = f }\n",
           launch, layers, mb, 8 * mb, more);
  Fx *x = fx_open(t);
  if (fx_lower(x, "s") != 0) fail_msg("lowering failed:\n%s", cap_text(&x->cap));
  return x;
}

/* The forward seconds of the layer's operator `name`, or -1 when it has none. */
static double op_fwd(const Fx *x, const char *name) {
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++)
    if (!strcmp(x->l.ops[LB_LAYER][i].name, name)) return x->vals[x->l.ops[LB_LAYER][i].fwd];
  return -1;
}

/* MambaMixer's layout copies (z x B C dt and y, at micro-batch > 1 only), the gated norm as
 * one fused kernel over t x d_inner, and the host launches of a Mamba layer: ln, in_proj, conv,
 * the mixer's four on A_log and dt_bias, the scan's five Triton kernels, gnorm, out_proj and
 * the residual add, 15, and the two copies at micro-batch 2; the backward as many and the 15
 * more of the scan's 20 kernels.  With 1 s a launch every kernel is host-bound: two layers
 * more add 2 x (2n + 15) seconds, and milliseconds of gradient reduction; in CUDA graphs a
 * layer is one launch each way, 2 x 2 s. */
TEST(mamba2_layout_norm_launches) {
  double nh = 128, P = 64, N = 128, G = 8, di = nh * P, t = 2 * 8192.0;
  Fx *x = mamba_mb(2, 2, "0 us", "");
  double zx = 2.0 / 3 * t * (2 * di + 2 * G * N + nh), y = 2.0 / 3 * t * di;
  double want = call_val(x, RTK_ADD, "scan", 1, zx) + call_val(x, RTK_ADD, "scan", 1, y);
  expect_near(op_fwd(x, "scan layout"), want, 1e-15, "scan layout copies");
  GId gn = op_call(x, "gnorm", RTK_SWIGLU);
  expect_near(arg(x, gn, 1), t * di, 0, "gated norm elements");
  fx_close(x);
  x = mamba_mb(2, 1, "0 us", "");
  assert_true(op_fwd(x, "scan layout") < 0); /* a (seq, 1, d) tensor is already (1, seq, d) */
  fx_close(x);
  for (int mb = 1; mb <= 2; mb++) {
    Fx *a = mamba_mb(4, mb, "1 s", ""), *b = mamba_mb(2, mb, "1 s", "");
    double n = ((a->r.iteration - b->r.iteration) / 2 - 15) / 2;
    expect_near(n, mb == 1 ? 15 : 17, 1e-3, "a Mamba layer's forward launches"); /* + the dp reduction's ms */
    fx_close(a), fx_close(b);
  }
  Fx *a = mamba_mb(4, 2, "1 s", "cuda_graphs = true"), *b = mamba_mb(2, 2, "1 s", "cuda_graphs = true");
  expect_near((a->r.iteration - b->r.iteration) / 2, 2, 1e-2, "a captured Mamba layer's launches");
  fx_close(a), fx_close(b);
}

/* Scenario text whose lowering fails with a message containing `want`. */
static void lowering_fails(const char *model, const char *plan, const char *want) {
  char t[2048];
  snprintf(t, sizeof t,
           "import \"stdlib/transformer\"\nimport \"hw/systems/eos\"\n"
           "model m extends llama { %s; layers = 2 }\n"
           "plan p { pp = 1; micro_batch = 1; global_batch = 8; dtype = bf16; %s }\n"
           "scenario s { model = m; cluster = eos { nodes = 1 }; plan = p }\n",
           model, plan);
  Fx *x = fx_open(t);
  assert_int_not_equal(fx_lower(x, "s"), 0);
  if (!strstr(cap_text(&x->cap), want)) fail_msg("want `%s`, got:\n%s", want, cap_text(&x->cap));
  fx_close(x);
}

TEST(lowering_errors) {
  lowering_fails(NH_MAMBA, "tp = 1; cp = 2",
                 "ssd `scan`: context parallelism (plan.cp = 2) over a Mamba-2 scan is not modelled");
  lowering_fails("hidden = 4096; heads = 32; ffn = 11008; vocab = 32000; seq = 2048; document = 4096", "tp = 1",
                 "attention `attn`: document = 4096 tokens is longer than the sequence, seq = 2048");
  lowering_fails("hidden = 4096; heads = 32; ffn = 11008; vocab = 32000; seq = 2048; frozen = true", "tp = 1",
                 "model `m` trains no parameter (frozen = true and no LoRA adapters: lora_rank = 0)");
}

TEST(mamba2_errors) {
  const char *t = "import \"stdlib/transformer\"\nimport \"hw/systems/eos\"\n"
                  "model m extends llama { hidden = 4096; heads = 32; ffn = 21504; vocab = 131072; seq = 8192; "
                  "mamba_heads = 128; mamba_head_dim = 64; mamba_state = 128; mamba_groups = 2; mamba_chunk = 128; "
                  "mamba_conv = 4; layer = mamba2_layer; layers = 2 }\n"
                  "plan p { tp = 4; pp = 1; micro_batch = 1; global_batch = 8; dtype = bf16 }\n"
                  "scenario s { model = m; cluster = eos { nodes = 1 }; plan = p }\n";
  Fx *x = fx_open(t);
  assert_int_not_equal(fx_lower(x, "s"), 0);
  if (!strstr(cap_text(&x->cap), "heads = 128 and groups = 2 must be multiples of plan.tp = 4"))
    fail_msg("got:\n%s", cap_text(&x->cap));
  fx_close(x);
}

/* ========================================================================================= */
/* Squared ReLU, grouped GEMM                                                                */
/* ========================================================================================= */

TEST(relu2_is_an_ungated_pass) {
  Fx *x = run(NH "; layer = mlp_only_layer", 2, "tp = 1; global_batch = 8", "", "");
  GId a = op_call(x, "act", RTK_GELU), up = op_call(x, "up", RTK_LINEAR);
  expect_near(arg(x, a, 1), 8192.0 * 21504, 0, "relu2 elements: ffn, ungated");
  expect_near(arg(x, up, 3), 21504, 0, "up projection: ffn outputs (no gate)");
  fx_close(x);
}

/* gpt-oss's clamped SwiGLU: the SwiGLU kernel plus the unfused element-wise passes, 13 n more
 * elements read and written forward and 25 n backward (each costed as the add's 3 passes). */
TEST(clamped_swiglu_is_unfused) {
  const char *moe = "hidden = 4096; heads = 32; kv_heads = 8; ffn = 14336; moe_ffn = 14336; experts = 8; top_k = 2; "
                    "vocab = 32000; seq = 4096; layer = moe_layer; activation = clamped_swiglu";
  Fx *x = run(moe, 2, "tp = 1; ep = 4; global_batch = 8", "", "");
  double n = 2 * 4096.0 * 14336; /* each rank's pairs x ffn */
  double act = call_val(x, RTK_SWIGLU, "moe", 1, n);
  double f = call_val(x, RTK_ADD, "moe", 1, 13.0 / 3 * n), b = call_val(x, RTK_ADD, "moe", 1, 25.0 / 3 * n);
  double bmm1 = call_val(x, RTK_BMM, "moe", 3, 4096), bmm2 = call_val(x, RTK_BMM, "moe", 3, 14336);
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++)
    if (!strcmp(x->l.ops[LB_LAYER][i].name, "moe"))
      expect_near(x->vals[x->l.ops[LB_LAYER][i].fwd], bmm1 + bmm2 + act + f + call_val(x, RTK_ADD, "moe", 1, 2.0 / 3 * n),
                  1e-12, "forward: SwiGLU, 13 n more and the probabilities' weighting");
  assert_true(b > f && f > 0);
  fx_close(x);
}

/* Under a stack that fuses activations (Megatron-Core's bias_activation_fusion), the experts'
 * clamped SwiGLU is one fused kernel each way (weighted_bias_quick_geglu_impl): the SwiGLU's
 * bytes, no extra passes, and it keeps what the SwiGLU keeps. */
TEST(clamped_swiglu_fused_in_experts) {
  const char *base = "hidden = 4096; heads = 32; kv_heads = 8; ffn = 14336; moe_ffn = 14336; experts = 8; top_k = 2; "
                     "vocab = 32000; seq = 4096; layer = moe_layer; activation = ";
  const char *fw = "framework f { fused_kernels = [activation] }";
  char m[512];
  snprintf(m, sizeof m, "%sclamped_swiglu", base);
  Fx *x = run(m, 2, "tp = 1; ep = 4; global_batch = 8", fw, "framework = f");
  snprintf(m, sizeof m, "%sswiglu", base);
  Fx *y = run(m, 2, "tp = 1; ep = 4; global_batch = 8", fw, "framework = f");
  double n = 2 * 4096.0 * 14336;
  double act = call_val(x, RTK_SWIGLU, "moe", 1, n);
  double bmm1 = call_val(x, RTK_BMM, "moe", 3, 4096), bmm2 = call_val(x, RTK_BMM, "moe", 3, 14336);
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++)
    if (!strcmp(x->l.ops[LB_LAYER][i].name, "moe")) {
      expect_near(x->vals[x->l.ops[LB_LAYER][i].fwd], bmm1 + bmm2 + act, 1e-12, "forward: the GEMMs and one SwiGLU");
      expect_near(x->vals[x->l.ops[LB_LAYER][i].bwd], y->vals[y->l.ops[LB_LAYER][i].bwd], 1e-12, "backward: SwiGLU's");
    }
  expect_near(x->r.memory[RM_ACTIVATIONS], y->r.memory[RM_ACTIVATIONS], 1e-12, "activations: SwiGLU's");
  expect_near(x->r.iteration, y->r.iteration, 1e-12, "iteration: SwiGLU's");
  fx_close(x);
  fx_close(y);
}

/* Expert biases (bias = true): fc1's and fc2's per expert in the parameters; fc2's added
 * weighted by the probabilities in eager passes over pe * h elements, costed as the add's:
 * (5w + a + c) / 3a forward and (6w + 2c) / 3a backward, a the activation's bytes, w the
 * probabilities', c = a + w when they differ (casts). */
TEST(expert_biases) {
  const char *moe = "hidden = 4096; heads = 32; kv_heads = 8; ffn = 14336; moe_ffn = 14336; experts = 8; top_k = 2; "
                    "vocab = 32000; seq = 4096; layer = moe_layer";
  char m[512];
  snprintf(m, sizeof m, "%s; bias = true", moe);
  int L = 2;
  Fx *x = run(moe, L, "tp = 1; ep = 4; global_batch = 8", "", ""), *y = run(m, L, "tp = 1; ep = 4; global_batch = 8", "", "");
  /* attention's biases: qkv (4096 + 2 * 1024 outputs) and proj (4096); experts': 2 * 14336 + 4096 */
  double attn_b = (4096 + 2 * 1024) + 4096, exp_b = 8 * (2 * 14336 + 4096);
  expect_near(y->r.params_total - x->r.params_total, L * (attn_b + exp_b), 1e-12, "parameters: the biases");
  expect_near(y->r.params_active - x->r.params_active, L * (attn_b + 2 * (2 * 14336 + 4096)), 1e-12,
              "active parameters: top_k experts' biases");
  double ph = 2 * 4096.0 * 4096; /* the rank's pairs (4096 tokens x top_k 2) x hidden */
  double f = call_val(y, RTK_ADD, "moe bias", 1, 2 * ph);
  for (int i = 0; i < y->l.nops[LB_LAYER]; i++)
    if (!strcmp(y->l.ops[LB_LAYER][i].name, "moe bias")) {
      expect_near(y->vals[y->l.ops[LB_LAYER][i].fwd], f, 0, "forward: bf16 probabilities, 12 bytes an element");
      assert_true(y->vals[y->l.ops[LB_LAYER][i].bwd] > 0);
    }
  fx_close(y);
  Fx *z = run(m, L, "tp = 1; ep = 4; global_batch = 8; moe_router_dtype = fp32", "", "");
  call_val(z, RTK_ADD, "moe bias", 1, 28.0 / 6 * ph); /* 5*4 + 2 + (2 + 4) */
  call_val(z, RTK_ADD, "moe bias", 1, 36.0 / 6 * ph); /* 6*4 + 2 * (2 + 4) */
  fx_close(z);
  /* no biases: no pass */
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++) assert_string_not_equal(x->l.ops[LB_LAYER][i].name, "moe bias");
  fx_close(x);
}

/* The router's probabilities weight the experts' activation: inside the fused weighted SwiGLU
 * where the stack fuses activations, else one eager multiply over the n = pairs x ffn outputs
 * (a copy's bytes; backward twice that and a copy), keeping the n outputs: squared ReLU always. */
TEST(expert_probs_weighting) {
  const char *base = "hidden = 4096; heads = 32; kv_heads = 8; ffn = 14336; moe_ffn = 14336; experts = 8; top_k = 2; "
                     "vocab = 32000; seq = 4096; layer = moe_layer; activation = ";
  const char *fw = "framework f { fused_kernels = [activation] }";
  double n = 2 * 4096.0 * 14336;
  char m[512];
  snprintf(m, sizeof m, "%sswiglu", base);
  Fx *fused = run(m, 2, "tp = 1; ep = 4; global_batch = 8", fw, "framework = f");
  Fx *eager = run(m, 2, "tp = 1; ep = 4; global_batch = 8", "", "");
  snprintf(m, sizeof m, "%srelu2", base);
  Fx *relu2 = run(m, 2, "tp = 1; ep = 4; global_batch = 8", fw, "framework = f");
  assert_int_equal(count_add(fused, "moe", 2.0 / 3 * n), 0);
  assert_int_equal(count_add(eager, "moe", 2.0 / 3 * n), 1);
  assert_int_equal(count_add(eager, "moe", 2 * n), 1);
  assert_int_equal(count_add(relu2, "moe", 2.0 / 3 * n), 1);
  /* the eager multiply keeps its n bf16 inputs, in each of the 2 layers */
  expect_near(eager->r.memory[RM_ACTIVATIONS] - fused->r.memory[RM_ACTIVATIONS], 2 * n * 2, 1e-12, "kept y");
  fx_close(fused);
  fx_close(eager);
  fx_close(relu2);
  /* host-bound at 1 s a launch: one launch forward and one backward a layer, per local expert
   * (2) under SequentialMLP */
  const char *host = "framework h { launch_overhead = 1 s; moe_grouped_gemm = false }\n"
                     "framework hf extends h { fused_kernels = [activation] }\n"
                     "framework g extends h { moe_grouped_gemm = true }\n"
                     "framework gf extends g { fused_kernels = [activation] }";
  snprintf(m, sizeof m, "%sswiglu", base);
  const char *fws[4] = {"framework = h", "framework = hf", "framework = g", "framework = gf"};
  double it[4];
  for (int i = 0; i < 4; i++) {
    Fx *x = run(m, 2, "tp = 1; ep = 4; global_batch = 8", host, fws[i]);
    it[i] = x->r.iteration;
    fx_close(x);
  }
  expect_near(it[0] - it[1], 2 * 2 * 2, 1e-3, "sequential: a launch per local expert");
  expect_near(it[2] - it[3], 2 * 2, 1e-3, "grouped: one launch");
}

TEST(grouped_gemm) {
  const char *moe = "hidden = 4096; heads = 32; kv_heads = 8; ffn = 14336; moe_ffn = 14336; experts = 8; top_k = 2; "
                    "vocab = 32000; seq = 4096; layer = moe_layer";
  const char *fw = "framework f { moe_grouped_gemm = false }\nframework g { moe_grouped_gemm = true }";
  Fx *seq = run(moe, 2, "tp = 1; ep = 4; global_batch = 8", fw, "framework = f");
  Fx *grp = run(moe, 2, "tp = 1; ep = 4; global_batch = 8", fw, "framework = g");
  /* 2 local experts, 4096 * 2 / 2 tokens each */
  for (int i = 0; i < grp->l.nops[LB_LAYER]; i++)
    if (!strcmp(grp->l.ops[LB_LAYER][i].name, "moe")) {
      double fs = seq->vals[seq->l.ops[LB_LAYER][i].fwd], fg = grp->vals[grp->l.ops[LB_LAYER][i].fwd];
      double act = call_val(seq, RTK_SWIGLU, "moe", 1, 2 * 4096.0 * 14336);
      double l1 = call_val(seq, RTK_LINEAR, "moe", 2, 4096), l2 = call_val(seq, RTK_LINEAR, "moe", 2, 14336);
      double b1 = call_val(grp, RTK_BMM, "moe", 3, 4096), b2 = call_val(grp, RTK_BMM, "moe", 3, 14336);
      double w = call_val(seq, RTK_ADD, "moe", 1, 2.0 / 3 * 2 * 4096 * 14336); /* the probabilities, eager */
      expect_near(fs, 2 * (l1 + l2) + act + w, 1e-12, "sequential: one GEMM per local expert");
      expect_near(fg, b1 + b2 + act + w, 1e-12, "grouped: one batched GEMM");
      expect_near(call_val(grp, RTK_BMM, "moe", 1, 2), b1, 0, "grouped: the 2 local experts in one call");
    }
  assert_int_equal(calls_of(seq, RTK_BMM), 0);
  fx_close(seq);
  fx_close(grp);
}

/* ========================================================================================= */
/* LoRA                                                                                      */
/* ========================================================================================= */

TEST(lora_trainable_parameters) {
  /* Qwen3-8B's layer shapes; LoRA of rank 16 on every linear of the layer (NeMo's default
   * targets linear_qkv, linear_proj, linear_fc1, linear_fc2), the base frozen */
  const char *q = "hidden = 4096; heads = 32; kv_heads = 8; head_dim = 128; ffn = 12288; vocab = 151936; seq = 4096";
  char m[512];
  snprintf(m, sizeof m, "%s; frozen = true; lora_rank = 16", q);
  int L = 4;
  Fx *base = run(q, L, "tp = 1; global_batch = 8", "", ""), *lora = run(m, L, "tp = 1; global_batch = 8", "", "");
  /* r (in + out) a linear: qkv 4096 -> 6144, proj 4096 -> 4096, up 4096 -> 24576, down 12288 -> 4096 */
  double r = 16, per_layer = r * ((4096 + 6144) + (4096 + 4096) + (4096 + 24576) + (12288 + 4096));
  double grad_el = base->r.memory[RM_GRADIENTS] / (base->r.memory[RM_WEIGHTS] / 2); /* bytes a gradient */
  expect_near(lora->r.memory[RM_GRADIENTS], L * per_layer * grad_el, 1e-12, "gradients: the adapters' alone");
  expect_near(lora->r.memory[RM_WEIGHTS], base->r.memory[RM_WEIGHTS] + L * per_layer * 2, 1e-12,
              "weights: the base's and the adapters'");
  expect_near(lora->r.memory[RM_OPTIMIZER], L * per_layer * 12, 1e-12, "optimizer: fp32 master, m, v of the adapters");
  /* backward: the frozen linears run no weight-gradient GEMM */
  for (int i = 0; i < base->l.nops[LB_LAYER]; i++)
    if (!strcmp(base->l.ops[LB_LAYER][i].name, "down")) {
      double bb = base->vals[base->l.ops[LB_LAYER][i].bwd], lb = lora->vals[lora->l.ops[LB_LAYER][i].bwd];
      /* the data gradient (a linear(t, out, in) forward) and the adapters' backward */
      double dgrad = call_val(lora, RTK_LINEAR, "down", 2, 4096); /* t x 4096 x 12288 */
      assert_true(lb < bb);
      assert_true(lb > dgrad);
    }
  fx_close(base);
  fx_close(lora);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mla_flops_per_token),
      cmocka_unit_test(mla_unsplit_down_projections),
      cmocka_unit_test(mla_activations),
      cmocka_unit_test(mla_deepseek_v3_parameters),
      cmocka_unit_test(window_attention_flops),
      cmocka_unit_test(cp_ring_attention),
      cmocka_unit_test(packed_documents),
      cmocka_unit_test(qk_norm_split_over_tp),
      cmocka_unit_test(gqa_unfused_expand),
      cmocka_unit_test(mamba2_flops_per_token),
      cmocka_unit_test(hybrid_layers_flops_per_token),
      cmocka_unit_test(mamba2_activations),
      cmocka_unit_test(mamba2_split_and_uncalibrated),
      cmocka_unit_test(mamba2_layout_norm_launches),
      cmocka_unit_test(mamba2_errors),
      cmocka_unit_test(lowering_errors),
      cmocka_unit_test(relu2_is_an_ungated_pass),
      cmocka_unit_test(clamped_swiglu_is_unfused),
      cmocka_unit_test(clamped_swiglu_fused_in_experts),
      cmocka_unit_test(expert_biases),
      cmocka_unit_test(expert_probs_weighting),
      cmocka_unit_test(grouped_gemm),
      cmocka_unit_test(lora_trainable_parameters),
  };
  return RUN_TESTS(tests);
}
