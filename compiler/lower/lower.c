/* lower.c - lowering's entry points: a scenario's (or a sweep's) cost graph, and the Report
 * and trace read from its values.
 *
 * The model of one training iteration, as the files of lowering build it (lower_private.h
 * lists them; docs/model.md has it in prose):
 *
 * Operators.  Each `op` of a block becomes kernel calls for one micro-batch on one rank.
 * `split = column` divides a linear's outputs by tp and `split = row` its inputs; the
 * attention heads, the activation and any element-wise work between a column and the next
 * row linear are divided by tp too.  Outside that region, norms, adds and dropouts work on
 * all t tokens, or t/tp with sequence parallelism.  The conjugate collectives are inserted:
 * without sequence parallelism, an all-reduce of the row linear's output (forward) and of
 * the column linear's input gradient (backward); with it, all-gather before the column
 * linear and reduce-scatter after the row linear (and the reverse in backward).  Context
 * parallelism splits attention over cp ranks with a ring exchange of K and V (cp-1 sends
 * forward, twice that backward).  Experts exchange tokens with an all-to-all over ep
 * (dispatch and combine, forward and backward).  With overlap_tp (overlap_dp, for ZeRO-3's
 * gathers) a collective is hidden behind the compute it overlaps, and only the excess counts.
 *
 * Stages.  Layers are split over pp * virtual_stages model chunks (uniform or balanced);
 * the first chunk adds the embedding block, the last the head block.  The pipeline kernel
 * simulates the schedule with each chunk's times; a sweep's varying pp needs no new graph.
 *
 * Data parallelism.  Gradients are reduced over dp in buckets of dp_bucket_elements: an
 * all-reduce (ZeRO 0) or a reduce-scatter plus an all-gather of the updated parameters
 * (ZeRO 1, 2: Megatron's distributed optimizer); ZeRO 3 gathers each layer's parameters in
 * forward and backward and reduce-scatters its gradients in backward.  With overlap_dp the
 * reduction hides behind the last micro-batch's backward and the gather behind the first
 * forward, except one bucket each; without, it all follows the pipeline's end.
 *
 * Memory.  Per GPU of the first and of the last stage (the larger is reported): weights
 * (2 bytes, 4 in fp32), gradients (grad_dtype, fp32 by default), optimizer state (fp32
 * master weights and two moments: 12 bytes, 8 in fp32, sharded by ZeRO), activations (what
 * each operator saves for its backward, times the micro-batch chunks the schedule keeps in
 * flight on that stage), communication buffers (one gradient bucket, ZeRO-3's gathered
 * layer).  What each operator saves follows Korthikanti et al. 2022 (arXiv 2205.05198),
 * section 4: a linear its input, a norm its input, an activation its input, unfused
 * attention Q, K, V and its softmax output (and dropout mask and output), flash attention
 * Q, K, V, O and the log-sum-exp (O is the next linear's input, counted once), a dropout its
 * one-byte mask.  fp8 (Transformer Engine) is the layers' GEMMs only, each keeping the fp8
 * cast of its input, one byte an element. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lower_private.h"
#include "strbuf.h"

/* --- errors ---------------------------------------------------------------------------- */

void lower_err(Lower *L, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(L->d, DIAG_ERROR, L->file, sp, fmt, ap);
  va_end(ap);
  L->errors++;
}

/* Where an error about the user's input goes: the model when it is the user's, else the
 * scenario (both outside the data folder's stdlib/ and hw/). */
static Decl *user_decl(Lower *L) { return sema_in_data_dir(L->s, L->model) ? L->scenario : L->model; }

/* An error inside a block: reported at the operator, with a note at the scenario.  A block of
 * the installed stdlib is not the user's to change: the error goes to the user's declaration
 * that led there, with a note at the operator. */
void lower_err_blk(Lower *L, AstNode *n, const char *fmt, ...) {
  SrcFile *f;
  Span sp;
  Decl *blk = L->blk ? L->blk : L->scenario;
  sema_decl_at(L->s, blk, &f, &sp);
  bool stdlib = L->blk && n && sema_in_data_dir(L->s, L->blk) && !sema_in_data_dir(L->s, user_decl(L));
  va_list ap;
  va_start(ap, fmt);
  if (stdlib) {
    SrcFile *uf;
    Span us;
    sema_decl_at(L->s, user_decl(L), &uf, &us);
    diag_vreport(L->d, DIAG_ERROR, uf, us, fmt, ap);
    diag_note(L->d, f, n->span, "in block `%s`, which %s `%s` uses", sema_decl_name(L->blk),
              user_decl(L) == L->model ? "model" : "scenario", sema_decl_name(user_decl(L)));
  } else {
    diag_vreport(L->d, DIAG_ERROR, f, n ? n->span : sp, fmt, ap);
  }
  va_end(ap);
  if (!stdlib || user_decl(L) != L->scenario)
    diag_note(L->d, L->file, L->at, "in scenario `%s`", sema_decl_name(L->scenario));
  L->errors++;
}

