/* test_lower.c - unit tests of compiler/lower/lower.c (with graph.c and the runtime's kernel table):
 * scenarios written as text, checked by sema, lowered to the cost graph, evaluated, read back
 * as a Report.
 *
 *   activations  per-layer activation memory against Korthikanti et al. 2022 (arXiv
 *                2205.05198) Table 2, isolated by differencing models that differ only in
 *                `layers`; full and selective recompute's working set
 *   operators    the operator lists of the stdlib's layer blocks, with and without tensor,
 *                sequence and expert parallelism
 *   shapes       the arguments of the kernel calls under tp: column/row linears, heads, GQA
 *   placement    the (size, stride) of collectives and rt_group_layout's nodes x gpus
 *   schedules    the pipeline kernel against the closed forms, directly and through a graph
 *   breakdown    the report's parts add up to the iteration for many plans
 *   errors       plans that only lowering rejects, a plan that does not fit
 *   determinism  evaluation twice, lowering twice, shared identical nodes */
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
#include "lower/graph.h"
#include "lower/hw.h"
#include "llmp_kernels.h"
#include "lower/lower.h"
#include "report/report.h"
#include "front/sema.h"

#include "support.h"
#include "support_lower.h"

/* Relative 1e-12 (the figures below are exact integers or dyadic; the tolerance only
 * absorbs an evaluation order that differs from the formula's). */
static void expect_near(double got, double want, const char *what) {
  if (!(fabs(got - want) <= 1e-12 * fabs(want)))
    fail_msg("%s: got %.17g, want %.17g (difference %.3g)", what, got, want, got - want);
}

/* --- a scenario from text ---------------------------------------------------------------- */

/* The text of one scenario `s`: model m extends `base` with `model`, plan p with `plan`, on
 * `cluster` (an expression: `selene { nodes = 1 }`), after the imports and `extra`. */
static char *scenario_text(const char *extra, const char *base, const char *model, const char *cluster,
                           const char *plan) {
  const char *fmt = "import \"stdlib/transformer\"\n"
                    "import \"hw/systems/selene\"\n"
                    "import \"hw/systems/perlmutter\"\n"
                    "import \"hw/systems/eos\"\n"
                    "import \"hw/systems/gb200_nvl72\"\n"
                    "%s\n"
                    "model m%s%s { %s }\n"
                    "plan p { %s }\n"
                    "scenario s { model = m; cluster = %s; plan = p }\n";
  const char *ext = base ? " extends " : "";
  int n = snprintf(NULL, 0, fmt, extra, ext, base ? base : "", model, plan, cluster);
  char *t = malloc((size_t)n + 1);
  assert_non_null(t);
  snprintf(t, (size_t)n + 1, fmt, extra, ext, base ? base : "", model, plan, cluster);
  return t;
}

/* Opens, lowers and evaluates scenario `s` of text t (malloc'd; freed here). */
static Fx *run_text(char *t) {
  Fx *x = fx_open(t);
  free(t);
  fx_eval(x, "s");
  return x;
}

/* Opens, lowers and evaluates scenario `s` of scenario_text(...). */
static Fx *run_scenario(const char *extra, const char *base, const char *model, const char *cluster, const char *plan) {
  return run_text(scenario_text(extra, base, model, cluster, plan));
}

/* --- reading the graph ------------------------------------------------------------------- */

/* The call of kernel k labelled `label` (the first, if shared); fails when there is none. */
static GId find_call(const Lowered *l, RtKernel k, const char *label) {
  for (int i = 0; i < l->g.nn; i++) {
    const GNode *n = &l->g.n[i];
    if (n->op == GN_CALL && n->kernel == k && n->label && !strcmp(n->label, label)) return i;
  }
  fail_msg("no %s call labelled `%s` in the graph", rt_kernels[k].name, label);
  return -1;
}

/* The kernel call behind operator `name` of a block (its forward node): lookups by label would
 * miss calls that hash-consing shares with an earlier identical one (proj's all-reduce and
 * qkv's backward one move the same bytes; up and down can have the same shape). */
static GId op_call(const Lowered *l, int block, const char *name, RtKernel k) {
  for (int i = 0; i < l->nops[block]; i++)
    if (!strcmp(l->ops[block][i].name, name)) {
      GId id = l->ops[block][i].fwd;
      const GNode *n = &l->g.n[id];
      if (n->op != GN_CALL || n->kernel != k)
        fail_msg("operator `%s`: its forward is node %d, a %s, not a %s call", name, id, gop_name((GOp)n->op),
                 rt_kernels[k].name);
      return id;
    }
  fail_msg("no operator `%s` in block %d", name, block);
  return -1;
}

static int count_calls(const Lowered *l, RtKernel k) {
  int c = 0;
  for (int i = 0; i < l->g.nn; i++) c += l->g.n[i].op == GN_CALL && l->g.n[i].kernel == k;
  return c;
}

/* Argument i of call `id`: it must be a constant of the graph. */
static double const_arg(const Lowered *l, GId id, int i) {
  const GNode *n = &l->g.n[id];
  assert_int_equal(n->op, GN_CALL);
  assert_true(i < n->nargs);
  double v;
  if (!g_is_const(&l->g, l->g.args[n->arg0 + i], &v))
    fail_msg("argument %d (%s) of the %s call `%s` is not a constant", i, rt_kernels[n->kernel].argnames,
             rt_kernels[n->kernel].name, n->label);
  return v;
}

/* The evaluated value of argument i of call id. */
static double arg_val(const Fx *x, GId id, int i) {
  const GNode *n = &x->l.g.n[id];
  return x->vals[x->l.g.args[n->arg0 + i]];
}

/* ========================================================================================= */
/* 1. Activation memory: Korthikanti et al. 2022, Table 2                                    */
/* ========================================================================================= */

/* s = 2048, b = 2, h = 2048, a = 16: 5as/h = 80.  Everything below is an exact integer. */
enum { KS = 2048, KB = 2, KH = 2048, KA = 16 };
#define SBH ((double)KS * KB * KH)
#define FIVE_AS_H (5.0 * KA * KS / KH)

/* Activation bytes of scenario_text(extra, base, ...) with `layers` layers of the shape above
 * (and the model fields `fields`), on one 8-GPU Selene node. */
static double act_bytes(const char *extra, const char *base, int layers, const char *fields, const char *plan) {
  char model[256];
  snprintf(model, sizeof model, "layers = %d; hidden = %d; heads = %d; seq = %d; vocab = 51200; %s", layers, KH, KA, KS,
           fields);
  /* 8 GPUs: Selene's A100s, Eos's H100s for fp8, which the A100 does not run, 2 GB200 trays
   * for the block-scaled formats, which the H100 does not run */
  const char *cluster = strstr(plan, "mxfp8") || strstr(plan, "nvfp4") ? "gb200_nvl72 { nodes = 2 }"
                        : strstr(plan, "fp8")                          ? "eos { nodes = 1 }"
                                                                       : "selene { nodes = 1 }";
  Fx *x = run_scenario(extra, base, model, cluster, plan);
  double a = x->r.memory[RM_ACTIVATIONS];
  assert_true(isfinite(a) && a > 0);
  fx_close(x);
  return a;
}

/* Bytes per layer: the difference between 4 and 2 layers, halved (the embedding's and the
 * head's activations, the same in both, cancel; 1F1B with pp = 1 keeps one micro-batch). */
static double act_per_layer(const char *extra, const char *base, const char *fields, const char *plan) {
  return (act_bytes(extra, base, 4, fields, plan) - act_bytes(extra, base, 2, fields, plan)) / 2;
}

/* Activation bytes of the scenario: megatron_gpt (unfused attention, dropouts), fp16, pp = 1,
 * 1F1B, on one 8-GPU node (dp = 8 / tp). */
static double activations(int layers, int tp, bool sp, const char *recompute) {
  char model[256], plan[256];
  snprintf(model, sizeof model, "layers = %d; hidden = %d; heads = %d; seq = %d; vocab = 51200", layers, KH, KA, KS);
  snprintf(plan, sizeof plan,
           "tp = %d; pp = 1; micro_batch = %d; global_batch = 16; dtype = fp16; recompute = %s; "
           "sequence_parallel = %s",
           tp, KB, recompute, sp ? "true" : "false");
  Fx *x = run_scenario("", "megatron_gpt", model, "selene { nodes = 1 }", plan);
  assert_int_equal(x->r.pp, 1);
  assert_int_equal(x->r.tp, tp);
  assert_int_equal(x->r.sequence_parallel, sp && tp > 1); /* sp needs tp > 1 */
  assert_string_equal(x->r.recompute, recompute);
  double a = x->r.memory[RM_ACTIVATIONS];
  assert_true(isfinite(a) && a > 0);
  fx_close(x);
  return a;
}

/* Bytes per layer, as act_per_layer(). */
static double per_layer(int tp, bool sp, const char *recompute) {
  return (activations(4, tp, sp, recompute) - activations(2, tp, sp, recompute)) / 2;
}

TEST(activations_no_parallelism) {
  expect_near(per_layer(1, false, "none"), SBH * (34 + FIVE_AS_H), "sbh(34 + 5as/h)");
  /* sequence_parallel without tp is no sequence parallelism */
  expect_near(per_layer(1, true, "none"), SBH * (34 + FIVE_AS_H), "sbh(34 + 5as/h), sp with tp = 1");
}

TEST(activations_tensor_parallel) {
  for (int t = 2; t <= 8; t *= 2) {
    char what[64];
    snprintf(what, sizeof what, "sbh(10 + 24/t + 5as/(ht)), t = %d", t);
    expect_near(per_layer(t, false, "none"), SBH * (10 + 24.0 / t + FIVE_AS_H / t), what);
  }
}

TEST(activations_tensor_sequence_parallel) {
  for (int t = 2; t <= 8; t *= 2) {
    char what[64];
    snprintf(what, sizeof what, "sbh/t (34 + 5as/h), t = %d", t);
    expect_near(per_layer(t, true, "none"), SBH / t * (34 + FIVE_AS_H), what);
  }
}

TEST(activations_selective_recompute) {
  /* Table 2: selective recompute with tp and sp, sbh * 34 / t */
  for (int t = 2; t <= 8; t *= 2) {
    char what[64];
    snprintf(what, sizeof what, "sbh 34/t, t = %d", t);
    expect_near(per_layer(t, true, "selective"), SBH * 34 / t, what);
  }
  /* without sp: the tp row without the attention scores, sbh(10 + 24/t) */
  expect_near(per_layer(4, false, "selective"), SBH * (10 + 24.0 / 4), "sbh(10 + 24/t), t = 4");
  /* Whole figure: one layer's attention scores (5as^2b/t) are rematerialised in backward on
   * top of what is stored: a_sel(L) = a_none(L) - (L - 1) * 5as^2b/t. */
  double none = activations(4, 4, true, "none"), sel = activations(4, 4, true, "selective");
  expect_near(sel, none - 3 * SBH * FIVE_AS_H / 4, "selective, 4 layers, working set of one layer");
}

TEST(activations_full_recompute) {
  /* Table 2's 2sbh per layer: each layer's input is kept (sharded by t with sp) */
  expect_near(per_layer(1, false, "full"), 2 * SBH, "2sbh, no parallelism");
  expect_near(per_layer(4, false, "full"), 2 * SBH, "2sbh, tp = 4: the input is replicated");
  expect_near(per_layer(4, true, "full"), 2 * SBH / 4, "2sbh/t, tp = 4 with sp");
  /* Whole figure: L inputs plus one layer's full working set (what recompute none keeps per
   * layer), plus the same embedding and head terms: a_full(L) = a_none(L) - (L - 1) A + L in. */
  for (int sp = 0; sp <= 1; sp++) {
    int t = 4, L = 4;
    double A = sp ? SBH / t * (34 + FIVE_AS_H) : SBH * (10 + 24.0 / t + FIVE_AS_H / t);
    double in = sp ? 2 * SBH / t : 2 * SBH;
    double none = activations(L, t, sp, "none"), full = activations(L, t, sp, "full");
    expect_near(full, none - (L - 1) * A + L * in, sp ? "full, tp = 4, sp, 4 layers" : "full, tp = 4, 4 layers");
  }
}

/* Full recompute of recompute_layers of a chunk's layers (Megatron's block method): with 2 of
 * 4 recomputed, two layers keep their input and two all they save, plus one layer's working
 * set: a(L) = a_none(L) - 2A + 2 in + A; the recompute time is half of full recompute's. */
TEST(partial_recompute) {
  int t = 4, L = 4;
  double A = SBH / t * (34 + FIVE_AS_H), in = 2 * SBH / t;
  char model[256], plan[256];
  snprintf(model, sizeof model, "layers = %d; hidden = %d; heads = %d; seq = %d; vocab = 51200", L, KH, KA, KS);
  double act[3], rec[3];
  const char *how[3] = {"none", "full", "full; recompute_layers = 2"};
  for (int i = 0; i < 3; i++) {
    snprintf(plan, sizeof plan,
             "tp = %d; pp = 1; micro_batch = %d; global_batch = 16; dtype = fp16; sequence_parallel = true; "
             "recompute = %s",
             t, KB, how[i]);
    Fx *x = run_scenario("", "megatron_gpt", model, "selene { nodes = 1 }", plan);
    act[i] = x->r.memory[RM_ACTIVATIONS], rec[i] = x->r.part[RP_RECOMPUTE];
    fx_close(x);
  }
  expect_near(act[2], act[0] - 2 * A + 2 * in + A, "2 of 4 layers recomputed: activations");
  expect_near(rec[2], rec[1] / 2, "2 of 4 layers recomputed: half of full recompute's time");
  assert_true(rec[1] > 0);
}

/* The stdlib's gpt layer with flash attention and no dropout, per layer.  In 16-bit training
 * the projection keeps the attention's output O (the same tensor, counted once):
 * ln1 2 + qkv 2 + Q, K, V 6 + O 2 + ln2 2 + up 2 + gelu 8 + down 8 = 32 sbh, plus the fp32
 * log-sum-exp, 4 b a s bytes.  With fp8 each GEMM keeps the one-byte cast of its input (qkv 1,
 * proj 1 beside the bf16 O, up 1, down 4): 27 sbh.  All divided by t with SP. */
static double flash_per_layer(int tp, bool sp, const char *recompute, const char *dtype) {
  char plan[256];
  snprintf(plan, sizeof plan,
           "tp = %d; pp = 1; micro_batch = %d; global_batch = 16; dtype = %s; recompute = %s; "
           "sequence_parallel = %s",
           tp, KB, dtype, recompute, sp ? "true" : "false");
  return act_per_layer("", "gpt", "attention = flash", plan);
}

#define LSE (4.0 * KB * KA * KS) /* flash attention's fp32 log-sum-exp, bytes (all heads) */

TEST(activations_flash_attention) {
  expect_near(flash_per_layer(1, false, "none", "bf16"), 32 * SBH + LSE, "flash, bf16: 32 sbh + lse");
  expect_near(flash_per_layer(1, false, "none", "fp16"), 32 * SBH + LSE, "flash, fp16: 32 sbh + lse");
  for (int t = 2; t <= 8; t *= 2) {
    char what[64];
    snprintf(what, sizeof what, "flash, bf16, sbh/t 32 + lse/t, t = %d", t);
    expect_near(flash_per_layer(t, true, "none", "bf16"), (32 * SBH + LSE) / t, what);
    snprintf(what, sizeof what, "flash, bf16, sbh(8 + 24/t) + lse/t, t = %d", t);
    expect_near(flash_per_layer(t, false, "none", "bf16"), SBH * (8 + 24.0 / t) + LSE / t, what);
  }
  /* selective recompute drops only the log-sum-exp: O stays, as the projection's input */
  expect_near(flash_per_layer(4, true, "selective", "bf16"), 32 * SBH / 4, "flash, bf16, selective: 32 sbh/t");
  /* fp32: every element 4 bytes */
  expect_near(flash_per_layer(1, false, "none", "fp32"), 64 * SBH + LSE, "flash, fp32: 64 sbh + lse");
}

/* Per layer of a block of flash attention and one linear of `split`, bf16, tp 1: Q, K, V, O and
 * the log-sum-exp, plus the linear's input unless it is O (a row-parallel linear's is). */
static double attention_then_linear(const char *split) {
  char extra[512];
  snprintf(extra, sizeof extra,
           "block attn_linear {\n"
           "  let t = plan.micro_batch * model.seq / plan.cp\n"
           "  op attn = attention(plan.micro_batch, model.heads, model.seq, model.head_dim, impl = flash)\n"
           "  op lin  = linear(t, model.hidden, model.hidden, split = %s)\n"
           "}\n",
           split);
  return act_per_layer(extra, "gpt", "layer = attn_linear",
                       "tp = 1; pp = 1; micro_batch = 2; global_batch = 16; dtype = bf16");
}

TEST(activations_flash_output_kept_once) {
  expect_near(attention_then_linear("row"), 8 * SBH + LSE, "attention, row linear: O kept once");
  expect_near(attention_then_linear("column"), 10 * SBH + LSE, "attention, column linear: its own input");
}

TEST(activations_fp8) {
  expect_near(flash_per_layer(1, false, "none", "fp8"), 27 * SBH + LSE, "fp8: 27 sbh + lse");
  expect_near(flash_per_layer(4, true, "none", "fp8"), (27 * SBH + LSE) / 4, "fp8, sp: (27 sbh + lse)/t");
  /* without SP the column linears' inputs are whole: ln1 2 + qkv 1 + ln2 2 + up 1, the rest / t */
  expect_near(flash_per_layer(4, false, "none", "fp8"), SBH * (6 + 21.0 / 4) + LSE / 4, "fp8: sbh(6 + 21/t) + lse/t");
  /* selective recompute drops O (the projection keeps its fp8 cast) and the log-sum-exp */
  expect_near(flash_per_layer(4, true, "selective", "fp8"), 25 * SBH / 4, "fp8, selective: 25 sbh/t");
  /* the unfused attention's scores and the norms are not GEMM inputs: the megatron_gpt layer
   * keeps 34 + 5as/h of which the four GEMM inputs (qkv 2, proj 2, up 2, down 8) halve */
  expect_near(act_per_layer("", "megatron_gpt", "", "tp = 1; pp = 1; micro_batch = 2; global_batch = 16; dtype = fp8"),
              SBH * (34 - 7 + FIVE_AS_H), "megatron_gpt, fp8: sbh(27 + 5as/h)");
}

/* The block-scaled formats: each GEMM keeps its input's cast at the format's bytes, scales
 * included (qkv, proj, up 1 element each, down 4: 7 sbh of the 27 of fp8), mxfp8 1 + 1/32,
 * nvfp4 1/2 + 1/16.  fp8 attention (attention_dtype) keeps Q, K, V and O in one byte: the bf16
 * layer's 32 sbh less 4. */
TEST(activations_block_scaled) {
  expect_near(flash_per_layer(1, false, "none", "mxfp8"), (20 + 7 * 1.03125) * SBH + LSE, "mxfp8: sbh(20 + 7 x 33/32)");
  expect_near(flash_per_layer(1, false, "none", "nvfp4"), (20 + 7 * 0.5625) * SBH + LSE, "nvfp4: sbh(20 + 7 x 9/16)");
  expect_near(flash_per_layer(4, true, "none", "nvfp4"), ((20 + 7 * 0.5625) * SBH + LSE) / 4, "nvfp4, sp: / t");
  expect_near(flash_per_layer(1, false, "none", "bf16; attention_dtype = fp8"), 28 * SBH + LSE,
              "fp8 attention: 28 sbh + lse");
}

/* The quantized formats cover the layers' GEMMs alone, at their peaks (MFU against it); an
 * attention_dtype of fp8 moves attention alone, faster than in bf16. */
