/* lower_plan.c - the plan as nodes: its sizes, batches and decisions (constants, or a sweep's
 * inputs), the conditions it must meet (errors for a scenario, check nodes for a sweep), the
 * placement's strides, and the Report's echo of it.  The enumeration words a sweep can vary
 * are coded here, from front/words.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "front/words.h"
#include "lower_private.h"

const char *const lower_group_names[G_PP + 1] = {"tp", "cp", "ep", "dp", "pp"}; /* ORDER G_ */

static const char *const schedule_words[] = {SCHEDULE_WORDS(WORD_STRING) NULL};
static const char *const recompute_words[] = {RECOMPUTE_WORDS(WORD_STRING) NULL};
static const char *const partition_words[] = {PARTITION_WORDS(WORD_STRING) NULL};
_Static_assert((int)SEMA_PATTERN_BLOCKS == (int)RT_MAX_GROUPS, "a pattern's blocks are the pipeline's groups");
#define X(e, w) _Static_assert(SCHED_##e == (int)RT_##e, "a schedule's code is its RtSchedule");
SCHEDULE_WORDS(X)
#undef X

bool lower_axis_code(const char *field, const char *word, double *code) {
  const char *const *words = !strcmp(field, "schedule")          ? schedule_words
                             : !strcmp(field, "recompute")       ? recompute_words
                             : !strcmp(field, "layer_partition") ? partition_words
                                                                 : NULL;
  for (int i = 0; words && words[i]; i++)
    if (!strcmp(words[i], word)) {
      *code = i;
      return true;
    }
  return false;
}

/* --- conditions ------------------------------------------------------------------------ */

/* A sweep's check node: tested for each point before its kernels run (unless always true). */
static void add_check(Lower *L, GId ok, const char *reason) {
  if (kt(L, ok)) return;
  Lowered *o = L->out;
  XGROW(o->checks, o->nchecks + 1, o->capchecks);
  o->checks[o->nchecks++] = (LowerCheck){ok, reason};
}

void lower_check(Lower *L, GId ok, const char *reason) { add_check(L, ok, reason); }

void lower_let_divisor(Lower *L, GId divisor) {
  GId ok = g_bin(L->g, GN_NE, divisor, K(L, 0));
  if (kt(L, ok)) return;
  AstNode *let = L->sweep_let, *p = let->u.bin.lhs;
  SrcFile *f;
  Span at;
  unsigned line = 0, col;
  sema_decl_at(L->s, L->ax->sweep, &f, &at);
  if (f) srcfile_locate(f, let->span.start, &line, &col);
  const char *reason = arena_printf(&L->out->names, "let %s.%s (line %u) divides by zero",
                                    p->kind == AST_MEMBER && p->u.bin.lhs->kind == AST_NAME ? p->u.bin.lhs->name : "?",
                                    p->name ? p->name : "?", line);
  for (int c = 0; c < L->out->nchecks; c++) /* a let is lowered each time its field is read */
    if (L->out->checks[c].ok == ok && !strcmp(L->out->checks[c].reason, reason)) return;
  add_check(L, ok, reason);
}

/* A condition on the plan.  A scenario's plan is constant: a false condition is an error
 * with the message and its numbers.  A sweep's depends on its axes: it becomes a check
 * node, tested before the point's kernels run, and `reason` counts the points it drops. */
