/* lower_iter.c - one training iteration from the three blocks' accumulators: the pipeline
 * kernel over the stages' times, the breakdown of the busier end device into parts, the
 * data-parallel reduction by ZeRO stage and bucket, the optimizer step, throughput, and
 * memory per GPU of the first and of the last stage, as the graph's named outputs.  The model
 * they follow is in lower.c's header. */
#include <string.h>

#include "lower_private.h"

const char *const lower_output_names[O_N] = {
#define X(e, s) s,
    LOWER_OUTPUTS(X)
#undef X
};
const char *const lower_part_outputs[RP_N] = {
#define X(e, k, l) "part." k,
    REPORT_PARTS(X)
#undef X
};
const char *const lower_memory_outputs[RM_N] = {
#define X(e, k, l) "memory." k,
    REPORT_MEMORY(X)
#undef X
};

static void emit(Lower *L, OutputId o, GId id) { graph_output(L->g, lower_output_names[o], id); }

/* What the steps of the iteration share. */
typedef struct Iter {
  Acc *E, *Ly, *H;              /* embedding, layer, head: one micro-batch, one rank */
  GId z;                        /* the constant 0 */
  GId lf, lb, lr;               /* a layer's forward, backward and recompute seconds */
  GId ef, eb, hf, hb;           /* the embedding's and the head's forward and backward */
  GId makespan, nop2p;          /* the pipeline's, with and without its sends */
  GId l0, ll;                   /* layers on the first and on the last device */
  GId one_dev;                  /* pp == 1 */
  GId nl;                       /* layers on the busier of the two */
  GId part[RP_N], zero3;        /* the breakdown; ZeRO-3's per-layer communication */
  GId params0, paramsl, params; /* parameters on the first, the last, the device reduced */
  GId tensors;                  /* the tensors holding params */
  GId train0, trainl, train;    /* of params, the trainable (not frozen) ones: LoRA */
  GId shard;                    /* ranks that hold the same weights */
  GId bucket, grad_el, w_el;    /* gradient bucket elements; bytes per gradient, weight */
  GId z1, z2, z3;               /* ZeRO stage >= 1, >= 2, == 3 */
  bool sgd;
  GId dp_exposed, iteration;
  GId host_l, host_e, host_h; /* per micro-batch: host-bound seconds of a layer, embedding, head */
  GId blocking;               /* a blocking send's share of one layer, forward (and backward) */
} Iter;

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

static GId last_chunk_in_flight(Lower *L) { return PICK(L, EQ(L, L->sched, RT_GPIPE), L->m, K(L, 1)); }

static GId comm_sum(Lower *L, const GId *c) {
  GId s = c[0];
  for (int i = 1; i < CM_N; i++) s = ADD(L, s, c[i]);
  return s;
}

