/* lower_ops.c - a block's operators as kernel calls and collectives: each `op` of a block
 * (ops.def) becomes, through its kind's function, the kernel calls of one micro-batch on one
 * rank, the tensor-, context- and expert-parallel collectives its split implies, and what it
 * adds to the block's accumulator (Acc: seconds, saved activations, parameters, FLOPs).  The
 * model these follow is in lower.c's header. */
#include <stdarg.h>
#include <string.h>

#include "alloc.h"
#include "front/schema.h"
#include "lower_private.h"

/* --- the block's operator list ---------------------------------------------------------- */

/* Appends an operator to the current block's list (the trace's rows): name and suffix
 * ("qkv" "tp allreduce"), its stream, and the nodes of its forward and backward seconds. */
static void add_op(Lower *L, const char *name, const char *suffix, char stream, GId f, GId b) {
  Lowered *o = L->out;
  int w = L->which;
  XGROW(o->ops[w], o->nops[w] + 1, o->capops[w]);
  const char *text = suffix ? arena_printf(&o->names, "%s %s", name, suffix) : arena_strdup(&o->names, name);
  o->ops[w][o->nops[w]++] = (LowerOp){text, stream, f, b};
}

/* Adds an operator's weights in the whole model (before any split) to the block's, and those
 * one token uses (active; -1: all of them). */
static void whole(Lower *L, GId total, GId active) {
  Acc *A = L->acc;
  A->wtotal = ADD(L, A->wtotal, total);
  A->wactive = ADD(L, A->wactive, active < 0 ? total : active);
}

/* --- arguments ----------------------------------------------------------------------- */

/* One operator's call, bound to its definition's parameters (attention has 12). */
enum { ARGS_MAX = 16 };
typedef struct Args {
  AstNode *node[ARGS_MAX]; /* per parameter of the operator, NULL if not given */
  const OpDef *def;
  int kind;     /* OpKind (ops.def) */
  GId dto;      /* the other operators' dtype (L->dt_other), as a node */
  GId in_saved; /* bytes of its output the operator before keeps, or -1 */
} Args;

static int param_index(const OpDef *od, const char *name) {
  for (int i = 0; od->params[i].name; i++)
    if (!strcmp(od->params[i].name, name)) return i;
  return -1;
}

static void bind_args(AstNode *call, const OpDef *od, Args *a) {
  memset(a, 0, sizeof *a);
  a->def = od;
  int k = 0;
  for (AstNode *x = call->u.list.first; x; x = x->next) {
    if (x->kind == AST_NAMEDARG) {
      int i = param_index(od, x->name);
      if (i >= 0 && i < ARGS_MAX) a->node[i] = x->u.bin.rhs;
    } else if (k < ARGS_MAX) {
      a->node[k++] = x;
    }
  }
}

/* Argument `name`'s node, NULL if not given. */
static AstNode *arg_at(Args *a, const char *name) {
  int i = param_index(a->def, name);
  return i >= 0 && i < ARGS_MAX ? a->node[i] : NULL;
}

/* Reports that argument `name` (node n) `must`, unless evaluating it reported an unset model
 * field (L->missing past `missing`). */
static void arg_bad(Lower *L, Args *a, AstNode *n, const char *name, int missing, const char *must) {
  if (L->missing == missing) lower_err_blk(L, n, "argument `%s` of `%s` %s", name, a->def->name, must);
}

/* A numeric argument: its node; must be present (sema checked required ones). */
static GId arg_num(Lower *L, Args *a, const char *name, double def) {
  AstNode *n = arg_at(a, name);
  if (!n) return K(L, def);
  int missing = L->missing;
  Val v = lower_eval(L, n);
  if (!v.ok || v.word) {
    arg_bad(L, a, n, name, missing, "cannot be evaluated for this scenario");
    return K(L, NAN);
  }
  return v.id;
}

static const char *arg_word(Lower *L, Args *a, const char *name, const char *def) {
  AstNode *n = arg_at(a, name);
  if (!n) return def;
  int missing = L->missing;
  Val v = lower_eval(L, n);
  if (!v.ok || !v.word) {
    arg_bad(L, a, n, name, missing, "must be a word here");
    return def;
  }
  return v.word;
}

static bool arg_bool(Lower *L, Args *a, const char *name, bool def) {
  AstNode *n = arg_at(a, name);
  if (!n) return def;
  int missing = L->missing;
  Val v = lower_eval(L, n);
  double x;
  if (!v.ok || v.word || !g_is_const(L->g, v.id, &x)) {
    arg_bad(L, a, n, name, missing, "must be true or false for this scenario");
    return def;
  }
  return x != 0;
}

/* --- kernel calls and collectives ------------------------------------------------------ */

GId lower_call(Lower *L, RtKernel k, const char *label, int n, ...) {
  GId args[RT_KERNEL_MAXARGS];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, GId);
  va_end(ap);
  return g_call(L->g, k, args, n, label);
}

/* A compute operator: call c's forward (c) and backward (c + 1) seconds into the block. */
static void compute_fb(Lower *L, const char *name, GId f, GId b) {
  Acc *a = L->acc;
  a->launches = ADD(L, a->launches, K(L, 1));
  a->fc = ADD(L, a->fc, f);
  a->bc = ADD(L, a->bc, b);
  add_op(L, name, NULL, 'c', f, b);
}

static void compute(Lower *L, const char *name, GId c) { compute_fb(L, name, c, c + 1); }

/* A collective over a group, seconds of one call (the node of its time). */
GId lower_coll(Lower *L, RtKernel k, GId bytes, int group, const char *label) {
  GId size = group == G_TP    ? L->tp
             : group == G_CP  ? L->cp
             : group == G_EP  ? L->ep
             : group == G_DP  ? L->dp
             : group == G_PP  ? L->pp
             : group == G_ETP ? L->etp
             : group == G_EDP ? L->edp
             : group == G_EMP ? MUL(L, L->etp, L->ep)
                              : MUL(L, L->dp, L->cp);
  if (k != RTK_P2P) lower_group_tiles(L, group, size, L->stride[group], k, label);
  return lower_call(L, k, label, 3, bytes, size, L->stride[group]);
}

GId lower_comm_sum(Lower *L, const GId *c) {
  GId s = c[0];
  for (int i = 1; i < CM_N; i++) s = ADD(L, s, c[i]);
  return s;
}

/* A kernel that reads and writes `copies` times a x b elements once each (a copy, a scaled
 * copy): the element-wise add's three passes over 2/3 of them, at its calibrated bandwidth. */
static GId copy_call(Lower *L, const char *name, GId dt, double copies, GId a, GId b) {
  return lower_call(L, RTK_ADD, name, 2, dt, MUL3(L, K(L, copies * 2.0 / 3), a, b));
}

/* Exposed communication: hidden behind `behind` seconds of compute when overlapped. */
static GId exposed(Lower *L, GId comm, GId behind, GId overlap) {
  return PICK(L, overlap, MAX(L, K(L, 0), SUB(L, comm, behind)), comm);
}

/* A communication operator: its exposed forward and backward seconds on a stream, and n
 * launches: 1, or a sweep's test of its group's size (a group of one rank issues nothing, as
 * a scenario known to have one lowers nothing). */
static void comm_n(Lower *L, int stream, const char *name, const char *what, GId f, GId b, GId n) {
  Acc *a = L->acc;
  a->launches = ADD(L, a->launches, n);
  a->comm_f[stream] = ADD(L, a->comm_f[stream], f);
  a->comm_b[stream] = ADD(L, a->comm_b[stream], b);
  add_op(L, name, what, 't', f, b);
}

static void comm(Lower *L, int stream, const char *name, const char *what, GId f, GId b) {
  comm_n(L, stream, name, what, f, b, K(L, 1));
}

/* 1 where a group of size `size` has more than one rank. */
static GId many(Lower *L, GId size) { return g_bin(L->g, GN_GT, size, K(L, 1)); }

/* Bytes per element a GEMM of the current block keeps of its input: in a quantized format,
 * its cast (fp8 1 byte, mxfp8 1 + 1/32, nvfp4 1/2 + 1/16: the block scales included). */
static GId gemm_in_bytes(Lower *L) {
  return rt_dtype_quantized(L->dt_gemm) ? K(L, rt_dtype_bytes(L->dt_gemm)) : L->bytes_act;
}

/* Elements of work outside (or inside) the tensor-parallel region on this rank. */
static GId local_elems(Lower *L, GId elems) {
  return L->sharded ? DIV(L, elems, L->tp) : PICK(L, L->sp, DIV(L, elems, L->tp), elems);
}

/* Adds n parameters to the block, and to its trainable ones unless frozen; trainable shares
 * params's nodes while the two agree (a model without frozen weights builds no node more). */
static void params_add(Lower *L, GId n, bool frozen) {
  Acc *A = L->acc;
  bool same = A->trainable == A->params;
  A->params = ADD(L, A->params, n);
  if (!frozen) A->trainable = same ? A->params : ADD(L, A->trainable, n);
}

/* --- operators, one function per kind ------------------------------------------------ */