TEST(block_scaled_layers_only) {
  const char *model = "layers = 2; hidden = 1024; heads = 16; seq = 1024; vocab = 32000; attention = flash";
  static const struct {
    const char *dtype;
    RtDtype dt;
    double peak;
  } cases[] = {{"mxfp8", RT_MXFP8, 5000e12}, {"nvfp4", RT_NVFP4, 10000e12}};
  for (int i = 0; i < 2; i++) {
    char plan[128];
    snprintf(plan, sizeof plan, "tp = 1; micro_batch = 1; global_batch = 8; dtype = %s", cases[i].dtype);
    Fx *x = run_scenario("", "gpt", model, "gb200_nvl72 { nodes = 2 }", plan);
    assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "qkv", RTK_LINEAR), 0) == cases[i].dt);
    assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "down", RTK_LINEAR), 0) == cases[i].dt);
    assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "attn", RTK_FLASH), 0) == RT_BF16);
    assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "act", RTK_GELU), 0) == RT_BF16);
    assert_true(const_arg(&x->l, op_call(&x->l, LB_HEAD, "out", RTK_LINEAR), 0) == RT_BF16);
    assert_string_equal(x->r.dtype, cases[i].dtype);
    expect_near(x->r.mfu, x->r.tflops_per_gpu / cases[i].peak, "MFU over the format's peak");
    fx_close(x);
  }
  /* attention in fp8, on shapes where its products bound it (8K tokens, head dim 256): about
   * half bf16's time; at head dim 128 fp8 runs at the GB200's exps (peak_exp), barely faster
   * than bf16's products (512 FLOPs a score at 2.5 PFLOP/s, an exp at 5 T/s) */
  for (int heads = 16; heads <= 32; heads *= 2) {
    char big[128];
    snprintf(big, sizeof big, "layers = 2; hidden = 4096; heads = %d; seq = 8192; vocab = 32000; attention = flash", heads);
    Fx *x = run_scenario("", "gpt", big, "gb200_nvl72 { nodes = 2 }",
                         "tp = 1; micro_batch = 1; global_batch = 8; dtype = mxfp8");
    double bf16 = x->vals[op_call(&x->l, LB_LAYER, "attn", RTK_FLASH)];
    fx_close(x);
    x = run_scenario("", "gpt", big, "gb200_nvl72 { nodes = 2 }",
                     "tp = 1; micro_batch = 1; global_batch = 8; dtype = mxfp8; attention_dtype = fp8");
    GId attn = op_call(&x->l, LB_LAYER, "attn", RTK_FLASH);
    assert_true(const_arg(&x->l, attn, 0) == RT_FP8);
    assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "qkv", RTK_LINEAR), 0) == RT_MXFP8);
    if (heads == 16 && !(x->vals[attn] < 0.6 * bf16)) fail_msg("fp8 attention %g s, bf16 %g s", x->vals[attn], bf16);
    if (heads == 32 && !(x->vals[attn] > 0.9 * bf16 && x->vals[attn] <= bf16))
      fail_msg("exp-bound fp8 attention %g s, bf16 %g s", x->vals[attn], bf16);
    fx_close(x);
  }
}

/* fp8 covers the layers' GEMMs; the LM head and the other operators run in bf16. */
TEST(fp8_layers_only) {
  Fx *x = run_scenario("", "gpt", "layers = 2; hidden = 1024; heads = 16; seq = 1024; vocab = 32000; attention = flash",
                       "eos { nodes = 1 }", "tp = 1; micro_batch = 1; global_batch = 8; dtype = fp8");
  assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "qkv", RTK_LINEAR), 0) == RT_FP8);
  assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "down", RTK_LINEAR), 0) == RT_FP8);
  assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "attn", RTK_FLASH), 0) == RT_BF16);
  assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "act", RTK_GELU), 0) == RT_BF16);
  assert_true(const_arg(&x->l, op_call(&x->l, LB_HEAD, "out", RTK_LINEAR), 0) == RT_BF16);
  /* MFU is against the plan dtype's peak, fp8's (a gpu without one is refused at checking) */
  expect_near(x->r.mfu, x->r.tflops_per_gpu / 1979e12, "fp8 MFU over H100's fp8 peak");
  fx_close(x);
}

/* ========================================================================================= */
/* 2. Operators of the layer blocks                                                          */
/* ========================================================================================= */

#define GPT_SIZES "layers = 2; hidden = 1024; heads = 16; seq = 1024; vocab = 32000"
#define LLAMA_SIZES "layers = 2; hidden = 2048; heads = 16; kv_heads = 4; seq = 1024; vocab = 32000"
#define MOE_SIZES "layers = 2; hidden = 1024; heads = 16; kv_heads = 4; seq = 1024; vocab = 32000; moe_ffn = 2048"

static void expect_ops(const Lowered *l, int block, const char *const *want, int n) {
  char got[2048] = "";
  size_t len = 0;
  for (int i = 0; i < l->nops[block]; i++)
    len += (size_t)snprintf(got + len, len < sizeof got ? sizeof got - len : 0, "%s[%c]%s", i ? ", " : "",
                            l->ops[block][i].stream, l->ops[block][i].name);
  if (l->nops[block] != n) fail_msg("expected %d operators, got %d: %s", n, l->nops[block], got);
  for (int i = 0; i < n; i++) {
    const LowerOp *o = &l->ops[block][i];
    if (strcmp(o->name, want[i])) fail_msg("operator %d: expected `%s`, got `%s` in: %s", i, want[i], o->name, got);
    bool is_comm = strstr(want[i], " tp ") || strstr(want[i], " ep ") || strstr(want[i], " cp ");
    if (o->stream != (is_comm ? 't' : 'c')) fail_msg("operator `%s` on stream '%c'", o->name, o->stream);
  }
}

#define EXPECT_OPS(l, block, ...) \
  do { \
    static const char *const want_[] = {__VA_ARGS__}; \
    expect_ops((l), (block), want_, (int)(sizeof want_ / sizeof want_[0])); \
  } while (0)

/* selene { nodes = 1 }: 8 GPUs; dp = 8 / (tp * cp) */
static Fx *ops_of(const char *base, const char *sizes, const char *plan) {
  return run_scenario("", base, sizes, "selene { nodes = 1 }", plan);
}

TEST(operators_gpt_layer) {
  Fx *x = ops_of("gpt", GPT_SIZES, "tp = 1; micro_batch = 1; global_batch = 8");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "attn", "proj", "add1", "ln2", "up", "act", "down", "add2");
  EXPECT_OPS(&x->l, LB_EMBEDDING, "words", "positions", "sum");
  EXPECT_OPS(&x->l, LB_HEAD, "ln", "out", "loss");
  /* tp = 1: no collective labelled with an operator of the layer */
  for (int i = 0; i < x->l.g.nn; i++) {
    const GNode *n = &x->l.g.n[i];
    if (n->op == GN_CALL && rt_kernels[n->kernel].target == 'C' && strcmp(n->label, "dp gradients") &&
        strcmp(n->label, "dp parameters") && strcmp(n->label, "pipeline send"))
      fail_msg("tp = 1 has a %s call labelled `%s`", rt_kernels[n->kernel].name, n->label);
  }
  fx_close(x);

  x = ops_of("gpt", GPT_SIZES, "tp = 2; micro_batch = 1; global_batch = 4");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "qkv tp allreduce", "attn", "proj", "proj tp allreduce", "add1", "ln2",
             "up", "up tp allreduce", "act", "down", "down tp allreduce", "add2");
  EXPECT_OPS(&x->l, LB_EMBEDDING, "words", "words tp allreduce", "positions", "sum");
  EXPECT_OPS(&x->l, LB_HEAD, "ln", "out", "out tp allreduce", "loss", "loss tp allreduce");
  fx_close(x);

  x = ops_of("gpt", GPT_SIZES, "tp = 2; sequence_parallel = true; micro_batch = 1; global_batch = 4");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "qkv tp allgather", "attn", "proj", "proj tp reducescatter", "add1", "ln2",
             "up", "up tp allgather", "act", "down", "down tp reducescatter", "add2");
  EXPECT_OPS(&x->l, LB_EMBEDDING, "words", "words tp reducescatter", "positions", "sum");
  fx_close(x);

  /* context parallelism: the ring exchange of K and V */
  x = ops_of("gpt", GPT_SIZES, "tp = 1; cp = 2; micro_batch = 1; global_batch = 4");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "attn", "attn cp kv exchange", "proj", "add1", "ln2", "up", "act", "down",
             "add2");
  fx_close(x);
}

TEST(operators_megatron_gpt_layer) {
  Fx *x = ops_of("megatron_gpt", GPT_SIZES, "tp = 1; micro_batch = 1; global_batch = 8");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "attn", "proj", "drop1", "add1", "ln2", "up", "act", "down", "drop2",
             "add2");
  fx_close(x);
  x = ops_of("megatron_gpt", GPT_SIZES, "tp = 4; micro_batch = 1; global_batch = 2");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "qkv tp allreduce", "attn", "proj", "proj tp allreduce", "drop1", "add1",
             "ln2", "up", "up tp allreduce", "act", "down", "down tp allreduce", "drop2", "add2");
  fx_close(x);
}

TEST(operators_llama_layer) {
  Fx *x = ops_of("llama", LLAMA_SIZES, "tp = 1; micro_batch = 1; global_batch = 8");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "rot", "attn", "proj", "add1", "ln2", "up", "act", "down", "add2");
  EXPECT_OPS(&x->l, LB_EMBEDDING, "words");
  assert_int_equal(count_calls(&x->l, RTK_FLASH), 1); /* llama: flash attention */
  assert_int_equal(count_calls(&x->l, RTK_ATTENTION), 0);
  fx_close(x);
  x = ops_of("llama", LLAMA_SIZES, "tp = 4; sequence_parallel = true; micro_batch = 1; global_batch = 2");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "qkv tp allgather", "rot", "attn", "proj", "proj tp reducescatter", "add1",
             "ln2", "up", "up tp allgather", "act", "down", "down tp reducescatter", "add2");
  fx_close(x);
}

TEST(operators_moe_layer) {
  Fx *x = ops_of("mixtral", MOE_SIZES, "tp = 1; micro_batch = 1; global_batch = 8");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "rot", "attn", "proj", "add1", "ln2", "gate", "moe permute", "moe", "moe unpermute", "add2");
  assert_int_equal(count_calls(&x->l, RTK_ALLTOALL), 0);
  fx_close(x);
  /* ep = 2 (of dp = 8): the experts' all-to-all */
  x = ops_of("mixtral", MOE_SIZES, "tp = 1; ep = 2; micro_batch = 1; global_batch = 8");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "rot", "attn", "proj", "add1", "ln2", "gate", "moe permute", "moe", "moe unpermute", "moe ep all-to-all",
             "add2");
  GId a2a = find_call(&x->l, RTK_ALLTOALL, "moe");
  assert_true(const_arg(&x->l, a2a, 1) == 2); /* over ep */
  assert_true(x->r.part[RP_EP_COMM] > 0);
  fx_close(x);
  /* tp = 2, sp, ep = 2 (dp = 4) */
  x = ops_of("mixtral", MOE_SIZES, "tp = 2; ep = 2; sequence_parallel = true; micro_batch = 1; global_batch = 4");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "qkv tp allgather", "rot", "attn", "proj", "proj tp reducescatter", "add1",
             "ln2", "gate", "moe permute", "moe", "moe unpermute", "moe ep all-to-all", "add2");
  /* the all-to-all runs over ep, folded over tp x dp with etp = 1 innermost: ep's stride is
   * etp = 1 (the two ranks of a tp group), not dp's */
  a2a = find_call(&x->l, RTK_ALLTOALL, "moe");
  assert_true(const_arg(&x->l, a2a, 1) == 2);
  assert_true(const_arg(&x->l, a2a, 2) == 1);
  /* the experts' first GEMM: t / tp = 512 tokens x top_k 2 = 1024 pairs over 8 / ep = 4 local
   * experts (256 each), hidden 1024 -> 2 * moe_ffn (swiglu) */
  GId bmm = find_call(&x->l, RTK_BMM, "moe"); /* dtype batch m k n */
  assert_true(const_arg(&x->l, bmm, 1) == 4);
  assert_true(const_arg(&x->l, bmm, 2) == 256);
  assert_true(const_arg(&x->l, bmm, 3) == 1024);
  assert_true(const_arg(&x->l, bmm, 4) == 2 * 2048);
  fx_close(x);
}

/* The bytes of the call of kernel k labelled `label` over `size` ranks `stride` apart; fails
 * when there is none. */
static double coll_bytes(const Lowered *l, RtKernel k, const char *label, double size, double stride) {
  for (int i = 0; i < l->g.nn; i++) {
    const GNode *n = &l->g.n[i];
    if (n->op == GN_CALL && n->kernel == k && n->label && !strcmp(n->label, label) && const_arg(l, i, 1) == size &&
        const_arg(l, i, 2) == stride)
      return const_arg(l, i, 0);
  }
  fail_msg("no %s call labelled `%s` over %g ranks %g apart", rt_kernels[k].name, label, size, stride);
  return NAN;
}

/* 16 GPUs (two Selene nodes of 8), tp 4, dp 4: ep 8 exceeds dp, folded over tp x dp. */
#define MOE_FOLDED "tp = 4; ep = 8; sequence_parallel = true; micro_batch = 1; global_batch = 4"

TEST(moe_alltoall_folded) {
  /* etp 1: the ep group is 8 consecutive ranks (stride etp = 1), one node; each rank sends its
   * t/tp = 1024/4 = 256 tokens x top_k 2 = 512 pairs of h = 1024 bf16 elements */
  Fx *x = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED);
  assert_true(x->r.dp == 4 && x->r.ep == 8);
  expect_near(coll_bytes(&x->l, RTK_ALLTOALL, "moe", 8, 1), 512.0 * 1024 * 2, "a2a bytes");
  /* and the pairs' router probabilities (bf16, the layer's dtype) in an all-to-all of their own */
  int probs = 0, a2a = 0;
  for (int i = 0; i < x->l.g.nn; i++) {
    const GNode *n = &x->l.g.n[i];
    if (n->op != GN_CALL || n->kernel != RTK_ALLTOALL || strcmp(n->label, "moe")) continue;
    a2a++;
    probs += const_arg(&x->l, i, 0) == 512.0 * 2 && const_arg(&x->l, i, 1) == 8;
  }
  assert_int_equal(a2a, 2);
  assert_int_equal(probs, 1);
  /* the per-expert token counts, gathered over etp x ep = 8: 8 ranks x 8 experts x 8 bytes */
  expect_near(coll_bytes(&x->l, RTK_ALLGATHER, "moe", 8, 1), 8.0 * 8 * 8, "count gather bytes");
  GId bmm = find_call(&x->l, RTK_BMM, "moe"); /* one local expert, 512 pairs, 1024 -> 2 * 2048 */
  assert_true(const_arg(&x->l, bmm, 1) == 1 && const_arg(&x->l, bmm, 2) == 512);
  assert_true(const_arg(&x->l, bmm, 4) == 2 * 2048);
  fx_close(x);
  /* etp 2, ep 8 (edp 1): ep ranks are 2 apart and span both nodes; the received 512 pairs are
   * gathered over etp (2 x 512 pairs) and each expert's linears split in two */
  x = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED "; etp = 2");
  expect_near(coll_bytes(&x->l, RTK_ALLTOALL, "moe", 8, 2), 512.0 * 1024 * 2, "a2a bytes, etp 2");
  expect_near(coll_bytes(&x->l, RTK_ALLGATHER, "moe", 2, 1), 1024.0 * 1024 * 2, "etp gather bytes");
  expect_near(coll_bytes(&x->l, RTK_REDUCESCATTER, "moe", 2, 1), 1024.0 * 1024 * 2, "etp reduce-scatter bytes");
  expect_near(coll_bytes(&x->l, RTK_ALLGATHER, "moe", 16, 1), 16.0 * 8 * 8, "count gather over etp x ep");
  int pg = 0, prs = 0; /* the 1024 pairs' bf16 probabilities gathered over etp, reduce-scattered back */
  for (int i = 0; i < x->l.g.nn; i++) {
    const GNode *n = &x->l.g.n[i];
    if (n->op != GN_CALL || strcmp(n->label, "moe") || const_arg(&x->l, i, 0) != 1024.0 * 2 || const_arg(&x->l, i, 1) != 2)
      continue;
    pg += n->kernel == RTK_ALLGATHER, prs += n->kernel == RTK_REDUCESCATTER;
  }
  assert_int_equal(pg, 1);
  assert_int_equal(prs, 1);
  bmm = find_call(&x->l, RTK_BMM, "moe"); /* fc1: 1024 pairs, 1024 -> 4096 / etp */
  assert_true(const_arg(&x->l, bmm, 2) == 1024 && const_arg(&x->l, bmm, 3) == 1024);
  assert_true(const_arg(&x->l, bmm, 4) == 2048);
  int nd = 0; /* fc2: 2048 / etp -> 1024 */
  for (int i = 0; i < x->l.g.nn; i++) {
    const GNode *n = &x->l.g.n[i];
    nd += n->op == GN_CALL && n->kernel == RTK_BMM && !strcmp(n->label, "moe") && const_arg(&x->l, i, 3) == 1024 &&
          const_arg(&x->l, i, 4) == 1024;
  }
  assert_int_equal(nd, 1);
  int g[2] = {0, 0};
  rt_group_layout(8, 2, 8, &g[0], &g[1]); /* 8 ranks 2 apart on 8-GPU nodes: 2 nodes x 4 */
  assert_int_equal(g[0], 2);
  assert_int_equal(g[1], 4);
  fx_close(x);
}

/* overlap_ep (Megatron-Core's --overlap-moe-expert-parallel-comm): with 4 micro-batches and no
 * pipeline, 3 of 4 forwards run merged with a backward, so 3/4 of the EP traffic that fits under
 * the other direction's compute hides (here all of it fits: NVLink traffic, bigger GEMMs); one
 * micro-batch more in flight; one micro-batch hides nothing; with ep = 1 it does nothing. */
TEST(moe_overlap_ep) {
#define MOE_SIZES4 "layers = 4; hidden = 1024; heads = 16; kv_heads = 4; seq = 1024; vocab = 32000; moe_ffn = 2048"
#define MOE_FOLDED_4MB "tp = 4; ep = 8; sequence_parallel = true; micro_batch = 1; global_batch = 16"
  Fx *off = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED_4MB);
  Fx *on = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED_4MB "; overlap_ep = true");
  assert_int_equal(off->r.micro_batches, 4);
  assert_true(on->r.overlap_ep && !off->r.overlap_ep);
  assert_true(off->r.part[RP_EP_COMM] > 0);
  expect_near(on->r.part[RP_EP_COMM], 0.25 * off->r.part[RP_EP_COMM], "exposed EP traffic");
  expect_near(on->r.part[RP_FORWARD], off->r.part[RP_FORWARD], "forward");
  expect_near(on->r.part[RP_BACKWARD], off->r.part[RP_BACKWARD], "backward");
  assert_true(on->r.iteration < off->r.iteration);
  /* one layer more in flight: what a second layer adds without the overlap (pp 1 holds one
   * micro-batch) */
  Fx *off4 = run_scenario("", "mixtral", MOE_SIZES4, "selene { nodes = 2 }", MOE_FOLDED_4MB);
  double layer = (off4->r.memory[RM_ACTIVATIONS] - off->r.memory[RM_ACTIVATIONS]) / 2;
  expect_near(on->r.memory[RM_ACTIVATIONS] - off->r.memory[RM_ACTIVATIONS], layer, "one layer's activations more");
  fx_close(off4);
  fx_close(on);
  fx_close(off);
  /* the DP reduction hides behind the last micro-batch's backward, which runs alone: its EP
   * traffic hides under nothing, so the exposed DP traffic stays (here a part of it shows) */
  off = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED_4MB "; overlap_dp = true");
  on = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }",
                    MOE_FOLDED_4MB "; overlap_dp = true; overlap_ep = true");
  assert_true(off->r.part[RP_DP_COMM] > 0 && on->r.iteration < off->r.iteration);
  expect_near(on->r.part[RP_DP_COMM], off->r.part[RP_DP_COMM], "exposed DP traffic");
  fx_close(on);
  fx_close(off);
  off = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED);
  on = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED "; overlap_ep = true");
  assert_int_equal(on->r.micro_batches, 1);
  expect_near(on->r.part[RP_EP_COMM], off->r.part[RP_EP_COMM], "one micro-batch: nothing merged");
  fx_close(on);
  fx_close(off);
  /* interleaved, pp 2 x 2 virtual stages, 8 micro-batches: device 0 runs 5 of its 16 chunks
   * alone (its warm-up 2 (pp - 1) + (v - 1) pp plus one), so 11/16 hides */
#define MOE_PP2 "tp = 4; pp = 2; ep = 8; sequence_parallel = true; micro_batch = 1; global_batch = 16; " \
                "schedule = interleaved; virtual_stages = 2"
  off = run_scenario("", "mixtral", MOE_SIZES4, "selene { nodes = 2 }", MOE_PP2);
  on = run_scenario("", "mixtral", MOE_SIZES4, "selene { nodes = 2 }", MOE_PP2 "; overlap_ep = true");
  assert_int_equal(on->r.micro_batches, 8);
  expect_near(on->r.part[RP_EP_COMM], 5.0 / 16 * off->r.part[RP_EP_COMM], "interleaved: exposed EP traffic");
  fx_close(on);
  fx_close(off);
  const char *dense = "tp = 4; sequence_parallel = true; micro_batch = 1; global_batch = 16";
  off = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", dense);
  on = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }",
                    "tp = 4; sequence_parallel = true; micro_batch = 1; global_batch = 16; overlap_ep = true");
  assert_true(!on->r.overlap_ep);
  expect_near(on->r.iteration, off->r.iteration, "ep = 1: iteration");
  expect_near(on->r.peak, off->r.peak, "ep = 1: memory");
  fx_close(on);
  fx_close(off);
}