/* The blocks' times, the pipeline kernel over them, and the layers of the end devices. */
static void iter_pipeline(Lower *L, Iter *it) {
  Graph *g = L->g;
  Acc *E = it->E, *Ly = it->Ly, *H = it->H;
  GId full = L->rec_full, sel = L->rec_sel, layers = L->layers, zb = EQ(L, L->sched, RT_ZERO_BUBBLE);

  /* one layer, one micro-batch; a block whose kernels take less GPU time than the host
   * needs to launch them runs at the host's pace (launch_overhead per kernel launch, twice
   * as many in backward) */
  double lo = L->st.launch;
  GId lf = ADD(L, Ly->fc, comm_sum(L, Ly->comm_f)), lb = ADD(L, Ly->bc, comm_sum(L, Ly->comm_b));
  GId lr = PICK(L, full, lf, PICK(L, sel, Ly->sel, K(L, 0)));
  GId ef = ADD(L, E->fc, comm_sum(L, E->comm_f)), eb = ADD(L, E->bc, comm_sum(L, E->comm_b));
  GId hf = ADD(L, H->fc, comm_sum(L, H->comm_f)), hb = ADD(L, H->bc, comm_sum(L, H->comm_b));
  if (lo > 0) {
    GId lf0 = lf, lb0 = lb, ef0 = ef, eb0 = eb, hf0 = hf, hb0 = hb;
    lf = MAX(L, lf, K(L, Ly->launches * lo)), lb = MAX(L, lb, K(L, 2 * Ly->launches * lo));
    ef = MAX(L, ef, K(L, E->launches * lo)), eb = MAX(L, eb, K(L, 2 * E->launches * lo));
    hf = MAX(L, hf, K(L, H->launches * lo)), hb = MAX(L, hb, K(L, 2 * H->launches * lo));
    lr = PICK(L, full, lf, lr);
    it->host_l = ADD(L, SUB(L, lf, lf0), SUB(L, lb, lb0));
    it->host_e = ADD(L, SUB(L, ef, ef0), SUB(L, eb, eb0));
    it->host_h = ADD(L, SUB(L, hf, hf0), SUB(L, hb, hb0));
  } else {
    it->host_l = it->host_e = it->host_h = K(L, 0);
  }
  /* host time per micro-batch (data, Python, the schedule's bookkeeping): on the first stage */
  if (L->st.mb_overhead > 0) {
    ef = ADD(L, ef, K(L, L->st.mb_overhead));
    it->host_e = ADD(L, it->host_e, K(L, L->st.mb_overhead));
  }

  /* the pipeline send: one micro-batch's hidden states (sequence-sharded with SP) */
  GId p2p_bytes = MUL3(L, DIV(L, MUL(L, L->mb, L->seq), L->cp), L->hidden, L->bytes_act);
  p2p_bytes = PICK(L, L->sp, DIV(L, p2p_bytes, L->tp), p2p_bytes);
  GId p2p = lower_coll(L, RTK_P2P, p2p_bytes, G_PP, "pipeline send");
  /* Without overlap_pp a send blocks its sender (DeepSpeed's blocking send/recv, Megatron's
   * batched exchange and device synchronise): each chunk's forward and backward are longer
   * by one send, spread over its layers.  The simulation's sends already delay the receiver. */
  GId chunks0 = MUL(L, L->pp, L->vs);
  GId blocking =
      PICK(L, g_bin(g, GN_OR, L->overlap_pp, EQ(L, L->pp, 1)), K(L, 0), DIV(L, MUL(L, p2p, chunks0), layers));
  lf = ADD(L, lf, blocking), lb = ADD(L, lb, blocking);
  it->blocking = blocking;
  /* outside zero-bubble, B and W run together: the whole backward is passed as B */
  /* clang-format off */
  GId args[15] = {L->sched, L->pp, L->vs, L->m, layers, L->balanced, lf, PICK(L, zb, SUB(L, lb, Ly->wg), lb),
                  PICK(L, zb, Ly->wg, K(L, 0)), lr, ef, eb, hf, hb, p2p};
  /* clang-format on */
  GId pipe = g_call(g, RTK_PIPELINE, args, 15, "pipeline");
  L->out->pipe = pipe;
  it->makespan = pipe, it->nop2p = pipe + 1;

  /* layers on the first and last device (closed forms of rt_partition_layers) */
  GId chunks = MUL(L, L->pp, L->vs);
  GId base = g_un(g, GN_FLOOR, DIV(L, layers, chunks));
  GId rem = SUB(L, layers, MUL(L, base, chunks));
  it->l0 = ADD(L, MUL(L, L->vs, base), g_un(g, GN_CEIL, DIV(L, rem, L->pp)));
  it->ll = ADD(L, MUL(L, L->vs, base), g_un(g, GN_FLOOR, DIV(L, rem, L->pp)));
  it->one_dev = g_bin(g, GN_EQ, L->pp, K(L, 1));
  it->z = K(L, 0);
  it->lf = lf, it->lb = lb, it->lr = lr, it->ef = ef, it->eb = eb, it->hf = hf, it->hb = hb;
}

