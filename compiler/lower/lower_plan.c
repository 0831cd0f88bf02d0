/* lower_plan.c - the plan as nodes: its sizes, batches and decisions (constants, or a sweep's
 * inputs), the conditions it must meet (errors for a scenario, check nodes for a sweep), the
 * placement's strides, and the Report's echo of it.  The enumeration words a sweep can vary
 * are coded here, from front/words.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "front/words.h"
#include "lower_private.h"

const char *const lower_group_names[G_PP + 1] = {"tp", "cp", "ep", "dp", "pp"};

static const char *const schedule_words[] = {SCHEDULE_WORDS(WORD_STRING) NULL};
static const char *const recompute_words[] = {RECOMPUTE_WORDS(WORD_STRING) NULL};
static const char *const partition_words[] = {PARTITION_WORDS(WORD_STRING) NULL};
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
  add_check(L, DIVIDES(L, seq, cp), "model.seq does not divide by cp");
  add_check(L,
            g_bin(L->g, GN_OR, AND(L, g_bin(L->g, GN_GT, experts, K(L, 0)), DIVIDES(L, experts, ep)),
                  AND(L, EQ(L, experts, 0), EQ(L, ep, 1))),
            "model.experts does not divide by ep");
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
  if (!need(L, DIVIDES(L, dp, ep), "ep does not divide dp",
            "plan.ep = %g must divide dp = %g (expert parallelism is carved out of data parallelism)", cv(L, ep),
            cv(L, dp)))
    return false;
  if (!need(L, AND(L, GE(L, micro, 1), EQ(L, SUB(L, micro, g_un(L->g, GN_FLOOR, micro)), 0)),
            "global_batch does not divide by micro_batch * dp",
            "global_batch = %g does not divide by micro_batch * dp = %g*%g", cv(L, gb), cv(L, mb), cv(L, dp)))
    return false;
  *uniform = EQ(L, part, 0);
  if (!need(L, g_bin(L->g, GN_OR, g_un(L->g, GN_NOT, *uniform), DIVIDES(L, layers, chunks)),
            "model.layers does not divide by pp * virtual_stages",
            "model.layers = %g does not divide by pp * virtual_stages = %g", cv(L, layers), cv(L, chunks)))
    return false;
  if (!need(L, g_bin(L->g, GN_GE, layers, chunks), "fewer layers than pipeline chunks",
            "%g layers cannot fill %g pipeline chunks", cv(L, layers), cv(L, chunks)))
    return false;
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

/* --- the stack ------------------------------------------------------------------------ */

static bool fw_bool(Lower *L, const char *f, bool def) { return L->st.decl ? bool_or(L, L->st.decl, f, def) : def; }
static double fw_num(Lower *L, const char *f, double def) {
  double x;
  return L->st.decl && sema_number(L->s, L->st.decl, f, &x) ? x : def;
}
static const char *fw_word(Lower *L, const char *f, const char *def) {
  return L->st.decl ? word_or(L, L->st.decl, f, def) : def;
}

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
  st->tp_span_node = !strcmp(fw_word(L, "tp_overlap_span", "node"), "node");
  st->tp_bwd_overlap = fw_bool(L, "tp_backward_overlap", false);
  st->tp_overlap_sms = fw_num(L, "tp_overlap_sms", 0);
  st->dp_overlap_pp = fw_bool(L, "dp_overlap_with_pp", true);
  st->grouped_gemm = fw_bool(L, "moe_grouped_gemm", true);
  st->multi_tensor = !strcmp(fw_word(L, "optimizer_kernel", "per_tensor"), "multi_tensor");
  st->launch = fw_num(L, "launch_overhead", 0);
  st->mb_overhead = fw_num(L, "micro_batch_overhead", 0);
  st->reserved = fw_num(L, "memory_reserved", 0);
  st->frag = fw_num(L, "fragmentation", 0);
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
  L->dt_other = dt == RT_FP8 ? RT_BF16 : (RtDtype)dt;
  L->bytes_act = K(L, dt == RT_FP32 || dt == RT_TF32 ? 4 : 2); /* tf32 is stored as fp32 */
  L->sp = AND(L, lower_plan_field(L, "sequence_parallel"), g_bin(L->g, GN_GT, L->tp, K(L, 1)));
  L->zero = lower_plan_field(L, "zero");
  /* tensor-parallel overlap (userbuffers) works inside one node, unless the stack says not */
  GId tp_in_node = g_bin(L->g, GN_LE, MUL(L, L->tp, L->stride[G_TP]), K(L, L->rc->gpus_per_node));
  L->overlap_tp = lower_plan_field(L, "overlap_tp");
  if (L->st.tp_span_node) L->overlap_tp = AND(L, L->overlap_tp, tp_in_node);
  L->overlap_dp = lower_plan_field(L, "overlap_dp");
  if (!L->st.dp_overlap_pp) L->overlap_dp = AND(L, L->overlap_dp, EQ(L, L->pp, 1));
  L->overlap_pp = lower_plan_field(L, "overlap_pp");
  /* the parameter gather follows overlap_dp unless the plan or the stack sets it; it exists
   * only with a sharded optimizer */
  bool pg;
  bool pg_set = sema_bool(L->s, L->plan, "overlap_param_gather", &pg) ||
                (L->st.decl && sema_bool(L->s, L->st.decl, "overlap_param_gather", &pg));
  L->overlap_pg = pg_set ? AND(L, K(L, pg), L->overlap_dp) : L->overlap_dp;
  GId rec = lower_plan_field(L, "recompute");
  L->rec_full = EQ(L, rec, REC_FULL), L->rec_sel = EQ(L, rec, REC_SELECTIVE);
  return rec;
}

