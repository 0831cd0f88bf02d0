/* lower.c - a scenario's cost graph: operators, collectives, schedule, memory.
 *
 * The model of one training iteration, as built here (docs/model.md has it in prose):
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
#include "lower.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "front/schema.h"
#include "front/units.h"

/* --- named outputs ------------------------------------------------------------------- */

#define OUTPUTS(X) \
  X(ITERATION, "iteration") X(TOKENS, "tokens_per_s") X(MFU, "mfu") X(TFLOPS, "tflops_per_gpu") \
  X(MODEL_FLOPS, "model_flops") X(HW_FLOPS, "hardware_flops") X(PEAK, "memory.peak") \
  X(PEAK_STAGE, "memory.peak_stage") X(MAKESPAN, "pipeline.makespan") \
  X(DP_TIME, "dp.exposed") X(OPT_TIME, "optimizer")
typedef enum {
#define X(e, s) O_##e,
  OUTPUTS(X)
#undef X
  O_N
} OutputId;
static const char *const output_names[O_N] = {
#define X(e, s) s,
    OUTPUTS(X)
#undef X
};
static const char *const part_outputs[RP_N] = {
#define X(e, k, l) "part." k,
    REPORT_PARTS(X)
#undef X
};
static const char *const memory_outputs[RM_N] = {
#define X(e, k, l) "memory." k,
    REPORT_MEMORY(X)
#undef X
};

/* --- state --------------------------------------------------------------------------- */

enum { CM_TP, CM_CP, CM_EP, CM_DP, CM_N };   /* communication streams of a layer */

typedef struct Acc {            /* one block, one micro-batch, one rank */
  GId fc, bc;                   /* compute seconds, forward and backward */
  GId wg;                       /* the weight-gradient share of bc (zero-bubble's W) */
  GId comm_f[CM_N], comm_b[CM_N];   /* exposed communication seconds per stream */
  GId sel;                      /* forward seconds that selective recompute re-runs */
  GId act;                      /* activation bytes saved for backward, no recompute */
  GId act_sel;                  /* of which selective recompute does not keep */
  GId in_bytes;                 /* the block's input (what full recompute keeps) */
  GId params;                   /* parameters on this rank */
  GId tensors;                  /* the parameter tensors (weights, biases) holding them */
  GId flops;                    /* model FLOP of the forward on this rank */
  GId sel_flops;                /* of which selective recompute re-runs (attention) */
} Acc;

typedef struct LetVal {
  AstNode *let;
  GId id;
  const char *word;
} LetVal;

typedef struct Val {            /* a block expression's value: a number node or a word */
  GId id;
  const char *word;             /* enumeration word (layernorm, column), or NULL */
  bool ok;
} Val;

typedef struct Lower {
  Sema *s;
  Diag *d;
  Graph *g;
  Lowered *out;
  Decl *scenario, *model, *plan, *cluster;
  const RtGpu *gpu;
  const RtCluster *rc;
  SrcFile *file;
  Span at;
  int errors;
  /* the plan, as nodes */
  GId tp, pp, dp, cp, ep, vs, mb, gb, m, seq, hidden;
  GId stride[6];                /* per group: tp cp ep dp pp dpcp */
  GId bytes_act;                /* bytes per activation element */
  RtDtype dt_plan;              /* the plan's dtype */
  RtDtype dt_gemm, dt_other;    /* the current block's GEMMs', and the other operators' */
  /* plan decisions, as nodes (constants unless a sweep varies them) */
  GId sp;                       /* sequence parallelism in effect (asked for and tp > 1) */
  GId overlap_tp, overlap_dp;
  GId zero;                     /* ZeRO stage 0..3 */
  GId sched;                    /* RtSchedule */
  GId rec_full, rec_sel;        /* recompute = full, selective */
  GId balanced;                 /* layer_partition = balanced */
  GId layers;
  /* sweeps */
  const LowerAxes *ax;
  bool ready;                   /* the plan's nodes above are set */
  bool results;                 /* evaluating a require/objective: results are names */
  int let_depth;
  /* the block being lowered */
  Decl *blk;
  int which;                    /* LB_* */
  GId out_saved;                /* bytes of its output the last operator keeps (flash
                                   attention's O) for its backward, or -1 */
  Acc *acc;
  LetVal lets[64];
  int nlets;
  bool sharded;                 /* between a column- and a row-parallel linear */
} Lower;

enum { G_TP, G_CP, G_EP, G_DP, G_PP, G_DPCP };   /* G_DPCP: the dp x cp ranks that hold the same weights */
static const char *const group_names[] = {"tp", "cp", "ep", "dp", "pp"};