TEST(moe_allgather_dispatcher) {
  /* every rank of the etp x ep = 8 group gathers the group's 8 x 256 tokens (h = 1024, bf16),
   * their routing map (1 byte) and probabilities (bf16) over 8 experts, and reduce-scatters the
   * output; the backward reduce-scatters the probabilities' gradient; no all-to-all */
  Fx *x =
      run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED "; moe_token_dispatcher = allgather");
  EXPECT_OPS(&x->l, LB_LAYER, "ln1", "qkv", "qkv tp allgather", "rot", "attn", "proj", "proj tp reducescatter", "add1",
             "ln2", "gate", "moe permute", "moe", "moe unpermute", "moe ep allgather", "add2");
  assert_int_equal(count_calls(&x->l, RTK_ALLTOALL), 0);
  double all = 8.0 * 256;
  expect_near(coll_bytes(&x->l, RTK_ALLGATHER, "moe", 8, 1), all * 1024 * 2, "token gather");
  expect_near(coll_bytes(&x->l, RTK_REDUCESCATTER, "moe", 8, 1), all * 1024 * 2, "output reduce-scatter");
  bool map = false, probs = false;
  for (int i = 0; i < x->l.g.nn; i++) {
    const GNode *n = &x->l.g.n[i];
    if (n->op != GN_CALL || !n->label || strcmp(n->label, "moe")) continue;
    map |= n->kernel == RTK_ALLGATHER && const_arg(&x->l, i, 0) == all * 8 * (1 + 2);
    probs |= n->kernel == RTK_REDUCESCATTER && const_arg(&x->l, i, 0) == all * 8 * 2;
  }
  assert_true(map && probs);
  assert_true(x->r.part[RP_EP_COMM] > 0);
  fx_close(x);
}

/* The flex dispatcher (DeepEP): ep 16 over two nodes, 16 experts in 2 groups, each token's 2
 * experts in 1 group.  One dispatch call a direction carries one copy of the rank's 256 tokens
 * (h = 1024, bf16) with the routing; no all-to-all.  It crosses the network once per remote
 * node a token's experts sit on (1/2 on average here, against the all-to-all's one copy of
 * two), so it costs less, and more without the group limit. */
TEST(moe_flex_dispatcher) {
#define FLEX_MODEL MOE_SIZES "; experts = 16"
#define FLEX_PLAN "tp = 4; ep = 16; sequence_parallel = true; micro_batch = 1; global_batch = 4"
  Fx *a2a = run_scenario("", "mixtral", FLEX_MODEL, "selene { nodes = 2 }", FLEX_PLAN);
  Fx *grp = run_scenario("", "mixtral", FLEX_MODEL "; router_groups = 2; router_group_top_k = 1",
                         "selene { nodes = 2 }", FLEX_PLAN "; moe_token_dispatcher = flex");
  Fx *flat = run_scenario("", "mixtral", FLEX_MODEL, "selene { nodes = 2 }", FLEX_PLAN "; moe_token_dispatcher = flex");
  assert_int_equal(count_calls(&grp->l, RTK_ALLTOALL), 0);
  expect_near(coll_bytes(&grp->l, RTK_DISPATCH, "moe", 16, 1), 256.0 * 1024 * 2, "one copy of the tokens");
  GId d = find_call(&grp->l, RTK_DISPATCH, "moe");
  assert_true(const_arg(&grp->l, d, 3) == 16 && const_arg(&grp->l, d, 4) == 2);
  assert_true(const_arg(&grp->l, d, 5) == 2 && const_arg(&grp->l, d, 6) == 1);
  expect_near(coll_bytes(&a2a->l, RTK_ALLTOALL, "moe", 16, 1), 512.0 * 1024 * 2, "the pairs");
  double ta = a2a->r.part[RP_EP_COMM], tg = grp->r.part[RP_EP_COMM], tf = flat->r.part[RP_EP_COMM];
  assert_true(tg > 0 && tg < tf && tf < ta);
  fx_close(a2a), fx_close(grp), fx_close(flat);
#undef FLEX_MODEL
#undef FLEX_PLAN
}

/* Parameters of mixtral with MOE_SIZES on a rank with tp = 4, pp = 1 (hand count):
 *   embedding: vocab 32000 padded to a multiple of 128 tp = 512: 32256, / tp = 8064 rows x 1024
 *     = 8,257,536
 *   head: rmsnorm 1024 + column linear 1024 x 8064 = 8,258,560
 *   a layer, dense: 2 rmsnorms 2,048 + qkv 1024 x (16 + 2 x 4) x 64 / 4 = 393,216 + proj
 *     (1024 / 4) x 1024 = 262,144 + router 1024 x 8 = 8,192: 665,600
 *   a layer, experts: 8 / ep experts of 1024 x 2 x 2048 + 2048 x 1024 = 6,291,456 each, / etp
 *   dense in all: 8,257,536 + 8,258,560 + 2 x 665,600 = 17,847,296
 * With ep 8, etp 1 (one expert a rank): experts 2 x 6,291,456 = 12,582,912; edp = tp dp /
 * (etp ep) = 16 / 8 = 2 ranks hold the same experts, dp x cp = 4 the same dense weights.  ZeRO 1:
 *   optimizer = 12 B x (17,847,296 / 4 + 12,582,912 / 2) = 12 x 10,753,280 = 129,039,360 B
 * (sharding the experts over dp would give 12 x 30,430,208 / 4 = 91,290,624 B, ep/(tp dp/ep) too
 * little); gradients 4 B x 30,430,208; ZeRO 3's weights 2 B x 10,753,280. */
TEST(moe_memory_folded) {
  Fx *x = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED "; zero = 1");
  expect_near(x->r.memory[RM_OPTIMIZER], 129039360.0, "optimizer state, experts over edp");
  expect_near(x->r.memory[RM_GRADIENTS], 4.0 * 30430208, "gradients");
  expect_near(x->r.memory[RM_WEIGHTS], 2.0 * 30430208, "weights");
  /* one bucket each (40e6 elements): dense over dp x cp (4 ranks tp = 4 apart), the experts
   * over edp (2 ranks etp x ep = 8 apart) */
  expect_near(coll_bytes(&x->l, RTK_REDUCESCATTER, "dp gradients", 4, 4), 4.0 * 17847296, "dense reduce-scatter");
  expect_near(coll_bytes(&x->l, RTK_REDUCESCATTER, "dp gradients", 2, 8), 4.0 * 12582912, "expert reduce-scatter");
  expect_near(coll_bytes(&x->l, RTK_ALLGATHER, "dp parameters", 2, 8), 2.0 * 12582912, "expert parameter gather");
  fx_close(x);
  x = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED "; zero = 3");
  expect_near(x->r.memory[RM_WEIGHTS], 2.0 * 10753280, "ZeRO 3 weights");
  expect_near(x->r.memory[RM_OPTIMIZER], 129039360.0, "ZeRO 3 optimizer state");
  /* a layer's gathers: dense over dp x cp, experts over edp */
  expect_near(coll_bytes(&x->l, RTK_ALLGATHER, "zero3 gather", 2, 8), 2.0 * 6291456, "zero3 expert gather");
  expect_near(coll_bytes(&x->l, RTK_ALLGATHER, "zero3 gather", 4, 4), 2.0 * 665600, "zero3 dense gather");
  fx_close(x);
  /* etp 2, ep 4 (edp 2): each rank holds 2 experts split in two, the same 6,291,456 a layer */
  x = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }",
                   "tp = 4; ep = 4; etp = 2; sequence_parallel = true; micro_batch = 1; global_batch = 4; zero = 1");
  expect_near(x->r.memory[RM_OPTIMIZER], 129039360.0, "optimizer state, etp 2");
  fx_close(x);
}

TEST(moe_load_and_router) {
  /* dropless with moe_imbalance 1.5: the busiest rank computes and receives 1.5 x 512 pairs;
   * model FLOP stay the mean's */
  Fx *x = run_scenario("", "mixtral", MOE_SIZES "; moe_imbalance = 1.5", "selene { nodes = 2 }", MOE_FOLDED);
  double flops = x->r.model_flops;
  GId bmm = find_call(&x->l, RTK_BMM, "moe");
  assert_true(const_arg(&x->l, bmm, 2) == 768);
  expect_near(coll_bytes(&x->l, RTK_ALLTOALL, "moe", 8, 1), 768.0 * 1024 * 2, "a2a of the busiest");
  fx_close(x);
  x = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED);
  expect_near(flops, x->r.model_flops, "imbalance leaves model FLOP");
  fx_close(x);
  /* capacity factor 1.25: every expert padded to 1.25 x 512 = 640 pairs, counted as model
   * FLOP; the imbalance does not apply */
  x = run_scenario("", "mixtral", MOE_SIZES "; capacity_factor = 1.25; moe_imbalance = 1.5", "selene { nodes = 2 }",
                   MOE_FOLDED);
  bmm = find_call(&x->l, RTK_BMM, "moe");
  assert_true(const_arg(&x->l, bmm, 2) == 640);
  expect_near(coll_bytes(&x->l, RTK_ALLTOALL, "moe", 8, 1), 640.0 * 1024 * 2, "a2a padded");
  assert_true(x->r.model_flops > flops);
  fx_close(x);
  /* the router in fp32 (--moe-router-dtype fp32): GEMM, score and top-k */
  x = run_scenario("", "mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED "; moe_router_dtype = fp32");
  assert_true(const_arg(&x->l, find_call(&x->l, RTK_LINEAR, "gate"), 0) == RT_FP32);
  assert_true(const_arg(&x->l, find_call(&x->l, RTK_SOFTMAX, "gate"), 0) == RT_FP32);
  fx_close(x);
}

/* ========================================================================================= */
/* 3. Shapes under tensor parallelism                                                        */
/* ========================================================================================= */

TEST(shapes_gpt_tp4) {
  /* h = 2048, a = 16, s = 2048, b = 2: t = 4096 tokens */
  Fx *x = run_scenario("", "gpt", "layers = 2; hidden = 2048; heads = 16; seq = 2048; vocab = 51200",
                       "selene { nodes = 1 }", "tp = 4; micro_batch = 2; global_batch = 4; dtype = fp16");
  GId qkv = op_call(&x->l, LB_LAYER, "qkv", RTK_LINEAR); /* dtype m k n bias */
  assert_true(const_arg(&x->l, qkv, 0) == RT_FP16);
  assert_true(const_arg(&x->l, qkv, 1) == 4096);
  assert_true(const_arg(&x->l, qkv, 2) == 2048);         /* column: k whole */
  assert_true(const_arg(&x->l, qkv, 3) == 3 * 2048 / 4); /* n = 3h / t */
  assert_true(const_arg(&x->l, qkv, 4) == 1);            /* gpt: bias */
  GId proj = op_call(&x->l, LB_LAYER, "proj", RTK_LINEAR);
  assert_true(const_arg(&x->l, proj, 2) == 2048 / 4); /* row: k = h / t */
  assert_true(const_arg(&x->l, proj, 3) == 2048);
  GId up = op_call(&x->l, LB_LAYER, "up", RTK_LINEAR), down = op_call(&x->l, LB_LAYER, "down", RTK_LINEAR);
  assert_true(const_arg(&x->l, up, 3) == 4 * 2048 / 4);
  assert_true(const_arg(&x->l, down, 2) == 4 * 2048 / 4);
  assert_true(const_arg(&x->l, down, 3) == 2048);
  GId attn = find_call(&x->l, RTK_ATTENTION, "attn"); /* dtype batch seq heads head_dim causal */
  assert_true(const_arg(&x->l, attn, 1) == 2);
  assert_true(const_arg(&x->l, attn, 2) == 2048);
  assert_true(const_arg(&x->l, attn, 3) == 16 / 4); /* heads / t */
  assert_true(const_arg(&x->l, attn, 4) == 128);
  assert_true(const_arg(&x->l, attn, 5) == 1);
  /* the activation between the column and the row linear is split too: t * 4h / tp */
  GId act = op_call(&x->l, LB_LAYER, "act", RTK_GELU);
  assert_true(const_arg(&x->l, act, 1) == 4096.0 * 4 * 2048 / 4);
  /* a norm outside the tp region is not (no sp) */
  GId ln1 = op_call(&x->l, LB_LAYER, "ln1", RTK_LAYERNORM);
  assert_true(const_arg(&x->l, ln1, 1) == 4096);
  /* the row linear's all-reduce: the whole t x h output, 2 bytes each, over tp */
  GId ar = op_call(&x->l, LB_LAYER, "proj tp allreduce", RTK_ALLREDUCE);
  assert_true(const_arg(&x->l, ar, 0) == 4096.0 * 2048 * 2);
  assert_true(const_arg(&x->l, ar, 1) == 4);
  fx_close(x);

  /* with sp the norm works on t / tp tokens */
  x = run_scenario("", "gpt", "layers = 2; hidden = 2048; heads = 16; seq = 2048; vocab = 51200",
                   "selene { nodes = 1 }",
                   "tp = 4; sequence_parallel = true; micro_batch = 2; global_batch = 4; dtype = fp16");
  assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "ln1", RTK_LAYERNORM), 1) == 4096 / 4);
  assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "qkv tp allgather", RTK_ALLGATHER), 0) == 4096.0 * 2048 * 2);
  /* and the pipeline send is sequence-sharded too (pp = 1: sent to nobody, still shaped) */
  assert_true(const_arg(&x->l, find_call(&x->l, RTK_P2P, "pipeline send"), 0) == 4096.0 * 2048 * 2 / 4);
  fx_close(x);
}

TEST(shapes_llama_gqa_tp4) {
  /* 32 heads, 8 KV heads, head_dim 128, hidden 4096: tp = 4 gives 8 and 2 per rank */
  Fx *x = run_scenario("", "llama",
                       "layers = 2; hidden = 4096; heads = 32; kv_heads = 8; seq = 2048; vocab = 32000; ffn = 11008",
                       "selene { nodes = 1 }", "tp = 4; micro_batch = 1; global_batch = 2; dtype = bf16");
  GId qkv = op_call(&x->l, LB_LAYER, "qkv", RTK_LINEAR);
  assert_true(const_arg(&x->l, qkv, 0) == RT_BF16);
  assert_true(const_arg(&x->l, qkv, 2) == 4096);
  assert_true(const_arg(&x->l, qkv, 3) == (32 + 2 * 8) * 128 / 4);
  assert_true(const_arg(&x->l, qkv, 4) == 0);   /* llama: no bias */
  GId fl = find_call(&x->l, RTK_FLASH, "attn"); /* dtype batch seq heads kv_heads head_dim causal */
  assert_true(const_arg(&x->l, fl, 1) == 1);
  assert_true(const_arg(&x->l, fl, 2) == 2048);
  assert_true(const_arg(&x->l, fl, 3) == 32 / 4);
  assert_true(const_arg(&x->l, fl, 4) == 8 / 4);
  assert_true(const_arg(&x->l, fl, 5) == 128);
  GId up = op_call(&x->l, LB_LAYER, "up", RTK_LINEAR); /* gate and up: 2 ffn / tp */
  assert_true(const_arg(&x->l, up, 3) == 2 * 11008 / 4);
  GId rot = op_call(&x->l, LB_LAYER, "rot", RTK_ROPE); /* dtype tokens heads head_dim: queries and keys */
  assert_true(const_arg(&x->l, rot, 2) == (32 + 8) / 4);
  fx_close(x);

  /* tp = 8 with 8 KV heads: one per rank */
  x = run_scenario("", "llama",
                   "layers = 2; hidden = 4096; heads = 32; kv_heads = 8; seq = 2048; vocab = 32000; ffn = 11008",
                   "selene { nodes = 1 }", "tp = 8; micro_batch = 1; global_batch = 1");
  assert_true(const_arg(&x->l, find_call(&x->l, RTK_FLASH, "attn"), 4) == 1);
  assert_true(const_arg(&x->l, op_call(&x->l, LB_LAYER, "qkv", RTK_LINEAR), 3) == (32 + 16) * 128 / 8);
  fx_close(x);
}

/* ========================================================================================= */
/* 4. Placement                                                                              */
/* ========================================================================================= */

TEST(group_layout) {
  static const struct {
    int size, stride, gpn, nodes, per;
  } ok[] = {{1, 1, 4, 1, 1}, {1, 16, 4, 1, 1}, {4, 1, 4, 1, 4}, {2, 2, 4, 1, 2}, {8, 1, 4, 2, 4},  {8, 1, 8, 1, 8},
            {8, 1, 1, 8, 1}, {8, 2, 4, 4, 2},  {4, 4, 4, 4, 1}, {4, 8, 4, 4, 1}, {16, 2, 8, 4, 4}, {2, 1, 1, 2, 1}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    int nodes = -7, per = -7;
    int rc = rt_group_layout(ok[i].size, ok[i].stride, ok[i].gpn, &nodes, &per);
    if (rc != 0 || nodes != ok[i].nodes || per != ok[i].per)
      fail_msg("rt_group_layout(%d, %d, %d): rc %d, %d x %d; want %d x %d", ok[i].size, ok[i].stride, ok[i].gpn, rc,
               nodes, per, ok[i].nodes, ok[i].per);
    assert_int_equal(nodes * per, ok[i].size);
  }
  static const int bad[][3] = {
      {0, 1, 4}, {-1, 1, 4}, {2, 0, 4}, {2, 1, 0}, /* out of range */
      {2, 6, 4},                                   /* stride >= gpn, not a multiple */
      {3, 2, 4},                                   /* 2 per node, 3 members */
      {4, 3, 4},                                   /* gpn not a multiple of the stride */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int nodes = -7, per = -7;
    if (rt_group_layout(bad[i][0], bad[i][1], bad[i][2], &nodes, &per) != -1)
      fail_msg("rt_group_layout(%d, %d, %d) should be -1", bad[i][0], bad[i][1], bad[i][2]);
  }
}

#define PLACE_SIZES "layers = 2; hidden = 1024; heads = 16; seq = 1024; vocab = 32000"
#define ONE_GPU_CLUSTER \
  "cluster single { gpu = a100_sxm4_80gb; gpus_per_node = 1; nodes = 8\n" \
  "  tier net { span = system; bandwidth = 25 GB/s; latency = 5 us } }\n"

/* The tp all-reduce of `proj` on `cluster`: its size and stride, its layout on gpn GPUs a
 * node, and its time (which must be finite). */
static double tp8_allreduce(const char *extra, const char *cluster, int gpn, int want_nodes, int want_per) {
  Fx *x = run_scenario(extra, "gpt", PLACE_SIZES, cluster, "tp = 8; micro_batch = 1; global_batch = 1");
  GId ar = op_call(&x->l, LB_LAYER, "proj tp allreduce", RTK_ALLREDUCE);
  double size = const_arg(&x->l, ar, 1), stride = const_arg(&x->l, ar, 2);
  assert_true(size == 8);
  assert_true(stride == 1); /* tp innermost: stride 1 */
  assert_int_equal(((const RtCluster *)x->l.g.cluster)->gpus_per_node, gpn);
  int nodes, per;
  assert_int_equal(rt_group_layout((int)size, (int)stride, gpn, &nodes, &per), 0);
  assert_int_equal(nodes, want_nodes);
  assert_int_equal(per, want_per);
  double t = x->vals[ar];
  if (!(isfinite(t) && t > 0)) fail_msg("the tp all-reduce on `%s` takes %g s", cluster, t);
  assert_true(isfinite(x->r.iteration));
  fx_close(x);
  return t;
}

TEST(placement_tp8) {
  double perl = tp8_allreduce("", "perlmutter { nodes = 2 }", 4, 2, 4); /* 2 nodes x 4 */
  double sel = tp8_allreduce("", "selene { nodes = 1 }", 8, 1, 8);      /* 1 node x 8 */
  double one = tp8_allreduce(ONE_GPU_CLUSTER, "single", 1, 8, 1);       /* 8 nodes x 1 */
  /* crossing Perlmutter's network (1.2 GB/s per NIC, from its samples) is slower than
   * Selene's NVSwitch in one node */
  if (!(perl > sel))
    fail_msg("tp = 8 across 2 Perlmutter nodes (%g s) should be slower than in one Selene node (%g s)", perl, sel);
  /* and 8 nodes on a 25 GB/s network slower than 300 GB/s NVLink */
  if (!(one > sel)) fail_msg("tp = 8 over 8 single-GPU nodes (%g s) vs one Selene node (%g s)", one, sel);
}

/* A tier's topology: a mesh (or ring) has no switch, so no in-switch reduction (NVLink SHARP)
 * even where its bandwidth would allow one; the ring all-reduce of 512 MiB is slower. */
static double proj_allreduce(const char *cluster) {
  const char *two = "cluster sw { gpu = h100_sxm; gpus_per_node = 8; nodes = 1\n"
                    "  tier nv { span = node; bandwidth = 450 GB/s; latency = 2 us; topology = switch } }\n"
                    "cluster ms { gpu = h100_sxm; gpus_per_node = 8; nodes = 1\n"
                    "  tier nv { span = node; bandwidth = 450 GB/s; latency = 2 us; topology = mesh } }\n";
  Fx *x = run_scenario(two, "gpt", "layers = 2; hidden = 8192; heads = 64; seq = 8192; vocab = 32000", cluster,
                       "tp = 8; micro_batch = 4; global_batch = 4");
  double t = x->vals[op_call(&x->l, LB_LAYER, "proj tp allreduce", RTK_ALLREDUCE)];
  fx_close(x);
  return t;
}