/* Transformer Engine's userbuffers overlap runs a linear's GEMM in pieces (initialize_ub's
 * defaults, comm_gemm_overlap.cpp; recalled): a ring exchange (a column linear's forward, a row
 * linear's data gradient) as tp GEMMs of t/tp tokens, one per chunk received; a pipelined
 * reduce-scatter (a row linear's forward) as tp_overlap_splits GEMMs of n/splits outputs.  The
 * pieces of one GEMM are issued from one call, so they add no host launch.  c: the whole
 * linear's call; *cf, *cb: its forward and backward seconds, replaced where the plan overlaps. */
static void tp_overlap_split(Lower *L, const char *name, bool col, GId t, GId k, GId n, bool bias, GId c, GId *cf,
                             GId *cb) {
  GId on = AND(L, AND(L, L->overlap_tp, L->sp), g_bin(L->g, GN_GT, L->tp, K(L, 1)));
  GId dt = K(L, L->dt_gemm), tc = DIV(L, t, L->tp);
  if (col) { /* all-gather ring: X's chunks in turn through X W */
    GId piece = lower_call(L, RTK_LINEAR, name, 5, dt, tc, k, n, K(L, bias));
    *cf = PICK(L, on, MUL(L, L->tp, piece), c);
    return;
  }
  GId s = K(L, L->st.tp_overlap_splits);
  GId piece = lower_call(L, RTK_LINEAR, name, 5, dt, t, k, DIV(L, n, s), K(L, bias));
  *cf = PICK(L, on, MUL(L, s, piece), c);
  /* the data gradient dX = dY W^T, over the gathered dY's chunks in turn */
  GId whole = lower_call(L, RTK_LINEAR, name, 5, dt, t, n, k, K(L, 0));
  GId dpiece = lower_call(L, RTK_LINEAR, name, 5, dt, tc, n, k, K(L, 0));
  *cb = PICK(L, on, ADD(L, SUB(L, *cb, whole), MUL(L, L->tp, dpiece)), *cb);
}

/* a->in_saved: the bytes of the output that the operator before it keeps (flash attention's
 * O), or -1.  A row-parallel (or unsplit) linear right after it takes O as its input: in 16- and
 * 32-bit training it keeps that same tensor, not a copy, and keeps it under selective
 * recompute too (where the attention would not); with fp8 it keeps its fp8 cast, as for any
 * input. */
/* An unsplit linear (split = none) outside the tensor-parallel region holds its whole weight
 * on every tp rank and runs on this rank's tokens: all of them, or t / tp under sequence
 * parallelism (Megatron-Core MLA's linear_q_down_proj and linear_kv_down_proj, TE Linear with
 * parallel_mode = duplicated).
 * frozen (the argument, else model.frozen): no weight-gradient GEMM (backward is the data
 * gradient alone, dY W^T, a linear(t, out, in)), no gradient, no optimizer state, and no saved
 * input unless an adapter needs it.  lora_rank r (the argument; in a layer block, else
 * model.lora_rank): LoRA adapters (Hu et al. 2021, arXiv 2106.09685) x A B beside the weight,
 * A in x r and B r x out, each split as the base's input and output are; two small GEMMs
 * forward, their data and weight gradients backward, trained.  A row linear's x A partial sums
 * would need a t x r all-reduce: r / out of the base's own reduction, not costed. */
static void op_linear(Lower *L, const char *name, Args *a) {
  GId in_saved = a->in_saved;
  GId t = arg_num(L, a, "tokens", 0), in = arg_num(L, a, "in", 0), out = arg_num(L, a, "out", 0);
  const char *split = arg_word(L, a, "split", "none");
  bool bias = arg_bool(L, a, "bias", false);
  bool frozen = arg_bool(L, a, "frozen", L->frozen);
  GId r = arg_at(a, "lora_rank")     ? arg_num(L, a, "lora_rank", 0)
          : lower_is_layer(L->which) ? lower_field(L, L->model, "model", "lora_rank", 0)
                                     : K(L, 0);
  bool col = !strcmp(split, "column"), row = !strcmp(split, "row");
  GId k = row ? DIV(L, in, L->tp) : in, n = col ? DIV(L, out, L->tp) : out;
  /* unsplit (every tp rank holds it): the tokens it runs, and those its model FLOPs count on
   * this rank (once over tp) */
  bool dup = !(col || row || L->sharded);
  GId tl = dup ? PICK(L, L->sp, DIV(L, t, L->tp), t) : t, tf = dup ? DIV(L, t, L->tp) : t;
  GId c = lower_call(L, RTK_LINEAR, name, 5, K(L, L->dt_gemm), tl, k, n, K(L, bias));
  GId cbw = frozen ? lower_call(L, RTK_LINEAR, name, 5, K(L, L->dt_gemm), tl, n, k, K(L, 0)) : c + 1;
  double tp1;
  bool single = g_is_const(L->g, L->tp, &tp1) && tp1 == 1;
  /* Overlapped TP exchanges that run as bulk or pipelined transfers (Transformer Engine: a row
   * linear's forward reduce-scatter, a column linear's backward gather and reduce-scatter)
   * take tp_overlap_sms of the SMs from the GEMM they overlap; ring exchanges take none. */
  GId cf = c, cb = cbw;
  if ((col || row) && !single && L->st.tp_overlap_splits > 0 && !kf(L, L->overlap_tp))
    tp_overlap_split(L, name, col, t, k, n, bias, c, &cf, &cb);
  GId dsplit = SUB(L, cb, cbw); /* what the pieces add to the data gradient, not to the weight's */
  double sms = L->gpu->sms, steal = L->st.tp_overlap_sms;
  if ((col || row) && !single && steal > 0 && !kf(L, L->overlap_tp)) { /* steal < sms: stack_rules */
    GId slow = K(L, sms / (sms - steal)), on = AND(L, L->overlap_tp, g_bin(L->g, GN_GT, L->tp, K(L, 1)));
    if (row) cf = PICK(L, on, MUL(L, cf, slow), cf); /* one rank exchanges nothing (a sweep's tp = 1) */
    if (col) cb = PICK(L, on, MUL(L, cb, slow), cb);
  }
  Acc *A = L->acc;
  bool lora = !kt(L, EQ(L, r, 0));
  if (lora) { /* the adapters: x A (t, k, r), then (x A) B (t, r, n) */
    GId ca = lower_call(L, RTK_LINEAR, name, 5, K(L, L->dt_gemm), tl, k, r, K(L, 0));
    GId cb2 = lower_call(L, RTK_LINEAR, name, 5, K(L, L->dt_gemm), tl, r, n, K(L, 0));
    GId on = g_bin(L->g, GN_GT, r, K(L, 0)), z = K(L, 0);
    GId af = PICK(L, on, ADD(L, ca, cb2), z), ab = PICK(L, on, ADD(L, ca + 1, cb2 + 1), z);
    cf = ADD(L, cf, af);
    cb = ADD(L, cb, ab);
    A->wg = ADD(L, A->wg, MUL(L, K(L, 0.5), ab));
    GId lp = ADD(L, MUL(L, k, r), MUL(L, r, n));
    A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), tf, lp));
    params_add(L, lp, false);
    whole(L, MUL(L, r, ADD(L, in, out)), -1);
    A->tensors = ADD(L, A->tensors, PICK(L, on, K(L, 2), z));
    A->act = ADD(L, A->act, MUL3(L, tl, r, L->bytes_act)); /* x A, for B's weight gradient */
    A->launches = ADD(L, A->launches, K(L, 2));
  }
  compute_fb(L, name, cf, cb);
  if (!frozen) A->wg = ADD(L, A->wg, MUL(L, K(L, 0.5), SUB(L, cb, dsplit))); /* the weight-gradient GEMM: half the FLOPs */
  A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), tf, MUL(L, k, n)));
  params_add(L, ADD(L, MUL(L, k, n), bias ? (row ? out : n) : K(L, 0)), frozen);
  A->tensors = ADD(L, A->tensors, K(L, bias ? 2 : 1));
  whole(L, ADD(L, MUL(L, in, out), bias ? out : K(L, 0)), -1);
  /* saved input: a column linear's input is replicated over tp (sharded with SP) */
  GId in_el = col   ? PICK(L, L->sp, DIV(L, MUL(L, t, in), L->tp), MUL(L, t, in))
              : row ? MUL(L, t, k)
                    : local_elems(L, MUL(L, t, in));
  if (!frozen || lora) { /* else the data gradient needs the weight alone */
    if (in_saved < 0 || col || rt_dtype_quantized(L->dt_gemm)) /* a column linear's input is not O */
      A->act = ADD(L, A->act, MUL(L, in_el, gemm_in_bytes(L)));
    else
      A->act_sel = SUB(L, A->act_sel, in_saved);
  }
  /* a fused parallel residual: the branches' outputs are summed unreduced, and the layer's
   * last row linear reduces the sum (forward, and its gradient's gather under SP) */
  bool deferred = row && L->row_skip > 0;
  if (deferred) L->row_skip--;
  if ((col || row) && !single && !deferred) {
    GId elems = MUL(L, t, col ? in : out), bytes = MUL(L, elems, L->bytes_act);
    GId f, b;
    GId sp = L->sp;
    if (col) {
      f = PICK(L, sp, lower_coll(L, RTK_ALLGATHER, bytes, G_TP, name), K(L, 0));
      b = PICK(L, sp, lower_coll(L, RTK_REDUCESCATTER, bytes, G_TP, name),
               lower_coll(L, RTK_ALLREDUCE, bytes, G_TP, name));
    } else {
      f = PICK(L, sp, lower_coll(L, RTK_REDUCESCATTER, bytes, G_TP, name),
               lower_coll(L, RTK_ALLREDUCE, bytes, G_TP, name));
      b = PICK(L, sp, lower_coll(L, RTK_ALLGATHER, bytes, G_TP, name), K(L, 0));
    }
    /* overlap_tp (userbuffers) hides a collective behind its own GEMM; without it, a stack
     * with asynchronous backward collectives hides the dgrad's behind the wgrad GEMM (half) */
    f = exposed(L, f, cf, L->overlap_tp);
    GId wgrad = frozen ? K(L, 0) : MUL(L, K(L, 0.5), c + 1);
    b = PICK(L, L->overlap_tp, exposed(L, b, cb, K(L, 1)), exposed(L, b, wgrad, K(L, L->st.tp_bwd_overlap)));
    const char *what = !kt(L, sp) ? "tp allreduce" : col ? "tp allgather" : "tp reducescatter";
    comm_n(L, CM_TP, name, kf(L, sp) || kt(L, sp) ? what : "tp collective", f, b, many(L, L->tp));
  }
  if (col) L->sharded = true;
  if (row) L->sharded = false;
}