static void err(Lower *L, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err(Lower *L, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(L->d, DIAG_ERROR, L->file, sp, fmt, ap);
  va_end(ap);
  L->errors++;
}

/* An error inside a block: reported at the operator, with a note at the scenario. */
static void err_blk(Lower *L, AstNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err_blk(Lower *L, AstNode *n, const char *fmt, ...) {
  SrcFile *f;
  Span sp;
  sema_decl_at(L->s, L->blk ? L->blk : L->scenario, &f, &sp);
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(L->d, DIAG_ERROR, f, n ? n->span : sp, fmt, ap);
  va_end(ap);
  diag_note(L->d, L->file, L->at, "in scenario `%s`", sema_decl_name(L->scenario));
  L->errors++;
}

static void add_op(Lower *L, const char *name, const char *suffix, char stream, GId f, GId b) {
  Lowered *o = L->out;
  int w = L->which;
  if (o->nops[w] == o->capops[w]) {
    o->capops[w] = o->capops[w] ? 2 * o->capops[w] : 32;
    o->ops[w] = realloc(o->ops[w], (size_t)o->capops[w] * sizeof *o->ops[w]);
    if (!o->ops[w]) abort();
  }
  const char *text = suffix ? arena_printf(&o->names, "%s %s", name, suffix) : arena_strdup(&o->names, name);
  o->ops[w][o->nops[w]++] = (LowerOp){text, stream, f, b};
}

static GId K(Lower *L, double x) { return g_const(L->g, x); }
static GId ADD(Lower *L, GId a, GId b) { return g_add(L->g, a, b); }
static GId MUL(Lower *L, GId a, GId b) { return g_mul(L->g, a, b); }
static GId DIV(Lower *L, GId a, GId b) { return g_div(L->g, a, b); }
static GId MAX(Lower *L, GId a, GId b) { return g_max(L->g, a, b); }
static GId SUB(Lower *L, GId a, GId b) { return g_sub(L->g, a, b); }
static GId MUL3(Lower *L, GId a, GId b, GId c) { return MUL(L, MUL(L, a, b), c); }
static GId EQ(Lower *L, GId a, double x) { return g_bin(L->g, GN_EQ, a, K(L, x)); }
static GId GE(Lower *L, GId a, double x) { return g_bin(L->g, GN_GE, a, K(L, x)); }
static GId AND(Lower *L, GId a, GId b) { return g_bin(L->g, GN_AND, a, b); }
/* a whole multiple: fmod(a, b) == 0 */
static GId DIVIDES(Lower *L, GId a, GId b) { return EQ(L, g_bin(L->g, GN_MOD, a, b), 0); }

/* Constant nodes: known true, known false, the value (NAN if not a constant). */
static bool kt(Lower *L, GId c) { double v; return g_is_const(L->g, c, &v) && v != 0; }
static bool kf(Lower *L, GId c) { double v; return g_is_const(L->g, c, &v) && v == 0; }
static double cv(Lower *L, GId a) { double v; return g_is_const(L->g, a, &v) ? v : NAN; }
/* A constant count as an int for the report's echo; 0 when not a constant or out of range. */
static int ci(Lower *L, GId a) {
  double v = cv(L, a);
  return v >= INT_MIN && v <= INT_MAX ? (int)v : 0;
}
/* c ? A : B, building only the side taken when c is a constant (no dead kernel calls). */
#define PICK(L, c, A, B) (kt(L, c) ? (A) : kf(L, c) ? (B) : g_select((L)->g, (c), (A), (B)))

/* --- plan and model values ------------------------------------------------------------- */

static bool bool_or(Lower *L, Decl *d, const char *field, bool def) {
  bool x;
  return sema_bool(L->s, d, field, &x) ? x : def;
}

static const char *word_or(Lower *L, Decl *d, const char *field, const char *def) {
  const char *w = sema_word(L->s, d, field);
  return w ? w : def;
}

/* --- fields a sweep may set -------------------------------------------------------------- */

static Val eval(Lower *L, AstNode *n);

static const LowerAxis *axis_of(Lower *L, const char *root, const char *f) {
  for (int i = 0; L->ax && i < L->ax->n; i++)
    if (!strcmp(L->ax->axis[i].root, root) && !strcmp(L->ax->axis[i].field, f)) return &L->ax->axis[i];
  return NULL;
}

/* The sweep's `let root.f = ...`, or NULL. */
static AstNode *let_of(Lower *L, const char *root, const char *f) {
  if (!L->ax || !L->ax->sweep) return NULL;
  for (AstNode *c = sema_block_body(L->ax->sweep).first; c; c = c->next) {
    AstNode *p = c->u.bin.lhs;
    if (c->kind == AST_LET && p && p->kind == AST_MEMBER && !strcmp(p->name, f) && p->u.bin.lhs->kind == AST_NAME &&
        !strcmp(p->u.bin.lhs->name, root))
      return c;
  }
  return NULL;
}

/* A numeric (or boolean, or enumeration-coded) field of the plan or the model: the sweep's
 * axis, its let, or the declaration's value.  A word field read here is coded. */
static GId field_num(Lower *L, Decl *d, const char *root, const char *f, double def) {
  const LowerAxis *a = axis_of(L, root, f);
  if (a) return a->input >= 0 ? g_input(L->g, a->input) : K(L, a->value);
  AstNode *let = let_of(L, root, f);
  if (let && L->let_depth < 16) {
    L->let_depth++;
    Val v = eval(L, let->u.bin.rhs);
    L->let_depth--;
    double code;
    if (v.ok && v.word && lower_axis_code(f, v.word, &code)) return K(L, code);
    if (v.ok && !v.word) return v.id;
    err_blk(L, let->u.bin.rhs, "`let %s.%s` cannot be evaluated for this sweep", root, f);
    return K(L, NAN);
  }
  double x;
  bool b;
  if (sema_number(L->s, d, f, &x)) return K(L, x);
  if (sema_bool(L->s, d, f, &b)) return K(L, b);
  const char *w = sema_word(L->s, d, f);
  if (w && lower_axis_code(f, w, &x)) return K(L, x);
  return K(L, def);
}

/* The plan's fields before read_plan has set them (a sweep's lets read one another). */
static GId plan_field(Lower *L, const char *f) {
  static const struct { const char *name; double def; } defs[] = {
      {"tp", 1}, {"pp", 1}, {"cp", 1}, {"ep", 1}, {"virtual_stages", 1}, {"micro_batch", 1}, {"global_batch", 1},
      {"zero", 0}, {"sequence_parallel", 0}, {"overlap_tp", 0}, {"overlap_dp", 0}, {"schedule", RT_1F1B},
      {"recompute", 0}, {"layer_partition", 0}};
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
    if (!strcmp(defs[i].name, f)) return field_num(L, L->plan, "plan", f, defs[i].def);
  if (!strcmp(f, "dp")) {
    GId dp = field_num(L, L->plan, "plan", "dp", 0);
    if (!kf(L, dp)) return dp;
    GId gpus = field_num(L, L->cluster, "cluster", "gpus", 0);
    return DIV(L, gpus, MUL3(L, plan_field(L, "tp"), plan_field(L, "pp"), plan_field(L, "cp")));
  }
  return field_num(L, L->plan, "plan", f, NAN);
}

/* plan.X inside a block: the plan as lowering completed it (dp derived, defaults filled). */
static Val plan_value(Lower *L, const char *f) {
  if (!L->ready) {
    if (!sema_word(L->s, L->plan, f) || axis_of(L, "plan", f) || let_of(L, "plan", f)) return (Val){plan_field(L, f), NULL, true};
    return (Val){-1, sema_word(L->s, L->plan, f), true};
  }
  static const struct { const char *name; size_t off; } map[] = {
      {"tp", offsetof(Lower, tp)}, {"pp", offsetof(Lower, pp)}, {"dp", offsetof(Lower, dp)},
      {"cp", offsetof(Lower, cp)}, {"ep", offsetof(Lower, ep)}, {"virtual_stages", offsetof(Lower, vs)},
      {"micro_batch", offsetof(Lower, mb)}, {"global_batch", offsetof(Lower, gb)}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(map[i].name, f)) return (Val){*(GId *)((char *)L + map[i].off), NULL, true};
  if (!strcmp(f, "sequence_parallel")) return (Val){L->sp, NULL, true};
  if (!strcmp(f, "zero")) return (Val){L->zero, NULL, true};
  if (axis_of(L, "plan", f) || let_of(L, "plan", f)) return (Val){plan_field(L, f), NULL, true};
  double x;
  if (sema_number(L->s, L->plan, f, &x)) return (Val){K(L, x), NULL, true};
  bool b;
  if (sema_bool(L->s, L->plan, f, &b)) return (Val){K(L, b), NULL, true};
  const char *w = sema_word(L->s, L->plan, f);
  if (w) return (Val){-1, w, true};
  return (Val){-1, NULL, false};
}

static Val decl_value(Lower *L, Decl *d, const char *f) {
  const char *root = d == L->model ? "model" : d == L->cluster ? "cluster" : NULL;
  if (root && (axis_of(L, root, f) || let_of(L, root, f))) return (Val){field_num(L, d, root, f, NAN), NULL, true};
  double x;
  if (sema_number(L->s, d, f, &x)) return (Val){K(L, x), NULL, true};
  bool b;
  if (sema_bool(L->s, d, f, &b)) return (Val){K(L, b), NULL, true};
  const char *w = sema_word(L->s, d, f);
  if (w) return (Val){-1, w, true};
  return (Val){-1, NULL, false};
}

/* --- block expressions ----------------------------------------------------------------- */

static Val member(Lower *L, AstNode *n) {
  /* a chain root.field[.field]: model.hidden, plan.tp, cluster.gpu.memory */
  AstNode *chain[8];
  int k = 0;
  AstNode *x = n;
  while (x->kind == AST_MEMBER && k < 8) {
    chain[k++] = x;
    x = x->u.bin.lhs;
  }
  if (x->kind != AST_NAME) return (Val){-1, NULL, false};
  Decl *d = NULL;
  if (!strcmp(x->name, "model")) d = L->model;
  else if (!strcmp(x->name, "cluster")) d = L->cluster;
  else if (!strcmp(x->name, "memory") && L->results && k == 1) {
    char name[64];
    snprintf(name, sizeof name, "memory.%s", chain[0]->name);
    GId id = graph_find_output(L->g, name);
    return (Val){id, NULL, id >= 0};
  } else if (!strcmp(x->name, "plan")) {
    if (k != 1) return (Val){-1, NULL, false};
    return plan_value(L, chain[0]->name);
  } else return (Val){-1, NULL, false};
  for (int i = k - 1; i > 0; i--) {
    d = sema_ref(L->s, d, chain[i]->name);
    if (!d) return (Val){-1, NULL, false};
  }
  return decl_value(L, d, chain[0]->name);
}

static Val let_value(Lower *L, AstNode *name) {
  for (int i = 0; i < L->nlets; i++)
    if (L->lets[i].let->u.bin.lhs->name == name->name) return (Val){L->lets[i].id, L->lets[i].word, true};
  for (AstNode *c = sema_block_body(L->blk).first; c; c = c->next)
    if (c->kind == AST_LET && c->u.bin.lhs->kind == AST_NAME && c->u.bin.lhs->name == name->name) {
      Val v = eval(L, c->u.bin.rhs);
      if (v.ok && L->nlets < 64) L->lets[L->nlets++] = (LetVal){c, v.id, v.word};
      return v;
    }
  return (Val){-1, NULL, false};
}

static Val eval(Lower *L, AstNode *n) {
  Graph *g = L->g;
  switch (n->kind) {
  case AST_NUM: {
    return (Val){K(L, unit_value(n->u.num.value, n->u.num.unit, NULL)), NULL, true};
  }
  case AST_BOOL: return (Val){K(L, n->u.boolean), NULL, true};
  case AST_NAME: {
    if (L->results) {   /* a sweep's require/objective: iteration, tokens_per_s, mfu, ... */
      GId id = graph_find_output(g, n->name);
      if (id >= 0) return (Val){id, NULL, true};
    }
    Val v = L->blk ? let_value(L, n) : (Val){-1, NULL, false};
    if (v.ok) return v;
    return (Val){-1, n->name, true};   /* an enumeration word: column, layernorm */
  }
  case AST_MEMBER: return member(L, n);
  case AST_UNOP: {
    Val a = eval(L, n->u.bin.lhs);
    if (!a.ok || a.word) return (Val){-1, NULL, false};
    return (Val){g_un(g, n->u.bin.op == OP_NEG ? GN_NEG : GN_NOT, a.id), NULL, true};
  }
  case AST_BINOP: {
    Val a = eval(L, n->u.bin.lhs), b = eval(L, n->u.bin.rhs);
    if (!a.ok || !b.ok) return (Val){-1, NULL, false};
    if (a.word || b.word) {   /* comparisons of words: model.norm == rmsnorm */
      if (!a.word || !b.word || (n->u.bin.op != OP_EQ && n->u.bin.op != OP_NE)) return (Val){-1, NULL, false};
      bool eq = !strcmp(a.word, b.word);
      return (Val){K(L, n->u.bin.op == OP_EQ ? eq : !eq), NULL, true};
    }
    static const GOp map[] = {GN_ADD, GN_SUB, GN_MUL, GN_DIV, GN_MOD, GN_EQ, GN_NE, GN_LT, GN_LE,
                              GN_GT, GN_GE, GN_AND, GN_OR};
    return (Val){g_bin(g, map[n->u.bin.op], a.id, b.id), NULL, true};
  }
  case AST_CALL: {
    const char *f = n->name;
    GOp op = !strcmp(f, "min") ? GN_MIN : !strcmp(f, "max") ? GN_MAX : !strcmp(f, "ceil") ? GN_CEIL : GN_FLOOR;
    GId acc = -1;
    for (AstNode *a = n->u.list.first; a; a = a->next) {
      Val v = eval(L, a);
      if (!v.ok || v.word) return (Val){-1, NULL, false};
      acc = op == GN_CEIL || op == GN_FLOOR ? g_un(g, op, v.id) : acc < 0 ? v.id : g_bin(g, op, acc, v.id);
    }
    return (Val){acc, NULL, acc >= 0};
  }
  default: return (Val){-1, NULL, false};
  }
}

/* --- operators ------------------------------------------------------------------------- */

typedef struct Args {
  AstNode *node[12];            /* per parameter of the operator, NULL if not given */
  const OpDef *def;
  AstNode *call;
} Args;

static int param_index(const OpDef *od, const char *name) {
  for (int i = 0; od->params[i].name; i++)
    if (!strcmp(od->params[i].name, name)) return i;
  return -1;
}

static void bind_args(AstNode *call, const OpDef *od, Args *a) {
  memset(a, 0, sizeof *a);
  a->def = od;
  a->call = call;
  int k = 0;
  for (AstNode *x = call->u.list.first; x; x = x->next) {
    if (x->kind == AST_NAMEDARG) {
      int i = param_index(od, x->name);
      if (i >= 0 && i < 12) a->node[i] = x->u.bin.rhs;
    } else if (k < 12) {
      a->node[k++] = x;
    }
  }
}

/* A numeric argument: its node; must be present (sema checked required ones). */
static GId arg_num(Lower *L, Args *a, const char *name, double def) {
  int i = param_index(a->def, name);
  if (i < 0 || !a->node[i]) return K(L, def);
  Val v = eval(L, a->node[i]);
  if (!v.ok || v.word) {
    err_blk(L, a->node[i], "argument `%s` of `%s` cannot be evaluated for this scenario", name, a->def->name);
    return K(L, NAN);
  }
  return v.id;
}

static const char *arg_word(Lower *L, Args *a, const char *name, const char *def) {
  int i = param_index(a->def, name);
  if (i < 0 || !a->node[i]) return def;
  Val v = eval(L, a->node[i]);
  if (!v.ok || !v.word) {
    err_blk(L, a->node[i], "argument `%s` of `%s` must be a word here", name, a->def->name);
    return def;
  }
  return v.word;
}

static bool arg_bool(Lower *L, Args *a, const char *name, bool def) {
  int i = param_index(a->def, name);
  if (i < 0 || !a->node[i]) return def;
  Val v = eval(L, a->node[i]);
  double x;
  if (!v.ok || v.word || !g_is_const(L->g, v.id, &x)) {
    err_blk(L, a->node[i], "argument `%s` of `%s` must be true or false for this scenario", name, a->def->name);
    return def;
  }
  return x != 0;
}

static GId call(Lower *L, RtKernel k, const char *label, int n, ...) {
  GId args[RT_KERNEL_MAXARGS];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, GId);
  va_end(ap);
  return g_call(L->g, k, args, n, label);
}

static void compute(Lower *L, const char *name, GId c) {
  Acc *a = L->acc;
  a->fc = ADD(L, a->fc, c);
  a->bc = ADD(L, a->bc, c + 1);
  add_op(L, name, NULL, 'c', c, c + 1);
}

/* A collective over a group, seconds of one call (the node of its time). */
static GId coll(Lower *L, RtKernel k, GId bytes, int group, const char *label) {
  GId size = group == G_TP ? L->tp : group == G_CP ? L->cp : group == G_EP ? L->ep : group == G_DP ? L->dp
             : group == G_PP ? L->pp : MUL(L, L->dp, L->cp);
  return call(L, k, label, 3, bytes, size, L->stride[group]);
}

/* Exposed communication: hidden behind `behind` seconds of compute when overlapped. */
static GId exposed(Lower *L, GId comm, GId behind, GId overlap) {
  return PICK(L, overlap, MAX(L, K(L, 0), SUB(L, comm, behind)), comm);
}

static void comm(Lower *L, int stream, const char *name, const char *what, GId f, GId b) {
  Acc *a = L->acc;
  a->comm_f[stream] = ADD(L, a->comm_f[stream], f);
  a->comm_b[stream] = ADD(L, a->comm_b[stream], b);
  add_op(L, name, what, 't', f, b);
}

/* Bytes per element a GEMM of the current block keeps of its input: with fp8, its one-byte
 * fp8 cast. */
static GId gemm_in_bytes(Lower *L) { return L->dt_gemm == RT_FP8 ? K(L, 1) : L->bytes_act; }

/* Elements of work outside (or inside) the tensor-parallel region on this rank. */
static GId local_elems(Lower *L, GId elems) {
  return L->sharded ? DIV(L, elems, L->tp) : PICK(L, L->sp, DIV(L, elems, L->tp), elems);
}

/* in_saved: the bytes of the output that the operator before it keeps (flash attention's O),
 * or -1.  A row-parallel (or unsplit) linear right after it takes O as its input: in 16- and
 * 32-bit training it keeps that same tensor, not a copy, and keeps it under selective
 * recompute too (where the attention would not); with fp8 it keeps its fp8 cast, as for any
 * input. */
static void lower_linear(Lower *L, const char *name, Args *a, GId in_saved) {
  GId t = arg_num(L, a, "tokens", 0), in = arg_num(L, a, "in", 0), out = arg_num(L, a, "out", 0);
  const char *split = arg_word(L, a, "split", "none");
  bool bias = arg_bool(L, a, "bias", false);
  bool col = !strcmp(split, "column"), row = !strcmp(split, "row");
  GId k = row ? DIV(L, in, L->tp) : in, n = col ? DIV(L, out, L->tp) : out;
  GId c = call(L, RTK_LINEAR, name, 5, K(L, L->dt_gemm), t, k, n, K(L, bias));
  compute(L, name, c);
  Acc *A = L->acc;
  A->wg = ADD(L, A->wg, MUL(L, K(L, 0.5), c + 1));   /* the weight-gradient GEMM: half the FLOPs */
  A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), t, MUL(L, k, n)));
  A->params = ADD(L, A->params, ADD(L, MUL(L, k, n), bias ? (row ? out : n) : K(L, 0)));
  A->tensors = ADD(L, A->tensors, K(L, bias ? 2 : 1));
  /* saved input: a column linear's input is replicated over tp (sharded with SP) */
  GId in_el = col ? PICK(L, L->sp, DIV(L, MUL(L, t, in), L->tp), MUL(L, t, in)) : row ? MUL(L, t, k) : local_elems(L, MUL(L, t, in));
  if (in_saved < 0 || col || L->dt_gemm == RT_FP8)   /* a column linear's input is not O */
    A->act = ADD(L, A->act, MUL(L, in_el, gemm_in_bytes(L)));
  else
    A->act_sel = SUB(L, A->act_sel, in_saved);
  double tp;
  bool single = g_is_const(L->g, L->tp, &tp) && tp == 1;
  if ((col || row) && !single) {
    GId elems = MUL(L, t, col ? in : out), bytes = MUL(L, elems, L->bytes_act);
    GId f, b;
    GId sp = L->sp;
    if (col) {
      f = PICK(L, sp, coll(L, RTK_ALLGATHER, bytes, G_TP, name), K(L, 0));
      b = PICK(L, sp, coll(L, RTK_REDUCESCATTER, bytes, G_TP, name), coll(L, RTK_ALLREDUCE, bytes, G_TP, name));
    } else {
      f = PICK(L, sp, coll(L, RTK_REDUCESCATTER, bytes, G_TP, name), coll(L, RTK_ALLREDUCE, bytes, G_TP, name));
      b = PICK(L, sp, coll(L, RTK_ALLGATHER, bytes, G_TP, name), K(L, 0));
    }
    f = exposed(L, f, c, L->overlap_tp);
    b = exposed(L, b, c + 1, L->overlap_tp);
    const char *what = !kt(L, sp) ? "tp allreduce" : col ? "tp allgather" : "tp reducescatter";
    comm(L, CM_TP, name, kf(L, sp) || kt(L, sp) ? what : "tp collective", f, b);
  }
  if (col) L->sharded = true;
  if (row) L->sharded = false;
}