/* The busy time of each end device, and the breakdown (parts) of the busier. */
static void iter_parts(Lower *L, Iter *it) {
  Graph *g = L->g;
  Acc *E = it->E, *Ly = it->Ly, *H = it->H;
  GId lf = it->lf, lb = it->lb, lr = it->lr, ef = it->ef, eb = it->eb, hf = it->hf, hb = it->hb;
  GId l0 = it->l0, ll = it->ll, one_dev = it->one_dev, z = it->z;
  GId *part = it->part;

  GId per_layer = ADD(L, ADD(L, lf, lb), lr);
  GId busy0 =
      MUL(L, L->m, ADD(L, ADD(L, MUL(L, l0, per_layer), ADD(L, ef, eb)), g_select(g, one_dev, ADD(L, hf, hb), z)));
  GId busyl = MUL(L, L->m, ADD(L, MUL(L, ll, per_layer), ADD(L, hf, hb)));
  GId last_busier = g_bin(g, GN_AND, g_un(g, GN_NOT, one_dev), g_bin(g, GN_GT, busyl, busy0));
  GId nl = g_select(g, last_busier, ll, l0);
  GId with_e = g_un(g, GN_NOT, last_busier), with_h = g_bin(g, GN_OR, last_busier, one_dev);
  GId busy = g_select(g, last_busier, busyl, busy0);
  /* per part, one micro-batch on that device, then times m */
#define ON_DEV(lay, emb, head) \
  ADD(L, ADD(L, MUL(L, nl, lay), g_select(g, with_e, emb, z)), g_select(g, with_h, head, z))
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
  it->zero3 = MUL(L, L->m, zero3);
  /* pipeline send/receive: what the sends add to the schedule, and the blocking sends and
   * host-bound time inside the busy device's blocks */
  GId hostdev =
      ADD(L, ADD(L, MUL(L, nl, it->host_l), g_select(g, with_e, it->host_e, z)), g_select(g, with_h, it->host_h, z));
  part[RP_HOST] = MUL(L, L->m, hostdev);
  part[RP_PP_COMM] = ADD(L, SUB(L, it->makespan, it->nop2p), MUL3(L, L->m, nl, MUL(L, K(L, 2), it->blocking)));
  /* one stage has no bubble: 0, not the rounding residue of simulation against closed form */
  part[RP_BUBBLE] = g_select(g, one_dev, z, MAX(L, z, SUB(L, it->nop2p, busy)));
  it->nl = nl;
}

/* The parameters of the first and of the last device, and of the one that holds the most
 * (data parallelism reduces those), with the tensors that hold them. */
static void iter_params(Lower *L, Iter *it) {
  Graph *g = L->g;
  Acc *E = it->E, *Ly = it->Ly, *H = it->H;
  GId l0 = it->l0, ll = it->ll, one_dev = it->one_dev, z = it->z;
  bool tied = bool_or(L, L->model, "tied_embeddings", false);
  GId hparams = H->params;
  GId params0 = ADD(L, ADD(L, MUL(L, l0, Ly->params), E->params), g_select(g, one_dev, tied ? z : hparams, z));
  GId paramsl = ADD(L, MUL(L, ll, Ly->params), hparams);
  GId params = g_select(g, one_dev, params0, MAX(L, params0, paramsl));
  /* and the tensors that hold them (the optimizer step's per-tensor cost), counted alike */
  GId tensors0 = ADD(L, ADD(L, MUL(L, l0, Ly->tensors), E->tensors), g_select(g, one_dev, tied ? z : H->tensors, z));
  GId tensorsl = ADD(L, MUL(L, ll, Ly->tensors), H->tensors);
  it->tensors = g_select(g, one_dev, tensors0, g_select(g, g_bin(g, GN_GE, params0, paramsl), tensors0, tensorsl));
  it->params0 = params0, it->paramsl = paramsl, it->params = params;
  /* the trained parameters: gradients, optimizer state and the dp reduction are theirs */
  GId train0 = ADD(L, ADD(L, MUL(L, l0, Ly->trainable), E->trainable), g_select(g, one_dev, tied ? z : H->trainable, z));
  GId trainl = ADD(L, MUL(L, ll, Ly->trainable), H->trainable);
  it->train0 = train0, it->trainl = trainl, it->train = g_select(g, one_dev, train0, MAX(L, train0, trainl));
}