/* Context parallelism as Transformer Engine's AttnFuncWithCPAndKVP2P runs it (cp_comm_type
 * p2p, Megatron's default; recalled): a rank holds two of the sequence's 2 cp chunks (i and
 * 2 cp - 1 - i, the causal load balance) and runs cp steps, a flash call each: its own K, V,
 * causal over its s/cp tokens, then cp - 1 received ones of s/cp x s/(2 cp) unmasked pairs.
 * The steps share the rank's 1/cp of the pairs, costed at the rate of the call over the whole
 * sequence (the caller's).  Beyond them each step's output is rescaled into O by its
 * log-sum-exp, one fused pass (flash_attn_fwd_out_correction), and backward sums each step's
 * dQ into dQ and dK, dV into dK, dV: added to *f and *bw.  a: batch, tokens s/cp, heads, kv
 * heads, head dim, value head dim (this rank's). */
static void cp_ring_passes(Lower *L, const char *name, const GId *a, GId *f, GId *bw) {
  GId b = a[0], sl = a[1], h = a[2], kvr = a[3], dh = a[4], dv = a[5];
  GId on = many(L, L->cp), edt = K(L, L->dt_other);
  GId o = lower_call(L, RTK_ADD, name, 2, edt, MUL3(L, b, sl, MUL(L, h, dv)));
  GId q = lower_call(L, RTK_ADD, name, 2, edt, MUL3(L, b, sl, MUL(L, h, dh)));
  GId kv = lower_call(L, RTK_ADD, name, 2, edt, MUL3(L, b, sl, MUL(L, kvr, ADD(L, dh, dv))));
  *f = ADD(L, *f, MUL3(L, on, L->cp, o));
  *bw = ADD(L, *bw, MUL3(L, on, L->cp, ADD(L, q, kv)));
  /* the op counts one launch; the steps and the rescales are 2 cp, the backward's steps and
   * sums 3 cp */
  L->acc->launches = ADD(L, L->acc->launches, MUL(L, on, SUB(L, MUL(L, K(L, 2), L->cp), K(L, 1))));
  L->acc->blaunches = ADD(L, L->acc->blaunches, MUL(L, on, L->cp));
}

/* Attention.  v_head_dim: the value head dim, if not head_dim (MLA: head_dim is the query/key
 * dim).  window w > 0: each query attends its w latest keys (sliding window); sinks: a learned
 * logit per head in each softmax (GPT-OSS), h parameters per layer and a few bytes, no FLOPs.
 * document D (the argument, else model.document; 0: none): packed sequences of documents of D
 * tokens on average, each attending within itself, as flash attention's variable-length (THD)
 * kernels run them: s / D sequences of D tokens.  Model FLOPs count the score pairs attended,
 * s^2 per sequence (causal too, as Megatron's formula does), 2 s w - w^2 with a window, D^2 per
 * document.  The unfused path computes the whole s x s score matrix and masks it: a window or
 * documents save it no time.  It expands K and V to the query heads (repeat_interleave) and
 * keeps the expanded copies for its products' backward. */
static void op_attention(Lower *L, const char *name, Args *a) {
  Graph *g = L->g;
  GId b = arg_num(L, a, "batch", 0), heads = arg_num(L, a, "heads", 0), s = arg_num(L, a, "seq", 0);
  GId dh = arg_num(L, a, "head_dim", 0);
  GId kv = arg_at(a, "kv_heads") ? arg_num(L, a, "kv_heads", 0) : heads;
  GId dv = arg_at(a, "v_head_dim") ? arg_num(L, a, "v_head_dim", 0) : dh;
  GId w = arg_num(L, a, "window", 0);
  AstNode *dn = arg_at(a, "document");
  GId doc = dn ? arg_num(L, a, "document", 0) : lower_field(L, L->model, "model", "document", 0);
  bool causal = arg_bool(L, a, "causal", true), drop = arg_bool(L, a, "dropout", false);
  bool sinks = arg_bool(L, a, "sinks", false);
  const char *impl = arg_word(L, a, "impl", "flash");
  bool flash = !strcmp(impl, "flash");
  double sv = cv(L, s), dvv = cv(L, doc);
  if (dvv > sv) {
    lower_err_blk(L, dn ? dn : arg_at(a, "seq"),
                  "attention `%s`: document = %g tokens is longer than the sequence, seq = %g", name, dvv, sv);
    return;
  }
  GId packed = g_bin(g, GN_GT, doc, K(L, 0)), windowed = g_bin(g, GN_GT, w, K(L, 0));
  GId lq = PICK(L, packed, doc, s);                       /* a sequence as the kernel sees it */
  GId bq = PICK(L, packed, DIV(L, MUL(L, b, s), doc), b); /* and how many */
  GId h = DIV(L, heads, L->tp), kvr = MAX(L, K(L, 1), DIV(L, kv, L->tp));
  GId dt = K(L, L->dt_attn);
  GId c = flash ? lower_call(L, RTK_FLASH, name, 10, dt, bq, lq, h, kvr, dh, K(L, causal), dv, w, K(L, sinks))
                : lower_call(L, RTK_ATTENTION, name, 8, dt, b, s, h, dh, K(L, causal), kvr, dv);
  /* context parallelism: each rank computes 1/cp of the (load-balanced) score matrix */
  GId f = DIV(L, c, L->cp), bw = DIV(L, c + 1, L->cp);
  double cpv, wv;
  bool one_rank = g_is_const(g, L->cp, &cpv) && cpv == 1;
  bool ring = flash && !one_rank && g_is_const(g, w, &wv) && wv == 0 && dvv == 0;
  if (ring) cp_ring_passes(L, name, (GId[]){b, DIV(L, s, L->cp), h, kvr, dh, dv}, &f, &bw);
  if (drop && !flash) { /* dropout over the probabilities: one element-wise pass over b*h*s*s */
    GId d = lower_call(L, RTK_ADD, name, 2, K(L, L->dt_other), MUL3(L, b, h, MUL(L, s, s)));
    f = ADD(L, f, DIV(L, d, L->cp));
    bw = ADD(L, bw, DIV(L, d + 1, L->cp));
  }
  Acc *A = L->acc;
  A->launches = ADD(L, A->launches, K(L, 1));
  A->fc = ADD(L, A->fc, f);
  A->bc = ADD(L, A->bc, bw);
  A->sel = ADD(L, A->sel, f);
  add_op(L, name, NULL, 'c', f, bw);
  GId sl = DIV(L, s, L->cp); /* this rank's tokens of each sequence */
  GId wl = g_min(g, w, lq);
  GId pairs =
      MUL(L, DIV(L, s, lq), PICK(L, windowed, SUB(L, MUL3(L, K(L, 2), lq, wl), MUL(L, wl, wl)), MUL(L, lq, lq)));
  GId dm = dv == dh ? dh : MUL(L, K(L, 0.5), ADD(L, dh, dv)); /* QK^T over dh, PV over dv */
  GId af = DIV(L, MUL(L, MUL3(L, K(L, 4), b, pairs), MUL(L, h, dm)), L->cp);
  A->flops = ADD(L, A->flops, af);
  A->sel_flops = ADD(L, A->sel_flops, af);
  GId kvk = flash ? kvr : h; /* the K and V heads kept: the unfused path keeps the expanded ones */
  GId qkv = dv == dh ? MUL3(L, b, sl, MUL(L, ADD(L, h, MUL(L, K(L, 2), kvk)), dh))
                     : MUL3(L, b, sl, ADD(L, MUL(L, h, dh), MUL(L, kvk, ADD(L, dh, dv))));
  /* in fp8 (TE's fp8 attention) Q, K, V and O are kept in fp8, a byte an element */
  GId el = L->dt_attn == RT_FP8 ? K(L, 1) : L->bytes_act;
  GId saved = MUL(L, qkv, el), extra;
  if (flash) { /* O and the fp32 log-sum-exp */
    GId o = MUL(L, MUL3(L, b, sl, MUL(L, h, dv)), el);
    extra = ADD(L, o, MUL(L, K(L, 4), MUL3(L, b, h, sl)));
    L->out_saved = o;
  } else { /* softmax output; with dropout its mask (1 byte) and output */
    GId scores = MUL3(L, b, h, MUL(L, sl, s));
    GId per = drop ? ADD(L, MUL(L, K(L, 2), L->bytes_act), K(L, 1)) : L->bytes_act;
    extra = MUL(L, scores, per);
  }
  A->act = ADD(L, A->act, ADD(L, saved, extra));
  A->act_sel = ADD(L, A->act_sel, extra);
  if (sinks) { /* one fp32-trained logit per local head */
    params_add(L, h, L->frozen);
    whole(L, heads, -1);
    A->tensors = ADD(L, A->tensors, K(L, 1));
  }
  double cp;
  if (!(g_is_const(L->g, L->cp, &cp) && cp == 1)) { /* ring exchange of K and V */
    GId kvbytes = MUL(L, MUL3(L, b, sl, MUL(L, kvr, ADD(L, dh, dv))), L->bytes_act); /* K and V */
    GId one = lower_coll(L, RTK_P2P, kvbytes, G_CP, name);
    GId hops = SUB(L, L->cp, K(L, 1));
    if (ring) { /* a hop under each step (1/cp of the calls) but the last; backward's hops carry
                 * K, V and the partial dK, dV, and the last dK, dV hop home is exposed */
      GId two = lower_coll(L, RTK_P2P, MUL(L, K(L, 2), kvbytes), G_CP, name), cc = MUL(L, L->cp, L->cp);
      GId cf = MUL(L, hops, exposed(L, one, DIV(L, c, cc), true));
      GId cb = ADD(L, MUL(L, hops, exposed(L, two, DIV(L, c + 1, cc), true)), one);
      GId on = many(L, L->cp);
      comm_n(L, CM_CP, name, "cp kv exchange", MUL(L, on, cf), MUL(L, on, cb), on);
    } else {
      GId cf = MUL(L, one, hops), cb = MUL(L, K(L, 2), cf);
      comm_n(L, CM_CP, name, "cp kv exchange", exposed(L, cf, f, true), exposed(L, cb, bw, true), many(L, L->cp));
    }
  }
}