static void lower_attention(Lower *L, const char *name, Args *a) {
  GId b = arg_num(L, a, "batch", 0), heads = arg_num(L, a, "heads", 0), s = arg_num(L, a, "seq", 0);
  GId dh = arg_num(L, a, "head_dim", 0);
  int i = param_index(a->def, "kv_heads");
  GId kv = a->node[i] ? arg_num(L, a, "kv_heads", 0) : heads;
  bool causal = arg_bool(L, a, "causal", true), drop = arg_bool(L, a, "dropout", false);
  const char *impl = arg_word(L, a, "impl", "flash");
  bool flash = !strcmp(impl, "flash");
  GId h = DIV(L, heads, L->tp), kvr = MAX(L, K(L, 1), DIV(L, kv, L->tp));
  GId c = flash ? call(L, RTK_FLASH, name, 7, K(L, L->dt_other), b, s, h, kvr, dh, K(L, causal))
                : call(L, RTK_ATTENTION, name, 6, K(L, L->dt_other), b, s, h, dh, K(L, causal));
  /* context parallelism: each rank computes 1/cp of the (load-balanced) score matrix */
  GId f = DIV(L, c, L->cp), bw = DIV(L, c + 1, L->cp);
  if (drop && !flash) {   /* dropout over the probabilities: one element-wise pass over b*h*s*s */
    GId d = call(L, RTK_ADD, name, 2, K(L, L->dt_other), MUL3(L, b, h, MUL(L, s, s)));
    f = ADD(L, f, DIV(L, d, L->cp));
    bw = ADD(L, bw, DIV(L, d + 1, L->cp));
  }
  Acc *A = L->acc;
  A->fc = ADD(L, A->fc, f);
  A->bc = ADD(L, A->bc, bw);
  A->sel = ADD(L, A->sel, f);
  add_op(L, name, NULL, 'c', f, bw);
  GId sl = DIV(L, s, L->cp);   /* this rank's tokens of each sequence */
  GId af = DIV(L, MUL(L, MUL3(L, K(L, 4), b, MUL(L, s, s)), MUL(L, h, dh)), L->cp);
  A->flops = ADD(L, A->flops, af);
  A->sel_flops = ADD(L, A->sel_flops, af);
  GId qkv = MUL3(L, b, sl, MUL(L, ADD(L, h, MUL(L, K(L, 2), kvr)), dh));
  GId saved = MUL(L, qkv, L->bytes_act), extra;
  if (flash) {   /* O and the fp32 log-sum-exp */
    GId o = MUL(L, MUL3(L, b, sl, MUL(L, h, dh)), L->bytes_act);
    extra = ADD(L, o, MUL(L, K(L, 4), MUL3(L, b, h, sl)));
    L->out_saved = o;
  } else {       /* softmax output; with dropout its mask (1 byte) and output */
    GId scores = MUL3(L, b, h, MUL(L, sl, s));
    GId per = drop ? ADD(L, MUL(L, K(L, 2), L->bytes_act), K(L, 1)) : L->bytes_act;
    extra = MUL(L, scores, per);
  }
  A->act = ADD(L, A->act, ADD(L, saved, extra));
  A->act_sel = ADD(L, A->act_sel, extra);
  double cp;
  if (!(g_is_const(L->g, L->cp, &cp) && cp == 1)) {   /* ring exchange of K and V */
    GId kvbytes = MUL(L, MUL3(L, K(L, 2), b, MUL3(L, sl, kvr, dh)), L->bytes_act);
    GId one = coll(L, RTK_P2P, kvbytes, G_CP, name);
    GId steps = SUB(L, L->cp, K(L, 1));
    GId cf = MUL(L, one, steps), cb = MUL(L, K(L, 2), cf);
    comm(L, CM_CP, name, "cp kv exchange", exposed(L, cf, f, true), exposed(L, cb, bw, true));
  }
}