/* Data parallelism, for the device that holds the most parameters: its gradient reduction
 * and parameter gathers by ZeRO stage and bucket, exposed as overlap_dp allows. */
static void iter_dp(Lower *L, Iter *it) {
  Graph *g = L->g;
  GId z = it->z, nl = it->nl, lf = it->lf, lb = it->lb, params = it->train;
  GId grad_el = K(L, lower_grad_bytes(L));
  GId w_el = L->bytes_act; /* weights are stored as the activations are */
  GId bucket = lower_field(L, L->plan, "plan", "dp_bucket_elements", 40e6);
  bucket = g_min(g, bucket, params);
  GId nb = g_un(g, GN_CEIL, DIV(L, params, bucket));
  GId last_el = SUB(L, params, MUL(L, SUB(L, nb, K(L, 1)), bucket));
  GId shard = MUL(L, L->dp, L->cp); /* ranks that hold the same weights: ZeRO shards over them */
  GId z3 = EQ(L, L->zero, 3), z0 = EQ(L, L->zero, 0), z1 = GE(L, L->zero, 1), z2 = GE(L, L->zero, 2);
  /* ZeRO 0: all-reduce; 1, 2: reduce-scatter, then all-gather the updated parameters; 3:
   * nothing here (gradients are reduce-scattered per layer, in the backward) */
  GId last_red = z, dp_red = z;
  if (!kt(L, z3)) {
    GId gb_full = MUL(L, bucket, grad_el), gb_last = MUL(L, last_el, grad_el);
    /* a sharded optimizer's reduction: a reduce-scatter, or (DeepSpeed's ZeRO 1/2) an
     * all-reduce of each bucket of which each rank keeps its slice */
    RtKernel sharded = L->st.sharded_allreduce ? RTK_ALLREDUCE : RTK_REDUCESCATTER;
    GId full_b = PICK(L, z0, lower_coll(L, RTK_ALLREDUCE, gb_full, G_DPCP, "dp gradients"),
                      lower_coll(L, sharded, gb_full, G_DPCP, "dp gradients"));
    last_red = PICK(L, z0, lower_coll(L, RTK_ALLREDUCE, gb_last, G_DPCP, "dp gradients"),
                    lower_coll(L, sharded, gb_last, G_DPCP, "dp gradients"));
    dp_red = ADD(L, MUL(L, SUB(L, nb, K(L, 1)), full_b), last_red);
  }
  GId gather_on = AND(L, z1, g_un(g, GN_NOT, z3));
  GId last_gather = PICK(L, gather_on, lower_coll(L, RTK_ALLGATHER, MUL(L, last_el, w_el), G_DPCP, "dp parameters"), z);
  GId dp_gather = PICK(
      L, gather_on,
      ADD(L, MUL(L, SUB(L, nb, K(L, 1)), lower_coll(L, RTK_ALLGATHER, MUL(L, bucket, w_el), G_DPCP, "dp parameters")),
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
  GId red_exposed = PICK(L, L->overlap_dp, MAX(L, last_red, SUB(L, dp_red, bwin)), dp_red);
  /* ZeRO 2 on a stack that reduces every micro-batch (DeepSpeed): m reductions, each hidden
   * (with overlap) behind that micro-batch's backward on this device */
  if (L->st.zero2_every) {
    GId every = MUL(L, L->m, PICK(L, L->overlap_dp, MAX(L, last_red, SUB(L, dp_red, MUL(L, nl, lb))), dp_red));
    red_exposed = PICK(L, EQ(L, L->zero, 2), every, red_exposed);
  }
  GId gather_exposed = PICK(L, L->overlap_pg, MAX(L, last_gather, SUB(L, dp_gather, fwin)), dp_gather);
  GId dp_exposed = ADD(L, red_exposed, gather_exposed);
  it->part[RP_DP_COMM] = ADD(L, dp_exposed, it->zero3);
  it->grad_el = grad_el, it->w_el = w_el, it->bucket = bucket, it->shard = shard;
  it->z1 = z1, it->z2 = z2, it->z3 = z3;
  it->dp_exposed = dp_exposed;
}

/* The optimizer step over this device's parameters (its shard of them under ZeRO), and the
 * iteration: makespan, exposed data-parallel communication, optimizer. */
static void iter_optimizer(Lower *L, Iter *it) {
  Graph *g = L->g;
  GId params = it->train, shard = it->shard, z1 = it->z1, tensors = it->tensors;
  bool sgd = !strcmp(word_or(L, L->plan, "optimizer", "adam"), "sgd");
  GId opt_params = PICK(L, z1, DIV(L, params, shard), params);
  /* ZeRO 1 and 2 (Megatron's distributed optimizer): a rank steps one fp32 shard tensor per
   * parameter whose range overlaps its 1/shard of the flat gradient buffer, about
   * tensors/shard of them (a tensor split at a shard boundary counts once); ZeRO 3 likewise. */
  GId opt_tensors = PICK(L, z1, MAX(L, K(L, 1), g_un(g, GN_CEIL, DIV(L, tensors, shard))), tensors);
  /* a multi-tensor FusedAdam (DeepSpeed's, apex's, TE's) launches once per 320 chunks of
   * 65,536 elements or 36 tensors, whichever fills first (multi_tensor_apply.cuh), rather
   * than once per tensor */
  if (L->st.multi_tensor)
    opt_tensors = MAX(L, g_un(g, GN_CEIL, DIV(L, opt_params, K(L, 65536.0 * 320))),
                      g_un(g, GN_CEIL, DIV(L, opt_tensors, K(L, 36))));
  GId opt = lower_call(L, RTK_ADAM, "optimizer", 3, K(L, L->dt_other), opt_params, opt_tensors);
  if (sgd) opt = MUL(L, K(L, 0.5), opt); /* SGD with momentum: half of Adam's state traffic */
  it->part[RP_OPTIMIZER] = opt;

  GId iteration = ADD(L, ADD(L, it->makespan, it->dp_exposed), opt);
  for (int i = 0; i < RP_N; i++) graph_output(g, lower_part_outputs[i], it->part[i]);
  emit(L, O_ITERATION, iteration);
  emit(L, O_MAKESPAN, it->makespan);
  emit(L, O_DP_TIME, it->dp_exposed);
  emit(L, O_OPT_TIME, opt);
  it->sgd = sgd, it->iteration = iteration;
}

/* Throughput: tokens a second, model and hardware FLOPs (recompute included), per GPU, MFU. */
static void iter_throughput(Lower *L, Iter *it) {
  Acc *E = it->E, *Ly = it->Ly, *H = it->H;
  GId full = L->rec_full, sel = L->rec_sel, layers = L->layers, z = it->z, iteration = it->iteration;
  GId tokens = MUL(L, L->gb, L->seq);
  emit(L, O_TOKENS, DIV(L, tokens, iteration));
  GId ranks = MUL3(L, L->tp, L->cp, MUL(L, L->m, L->dp)); /* forward FLOP per rank -> whole iteration */
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
}

/* Memory per GPU of the first and of the last device: weights, gradients and optimizer
 * state (sharded by ZeRO), activations in flight, buffers; the larger is reported. */
static void iter_memory(Lower *L, Iter *it) {
  Graph *g = L->g;
  Acc *E = it->E, *Ly = it->Ly, *H = it->H;
  GId full = L->rec_full, sel = L->rec_sel, z = it->z, one_dev = it->one_dev;
  GId params0 = it->params0, paramsl = it->paramsl, l0 = it->l0, ll = it->ll;
  GId shard = it->shard, w_el = it->w_el, grad_el = it->grad_el, bucket = it->bucket;
  GId z1 = it->z1, z2 = it->z2, z3 = it->z3;
  bool sgd = it->sgd;
  GId act_layer = PICK(L, full, Ly->in_bytes, PICK(L, sel, SUB(L, Ly->act, Ly->act_sel), Ly->act));
  GId work = PICK(L, full, Ly->act, PICK(L, sel, Ly->act_sel, z)); /* one layer rematerialised in backward */
  GId opt_el = K(L, (L->dt_plan == RT_FP32 || L->dt_plan == RT_TF32 ? 8 : 12) - (sgd ? 4 : 0));
  GId mem0[RM_N], meml[RM_N];
  GId pdev[2] = {params0, g_select(g, one_dev, params0, paramsl)};
  GId tdev[2] = {it->train0, g_select(g, one_dev, it->train0, it->trainl)};
  GId ldev[2] = {l0, ll};
  GId *mem[2] = {mem0, meml};
  for (int d = 0; d < 2; d++) {
    GId dev = d == 0 ? z : SUB(L, L->pp, K(L, 1));
    GId P = pdev[d];
    mem[d][RM_WEIGHTS] = MUL(L, PICK(L, z3, DIV(L, P, shard), P), w_el);
    mem[d][RM_GRADIENTS] = MUL(L, PICK(L, z2, DIV(L, tdev[d], shard), tdev[d]), grad_el);
    mem[d][RM_OPTIMIZER] = MUL(L, PICK(L, z1, DIV(L, tdev[d], shard), tdev[d]), opt_el);
    GId fl = in_flight(L, dev);
    GId per_chunk = DIV(L, ldev[d], L->vs);
    GId a = ADD(L, MUL3(L, fl, per_chunk, act_layer), work);
    if (d == 0) a = ADD(L, a, MUL(L, first_chunk_in_flight(L), E->act));
    GId head_act = MUL(L, last_chunk_in_flight(L), H->act);
    a = ADD(L, a, d == 1 ? head_act : g_select(g, one_dev, head_act, z));
    mem[d][RM_ACTIVATIONS] = a;
    GId buf = g_select(g, g_bin(g, GN_GT, shard, K(L, 1)), MUL(L, bucket, grad_el), z);
    /* ZeRO-3's gathered layers: the one computing and those prefetched, or, kept from the
     * forward for the backward (no reshard), all of this device's; at most max_live */
    const Stack *st = &L->st;
    GId units = st->reshard ? K(L, 1 + (st->prefetch > 1 ? st->prefetch : 1)) : ldev[d];
    GId live = MUL(L, units, Ly->params);
    if (!isinf(st->max_live)) live = g_min(g, live, MAX(L, K(L, st->max_live), Ly->params));
    buf = PICK(L, z3, ADD(L, buf, MUL(L, live, w_el)), buf);
    mem[d][RM_BUFFERS] = buf;
    mem[d][RM_RESERVED] = K(L, 0);
  }
  /* the stack's reserve: context, NCCL and workspace, and what the allocator loses */
  for (int d = 0; d < 2 && (L->st.reserved > 0 || L->st.frag > 0); d++) {
    GId alloc = z;
    for (int i = 0; i < RM_RESERVED; i++) alloc = ADD(L, alloc, mem[d][i]);
    mem[d][RM_RESERVED] = ADD(L, K(L, L->st.reserved), MUL(L, K(L, L->st.frag / (1 - L->st.frag)), alloc));
  }
  GId peak0 = z, peakl = z;
  for (int i = 0; i < RM_N; i++) {
    peak0 = ADD(L, peak0, mem0[i]);
    peakl = ADD(L, peakl, meml[i]);
  }
  GId last_more = g_bin(g, GN_GT, peakl, peak0);
  for (int i = 0; i < RM_N; i++) graph_output(g, lower_memory_outputs[i], g_select(g, last_more, meml[i], mem0[i]));
  emit(L, O_PEAK, MAX(L, peak0, peakl));
  emit(L, O_PEAK_STAGE, g_select(g, last_more, SUB(L, L->pp, K(L, 1)), z));
}

void lower_assemble(Lower *L, Acc *E, Acc *Ly, Acc *H) {
  Iter it = {.E = E, .Ly = Ly, .H = H};
  iter_pipeline(L, &it);
  iter_parts(L, &it);
  iter_params(L, &it);
  iter_dp(L, &it);
  iter_optimizer(L, &it);
  iter_throughput(L, &it);
  iter_memory(L, &it);
}