/* The local experts' GEMMs, el of them, each per tokens x k x n: with moe_grouped_gemm
 * (Megatron-Core --moe-grouped-gemm: TE GroupedLinear / CUTLASS grouped GEMM) one launch whose
 * tiles of all the experts share the waves over the SMs, costed as a batched GEMM; without it
 * (SequentialMLP) el GEMMs one after the other, each with its own waves and launch.  f and b:
 * forward and backward seconds. */
static void expert_gemm(Lower *L, const char *name, GId el, GId per, GId k, GId n, GId *f, GId *b) {
  if (L->st.grouped_gemm) {
    GId c = lower_call(L, RTK_BMM, name, 5, K(L, L->dt_gemm), el, per, k, n);
    *f = c, *b = c + 1;
  } else {
    GId c = lower_call(L, RTK_LINEAR, name, 5, K(L, L->dt_gemm), per, k, n, K(L, 0));
    *f = MUL(L, el, c), *b = MUL(L, el, c + 1);
  }
  if (L->st.grouped_rate > 0) { /* the stack's grouped kernels' own rate (sustained_grouped_gemm) */
    *f = DIV(L, *f, K(L, L->st.grouped_rate)), *b = DIV(L, *b, K(L, L->st.grouped_rate));
    L->out->meta.grouped_rate = L->st.grouped_rate;
  }
}

/* The busiest rank's token-expert pairs over the balanced mean (it sets the pace of the
 * expert layer): a capacity-bounded router pads every expert's input to capacity_factor times
 * the balanced load and drops what exceeds it (Megatron-Core's --moe-expert-capacity-factor
 * with --moe-pad-expert-input-to-capacity; DeepSpeed's fixed capacity); a dropless one runs
 * model.moe_imbalance times it (1: balanced).  *capped: a capacity factor is set. */
static GId expert_load(Lower *L, bool *capped) {
  GId cf = lower_field(L, L->model, "model", "capacity_factor", NAN);
  double c;
  *capped = !(g_is_const(L->g, cf, &c) && isnan(c));
  return *capped ? cf : lower_field(L, L->model, "model", "moe_imbalance", 1);
}

/* The dispatch and combine of the experts' tokens, forward and backward, on the ep stream.
 * tr: the tokens entering on this rank; recv: the pairs the busiest rank receives, k per token. */
static void expert_dispatch(Lower *L, const char *name, GId tr, GId recv, GId hid, GId e, GId k, double pb) {
  /* bf16 under fp8 recipes too: the hidden states are dispatched before Transformer Engine
   * quantizes them in the experts' GEMMs (token_dispatcher.py, fused_a2a.py; recalled) */
  GId ba = L->bytes_act;
  double ep, etp;
  bool ep1 = g_is_const(L->g, L->ep, &ep) && ep == 1, etp1 = g_is_const(L->g, L->etp, &etp) && etp == 1;
  if (ep1 && etp1) return;
  if (lower_dispatcher_is(L, "allgather")) {
    /* MoEAllGatherTokenDispatcher: every rank of the etp x ep group gathers the group's
     * tokens, routing map (1 byte) and probabilities, then reduce-scatters the experts'
     * output; the backward gathers the output's gradient and reduce-scatters the input's
     * and the probabilities' */
    GId all = MUL3(L, L->etp, L->ep, tr), hb = MUL3(L, all, hid, ba), pbytes = MUL3(L, all, e, K(L, pb));
    GId ag = lower_coll(L, RTK_ALLGATHER, hb, G_EMP, name), rs = lower_coll(L, RTK_REDUCESCATTER, hb, G_EMP, name);
    GId map = lower_coll(L, RTK_ALLGATHER, ADD(L, MUL3(L, all, e, K(L, 1)), pbytes), G_EMP, name);
    GId prs = lower_coll(L, RTK_REDUCESCATTER, pbytes, G_EMP, name);
    comm_n(L, CM_EP, name, "ep allgather", ADD(L, ADD(L, ag, map), rs), ADD(L, ADD(L, ag, rs), prs),
           many(L, MUL(L, L->ep, L->etp)));
    return;
  }
  /* MoEAlltoAllTokenDispatcher: a gather of the per-expert token counts over etp x ep (8
   * bytes each), the all-to-all of the pairs over ep, a gather over etp; after the experts a
   * reduce-scatter over etp and the all-to-all back.  The busiest rank's receive sets the
   * all-to-all's pace.  MoEFlexTokenDispatcher (DeepEP) exchanges the same counts, then sends
   * each token once per node and rank holding its experts, the combine the same back. */
  GId f = lower_coll(L, RTK_ALLGATHER, MUL3(L, MUL(L, L->etp, L->ep), e, K(L, 8)), G_EMP, name), b = K(L, 0);
  GId df = f, db = b; /* the dispatch's share, forward and backward (the rest is the combine's) */
  bool flex = lower_dispatcher_is(L, "flex");
  if (!ep1) {
    GId one;
    if (flex) {
      GId groups = lower_field(L, L->model, "model", "router_groups", 1);
      GId gtop = lower_field(L, L->model, "model", "router_group_top_k", 1);
      lower_group_tiles(L, G_EP, L->ep, L->stride[G_EP], RTK_DISPATCH, name);
      one = lower_call(L, RTK_DISPATCH, name, 7, MUL3(L, DIV(L, recv, k), hid, ba), L->ep, L->stride[G_EP], e, k,
                       groups, gtop);
    } else {
      one = lower_coll(L, RTK_ALLTOALL, MUL3(L, recv, hid, ba), G_EP, name);
      /* the pairs' router probabilities travel with them, applied in the experts
       * (moe/token_dispatcher.py token_dispatch: global_probs = all_to_all(...); recalled);
       * the backward returns their gradient */
      GId probs = lower_coll(L, RTK_ALLTOALL, MUL(L, recv, K(L, pb)), G_EP, name);
      f = ADD(L, f, probs), b = ADD(L, b, probs), df = ADD(L, df, probs), db = ADD(L, db, probs);
    }
    GId two = MUL(L, K(L, 2), one);
    f = ADD(L, f, two), b = ADD(L, b, two), df = ADD(L, df, one), db = ADD(L, db, one);
  }
  if (!etp1) { /* the pairs and, gathered with them, their probabilities (recalled) */
    GId gb = MUL3(L, MUL(L, recv, L->etp), hid, ba);
    GId ag = lower_coll(L, RTK_ALLGATHER, gb, G_ETP, name), rs = lower_coll(L, RTK_REDUCESCATTER, gb, G_ETP, name);
    f = ADD(L, f, ADD(L, ag, rs)), b = ADD(L, b, ADD(L, ag, rs));
    GId pg = MUL3(L, recv, L->etp, K(L, pb));
    GId pag = lower_coll(L, RTK_ALLGATHER, pg, G_ETP, name), prs = lower_coll(L, RTK_REDUCESCATTER, pg, G_ETP, name);
    f = ADD(L, f, pag), b = ADD(L, b, prs);
    df = ADD(L, df, ADD(L, ag, pag)), db = ADD(L, db, ADD(L, rs, prs)); /* a gather's gradient is a scatter */
  }
  L->acc->edf = ADD(L, L->acc->edf, df), L->acc->edb = ADD(L, L->acc->edb, db);
  comm_n(L, CM_EP, name, flex ? "ep dispatch" : "ep all-to-all", f, b, many(L, MUL(L, L->ep, L->etp)));
}