static bool need(Lower *L, GId ok, const char *reason, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool need(Lower *L, GId ok, const char *reason, const char *fmt, ...) {
  if (kt(L, ok)) return true;
  if (L->ax && L->ax->sweep) {
    add_check(L, ok, reason);
    return true;
  }
  if (!kf(L, ok)) { /* an axis given as a constant still folds: this cannot happen */
    lower_err(L, L->at, "scenario `%s`: %s (not decided when lowering)", sema_decl_name(L->scenario), reason);
    return false;
  }
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  lower_err(L, L->at, "scenario `%s`: %s", sema_decl_name(L->scenario), msg);
  return false;
}

/* The groups as messages name them, in G_ order. */
static const char *const group_words[] = {"tp", "cp", "ep", "dp", "pp", "dp x cp", "etp", "edp", "etp x ep"};

bool lower_group_tiles(Lower *L, int group, GId size, GId stride, RtKernel k, const char *label) {
  if (L->tiles_checked & (1u << group)) return true;
  L->tiles_checked |= 1u << group;
  /* rt_group_layout's condition, as nodes */
  GId gpn = K(L, L->rc->gpus_per_node), per = DIV(L, gpn, stride);
  GId within = g_bin(L->g, GN_LE, MUL(L, size, stride), gpn);
  GId across = AND(L, g_bin(L->g, GN_GE, stride, gpn), DIVIDES(L, stride, gpn));
  GId shared = AND(L, g_bin(L->g, GN_LT, stride, gpn), AND(L, DIVIDES(L, gpn, stride), DIVIDES(L, size, per)));
  GId ok = g_bin(L->g, GN_OR, g_bin(L->g, GN_OR, EQ(L, size, 1), within), g_bin(L->g, GN_OR, across, shared));
  const char *name = group == G_DPCP && kt(L, EQ(L, L->cp, 1)) ? "dp" : group_words[group];
  char reason[96];
  snprintf(reason, sizeof reason, "the %s group does not tile the nodes", name);
  return need(L, ok, arena_strdup(&L->out->names, reason),
              "kernel `%s` (%s) runs over the %s group: %g ranks %g apart do not tile nodes of %d GPUs (each "
              "node must hold as many of its ranks as the others); the %g ranks placed inside the %s group "
              "must divide %d or be a multiple of it",
              rt_kernels[k].name, label, name, cv(L, size), cv(L, stride), L->rc->gpus_per_node, cv(L, stride), name,
              L->rc->gpus_per_node);
}

/* What sema checks for a scenario, again for a sweep's points. */
static void plan_model_checks(Lower *L) {
  Decl *m = L->model;
  GId tp = L->tp, cp = L->cp, ep = L->ep;
  GId heads = lower_field(L, m, "model", "heads", 1), kv = lower_field(L, m, "model", "kv_heads", NAN);
  double kvv;
  if (g_is_const(L->g, kv, &kvv) && isnan(kvv)) kv = heads; /* no grouped-query attention */
  GId seq = lower_field(L, m, "model", "seq", 1), experts = lower_field(L, m, "model", "experts", 0);
  add_check(L, DIVIDES(L, heads, tp), "model.heads does not divide by tp");
  add_check(L, DIVIDES(L, kv, tp), "model.kv_heads does not divide by tp");
  add_check(L, g_bin(L->g, GN_OR, EQ(L, cp, 1), DIVIDES(L, seq, MUL(L, K(L, 2), cp))),
            "model.seq does not divide by 2 * cp (2 cp chunks a sequence)");
  add_check(L,
            g_bin(L->g, GN_OR, AND(L, g_bin(L->g, GN_GT, experts, K(L, 0)), DIVIDES(L, experts, ep)),
                  AND(L, EQ(L, experts, 0), EQ(L, ep, 1))),
            "model.experts does not divide by ep");
  GId mffn = lower_field(L, m, "model", "moe_ffn", 0);
  add_check(L, DIVIDES(L, mffn, L->etp), "model.moe_ffn does not divide by etp");
  if (lower_dispatcher_is(L, "flex")) add_check(L, EQ(L, L->etp, 1), "moe_token_dispatcher = flex needs etp = 1");
}

/* An explicit layout's conditions, for the plan's pp and virtual stages: stage_layers has an
 * entry per model chunk; first/last_stage_layers leave layers that divide over the other
 * stages, and each stage's over its chunks (unless balanced). */
static bool layout_holds(Lower *L, GId chunks, GId uniform) {
  int nst = L->nstage;
  double first = L->first, last = L->last;
  if (nst >= 0)
    return need(L, EQ(L, chunks, nst), "stage_layers does not list pp * virtual_stages chunks",
                "plan.stage_layers lists %d model chunks; pp * virtual_stages = %g", nst, cv(L, chunks));
  bool f = first >= 0, l = last >= 0;
  GId pp = L->pp, vs = L->vs, bal = g_un(L->g, GN_NOT, uniform);
  if (!need(L, GE(L, pp, 2), "first/last_stage_layers need pp >= 2",
            "first_stage_layers and last_stage_layers need pp >= 2; pp = %g", cv(L, pp)))
    return false;
  GId mid = SUB(L, pp, K(L, f + l));
  GId rest = SUB(L, L->layers, K(L, (f ? first : 0) + (l ? last : 0)));
  GId per = DIV(L, rest, MAX(L, mid, K(L, 1)));
  GId mid_ok = PICK(L, EQ(L, mid, 0), EQ(L, rest, 0), g_bin(L->g, GN_OR, bal, DIVIDES(L, rest, mid)));
  if (!need(L, mid_ok, "the layers between the first and last stages do not divide over the other stages",
            "%g layers left for the %g stages between the first and the last do not divide evenly "
            "(set layer_partition = balanced to let them differ by one)",
            cv(L, rest), cv(L, mid)))
    return false;
  GId each = AND(L, f ? DIVIDES(L, K(L, first), vs) : K(L, 1), l ? DIVIDES(L, K(L, last), vs) : K(L, 1));
  each = AND(L, each, PICK(L, EQ(L, mid, 0), K(L, 1), DIVIDES(L, per, vs)));
  return need(L, g_bin(L->g, GN_OR, bal, each), "a stage's layers do not divide over its virtual stages",
              "a pipeline stage's layers do not divide over its %g virtual stages", cv(L, vs));
}

/* The conditions on the plan's sizes (need); *uniform is the node of layer_partition =
 * uniform.  Sema checks a scenario's divisibility where its values are known statically;
 * these hold for every plan that reaches lowering, derived dp and (for sweeps) values sema
 * cannot see included. */
static bool plan_holds(Lower *L, GId gpus, GId ranks, GId chunks, GId part, GId *uniform) {
  GId pp = L->pp, dp = L->dp, ep = L->ep, vs = L->vs, mb = L->mb, gb = L->gb, micro = L->m;
  GId layers = L->layers, sched = L->sched;
  bool sweep = L->ax && L->ax->sweep;
  if (!need(L, AND(L, GE(L, dp, 1), EQ(L, g_bin(L->g, GN_SUB, dp, g_un(L->g, GN_FLOOR, dp)), 0)),
            "the cluster's GPUs do not divide by tp*pp*cp", "the cluster's %g GPUs do not divide by tp*pp*cp = %g",
            cv(L, gpus), cv(L, ranks)))
    return false;
  if (!need(L, sweep ? EQ(L, SUB(L, MUL(L, ranks, dp), gpus), 0) : g_bin(L->g, GN_LE, MUL(L, ranks, dp), gpus),
            "tp*pp*dp*cp is not the cluster's GPUs", "the plan needs tp*pp*dp*cp = %g GPUs, the cluster has %g",
            cv(L, MUL(L, ranks, dp)), cv(L, gpus)))
    return false;
  /* Megatron-Core's MoE parallel folding (arXiv 2504.14960; parallel_state.py): the expert
   * layers split a stage's tp*cp*dp ranks into etp x ep x edp */
  GId stage = MUL3(L, L->tp, L->cp, dp), etp = L->etp;
  if (!need(L, DIVIDES(L, stage, etp), "etp does not divide tp*cp*dp", "plan.etp = %g does not divide tp*cp*dp = %g",
            cv(L, etp), cv(L, stage)))
    return false;
  GId folded = DIV(L, stage, etp);
  if (!need(L, DIVIDES(L, folded, ep), "ep does not divide tp*cp*dp/etp",
            "plan.ep = %g does not divide tp*cp*dp/etp = %g (the expert layers fold etp x ep x edp over the "
            "attention layers' tp x cp x dp ranks)",
            cv(L, ep), cv(L, folded)))
    return false;
  L->edp = DIV(L, folded, ep);
  if (!need(L, AND(L, GE(L, micro, 1), EQ(L, SUB(L, micro, g_un(L->g, GN_FLOOR, micro)), 0)),
            "global_batch does not divide by micro_batch * dp",
            "global_batch = %g does not divide by micro_batch * dp = %g*%g", cv(L, gb), cv(L, mb), cv(L, dp)))
    return false;
  *uniform = EQ(L, part, 0);
  if (lower_explicit_layout(L)) {
    if (!layout_holds(L, chunks, *uniform)) return false;
  } else {
  if (!need(L, g_bin(L->g, GN_OR, g_un(L->g, GN_NOT, *uniform), DIVIDES(L, layers, chunks)),
            "model.layers does not divide by pp * virtual_stages",
            "model.layers = %g does not divide by pp * virtual_stages = %g", cv(L, layers), cv(L, chunks)))
    return false;
  if (!need(L, g_bin(L->g, GN_GE, layers, chunks), "fewer layers than pipeline chunks",
            "%g layers cannot fill %g pipeline chunks", cv(L, layers), cv(L, chunks)))
    return false;
  }
  GId inter = EQ(L, sched, RT_INTERLEAVED), multi = g_bin(L->g, GN_GT, vs, K(L, 1));
  if (!need(L, g_bin(L->g, GN_OR, g_un(L->g, GN_NOT, AND(L, inter, multi)), DIVIDES(L, micro, pp)),
            "interleaved: micro-batches not a multiple of pp",
            "the interleaved schedule needs the micro-batches per iteration (%g) to be a multiple of pp = %g",
            cv(L, micro), cv(L, pp)))
    return false;
  if (!need(L, g_bin(L->g, GN_OR, inter, g_un(L->g, GN_NOT, multi)), "virtual_stages > 1 needs schedule = interleaved",
            "virtual_stages = %g needs schedule = interleaved", cv(L, vs)))
    return false;
  /* the schedule simulation's work and memory grow with the chunks it simulates */
  if (!need(L, g_bin(L->g, GN_LE, MUL(L, micro, chunks), K(L, 1 << 24)), "more micro-batch chunks than llmp simulates",
            "%g micro-batches per iteration over %g pipeline chunks are more than llmp simulates (%d)", cv(L, micro),
            cv(L, chunks), 1 << 24))
    return false;
  if (!need(L, g_bin(L->g, GN_LE, chunks, K(L, RT_MAX_CHUNKS)), "more pipeline chunks than the simulator's limit",
            "%g pipeline chunks exceed the simulator's %d", cv(L, chunks), RT_MAX_CHUNKS))
    return false;
  return true;
}

/* --- values ---------------------------------------------------------------------------- */

static int dtype_code(const char *w) {
  int d = rt_dtype_lookup(w);
  return d < 0 ? RT_BF16 : d;
}

/* Bytes per gradient element: the plan's grad_dtype (default fp32), at least 2 (an fp8
 * gradient is accumulated in 16 bits). */
double lower_grad_bytes(Lower *L) {
  double b = rt_dtype_bytes((RtDtype)dtype_code(plan_word(L, "grad_dtype", "fp32")));
  return b < 2 ? 2 : b;
}

/* Bytes per element of a layer's weights as ZeRO 3 gathers them: one with a per-tensor fp8
 * plan whose stack keeps its fp8 weights sharded and gathers them so (fp8_param_gather),
 * else the activations' bytes. */
GId lower_zero3_weight_bytes(Lower *L) {
  return L->st.fp8_gather && L->dt_plan == RT_FP8 ? K(L, 1) : L->bytes_act;
}

/* --- the stack ------------------------------------------------------------------------ */

static bool fw_bool(Lower *L, const char *f, bool def) { return L->st.decl ? bool_or(L, L->st.decl, f, def) : def; }
static double fw_num(Lower *L, const char *f, double def) {
  double x;
  return L->st.decl && sema_number(L->s, L->st.decl, f, &x) ? x : def;
}
static const char *fw_word(Lower *L, const char *f, const char *def) {
  return L->st.decl ? word_or(L, L->st.decl, f, def) : def;
}

bool lower_dispatcher_is(const Lower *L, const char *word) { return !strcmp(L->st.dispatcher, word); }

/* The scenario's stack: its semantics, each field's default where it has none (the schema's
 * defaults in docs/language.md, which are llmp's behaviour without a stack). */
void lower_read_stack(Lower *L) {
  Stack *st = &L->st;
  st->decl = sema_ref(L->s, L->scenario, "framework");
  st->fused_residual = !strcmp(fw_word(L, "parallel_residual_reduction", "separate"), "fused");
  st->sharded_allreduce = !strcmp(fw_word(L, "sharded_reduction", "reduce_scatter"), "all_reduce");
  st->zero2_every = !strcmp(fw_word(L, "zero2_reduction", "last_micro_batch"), "every_micro_batch");
  st->reshard = fw_bool(L, "reshard_after_forward", true);
  st->prefetch = fw_num(L, "prefetch", 1);
  st->prefetch_el = fw_num(L, "prefetch_elements", INFINITY);
  const char *bp = fw_word(L, "backward_prefetch", "pre");
  st->bwd_prefetch = !strcmp(bp, "pre") ? 0 : !strcmp(bp, "post") ? 1 : 2;
  st->max_live = fw_num(L, "max_live_parameters", INFINITY);
  st->fp8_gather = fw_bool(L, "fp8_param_gather", false);
  st->grad_layers = fw_num(L, "unsharded_grad_layers", -1);
  st->tp_span_node = !strcmp(fw_word(L, "tp_overlap_span", "node"), "node");
  st->tp_bwd_overlap = fw_bool(L, "tp_backward_overlap", false);
  st->tp_needs_sp = fw_bool(L, "tp_overlap_needs_sp", false);
  st->tp_overlap_sms = fw_num(L, "tp_overlap_sms", 0);
  st->tp_overlap_splits = fw_num(L, "tp_overlap_splits", 0);
  st->dp_overlap_pp = fw_bool(L, "dp_overlap_with_pp", true);
  st->grouped_gemm = fw_bool(L, "moe_grouped_gemm", true);
  st->multi_tensor = !strcmp(fw_word(L, "optimizer_kernel", "per_tensor"), "multi_tensor");
  st->launch = fw_num(L, "launch_overhead", 0);
  st->mb_overhead = fw_num(L, "micro_batch_overhead", 0);
  st->reserved = fw_num(L, "memory_reserved", 0);
  st->frag = fw_num(L, "fragmentation", 0);
  st->dispatcher = plan_word(L, "moe_token_dispatcher", "alltoall");
  /* fused kernels: the operators whose tables time an unfused implementation */
  static const struct {
    const char *word;
    unsigned ops;
  } fusions[] = {{"norm", RT_FUSED_NORM},
                 {"rope", RT_FUSED_ROPE},
                 {"activation", RT_FUSED_ACTIVATION},
                 {"softmax", RT_FUSED_SOFTMAX},
                 {"cross_entropy", RT_FUSED_CROSS_ENTROPY}};
  const char *fk[8];
  int nf = st->decl ? sema_word_list(L->s, st->decl, "fused_kernels", fk, 8) : -1;
  st->fused = 0;
  st->fused_dropout_add = false;
  for (int i = 0; i < nf && i < 8; i++) {
    for (size_t k = 0; k < sizeof fusions / sizeof fusions[0]; k++)
      if (!strcmp(fk[i], fusions[k].word)) st->fused |= fusions[k].ops;
    st->fused_dropout_add |= !strcmp(fk[i], "dropout_add");
  }
}

/* The rules of the stack a plan must follow (errors for a scenario, check nodes for a sweep). */
static bool stack_rules(Lower *L) {
  Decl *fw = L->st.decl;
  if (!fw) return true;
  const char *name = sema_decl_name(fw);
  if (L->st.tp_overlap_sms >= L->gpu->sms) {
    lower_err(
        L, L->at,
        "scenario `%s`: the stack `%s` takes %g SMs for tensor-parallel overlap (its `tp_overlap_sms`), but the gpu `%s` has %d",
        sema_decl_name(L->scenario), name, L->st.tp_overlap_sms, L->gpu->name, L->gpu->sms);
    return false;
  }
  char why[256];
  const char *sch[8];
  int ns = sema_word_list(L->s, fw, "schedules", sch, 8);
  if (ns >= 0) {
    GId ok = K(L, 0);
    char list[96] = "";
    size_t k = 0;
    for (int i = 0; i < ns && i < 8; i++) {
      double code;
      if (lower_axis_code("schedule", sch[i], &code)) ok = g_bin(L->g, GN_OR, ok, EQ(L, L->sched, code));
      k += (size_t)snprintf(list + k, sizeof list - (k < sizeof list ? k : sizeof list), "%s%s", i ? ", " : "", sch[i]);
    }
    double sc = cv(L, L->sched);
    snprintf(why, sizeof why, "stack %s: no such pipeline schedule", name);
    if (!need(L, g_bin(L->g, GN_OR, EQ(L, L->pp, 1), ok), arena_strdup(&L->out->names, why),
              "the stack `%s` runs the pipeline schedules %s only (its `schedules`); the plan asks for %s", name,
              ns ? list : "(none)", sc >= 0 && sc < SCHED_N ? schedule_words[(int)sc] : "another"))
      return false;
  }
  double mz = fw_num(L, "max_zero_with_pp", 3);
  snprintf(why, sizeof why, "stack %s: ZeRO above %g only without pipeline parallelism", name, mz);
  if (!need(L, g_bin(L->g, GN_OR, EQ(L, L->pp, 1), g_bin(L->g, GN_LE, L->zero, K(L, mz))),
            arena_strdup(&L->out->names, why),
            "the stack `%s` runs ZeRO stage %g with pipeline parallelism (pp = %g), but at most stage %g (its "
            "`max_zero_with_pp`)",
            name, cv(L, L->zero), cv(L, L->pp), mz))
    return false;
  bool b;
  if (!L->st.dp_overlap_pp && sema_bool(L->s, L->plan, "overlap_dp", &b) && b) {
    snprintf(why, sizeof why, "stack %s: no DP overlap with pp > 1", name);
    if (!need(L, EQ(L, L->pp, 1), arena_strdup(&L->out->names, why),
              "the stack `%s` does not overlap the data-parallel reduction with pipeline parallelism (its "
              "`dp_overlap_with_pp = false`): remove `overlap_dp = true` from the plan or set pp = 1",
              name))
      return false;
  }
  return true;
}

/* The model's sequence and width, the dtypes, and the plan's decisions as nodes; returns
 * the recompute code's node. */
static GId plan_decisions(Lower *L) {
  Decl *m = L->model;
  L->seq = lower_field(L, m, "model", "seq", 1);
  L->hidden = lower_field(L, m, "model", "hidden", 1);
  int dt = dtype_code(word_or(L, L->plan, "dtype", "bf16"));
  L->dt_plan = L->dt_gemm = (RtDtype)dt;
  L->dt_other = rt_dtype_quantized((RtDtype)dt) ? RT_BF16 : (RtDtype)dt;
  const char *attn = sema_word(L->s, L->plan, "attention_dtype");
  L->dt_attn = attn ? (RtDtype)dtype_code(attn) : L->dt_other;
  L->bytes_act = K(L, dt == RT_FP32 || dt == RT_TF32 ? 4 : 2); /* tf32 is stored as fp32 */
  const char *rw = plan_word(L, "moe_router_dtype", NULL);
  L->dt_router = rw ? (RtDtype)dtype_code(rw) : L->dt_other;
  L->dt_router_bytes = L->dt_router == RT_FP32 || L->dt_router == RT_TF32 ? 4 : 2;
  L->sp = AND(L, lower_plan_field(L, "sequence_parallel"), g_bin(L->g, GN_GT, L->tp, K(L, 1)));
  L->zero = lower_plan_field(L, "zero");
  /* tensor-parallel overlap (userbuffers) works inside one NVLink domain (a node, or an NVL72
   * rack's trays), unless the stack says not */
  double domain = (double)L->rc->gpus_per_node * rt_domain_nodes(L->rc);
  GId tp_in_node = g_bin(L->g, GN_LE, MUL(L, L->tp, L->stride[G_TP]), K(L, domain));
  L->overlap_tp = lower_plan_field(L, "overlap_tp");
  if (L->st.tp_span_node) L->overlap_tp = AND(L, L->overlap_tp, tp_in_node);
  /* and, where the stack's overlap is userbuffers', only with sequence parallelism: it overlaps
   * the all-gathers and reduce-scatters, not the all-reduces of plain tensor parallelism */
  if (L->st.tp_needs_sp) L->overlap_tp = AND(L, L->overlap_tp, L->sp);
  L->overlap_dp = lower_plan_field(L, "overlap_dp");
  if (!L->st.dp_overlap_pp) L->overlap_dp = AND(L, L->overlap_dp, EQ(L, L->pp, 1));
  L->overlap_pp = lower_plan_field(L, "overlap_pp");
  L->graphs = lower_plan_field(L, "cuda_graphs");
  /* the expert-parallel overlap has nothing to hide with one ep rank */
  L->overlap_ep = AND(L, lower_plan_field(L, "overlap_ep"), g_bin(L->g, GN_GT, L->ep, K(L, 1)));
  /* the parameter gather follows overlap_dp unless the plan or the stack sets it; it exists
   * only with a sharded optimizer */
  bool pg;
  bool pg_set = sema_bool(L->s, L->plan, "overlap_param_gather", &pg) ||
                (L->st.decl && sema_bool(L->s, L->st.decl, "overlap_param_gather", &pg));
  L->overlap_pg = pg_set ? AND(L, K(L, pg), L->overlap_dp) : L->overlap_dp;
  GId rec = lower_plan_field(L, "recompute");
  L->rec_full = EQ(L, rec, REC_FULL), L->rec_sel = EQ(L, rec, REC_SELECTIVE);
  /* Megatron's --recompute-method block --recompute-num-layers N: full recompute of the first N
   * layers of each model chunk, the others keeping all they save; as the share of a chunk's
   * layers recomputed, min(N, layers per chunk) / layers per chunk */
  GId n = lower_field(L, L->plan, "plan", "recompute_layers", NAN);
  double nv;
  L->rec_frac = K(L, 1);
  if (!(g_is_const(L->g, n, &nv) && isnan(nv))) {
    GId lpc = DIV(L, L->layers, MUL(L, L->pp, L->vs));
    L->rec_frac = DIV(L, g_min(L->g, n, lpc), lpc);
    need(L, L->rec_full, "recompute_layers without full recompute",
         "plan.recompute_layers recomputes that many layers of each model chunk in full: it needs recompute = full");
  }
  return rec;
}

/* The strides of one layout: each group's is the product of the sizes of the groups inside
 * it, in the placement's order (indices into lower_group_names). */
static void layout_strides(Lower *L, const int *order, const GId size[5], GId st[5]) {
  GId stride = K(L, 1);
  for (int i = 0; i < 5; i++) {
    st[order[i]] = stride;
    stride = MUL(L, stride, size[order[i]]);
  }
}

/* Placement: the groups from innermost outward, as the plan's `placement` orders them; groups
 * it leaves out go outermost (tp, cp, dp, pp), ep just inside dp.  The attention layers lay
 * out tp, cp, dp and pp (ep is 1 there).  The expert layers lay out etp, ep, edp and pp in the
 * same order over the same ranks, etp in tp's place, edp in dp's, cp's of size 1: Megatron-
 * Core's expert RankGenerator (parallel_state.py), so by default an ep group is ep ranks etp
 * apart. */
static bool plan_placement(Lower *L) {
  const char *words[8];
  int no = sema_word_list(L->s, L->plan, "placement", words, 8), order[5], n = 0;
  bool seen[5] = {0};
  for (int i = 0; i < no && i < 8; i++) {
    int gi = 0;
    while (gi < 5 && strcmp(lower_group_names[gi], words[i])) gi++;
    if (gi < 5 && !seen[gi]) seen[gi] = true, order[n++] = gi;
  }
  static const int rest[] = {G_TP, G_CP, G_EP, G_DP, G_PP}; /* the default order */
  for (int r = 0; r < 5; r++) {
    if (seen[rest[r]] || (rest[r] == G_EP && seen[G_DP])) continue;
    seen[rest[r]] = true, order[n++] = rest[r];
  }
  if (!seen[G_EP]) { /* ep left out by a placement that names dp: just inside dp */
    int at = 0;
    while (order[at] != G_DP) at++;
    for (int i = n; i > at; i--) order[i] = order[i - 1];
    order[at] = G_EP, n++;
  }
  GId one = K(L, 1), st[5], ste[5];
  GId dense[5] = {L->tp, L->cp, one, L->dp, L->pp}, expert[5] = {L->etp, one, L->ep, L->edp, L->pp};
  layout_strides(L, order, dense, st);
  layout_strides(L, order, expert, ste);
  for (int gi = 0; gi < 5; gi++) L->stride[gi] = st[gi];
  L->stride[G_EP] = ste[G_EP];
  L->stride[G_DPCP] = g_min(L->g, st[G_CP], st[G_DP]); /* cp and dp adjacent (the default) */
  L->stride[G_ETP] = ste[G_TP], L->stride[G_EDP] = ste[G_DP];
  L->stride[G_EMP] = g_min(L->g, ste[G_TP], ste[G_EP]);  /* etp and ep adjacent (the default) */
  if (order[0] == G_PP || order[4] == G_PP) return true; /* the same in both layouts */
  GId dense_model = EQ(L, lower_field(L, L->model, "model", "experts", 0), 0); /* no expert layers */
  return need(L, g_bin(L->g, GN_OR, dense_model, EQ(L, SUB(L, st[G_PP], ste[G_PP]), 0)),
              "placement: pp groups differ between the layouts",
              "the placement puts pp inside groups whose sizes differ in the expert layers (pp's stride is %g in "
              "the attention layers, %g in the expert layers): Megatron-Core needs the same pipeline groups",
              cv(L, st[G_PP]), cv(L, ste[G_PP]));
}

/* The Report's plan echo (a sweep's points are echoed from their axes). */
static void plan_echo(Lower *L, GId gpus, GId rec) {
  Report *r = &L->out->meta;
  r->tp = ci(L, L->tp), r->pp = ci(L, L->pp), r->dp = ci(L, L->dp), r->cp = ci(L, L->cp), r->ep = ci(L, L->ep);
  r->etp = ci(L, L->etp);
  r->virtual_stages = ci(L, L->vs), r->micro_batch = ci(L, L->mb), r->global_batch = ci(L, L->gb);
  r->micro_batches = ci(L, L->m), r->gpus = ci(L, gpus), r->zero = ci(L, L->zero);
  r->sequence_parallel = kt(L, L->sp);
  r->cuda_graphs = kt(L, L->graphs);
  r->overlap_ep = kt(L, L->overlap_ep);
  r->moe_dispatcher = cv(L, lower_field(L, L->model, "model", "experts", 0)) > 0 ? L->st.dispatcher : NULL;
  r->dtype = rt_dtype_name(L->dt_plan);
  double sc = cv(L, L->sched), rc = cv(L, rec);
  r->schedule = sc >= 0 && sc < SCHED_N ? schedule_words[(int)sc] : "?";
  r->recompute = rc >= 0 && rc < REC_N ? recompute_words[(int)rc] : "?";
}

/* The model's layers: its `layer` block, or its `pattern`'s blocks (groups) and counts, with
 * multi-token prediction's depth and the plan's stage layout, registered for the pipeline
 * kernels when there is more than one group or an explicit layout.  False after an error. */
static bool read_layers(Lower *L) {
  Sema *s = L->s;
  enum { MAX_LAYERS = 1 << 16 };
  unsigned char *group = xmalloc(MAX_LAYERS);
  int n = sema_pattern(s, L->model, L->gblk, &L->ngroups, group, MAX_LAYERS);
  double layers = cv(L, L->layers);
  bool ok = true;
  if (n < 0) {
    L->ngroups = 1;
    L->gblk[0] = sema_ref(s, L->model, "layer");
    if (!L->gblk[0]) {
      lower_err(L, L->at, "scenario `%s`: model `%s` has no `layer` block and no `pattern`", sema_decl_name(L->scenario),
                sema_decl_name(L->model));
      ok = false;
    }
    n = layers >= 1 && layers <= MAX_LAYERS ? (int)layers : -1;
    memset(group, 0, n > 0 ? (size_t)n : 0);
  } else if (isnan(layers)) {
    lower_err(L, L->at, "`model.layers` cannot be varied: the model's pattern fixes them");
    ok = false;
  } else if (n != layers) { /* sema checks it where both are known */
    lower_err(L, L->at, "scenario `%s`: model `%s`'s pattern has %d layers, not layers = %g", sema_decl_name(L->scenario),
              sema_decl_name(L->model), n, layers);
    ok = false;
  }
  for (int g = 0; g < L->ngroups; g++) {
    int k = 0;
    for (int i = 0; i < n; i++) k += group[i] == g;
    L->gcount[g] = L->ngroups == 1 ? L->layers : K(L, k);
  }
  double mtp = 0;
  sema_number(s, L->model, "mtp_layers", &mtp);
  L->mtp = mtp;
  /* the plan's layout: explicit per chunk, or the first and the last stage's layers */
  double st[RT_MAX_CHUNKS], first = -1, last = -1;
  int nst = sema_count_list(s, L->plan, "stage_layers", st, RT_MAX_CHUNKS);
  sema_number(s, L->plan, "first_stage_layers", &first);
  sema_number(s, L->plan, "last_stage_layers", &last);
  L->nstage = nst, L->first = first, L->last = last;
  bool explicit_layout = lower_explicit_layout(L);
  if (nst > RT_MAX_CHUNKS) {
    lower_err(L, L->at, "scenario `%s`: plan.stage_layers has %d entries; llmp simulates at most %d model chunks",
              sema_decl_name(L->scenario), nst, RT_MAX_CHUNKS);
    ok = false;
  }
  int stage[RT_MAX_CHUNKS], sum = 0;
  for (int i = 0; i < nst && i < RT_MAX_CHUNKS; i++) sum += stage[i] = (int)st[i];
  if (ok && nst >= 0 && sum != layers) {
    lower_err(L, L->at, "scenario `%s`: plan.stage_layers places %d layers; model `%s` has %g",
              sema_decl_name(L->scenario), sum, sema_decl_name(L->model), layers);
    ok = false;
  }
  if (ok && (first > 0 ? first : 0) + (last > 0 ? last : 0) > layers) {
    lower_err(L, L->at, "scenario `%s`: first_stage_layers + last_stage_layers = %g exceed the model's %g layers",
              sema_decl_name(L->scenario), (first > 0 ? first : 0) + (last > 0 ? last : 0), layers);
    ok = false;
  }
  L->layout = 0;
  if (ok && (L->ngroups > 1 || explicit_layout) && n < 1) {
    lower_err(L, L->at, "`model.layers` cannot be varied: the model's pattern or the plan's stage layout fixes them");
    ok = false;
  }
  if (ok && (L->ngroups > 1 || explicit_layout)) {
    RtLayout lay = {n, group, nst > 0 ? nst : 0, nst > 0 ? stage : NULL, (int)first, (int)last};
    L->layout = ok ? rt_layout_register(&lay) : 0;
    if (ok && L->layout < 0) {
      lower_err(L, L->at, "scenario `%s`: more distinct layer layouts than llmp keeps (%d)", sema_decl_name(L->scenario),
                RT_MAX_LAYOUTS);
      ok = false;
    }
  }
  free(group);
  return ok;
}

/* The plan's values as nodes, with the checks that need them evaluated; false after an
 * error. */
bool lower_read_plan(Lower *L) {
  L->nstage = -1, L->first = L->last = -1; /* no explicit layout until read_layers reads one */
  L->tp = lower_plan_field(L, "tp"), L->pp = lower_plan_field(L, "pp");
  L->cp = lower_plan_field(L, "cp"), L->ep = lower_plan_field(L, "ep"), L->etp = lower_plan_field(L, "etp");
  L->vs = lower_plan_field(L, "virtual_stages"), L->mb = lower_plan_field(L, "micro_batch");
  L->gb = lower_plan_field(L, "global_batch");
  GId gpus = lower_field(L, L->cluster, "cluster", "gpus", 0);
  L->dp = lower_plan_field(L, "dp");
  L->layers = lower_field(L, L->model, "model", "layers", 1);
  L->sched = lower_plan_field(L, "schedule");
  if (!L->errors && !read_layers(L)) return false;
  GId part = lower_plan_field(L, "layer_partition");
  if (L->errors) return false;
  GId ranks = MUL3(L, L->tp, L->pp, L->cp), chunks = MUL(L, L->pp, L->vs);
  L->m = DIV(L, L->gb, MUL(L, L->mb, L->dp));
  if (L->ax && L->ax->sweep) plan_model_checks(L);
  GId uniform;
  if (!plan_holds(L, gpus, ranks, chunks, part, &uniform)) return false;
  L->balanced = g_un(L->g, GN_NOT, uniform);
  if (!plan_placement(L)) return false;
  GId rec = plan_decisions(L);
  if (!stack_rules(L)) return false;
  bool pg;
  if (sema_bool(L->s, L->plan, "overlap_param_gather", &pg) && pg &&
      !need(L, GE(L, L->zero, 1), "overlap_param_gather without a sharded optimizer",
            "plan.overlap_param_gather needs a sharded optimizer (zero >= 1): there is no parameter gather "
            "without one (Megatron-Core: --overlap-param-gather requires --use-distributed-optimizer)"))
    return false;
  /* a plan that asks for the overlap where the stack's needs sequence parallelism
   * (Megatron-Core refuses --tp-comm-overlap without --sequence-parallel; recalled) */
  bool otp;
  if (L->st.tp_needs_sp && sema_bool(L->s, L->plan, "overlap_tp", &otp) && otp &&
      !need(L, g_bin(L->g, GN_OR, L->sp, EQ(L, L->tp, 1)), "overlap_tp without sequence parallelism",
            "plan.overlap_tp with tp = %g needs sequence_parallel = true: the stack's overlap (Transformer "
            "Engine's userbuffers) hides sequence parallelism's all-gathers and reduce-scatters, not "
            "all-reduces",
            cv(L, L->tp)))
    return false;
  /* Megatron-Core's --overlap-moe-expert-parallel-comm merges one micro-batch's forward with
   * another's backward: it takes the all-to-all or flex dispatcher and, with pp > 1, the
   * interleaved schedule (training/arguments.py validate_args; recalled) */
  if (!kf(L, L->overlap_ep)) {
    GId off = g_un(L->g, GN_NOT, L->overlap_ep);
    if (lower_dispatcher_is(L, "allgather") &&
        !need(L, off, "overlap_ep with the allgather dispatcher",
              "plan.overlap_ep needs moe_token_dispatcher = alltoall or flex: Megatron-Core overlaps the "
              "expert-parallel all-to-all, which the allgather dispatcher does not issue"))
      return false;
    if (!need(L, g_bin(L->g, GN_OR, off, g_bin(L->g, GN_OR, EQ(L, L->pp, 1), EQ(L, L->sched, RT_INTERLEAVED))),
              "overlap_ep with pp > 1 without interleaving",
              "plan.overlap_ep with pp = %g needs schedule = interleaved: Megatron-Core merges the forward and "
              "backward of two micro-batches only in the interleaved schedule (or without a pipeline)",
              cv(L, L->pp)))
      return false;
    /* nor full recompute (transformer_config.py: "disable full recomputation when enabling
     * overlap_moe_expert_parallel_comm"; recalled) */
    if (!need(L, g_bin(L->g, GN_OR, off, g_un(L->g, GN_NOT, L->rec_full)), "overlap_ep with full recompute",
              "plan.overlap_ep needs recompute = none or selective: Megatron-Core refuses full recompute with "
              "the expert-parallel overlap"))
      return false;
  }
  L->ready = true;
  plan_echo(L, gpus, rec);
  return true;
}