void lower_missing_field(Lower *L, AstNode *n, const char *field) {
  L->missing++;
  for (int i = 0; i < L->nmissing_seen; i++)
    if (!strcmp(L->missing_seen[i], field)) return;
  if (L->nmissing_seen < 16) L->missing_seen[L->nmissing_seen++] = field;
  SrcFile *f, *bf;
  Span sp, bs;
  sema_decl_at(L->s, L->model, &f, &sp);
  const char *blk = L->blk ? sema_decl_name(L->blk) : "?";
  Decl *base = sema_parent(L->model);
  SrcFile *ff;
  Span fs;
  if (sema_field_at(L->s, L->model, field, &ff, &fs)) {
    diag_error(L->d, f, sp, "model `%s`'s `%s`, which its block `%s` reads, has no value: it is computed from fields "
               "the model leaves unset", sema_decl_name(L->model), field, blk);
    diag_note(L->d, ff, fs, "`%s` set here", field);
  } else if (base)
    diag_error(L->d, f, sp, "model `%s` does not set `%s`, which its block `%s` reads (nor does `%s`, which it extends): set it",
               sema_decl_name(L->model), field, blk, sema_decl_name(base));
  else
    diag_error(L->d, f, sp,
               "model `%s` does not set `%s`, which its block `%s` reads: set it, or extend a base model that "
               "sets the architecture (`extends llama` or `extends gpt`, from stdlib/transformer)",
               sema_decl_name(L->model), field, blk);
  sema_decl_at(L->s, L->blk ? L->blk : L->scenario, &bf, &bs);
  diag_note(L->d, bf, n ? n->span : bs, "`%s` read here", field);
  diag_note(L->d, L->file, L->at, "in scenario `%s`", sema_decl_name(L->scenario));
  L->errors++;
}

/* --- entry points ---------------------------------------------------------------------- */

/* The fields a sweep can vary: numbers, flags and the coded enumerations of the plan that
 * lowering reads as nodes, and any number of the model.  Others (dtype, placement, the
 * cluster) shape the graph itself. */
static bool axis_supported(Lower *L, const LowerAxis *a) {
  return lower_axis_is_input(L->s, L->scenario, a->root, a->field);
}

/* The sweep's `vary` line of axis a (the path it varies), else the scenario's name. */
static Span vary_at(Lower *L, const LowerAxis *a) {
  for (AstNode *c = L->ax->sweep ? sema_block_body(L->ax->sweep).first : NULL; c; c = c->next) {
    AstNode *p = c->kind == AST_VARY ? c->u.bin.lhs : NULL;
    if (p && p->kind == AST_MEMBER && p->u.bin.lhs->kind == AST_NAME && !strcmp(p->name, a->field) &&
        !strcmp(p->u.bin.lhs->name, a->root))
      return p->span;
  }
  return L->at;
}

/* A sweep's requires and objective, over the lowered outputs, and its plan's sizes. */
static void lower_sweep_outputs(Lower *L) {
  Lowered *o = L->out;
  L->results = true;
  L->blk = NULL;
  char name[32];
  for (AstNode *c = sema_block_body(L->ax->sweep).first; c; c = c->next) {
    if (c->kind != AST_REQUIRE && c->kind != AST_MINIMIZE && c->kind != AST_MAXIMIZE) continue;
    Val v = lower_eval(L, c->u.bin.rhs);
    if (!v.ok || v.word) {
      lower_err_blk(L, c->u.bin.rhs, "this %s cannot be evaluated for the sweep's points",
                    c->kind == AST_REQUIRE ? "requirement" : "objective");
      continue;
    }
    if (c->kind == AST_REQUIRE) {
      snprintf(name, sizeof name, "require.%d", o->nrequires++);
      graph_output(L->g, arena_strdup(&o->names, name), v.id);
    } else {
      graph_output(L->g, "objective", v.id);
      o->maximize = c->kind == AST_MAXIMIZE;
    }
  }
  L->results = false;
  /* the plan's sizes as evaluated per point: what a sweep reads to find axes without effect */
  graph_output(L->g, "plan.tp", L->tp);
  graph_output(L->g, "plan.pp", L->pp);
  graph_output(L->g, "plan.dp", L->dp);
  graph_output(L->g, "plan.ep", L->ep);
  graph_output(L->g, "plan.micro_batches", L->m);
}