/* gpt-oss's clamped SwiGLU, glu = x * sigmoid(1.702 x) * (clamp(y, -7, 7) + 1) with x clamped
 * at 7, unfused: Megatron-Core's glu() with activation_func_clamp_value, glu_linear_offset and
 * quick_gelu in eager PyTorch.  Over the n outputs, the forward's two clamps, quick_gelu's three
 * kernels, the offset and the product read and write 16 n elements, the fused SwiGLU 3 n: 13 n
 * more; autograd's backward 25 n more.  Each costed as the element-wise add's three passes; it
 * keeps 3 n more for backward. */
static void clamped_extra(Lower *L, const char *name, GId dt, GId n, GId *f, GId *b) {
  GId cf = lower_call(L, RTK_ADD, name, 2, dt, MUL(L, K(L, 13.0 / 3), n));
  GId cb = lower_call(L, RTK_ADD, name, 2, dt, MUL(L, K(L, 25.0 / 3), n));
  *f = ADD(L, *f, cf), *b = ADD(L, *b, cb);
  L->acc->launches = ADD(L, L->acc->launches, K(L, 6));
  L->acc->act = ADD(L, L->acc->act, MUL3(L, K(L, 3), n, L->bytes_act));
}

/* The stack fuses activations (Megatron-Core's bias_activation_fusion).  The experts' clamped
 * SwiGLU then runs as weighted_bias_quick_geglu_impl (megatron/core/fusions/fused_bias_geglu.py,
 * clamp and offset inside, torch.compile'd by jit_fuser; recalled), one kernel each way over
 * the SwiGLU kernel's bytes, keeping its input.  Megatron-Bridge's GPTOSSProvider sets
 * bias_activation_fusion (recalled).  The dense MLP's fused path takes gelu and swiglu only. */
static bool fuses_activation(Lower *L) { return (L->st.fused & RT_FUSED_ACTIVATION) != 0; }

/* The experts' biases (a model with biases on its linears: Megatron-Core's add_bias_linear).
 * fc1's is added in TE's grouped GEMM epilogue and its gradient in the weight-gradient GEMM's
 * (skip_bias_add false; recalled).  fc2 returns its bias (skip_bias_add), which TEGroupedMLP.
 * _apply_bias adds weighted by the router's probabilities p, per local expert in eager PyTorch:
 * t + b * p, then torch.cat, then a cast back when p is wider (moe/experts.py; recalled).  Over
 * n = pe * h outputs of a bytes, p of w bytes: forward b * p writes w, the add reads a + w and
 * writes w, the cat reads and writes w, the cast reads w and writes a; backward, the casts of
 * the gradient (a + w, twice), and g * p and g * b, each written (2w) then summed (w), for the
 * gradients of b and p.  Costed as the add's three passes of a bytes; 2 el + 1 launches. */
static void expert_bias(Lower *L, const char *name, GId el, GId n) {
  double a = cv(L, L->bytes_act), w = L->dt_router_bytes, cast = w != a ? a + w : 0;
  double fb = 5 * w + a + cast, bb = 6 * w + 2 * cast;
  GId cf = lower_call(L, RTK_ADD, name, 2, K(L, L->dt_other), MUL(L, K(L, fb / (3 * a)), n));
  GId cb = lower_call(L, RTK_ADD, name, 2, K(L, L->dt_other), MUL(L, K(L, bb / (3 * a)), n));
  compute_fb(L, name, cf, cb);
  L->acc->launches = ADD(L, L->acc->launches, MUL(L, K(L, 2), el));
}

static bool is_gated(const char *k) { return !strcmp(k, "swiglu") || !strcmp(k, "geglu") || !strcmp(k, "clamped_swiglu"); }

/* The routed experts: each rank routes its t/tp tokens (sequence parallelism); each ep rank
 * holds experts/ep experts, each split over etp ranks (fc1 by columns, fc2 by rows), which
 * compute the pairs gathered over etp.  Their parameters are expert parameters (eparams). */
static void op_experts(Lower *L, const char *name, Args *a) {
  GId t = arg_num(L, a, "tokens", 0), hid = arg_num(L, a, "hidden", 0), ffn = arg_num(L, a, "ffn", 0);
  GId e = arg_num(L, a, "experts", 1), k = arg_num(L, a, "top_k", 1);
  const char *act = arg_word(L, a, "activation", "swiglu");
  bool gated = is_gated(act), capped, bias = arg_bool(L, a, "bias", false);
  GId load = expert_load(L, &capped);
  GId tr = DIV(L, t, L->tp), el = DIV(L, e, L->ep), pairs = MUL(L, tr, k);
  GId recv = MUL(L, pairs, load), pe = MUL(L, recv, L->etp), per = DIV(L, pe, el);
  GId up = gated ? MUL(L, K(L, 2), ffn) : ffn, upl = DIV(L, up, L->etp), fl = DIV(L, ffn, L->etp);
  /* Token permutation (Megatron-Core's moe_permute/moe_unpermute, fused in Transformer Engine):
   * the rank's tokens copied into expert order before the experts, and back (summed with the
   * router's weights) after, rows of h contiguous elements; the backward moves the same bytes.
   * A copy of pairs*h elements. */
  GId perm = copy_call(L, name, K(L, L->dt_other), 1, pairs, hid);
  Acc *A = L->acc;
  /* A dropless router's tokens per expert reach the host by a device-to-host sync before the
   * dispatch (Megatron-Core moe/token_dispatcher.py _maybe_dtoh_and_synchronize; the experts'
   * m_splits, moe/experts.py): the rest of the layer's forward is launched behind an idle GPU
   * (lower_block closes the span).  Padded to a capacity, the sizes are static: no sync. */
  if (!capped && L->sync_n0 < 0) L->sync_f0 = ADD(L, A->fc, lower_comm_sum(L, A->comm_f)), L->sync_n0 = A->launches;
  compute(L, arena_printf(&L->out->names, "%s permute", name), perm);
  GId c1, c1b, c3, c3b;
  expert_gemm(L, name, el, per, hid, upl, &c1, &c1b);
  GId c2 = lower_call(L, gated ? RTK_SWIGLU : RTK_GELU, name, 2, K(L, L->dt_other), MUL(L, pe, fl));
  expert_gemm(L, name, el, per, fl, hid, &c3, &c3b);
  GId f = ADD(L, ADD(L, c1, c2), c3), b = ADD(L, ADD(L, c1b, c2 + 1), c3b);
  if (!strcmp(act, "clamped_swiglu") && !fuses_activation(L)) clamped_extra(L, name, K(L, L->dt_other), MUL(L, pe, fl), &f, &b);
  /* The router's probabilities weight the activation's output in the experts: inside the
   * weighted fused kernels (weighted_bias_swiglu_impl, weighted_bias_quick_geglu_impl) where
   * the stack fuses gated activations, else intermediate * permuted_probs in eager PyTorch, as
   * for squared ReLU (use_fused_weighted_squared_relu off by default; moe/experts.py, recalled).
   * Eager: a copy's bytes over the n outputs forward; backward g * p (a copy) and the
   * probabilities' g * y summed per row (twice a copy's bytes); it keeps y. */
  if (!(gated && fuses_activation(L))) {
    GId n = MUL(L, pe, fl);
    f = ADD(L, f, copy_call(L, name, K(L, L->dt_other), 1, n, K(L, 1)));
    b = ADD(L, b, copy_call(L, name, K(L, L->dt_other), 3, n, K(L, 1)));
    A->launches = ADD(L, A->launches, L->st.grouped_gemm ? K(L, 1) : el); /* SequentialMLP: per expert */
    A->act = ADD(L, A->act, MUL(L, n, L->bytes_act));
  }
  /* one GEMM launch per local expert for fc1 and fc2: TE's GroupedLinear (general_grouped_gemm)
   * and Megatron-Core's SequentialMLP both loop over the experts; SequentialMLP also runs each
   * expert's activation on its own */
  A->launches = ADD(L, A->launches, L->st.grouped_gemm ? ADD(L, K(L, 1), MUL(L, K(L, 2), el)) : MUL(L, K(L, 3), el));
  A->fc = ADD(L, A->fc, f);
  A->bc = ADD(L, A->bc, b);
  A->xf = ADD(L, A->xf, f), A->xb = ADD(L, A->xb, b);
  A->wg = ADD(L, A->wg, MUL(L, K(L, 0.5), ADD(L, c1b, c3b)));
  add_op(L, name, NULL, 'c', f, b);
  if (bias) expert_bias(L, arena_printf(&L->out->names, "%s bias", name), el, MUL(L, pe, hid));
  compute(L, arena_printf(&L->out->names, "%s unpermute", name), perm);
  /* model FLOP: the mean rank's pairs (a capacity's padding included), not the busiest's */
  GId mean = capped ? MUL(L, pairs, load) : pairs, w = ADD(L, MUL(L, hid, up), MUL(L, ffn, hid));
  A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), mean, w));
  GId bl = bias ? ADD(L, upl, hid) : K(L, 0), bw = bias ? ADD(L, up, hid) : K(L, 0); /* fc1's, fc2's */
  GId ew = MUL(L, el, ADD(L, ADD(L, MUL(L, hid, upl), MUL(L, fl, hid)), bl));
  A->params = ADD(L, A->params, ew);
  A->eparams = ADD(L, A->eparams, ew);
  whole(L, MUL(L, e, ADD(L, w, bw)), MUL(L, k, ADD(L, w, bw))); /* w: one expert's weights */
  GId nt = MUL(L, K(L, bias ? 4 : 2), el); /* fc1 and fc2 weights (and biases) per local expert */
  A->tensors = ADD(L, A->tensors, nt);
  A->etensors = ADD(L, A->etensors, nt);
  /* the GEMMs' inputs (h, ffn/etp) and the activation's (up/etp) */
  GId saved = ADD(L, MUL(L, ADD(L, hid, fl), gemm_in_bytes(L)), MUL(L, upl, L->bytes_act));
  A->act = ADD(L, A->act, MUL(L, pe, saved));
  expert_dispatch(L, name, tr, recv, hid, e, k, L->dt_router_bytes);
}