static void lower_experts(Lower *L, const char *name, Args *a) {
  GId t = arg_num(L, a, "tokens", 0), hid = arg_num(L, a, "hidden", 0), ffn = arg_num(L, a, "ffn", 0);
  GId e = arg_num(L, a, "experts", 1), k = arg_num(L, a, "top_k", 1);
  const char *act = arg_word(L, a, "activation", "swiglu");
  bool gated = !strcmp(act, "swiglu") || !strcmp(act, "geglu");
  GId cf = field_num(L, L->model, "model", "capacity_factor", 1);
  /* Tokens are split over tp (Megatron-Core requires sequence parallelism with MoE and
   * tp > 1); each rank's t*top_k token-expert pairs go to its experts/ep local experts. */
  GId tr = DIV(L, t, L->tp), el = DIV(L, e, L->ep);
  GId pairs = MUL3(L, tr, k, cf), per = DIV(L, pairs, el);
  GId up = gated ? MUL(L, K(L, 2), ffn) : ffn;
  GId c1 = call(L, RTK_BMM, name, 5, K(L, L->dt_gemm), el, per, hid, up);
  GId c2 = call(L, gated ? RTK_SWIGLU : RTK_GELU, name, 2, K(L, L->dt_other), MUL(L, pairs, ffn));
  GId c3 = call(L, RTK_BMM, name, 5, K(L, L->dt_gemm), el, per, ffn, hid);
  Acc *A = L->acc;
  GId f = ADD(L, ADD(L, c1, c2), c3), b = ADD(L, ADD(L, c1 + 1, c2 + 1), c3 + 1);
  A->fc = ADD(L, A->fc, f);
  A->bc = ADD(L, A->bc, b);
  A->wg = ADD(L, A->wg, MUL(L, K(L, 0.5), ADD(L, c1 + 1, c3 + 1)));
  add_op(L, name, NULL, 'c', f, b);
  A->flops = ADD(L, A->flops, MUL(L, K(L, 2), MUL(L, pairs, ADD(L, MUL(L, hid, up), MUL(L, ffn, hid)))));
  A->params = ADD(L, A->params, MUL(L, el, ADD(L, MUL(L, hid, up), MUL(L, ffn, hid))));
  A->tensors = ADD(L, A->tensors, MUL(L, K(L, 2), el));   /* fc1 and fc2 weights per local expert */
  /* the GEMMs' inputs (h, ffn) and the activation's (up) */
  GId saved = ADD(L, MUL(L, ADD(L, hid, ffn), gemm_in_bytes(L)), MUL(L, up, L->bytes_act));
  A->act = ADD(L, A->act, MUL(L, pairs, saved));
  double ep;
  if (!(g_is_const(L->g, L->ep, &ep) && ep == 1)) {
    GId bytes = MUL3(L, pairs, hid, L->bytes_act);
    GId one = coll(L, RTK_ALLTOALL, bytes, G_EP, name);
    GId two = MUL(L, K(L, 2), one);   /* dispatch and combine */
    comm(L, CM_EP, name, "ep all-to-all", two, two);
  }
}

static void lower_op(Lower *L, AstNode *op) {
  AstNode *callnode = op->u.bin.rhs;
  const OpDef *od = op_lookup(callnode->name);
  if (!od) return;
  Args a;
  bind_args(callnode, od, &a);
  const char *name = op->name;
  Acc *A = L->acc;
  Graph *g = L->g;
  GId dto = K(L, L->dt_other);
  int kind = (int)(od - op_defs);
  GId prev_saved = L->out_saved;
  L->out_saved = -1;
  switch (kind) {
  case OPK_LINEAR: lower_linear(L, name, &a, prev_saved); break;
  case OPK_ATTENTION: lower_attention(L, name, &a); break;
  case OPK_EXPERTS: lower_experts(L, name, &a); break;
  case OPK_NORM: {
    const char *k = arg_word(L, &a, "kind", "layernorm");
    GId t = local_elems(L, arg_num(L, &a, "tokens", 0)), h = arg_num(L, &a, "hidden", 0);
    bool rms = !strcmp(k, "rmsnorm");
    compute(L, name, call(L, rms ? RTK_RMSNORM : RTK_LAYERNORM, name, 3, dto, t, h));
    A->act = ADD(L, A->act, MUL3(L, t, h, L->bytes_act));
    A->params = ADD(L, A->params, rms ? h : MUL(L, K(L, 2), h));
    A->tensors = ADD(L, A->tensors, K(L, rms ? 1 : 2));   /* weight; layernorm's bias */
    break;
  }
  case OPK_ACTIVATION: {
    const char *k = arg_word(L, &a, "kind", "gelu");
    GId el = local_elems(L, arg_num(L, &a, "elements", 0));
    bool gated = !strcmp(k, "swiglu") || !strcmp(k, "geglu");
    compute(L, name, call(L, gated ? RTK_SWIGLU : RTK_GELU, name, 2, dto, el));
    A->act = ADD(L, A->act, MUL3(L, el, K(L, gated ? 2 : 1), L->bytes_act));
    break;
  }
  case OPK_ADD: compute(L, name, call(L, RTK_ADD, name, 2, dto, local_elems(L, arg_num(L, &a, "elements", 0)))); break;
  case OPK_DROPOUT: {   /* an element-wise pass that also writes a one-byte mask: costed as add */
    GId el = local_elems(L, arg_num(L, &a, "elements", 0));
    compute(L, name, call(L, RTK_ADD, name, 2, dto, el));
    A->act = ADD(L, A->act, el);
    break;
  }
  case OPK_ROPE: {
    GId t = arg_num(L, &a, "tokens", 0), h = DIV(L, arg_num(L, &a, "heads", 0), L->tp);
    compute(L, name, call(L, RTK_ROPE, name, 4, dto, t, h, arg_num(L, &a, "head_dim", 0)));
    break;
  }
  case OPK_SOFTMAX: {
    GId rows = arg_num(L, &a, "rows", 0), cols = arg_num(L, &a, "cols", 0);
    if (L->sharded) rows = DIV(L, rows, L->tp);
    compute(L, name, call(L, RTK_SOFTMAX, name, 4, dto, rows, cols, K(L, arg_bool(L, &a, "causal", false))));
    A->act = ADD(L, A->act, MUL3(L, rows, cols, L->bytes_act));
    break;
  }
  case OPK_BMM: {
    GId bt = arg_num(L, &a, "batch", 0), m = arg_num(L, &a, "m", 0), k = arg_num(L, &a, "k", 0), n = arg_num(L, &a, "n", 0);
    if (L->sharded) bt = DIV(L, bt, L->tp);
    GId c = call(L, RTK_BMM, name, 5, K(L, L->dt_gemm), bt, m, k, n);
    compute(L, name, c);
    A->wg = ADD(L, A->wg, MUL(L, K(L, 0.5), c + 1));
    A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), bt, MUL3(L, m, k, n)));
    A->act = ADD(L, A->act, MUL3(L, bt, ADD(L, MUL(L, m, k), MUL(L, k, n)), L->bytes_act));
    break;
  }
  case OPK_EMBEDDING: {
    GId t = arg_num(L, &a, "tokens", 0), v = arg_num(L, &a, "vocab", 0), h = arg_num(L, &a, "hidden", 0);
    bool split = !strcmp(arg_word(L, &a, "split", "none"), "vocab");
    GId rows = split ? DIV(L, v, L->tp) : v;
    compute(L, name, call(L, RTK_EMBEDDING, name, 4, dto, t, rows, h));
    A->params = ADD(L, A->params, MUL(L, rows, h));
    A->tensors = ADD(L, A->tensors, K(L, 1));
    double tp;
    if (split && !(g_is_const(g, L->tp, &tp) && tp == 1)) {
      GId bytes = MUL3(L, t, h, L->bytes_act);
      GId sp = L->sp;
      GId f = PICK(L, sp, coll(L, RTK_REDUCESCATTER, bytes, G_TP, name), coll(L, RTK_ALLREDUCE, bytes, G_TP, name));
      GId b = PICK(L, sp, coll(L, RTK_ALLGATHER, bytes, G_TP, name), K(L, 0));   /* SP: gather the gradient */
      comm(L, CM_TP, name, kt(L, sp) ? "tp reducescatter" : kf(L, sp) ? "tp allreduce" : "tp collective", f, b);
    }
    break;
  }
  case OPK_CROSS_ENTROPY: {
    GId t = arg_num(L, &a, "tokens", 0), v = arg_num(L, &a, "vocab", 0);
    bool split = !strcmp(arg_word(L, &a, "split", "none"), "vocab");
    GId vr = split ? DIV(L, v, L->tp) : v;
    compute(L, name, call(L, RTK_CROSS_ENTROPY, name, 3, dto, t, vr));
    A->act = ADD(L, A->act, MUL3(L, t, vr, K(L, 4)));   /* fp32 softmax of the logit shard */
    double tp;
    if (split && !(g_is_const(g, L->tp, &tp) && tp == 1)) {   /* max, sum of exp, target logit */
      GId f = MUL(L, K(L, 3), coll(L, RTK_ALLREDUCE, MUL(L, t, K(L, 4)), G_TP, name));
      comm(L, CM_TP, name, "tp allreduce", f, K(L, 0));
    }
    break;
  }
  case OPK_ROUTER: {
    GId t = DIV(L, arg_num(L, &a, "tokens", 0), L->tp), h = arg_num(L, &a, "hidden", 0);
    GId e = arg_num(L, &a, "experts", 1);
    GId c1 = call(L, RTK_LINEAR, name, 5, dto, t, h, e, K(L, 0));   /* not fp8 */
    GId c2 = call(L, RTK_SOFTMAX, name, 4, dto, t, e, K(L, 0));
    GId f = ADD(L, c1, c2), b = ADD(L, c1 + 1, c2 + 1);
    A->fc = ADD(L, A->fc, f);
    A->bc = ADD(L, A->bc, b);
    add_op(L, name, NULL, 'c', f, b);
    A->params = ADD(L, A->params, MUL(L, h, e));
    A->tensors = ADD(L, A->tensors, K(L, 1));
    A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), t, MUL(L, h, e)));
    A->act = ADD(L, A->act, ADD(L, MUL3(L, t, h, L->bytes_act), MUL3(L, t, e, K(L, 4))));
    break;
  }
  case OPK_ALLREDUCE: case OPK_ALLGATHER: case OPK_REDUCESCATTER: case OPK_ALLTOALL: case OPK_P2P: {
    static const RtKernel km[] = {RTK_ALLREDUCE, RTK_ALLGATHER, RTK_REDUCESCATTER, RTK_ALLTOALL, RTK_P2P};
    GId bytes = arg_num(L, &a, "bytes", 0);
    const char *grp = arg_word(L, &a, "group", "tp");
    int gi = 0;
    while (gi < 4 && strcmp(group_names[gi], grp)) gi++;
    GId t = coll(L, km[kind - OPK_ALLREDUCE], bytes, gi, name);
    int stream = gi == G_TP ? CM_TP : gi == G_CP ? CM_CP : gi == G_EP ? CM_EP : CM_DP;
    comm(L, stream, name, grp, t, K(L, 0));
    break;
  }
  default: break;
  }
}