/* Whether a stack's `gpu NAME { }` block is for the scenario's gpu: NAME is that gpu, or a gpu
 * it extends (a user's `gpu my_h100 extends h100_sxm` is an H100). */
static bool block_for_gpu(Lower *L, const char *label) {
  for (Decl *g = sema_ref(L->s, L->cluster, "gpu"); g; g = sema_parent(g))
    if (!strcmp(sema_decl_name(g), label)) return true;
  return false;
}

/* A figure of the stack's block for the scenario's gpu: the stack's own, else that of the
 * stack it extends, and so on; the stack that sets it in *from. */
static bool stack_figure(Lower *L, const char *field, double *x, const char **from) {
  for (Decl *f = L->st.decl; f; f = sema_parent(f))
    for (int i = 0; i < sema_nsubs(f, "gpu"); i++)
      if (block_for_gpu(L, sema_sub_label(f, "gpu", i)) && sema_sub_number(L->s, f, "gpu", i, field, x)) {
        *from = sema_decl_name(f);
        return true;
      }
  return false;
}

/* The stack's kernels and calibration for the scenario's gpu: its fused kernels, and its
 * `gpu NAME { }` block's figures and tables (field by field along its extends), each
 * replacing the gpu's own. */
static void stack_calibration(Lower *L, HwSet *hw) {
  Report *r = &L->out->meta;
  Decl *fw = L->st.decl;
  r->framework = fw ? sema_decl_name(fw) : NULL;
  r->framework_version = fw ? sema_word(L->s, fw, "version") : NULL;
  r->sustained_from = r->sustained_fp8_from = r->sustained_fp4_from = r->tables_from = r->launch_from = NULL;
  r->launch_overhead = L->st.launch;
  if (!fw) return;
  RtGpu g = *L->rc->gpu;
  g.fused = L->st.fused;
  const char *from;
  if (stack_figure(L, "sustained_compute", &g.sustained_compute, &from)) r->sustained_from = from;
  if (stack_figure(L, "sustained_compute_fp8", &g.sustained_fp8, &from)) r->sustained_fp8_from = from;
  if (stack_figure(L, "sustained_compute_fp4", &g.sustained_fp4, &from)) r->sustained_fp4_from = from;
  if (stack_figure(L, "launch_overhead", &L->st.launch, &from)) r->launch_from = from, r->launch_overhead = L->st.launch;
  if (stack_figure(L, "sustained_grouped_gemm", &L->st.grouped_rate, &from)) r->grouped_from = from;
  if (stack_figure(L, "sustained_attention", &g.attention_rate, &from))
    r->attention_rate = g.attention_rate, r->attention_from = from;
  for (Decl *f = fw; f && !r->tables_from; f = sema_parent(f))
    for (int i = 0; i < sema_nsubs(f, "gpu"); i++) {
      const char *tables =
          block_for_gpu(L, sema_sub_label(f, "gpu", i)) ? sema_sub_word(L->s, f, "gpu", i, "calibration") : NULL;
      if (!tables) continue;
      bool failed;
      const RtCalib *t = hw_calib_named(hw, tables, f, &failed);
      if (failed) {
        L->errors++;
        return;
      }
      g.calib = t, r->tables_from = sema_decl_name(f);
      break;
    }
  L->rc = hw_cluster_variant(hw, L->rc, &g);
}

/* The Report's names, hardware figures and measurements (the plan's echo is lower_plan.c's). */
static void report_names(Lower *L) {
  Sema *s = L->s;
  Decl *sc = L->scenario;
  Report *r = &L->out->meta;
  r->scenario = sema_decl_name(sc);
  r->file = sema_decl_path(s, sc);
  r->model = sema_decl_name(L->model);
  r->cluster = sema_decl_name(L->cluster);
  r->gpu = L->gpu->name;
  r->capacity = L->gpu->memory;
  Decl *gpu = sema_ref(s, L->cluster, "gpu");
  if (!gpu || !sema_number(s, gpu, "tdp", &r->tdp)) r->tdp = 0;
  r->sustained = rt_sustained(L->gpu, RT_BF16), r->sustained_fp8 = rt_sustained(L->gpu, RT_FP8);
  r->sustained_fp4 = rt_sustained(L->gpu, RT_NVFP4);
  double x;
  if (sema_nsubs(sc, "measured") > 0) {
    if (sema_sub_number(s, sc, "measured", 0, "iteration", &x)) {
      r->has_measured_iteration = true;
      r->measured_iteration = x;
    }
    if (sema_sub_number(s, sc, "measured", 0, "tflops_per_gpu", &x)) {
      r->has_measured_tflops = true;
      r->measured_tflops = x;
    }
  }
}