static void op_norm(Lower *L, const char *name, Args *a) {
  GId dto = a->dto;
  Acc *A = L->acc;
  const char *k = arg_word(L, a, "kind", "layernorm");
  GId t = local_elems(L, arg_num(L, a, "tokens", 0)), h = arg_num(L, a, "hidden", 0);
  bool rms = !strcmp(k, "rmsnorm"), gated = arg_bool(L, a, "gated", false);
  /* gated (mamba_ssm's RMSNormGated, layernorm_gated.py): norm(x * silu(z)) in one Triton
   * kernel that reads x and z and writes y, its backward reads x, z, dy and writes dx, dz:
   * the fused SwiGLU's bytes, so costed by its kernel; it keeps x and z */
  if (gated)
    compute(L, name, lower_call(L, RTK_SWIGLU, name, 2, dto, MUL(L, t, h)));
  else
    compute(L, name, lower_call(L, rms ? RTK_RMSNORM : RTK_LAYERNORM, name, 3, dto, t, h));
  A->act = ADD(L, A->act, MUL3(L, t, h, gated ? MUL(L, K(L, 2), L->bytes_act) : L->bytes_act));
  A->params = ADD(L, A->params, rms ? h : MUL(L, K(L, 2), h));
  whole(L, rms ? h : MUL(L, K(L, 2), h), -1);
  A->tensors = ADD(L, A->tensors, K(L, rms ? 1 : 2)); /* weight; layernorm's bias */
}

static void op_activation(Lower *L, const char *name, Args *a) {
  GId dto = a->dto;
  Acc *A = L->acc;
  const char *k = arg_word(L, a, "kind", "gelu");
  GId el = local_elems(L, arg_num(L, a, "elements", 0));
  bool gated = is_gated(k);
  GId c = lower_call(L, gated ? RTK_SWIGLU : RTK_GELU, name, 2, dto, el), f = c, b = c + 1;
  if (!strcmp(k, "clamped_swiglu")) clamped_extra(L, name, dto, el, &f, &b);
  compute_fb(L, name, f, b);
  A->act = ADD(L, A->act, MUL3(L, el, K(L, gated ? 2 : 1), L->bytes_act));
}

static void op_add(Lower *L, const char *name, Args *a) {
  GId dto = a->dto;
  GId c = lower_call(L, RTK_ADD, name, 2, dto, local_elems(L, arg_num(L, a, "elements", 0)));
  /* a stack that fuses dropout and the residual add runs the add inside the dropout's kernel */
  if (L->st.fused_dropout_add && L->prev_kind == OPK_DROPOUT)
    compute_fb(L, name, K(L, 0), K(L, 0));
  else
    compute(L, name, c);
}

/* An element-wise pass that also writes a one-byte mask: costed as add. */
static void op_dropout(Lower *L, const char *name, Args *a) {
  GId dto = a->dto;
  Acc *A = L->acc;
  GId el = local_elems(L, arg_num(L, a, "elements", 0));
  compute(L, name, lower_call(L, RTK_ADD, name, 2, dto, el));
  A->act = ADD(L, A->act, el);
}

static void op_rope(Lower *L, const char *name, Args *a) {
  GId dto = a->dto;
  GId t = arg_num(L, a, "tokens", 0), h = DIV(L, arg_num(L, a, "heads", 0), L->tp);
  compute(L, name, lower_call(L, RTK_ROPE, name, 4, dto, t, h, arg_num(L, a, "head_dim", 0)));
}

static void op_softmax(Lower *L, const char *name, Args *a) {
  GId dto = a->dto;
  Acc *A = L->acc;
  GId rows = arg_num(L, a, "rows", 0), cols = arg_num(L, a, "cols", 0);
  if (L->sharded) rows = DIV(L, rows, L->tp);
  compute(L, name, lower_call(L, RTK_SOFTMAX, name, 4, dto, rows, cols, K(L, arg_bool(L, a, "causal", false))));
  A->act = ADD(L, A->act, MUL3(L, rows, cols, L->bytes_act));
}

static void op_bmm(Lower *L, const char *name, Args *a) {
  Acc *A = L->acc;
  GId bt = arg_num(L, a, "batch", 0), m = arg_num(L, a, "m", 0), k = arg_num(L, a, "k", 0), n = arg_num(L, a, "n", 0);
  if (L->sharded) bt = DIV(L, bt, L->tp);
  GId c = lower_call(L, RTK_BMM, name, 5, K(L, L->dt_gemm), bt, m, k, n);
  compute(L, name, c);
  A->wg = ADD(L, A->wg, MUL(L, K(L, 0.5), c + 1));
  A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), bt, MUL3(L, m, k, n)));
  A->act = ADD(L, A->act, MUL3(L, bt, ADD(L, MUL(L, m, k), MUL(L, k, n)), L->bytes_act));
}

static void op_embedding(Lower *L, const char *name, Args *a) {
  GId dto = a->dto;
  Acc *A = L->acc;
  Graph *g = L->g;
  GId t = arg_num(L, a, "tokens", 0), v = arg_num(L, a, "vocab", 0), h = arg_num(L, a, "hidden", 0);
  bool split = !strcmp(arg_word(L, a, "split", "none"), "vocab");
  GId rows = split ? DIV(L, v, L->tp) : v;
  compute(L, name, lower_call(L, RTK_EMBEDDING, name, 4, dto, t, rows, h));
  A->params = ADD(L, A->params, MUL(L, rows, h));
  whole(L, MUL(L, v, h), -1);
  if (split) A->wtied = ADD(L, A->wtied, MUL(L, v, h));
  A->tensors = ADD(L, A->tensors, K(L, 1));
  double tp;
  if (split && !(g_is_const(g, L->tp, &tp) && tp == 1)) {
    GId bytes = MUL3(L, t, h, L->bytes_act);
    GId sp = L->sp;
    GId f = PICK(L, sp, lower_coll(L, RTK_REDUCESCATTER, bytes, G_TP, name),
                 lower_coll(L, RTK_ALLREDUCE, bytes, G_TP, name));
    GId b = PICK(L, sp, lower_coll(L, RTK_ALLGATHER, bytes, G_TP, name), K(L, 0)); /* SP: gather the gradient */
    comm_n(L, CM_TP, name, kt(L, sp) ? "tp reducescatter" : kf(L, sp) ? "tp allreduce" : "tp collective", f, b,
           many(L, L->tp));
  }
}

static void op_cross_entropy(Lower *L, const char *name, Args *a) {
  GId dto = a->dto;
  Acc *A = L->acc;
  Graph *g = L->g;
  GId t = arg_num(L, a, "tokens", 0), v = arg_num(L, a, "vocab", 0);
  bool split = !strcmp(arg_word(L, a, "split", "none"), "vocab");
  GId vr = split ? DIV(L, v, L->tp) : v;
  compute(L, name, lower_call(L, RTK_CROSS_ENTROPY, name, 3, dto, t, vr));
  A->act = ADD(L, A->act, MUL3(L, t, vr, K(L, 4))); /* fp32 softmax of the logit shard */
  double tp;
  if (split && !(g_is_const(g, L->tp, &tp) && tp == 1)) { /* max, sum of exp, target logit */
    GId f = MUL(L, K(L, 3), lower_coll(L, RTK_ALLREDUCE, MUL(L, t, K(L, 4)), G_TP, name));
    comm_n(L, CM_TP, name, "tp allreduce", f, K(L, 0), many(L, L->tp));
  }
}