TEST(topology_mesh_no_switch_reduction) {
  double sw = proj_allreduce("sw"), ms = proj_allreduce("ms");
  if (!(ms > sw)) fail_msg("tp = 8 all-reduce on a mesh (%g s) should be slower than on a switch (%g s)", ms, sw);
}

TEST(placement_order) {
  /* 32 GPUs on 8 Perlmutter nodes, tp = 8, dp = 4.  Default placement (tp, cp, ep, dp, pp):
   * tp stride 1, dp stride 8.  placement = [dp, tp, pp]: dp stride 1, tp stride 4. */
  Fx *x = run_scenario("", "gpt", PLACE_SIZES, "perlmutter { nodes = 8 }",
                       "tp = 8; micro_batch = 1; global_batch = 4; zero = 0");
  assert_int_equal(x->r.dp, 4);
  GId tp = op_call(&x->l, LB_LAYER, "proj tp allreduce", RTK_ALLREDUCE),
      dp = find_call(&x->l, RTK_ALLREDUCE, "dp gradients");
  assert_true(const_arg(&x->l, tp, 2) == 1);
  assert_true(const_arg(&x->l, dp, 1) == 4);
  assert_true(const_arg(&x->l, dp, 2) == 8);
  double tp_default = x->vals[tp];
  fx_close(x);

  x = run_scenario("", "gpt", PLACE_SIZES, "perlmutter { nodes = 8 }",
                   "tp = 8; micro_batch = 1; global_batch = 4; zero = 0; placement = [dp, tp, pp]");
  tp = op_call(&x->l, LB_LAYER, "proj tp allreduce", RTK_ALLREDUCE);
  dp = find_call(&x->l, RTK_ALLREDUCE, "dp gradients");
  assert_true(const_arg(&x->l, tp, 1) == 8);
  assert_true(const_arg(&x->l, tp, 2) == 4); /* = dp */
  assert_true(const_arg(&x->l, dp, 2) == 1);
  int nodes, per;
  assert_int_equal(rt_group_layout(8, 4, 4, &nodes, &per), 0); /* every member on its own node */
  assert_int_equal(nodes, 8);
  assert_int_equal(per, 1);
  assert_true(isfinite(x->vals[tp]) && x->vals[tp] > 0);
  /* 8 nodes x 1 GPU moves everything over the network: slower than 2 nodes x 4 */
  if (!(x->vals[tp] > tp_default))
    fail_msg("tp over 8 nodes x 1 (%g s) vs 2 nodes x 4 (%g s)", x->vals[tp], tp_default);
  fx_close(x);

  /* pp outermost by default: its stride is tp * cp * dp */
  x = run_scenario("", "gpt", PLACE_SIZES, "perlmutter { nodes = 8 }",
                   "tp = 4; pp = 2; micro_batch = 1; global_batch = 4");
  GId p2p = find_call(&x->l, RTK_P2P, "pipeline send");
  assert_true(const_arg(&x->l, p2p, 1) == 2);
  assert_true(const_arg(&x->l, p2p, 2) == 4 * 4);
  fx_close(x);

  /* pp inside dp in a model without experts: no expert layers to lay out alike */
  x = run_scenario("", "gpt", PLACE_SIZES, "perlmutter { nodes = 8 }",
                   "tp = 4; pp = 2; micro_batch = 1; global_batch = 4; placement = [tp, pp, dp]");
  assert_int_equal(x->d.errors, 0);
  p2p = find_call(&x->l, RTK_P2P, "pipeline send");
  assert_true(const_arg(&x->l, p2p, 2) == 4);
  dp = find_call(&x->l, RTK_ALLREDUCE, "dp gradients");
  assert_true(const_arg(&x->l, dp, 2) == 4 * 2);
  fx_close(x);
}

/* An NVL72 rack (hw/systems/gb200_nvl72: trays of 4 GPUs, an NVLink tier spanning 18 trays)
 * against one flat NVLink node of as many GPUs on the same tier: a group inside the rack runs
 * on NVLink as in that node, to the bit; a group that leaves the rack (more than 72 GPUs, or
 * members spread over more than 18 trays by their stride) crosses the InfiniBand tier. */
#define NVL72_EXTRA \
  "cluster flat { gpu = gb200; gpus_per_node = 8; nodes = 1\n" \
  "  tier nvlink { span = node; bandwidth = 900 GB/s; latency = 3.4 us; topology = switch } }\n"

static double nvl72_call(const char *base, const char *model, const char *cluster, const char *plan, RtKernel k,
                         const char *label) {
  Fx *x = run_scenario(NVL72_EXTRA, base, model, cluster, plan);
  /* a layer operator's collective by the operator (labels are shared), else by its label */
  double t = x->vals[strchr(label, ' ') && strcmp(label, "dp gradients") ? op_call(&x->l, LB_LAYER, label, k)
                                                                         : find_call(&x->l, k, label)];
  fx_close(x);
  if (!(isfinite(t) && t > 0)) fail_msg("`%s` on `%s` takes %g s", label, cluster, t);
  return t;
}

TEST(placement_nvl72) {
  /* tp = 8 over 2 trays */
  const char *tp8 = "tp = 8; micro_batch = 1; global_batch = 1";
  double rack = nvl72_call("gpt", PLACE_SIZES, "gb200_nvl72 { nodes = 2 }", tp8, RTK_ALLREDUCE, "proj tp allreduce");
  double flat = nvl72_call("gpt", PLACE_SIZES, "flat", tp8, RTK_ALLREDUCE, "proj tp allreduce");
  if (rack != flat) fail_msg("tp = 8 over 2 NVL72 trays: %g s, in one NVLink node: %g s", rack, flat);
  /* ep = 32 over 8 trays: the experts' all-to-all */
  const char *moe = MOE_SIZES "; experts = 32", *ep32 = "tp = 1; ep = 32; micro_batch = 1; global_batch = 32";
  rack = nvl72_call("mixtral", moe, "gb200_nvl72 { nodes = 8 }", ep32, RTK_ALLTOALL, "moe");
  flat = nvl72_call("mixtral", moe, "flat { gpus_per_node = 32 }", ep32, RTK_ALLTOALL, "moe");
  if (rack != flat) fail_msg("ep = 32 over 8 NVL72 trays: %g s, in one NVLink node: %g s", rack, flat);
  /* 144 GPUs, two racks: the data-parallel reduction crosses InfiniBand */
  const char *dp = "tp = 1; micro_batch = 1; global_batch = 144; zero = 0";
  rack = nvl72_call("gpt", PLACE_SIZES, "gb200_nvl72 { nodes = 36 }", dp, RTK_ALLREDUCE, "dp gradients");
  flat = nvl72_call("gpt", PLACE_SIZES, "flat { gpus_per_node = 144 }", dp, RTK_ALLREDUCE, "dp gradients");
  if (!(rack > 1.2 * flat)) fail_msg("dp = 144 over 2 NVL72 racks: %g s, in one NVLink node: %g s", rack, flat);
  /* tp = 8, dp = 16 on 128 GPUs: dp's members are 2 trays apart, over 31 trays: two racks */
  const char *strided = "tp = 8; micro_batch = 1; global_batch = 16; zero = 0";
  rack = nvl72_call("gpt", PLACE_SIZES, "gb200_nvl72 { nodes = 32 }", strided, RTK_ALLREDUCE, "dp gradients");
  flat = nvl72_call("gpt", PLACE_SIZES, "flat { gpus_per_node = 128 }", strided, RTK_ALLREDUCE, "dp gradients");
  if (!(rack > 1.2 * flat)) fail_msg("dp = 16 of stride 8 over 2 NVL72 racks: %g s, in one node: %g s", rack, flat);
  /* the same 16 members with dp innermost (placement = [dp, tp, pp]): 4 trays, one rack */
  const char *inner = "tp = 8; micro_batch = 1; global_batch = 16; zero = 0; placement = [dp, tp, pp]";
  rack = nvl72_call("gpt", PLACE_SIZES, "gb200_nvl72 { nodes = 32 }", inner, RTK_ALLREDUCE, "dp gradients");
  flat = nvl72_call("gpt", PLACE_SIZES, "flat { gpus_per_node = 128 }", inner, RTK_ALLREDUCE, "dp gradients");
  if (rack != flat) fail_msg("dp = 16 of stride 1 in one NVL72 rack: %g s, in one node: %g s", rack, flat);
  /* overlap_tp (userbuffers) works inside the NVLink domain: tp = 8 over 2 trays hides as much */
  const char *ov = "tp = 8; micro_batch = 1; global_batch = 1; overlap_tp = true";
  Fx *x = run_scenario(NVL72_EXTRA, "gpt", PLACE_SIZES, "gb200_nvl72 { nodes = 2 }", ov);
  Fx *y = run_scenario(NVL72_EXTRA, "gpt", PLACE_SIZES, "flat", ov);
  Fx *z = run_scenario(NVL72_EXTRA, "gpt", PLACE_SIZES, "flat", tp8);
  if (x->r.part[RP_TP_COMM] != y->r.part[RP_TP_COMM] || !(y->r.part[RP_TP_COMM] < z->r.part[RP_TP_COMM]))
    fail_msg("overlapped tp = 8 over 2 NVL72 trays: %g s exposed, in one node: %g s (%g s without overlap)",
             x->r.part[RP_TP_COMM], y->r.part[RP_TP_COMM], z->r.part[RP_TP_COMM]);
  fx_close(x), fx_close(y), fx_close(z);
}

/* ========================================================================================= */
/* 5. Pipeline schedules                                                                     */
/* ========================================================================================= */

/* Calls the pipeline kernel: one layer per chunk unless `layers` says otherwise, no
 * embedding or head extras. */
static void pipe_kernel(int sched, int p, int v, int m, int layers, double f, double b, double w, double p2p,
                        double out[RT_KERNEL_NOUT]) {
  double a[28] = {sched, p, v, m, layers, 0, f, b, w, 0, 0, 0, 0, 0, p2p};
  assert_int_equal(rt_kernels[RTK_PIPELINE].nargs, 28);
  rt_kernels[RTK_PIPELINE].fn(NULL, a, out);
}

/* pipeline_makespan (what a sweep calls when it needs no breakdown) gives pipeline's out[0]
 * to the bit, whichever of the two ran first and filled the memo; out[1] is NaN. */
TEST(pipeline_makespan_kernel) {
  unsigned seed = 7;
  for (int t = 0; t < 400; t++) {
    seed = seed * 1103515245u + 12345u;
    int sched = (int)(seed >> 8) % RT_NSCHEDULES, p = 1 << ((seed >> 12) % 4),
        v = sched == RT_INTERLEAVED ? 1 + (int)(seed >> 16) % 3 : 1;
    int m = p * (1 + (int)(seed >> 20) % 6);
    /* clang-format off */
    double a[28] = {sched, p, v, m, 2 * p * v, (seed >> 3) & 1, 1 + (seed % 97) / 13.0, 2 + (seed % 89) / 11.0,
                    (seed % 7) / 5.0, (seed % 3) / 2.0, 0.5, 0.75, 1.25, 1.5, (seed % 5) / 8.0};
    /* clang-format on */
    double both[RT_KERNEL_NOUT], one[RT_KERNEL_NOUT], again[RT_KERNEL_NOUT];
    if (t % 2) rt_pipeline_memo_clear();
    if (t % 3) {
      rt_kernels[RTK_PIPELINE_MAKESPAN].fn(NULL, a, one);
      rt_kernels[RTK_PIPELINE].fn(NULL, a, both);
    } else {
      rt_kernels[RTK_PIPELINE].fn(NULL, a, both);
      rt_kernels[RTK_PIPELINE_MAKESPAN].fn(NULL, a, one);
    }
    rt_pipeline_memo_clear();
    rt_kernels[RTK_PIPELINE_MAKESPAN].fn(NULL, a, again);
    assert_memory_equal(&one[0], &both[0], sizeof(double));
    assert_memory_equal(&again[0], &both[0], sizeof(double));
    assert_true(isnan(one[1]) && isnan(again[1]));
    assert_true(both[1] <= both[0]);
    assert_true(one[2] == both[2]);
  }
}

/* pipeline_bound (a sweep's pruning) never exceeds the simulated makespan, on random
 * structures with unequal stages, sends, recompute and weight gradients, and micro-batch
 * counts from 1 (m < p) to many; it is tight where the closed forms say it is (1F1B and
 * GPipe with equal stages and no sends: (m + p - 1)(f + b)); bad arguments give NaN. */
TEST(pipeline_bound_kernel) {
  unsigned seed = 11;
  double worst = 1; /* the smallest bound / makespan seen */
  for (int t = 0; t < 3000; t++) {
    seed = seed * 1103515245u + 12345u;
    int sched = (int)(seed >> 8) % RT_NSCHEDULES, p = 1 + (int)(seed >> 12) % 8;
    int v = sched == RT_INTERLEAVED ? 1 + (int)(seed >> 16) % 3 : 1;
    int m = v > 1 ? p * (1 + (int)(seed >> 20) % 4) : 1 + (int)(seed >> 20) % 40;
    int layers = p * v + (int)(seed >> 24) % (2 * p * v);
    unsigned r = seed * 2654435761u;
    /* clang-format off */
    double a[28] = {sched, p, v, m, layers, 1, 0.5 + (r % 97) / 13.0, 1 + (r % 89) / 11.0, (r % 7) / 3.0,
                    (r % 3) / 2.0, (r % 11) / 4.0, (r % 13) / 5.0, (r % 17) / 3.0, (r % 19) / 2.0, (r % 5) / 4.0};
    /* clang-format on */
    double ms[RT_KERNEL_NOUT], lb[RT_KERNEL_NOUT];
    rt_kernels[RTK_PIPELINE_MAKESPAN].fn(NULL, a, ms);
    rt_kernels[RTK_PIPELINE_BOUND].fn(NULL, a, lb);
    if (!(lb[0] <= ms[0]))
      fail_msg("schedule %d p=%d v=%d m=%d layers=%d: bound %.17g > makespan %.17g", sched, p, v, m, layers, lb[0],
               ms[0]);
    if (lb[0] / ms[0] < worst) worst = lb[0] / ms[0];
  }
  assert_true(worst > 0.3);
  double out[RT_KERNEL_NOUT], lb[RT_KERNEL_NOUT];
  for (int s = RT_GPIPE; s <= RT_1F1B; s++)
    for (int p = 1; p <= 8; p *= 2)
      for (int m = 1; m <= 16; m++) {
        double a[28] = {s, p, 1, m, p, 0, 1.5, 2.25, 0, 0, 0, 0, 0, 0, 0};
        rt_kernels[RTK_PIPELINE_BOUND].fn(NULL, a, lb);
        pipe_kernel(s, p, 1, m, p, 1.5, 2.25, 0, 0, out);
        assert_true(lb[0] <= out[0] && lb[0] >= out[0] * (1 - 1e-8));
      }
  double bad_args[28] = {RT_1F1B, 2, 2, 4, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0}; /* chunks > 1 outside interleaved */
  rt_kernels[RTK_PIPELINE_BOUND].fn(NULL, bad_args, lb);
  assert_true(isnan(lb[0]));
}

TEST(pipeline_kernel_closed_forms) {
  double out[RT_KERNEL_NOUT];
  for (int p = 1; p <= 8; p *= 2)
    for (int m = 1; m <= 16; m++) {
      double f = 1.5, b = 2.25;
      for (int s = RT_GPIPE; s <= RT_1F1B; s++) {
        pipe_kernel(s, p, 1, m, p, f, b, 0, 0, out);
        if (out[0] != (m + p - 1) * (f + b) || out[1] != out[0] || out[2] != 0)
          fail_msg("%s p=%d m=%d: %g %g flags %g, want %g", s == RT_GPIPE ? "gpipe" : "1f1b", p, m, out[0], out[1],
                   out[2], (m + p - 1) * (f + b));
        /* two layers a stage: the stage times double */
        pipe_kernel(s, p, 1, m, 2 * p, f, b, 0, 0, out);
        assert_true(out[0] == (m + p - 1) * 2 * (f + b));
        /* sends: out[1] is the makespan without them, out[0] with; p2p only adds */
        pipe_kernel(s, p, 1, m, p, f, b, 0, 0.125, out);
        assert_true(out[1] == (m + p - 1) * (f + b));
        assert_true(out[1] <= out[0]);
        if (p > 1)
          assert_true(out[0] > out[1]);
        else
          assert_true(out[0] == out[1]);
      }
    }
  /* interleaved, v chunks of one layer: device time per micro-batch F = v f */
  for (int p = 2; p <= 8; p *= 2)
    for (int v = 2; v <= 4; v *= 2)
      for (int m = p; m <= 4 * p; m += p) {
        double f = 1, b = 2, F = v * f, B = v * b;
        pipe_kernel(RT_INTERLEAVED, p, v, m, p * v, f, b, 0, 0, out);
        double want = m * (F + B) + (p - 1) * (F + B) / v;
        if (out[0] != want) fail_msg("interleaved p=%d v=%d m=%d: %.17g, want %.17g", p, v, m, out[0], want);
        pipe_kernel(RT_INTERLEAVED, p, v, m, p * v, f, b, 0, 0.25, out);
        assert_true(out[1] == want);
        assert_true(out[1] <= out[0]);
        /* never slower than 1F1B over the same layers */
        double o[RT_KERNEL_NOUT];
        pipe_kernel(RT_1F1B, p, 1, m, p * v, f, b, 0, 0, o);
        assert_true(want <= o[0]);
      }
  /* zero bubble, f = b = w: a third of 1F1B's bubble */
  pipe_kernel(RT_ZERO_BUBBLE, 4, 1, 8, 4, 1, 1, 1, 0, out);
  double o[RT_KERNEL_NOUT];
  pipe_kernel(RT_1F1B, 4, 1, 8, 4, 1, 2, 0, 0, o); /* 1F1B with B + W as one backward */
  assert_true(3 * (out[0] - 8 * 3) == o[0] - 8 * 3);
  /* bad arguments: NaN and RT_BAD_ARGS */
  pipe_kernel(RT_INTERLEAVED, 4, 2, 6, 8, 1, 2, 0, 0, out); /* m % p != 0 */
  assert_true(isnan(out[0]));
  assert_true(((unsigned)out[2] & RT_BAD_ARGS) != 0);
  pipe_kernel(RT_1F1B, 4, 1, 8, 6, 1, 2, 0, 0, out); /* 6 layers over 4 stages, uniform */
  assert_true(isnan(out[0]));
}

/* A model with no embedding and no head: every chunk is the same. */
#define BARE_MODEL \
  "hidden = 1024; heads = 16; seq = 1024; vocab = 32000; ffn = 4096; kv_heads = 16; head_dim = 64; " \
  "norm = layernorm; activation = gelu; attention = flash; bias = false; layer = gpt_layer; layers_only = true"