/* measured { tokens_per_s } and { mfu } as the iteration and the TFLOP/s per GPU they state,
 * which the report compares; given together with those, they must agree to 1 %. */
static void measured_derived(Lower *L) {
  Report *r = &L->out->meta;
  Decl *sc = L->scenario;
  double tps, mfu, tokens = cv(L, L->gb) * cv(L, L->seq);
  double peak = L->gpu->peak[L->dt_plan] > 0 ? L->gpu->peak[L->dt_plan] : L->gpu->peak[RT_FP16]; /* as MFU's */
  if (sema_nsubs(sc, "measured") <= 0) return;
  if (sema_sub_number(L->s, sc, "measured", 0, "tokens_per_s", &tps) && isfinite(tokens)) {
    double it = tokens / tps;
    if (!r->has_measured_iteration)
      r->has_measured_iteration = true, r->measured_iteration = it;
    else if (fabs(it - r->measured_iteration) > 0.01 * r->measured_iteration)
      lower_err(L, L->at,
                "scenario `%s`: measured tokens_per_s = %g states an iteration of %.4g s (global_batch x seq / "
                "tokens_per_s), but measured iteration = %.4g s",
                sema_decl_name(sc), tps, it, r->measured_iteration);
  }
  if (sema_sub_number(L->s, sc, "measured", 0, "mfu", &mfu)) {
    double tf = mfu * peak;
    if (!r->has_measured_tflops)
      r->has_measured_tflops = true, r->measured_tflops = tf;
    else if (fabs(tf - r->measured_tflops) > 0.01 * r->measured_tflops)
      lower_err(L, L->at,
                "scenario `%s`: measured mfu = %g states %.4g TFLOP/s per GPU (of %s's %.4g TFLOP/s for %s), but "
                "measured tflops_per_gpu = %.4g TFLOP/s",
                sema_decl_name(sc), mfu, tf / 1e12, L->gpu->name, peak / 1e12, rt_dtype_name(L->dt_plan),
                r->measured_tflops / 1e12);
  }
}

/* dst += times * src: its seconds, activations, FLOPs and launches, and with params its
 * parameters (without: shared weights run again, as multi-token prediction's head). */
static void acc_fold(Lower *L, Acc *dst, const Acc *src, double times, bool params) {
  GId k = K(L, times);
#define F(x) dst->x = ADD(L, dst->x, MUL(L, k, src->x))
  F(fc), F(bc), F(wg), F(sel), F(act), F(act_sel), F(flops), F(sel_flops);
  for (int i = 0; i < CM_N; i++) F(comm_f[i]), F(comm_b[i]);
  F(launches), F(blaunches), F(sync_fc), F(sync_launches), F(xf), F(xb), F(edf), F(edb);
  dst->sync |= src->sync;
  if (params) F(params), F(tensors), F(eparams), F(etensors), F(wtotal), F(wactive);
#undef F
}

/* One multi-token prediction depth is its block m, then its layer ly: a dropless router's sync
 * in m starts a span that runs on through ly (ly's own sync then falls inside it). */
static void mtp_span(Lower *L, Acc *m, Acc *ly) {
  if (!m->sync) return;
  m->sync_fc = ADD(L, m->sync_fc, ADD(L, ly->fc, lower_comm_sum(L, ly->comm_f))), m->sync_launches = ADD(L, m->sync_launches, ly->launches);
  ly->sync_fc = ly->sync_launches = K(L, 0);
}

/* The model's embedding and head blocks: without them the vocabulary (its GEMM, loss and
 * weights) would be left out of the times and the memory, so a model names both, or says
 * with layers_only that it is its layers alone (a layer measured on its own). */