/* The router: the gating GEMM in moe_router_dtype (Megatron-Core's --moe-router-dtype; the
 * layer's dtype by default, never fp8), the score (softmax, or sigmoid as DeepSeek-V3 scores)
 * and the top-k selection, a pass over the scores costed as a softmax's. */
static void op_router(Lower *L, const char *name, Args *a) {
  Acc *A = L->acc;
  GId t = DIV(L, arg_num(L, a, "tokens", 0), L->tp), h = arg_num(L, a, "hidden", 0);
  GId e = arg_num(L, a, "experts", 1);
  bool sigmoid = !strcmp(arg_word(L, a, "score", "softmax"), "sigmoid");
  GId rdt = K(L, L->dt_router);
  GId c1 = lower_call(L, RTK_LINEAR, name, 5, rdt, t, h, e, K(L, 0));
  GId c2 = sigmoid ? lower_call(L, RTK_ADD, name, 2, rdt, MUL(L, t, e))
                   : lower_call(L, RTK_SOFTMAX, name, 4, rdt, t, e, K(L, 0));
  GId c3 = lower_call(L, RTK_SOFTMAX, name, 4, rdt, t, e, K(L, 0));
  GId f = ADD(L, ADD(L, c1, c2), c3), b = ADD(L, ADD(L, c1 + 1, c2 + 1), c3 + 1);
  A->launches = ADD(L, A->launches, K(L, 3));
  A->fc = ADD(L, A->fc, f);
  A->bc = ADD(L, A->bc, b);
  add_op(L, name, NULL, 'c', f, b);
  A->params = ADD(L, A->params, MUL(L, h, e));
  A->tensors = ADD(L, A->tensors, K(L, 1));
  whole(L, MUL(L, h, e), -1);
  A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), t, MUL(L, h, e)));
  /* its input (in the router's dtype) and the fp32 scores */
  A->act = ADD(L, A->act, ADD(L, MUL3(L, t, h, K(L, L->dt_router_bytes)), MUL3(L, t, e, K(L, 4))));
}

/* Mamba-2's causal depthwise conv1d over `channels` (Megatron-Core's MambaMixer: between the
 * column-parallel in_proj and the row-parallel out_proj, on the local channels / tp), width
 * taps; its weight and bias per channel. */
static void op_conv1d(Lower *L, const char *name, Args *a) {
  Acc *A = L->acc;
  GId t = arg_num(L, a, "tokens", 0), ch = arg_num(L, a, "channels", 0), w = arg_num(L, a, "width", 0);
  GId tl = L->sharded ? t : PICK(L, L->sp, DIV(L, t, L->tp), t);
  GId chl = L->sharded ? DIV(L, ch, L->tp) : ch;
  compute(L, name, lower_call(L, RTK_CONV1D, name, 4, a->dto, tl, chl, w));
  A->flops = ADD(L, A->flops, MUL3(L, K(L, 2), MUL(L, tl, chl), w));
  A->act = ADD(L, A->act, MUL3(L, tl, chl, L->bytes_act));
  params_add(L, MUL(L, chl, ADD(L, w, K(L, 1))), L->frozen);
  whole(L, MUL(L, ch, ADD(L, w, K(L, 1))), -1);
  A->tensors = ADD(L, A->tensors, K(L, 2));
}

/* Mamba-2's SSD scan (rt_ssd) of batch sequences of seq tokens, on the local heads and groups:
 * Megatron-Core's MambaMixer splits both over tp (it requires heads and groups to divide).
 * MambaMixer hands the in_proj output z x B C dt, (seq, batch, d) as Megatron lays it out,
 * to mamba_split_conv1d_scan_combined as (batch, seq, d) and takes y back the same way:
 * rearrange(...).contiguous(), a copy of each when batch > 1, and again of their gradients
 * (megatron/core/ssm/mamba_mixer.py, recalled).  The combined function keeps z x B C dt and
 * its output before the gated norm; the conv (its x B C) and the gated norm (z and that
 * output) count theirs, the scan its dt, in the dtype: x, B and C are recomputed by the conv
 * in backward.  A_log, D and dt_bias per head; the mixer launches four kernels on them before
 * the scan, A = -exp(A_log.float()) and dt_bias.float() (host launches; their GPU time, a few
 * microseconds, is not counted).  Context parallelism would pass the chunk states between
 * ranks: not modelled. */
static void op_ssd(Lower *L, const char *name, Args *a) {
  Acc *A = L->acc;
  GId b = arg_num(L, a, "batch", 0), s = arg_num(L, a, "seq", 0), heads = arg_num(L, a, "heads", 0);
  GId p = arg_num(L, a, "head_dim", 0), n = arg_num(L, a, "state", 0), groups = arg_num(L, a, "groups", 0);
  GId q = arg_num(L, a, "chunk", 0);
  double tp = cv(L, L->tp), cp = cv(L, L->cp), hv = cv(L, heads), gv = cv(L, groups);
  AstNode *at = arg_at(a, "heads");
  if (cp > 1) {
    lower_err_blk(L, at, "ssd `%s`: context parallelism (plan.cp = %g) over a Mamba-2 scan is not modelled", name, cp);
    return;
  }
  if (tp > 1 && (fmod(hv, tp) != 0 || fmod(gv, tp) != 0)) {
    lower_err_blk(L, at,
                  "ssd `%s`: heads = %g and groups = %g must be multiples of plan.tp = %g (MambaMixer splits both)",
                  name, hv, gv, tp);
    return;
  }
  if (isnan(tp) || isnan(cp) || isnan(hv) || isnan(gv)) /* a sweep's point: the same rules */
    lower_check(L, AND(L, EQ(L, L->cp, 1), AND(L, DIVIDES(L, heads, L->tp), DIVIDES(L, groups, L->tp))),
                "ssd: mamba heads or groups do not divide by tp, or cp > 1");
  GId t = MUL(L, b, s), h = DIV(L, heads, L->tp), gr = DIV(L, groups, L->tp);
  compute(L, name, lower_call(L, RTK_SSD, name, 7, a->dto, t, h, p, n, gr, q));
  /* one launch per Triton kernel, each through Triton's Python launcher (compute() counted
   * the forward's first; the backward's are the forward's and these) */
  RtSsdWork w = rt_ssd_work(1, 1, 1, 1, 1, 1, 2);
  A->launches = ADD(L, A->launches, K(L, w.kernels[0] - 1 + 4)); /* and the four casts */
  A->blaunches = ADD(L, A->blaunches, K(L, w.kernels[1] - w.kernels[0]));
  /* the layout copies: of z x B C dt (2 h p + 2 g n + h) and of y (h p) */
  GId hp = MUL(L, h, p);
  if (cv(L, b) != 1) { /* a sweep's micro-batch: 1 or more */
    GId many_b = g_bin(L->g, GN_GT, b, K(L, 1));
    GId zx = MUL(L, t, ADD(L, ADD(L, MUL(L, K(L, 2), hp), MUL3(L, K(L, 2), gr, n)), h));
    GId c1 = copy_call(L, name, a->dto, 1, zx, K(L, 1)), c2 = copy_call(L, name, a->dto, 1, t, hp);
    GId lf = PICK(L, many_b, ADD(L, c1, c2), K(L, 0)), lb = PICK(L, many_b, ADD(L, c1 + 1, c2 + 1), K(L, 0));
    A->launches = ADD(L, A->launches, PICK(L, many_b, K(L, 2), K(L, 0)));
    A->fc = ADD(L, A->fc, lf);
    A->bc = ADD(L, A->bc, lb);
    add_op(L, name, "layout", 'c', lf, lb);
  }
  /* rt_ssd_flops: 2TQNG + 2TQPH + 4TNPH + 2(T/Q)NPH */
  GId pn = MUL(L, p, n);
  GId fl = ADD(L, ADD(L, MUL3(L, K(L, 2), MUL(L, t, q), MUL(L, n, gr)), MUL3(L, K(L, 2), MUL(L, t, q), MUL(L, p, h))),
               ADD(L, MUL3(L, K(L, 4), t, MUL(L, pn, h)), MUL3(L, K(L, 2), DIV(L, t, q), MUL(L, pn, h))));
  A->flops = ADD(L, A->flops, fl);
  A->act = ADD(L, A->act, MUL3(L, t, h, L->bytes_act));
  params_add(L, MUL(L, K(L, 3), h), L->frozen);
  whole(L, MUL(L, K(L, 3), heads), -1);
  A->tensors = ADD(L, A->tensors, K(L, 3));
}

static void op_collective(Lower *L, const char *name, Args *a) {
  static const RtKernel km[] = {RTK_ALLREDUCE, RTK_ALLGATHER, RTK_REDUCESCATTER, RTK_ALLTOALL, RTK_P2P};
  GId bytes = arg_num(L, a, "bytes", 0);
  const char *grp = arg_word(L, a, "group", "tp");
  int gi = 0;
  while (gi < 4 && strcmp(lower_group_names[gi], grp)) gi++;
  GId t = lower_coll(L, km[a->kind - OPK_ALLREDUCE], bytes, gi, name);
  int stream = gi == G_TP ? CM_TP : gi == G_CP ? CM_CP : gi == G_EP ? CM_EP : CM_DP;
  comm(L, stream, name, grp, t, K(L, 0));
}