TEST(pipeline_through_graph) {
  static const struct {
    const char *model, *plan;
    int sched, p, v, m;
  } cases[] = {
      {"layers = 4; " BARE_MODEL, "pp = 4; micro_batch = 1; global_batch = 8; schedule = gpipe; overlap_pp = true",
       RT_GPIPE, 4, 1, 4},
      {"layers = 4; " BARE_MODEL, "pp = 4; micro_batch = 1; global_batch = 8; schedule = 1f1b; overlap_pp = true",
       RT_1F1B, 4, 1, 4},
      {"layers = 8; " BARE_MODEL, "pp = 4; micro_batch = 1; global_batch = 16; schedule = 1f1b; overlap_pp = true",
       RT_1F1B, 4, 1, 8},
      {"layers = 8; " BARE_MODEL,
       "pp = 4; virtual_stages = 2; micro_batch = 1; global_batch = 8; schedule = interleaved; overlap_pp = true",
       RT_INTERLEAVED, 4, 2, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    Fx *x = run_scenario("", NULL, cases[i].model, "selene { nodes = 1 }", cases[i].plan);
    GId pipe = x->l.pipe;
    assert_int_equal(x->l.g.n[pipe].kernel, RTK_PIPELINE);
    assert_true(arg_val(x, pipe, 0) == cases[i].sched);
    assert_true(arg_val(x, pipe, 1) == cases[i].p);
    assert_true(arg_val(x, pipe, 2) == cases[i].v);
    assert_true(arg_val(x, pipe, 3) == cases[i].m);
    for (int k = 10; k <= 13; k++) assert_true(arg_val(x, pipe, k) == 0); /* no embedding, no head */
    double layers = arg_val(x, pipe, 4);
    double f = arg_val(x, pipe, 6), b = arg_val(x, pipe, 7) + arg_val(x, pipe, 8);
    double F = layers / cases[i].p * f, B = layers / cases[i].p * b; /* one device, one micro-batch */
    int p = cases[i].p, v = cases[i].v, m = cases[i].m;
    double want = v == 1 ? (m + p - 1) * (F + B) : m * (F + B) + (p - 1) * (F + B) / v;
    expect_near(x->vals[pipe + 1], want, "the makespan with free sends");
    assert_true(x->vals[pipe + 1] <= x->vals[pipe]);
    assert_true(arg_val(x, pipe, 14) > 0); /* the sends are costed */
    expect_near(x->r.part[RP_PP_COMM], x->vals[pipe] - x->vals[pipe + 1], "pp_comm = makespan - free-send makespan");
    expect_near(x->r.part[RP_BUBBLE], want - m * (F + B), "the bubble");
    assert_true(arg_val(x, pipe, 8) == 0); /* outside zero-bubble W is part of the backward */
    fx_close(x);
  }
}

/* Zero bubble gets the weight gradient apart: B + W is the backward of 1F1B's graph, and the
 * makespan is ZB-H1's m (F + B + W) + (p - 1)(F + B - min(F, B, W)) with m >= p. */
TEST(pipeline_zero_bubble_through_graph) {
  Fx *o = run_scenario("", NULL, "layers = 4; " BARE_MODEL, "selene { nodes = 1 }",
                       "pp = 4; micro_batch = 1; global_batch = 8; schedule = 1f1b; overlap_pp = true");
  Fx *z = run_scenario("", NULL, "layers = 4; " BARE_MODEL, "selene { nodes = 1 }",
                       "pp = 4; micro_batch = 1; global_batch = 8; schedule = zero_bubble; overlap_pp = true");
  GId po = o->l.pipe, pz = z->l.pipe;
  assert_true(arg_val(z, pz, 0) == RT_ZERO_BUBBLE);
  double f = arg_val(z, pz, 6), b = arg_val(z, pz, 7), w = arg_val(z, pz, 8);
  assert_true(w > 0 && b > 0);
  assert_true(arg_val(o, po, 8) == 0);
  expect_near(b + w, arg_val(o, po, 7), "B + W = the 1F1B backward");
  expect_near(f, arg_val(o, po, 6), "the same forward");
  double mn = f < b ? f : b;
  mn = mn < w ? mn : w;
  int m = 4, p = 4;
  expect_near(z->vals[pz + 1], m * (f + b + w) + (p - 1) * (f + b - mn), "ZB-H1 makespan with free sends");
  assert_true(z->vals[pz + 1] < o->vals[po + 1]);
  assert_true(z->r.part[RP_BUBBLE] < o->r.part[RP_BUBBLE]);
  fx_close(o);
  fx_close(z);
}

/* The activations the memory model keeps in flight on the first stage (lower.c's closed forms)
 * against what the schedule simulation holds (RtPipeResult.in_flight, device 0 with equal
 * stages).  The bare model has no embedding or head, so stage 0's activations are
 * in_flight x (its layers / v) x the bytes of one layer, measured with pp = 1. */
static double bare_activations(const char *plan, Report *out) {
  Fx *x = run_scenario("", NULL, "layers = 8; " BARE_MODEL, "selene { nodes = 1 }", plan);
  *out = x->r;
  double a = x->r.memory[RM_ACTIVATIONS];
  fx_close(x);
  return a;
}

/* Plans for the in-flight checks: every schedule, micro-batches below and above pp. */
static const struct InflightCase {
  const char *plan;
  int sched, p, v;
} inflight_cases[] = {
    {"pp = 4; micro_batch = 1; global_batch = 16; schedule = gpipe", RT_GPIPE, 4, 1},
    {"pp = 4; micro_batch = 1; global_batch = 16; schedule = 1f1b; overlap_pp = true", RT_1F1B, 4, 1},
    {"pp = 4; micro_batch = 1; global_batch = 4; schedule = 1f1b", RT_1F1B, 4, 1},
    {"pp = 4; micro_batch = 1; global_batch = 2; schedule = 1f1b", RT_1F1B, 4, 1},
    {"pp = 8; micro_batch = 1; global_batch = 2; schedule = 1f1b", RT_1F1B, 8, 1},
    {"pp = 4; micro_batch = 1; global_batch = 16; schedule = zero_bubble", RT_ZERO_BUBBLE, 4, 1},
    {"pp = 4; virtual_stages = 2; micro_batch = 1; global_batch = 16; schedule = interleaved", RT_INTERLEAVED, 4, 2},
    {"pp = 4; virtual_stages = 2; micro_batch = 1; global_batch = 8; schedule = interleaved; overlap_pp = true",
     RT_INTERLEAVED, 4, 2},
    {"pp = 2; virtual_stages = 4; micro_batch = 1; global_batch = 8; schedule = interleaved", RT_INTERLEAVED, 2, 4},
};

/* The case's pipeline with equal chunks (f 1, b 2, w 1 in zero-bubble) and m micro-batches. */
static RtPipeline equal_pipeline(const struct InflightCase *c, int m) {
  static double f[64], b[64], w[64];
  for (int i = 0; i < c->p * c->v; i++) f[i] = 1, b[i] = 2, w[i] = c->sched == RT_ZERO_BUBBLE ? 1 : 0;
  return (RtPipeline){(RtSchedule)c->sched, c->p, c->v, m, f, b, w, NULL, 0};
}

TEST(activations_in_flight_match_simulation) {
  Report r;
  double one = bare_activations("pp = 1; micro_batch = 1; global_batch = 8", &r) / 8; /* bytes per layer */
  assert_true(one > 0);
  for (size_t i = 0; i < sizeof inflight_cases / sizeof inflight_cases[0]; i++) {
    const struct InflightCase *c = &inflight_cases[i];
    double a = bare_activations(c->plan, &r);
    assert_int_equal(r.pp, c->p);
    RtPipeline pl = equal_pipeline(c, r.micro_batches);
    RtPipeResult res = rt_pipeline(&pl, NULL, 0, NULL);
    assert_int_equal(res.flags, 0);
    assert_int_equal(res.in_flight_device, 0);
    double per_chunk = 8.0 / (c->p * c->v); /* layers */
    double held = a / (per_chunk * one);
    if (fabs(held - res.in_flight) > 1e-9 * res.in_flight)
      fail_msg("`%s`: memory keeps %g chunks in flight on stage 0, the simulation %d (m = %d)", c->plan, held,
               res.in_flight, r.micro_batches);
    assert_int_equal(r.peak_stage, 0);
  }
}

/* The micro-batches of one model chunk that a device holds activations for, from the
 * simulation's events: +1 at the chunk's F, -1 at its B, the most along the device's order. */
static int chunk_held(const RtPipeline *pl, int device, int chunk) {
  static RtPipeEvent ev[4096];
  int n = 0;
  RtPipeResult r = rt_pipeline(pl, ev, 4096, &n);
  assert_int_equal(r.flags, 0);
  assert_true(n <= 4096);
  int held = 0, most = 0;
  for (int i = 0; i < n; i++)
    if (ev[i].device == device && ev[i].chunk == chunk) {
      held += ev[i].kind == 'F' ? 1 : ev[i].kind == 'B' ? -1 : 0;
      most = held > most ? held : most;
    }
  return most;
}

/* The embedding sits in the first model chunk (device 0), the head (output layer and loss) in
 * the last (device pp - 1).  The memory model keeps their activations for as many
 * micro-batches as the simulation holds of their chunk on their device: the embedding
 * min(m, pp) in 1F1B and zero-bubble, min(m, 2 pp) interleaved; the head one in the whole 1F1B
 * family, interleaved included (its backward follows its forward at once); both all of them
 * in GPipe.  Each is measured through the lowering as the change of its stage's activations
 * when only its own grow, against the same change with pp = 1 (one micro-batch held):
 *   head:      the vocabulary doubles (small layers, so that the last stage is the peak);
 *   embedding: a norm in the embedding block doubles its width (wide, so that the first stage
 *              is the peak; the vocabulary is small). */
#define EMB_BLOCKS \
  "block emb1 { let t = plan.micro_batch * model.seq\n" \
  "  op words = embedding(t, 1024, model.hidden, split = vocab)\n" \
  "  op extra = norm(layernorm, t, 32 * model.hidden) }\n" \
  "block emb2 { let t = plan.micro_batch * model.seq\n" \
  "  op words = embedding(t, 1024, model.hidden, split = vocab)\n" \
  "  op extra = norm(layernorm, t, 64 * model.hidden) }\n"

/* The peak stage's activations; more: the variant whose head (head) or embedding grows. */
static double end_activations(bool head, bool more, const char *plan, Report *out) {
  char model[256];
  if (head)
    snprintf(model, sizeof model, "layers = 8; hidden = 256; heads = 4; seq = 512; vocab = %d; attention = flash",
             more ? 400000 : 200000);
  else
    snprintf(model, sizeof model,
             "layers = 8; hidden = 256; heads = 4; seq = 512; vocab = 1024; attention = flash; embedding = %s",
             more ? "emb2" : "emb1");
  Fx *x = run_scenario(head ? "" : EMB_BLOCKS, "gpt", model, "selene { nodes = 1 }", plan);
  *out = x->r;
  double a = x->r.memory[RM_ACTIVATIONS];
  fx_close(x);
  return a;
}

static void expect_end_chunk_in_flight(bool head) {
  Report r;
  const char *one = "pp = 1; micro_batch = 1; global_batch = 8";
  double unit = end_activations(head, true, one, &r) - end_activations(head, false, one, &r);
  assert_true(unit > 0);
  for (size_t i = 0; i < sizeof inflight_cases / sizeof inflight_cases[0]; i++) {
    const struct InflightCase *c = &inflight_cases[i];
    int stage = head ? c->p - 1 : 0;
    double grown = end_activations(head, true, c->plan, &r);
    assert_int_equal(r.peak_stage, stage);
    double held = (grown - end_activations(head, false, c->plan, &r)) / unit;
    assert_int_equal(r.peak_stage, stage);
    RtPipeline pl = equal_pipeline(c, r.micro_batches);
    int want = chunk_held(&pl, stage, head ? c->p * c->v - 1 : 0);
    if (fabs(held - want) > 1e-9 * want)
      fail_msg("`%s`: memory keeps the %s's activations for %g micro-batches, the simulation %d", c->plan,
               head ? "head" : "embedding", held, want);
  }
}

TEST(head_activations_in_flight_match_simulation) { expect_end_chunk_in_flight(true); }
TEST(embedding_activations_in_flight_match_simulation) { expect_end_chunk_in_flight(false); }

/* ========================================================================================= */
/* 6. The breakdown adds up                                                                  */
/* ========================================================================================= */

static void expect_parts_add_up(const char *base, const char *sizes, const char *cluster, const char *plan) {
  Fx *x = run_scenario("", base, sizes, cluster, plan);
  const Report *r = &x->r;
  double sum = 0;
  for (int i = 0; i < RP_N; i++) {
    if (!(isfinite(r->part[i]) && r->part[i] >= -1e-12 * r->iteration))
      fail_msg("plan `%s`: part %d is %g", plan, i, r->part[i]);
    sum += r->part[i];
  }
  if (!(isfinite(r->iteration) && r->iteration > 0)) fail_msg("plan `%s`: iteration %g", plan, r->iteration);
  if (!(fabs(sum - r->iteration) <= 1e-9 * r->iteration))
    fail_msg("plan `%s`: the parts add up to %.17g, the iteration is %.17g", plan, sum, r->iteration);
  /* With one stage there is no bubble, exactly (not the rounding residue of the simulated
   * makespan against the closed-form busy time), and no bubble is ever negative. */
  if (r->pp == 1 && r->part[RP_BUBBLE] != 0)
    fail_msg("plan `%s`: pp = 1 but the bubble is %g s", plan, r->part[RP_BUBBLE]);
  if (r->part[RP_BUBBLE] < 0) fail_msg("plan `%s`: negative bubble %g s", plan, r->part[RP_BUBBLE]);
  if (r->pp == 1) assert_true(r->part[RP_PP_COMM] == 0);
  double peak = 0;
  for (int i = 0; i < RM_N; i++) peak += r->memory[i];
  expect_near(peak, r->peak, "memory parts add up to the peak");
  fx_close(x);
}

TEST(breakdown_adds_up) {
  static const char *const plans[] = {
      "tp = 1; pp = 1; micro_batch = 1; global_batch = 64",
      "tp = 2; pp = 4; micro_batch = 1; global_batch = 64; schedule = 1f1b",
      "tp = 2; pp = 4; micro_batch = 1; global_batch = 64; schedule = gpipe",
      "tp = 2; pp = 4; virtual_stages = 2; micro_batch = 1; global_batch = 64; schedule = interleaved",
      "tp = 2; pp = 4; micro_batch = 1; global_batch = 64; schedule = zero_bubble",
      "tp = 2; pp = 2; micro_batch = 1; global_batch = 64; zero = 0",
      "tp = 2; pp = 2; micro_batch = 1; global_batch = 64; zero = 1",
      "tp = 2; pp = 2; micro_batch = 1; global_batch = 64; zero = 2",
      "tp = 2; pp = 2; micro_batch = 1; global_batch = 64; zero = 3",
      "tp = 2; pp = 2; micro_batch = 1; global_batch = 64; zero = 1; overlap_dp = true",
      "tp = 2; pp = 2; micro_batch = 1; global_batch = 64; zero = 3; overlap_dp = true",
      "tp = 4; pp = 2; micro_batch = 1; global_batch = 64; sequence_parallel = true; recompute = selective",
      "tp = 4; pp = 2; micro_batch = 1; global_batch = 64; overlap_tp = true; recompute = full",
      "tp = 2; cp = 2; pp = 2; micro_batch = 1; global_batch = 64",
      "tp = 1; pp = 8; micro_batch = 2; global_batch = 64; dtype = fp16; dp_bucket_elements = 1000000",
      "tp = 2; pp = 2; micro_batch = 1; global_batch = 64; optimizer = sgd; grad_dtype = bf16",
      "tp = 2; cp = 2; sequence_parallel = true; micro_batch = 1; global_batch = 64; dtype = fp32",
  };
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
    expect_parts_add_up("gpt", "layers = 8; hidden = 1024; heads = 16; seq = 1024; vocab = 32000",
                        "selene { nodes = 4 }", plans[i]);
  /* fp8 on Eos's H100s (Selene's A100s have none) */
  expect_parts_add_up(
      "gpt", "layers = 8; hidden = 1024; heads = 16; seq = 1024; vocab = 32000", "eos { nodes = 4 }",
      "tp = 1; pp = 4; virtual_stages = 2; schedule = interleaved; micro_batch = 1; global_batch = 64; dtype = fp8");
  /* unequal stages: 8 layers over 3 stages (3, 3, 2), the last one with the head */
  expect_parts_add_up("gpt", "layers = 8; hidden = 1024; heads = 16; seq = 1024; vocab = 32000", "selene { nodes = 3 }",
                      "tp = 8; pp = 3; micro_batch = 1; global_batch = 16; layer_partition = balanced");
  /* 5 layers, balanced, 2 stages: the first stage is the busier */
  expect_parts_add_up("gpt", "layers = 5; hidden = 1024; heads = 16; seq = 1024; vocab = 32000", "selene { nodes = 1 }",
                      "tp = 4; pp = 2; micro_batch = 1; global_batch = 16; layer_partition = balanced");
  /* MoE with expert parallelism */
  expect_parts_add_up("mixtral", MOE_SIZES, "selene { nodes = 4 }",
                      "tp = 2; ep = 2; sequence_parallel = true; micro_batch = 1; global_batch = 64");
  expect_parts_add_up("mixtral", MOE_SIZES, "selene { nodes = 4 }",
                      "tp = 2; cp = 2; ep = 2; micro_batch = 1; global_batch = 64; dtype = tf32; recompute = full");
  expect_parts_add_up("mixtral", MOE_SIZES, "selene { nodes = 4 }",
                      "tp = 1; pp = 2; ep = 4; micro_batch = 1; global_batch = 64; zero = 1; overlap_dp = true");
  /* llama: flash attention, GQA, rope */
  expect_parts_add_up("llama", LLAMA_SIZES, "perlmutter { nodes = 4 }",
                      "tp = 4; pp = 2; micro_batch = 1; global_batch = 16; recompute = full");
}

/* ========================================================================================= */
/* 7, 8. Plans that lowering rejects; a plan that does not fit                               */
/* ========================================================================================= */

/* Lowering fails with one error containing msg (sema accepted the file). */
static void expect_lowering_error(const char *base, const char *sizes, const char *cluster, const char *plan,
                                  const char *msg) {
  char *t = scenario_text("", base, sizes, cluster, plan);
  Fx *x = fx_open(t);
  free(t);
  assert_int_equal(x->d.errors, 0);
  assert_int_equal(fx_lower(x, "s"), -1);
  assert_int_equal(x->d.errors, 1);
  assert_contains(diag_text(x), "test.llmp:");
  assert_contains(diag_text(x), ": error: ");
  assert_contains(diag_text(x), msg);
  fx_close(x);
}

TEST(lowering_rejects_plans) {
  /* 6 micro-batches over pp = 4 with interleaving: sema does not check this */
  expect_lowering_error("gpt", "layers = 8; hidden = 1024; heads = 16; seq = 1024; vocab = 32000",
                        "selene { nodes = 4 }",
                        "tp = 8; pp = 4; virtual_stages = 2; schedule = interleaved; micro_batch = 1; global_batch = 6",
                        "scenario `s`: the interleaved schedule needs the micro-batches per iteration (6) to be a "
                        "multiple of pp = 4");
  /* Megatron-Core's EP overlap takes the all-to-all or flex dispatcher, and interleaving with pp > 1 */
  expect_lowering_error("mixtral", MOE_SIZES, "selene { nodes = 2 }",
                        MOE_FOLDED "; overlap_ep = true; moe_token_dispatcher = allgather",
                        "plan.overlap_ep needs moe_token_dispatcher = alltoall or flex");
  expect_lowering_error("mixtral", MOE_SIZES, "selene { nodes = 2 }",
                        "tp = 2; pp = 2; ep = 4; micro_batch = 1; global_batch = 8; overlap_ep = true",
                        "plan.overlap_ep with pp = 2 needs schedule = interleaved");
  expect_lowering_error("mixtral", MOE_SIZES, "selene { nodes = 2 }", MOE_FOLDED "; overlap_ep = true; recompute = full",
                        "plan.overlap_ep needs recompute = none or selective");
  /* pp inside tp (stride 2) where the expert layers put etp = 1: their pp groups would differ */
  expect_lowering_error("mixtral", MOE_SIZES, "selene { nodes = 2 }",
                        "tp = 2; pp = 2; ep = 2; micro_batch = 1; global_batch = 8; placement = [tp, pp, cp, ep, dp]",
                        "scenario `s`: the placement puts pp inside groups whose sizes differ in the expert layers "
                        "(pp's stride is 2 in the attention layers, 1 in the expert layers)");
  /* tp = 4 on nodes of 6 GPUs: dp groups of 3 ranks 4 apart do not tile the nodes */
  expect_lowering_error("gpt", PLACE_SIZES, "perlmutter { nodes = 2; gpus_per_node = 6 }",
                        "tp = 4; dp = 3; micro_batch = 1; global_batch = 12",
                        "scenario `s`: kernel `allreduce` (dp gradients) runs over the dp group: 3 ranks 4 apart do "
                        "not tile nodes of 6 GPUs");
}

TEST(does_not_fit) {
  Fx *x = run_scenario("", "gpt", "layers = 8; hidden = 4096; heads = 32; seq = 2048; vocab = 51200",
                       "selene { nodes = 1 }", "tp = 8; micro_batch = 256; global_batch = 256");
  const Report *r = &x->r;
  assert_false(r->fits);
  assert_true(r->peak > r->capacity);
  assert_true(r->capacity == 80.0 * 1024 * 1024 * 1024);
  char msg[512];
  const char *m = report_fit_message(msg, sizeof msg, r);
  if (strncmp(m, "does not fit: needs ", 20)) fail_msg("fit message: %s", m);
  assert_contains(m, "activations");
  fx_close(x);
  /* the same with micro_batch = 1 fits */
  x = run_scenario("", "gpt", "layers = 8; hidden = 4096; heads = 32; seq = 2048; vocab = 51200",
                   "selene { nodes = 1 }", "tp = 8; micro_batch = 1; global_batch = 1");
  assert_true(x->r.fits);
  char msg2[512];
  assert_int_equal(strncmp(report_fit_message(msg2, sizeof msg2, &x->r), "fits: needs ", 12), 0);
  fx_close(x);
}

/* ========================================================================================= */
/* 9. Determinism and shared nodes                                                           */
/* ========================================================================================= */

TEST(evaluation_is_deterministic) {
  Fx *x = run_scenario(
      "", "gpt", "layers = 8; hidden = 1024; heads = 16; seq = 1024; vocab = 32000", "perlmutter { nodes = 4 }",
      "tp = 2; pp = 4; virtual_stages = 2; schedule = interleaved; micro_batch = 1; global_batch = 16; "
      "zero = 1; overlap_dp = true; recompute = selective");
  int nn = x->l.g.nn;
  size_t bytes = (size_t)nn * sizeof(double);
  double *a = malloc(bytes), *b = malloc(bytes);
  assert_non_null(a);
  assert_non_null(b);
  memset(a, 0, bytes);
  memset(b, 0xab, bytes); /* a slot the evaluation does not write would differ */
  graph_eval(&x->l.g, NULL, a);
  graph_eval(&x->l.g, NULL, b);
  for (int i = 0; i < nn; i++)
    if (memcmp(&a[i], &b[i], sizeof a[i]))
      fail_msg("node %d (%s): %.17g then %.17g", i, gop_name((GOp)x->l.g.n[i].op), a[i], b[i]);
  assert_memory_equal(a, x->vals, bytes); /* and the same as fx_eval's */
  Report r2;
  lower_report(&x->l, b, &r2);
  assert_memory_equal(&r2.part, &x->r.part, sizeof r2.part);
  assert_memory_equal(&r2.iteration, &x->r.iteration, sizeof r2.iteration);
  free(a);
  free(b);

  /* lowering again (the same Sema): the same graph */
  Lowered first = x->l;
  memset(&x->l, 0, sizeof x->l);
  double *firstvals = x->vals;
  x->vals = NULL;
  fx_eval(x, "s");
  assert_int_equal(x->l.g.nn, first.g.nn);
  assert_int_equal(x->l.g.nargs, first.g.nargs);
  assert_int_equal(x->l.g.nout, first.g.nout);
  for (int i = 0; i < nn; i++) {
    assert_int_equal(x->l.g.n[i].op, first.g.n[i].op);
    assert_int_equal(x->l.g.n[i].kernel, first.g.n[i].kernel);
  }
  assert_memory_equal(x->vals, firstvals, bytes);
  free(firstvals);
  lower_free(&first);
  fx_close(x);

  /* a fresh compilation of the same text: the same node count and iteration */
  Fx *y = run_scenario(
      "", "gpt", "layers = 8; hidden = 1024; heads = 16; seq = 1024; vocab = 32000", "perlmutter { nodes = 4 }",
      "tp = 2; pp = 4; virtual_stages = 2; schedule = interleaved; micro_batch = 1; global_batch = 16; "
      "zero = 1; overlap_dp = true; recompute = selective");
  assert_int_equal(y->l.g.nn, nn);
  fx_close(y);
}

/* A false conjunct or a true disjunct decides alone: no node for the other side, so a flag
 * that is off costs a sweep nothing even where the condition it is joined with varies. */
TEST(constant_conjuncts_fold) {
  Graph g;
  graph_init(&g, NULL, NULL);
  GId in = g_input(&g, 0), zero = g_const(&g, 0), one = g_const(&g, 1);
  double v;
  assert_true(g_is_const(&g, g_bin(&g, GN_AND, zero, in), &v) && v == 0);
  assert_true(g_is_const(&g, g_bin(&g, GN_AND, in, zero), &v) && v == 0);
  assert_true(g_is_const(&g, g_bin(&g, GN_OR, in, one), &v) && v == 1);
  assert_true(g_is_const(&g, g_bin(&g, GN_OR, g_const(&g, 2), in), &v) && v == 1);
  assert_false(g_is_const(&g, g_bin(&g, GN_AND, one, in), &v)); /* in itself decides */
  assert_false(g_is_const(&g, g_bin(&g, GN_OR, zero, in), &v));
  graph_free(&g);
}

TEST(identical_nodes_are_shared) {
  /* Two identical operators: one kernel call, both operators point at it. */
  const char *blk = "block twin {\n"
                    "  op a = linear(4096, 1024, 1024)\n"
                    "  op b = linear(4096, 1024, 1024)\n"
                    "  op c = linear(4096, 1024, 2048)\n"
                    "}\n";
  Fx *x = run_scenario(blk, NULL,
                       "layers = 2; hidden = 1024; heads = 16; seq = 1024; vocab = 32000; ffn = 4096; layer = twin; layers_only = true",
                       "selene { nodes = 1 }", "micro_batch = 1; global_batch = 8");
  assert_int_equal(x->l.nops[LB_LAYER], 3);
  assert_int_equal(x->l.ops[LB_LAYER][0].fwd, x->l.ops[LB_LAYER][1].fwd);
  assert_int_equal(x->l.ops[LB_LAYER][0].bwd, x->l.ops[LB_LAYER][1].bwd);
  assert_int_not_equal(x->l.ops[LB_LAYER][0].fwd, x->l.ops[LB_LAYER][2].fwd);
  assert_int_equal(count_calls(&x->l, RTK_LINEAR), 2);
  /* every call's results follow it */
  for (int i = 0; i < x->l.g.nn; i++)
    if (x->l.g.n[i].op == GN_CALL)
      for (int k = 1; k < RT_KERNEL_NOUT; k++) {
        assert_int_equal(x->l.g.n[i + k].op, GN_RESULT);
        assert_int_equal(x->l.g.n[i + k].b, i);
      }
  /* no two constants with the same bits */
  for (int i = 0; i < x->l.g.nn; i++)
    for (int j = i + 1; j < x->l.g.nn; j++)
      if (x->l.g.n[i].op == GN_CONST && x->l.g.n[j].op == GN_CONST &&
          !memcmp(&x->l.g.n[i].k, &x->l.g.n[j].k, sizeof(double)))
        fail_msg("constant %.17g at nodes %d and %d", x->l.g.n[i].k, i, j);
  /* the forward is 2 a + c per micro-batch and layer */
  assert_int_equal(x->r.micro_batches, 1);
  expect_near(x->r.part[RP_FORWARD],
              2.0 * (2 * x->vals[x->l.ops[LB_LAYER][0].fwd] + x->vals[x->l.ops[LB_LAYER][2].fwd]),
              "forward = m * layers * (a + b + c), m = 1");
  fx_close(x);
}

/* ========================================================================================= */
/* Software stacks (framework): each semantic against llmp without a stack                    */
/* ========================================================================================= */

/* scenario_text with a stack: `framework f { fw }` named by scenario s (fw NULL: none). */
/* stack_text with blocks (declarations) before the model. */
static char *stack_text_with(const char *blocks, const char *fw, const char *base, const char *model,
                             const char *cluster, const char *plan) {
  char extra[2048];
  snprintf(extra, sizeof extra, "framework f { %s }\n%s\n", fw ? fw : "", blocks);
  char *t = scenario_text(extra, base, model, cluster, plan);
  if (!fw) return t;
  char *at = strstr(t, "plan = p }"); /* name the stack in the scenario */
  assert_non_null(at);
  size_t n = strlen(t) + 32;
  char *u = malloc(n);
  assert_non_null(u);
  snprintf(u, n, "%.*splan = p; framework = f }\n", (int)(at - t), t);
  free(t);
  return u;
}

static char *stack_text(const char *fw, const char *base, const char *model, const char *cluster, const char *plan) {
  return stack_text_with("", fw, base, model, cluster, plan);
}

static Fx *run_stack(const char *fw, const char *base, const char *model, const char *cluster, const char *plan) {
  return run_text(stack_text(fw, base, model, cluster, plan));
}

/* The forward or backward seconds of the layer's operator `name`, or -1 when it has none. */
static double layer_op(const Fx *x, const char *name, bool bwd) {
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++) {
    const LowerOp *o = &x->l.ops[LB_LAYER][i];
    if (!strcmp(o->name, name)) return x->vals[bwd ? o->bwd : o->fwd];
  }
  return -1;
}