static void acc_init(Lower *L, Acc *a) {
  GId z = K(L, 0);
  a->fc = a->bc = a->wg = a->sel = a->act = a->act_sel = a->in_bytes = a->params = a->flops = z;
  a->tensors = z;
  a->sel_flops = z;
  for (int i = 0; i < CM_N; i++) a->comm_f[i] = a->comm_b[i] = z;
}

static void lower_block(Lower *L, Decl *blk, int which, Acc *a) {
  acc_init(L, a);
  L->blk = blk;
  L->which = which;
  L->acc = a;
  L->nlets = 0;
  L->sharded = false;
  L->out_saved = -1;
  /* fp8 (Transformer Engine's recipe, as Megatron-Core and NeMo run it) covers the layers'
   * GEMMs; the embedding's and the LM head's stay in bf16. */
  bool fp8 = L->dt_plan == RT_FP8 && which == LB_LAYER;
  L->dt_gemm = fp8 ? RT_FP8 : L->dt_other;
  if (!blk) return;
  for (AstNode *c = sema_block_body(blk).first; c; c = c->next)
    if (c->kind == AST_OP && c->u.bin.rhs->kind == AST_CALL) lower_op(L, c);
  /* the block's input: one micro-batch's hidden states on this rank */
  GId t = DIV(L, MUL(L, L->mb, L->seq), L->cp);
  a->in_bytes = MUL3(L, PICK(L, L->sp, DIV(L, t, L->tp), t), L->hidden, L->bytes_act);
}

static GId comm_sum(Lower *L, const GId *c) {
  GId s = c[0];
  for (int i = 1; i < CM_N; i++) s = ADD(L, s, c[i]);
  return s;
}

/* --- the plan -------------------------------------------------------------------------- */

/* A sweep's check node: tested for each point before its kernels run (unless always true). */
static void add_check(Lower *L, GId ok, const char *reason) {
  if (kt(L, ok)) return;
  Lowered *o = L->out;
  if (o->nchecks == o->capchecks) {
    o->capchecks = o->capchecks ? 2 * o->capchecks : 16;
    o->checks = realloc(o->checks, (size_t)o->capchecks * sizeof *o->checks);
    if (!o->checks) abort();
  }
  o->checks[o->nchecks++] = (LowerCheck){ok, reason};
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
  if (!kf(L, ok)) {   /* an axis given as a constant still folds: this cannot happen */
    err(L, L->at, "scenario `%s`: %s (not decided when lowering)", sema_decl_name(L->scenario), reason);
    return false;
  }
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  err(L, L->at, "scenario `%s`: %s", sema_decl_name(L->scenario), msg);
  return false;
}

static int dtype_code(const char *w) {
  int d = rt_dtype_lookup(w);
  return d < 0 ? RT_BF16 : d;
}

/* Bytes per gradient element: the plan's grad_dtype (default fp32), at least 2 (an fp8
 * gradient is accumulated in 16 bits). */
static double grad_bytes(Lower *L) {
  double b = rt_dtype_bytes((RtDtype)dtype_code(word_or(L, L->plan, "grad_dtype", "fp32")));
  return b < 2 ? 2 : b;
}

bool lower_axis_code(const char *field, const char *word, double *code) {
  static const struct { const char *field, *word; double code; } codes[] = {
      {"schedule", "gpipe", RT_GPIPE}, {"schedule", "1f1b", RT_1F1B}, {"schedule", "interleaved", RT_INTERLEAVED},
      {"schedule", "zero_bubble", RT_ZERO_BUBBLE}, {"recompute", "none", 0}, {"recompute", "selective", 1},
      {"recompute", "full", 2}, {"layer_partition", "uniform", 0}, {"layer_partition", "balanced", 1}};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
    if (!strcmp(codes[i].field, field) && !strcmp(codes[i].word, word)) {
      *code = codes[i].code;
      return true;
    }
  return false;
}

/* The plan's values as nodes, with the checks that need them evaluated.  Sema checks a
 * scenario's divisibility where its values are known statically; these hold for every plan
 * that reaches lowering, derived dp and (for sweeps) values sema cannot see included. */