/* The function of each operator kind. */
typedef void OpLower(Lower *L, const char *name, Args *a);
/* clang-format off */
static OpLower *const op_fns[OPK_N] = {
    [OPK_LINEAR] = op_linear, [OPK_BMM] = op_bmm, [OPK_ATTENTION] = op_attention, [OPK_SOFTMAX] = op_softmax,
    [OPK_NORM] = op_norm, [OPK_ACTIVATION] = op_activation, [OPK_ADD] = op_add, [OPK_DROPOUT] = op_dropout,
    [OPK_ROPE] = op_rope, [OPK_EMBEDDING] = op_embedding, [OPK_CROSS_ENTROPY] = op_cross_entropy,
    [OPK_ROUTER] = op_router, [OPK_EXPERTS] = op_experts, [OPK_CONV1D] = op_conv1d, [OPK_SSD] = op_ssd,
    [OPK_ALLREDUCE] = op_collective,
    [OPK_ALLGATHER] = op_collective, [OPK_REDUCESCATTER] = op_collective, [OPK_ALLTOALL] = op_collective,
    [OPK_P2P] = op_collective};
/* clang-format on */

/* One `op` of the block: its kind's function, with the arguments bound. */
static void lower_op(Lower *L, AstNode *op) {
  AstNode *callnode = op->u.bin.rhs;
  const OpDef *od = op_lookup(callnode->name);
  if (!od) return;
  Args a;
  bind_args(callnode, od, &a);
  a.dto = K(L, L->dt_other); /* made before the kind's nodes, whatever the kind (node order) */
  a.kind = (int)(od - op_defs);
  a.in_saved = L->out_saved;
  L->out_saved = -1;
  Acc *A = L->acc;
  GId p0 = A->params, t0 = A->trainable, wg0 = A->wg;
  op_fns[a.kind](L, op->name, &a);
  L->prev_kind = a.kind;
  /* linear and attention track their trained parameters themselves */
  if (a.kind == OPK_LINEAR || a.kind == OPK_ATTENTION || A->params == p0) return;
  if (!L->frozen) /* the op's parameters are trained */
    A->trainable = t0 == p0 ? A->params : ADD(L, t0, SUB(L, A->params, p0));
  else if (a.kind != OPK_BMM) { /* frozen weights: no weight-gradient time (a bmm's is an activation's) */
    A->bc = SUB(L, A->bc, SUB(L, A->wg, wg0));
    A->wg = wg0;
  }
}

/* --- blocks --------------------------------------------------------------------------- */

static void acc_init(Lower *L, Acc *a) {
  GId z = K(L, 0);
  a->fc = a->bc = a->wg = a->sel = a->act = a->act_sel = a->in_bytes = a->params = a->flops = z;
  a->trainable = z;
  a->tensors = a->eparams = a->etensors = z;
  a->sel_flops = z;
  a->wtotal = a->wactive = a->wtied = z;
  a->launches = a->blaunches = a->sync_fc = a->sync_launches = z;
  a->xf = a->xb = a->edf = a->edb = z;
  a->sync = false;
  for (int i = 0; i < CM_N; i++) a->comm_f[i] = a->comm_b[i] = z;
}

/* A row-parallel linear: `linear(..., split = row)`. */
static bool is_row_linear(AstNode *op) {
  AstNode *call = op->u.bin.rhs;
  if (strcmp(call->name, "linear")) return false;
  for (AstNode *x = call->u.list.first; x; x = x->next)
    if (x->kind == AST_NAMEDARG && !strcmp(x->name, "split"))
      return x->u.bin.rhs->kind == AST_NAME && !strcmp(x->u.bin.rhs->name, "row");
  return false;
}

/* Lowers a block's operators into a (one micro-batch, one rank); a model without that block
 * (blk NULL: no embedding or head) leaves a at zero. */
void lower_block(Lower *L, Decl *blk, int which, Acc *a) {
  acc_init(L, a);
  L->blk = blk;
  L->which = which;
  L->acc = a;
  L->nlets = 0;
  L->sharded = false;
  L->out_saved = -1;
  /* a quantized dtype (Transformer Engine's fp8, mxfp8 and nvfp4 recipes, as Megatron-Core
   * and NeMo run them) covers the layers' GEMMs; the embedding's and the LM head's stay in bf16 */
  bool quantized = rt_dtype_quantized(L->dt_plan) && lower_is_layer(which);
  L->dt_gemm = quantized ? L->dt_plan : L->dt_other;
  if (!blk) return;
  L->row_skip = 0;
  L->prev_kind = -1;
  L->frozen = bool_or(L, L->model, "frozen", false);
  if (lower_is_layer(which) && L->st.fused_residual && bool_or(L, L->model, "parallel_residual", false))
    for (AstNode *c = sema_block_body(blk).first; c; c = c->next)
      L->row_skip += c->kind == AST_OP && c->u.bin.rhs->kind == AST_CALL && is_row_linear(c);
  if (L->row_skip > 0) L->row_skip--; /* the last one reduces the sum */
  L->sync_n0 = -1;
  for (AstNode *c = sema_block_body(blk).first; c; c = c->next)
    if (c->kind == AST_OP && c->u.bin.rhs->kind == AST_CALL) lower_op(L, c);
  if (L->sync_n0 >= 0) { /* the forward from a dropless router's sync to the block's end */
    a->sync_fc = SUB(L, ADD(L, a->fc, lower_comm_sum(L, a->comm_f)), L->sync_f0);
    a->sync_launches = SUB(L, a->launches, L->sync_n0);
    a->sync = true;
  }
  /* the block's input: one micro-batch's hidden states on this rank */
  GId t = DIV(L, MUL(L, L->mb, L->seq), L->cp);
  a->in_bytes = MUL3(L, PICK(L, L->sp, DIV(L, t, L->tp), t), L->hidden, L->bytes_act);
}

/* ZeRO-3's per-layer parameter gathers (forward and backward) and gradient reduce-scatters
 * (backward), on the layer's DP stream; nothing when the stage is known not to be 3. */
void lower_zero3(Lower *L, Acc *ly, int which) {
  GId z3 = EQ(L, L->zero, 3);
  if (kf(L, z3)) return;
  L->which = which;
  L->acc = ly;
  /* dense parameters over dp x cp, the experts' over edp; the gradients of the trained ones */
  GId dense = kf(L, ly->eparams) ? ly->params : SUB(L, ly->params, ly->eparams), gel = K(L, lower_grad_bytes(L));
  GId etrain = L->frozen ? K(L, 0) : ly->eparams;
  GId dtrain = kf(L, ly->eparams) ? ly->trainable : SUB(L, ly->trainable, etrain);
  GId wel = lower_zero3_weight_bytes(L);
  GId ag = lower_coll(L, RTK_ALLGATHER, MUL(L, dense, wel), G_DPCP, "zero3 gather");
  GId rs = lower_coll(L, RTK_REDUCESCATTER, MUL(L, dtrain, gel), G_DPCP, "zero3 reduce");
  if (!kf(L, ly->eparams)) {
    ag = ADD(L, ag, lower_coll(L, RTK_ALLGATHER, MUL(L, ly->eparams, wel), G_EDP, "zero3 gather"));
    rs = ADD(L, rs, lower_coll(L, RTK_REDUCESCATTER, MUL(L, etrain, gel), G_EDP, "zero3 reduce"));
  }
  const Stack *st = &L->st;
  /* The gather of the next layer is issued while this one computes, for the share q of its
   * parameters the prefetch reaches (all of them, or prefetch_elements of them); the rest
   * is fetched when the layer starts, exposed.  No prefetch: every gather is exposed. */
  GId q = st->prefetch < 1         ? K(L, 0)
          : isinf(st->prefetch_el) ? K(L, 1)
                                   : g_min(L->g, K(L, 1), DIV(L, K(L, st->prefetch_el), ly->params));
  GId ahead = MUL(L, q, ag), late = SUB(L, ag, ahead);
  GId f = PICK(L, L->overlap_dp, ADD(L, exposed(L, ahead, ly->fc, K(L, 1)), late), ag);
  /* Backward: resharded weights are gathered again; with `pre` that gather is issued before
   * the layer's gradients are computed (hidden with the reduce-scatter behind them), with
   * `post` or none after, exposed; the reduce-scatter runs on its own stream. */
  GId bag = st->reshard ? ag : K(L, 0);
  GId bahead = MUL(L, q, bag), blate = SUB(L, bag, bahead);
  GId b_pre = ADD(L, exposed(L, ADD(L, bahead, rs), ly->bc, K(L, 1)), blate);
  GId b_post = ADD(L, bag, exposed(L, rs, ly->bc, K(L, 1)));
  GId b = PICK(L, L->overlap_dp, st->bwd_prefetch == 0 ? b_pre : b_post, ADD(L, bag, rs));
  comm_n(L, CM_DP, "layer", "zero3 gather/reduce", PICK(L, z3, f, K(L, 0)), PICK(L, z3, b, K(L, 0)), z3);
}