/* Placement: the stride of each group is the product of the sizes of the groups inside it. */
static void plan_placement(Lower *L) {
  const char *order[8];
  int no = sema_word_list(L->s, L->plan, "placement", order, 8);
  if (no < 0) { /* the default: tp innermost, then cp, ep, dp, pp */
    no = 5;
    for (int i = 0; i < 5; i++) order[i] = lower_group_names[i];
  }
  GId size[5] = {L->tp, L->cp, L->ep, L->dp, L->pp}, stride = K(L, 1), st[5];
  bool seen[5] = {0};
  for (int i = 0; i < 5; i++) st[i] = K(L, 1);
  for (int i = 0; i < no && i < 8; i++) {
    int gi = 0;
    while (gi < 5 && strcmp(lower_group_names[gi], order[i])) gi++;
    if (gi == 5 || gi == G_EP) continue; /* ep lives inside dp: it takes dp's stride */
    seen[gi] = true;
    st[gi] = stride;
    stride = MUL(L, stride, size[gi]);
  }
  for (int gi = 0; gi < 5; gi++)
    if (!seen[gi] && gi != G_EP) { /* groups the placement leaves out go outermost */
      st[gi] = stride;
      stride = MUL(L, stride, size[gi]);
    }
  st[G_EP] = st[G_DP];
  for (int gi = 0; gi < 5; gi++) L->stride[gi] = st[gi];
  L->stride[G_DPCP] = g_min(L->g, st[G_CP], st[G_DP]); /* cp and dp adjacent (the default) */
}

/* The Report's plan echo (a sweep's points are echoed from their axes). */
static void plan_echo(Lower *L, GId gpus, GId rec) {
  Report *r = &L->out->meta;
  r->tp = ci(L, L->tp), r->pp = ci(L, L->pp), r->dp = ci(L, L->dp), r->cp = ci(L, L->cp), r->ep = ci(L, L->ep);
  r->virtual_stages = ci(L, L->vs), r->micro_batch = ci(L, L->mb), r->global_batch = ci(L, L->gb);
  r->micro_batches = ci(L, L->m), r->gpus = ci(L, gpus), r->zero = ci(L, L->zero);
  r->sequence_parallel = kt(L, L->sp);
  r->dtype = rt_dtype_name(L->dt_plan);
  double sc = cv(L, L->sched), rc = cv(L, rec);
  r->schedule = sc >= 0 && sc < SCHED_N ? schedule_words[(int)sc] : "?";
  r->recompute = rc >= 0 && rc < REC_N ? recompute_words[(int)rc] : "?";
}

/* The plan's values as nodes, with the checks that need them evaluated; false after an
 * error. */
bool lower_read_plan(Lower *L) {
  L->tp = lower_plan_field(L, "tp"), L->pp = lower_plan_field(L, "pp");
  L->cp = lower_plan_field(L, "cp"), L->ep = lower_plan_field(L, "ep");
  L->vs = lower_plan_field(L, "virtual_stages"), L->mb = lower_plan_field(L, "micro_batch");
  L->gb = lower_plan_field(L, "global_batch");
  GId gpus = lower_field(L, L->cluster, "cluster", "gpus", 0);
  L->dp = lower_plan_field(L, "dp");
  L->layers = lower_field(L, L->model, "model", "layers", 1);
  L->sched = lower_plan_field(L, "schedule");
  GId part = lower_plan_field(L, "layer_partition");
  if (L->errors) return false;
  GId ranks = MUL3(L, L->tp, L->pp, L->cp), chunks = MUL(L, L->pp, L->vs);
  L->m = DIV(L, L->gb, MUL(L, L->mb, L->dp));
  if (L->ax && L->ax->sweep) plan_model_checks(L);
  GId uniform;
  if (!plan_holds(L, gpus, ranks, chunks, part, &uniform)) return false;
  L->balanced = g_un(L->g, GN_NOT, uniform);
  plan_placement(L);
  GId rec = plan_decisions(L);
  if (!stack_rules(L)) return false;
  bool pg;
  if (sema_bool(L->s, L->plan, "overlap_param_gather", &pg) && pg &&
      !need(L, GE(L, L->zero, 1), "overlap_param_gather without a sharded optimizer",
            "plan.overlap_param_gather needs a sharded optimizer (zero >= 1): there is no parameter gather "
            "without one (Megatron-Core: --overlap-param-gather requires --use-distributed-optimizer)"))
    return false;
  L->ready = true;
  plan_echo(L, gpus, rec);
  return true;
}