static bool has_ends(Lower *L) {
  static const char *const ends[] = {"embedding", "head"};
  bool only = bool_or(L, L->model, "layers_only", false), ok = true;
  SrcFile *f;
  Span sp;
  sema_decl_at(L->s, L->model, &f, &sp);
  for (int i = 0; i < 2; i++) {
    bool has = sema_ref(L->s, L->model, ends[i]) != NULL;
    if (has != only) continue;
    if (only)
      diag_error(L->d, f, sp, "model `%s` has layers_only = true and a `%s` block: remove one of them",
                 sema_decl_name(L->model), ends[i]);
    else
      diag_error(L->d, f, sp,
                 "model `%s` has no `%s` block, so its vocabulary would not be costed: set `%s = %s` "
                 "(stdlib/transformer), extend a base model (`extends llama` or `extends gpt`), or, for its layers "
                 "alone, set `layers_only = true`",
                 sema_decl_name(L->model), ends[i], ends[i], i ? "gpt_head" : "token_embedding");
    diag_note(L->d, L->file, L->at, "in scenario `%s`", sema_decl_name(L->scenario));
    L->errors++;
    ok = false;
  }
  return ok;
}

/* Whether a block calls operator `op`. */
static bool block_calls(Decl *blk, const char *op) {
  for (AstNode *c = blk ? sema_block_body(blk).first : NULL; c; c = c->next)
    if (c->kind == AST_OP && c->u.bin.rhs->kind == AST_CALL && !strcmp(c->u.bin.rhs->name, op)) return true;
  return false;
}

/* model.position against the layers the blocks cost: a layer that calls `rope` rotates, so a
 * model whose position is not rotary has the wrong layer.  (A rotary model whose own layer
 * has no `rope`, as a test layer, is its author's choice: the rotation is small.) */
static bool position_holds(Lower *L) {
  const char *pos = sema_word(L->s, L->model, "position");
  int rope = -1;
  for (int g = 0; g < L->ngroups && rope < 0; g++)
    if (block_calls(L->gblk[g], "rope")) rope = g;
  if (!pos || !strcmp(pos, "rotary") || rope < 0) return true;
  SrcFile *f, *uf; /* at the field when the user's file sets it, else at the user's declaration */
  Span sp, us;
  sema_decl_at(L->s, user_decl(L), &uf, &us);
  if (!sema_field_at(L->s, L->model, "position", &f, &sp) || f != uf) f = uf, sp = us;
  diag_error(L->d, f, sp,
             "model `%s` has position = %s, but its layer block `%s` calls `rope` (rotary positions): set "
             "position = rotary, or use a layer without `rope`",
             sema_decl_name(L->model), pos, sema_decl_name(L->gblk[rope]));
  diag_note(L->d, L->file, L->at, "in scenario `%s`", sema_decl_name(L->scenario));
  L->errors++;
  return false;
}

int lower_scenario(Sema *s, HwSet *hw, Decl *sc, Diag *d, Lowered *out) {
  return lower_with_axes(s, hw, sc, NULL, d, out);
}