/* The layer's compute seconds of one micro-batch, forward or backward. */
static double layer_compute(const Fx *x, bool bwd) {
  double t = 0;
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++) {
    const LowerOp *o = &x->l.ops[LB_LAYER][i];
    if (o->stream == 'c') t += x->vals[bwd ? o->bwd : o->fwd];
  }
  return t;
}

/* The seconds of the layer's `moe` call of kernel k whose bytes are the largest (largest) or
 * the smallest of them. */
static double moe_call(const Fx *x, RtKernel k, bool largest) {
  double best = NAN, t = NAN;
  for (int i = 0; i < x->l.g.nn; i++) {
    const GNode *n = &x->l.g.n[i];
    if (n->op != GN_CALL || n->kernel != k || !n->label || strcmp(n->label, "moe")) continue;
    double b = arg_val(x, i, 0);
    if (isnan(best) || (largest ? b > best : b < best)) best = b, t = x->vals[i];
  }
  if (isnan(t)) fail_msg("no %s call labelled `moe`", rt_kernels[k].name);
  return t;
}

/* overlap_ep pairs each step's traffic with the other micro-batch's compute of that step
 * (combined_1f1b): forward attention | combine's gradient, dispatch | experts' backward,
 * experts' forward | dispatch's gradient, combine | attention's backward.  Here the EP group
 * spans two nodes, so each all-to-all outlasts the forward's compute beside it: less hides
 * than the layer's totals would hide. */
TEST(moe_overlap_ep_steps) {
#define EP16 "tp = 1; ep = 16; micro_batch = 1; global_batch = 64"
#define EP16_SIZES \
  "layers = 2; hidden = 1024; heads = 16; kv_heads = 4; seq = 1024; vocab = 32000; experts = 16; top_k = 8"
#define EP16_MODEL EP16_SIZES "; moe_ffn = 256"
  Fx *off = run_scenario("", "mixtral", EP16_MODEL, "selene { nodes = 2 }", EP16);
  Fx *on = run_scenario("", "mixtral", EP16_MODEL, "selene { nodes = 2 }", EP16 "; overlap_ep = true");
  assert_int_equal(off->r.micro_batches, 4);
  double one = moe_call(off, RTK_ALLTOALL, true), probs = moe_call(off, RTK_ALLTOALL, false);
  double count = moe_call(off, RTK_ALLGATHER, true);
  double ef = layer_op(off, "moe ep all-to-all", false), eb = layer_op(off, "moe ep all-to-all", true);
  expect_near(ef, count + probs + 2 * one, "forward: counts, probabilities, dispatch, combine");
  expect_near(eb, probs + 2 * one, "backward: the probabilities' gradient and two all-to-alls");
  double xf = layer_op(off, "moe", false), xb = layer_op(off, "moe", true);
  double af = layer_compute(off, false) - xf, ab = layer_compute(off, true) - xb;
  double hide = fmin(count + probs + one, xb) + fmin(one, ab) + fmin(one, af) + fmin(probs + one, xf);
  assert_true(hide < 0.9 * (fmin(ef, ab + xb) + fmin(eb, af + xf))); /* the layer's totals would hide more */
  expect_near(on->r.part[RP_EP_COMM], off->r.part[RP_EP_COMM] * (1 - 0.75 * hide / (ef + eb)), "exposed EP traffic");
  fx_close(on);
  fx_close(off);
  /* the flex dispatcher: the dispatch is the count gather and DeepEP's dispatch, no
   * probabilities; its traffic is smaller (a token crosses once per node), so smaller experts */
  off = run_scenario("", "mixtral", EP16_SIZES "; moe_ffn = 64", "selene { nodes = 2 }",
                     EP16 "; moe_token_dispatcher = flex");
  on = run_scenario("", "mixtral", EP16_SIZES "; moe_ffn = 64", "selene { nodes = 2 }",
                    EP16 "; moe_token_dispatcher = flex; overlap_ep = true");
  one = moe_call(off, RTK_DISPATCH, true), count = moe_call(off, RTK_ALLGATHER, true);
  ef = layer_op(off, "moe ep dispatch", false), eb = layer_op(off, "moe ep dispatch", true);
  expect_near(ef, count + 2 * one, "flex forward");
  expect_near(eb, 2 * one, "flex backward");
  xf = layer_op(off, "moe", false), xb = layer_op(off, "moe", true);
  af = layer_compute(off, false) - xf, ab = layer_compute(off, true) - xb;
  hide = fmin(count + one, xb) + fmin(one, ab) + fmin(one, af) + fmin(one, xf);
  assert_true(one > xf); /* the experts' forward leaves part of the dispatch's gradient exposed */
  expect_near(on->r.part[RP_EP_COMM], off->r.part[RP_EP_COMM] * (1 - 0.75 * hide / (ef + eb)), "flex: exposed EP");
  fx_close(on);
  fx_close(off);
#undef EP16
#undef EP16_MODEL
#undef EP16_SIZES
}

/* How many of the layer's TP operators communicate in the forward (backward). */
static int tp_collectives(const Fx *x, bool bwd) {
  int n = 0;
  for (int i = 0; i < x->l.nops[LB_LAYER]; i++) {
    const LowerOp *o = &x->l.ops[LB_LAYER][i];
    n += o->stream == 't' && strstr(o->name, " tp ") && x->vals[bwd ? o->bwd : o->fwd] > 0;
  }
  return n;
}

#define NEOX_SIZES "layers = 4; hidden = 2048; heads = 16; seq = 2048; vocab = 50432"

/* GPT-NeoX's gpt_j_residual: one forward all-reduce per layer (of the summed branches), two
 * in backward (each column linear's input gradient). */
TEST(stack_fused_parallel_residual) {
  const char *plan = "tp = 2; micro_batch = 1; global_batch = 4";
  Fx *x = run_stack(NULL, "gpt_neox", NEOX_SIZES, "selene { nodes = 1 }", plan);
  assert_int_equal(tp_collectives(x, false), 2);
  assert_int_equal(tp_collectives(x, true), 2);
  double sep = x->r.part[RP_TP_COMM];
  fx_close(x);
  x = run_stack("parallel_residual_reduction = fused", "gpt_neox", NEOX_SIZES, "selene { nodes = 1 }", plan);
  assert_int_equal(tp_collectives(x, false), 1);
  assert_int_equal(tp_collectives(x, true), 2);
  assert_true(layer_op(x, "proj tp allreduce", false) < 0); /* proj's output is summed unreduced */
  assert_true(layer_op(x, "down tp allreduce", false) > 0);
  assert_true(x->r.part[RP_TP_COMM] < sep);
  fx_close(x);
  /* a model without a parallel residual keeps both */
  x = run_stack("parallel_residual_reduction = fused", "gpt", NEOX_SIZES, "selene { nodes = 1 }", plan);
  assert_int_equal(tp_collectives(x, false), 2);
  fx_close(x);
}

/* DeepSpeed's ZeRO 1 (>= 0.12.4): an all-reduce of each gradient bucket, then an all-gather of
 * the updated 16-bit parameters; Megatron's distributed optimizer reduce-scatters instead. */