static bool read_plan(Lower *L) {
  Decl *p = L->plan, *m = L->model;
  GId tp = plan_field(L, "tp"), pp = plan_field(L, "pp"), cp = plan_field(L, "cp"), ep = plan_field(L, "ep");
  GId vs = plan_field(L, "virtual_stages"), mb = plan_field(L, "micro_batch"), gb = plan_field(L, "global_batch");
  GId gpus = field_num(L, L->cluster, "cluster", "gpus", 0), dp = plan_field(L, "dp");
  GId layers = field_num(L, m, "model", "layers", 1);
  GId sched = plan_field(L, "schedule"), part = plan_field(L, "layer_partition");
  if (L->errors) return false;
  GId ranks = MUL3(L, tp, pp, cp), chunks = MUL(L, pp, vs), micro = DIV(L, gb, MUL(L, mb, dp));
  bool sweep = L->ax && L->ax->sweep;
  /* what sema checks for a scenario, again for a sweep's points */
  if (sweep) {
    GId heads = field_num(L, m, "model", "heads", 1), kv = field_num(L, m, "model", "kv_heads", NAN);
    double kvv;
    if (g_is_const(L->g, kv, &kvv) && isnan(kvv)) kv = heads;   /* no grouped-query attention */
    GId seq = field_num(L, m, "model", "seq", 1), experts = field_num(L, m, "model", "experts", 0);
    add_check(L, DIVIDES(L, heads, tp), "model.heads does not divide by tp");
    add_check(L, DIVIDES(L, kv, tp), "model.kv_heads does not divide by tp");
    add_check(L, DIVIDES(L, seq, cp), "model.seq does not divide by cp");
    add_check(L, g_bin(L->g, GN_OR, AND(L, g_bin(L->g, GN_GT, experts, K(L, 0)), DIVIDES(L, experts, ep)),
                  AND(L, EQ(L, experts, 0), EQ(L, ep, 1))),
         "model.experts does not divide by ep");
  }
  if (!need(L, AND(L, GE(L, dp, 1), EQ(L, g_bin(L->g, GN_SUB, dp, g_un(L->g, GN_FLOOR, dp)), 0)),
            "the cluster's GPUs do not divide by tp*pp*cp",
            "the cluster's %g GPUs do not divide by tp*pp*cp = %g", cv(L, gpus), cv(L, ranks)))
    return false;
  if (!need(L, sweep ? EQ(L, SUB(L, MUL(L, ranks, dp), gpus), 0) : g_bin(L->g, GN_LE, MUL(L, ranks, dp), gpus),
            "tp*pp*dp*cp is not the cluster's GPUs",
            "the plan needs tp*pp*dp*cp = %g GPUs, the cluster has %g", cv(L, MUL(L, ranks, dp)), cv(L, gpus)))
    return false;
  if (!need(L, DIVIDES(L, dp, ep), "ep does not divide dp",
            "plan.ep = %g must divide dp = %g (expert parallelism is carved out of data parallelism)", cv(L, ep), cv(L, dp)))
    return false;
  if (!need(L, AND(L, GE(L, micro, 1), EQ(L, SUB(L, micro, g_un(L->g, GN_FLOOR, micro)), 0)),
            "global_batch does not divide by micro_batch * dp",
            "global_batch = %g does not divide by micro_batch * dp = %g*%g", cv(L, gb), cv(L, mb), cv(L, dp)))
    return false;
  GId uniform = EQ(L, part, 0);
  if (!need(L, g_bin(L->g, GN_OR, g_un(L->g, GN_NOT, uniform), DIVIDES(L, layers, chunks)),
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
  L->tp = tp, L->pp = pp, L->dp = dp, L->cp = cp, L->ep = ep, L->vs = vs, L->mb = mb, L->gb = gb, L->m = micro;
  L->layers = layers, L->sched = sched, L->balanced = g_un(L->g, GN_NOT, uniform);
  L->seq = field_num(L, m, "model", "seq", 1);
  L->hidden = field_num(L, m, "model", "hidden", 1);
  int dt = dtype_code(word_or(L, p, "dtype", "bf16"));
  L->dt_plan = L->dt_gemm = (RtDtype)dt;
  L->dt_other = dt == RT_FP8 ? RT_BF16 : (RtDtype)dt;
  L->bytes_act = K(L, dt == RT_FP32 || dt == RT_TF32 ? 4 : 2);   /* tf32 is stored as fp32 */
  L->sp = AND(L, plan_field(L, "sequence_parallel"), g_bin(L->g, GN_GT, tp, K(L, 1)));
  L->overlap_tp = plan_field(L, "overlap_tp");
  L->overlap_dp = plan_field(L, "overlap_dp");
  L->zero = plan_field(L, "zero");
  GId rec = plan_field(L, "recompute");
  L->rec_full = EQ(L, rec, 2), L->rec_sel = EQ(L, rec, 1);
  /* placement: stride of each group = product of the sizes of the groups inside it */
  const char *order[8];
  int no = sema_word_list(L->s, p, "placement", order, 8);
  static const char *const def_order[] = {"tp", "cp", "ep", "dp", "pp"};
  if (no < 0) {
    no = 5;
    for (int i = 0; i < 5; i++) order[i] = def_order[i];
  }
  GId size[5] = {tp, cp, ep, dp, pp}, stride = K(L, 1), st[5];
  bool seen[5] = {0};
  for (int i = 0; i < 5; i++) st[i] = K(L, 1);
  for (int i = 0; i < no && i < 8; i++) {
    int gi = 0;
    while (gi < 5 && strcmp(group_names[gi], order[i])) gi++;
    if (gi == 5 || gi == G_EP) continue;   /* ep lives inside dp: it takes dp's stride */
    seen[gi] = true;
    st[gi] = stride;
    stride = MUL(L, stride, size[gi]);
  }
  for (int gi = 0; gi < 5; gi++)
    if (!seen[gi] && gi != G_EP) {   /* groups the placement leaves out go outermost */
      st[gi] = stride;
      stride = MUL(L, stride, size[gi]);
    }
  st[G_EP] = st[G_DP];
  for (int gi = 0; gi < 5; gi++) L->stride[gi] = st[gi];
  L->stride[G_DPCP] = g_min(L->g, st[G_CP], st[G_DP]);   /* cp and dp adjacent (the default) */
  L->ready = true;
  /* Fill the Report's plan echo (a sweep's points are echoed from their axes). */
  Report *r = &L->out->meta;
  r->tp = ci(L, tp), r->pp = ci(L, pp), r->dp = ci(L, dp), r->cp = ci(L, cp), r->ep = ci(L, ep);
  r->virtual_stages = ci(L, vs), r->micro_batch = ci(L, mb), r->global_batch = ci(L, gb);
  r->micro_batches = ci(L, micro), r->gpus = ci(L, gpus), r->zero = ci(L, L->zero);
  r->sequence_parallel = kt(L, L->sp);
  r->dtype = rt_dtype_name((RtDtype)dt);
  static const char *const sched_words[] = {[RT_GPIPE] = "gpipe", [RT_1F1B] = "1f1b", [RT_INTERLEAVED] = "interleaved",
                                            [RT_ZERO_BUBBLE] = "zero_bubble"};
  static const char *const rec_words[] = {"none", "selective", "full"};
  double sc = cv(L, sched), rc = cv(L, rec);
  r->schedule = sc >= 0 && sc < RT_NSCHEDULES ? sched_words[(int)sc] : "?";
  r->recompute = rc >= 0 && rc <= 2 ? rec_words[(int)rc] : "?";
  return true;
}

/* --- assembling the iteration ---------------------------------------------------------------- */

/* Micro-batch chunks whose activations device d holds at most (1F1B family: the warm-up
 * depth; GPipe: all).  The simulation's in_flight is checked against these in the tests. */
static GId in_flight(Lower *L, GId d) {
  Graph *g = L->g;
  GId micro_chunks = MUL(L, L->m, L->vs);
  GId inter_warm = ADD(L, MUL(L, K(L, 2), SUB(L, SUB(L, L->pp, d), K(L, 1))), MUL(L, SUB(L, L->vs, K(L, 1)), L->pp));
  return PICK(L, EQ(L, L->sched, RT_GPIPE), micro_chunks,
              PICK(L, EQ(L, L->sched, RT_INTERLEAVED), g_min(g, micro_chunks, ADD(L, inter_warm, K(L, 1))),
                   g_min(g, L->m, SUB(L, L->pp, d))));
}

/* Micro-batches whose activations the first model chunk (the embedding's, on device 0) and the
 * last one (the head's: the output layer and the loss, on the last device) hold at most.  The
 * head's backward follows its forward at once in every 1F1B-family schedule (its device's
 * warm-up runs the other chunks), so it holds one micro-batch, GPipe all of them; chunk 0
 * holds what device 0's warm-up gives it: 1F1B and zero-bubble min(m, pp), interleaved
 * min(m, 2 pp) (its first pp micro-batches, then pp - 1 of the warm-up's last 2 (pp - 1)
 * forwards, then one).  Checked against the schedule simulation's events in the tests. */
static GId first_chunk_in_flight(Lower *L) {
  Graph *g = L->g;
  return PICK(L, EQ(L, L->sched, RT_GPIPE), L->m,
              g_min(g, L->m, PICK(L, EQ(L, L->sched, RT_INTERLEAVED), MUL(L, K(L, 2), L->pp), L->pp)));
}

static GId last_chunk_in_flight(Lower *L) {
  return PICK(L, EQ(L, L->sched, RT_GPIPE), L->m, K(L, 1));
}

static void emit(Lower *L, OutputId o, GId id) { graph_output(L->g, output_names[o], id); }

static void assemble(Lower *L, Acc *E, Acc *Ly, Acc *H) {
  Graph *g = L->g;
  Decl *p = L->plan;
  GId full = L->rec_full, sel = L->rec_sel, layers = L->layers, zb = EQ(L, L->sched, RT_ZERO_BUBBLE);

  /* one layer, one micro-batch */
  GId lf = ADD(L, Ly->fc, comm_sum(L, Ly->comm_f)), lb = ADD(L, Ly->bc, comm_sum(L, Ly->comm_b));
  GId lr = PICK(L, full, lf, PICK(L, sel, Ly->sel, K(L, 0)));
  GId ef = ADD(L, E->fc, comm_sum(L, E->comm_f)), eb = ADD(L, E->bc, comm_sum(L, E->comm_b));
  GId hf = ADD(L, H->fc, comm_sum(L, H->comm_f)), hb = ADD(L, H->bc, comm_sum(L, H->comm_b));

  /* the pipeline send: one micro-batch's hidden states (sequence-sharded with SP) */
  GId p2p_bytes = MUL3(L, DIV(L, MUL(L, L->mb, L->seq), L->cp), L->hidden, L->bytes_act);
  p2p_bytes = PICK(L, L->sp, DIV(L, p2p_bytes, L->tp), p2p_bytes);
  GId p2p = coll(L, RTK_P2P, p2p_bytes, G_PP, "pipeline send");
  /* outside zero-bubble, B and W run together: the whole backward is passed as B */
  GId args[15] = {L->sched, L->pp, L->vs, L->m, layers, L->balanced, lf, PICK(L, zb, SUB(L, lb, Ly->wg), lb),
                  PICK(L, zb, Ly->wg, K(L, 0)), lr, ef, eb, hf, hb, p2p};
  GId pipe = g_call(g, RTK_PIPELINE, args, 15, "pipeline");
  L->out->pipe = pipe;
  GId makespan = pipe, nop2p = pipe + 1;

  /* layers on the first and last device (closed forms of rt_partition_layers) */
  GId chunks = MUL(L, L->pp, L->vs);
  GId base = g_un(g, GN_FLOOR, DIV(L, layers, chunks));
  GId rem = SUB(L, layers, MUL(L, base, chunks));
  GId l0 = ADD(L, MUL(L, L->vs, base), g_un(g, GN_CEIL, DIV(L, rem, L->pp)));
  GId ll = ADD(L, MUL(L, L->vs, base), g_un(g, GN_FLOOR, DIV(L, rem, L->pp)));
  GId one_dev = g_bin(g, GN_EQ, L->pp, K(L, 1));
  GId z = K(L, 0);

  /* busy time of each end device; the breakdown is of the busier */
  GId per_layer = ADD(L, ADD(L, lf, lb), lr);
  GId busy0 = MUL(L, L->m, ADD(L, ADD(L, MUL(L, l0, per_layer), ADD(L, ef, eb)), g_select(g, one_dev, ADD(L, hf, hb), z)));
  GId busyl = MUL(L, L->m, ADD(L, MUL(L, ll, per_layer), ADD(L, hf, hb)));
  GId last_busier = g_bin(g, GN_AND, g_un(g, GN_NOT, one_dev), g_bin(g, GN_GT, busyl, busy0));
  GId nl = g_select(g, last_busier, ll, l0);
  GId with_e = g_un(g, GN_NOT, last_busier), with_h = g_bin(g, GN_OR, last_busier, one_dev);
  GId busy = g_select(g, last_busier, busyl, busy0);
  /* per part, one micro-batch on that device, then times m */
#define ON_DEV(lay, emb, head) ADD(L, ADD(L, MUL(L, nl, lay), g_select(g, with_e, emb, z)), g_select(g, with_h, head, z))
  GId part[RP_N];
  part[RP_FORWARD] = ON_DEV(Ly->fc, E->fc, H->fc);
  part[RP_BACKWARD] = ON_DEV(Ly->bc, E->bc, H->bc);
  part[RP_RECOMPUTE] = MUL(L, nl, lr);
  part[RP_TP_COMM] = ON_DEV(ADD(L, Ly->comm_f[CM_TP], Ly->comm_b[CM_TP]), ADD(L, E->comm_f[CM_TP], E->comm_b[CM_TP]),
                            ADD(L, H->comm_f[CM_TP], H->comm_b[CM_TP]));
  part[RP_CP_COMM] = MUL(L, nl, ADD(L, Ly->comm_f[CM_CP], Ly->comm_b[CM_CP]));
  part[RP_EP_COMM] = MUL(L, nl, ADD(L, Ly->comm_f[CM_EP], Ly->comm_b[CM_EP]));
  GId zero3 = MUL(L, nl, ADD(L, Ly->comm_f[CM_DP], Ly->comm_b[CM_DP]));
#undef ON_DEV
  for (int i = RP_FORWARD; i <= RP_EP_COMM; i++) part[i] = MUL(L, L->m, part[i]);
  zero3 = MUL(L, L->m, zero3);
  part[RP_PP_COMM] = SUB(L, makespan, nop2p);
  /* one stage has no bubble: 0, not the rounding residue of simulation against closed form */
  part[RP_BUBBLE] = g_select(g, one_dev, z, MAX(L, z, SUB(L, nop2p, busy)));

  /* data parallelism: the device that holds the most parameters */
  bool tied = bool_or(L, L->model, "tied_embeddings", false);
  GId hparams = H->params;
  GId params0 = ADD(L, ADD(L, MUL(L, l0, Ly->params), E->params), g_select(g, one_dev, tied ? z : hparams, z));
  GId paramsl = ADD(L, MUL(L, ll, Ly->params), hparams);
  GId params = g_select(g, one_dev, params0, MAX(L, params0, paramsl));
  /* and the tensors that hold them (the optimizer step's per-tensor cost), counted alike */
  GId tensors0 = ADD(L, ADD(L, MUL(L, l0, Ly->tensors), E->tensors), g_select(g, one_dev, tied ? z : H->tensors, z));
  GId tensorsl = ADD(L, MUL(L, ll, Ly->tensors), H->tensors);
  GId tensors = g_select(g, one_dev, tensors0, g_select(g, g_bin(g, GN_GE, params0, paramsl), tensors0, tensorsl));
  GId grad_el = K(L, grad_bytes(L));
  GId w_el = L->bytes_act;   /* weights are stored as the activations are */
  GId bucket = field_num(L, p, "plan", "dp_bucket_elements", 40e6);
  bucket = g_min(g, bucket, params);
  GId nb = g_un(g, GN_CEIL, DIV(L, params, bucket));
  GId last_el = SUB(L, params, MUL(L, SUB(L, nb, K(L, 1)), bucket));
  GId shard = MUL(L, L->dp, L->cp);   /* ranks that hold the same weights: ZeRO shards over them */
  GId z3 = EQ(L, L->zero, 3), z0 = EQ(L, L->zero, 0), z1 = GE(L, L->zero, 1), z2 = GE(L, L->zero, 2);
  /* ZeRO 0: all-reduce; 1, 2: reduce-scatter, then all-gather the updated parameters; 3:
   * nothing here (gradients are reduce-scattered per layer, in the backward) */
  GId last_red = z, dp_red = z;
  if (!kt(L, z3)) {
    GId gb_full = MUL(L, bucket, grad_el), gb_last = MUL(L, last_el, grad_el);
    GId full_b = PICK(L, z0, coll(L, RTK_ALLREDUCE, gb_full, G_DPCP, "dp gradients"),
                      coll(L, RTK_REDUCESCATTER, gb_full, G_DPCP, "dp gradients"));
    last_red = PICK(L, z0, coll(L, RTK_ALLREDUCE, gb_last, G_DPCP, "dp gradients"),
                    coll(L, RTK_REDUCESCATTER, gb_last, G_DPCP, "dp gradients"));
    dp_red = ADD(L, MUL(L, SUB(L, nb, K(L, 1)), full_b), last_red);
  }
  GId gather_on = AND(L, z1, g_un(g, GN_NOT, z3));
  GId last_gather = PICK(L, gather_on, coll(L, RTK_ALLGATHER, MUL(L, last_el, w_el), G_DPCP, "dp parameters"), z);
  GId dp_gather = PICK(L, gather_on,
                       ADD(L, MUL(L, SUB(L, nb, K(L, 1)), coll(L, RTK_ALLGATHER, MUL(L, bucket, w_el), G_DPCP, "dp parameters")),
                           last_gather),
                       z);
  last_red = PICK(L, z3, z, last_red);
  dp_red = PICK(L, z3, z, dp_red);
  /* The window a reduction hides behind: the device's last micro-batch backward (its buckets
   * become ready as it runs).  Interleaved, each model chunk reduces after its own last
   * backward, and min(pp, m) backwards of every earlier chunk still follow it (Megatron runs
   * micro-batches in groups of pp per chunk), so chunk c's reduction has c * min(pp, m) more
   * chunk backwards to hide behind: with v chunks of equal size the stream's excess is
   * T - (1 + (v - 1) min(pp, m)) b_chunk.  The parameter gathers mirror it in the forward. */
  GId groups = ADD(L, K(L, 1), MUL(L, SUB(L, L->vs, K(L, 1)), g_min(g, L->pp, L->m)));
  GId win = DIV(L, MUL(L, nl, groups), L->vs);
  GId bwin = MUL(L, win, lb), fwin = MUL(L, win, lf);
  GId dp_exposed = PICK(L, L->overlap_dp,
                        ADD(L, MAX(L, last_red, SUB(L, dp_red, bwin)), MAX(L, last_gather, SUB(L, dp_gather, fwin))),
                        ADD(L, dp_red, dp_gather));
  part[RP_DP_COMM] = ADD(L, dp_exposed, zero3);
  bool sgd = !strcmp(word_or(L, p, "optimizer", "adam"), "sgd");
  GId opt_params = PICK(L, z1, DIV(L, params, shard), params);
  /* ZeRO 1 and 2 (Megatron's distributed optimizer): a rank steps one fp32 shard tensor per
   * parameter whose range overlaps its 1/shard of the flat gradient buffer, about
   * tensors/shard of them (a tensor split at a shard boundary counts once); ZeRO 3 likewise. */
  GId opt_tensors = PICK(L, z1, MAX(L, K(L, 1), g_un(g, GN_CEIL, DIV(L, tensors, shard))), tensors);
  GId opt = call(L, RTK_ADAM, "optimizer", 3, K(L, L->dt_other), opt_params, opt_tensors);
  if (sgd) opt = MUL(L, K(L, 0.5), opt);   /* SGD with momentum: half of Adam's state traffic */
  part[RP_OPTIMIZER] = opt;

  GId iteration = ADD(L, ADD(L, makespan, dp_exposed), opt);
  for (int i = 0; i < RP_N; i++) graph_output(g, part_outputs[i], part[i]);
  emit(L, O_ITERATION, iteration);
  emit(L, O_MAKESPAN, makespan);
  emit(L, O_DP_TIME, dp_exposed);
  emit(L, O_OPT_TIME, opt);

  /* throughput */
  GId tokens = MUL(L, L->gb, L->seq);
  emit(L, O_TOKENS, DIV(L, tokens, iteration));
  GId ranks = MUL3(L, L->tp, L->cp, MUL(L, L->m, L->dp));   /* forward FLOP per rank -> whole iteration */
  GId fwd_flops = ADD(L, ADD(L, MUL(L, layers, Ly->flops), E->flops), H->flops);
  GId model_flops = MUL3(L, K(L, 3), fwd_flops, ranks);
  GId rec_flops = PICK(L, full, MUL(L, layers, Ly->flops), PICK(L, sel, MUL(L, layers, Ly->sel_flops), z));
  GId hw_flops = ADD(L, model_flops, MUL(L, rec_flops, ranks));
  GId gpus = MUL(L, MUL(L, L->tp, L->pp), MUL(L, L->dp, L->cp));
  GId per_gpu = DIV(L, model_flops, MUL(L, iteration, gpus));
  double peak = L->gpu->peak[L->dt_plan] > 0 ? L->gpu->peak[L->dt_plan] : L->gpu->peak[RT_FP16];
  emit(L, O_MODEL_FLOPS, model_flops);
  emit(L, O_HW_FLOPS, hw_flops);
  emit(L, O_TFLOPS, per_gpu);
  emit(L, O_MFU, DIV(L, per_gpu, K(L, peak)));

  /* memory of the first and of the last device */
  GId act_layer = PICK(L, full, Ly->in_bytes, PICK(L, sel, SUB(L, Ly->act, Ly->act_sel), Ly->act));
  GId work = PICK(L, full, Ly->act, PICK(L, sel, Ly->act_sel, z));   /* one layer rematerialised in backward */
  GId opt_el = K(L, (L->dt_plan == RT_FP32 || L->dt_plan == RT_TF32 ? 8 : 12) - (sgd ? 4 : 0));
  GId mem0[RM_N], meml[RM_N];
  GId pdev[2] = {params0, g_select(g, one_dev, params0, paramsl)};
  GId ldev[2] = {l0, ll};
  GId *mem[2] = {mem0, meml};
  for (int d = 0; d < 2; d++) {
    GId dev = d == 0 ? z : SUB(L, L->pp, K(L, 1));
    GId P = pdev[d];
    mem[d][RM_WEIGHTS] = MUL(L, PICK(L, z3, DIV(L, P, shard), P), w_el);
    mem[d][RM_GRADIENTS] = MUL(L, PICK(L, z2, DIV(L, P, shard), P), grad_el);
    mem[d][RM_OPTIMIZER] = MUL(L, PICK(L, z1, DIV(L, P, shard), P), opt_el);
    GId fl = in_flight(L, dev);
    GId per_chunk = DIV(L, ldev[d], L->vs);
    GId a = ADD(L, MUL3(L, fl, per_chunk, act_layer), work);
    if (d == 0) a = ADD(L, a, MUL(L, first_chunk_in_flight(L), E->act));
    GId head_act = MUL(L, last_chunk_in_flight(L), H->act);
    a = ADD(L, a, d == 1 ? head_act : g_select(g, one_dev, head_act, z));
    mem[d][RM_ACTIVATIONS] = a;
    GId buf = g_select(g, g_bin(g, GN_GT, shard, K(L, 1)), MUL(L, bucket, grad_el), z);
    buf = PICK(L, z3, ADD(L, buf, MUL3(L, K(L, 2), Ly->params, w_el)), buf);
    mem[d][RM_BUFFERS] = buf;
  }
  GId peak0 = z, peakl = z;
  for (int i = 0; i < RM_N; i++) {
    peak0 = ADD(L, peak0, mem0[i]);
    peakl = ADD(L, peakl, meml[i]);
  }
  GId last_more = g_bin(g, GN_GT, peakl, peak0);
  for (int i = 0; i < RM_N; i++) graph_output(g, memory_outputs[i], g_select(g, last_more, meml[i], mem0[i]));
  emit(L, O_PEAK, MAX(L, peak0, peakl));
  emit(L, O_PEAK_STAGE, g_select(g, last_more, SUB(L, L->pp, K(L, 1)), z));
}

/* --- entry points ---------------------------------------------------------------------- */

/* The fields a sweep can vary: numbers, flags and the coded enumerations of the plan that
 * lowering reads as nodes, and any number of the model.  Others (dtype, placement, the
 * cluster) shape the graph itself. */
static bool axis_supported(Lower *L, const LowerAxis *a) {
  static const char *const plan_fields[] = {"tp", "pp", "dp", "cp", "ep", "virtual_stages", "micro_batch",
                                            "global_batch", "zero", "dp_bucket_elements", "sequence_parallel",
                                            "overlap_tp", "overlap_dp", "schedule", "recompute", "layer_partition", NULL};
  if (!strcmp(a->root, "plan")) {
    for (int i = 0; plan_fields[i]; i++)
      if (!strcmp(plan_fields[i], a->field)) return true;
    return false;
  }
  double x;
  return !strcmp(a->root, "model") && (sema_number(L->s, L->model, a->field, &x) || !sema_word(L->s, L->model, a->field));
}

/* A sweep's requires and objective, over the lowered outputs. */
static void lower_sweep_outputs(Lower *L) {
  Lowered *o = L->out;
  L->results = true;
  L->blk = NULL;
  char name[32];
  for (AstNode *c = sema_block_body(L->ax->sweep).first; c; c = c->next) {
    if (c->kind != AST_REQUIRE && c->kind != AST_MINIMIZE && c->kind != AST_MAXIMIZE) continue;
    Val v = eval(L, c->u.bin.rhs);
    if (!v.ok || v.word) {
      err_blk(L, c->u.bin.rhs, "this %s cannot be evaluated for the sweep's points",
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
}

int lower_scenario(Sema *s, HwSet *hw, Decl *sc, Diag *d, Lowered *out) { return lower_with_axes(s, hw, sc, NULL, d, out); }

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
    err(&L, L.at, "scenario `%s` needs a model, a cluster and a plan", sema_decl_name(sc));
    return -1;
  }
  L.rc = hw_cluster_decl(hw, L.cluster);
  if (!L.rc) return -1;
  L.gpu = L.rc->gpu;
  for (int i = 0; axes && i < axes->n; i++)
    if (!axis_supported(&L, &axes->axis[i])) {
      err(&L, L.at, "`%s.%s` cannot be varied: a sweep varies numbers of the model, and the plan's parallel sizes, "
          "micro_batch, global_batch, zero, dp_bucket_elements, sequence_parallel, overlap_tp, overlap_dp, schedule, "
          "recompute and layer_partition", axes->axis[i].root, axes->axis[i].field);
      return -1;
    }
  graph_init(&out->g, L.gpu, L.rc);
  L.g = &out->g;
  Report *r = &out->meta;
  r->scenario = sema_decl_name(sc);
  r->file = sema_decl_path(s, sc);
  r->model = sema_decl_name(L.model);
  r->cluster = sema_decl_name(L.cluster);
  r->gpu = L.gpu->name;
  r->capacity = L.gpu->memory;
  r->sustained = rt_sustained(L.gpu, RT_BF16), r->sustained_fp8 = rt_sustained(L.gpu, RT_FP8);
  double x;
  Decl *mdecl = sc;
  if (sema_nsubs(mdecl, "measured") > 0) {
    if (sema_sub_number(s, mdecl, "measured", 0, "iteration", &x)) {
      r->has_measured_iteration = true;
      r->measured_iteration = x;
    }
    if (sema_sub_number(s, mdecl, "measured", 0, "tflops_per_gpu", &x)) {
      r->has_measured_tflops = true;
      r->measured_tflops = x;
    }
  }
  if (!read_plan(&L)) return -1;
  Decl *blocks[LB_N] = {sema_ref(s, L.model, "embedding"), sema_ref(s, L.model, "layer"), sema_ref(s, L.model, "head")};
  if (!blocks[LB_LAYER]) {
    err(&L, L.at, "scenario `%s`: model `%s` has no `layer` block", sema_decl_name(sc), sema_decl_name(L.model));
    return -1;
  }
  Acc acc[LB_N];
  for (int i = 0; i < LB_N; i++) lower_block(&L, blocks[i], i, &acc[i]);
  GId z3 = EQ(&L, L.zero, 3);
  if (!kf(&L, z3)) {   /* ZeRO-3: per-layer parameter gathers and gradient reduce-scatters */
    L.which = LB_LAYER;
    L.acc = &acc[LB_LAYER];
    GId pbytes = MUL(&L, acc[LB_LAYER].params, L.bytes_act);   /* weights as activations */
    GId ag = coll(&L, RTK_ALLGATHER, pbytes, G_DPCP, "zero3 gather");
    GId rs = coll(&L, RTK_REDUCESCATTER, MUL(&L, acc[LB_LAYER].params, K(&L, grad_bytes(&L))), G_DPCP, "zero3 reduce");
    GId f = exposed(&L, ag, acc[LB_LAYER].fc, L.overlap_dp);
    GId b = exposed(&L, ADD(&L, ag, rs), acc[LB_LAYER].bc, L.overlap_dp);
    comm(&L, CM_DP, "layer", "zero3 gather/reduce", PICK(&L, z3, f, K(&L, 0)), PICK(&L, z3, b, K(&L, 0)));
  }
  if (L.errors) return -1;
  assemble(&L, &acc[LB_EMBEDDING], &acc[LB_LAYER], &acc[LB_HEAD]);
  if (!L.errors && axes && axes->sweep) lower_sweep_outputs(&L);
  return L.errors ? -1 : 0;
}

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

void lower_report(const Lowered *l, const double *vals, Report *r) {
  *r = l->meta;
  r->iteration = out_val(l, vals, "iteration");
  for (int i = 0; i < RP_N; i++) r->part[i] = out_val(l, vals, part_outputs[i]);
  r->tokens_per_s = out_val(l, vals, "tokens_per_s");
  r->model_flops = out_val(l, vals, "model_flops");
  r->hardware_flops = out_val(l, vals, "hardware_flops");
  r->tflops_per_gpu = out_val(l, vals, "tflops_per_gpu");
  r->mfu = out_val(l, vals, "mfu");
  for (int i = 0; i < RM_N; i++) r->memory[i] = out_val(l, vals, memory_outputs[i]);
  r->peak = out_val(l, vals, "memory.peak");
  double ps = out_val(l, vals, "memory.peak_stage");
  r->peak_stage = ps >= 0 && ps <= INT_MAX ? (int)ps : 0;
  r->fits = r->peak <= r->capacity;
  if (r->has_measured_iteration) r->error_pct = 100 * (r->iteration - r->measured_iteration) / r->measured_iteration;
  r->calls = r->calibrated_calls = 0;
  for (int i = 0; i < l->g.nn; i++) {
    const GNode *x = &l->g.n[i];
    if (x->op != GN_CALL || rt_kernels[x->kernel].target == 'N') continue;
    r->calls++;
    r->calibrated_calls += ((unsigned)vals[i + 2] & RT_CALIBRATED) != 0;
  }
}

int lower_trace(const Lowered *l, const double *vals, const Report *r, FILE *out) {
  const GNode *pn = &l->g.n[l->pipe];
  double a[15];
  for (int i = 0; i < 15; i++) a[i] = vals[l->g.args[pn->arg0 + i]];
  int counts[RT_MAX_CHUNKS];
  double *buf = malloc(4 * (size_t)RT_MAX_CHUNKS * sizeof *buf);
  RtPipeline p;
  if (!buf || rt_pipeline_of_args(a, &p, buf) < 0 ||   /* checks the counts before they are ints */
      rt_partition_layers((int)a[4], p.stages, p.chunks, a[5] != 0, counts) < 0) {
    free(buf);
    return -1;
  }
  int stages = p.stages, chunks = p.chunks, n = stages * chunks;
  int nev = 0;
  rt_pipeline(&p, NULL, 0, &nev);
  RtPipeEvent *ev = malloc((size_t)(nev > 0 ? nev : 1) * sizeof *ev);
  /* per chunk: embedding ops, its layers' ops, head ops */
  TraceOp **ops = calloc((size_t)n, sizeof *ops);
  int *nops = calloc((size_t)n, sizeof *nops);
  if (!ev || !ops || !nops) abort();
  rt_pipeline(&p, ev, nev, &nev);
  for (int c = 0; c < n; c++) {
    int cnt = (c == 0 ? l->nops[LB_EMBEDDING] : 0) + counts[c] * l->nops[LB_LAYER] + (c == n - 1 ? l->nops[LB_HEAD] : 0);
    ops[c] = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof **ops);
    if (!ops[c]) abort();
    int k = 0;
    for (int blk = 0; blk < LB_N; blk++) {
      int reps = blk == LB_LAYER ? counts[c] : ((blk == LB_EMBEDDING && c == 0) || (blk == LB_HEAD && c == n - 1));
      for (int rep = 0; rep < reps; rep++)
        for (int i = 0; i < l->nops[blk]; i++) {
          const LowerOp *o = &l->ops[blk][i];
          ops[c][k++] = (TraceOp){o->name, o->stream, vals[o->fwd], vals[o->bwd]};
        }
    }
    nops[c] = k;
  }
  TraceInput t = {r, ev, nev, stages, chunks, (const TraceOp *const *)ops, nops, a[14],
                  out_val(l, vals, "pipeline.makespan"), out_val(l, vals, "dp.exposed"),
                  out_val(l, vals, "pipeline.makespan") + out_val(l, vals, "dp.exposed"), out_val(l, vals, "optimizer")};
  int rc2 = report_trace(out, &t);
  for (int c = 0; c < n; c++) free(ops[c]);
  free(ops);
  free(nops);
  free(ev);
  free(buf);
  return rc2;
}