int lower_with_axes(Sema *s, HwSet *hw, Decl *sc, const LowerAxes *axes, Diag *d, Lowered *out) {
  memset(out, 0, sizeof *out);
  arena_init(&out->names);
  Lower L = {0};
  L.s = s;
  L.d = d;
  L.out = out;
  L.scenario = sc;
  L.ax = axes;
  sema_decl_at(s, sc, &L.file, &L.at);
  L.model = sema_ref(s, sc, "model");
  L.plan = sema_ref(s, sc, "plan");
  L.cluster = sema_ref(s, sc, "cluster");
  if (!L.model || !L.plan || !L.cluster) {
    lower_err(&L, L.at, "scenario `%s` needs a model, a cluster and a plan", sema_decl_name(sc));
    return -1;
  }
  L.rc = hw_cluster_decl(hw, L.cluster);
  if (!L.rc) return -1;
  lower_read_stack(&L);
  stack_calibration(&L, hw);
  if (L.errors) return -1;
  L.gpu = L.rc->gpu;
  for (int i = 0; axes && i < axes->n; i++)
    if (!axis_supported(&L, &axes->axis[i])) {
      lower_err(
          &L, vary_at(&L, &axes->axis[i]),
          "`%s.%s` cannot be varied: a sweep varies numbers of the model, and the plan's parallel sizes, "
          "micro_batch, global_batch, zero, dp_bucket_elements, sequence_parallel, overlap_tp, overlap_dp, overlap_pp, overlap_ep, cuda_graphs, schedule, "
          "recompute and layer_partition",
          axes->axis[i].root, axes->axis[i].field);
      return -1;
    }
  graph_init(&out->g, L.gpu, L.rc);
  L.g = &out->g;
  report_names(&L);
  if (!lower_read_plan(&L) || !has_ends(&L) || !position_holds(&L)) return -1;
  Acc E, H, Ly[RT_MAX_GROUPS], M;
  lower_block(&L, sema_ref(s, L.model, "embedding"), LB_EMBEDDING, &E);
  for (int g = 0; g < L.ngroups; g++) lower_block(&L, L.gblk[g], lower_group_block(g), &Ly[g]);
  lower_block(&L, sema_ref(s, L.model, "head"), LB_HEAD, &H);
  for (int g = 0; g < L.ngroups; g++) lower_zero3(&L, &Ly[g], lower_group_block(g));
  if (L.mtp > 0) { /* each depth: its block, one more layer (the pattern's last kind), and
                      the shared embedding and output head again, on the last stage */
    lower_block(&L, sema_ref(s, L.model, "mtp"), LB_MTP, &M);
    Acc head = H, emb = E, ly = Ly[L.ngroups - 1];
    mtp_span(&L, &M, &ly);
    acc_fold(&L, &H, &M, L.mtp, true);
    acc_fold(&L, &H, &ly, L.mtp, true);
    acc_fold(&L, &H, &head, L.mtp, false);
    acc_fold(&L, &H, &emb, L.mtp, false);
  }
  if (L.errors) return -1;
  lower_assemble(&L, &E, Ly, &H);
  if (!axes) measured_derived(&L);
  if (!L.errors && axes && axes->sweep) lower_sweep_outputs(&L);
  return L.errors ? -1 : 0;
}

/* --- the evaluated graph ---------------------------------------------------------------- */

void lower_free(Lowered *l) {
  graph_free(&l->g);
  free(l->checks);
  for (int i = 0; i < LB_N; i++) free(l->ops[i]);
  arena_free(&l->names);
  memset(l, 0, sizeof *l);
}

static double out_val(const Lowered *l, const double *vals, const char *name) {
  GId id = graph_find_output(&l->g, name);
  return id >= 0 ? vals[id] : NAN;
}

static double output(const Lowered *l, const double *vals, OutputId o) {
  return out_val(l, vals, lower_output_names[o]);
}

/* Whether node i is a kernel call the report counts (a cost kernel, not the schedule's
 * arithmetic: target 'N'), and whether a calibration table corrected its answer. */
static bool counted_call(const Lowered *l, const double *vals, GId i, bool *calibrated) {
  const GNode *x = &l->g.n[i];
  if (x->op != GN_CALL || rt_kernels[x->kernel].target == 'N') return false;
  *calibrated = ((unsigned)vals[i + 2] & RT_CALIBRATED) != 0;
  return true;
}

/* Adds "kernel (label)" to the report's uncalibrated calls unless it is there already; false
 * when it does not fit (the caller counts those). */