TEST(stack_zero1_allreduce_then_allgather) {
  const char *plan = "micro_batch = 1; global_batch = 8; zero = 1; dtype = fp16; grad_dtype = fp16; "
                     "dp_bucket_elements = 1e12";
  Fx *x = run_stack("sharded_reduction = all_reduce", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  assert_int_equal(x->r.dp, 8);
  GId ar = find_call(&x->l, RTK_ALLREDUCE, "dp gradients"), ag = find_call(&x->l, RTK_ALLGATHER, "dp parameters");
  assert_int_equal(count_calls(&x->l, RTK_REDUCESCATTER), 0);
  /* one bucket of every parameter, 2 bytes each (fp16), and the same bytes gathered */
  double bytes = const_arg(&x->l, ar, 0);
  assert_true(const_arg(&x->l, ag, 0) == bytes);
  assert_true(const_arg(&x->l, ar, 1) == 8);
  double params = bytes / 2;
  if (!(params > 5e7 && params < 2e8)) fail_msg("%g parameters", params); /* 2 layers 1024 wide, 32000 words */
  double dp = x->r.part[RP_DP_COMM];
  expect_near(dp, x->vals[ar] + x->vals[ag], "exposed dp: the all-reduce and the all-gather");
  fx_close(x);
  x = run_stack(NULL, "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  GId rs = find_call(&x->l, RTK_REDUCESCATTER, "dp gradients");
  assert_true(const_arg(&x->l, rs, 0) == bytes);
  assert_true(x->r.part[RP_DP_COMM] < dp); /* a reduce-scatter moves half an all-reduce's bytes */
  fx_close(x);
}

/* ZeRO 3 / FSDP: a layer's gather is exposed only where it outlasts the compute it is
 * prefetched behind; without prefetch every gather is exposed. */
TEST(stack_zero3_prefetch) {
  const char *plan = "micro_batch = 1; global_batch = 8; zero = 3; overlap_dp = true";
  const char *cl = "perlmutter { nodes = 2 }";
  Fx *x = run_stack("prefetch = 1", "gpt", PLACE_SIZES, cl, plan);
  GId ag = find_call(&x->l, RTK_ALLGATHER, "zero3 gather");
  double gather = x->vals[ag], fc = layer_compute(x, false);
  double full = layer_op(x, "layer zero3 gather/reduce", false);
  expect_near(full, fmax(0, gather - fc), "prefetched gather: its excess over the layer's forward");
  fx_close(x);
  x = run_stack("prefetch = 0", "gpt", PLACE_SIZES, cl, plan);
  expect_near(layer_op(x, "layer zero3 gather/reduce", false), gather, "no prefetch: the whole gather");
  fx_close(x);
  /* one element prefetched (prefetch_elements): almost all of it exposed */
  x = run_stack("prefetch = 1; prefetch_elements = 1", "gpt", PLACE_SIZES, cl, plan);
  double f = layer_op(x, "layer zero3 gather/reduce", false);
  if (!(f > full && f <= gather))
    fail_msg("prefetch_elements = 1: %g s exposed, whole units %g, gather %g", f, full, gather);
  fx_close(x);
  /* SHARD_GRAD_OP: no gather in backward, only the reduce-scatter's excess */
  x = run_stack("reshard_after_forward = false", "gpt", PLACE_SIZES, cl, plan);
  GId rs = find_call(&x->l, RTK_REDUCESCATTER, "zero3 reduce");
  expect_near(layer_op(x, "layer zero3 gather/reduce", true), fmax(0, x->vals[rs] - layer_compute(x, true)),
              "no reshard: the reduce-scatter's excess only");
  fx_close(x);
  /* BACKWARD_POST: the backward gather is issued after the layer's gradients, exposed */
  x = run_stack("backward_prefetch = post", "gpt", PLACE_SIZES, cl, plan);
  rs = find_call(&x->l, RTK_REDUCESCATTER, "zero3 reduce");
  expect_near(layer_op(x, "layer zero3 gather/reduce", true), gather + fmax(0, x->vals[rs] - layer_compute(x, true)),
              "post: the gather exposed");
  fx_close(x);
}

/* ZeRO 3's buffers: gathered layers (the one computing and the one prefetched) in the bytes
 * they are gathered in, the output layer's bf16 weights (whole for its backward), and, with
 * unsharded_grad_layers, whole layers' unsharded gradients in place of a bucket;
 * fp8_param_gather gathers a per-tensor fp8 plan's layer weights in one byte. */
TEST(stack_zero3_buffers_fp8_gather) {
  const char *fp8 = "micro_batch = 1; global_batch = 8; zero = 3; dtype = fp8; overlap_dp = true";
  const char *cl = "eos { nodes = 1 }";
  const double head = 2.0 * (32000 * 1024 + 2 * 1024); /* vocab x hidden and the final LayerNorm, bf16 */
  Fx *x = run_stack("unsharded_grad_layers = 2", "gpt", PLACE_SIZES, cl, fp8);
  double lp = const_arg(&x->l, find_call(&x->l, RTK_ALLGATHER, "zero3 gather"), 0) / 2; /* bf16 */
  if (!(lp > 1.2e7 && lp < 1.3e7)) fail_msg("%g parameters per layer", lp); /* 12 h^2 + 4 h + ... */
  /* two layers' fp32 gradients, two gathered bf16 layers and the head */
  expect_near(x->r.memory[RM_BUFFERS], 2 * lp * 4 + 2 * lp * 2 + head, "unsharded gradients and gathered layers");
  double t16 = x->r.iteration;
  fx_close(x);
  x = run_stack("unsharded_grad_layers = 2; fp8_param_gather = true", "gpt", PLACE_SIZES, cl, fp8);
  expect_near(const_arg(&x->l, find_call(&x->l, RTK_ALLGATHER, "zero3 gather"), 0), lp, "fp8 gather: a byte each");
  expect_near(x->r.memory[RM_BUFFERS], 2 * lp * 4 + 2 * lp + head, "gathered layers in fp8");
  assert_true(x->r.iteration <= t16);
  fx_close(x);
  /* without unsharded_grad_layers: a bucket of 40e6 elements (the model has more) */
  x = run_stack("fp8_param_gather = true", "gpt", PLACE_SIZES, cl, fp8);
  expect_near(x->r.memory[RM_BUFFERS], 40e6 * 4 + 2 * lp + head, "a bucket and gathered layers in fp8");
  fx_close(x);
  /* ZeRO 1 holds whole weights: a bucket only */
  x = run_stack("unsharded_grad_layers = 2; fp8_param_gather = true", "gpt", PLACE_SIZES, cl,
                "micro_batch = 1; global_batch = 8; zero = 1; dtype = fp8");
  expect_near(x->r.memory[RM_BUFFERS], 40e6 * 4, "ZeRO 1: a bucket");
  fx_close(x);
  /* a bf16 plan gathers bf16 weights whatever the stack says */
  x = run_stack("fp8_param_gather = true", "gpt", PLACE_SIZES, cl, "micro_batch = 1; global_batch = 8; zero = 3");
  expect_near(const_arg(&x->l, find_call(&x->l, RTK_ALLGATHER, "zero3 gather"), 0), 2 * lp, "bf16 gather");
  fx_close(x);
}

/* Transformer Engine's tp-comm overlap hides a TP collective behind its GEMM inside one node;
 * a tp group across nodes cannot use userbuffers (tp_overlap_span = node). */
TEST(stack_tp_comm_overlap) {
  const char *plan = "tp = 8; micro_batch = 1; global_batch = 1; overlap_tp = true";
  Fx *x = run_stack("tp_overlap_span = node", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  /* the embedding's all-reduce moves proj's bytes (t x hidden): hash-consing shares the call */
  GId ar = find_call(&x->l, RTK_ALLREDUCE, "words");
  assert_true(layer_op(x, "proj tp allreduce", false) < x->vals[ar]); /* the excess over proj's GEMM */
  fx_close(x);
  x = run_stack("tp_overlap_span = node", "gpt", PLACE_SIZES, "perlmutter { nodes = 2 }", plan);
  ar = find_call(&x->l, RTK_ALLREDUCE, "words");
  expect_near(layer_op(x, "proj tp allreduce", false), x->vals[ar], "across nodes: exposed");
  fx_close(x);
  x = run_stack("tp_overlap_span = system", "gpt", PLACE_SIZES, "perlmutter { nodes = 2 }", plan);
  ar = find_call(&x->l, RTK_ALLREDUCE, "words");
  assert_true(layer_op(x, "proj tp allreduce", false) < x->vals[ar]);
  fx_close(x);
  /* the exchanges take 16 of the A100's 108 SMs from a row linear's forward and a column
   * linear's backward GEMM; not from the others */
  x = run_stack(NULL, "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  double proj_f = layer_op(x, "proj", false), proj_b = layer_op(x, "proj", true), qkv_b = layer_op(x, "qkv", true);
  fx_close(x);
  x = run_stack("tp_overlap_sms = 16", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  expect_near(layer_op(x, "proj", false), proj_f * 108 / 92, "row forward on 92 SMs");
  expect_near(layer_op(x, "proj", true), proj_b, "row backward: a ring exchange");
  expect_near(layer_op(x, "qkv", true), qkv_b * 108 / 92, "column backward on 92 SMs");
  fx_close(x);
  /* without overlap_tp, asynchronous backward collectives hide behind the wgrad GEMM (half) */
  x = run_stack("tp_backward_overlap = true", "gpt", PLACE_SIZES, "selene { nodes = 1 }",
                "tp = 8; micro_batch = 1; global_batch = 1");
  GId qkv = op_call(&x->l, LB_LAYER, "qkv", RTK_LINEAR);
  ar = find_call(&x->l, RTK_ALLREDUCE, "words");
  expect_near(layer_op(x, "qkv tp allreduce", true), fmax(0, x->vals[ar] - 0.5 * x->vals[qkv + 1]),
              "backward: the excess over half the GEMM's backward");
  expect_near(layer_op(x, "proj tp allreduce", false), x->vals[ar], "forward: exposed");
  fx_close(x);
  /* a stack whose overlap needs sequence parallelism (userbuffers): without it the forward
   * all-reduce is exposed and no SMs are taken; a plan that asks for it is refused */
  const char *ub = "overlap_tp = true; tp_overlap_needs_sp = true; tp_overlap_sms = 16; tp_backward_overlap = true";
  x = run_stack(ub, "gpt", PLACE_SIZES, "selene { nodes = 1 }", "tp = 8; micro_batch = 1; global_batch = 1");
  ar = find_call(&x->l, RTK_ALLREDUCE, "words");
  expect_near(layer_op(x, "proj tp allreduce", false), x->vals[ar], "stack default, no sp: exposed");
  expect_near(layer_op(x, "proj", false), proj_f, "no sp: the GEMM keeps its SMs");
  fx_close(x);
  x = run_stack(ub, "gpt", PLACE_SIZES, "selene { nodes = 1 }",
                "tp = 8; micro_batch = 1; global_batch = 1; sequence_parallel = true");
  assert_true(layer_op(x, "proj tp reducescatter", false) < x->vals[find_call(&x->l, RTK_REDUCESCATTER, "words")]);
  expect_near(layer_op(x, "proj", false), proj_f * 108 / 92, "sp: row forward on 92 SMs");
  fx_close(x);
  char *t = stack_text(ub, "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  x = fx_open(t);
  free(t);
  assert_int_equal(fx_lower(x, "s"), -1);
  assert_contains(diag_text(x), "plan.overlap_tp with tp = 8 needs sequence_parallel = true");
  fx_close(x);
}

/* Transformer Engine's userbuffers run an overlapped linear's GEMM in pieces: a column forward
 * and a row data gradient as tp GEMMs of t/tp tokens (ring exchange), a row forward as
 * tp_overlap_splits GEMMs of out/splits outputs (pipelined reduce-scatter); with sequence
 * parallelism only, as userbuffers need it. */
TEST(stack_tp_overlap_splits) {
  const char *plan = "tp = 8; micro_batch = 1; global_batch = 1; overlap_tp = true; sequence_parallel = true";
  Fx *x = run_stack("", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  GId q = op_call(&x->l, LB_LAYER, "qkv", RTK_LINEAR);
  RtDtype dt = (RtDtype)const_arg(&x->l, q, 0);
  double qkv_f = layer_op(x, "qkv", false), qkv_b = layer_op(x, "qkv", true);
  double proj_b = layer_op(x, "proj", true);
  fx_close(x);
  x = run_stack("tp_overlap_splits = 4", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  const RtGpu *g = x->l.g.gpu;
  /* t = 1024 tokens, hidden 1024: qkv 1024 -> 3072/8, proj 1024/8 -> 1024 */
  double ring = 8 * rt_linear(g, dt, 128, 1024, 384, 1).fwd;
  expect_near(layer_op(x, "qkv", false), ring, "column forward: 8 GEMMs of 128 tokens");
  assert_true(ring > qkv_f);
  expect_near(layer_op(x, "qkv", true), qkv_b, "column backward: bulk exchanges, unsplit");
  expect_near(layer_op(x, "proj", false), 4 * rt_linear(g, dt, 1024, 128, 256, 1).fwd,
              "row forward: 4 GEMMs of 256 outputs");
  double dgrad = rt_linear(g, dt, 1024, 1024, 128, 0).fwd, piece = rt_linear(g, dt, 128, 1024, 128, 0).fwd;
  expect_near(layer_op(x, "proj", true), proj_b - dgrad + 8 * piece, "row data gradient: 8 GEMMs of 128 tokens");
  fx_close(x);
  x = run_stack("tp_overlap_splits = 4", "gpt", PLACE_SIZES, "selene { nodes = 1 }",
                "tp = 8; micro_batch = 1; global_batch = 1; overlap_tp = true; sequence_parallel = false");
  Fx *y = run_stack("", "gpt", PLACE_SIZES, "selene { nodes = 1 }",
                    "tp = 8; micro_batch = 1; global_batch = 1; overlap_tp = true; sequence_parallel = false");
  expect_near(layer_op(x, "qkv", false), layer_op(y, "qkv", false), "no sequence parallelism: whole GEMMs");
  expect_near(layer_op(x, "proj", true), layer_op(y, "proj", true), "no sequence parallelism: whole GEMMs");
  fx_close(y);
  fx_close(x);
  /* zero bubble's W pass: the weight gradients, which the data gradient's pieces leave as
   * they are */
  const char *zb = "tp = 4; pp = 2; micro_batch = 1; global_batch = 8; overlap_tp = true; sequence_parallel = true; "
                   "schedule = zero_bubble";
  x = run_stack("tp_overlap_splits = 4", "gpt", PLACE_SIZES, "selene { nodes = 1 }", zb);
  y = run_stack("", "gpt", PLACE_SIZES, "selene { nodes = 1 }", zb);
  expect_near(arg_val(x, x->l.pipe, 8), arg_val(y, y->l.pipe, 8), "W: the weight gradients, unsplit");
  assert_true(arg_val(x, x->l.pipe, 7) != arg_val(y, y->l.pipe, 7)); /* B: the data gradients, in pieces */
  fx_close(y);
  fx_close(x);
}

/* The diagnostics of checking text (sema only), short format. */
static char *check_text(const char *text, int *errors) {
  Diag d;
  Cap cap = {0};
  diag_init(&d, NULL);
  diag_set_writer(&d, cap_write, &cap);
  d.format = DIAG_SHORT;
  d.buffered = true;
  SemaOptions so = {NULL, 0, LLMP_SOURCE_DIR};
  Sema *sm = sema_new(&d, &so);
  *errors = sema_run_text(sm, "test.llmp", text);
  diag_flush(&d);
  sema_free(sm);
  diag_free(&d);
  return cap.p;
}

/* A stack's rules, as errors that name them: `llmp check`'s where the plan is known, lowering's
 * for a rule of the plan alone. */
TEST(stack_rules) {
  static const struct {
    const char *fw, *plan, *want;
    bool lowering;
  } cases[] = {
      {"schedules = [1f1b]", "pp = 2; schedule = zero_bubble; micro_batch = 1; global_batch = 8",
       "runs the pipeline schedules 1f1b only", false},
      {"max_zero_with_pp = 1", "pp = 2; zero = 3; micro_batch = 1; global_batch = 8", "at most stage 1", false},
      {"dp_overlap_with_pp = false", "pp = 2; overlap_dp = true; micro_batch = 1; global_batch = 8",
       "dp_overlap_with_pp = false", false},
      {"", "zero = 0; overlap_param_gather = true; micro_batch = 1; global_batch = 8", "needs a sharded optimizer", true},
      {"tp_overlap_sms = 108", "tp = 2; micro_batch = 1; global_batch = 8", "but the gpu `a100_sxm4_80gb` has 108", true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *t = stack_text(cases[i].fw, "gpt", PLACE_SIZES, "selene { nodes = 1 }", cases[i].plan);
    if (cases[i].lowering) {
      Fx *x = fx_open(t);
      assert_int_equal(fx_lower(x, "s"), -1);
      if (!strstr(diag_text(x), cases[i].want)) fail_msg("case %zu: want `%s` in:\n%s", i, cases[i].want, diag_text(x));
      fx_close(x);
    } else {
      int errors;
      char *out = check_text(t, &errors);
      assert_int_equal(errors, 1);
      if (!out || !strstr(out, cases[i].want)) fail_msg("case %zu: want `%s` in:\n%s", i, cases[i].want, out ? out : "");
      free(out);
    }
    free(t);
  }
}

/* Plan fields take the stack's values where the plan leaves them out; the plan wins. */
TEST(stack_plan_defaults) {
  const char *fw = "grad_dtype = fp16; dp_bucket_elements = 1e6";
  Fx *x = run_stack(fw, "gpt", PLACE_SIZES, "selene { nodes = 1 }", "micro_batch = 1; global_batch = 8");
  GId ar = find_call(&x->l, RTK_ALLREDUCE, "dp gradients");
  assert_true(const_arg(&x->l, ar, 0) == 2e6); /* 1e6 elements of 2 bytes */
  fx_close(x);
  x = run_stack(fw, "gpt", PLACE_SIZES, "selene { nodes = 1 }",
                "micro_batch = 1; global_batch = 8; grad_dtype = fp32; dp_bucket_elements = 2e6");
  ar = find_call(&x->l, RTK_ALLREDUCE, "dp gradients");
  assert_true(const_arg(&x->l, ar, 0) == 8e6);
  fx_close(x);
}

/* A stack's calibration for a gpu replaces that gpu's sustained figure, and the report says
 * whose it is; on another gpu the gpu's own figure stays. */
TEST(stack_gpu_calibration) {
  const char *plan = "micro_batch = 1; global_batch = 8";
  Fx *x = run_stack(NULL, "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  double own = x->r.iteration, own_fwd = x->r.part[RP_FORWARD];
  fx_close(x);
  x = run_stack("gpu a100_sxm4_80gb { sustained_compute = 0.5 }", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  assert_true(x->r.sustained == 0.5);
  assert_string_equal(x->r.sustained_from, "f");
  assert_string_equal(x->r.framework, "f");
  assert_true(x->r.part[RP_FORWARD] > own_fwd && x->r.iteration > own);
  fx_close(x);
  x = run_stack("gpu h100_sxm { sustained_compute = 0.5 }", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  assert_null(x->r.sustained_from);
  expect_near(x->r.iteration, own, "another gpu's calibration does not apply");
  fx_close(x);
  /* operator tables of the (gpu, stack) pair replace the gpu's own: the H100's, here the
   * A100's, which the H100 of Eos otherwise does not use */
  x = run_stack(NULL, "gpt", PLACE_SIZES, "eos { nodes = 1 }", plan);
  double h100 = x->r.part[RP_FORWARD];
  assert_null(x->r.tables_from);
  fx_close(x);
  x = run_stack("gpu h100_sxm { calibration = \"a100-sxm4-80gb-perlmutter\" }", "gpt", PLACE_SIZES, "eos { nodes = 1 }",
                plan);
  assert_string_equal(x->r.tables_from, "f");
  assert_true(x->r.calibrated_calls > 0 && x->r.part[RP_FORWARD] != h100);
  fx_close(x);
  char *t =
      stack_text("gpu h100_sxm { calibration = \"no-such-tables\" }", "gpt", PLACE_SIZES, "eos { nodes = 1 }", plan);
  x = fx_open(t);
  free(t);
  assert_int_equal(fx_lower(x, "s"), -1);
  assert_non_null(strstr(diag_text(x), "calibration folder `no-such-tables` not found: looked for "));
  fx_close(x);
}

/* A stack that extends another takes, field by field, the figures of its parent's block for
 * the same gpu that its own block leaves out; the report names whose each is. */
TEST(stack_gpu_block_inherits) {
  const char *text = "import \"stdlib/transformer\"\nimport \"hw/systems/selene\"\n"
                     "framework base { gpu a100_sxm4_80gb { sustained_compute = 0.5; sustained_attention = 0.8 } }\n"
                     "framework child extends base { gpu a100_sxm4_80gb { sustained_compute = 0.6 } }\n"
                     "model m extends gpt { " PLACE_SIZES " }\n"
                     "plan p { micro_batch = 1; global_batch = 8 }\n"
                     "scenario s { model = m; cluster = selene { nodes = 1 }; plan = p; framework = child }\n";
  Fx *x = run_text(strdup(text));
  assert_true(x->r.sustained == 0.6);
  assert_string_equal(x->r.sustained_from, "child");
  assert_true(x->r.attention_rate == 0.8);
  assert_string_equal(x->r.attention_from, "base");
  fx_close(x);
  /* a gpu that extends the block's gpu is that gpu */
  const char *ext =
      "import \"stdlib/transformer\"\nimport \"hw/systems/selene\"\n"
      "framework base { gpu a100_sxm4_80gb { sustained_compute = 0.5 } }\n"
      "gpu my_a100 extends a100_sxm4_80gb { memory = 64 GiB }\n"
      "model m extends gpt { " PLACE_SIZES " }\n"
      "plan p { micro_batch = 1; global_batch = 8 }\n"
      "scenario s { model = m; cluster = selene { nodes = 1; gpu = my_a100 }; plan = p; framework = base }\n";
  x = run_text(strdup(ext));
  assert_true(x->r.sustained == 0.5);
  assert_string_equal(x->r.gpu, "my_a100");
  fx_close(x);
}

/* Scenarios of one file on clusters that differ only in GPUs per node each get their own
 * calibrated copy of their cluster. */
TEST(stack_calibration_per_cluster) {
  const char *text =
      "import \"stdlib/transformer\"\nimport \"hw/systems/selene\"\n"
      "framework f { gpu a100_sxm4_80gb { sustained_compute = 0.5 } }\n"
      "model m extends gpt { " PLACE_SIZES " }\n"
      "plan p { micro_batch = 1; global_batch = 8 }\n"
      "scenario four { model = m; cluster = selene { nodes = 1; gpus_per_node = 4 }; plan = p; framework = f }\n"
      "scenario eight { model = m; cluster = selene { nodes = 1 }; plan = p; framework = f }\n";
  Fx *x = fx_open(text);
  fx_eval(x, "eight");
  double alone = x->r.iteration;
  fx_eval(x, "four");
  assert_int_equal(x->r.gpus, 4);
  fx_eval(x, "eight");
  assert_int_equal(x->r.gpus, 8);
  expect_near(x->r.iteration, alone, "the 8-GPU scenario after the 4-GPU one");
  assert_int_equal(((const RtCluster *)x->l.g.cluster)->gpus_per_node, 8);
  fx_close(x);
}

/* A stack's attention kernel at half the modelled rate: the flash attention's times double,
 * nothing else moves. */
TEST(stack_attention_rate) {
  const char *plan = "micro_batch = 1; global_batch = 8";
  const char *sizes = "layers = 2; hidden = 1024; heads = 16; kv_heads = 16; seq = 4096; vocab = 32000; ffn = 2816";
  Fx *x = run_stack(NULL, "llama", sizes, "selene { nodes = 1 }", plan);
  double f = layer_op(x, "attn", false), b = layer_op(x, "attn", true), qkv = layer_op(x, "qkv", false);
  fx_close(x);
  x = run_stack("gpu a100_sxm4_80gb { sustained_attention = 0.5 }", "llama", sizes, "selene { nodes = 1 }", plan);
  expect_near(layer_op(x, "attn", false), 2 * f, "forward at half the rate");
  expect_near(layer_op(x, "attn", true), 2 * b, "backward at half the rate");
  expect_near(layer_op(x, "qkv", false), qkv, "a GEMM unchanged");
  assert_true(x->r.attention_rate == 0.5);
  fx_close(x);
}

/* A stack that runs RoPE fused gets the physics' fused figure, not the H100 table's (which
 * timed an unfused implementation); the other operators keep their tables. */
TEST(stack_fused_kernels) {
  const char *plan = "micro_batch = 1; global_batch = 8";
  const char *sizes = "layers = 2; hidden = 1024; heads = 16; kv_heads = 16; seq = 4096; vocab = 32000; ffn = 2816";
  Fx *x = run_stack(NULL, "llama", sizes, "eos { nodes = 1 }", plan);
  double table = layer_op(x, "rot", false), norm = layer_op(x, "ln1", false);
  fx_close(x);
  x = run_stack("fused_kernels = [rope]", "llama", sizes, "eos { nodes = 1 }", plan);
  GId rope = op_call(&x->l, LB_LAYER, "rot", RTK_ROPE);
  RtGpu bare = *(const RtGpu *)x->l.g.gpu;
  bare.calib = NULL, bare.fused = 0;
  RtCost phys = rt_rope(&bare, (RtDtype)const_arg(&x->l, rope, 0), const_arg(&x->l, rope, 1), const_arg(&x->l, rope, 2),
                        const_arg(&x->l, rope, 3));
  expect_near(layer_op(x, "rot", false), phys.fwd, "fused rope: the physics");
  assert_true(phys.fwd < table);
  expect_near(layer_op(x, "ln1", false), norm, "the norm keeps its table");
  fx_close(x);
}

/* Megatron's bias-dropout-add fusion: the residual add after a dropout costs nothing more;
 * an add after another operator keeps its cost. */
TEST(stack_fused_dropout_add) {
  const char *plan = "micro_batch = 1; global_batch = 8";
  Fx *x = run_stack(NULL, "megatron_gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  double add = layer_op(x, "add1", false), fwd = x->r.part[RP_FORWARD];
  assert_true(add > 0);
  fx_close(x);
  x = run_stack("fused_kernels = [dropout_add]", "megatron_gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  assert_true(layer_op(x, "add1", false) == 0 && layer_op(x, "add1", true) == 0);
  assert_true(x->r.part[RP_FORWARD] < fwd);
  fx_close(x);
  x = run_stack("fused_kernels = [dropout_add]", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  assert_true(layer_op(x, "add1", false) > 0); /* gpt_layer has no dropout before its adds */
  fx_close(x);
}

/* Host overheads and the stack's memory reserve; the parts still add up. */
TEST(stack_host_and_memory) {
  Fx *x = run_stack("launch_overhead = 1 ms; memory_reserved = 2 GiB; fragmentation = 0.1", "gpt", PLACE_SIZES,
                    "selene { nodes = 1 }", "micro_batch = 1; global_batch = 8");
  assert_true(x->r.part[RP_HOST] > 0);
  double sum = 0, mem = 0;
  for (int i = 0; i < RP_N; i++) sum += x->r.part[i];
  expect_near(sum, x->r.iteration, "parts add up with host time");
  for (int i = 0; i < RM_RESERVED; i++) mem += x->r.memory[i];
  expect_near(x->r.memory[RM_RESERVED], 2.0 * (1 << 30) + mem / 9, "reserve: 2 GiB and a ninth of the rest");
  fx_close(x);
}

/* A dropless router syncs the host before its dispatch: the layer's forward runs at the pace
 * of each side of the sync, never faster than with static (capacity-padded) sizes; with no
 * host time, or with every kernel host-bound, the two agree. */
TEST(stack_dropless_sync) {
  const char *cl = "selene { nodes = 2 }", *us[] = {"0 us", "20 us", "60 us", "1 s"};
  bool apart = false;
  for (int i = 0; i < 4; i++) {
    char fw[64];
    snprintf(fw, sizeof fw, "launch_overhead = %s", us[i]);
    Fx *d = run_stack(fw, "mixtral", MOE_SIZES, cl, MOE_FOLDED);
    Fx *c = run_stack(fw, "mixtral", MOE_SIZES "; capacity_factor = 1.0", cl, MOE_FOLDED);
    double hd = d->r.part[RP_HOST], hc = c->r.part[RP_HOST];
    assert_true(hd >= hc);
    if (i == 0) assert_true(hd == 0 && hc == 0);
    if (i == 3) expect_near(hd, hc, "every kernel host-bound");
    apart |= hd > hc * 1.01;
    fx_close(d), fx_close(c);
  }
  assert_true(apart);
}

/* A mixture-of-experts model of its layers alone; its MTP block `mtp_b` (the test's). */
#define MOE_BARE \
  "layers = 2; hidden = 1024; heads = 16; kv_heads = 4; head_dim = 64; seq = 16384; vocab = 32000; ffn = 2048; " \
  "moe_ffn = 2048; experts = 8; top_k = 2; norm = rmsnorm; activation = swiglu; attention = flash; " \
  "bias = false; position = rotary; rotary_fraction = 1.0; layer = moe_layer; layers_only = true; mtp = mtp_b"

/* The multi-token prediction layer's dropless router syncs the host as a layer's does.  With
 * no embedding, no head and an MTP block of nothing, the MTP depth is one more layer, paced
 * the same: the host's time is that of layers + 1 layers.  Experts in the MTP block itself
 * start a span that runs through its layer: with no operator before them, the depth is paced
 * as a whole, as with a capacity factor (which pads to the same sizes here). */
TEST(stack_dropless_sync_mtp) {
  const char *cl = "selene { nodes = 2 }", *us[] = {"150 us", "200 us"}; /* host and GPU both bind */
  const char *none = "block mtp_b { let t = 1 }";
  const char *moe = "block mtp_b { let t = plan.micro_batch * model.seq / plan.cp\n"
                    "  op moe = experts(t, model.hidden, model.moe_ffn, model.experts, model.top_k) }";
  for (int i = 0; i < 2; i++) {
    char fw[64];
    snprintf(fw, sizeof fw, "launch_overhead = %s", us[i]);
    Fx *a = run_text(stack_text_with(none, fw, NULL, MOE_BARE, cl, MOE_FOLDED));
    Fx *b = run_text(stack_text_with(none, fw, NULL, MOE_BARE "; mtp_layers = 1", cl, MOE_FOLDED));
    assert_true(a->r.part[RP_HOST] > 0);
    expect_near(b->r.part[RP_HOST], a->r.part[RP_HOST] * 3 / 2, "host time of 3 layers against 2");
    fx_close(a), fx_close(b);
    /* the MTP block's experts first: its depth against the same with capacity 1 */
    Fx *d = run_text(stack_text_with(moe, fw, NULL, MOE_BARE "; mtp_layers = 1", cl, MOE_FOLDED));
    Fx *c =
        run_text(stack_text_with(moe, fw, NULL, MOE_BARE "; mtp_layers = 1; capacity_factor = 1.0", cl, MOE_FOLDED));
    Fx *d0 = run_text(stack_text_with(moe, fw, NULL, MOE_BARE, cl, MOE_FOLDED));
    Fx *c0 = run_text(stack_text_with(moe, fw, NULL, MOE_BARE "; capacity_factor = 1.0", cl, MOE_FOLDED));
    assert_true(d0->r.part[RP_HOST] > c0->r.part[RP_HOST]);          /* the layers' syncs */
    assert_true(i == 0 || d->r.part[RP_HOST] > d0->r.part[RP_HOST]); /* at 200 us, the depth's host time too */
    expect_near(d->r.part[RP_HOST] - d0->r.part[RP_HOST], c->r.part[RP_HOST] - c0->r.part[RP_HOST], "MTP depth");
    fx_close(d), fx_close(c), fx_close(d0), fx_close(c0);
  }
}

/* cuda_graphs: a captured layer costs the host one launch forward and one backward, and keeps
 * a static copy of its input and output; the part after a dropless router's sync stays
 * uncaptured. */
TEST(plan_cuda_graphs) {
  const char *plan = "tp = 8; micro_batch = 2; global_batch = 2";
  Fx *a = run_stack("launch_overhead = 1 s", "gpt", PLACE_SIZES, "selene { nodes = 1 }", plan);
  Fx *b = run_stack("launch_overhead = 1 s", "gpt", PLACE_SIZES, "selene { nodes = 1 }",
                    "tp = 8; cuda_graphs = true; micro_batch = 2; global_batch = 2");
  assert_true(b->r.cuda_graphs && !a->r.cuda_graphs);
  assert_true(b->r.part[RP_HOST] < a->r.part[RP_HOST]);
  /* every kernel host-bound: a layer of n launches takes n s forward and n s backward, 1 s
   * each captured, so 2 layers save 4 (n - 1) s, n a whole number */
  double n1 = (a->r.iteration - b->r.iteration) / 4;
  assert_true(n1 >= 5 && fabs(n1 - round(n1)) < 1e-9);
  /* 2 layers x (input + output) of 2 x 1024 tokens x 1024 x 2 bytes, one micro-batch in flight */
  expect_near(b->r.memory[RM_ACTIVATIONS] - a->r.memory[RM_ACTIVATIONS], 2.0 * 2 * 2048 * 1024 * 2, "static buffers");
  fx_close(a), fx_close(b);
  const char *cl = "selene { nodes = 2 }";
  Fx *d = run_stack("launch_overhead = 1 s", "mixtral", MOE_SIZES, cl, MOE_FOLDED "; cuda_graphs = true");
  Fx *c = run_stack("launch_overhead = 1 s", "mixtral", MOE_SIZES "; capacity_factor = 1.0", cl, MOE_FOLDED "; cuda_graphs = true");
  assert_true(d->r.part[RP_HOST] > c->r.part[RP_HOST]); /* the experts' launches after the sync */
  fx_close(d), fx_close(c);
}

/* sustained_grouped_gemm scales the expert GEMMs alone: halving it adds their time once,
 * quartering it three times; a dense model reports no such figure. */
TEST(stack_grouped_gemm_rate) {
  const char *cl = "selene { nodes = 2 }";
  Fx *x = run_stack(NULL, "mixtral", MOE_SIZES, cl, MOE_FOLDED);
  double base = layer_op(x, "moe", false), base_b = layer_op(x, "moe", true);
  fx_close(x);
  x = run_stack("gpu a100_sxm4_80gb { sustained_grouped_gemm = 0.5 }", "mixtral", MOE_SIZES, cl, MOE_FOLDED);
  double half = layer_op(x, "moe", false), half_b = layer_op(x, "moe", true);
  assert_true(x->r.grouped_rate == 0.5 && half > base);
  fx_close(x);
  x = run_stack("gpu a100_sxm4_80gb { sustained_grouped_gemm = 0.25 }", "mixtral", MOE_SIZES, cl, MOE_FOLDED);
  expect_near(layer_op(x, "moe", false) - base, 3 * (half - base), "forward GEMMs x 4");
  expect_near(layer_op(x, "moe", true) - base_b, 3 * (half_b - base_b), "backward GEMMs x 4");
  fx_close(x);
  x = run_stack("gpu a100_sxm4_80gb { sustained_grouped_gemm = 0.5 }", "gpt", PLACE_SIZES, "selene { nodes = 1 }",
                "micro_batch = 1; global_batch = 8");
  assert_true(x->r.grouped_rate == 0);
  fx_close(x);
}

/* Without overlap_pp a pipeline send blocks its sender. */
TEST(stack_blocking_pipeline_sends) {
  const char *cl = "perlmutter { nodes = 2 }";
  Fx *x = run_stack(NULL, "gpt", PLACE_SIZES, cl, "pp = 2; micro_batch = 1; global_batch = 16; overlap_pp = true");
  double async = x->r.part[RP_PP_COMM], it = x->r.iteration;
  fx_close(x);
  x = run_stack(NULL, "gpt", PLACE_SIZES, cl, "pp = 2; micro_batch = 1; global_batch = 16");
  assert_true(x->r.part[RP_PP_COMM] > async && x->r.iteration > it);
  double sum = 0;
  for (int i = 0; i < RP_N; i++) sum += x->r.part[i];
  expect_near(sum, x->r.iteration, "parts add up with blocking sends");
  fx_close(x);
}

/* ========================================================================================= */
/* Layer patterns, stage layouts, multi-token prediction                                     */
/* ========================================================================================= */

/* A Mixtral-shaped model of 8 layers: dense (llama_layer) and MoE (moe_layer) blocks. */
#define PAT_SIZES "layers = 8; hidden = 1024; heads = 16; kv_heads = 4; moe_ffn = 2048; seq = 2048; vocab = 32000; "
#define PAT_CLUSTER "eos { nodes = 1 }"

/* A pattern of one block is the model of that `layer`: the same graph's figures, bit for bit. */
TEST(pattern_of_one_block) {
  const char *plan = "tp = 2; pp = 2; micro_batch = 1; global_batch = 16; virtual_stages = 2; schedule = interleaved";
  Fx *a = run_scenario("", "mixtral", PAT_SIZES, PAT_CLUSTER, plan);
  Fx *b = run_scenario("", "mixtral", PAT_SIZES "pattern = [8 * moe_layer]", PAT_CLUSTER, plan);
  assert_memory_equal(&a->r.iteration, &b->r.iteration, sizeof(double));
  assert_memory_equal(&a->r.peak, &b->r.peak, sizeof(double));
  assert_memory_equal(&a->r.params_total, &b->r.params_total, sizeof(double));
  fx_close(a);
  fx_close(b);
}

/* Two kinds of layer on one stage: the forward and backward parts, model FLOPs and parameters
 * are the layers' shares of the two single-kind models' (whose embedding and head are the
 * same): a/L of one plus b/L of the other. */
TEST(pattern_mixes_its_blocks) {
  const char *plan = "micro_batch = 1; global_batch = 8";
  Fx *d = run_scenario("", "mixtral", PAT_SIZES "layer = llama_layer; ffn = 2048", PAT_CLUSTER, plan);
  Fx *m = run_scenario("", "mixtral", PAT_SIZES, PAT_CLUSTER, plan);
  Fx *x = run_scenario("", "mixtral", PAT_SIZES "ffn = 2048; pattern = [3 * llama_layer, (layers - 3) * moe_layer]",
                       PAT_CLUSTER, plan);
  expect_near(x->r.part[RP_FORWARD], (3 * d->r.part[RP_FORWARD] + 5 * m->r.part[RP_FORWARD]) / 8, "forward");
  expect_near(x->r.part[RP_BACKWARD], (3 * d->r.part[RP_BACKWARD] + 5 * m->r.part[RP_BACKWARD]) / 8, "backward");
  expect_near(x->r.model_flops, (3 * d->r.model_flops + 5 * m->r.model_flops) / 8, "model FLOPs");
  expect_near(x->r.params_total, (3 * d->r.params_total + 5 * m->r.params_total) / 8, "parameters");
  expect_near(x->r.params_active, (3 * d->r.params_active + 5 * m->r.params_active) / 8, "active parameters");
  assert_true(m->r.params_active < m->r.params_total && d->r.params_active == d->r.params_total);
  fx_close(d);
  fx_close(m);
  fx_close(x);
}

/* Where the dense layers sit matters on a pipeline: all three on stage 0 make it lighter than
 * stage 1, whose five MoE layers set the pace; the memory of stage 0 holds its own layers. */
TEST(pattern_places_layers) {
  const char *plan = "pp = 2; micro_batch = 1; global_batch = 8; layer_partition = balanced";
  const char *sizes = PAT_SIZES "ffn = 2048; pattern = [3 * llama_layer, 5 * moe_layer]";
  Fx *x = run_scenario("", "mixtral", sizes, PAT_CLUSTER, plan);
  Fx *y = run_scenario("", "mixtral", PAT_SIZES "ffn = 2048; pattern = [5 * moe_layer, 3 * llama_layer]", PAT_CLUSTER, plan);
  /* 4 + 4 layers: stage 0 has 3 dense + 1 MoE in x, 4 MoE in y; the other stage the rest */
  GId on0 = -1;
  for (int i = 0; i < x->l.g.nn; i++)
    if (x->l.g.n[i].op == GN_CALL && x->l.g.n[i].kernel == RTK_LAYERS_ON) {
      on0 = i;
      break;
    }
  assert_true(on0 >= 0);
  assert_true(x->vals[on0] == 3); /* group 0 (dense) on device 0 */
  assert_true(x->r.iteration > 0 && y->r.iteration > 0);
  expect_near(x->r.params_total, y->r.params_total, "the same layers");
  fx_close(x);
  fx_close(y);
}

/* An explicit layout: stage_layers per chunk (here an embedding-only first chunk and a
 * loss-only last one), and first/last_stage_layers; both against the uniform split, with a
 * vocabulary small enough that the embedding and the head cost little. */
TEST(stage_layouts) {
  const char *base = "micro_batch = 1; global_batch = 16; pp = 4; ";
  char plan[256];
  Fx *u = run_scenario("", "llama", "layers = 8; hidden = 1024; heads = 16; seq = 2048; vocab = 1024", PAT_CLUSTER,
                       "micro_batch = 1; global_batch = 16; pp = 4");
  snprintf(plan, sizeof plan, "%sstage_layers = [2, 2, 2, 2]", base);
  Fx *e = run_scenario("", "llama", "layers = 8; hidden = 1024; heads = 16; seq = 2048; vocab = 1024", PAT_CLUSTER, plan);
  assert_memory_equal(&u->r.iteration, &e->r.iteration, sizeof(double)); /* the uniform split, written out */
  snprintf(plan, sizeof plan, "%sstage_layers = [0, 4, 4, 0]", base);
  Fx *z = run_scenario("", "llama", "layers = 8; hidden = 1024; heads = 16; seq = 2048; vocab = 1024", PAT_CLUSTER, plan);
  assert_true(z->r.iteration > u->r.iteration); /* 4 layers set the pace, not 2 */
  snprintf(plan, sizeof plan, "%sfirst_stage_layers = 1; last_stage_layers = 1", base);
  Fx *f = run_scenario("", "llama", "layers = 8; hidden = 1024; heads = 16; seq = 2048; vocab = 1024", PAT_CLUSTER, plan);
  assert_true(f->r.iteration > u->r.iteration && f->r.iteration < z->r.iteration); /* 1 3 3 1 */
  fx_close(u);
  fx_close(e);
  fx_close(z);
  fx_close(f);
  /* what `llmp check` cannot see (golden layout_fields has the rest): the stages between */
  expect_lowering_error("llama", "layers = 8; hidden = 1024; heads = 16; seq = 2048; vocab = 1024", PAT_CLUSTER,
                        "micro_batch = 1; global_batch = 16; pp = 4; first_stage_layers = 1",
                        "7 layers left for the 3 stages between the first and the last do not divide evenly");
}

/* Multi-token prediction: each depth adds its block and one more layer (parameters and
 * compute) and runs the shared embedding and head again (compute only), on the last stage. */
TEST(multi_token_prediction) {
  const char *plan = "micro_batch = 1; global_batch = 8";
  const char *extra = "block mtp_proj { let t = plan.micro_batch * model.seq\n"
                      "  op n1 = norm(model.norm, t, model.hidden)\n"
                      "  op n2 = norm(model.norm, t, model.hidden)\n"
                      "  op proj = linear(t, 2 * model.hidden, model.hidden) }";
  const char *sizes = "layers = 4; hidden = 1024; heads = 16; seq = 2048; vocab = 32000; mtp = mtp_proj";
  Fx *a = run_scenario(extra, "llama", sizes, PAT_CLUSTER, plan);
  char s1[256];
  snprintf(s1, sizeof s1, "%s; mtp_layers = 1", sizes);
  Fx *b = run_scenario(extra, "llama", s1, PAT_CLUSTER, plan);
  double hidden = 1024;
  /* one llama layer: 4 h^2 (q, k, v, o with kv_heads = heads) + 3 h ffn + 2 h (norms); the
   * MTP block: 2 h (norms) + 2 h^2 */
  double ffn = 256 * ceil(floor(8 * hidden / 3) / 256);
  double one_layer = 4 * hidden * hidden + 3 * hidden * ffn + 2 * hidden;
  expect_near(b->r.params_total - a->r.params_total, one_layer + 2 * hidden + 2 * hidden * hidden, "MTP parameters");
  assert_true(b->r.model_flops > a->r.model_flops && b->r.iteration > a->r.iteration);
  fx_close(a);
  fx_close(b);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(activations_no_parallelism),
      cmocka_unit_test(activations_tensor_parallel),
      cmocka_unit_test(activations_tensor_sequence_parallel),
      cmocka_unit_test(activations_selective_recompute),
      cmocka_unit_test(activations_full_recompute),
      cmocka_unit_test(partial_recompute),
      cmocka_unit_test(activations_flash_attention),
      cmocka_unit_test(activations_flash_output_kept_once),
      cmocka_unit_test(activations_fp8),
      cmocka_unit_test(fp8_layers_only),
      cmocka_unit_test(activations_block_scaled),
      cmocka_unit_test(block_scaled_layers_only),
      cmocka_unit_test(activations_in_flight_match_simulation),
      cmocka_unit_test(head_activations_in_flight_match_simulation),
      cmocka_unit_test(embedding_activations_in_flight_match_simulation),
      cmocka_unit_test(operators_gpt_layer),
      cmocka_unit_test(operators_megatron_gpt_layer),
      cmocka_unit_test(operators_llama_layer),
      cmocka_unit_test(operators_moe_layer),
      cmocka_unit_test(moe_alltoall_folded),
      cmocka_unit_test(moe_overlap_ep),
      cmocka_unit_test(moe_overlap_ep_steps),
      cmocka_unit_test(moe_allgather_dispatcher),
      cmocka_unit_test(moe_flex_dispatcher),
      cmocka_unit_test(moe_memory_folded),
      cmocka_unit_test(moe_load_and_router),
      cmocka_unit_test(shapes_gpt_tp4),
      cmocka_unit_test(shapes_llama_gqa_tp4),
      cmocka_unit_test(group_layout),
      cmocka_unit_test(placement_tp8),
      cmocka_unit_test(topology_mesh_no_switch_reduction),
      cmocka_unit_test(placement_order),
      cmocka_unit_test(placement_nvl72),
      cmocka_unit_test(pipeline_makespan_kernel),
      cmocka_unit_test(pipeline_bound_kernel),
      cmocka_unit_test(pipeline_kernel_closed_forms),
      cmocka_unit_test(pipeline_through_graph),
      cmocka_unit_test(pipeline_zero_bubble_through_graph),
      cmocka_unit_test(breakdown_adds_up),
      cmocka_unit_test(lowering_rejects_plans),
      cmocka_unit_test(does_not_fit),
      cmocka_unit_test(evaluation_is_deterministic),
      cmocka_unit_test(constant_conjuncts_fold),
      cmocka_unit_test(identical_nodes_are_shared),
      cmocka_unit_test(stack_fused_parallel_residual),
      cmocka_unit_test(stack_zero1_allreduce_then_allgather),
      cmocka_unit_test(stack_zero3_prefetch),
      cmocka_unit_test(stack_zero3_buffers_fp8_gather),
      cmocka_unit_test(pattern_of_one_block),
      cmocka_unit_test(pattern_mixes_its_blocks),
      cmocka_unit_test(pattern_places_layers),
      cmocka_unit_test(stage_layouts),
      cmocka_unit_test(multi_token_prediction),
      cmocka_unit_test(stack_tp_comm_overlap),
      cmocka_unit_test(stack_tp_overlap_splits),
      cmocka_unit_test(stack_rules),
      cmocka_unit_test(stack_plan_defaults),
      cmocka_unit_test(stack_gpu_calibration),
      cmocka_unit_test(stack_gpu_block_inherits),
      cmocka_unit_test(stack_calibration_per_cluster),
      cmocka_unit_test(stack_attention_rate),
      cmocka_unit_test(stack_fused_kernels),
      cmocka_unit_test(stack_fused_dropout_add),
      cmocka_unit_test(stack_host_and_memory),
      cmocka_unit_test(stack_dropless_sync),
      cmocka_unit_test(stack_dropless_sync_mtp),
      cmocka_unit_test(stack_grouped_gemm_rate),
      cmocka_unit_test(plan_cuda_graphs),
      cmocka_unit_test(stack_blocking_pipeline_sends),
  };
  return RUN_TESTS(tests);
}