static bool uncalibrated_add(Report *r, size_t *len, const char *kernel, const char *label) {
  char one[160];
  snprintf(one, sizeof one, label && *label ? "%s (%s)" : "%s", kernel, label);
  size_t n = strlen(one);
  for (const char *p = r->uncalibrated; (p = strstr(p, one)); p += n)
    if ((p == r->uncalibrated || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0')) return true;
  if (*len + n + 2 >= sizeof r->uncalibrated) return false;
  str_appendf(r->uncalibrated, sizeof r->uncalibrated, len, "%s%s", *len ? ", " : "", one);
  return true;
}

void lower_report(const Lowered *l, const double *vals, Report *r) {
  *r = l->meta;
  r->iteration = output(l, vals, O_ITERATION);
  for (int i = 0; i < RP_N; i++) r->part[i] = out_val(l, vals, lower_part_outputs[i]);
  r->tokens_per_s = output(l, vals, O_TOKENS);
  r->params_total = output(l, vals, O_PARAMS);
  r->params_active = output(l, vals, O_ACTIVE);
  r->model_flops = output(l, vals, O_MODEL_FLOPS);
  r->hardware_flops = output(l, vals, O_HW_FLOPS);
  r->tflops_per_gpu = output(l, vals, O_TFLOPS);
  r->mfu = output(l, vals, O_MFU);
  for (int i = 0; i < RM_N; i++) r->memory[i] = out_val(l, vals, lower_memory_outputs[i]);
  r->peak = output(l, vals, O_PEAK);
  double ps = output(l, vals, O_PEAK_STAGE);
  r->peak_stage = ps >= 0 && ps <= INT_MAX ? (int)ps : 0;
  r->fits = r->peak <= r->capacity;
  if (r->has_measured_iteration) r->error_pct = 100 * (r->iteration - r->measured_iteration) / r->measured_iteration;
  r->tokens_per_iteration = output(l, vals, O_TOKENS_ITER);
  r->params_first_stage = output(l, vals, O_PARAMS_FIRST);
  r->params_last_stage = output(l, vals, O_PARAMS_LAST);
  r->params_per_gpu = output(l, vals, O_PARAMS_GPU);
  r->calls = r->calibrated_calls = 0;
  size_t len = 0;
  int left_out = 0;
  r->uncalibrated[0] = '\0';
  bool calibrated;
  for (GId i = 0; i < l->g.nn; i++) {
    if (!counted_call(l, vals, i, &calibrated)) continue;
    const GNode *x = &l->g.n[i];
    r->calls++;
    r->calibrated_calls += calibrated;
    if (!calibrated) left_out += !uncalibrated_add(r, &len, rt_kernels[x->kernel].name, x->label);
  }
  r->uncalibrated_more = left_out;
  lower_notes(l, vals, r);
}

/* The first kernel call (in evaluation order) that rejected its arguments or answered NaN or
 * an infinite time, with its label, arguments and the limit they broke. */
void lower_why_not_finite(const Graph *g, const double *vals, char *why, size_t n) {
  for (GId i = 0; i < g->nn; i++) {
    const GNode *x = &g->n[i];
    if (x->op != GN_CALL) continue;
    double flags = vals[i + 2]; /* a small whole number */
    bool rejected = !(flags >= 0 && flags < 256) || (unsigned)flags & RT_BAD_ARGS || isnan(vals[i]);
    if (!rejected && isfinite(vals[i])) continue;
    const RtKernelInfo *k = &rt_kernels[x->kernel];
    const char *names = k->argnames;
    double args[RT_KERNEL_MAXARGS];
    size_t len = 0;
    str_appendf(why, n, &len, "kernel `%s` (%s) %s", k->name, x->label ? x->label : "",
                rejected ? "rejected" : "answered an infinite time for");
    for (int a = 0; a < x->nargs && a < RT_KERNEL_MAXARGS; a++) {
      char num[32];
      size_t w = strcspn(names, " ");
      args[a] = vals[g->args[x->arg0 + a]];
      str_appendf(why, n, &len, " %.*s=%s", (int)w, names, str_brief(num, sizeof num, args[a]));
      names += w + (names[w] == ' ');
    }
    char limit[256] = "";
    const void *target = k->target == 'G' ? g->gpu : k->target == 'C' ? g->cluster : NULL;
    if (rejected)
      rt_kernel_why((RtKernel)x->kernel, target, args, limit, sizeof limit);
    else
      snprintf(limit, sizeof limit, "%s", "its times are beyond a double (figures far outside the model's range)");
    if (limit[0]) str_appendf(why, n, &len, ": %s", limit);
    return;
  }
  snprintf(why, n, "%s", "a figure computed from the kernels' times is beyond a double");
}

int lower_calls(const Lowered *l, const double *vals, LowerCall **out) {
  int n = 0;
  bool calibrated;
  for (GId i = 0; i < l->g.nn; i++) n += counted_call(l, vals, i, &calibrated);
  *out = xcalloc((size_t)(n ? n : 1), sizeof **out);
  n = 0;
  for (GId i = 0; i < l->g.nn; i++)
    if (counted_call(l, vals, i, &calibrated)) {
      const GNode *x = &l->g.n[i];
      (*out)[n++] = (LowerCall){rt_kernels[x->kernel].name, x->label ? x->label : "", calibrated, vals[i]};
    }
  return n;
}

void lower_stage_memory(const Lowered *l, const double *vals, double mem[2][RM_N]) {
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < RM_N; i++) mem[d][i] = l->stage_memory[d][i] >= 0 ? vals[l->stage_memory[d][i]] : NAN;
}

int lower_trace_open(const Lowered *l, const double *vals, const Report *r, LowerTrace *t) {
  const GNode *pn = &l->g.n[l->pipe];
  double a[RT_PIPE_NARGS];
  for (int i = 0; i < RT_PIPE_NARGS; i++) a[i] = vals[l->g.args[pn->arg0 + i]];
  *t = (LowerTrace){0};
  t->counts = xmalloc((size_t)RT_MAX_CHUNKS * sizeof *t->counts);
  t->buf = xmalloc(4 * (size_t)RT_MAX_CHUNKS * sizeof *t->buf);
  RtPipeline p;
  if (rt_pipeline_of_args(a, &p, t->buf) < 0 || /* checks the counts before they are ints */
      rt_layout_counts((int)a[RT_PIPE_LAYOUT], (int)a[4], p.stages, p.chunks, a[5] != 0, t->counts) < 0) {
    lower_trace_close(t);
    return -1;
  }
  int stages = p.stages, chunks = p.chunks, n = stages * chunks;
  int nev = 0;
  rt_pipeline(&p, NULL, 0, &nev);
  t->events = xmalloc((size_t)(nev > 0 ? nev : 1) * sizeof *t->events);
  /* per chunk: embedding ops, its layers' ops (group by group), head and MTP ops */
  t->ops = xcalloc((size_t)n, sizeof *t->ops);
  t->nops = xcalloc((size_t)n, sizeof *t->nops);
  t->nchunks = n;
  rt_pipeline(&p, t->events, nev, &nev);
  static const int order[] = {LB_EMBEDDING, LB_LAYER, LB_GROUP1, LB_GROUP2, LB_GROUP3, LB_HEAD, LB_MTP};
  for (int c = 0; c < n; c++) {
    int reps[LB_N] = {0}, cnt = 0;
    reps[LB_EMBEDDING] = c == 0, reps[LB_HEAD] = reps[LB_MTP] = c == n - 1;
    for (int g = 0; g < RT_MAX_GROUPS; g++) reps[g == 0 ? LB_LAYER : LB_GROUP1 + g - 1] = t->counts[c][g];
    for (int b = 0; b < LB_N; b++) cnt += reps[b] * l->nops[b];
    t->ops[c] = xcalloc((size_t)(cnt > 0 ? cnt : 1), sizeof **t->ops);
    int k = 0;
    for (int oi = 0; oi < LB_N; oi++) {
      int blk = order[oi];
      for (int rep = 0; rep < reps[blk]; rep++)
        for (int i = 0; i < l->nops[blk]; i++) {
          const LowerOp *o = &l->ops[blk][i];
          t->ops[c][k++] = (TraceOp){o->name, o->stream, vals[o->fwd], vals[o->bwd]};
        }
    }
    t->nops[c] = k;
  }
  /* clang-format off */
  t->in = (TraceInput){r, t->events, nev, stages, chunks, (const TraceOp *const *)t->ops, t->nops, a[14],
                       output(l, vals, O_MAKESPAN), output(l, vals, O_DP_TIME),
                       output(l, vals, O_MAKESPAN) + output(l, vals, O_DP_TIME), output(l, vals, O_OPT_TIME)};
  /* clang-format on */
  return 0;
}

void lower_trace_close(LowerTrace *t) {
  for (int c = 0; t->ops && c < t->nchunks; c++) free(t->ops[c]);
  free(t->ops);
  free(t->nops);
  free(t->events);
  free(t->buf);
  free(t->counts);
  *t = (LowerTrace){0};
}

int lower_trace(const Lowered *l, const double *vals, const Report *r, FILE *out) {
  LowerTrace t;
  if (lower_trace_open(l, vals, r, &t) < 0) return -1;
  int rc = report_trace(out, &t.in);
  lower_trace_close(&t);
  return rc;
}

bool lower_axis_is_input(Sema *s, Decl *scenario, const char *root, const char *field) {
  /* clang-format off */
  static const char *const plan_fields[] = {"tp", "pp", "dp", "cp", "ep", "etp", "virtual_stages", "micro_batch",
                                            "global_batch", "zero", "dp_bucket_elements", "sequence_parallel",
                                            "overlap_tp", "overlap_dp", "overlap_pp", "overlap_ep", "cuda_graphs", "schedule", "recompute", "recompute_layers",
                                            "layer_partition", NULL};
  /* clang-format on */
  if (!strcmp(root, "plan")) {
    for (int i = 0; plan_fields[i]; i++)
      if (!strcmp(plan_fields[i], field)) return true;
    return false;
  }
  Decl *model = sema_ref(s, scenario, "model");
  double x;
  return !strcmp(root, "model") && model &&
         (sema_number(s, model, field, &x) || (!sema_word(s, model, field) && !sema_ref(s, model, field)));
}
