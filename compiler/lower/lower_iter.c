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

/* What the steps of the iteration share.  Per-layer figures are per group (a pattern's
 * layer blocks; one for a model of one `layer`). */
typedef struct Iter {
  Acc *E, *Ly, *H;                  /* embedding, layer groups, head: one micro-batch, one rank */
  int ng;                           /* layer groups */
  GId z;                            /* the constant 0 */
  GId lf[RT_MAX_GROUPS], lb[RT_MAX_GROUPS], lr[RT_MAX_GROUPS]; /* a layer's fwd, bwd, recompute seconds */
  GId wf[RT_MAX_GROUPS], wb[RT_MAX_GROUPS]; /* fwd, bwd of the first and last micro-batch: unmerged */
  GId ef, eb, hf, hb;               /* the embedding's and the head's forward and backward */
  GId makespan, nop2p;              /* the pipeline's, with and without its sends */
  GId l0[RT_MAX_GROUPS], ll[RT_MAX_GROUPS]; /* layers on the first and on the last device */
  GId one_dev;                      /* pp == 1 */
  GId nl[RT_MAX_GROUPS];            /* layers on the busier of the two */
  GId part[RP_N], zero3;            /* the breakdown; ZeRO-3's per-layer communication */
  GId params0, paramsl, params;     /* parameters on the first, the last, the device reduced */
  GId tensors;                      /* the tensors holding params */
  GId eparams0, eparamsl, eparams;  /* of which the experts' (-1: a model without experts) */
  GId etensors;                     /* the tensors holding eparams */
  GId train0, trainl, train;        /* of params, the trained ones (LoRA: not frozen) */
  GId etrain0, etrainl, etrain;     /* of eparams, the trained ones (-1: no experts) */
  GId shard;                        /* ranks that hold the same dense weights (dp x cp) */
  GId bucket, grad_el, w_el;        /* gradient bucket elements; bytes per gradient, weight */
  GId z1, z2, z3;                   /* ZeRO stage >= 1, >= 2, == 3 */
  bool sgd;
  GId dp_exposed, iteration;
  GId host_l[RT_MAX_GROUPS], host_e, host_h; /* per micro-batch: host-bound seconds of a layer, embedding, head */
  GId blocking;                     /* a blocking send's share of one layer, forward (and backward) */
} Iter;

/* sum over the groups g of n[g] * x[g] */
static GId gsum(Lower *L, const Iter *it, const GId *n, const GId *x) {
  GId s = MUL(L, n[0], x[0]);
  for (int g = 1; g < it->ng; g++) s = ADD(L, s, MUL(L, n[g], x[g]));
  return s;
}

/* an Acc field of every group, as an array */
#define GFIELD(it, f, out) \
  do { \
    for (int g_ = 0; g_ < (it)->ng; g_++) (out)[g_] = (it)->Ly[g_].f; \
  } while (0)

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

/* Megatron-Core's expert-parallel overlap (--overlap-moe-expert-parallel-comm, combined_1f1b.py)
 * runs one micro-batch's forward merged with another's backward, layer by layer, in four steps,
 * each one node's compute beside the other's communication: forward attention | combine's
 * gradient, dispatch | experts' backward, experts' forward | dispatch's gradient, combine |
 * attention's backward (the order each pass's dependencies leave; models/common/
 * model_chunk_schedule_plan.py, recalled).  A step's traffic hides under its pair's compute,
 * not under the layer's: "attention" is all but the experts, other streams' exposed traffic
 * included.  Only the steady state merges: the first forward and the last backward of each
 * device's schedule (and interleaving's warm-up and cool-down) run alone, so a share frac of
 * the traffic can hide. */
static void ep_hide(Lower *L, Acc *A, GId frac) {
  GId ef = A->comm_f[CM_EP], eb = A->comm_b[CM_EP];
  GId af = SUB(L, SUB(L, ADD(L, A->fc, lower_comm_sum(L, A->comm_f)), ef), A->xf);
  GId ab = SUB(L, SUB(L, ADD(L, A->bc, lower_comm_sum(L, A->comm_b)), eb), A->xb);
  GId cf = SUB(L, ef, A->edf), cb = SUB(L, eb, A->edb); /* the combine's, each way */
  GId hf = MUL(L, frac, ADD(L, g_min(L->g, A->edf, A->xb), g_min(L->g, cf, ab)));
  GId hb = MUL(L, frac, ADD(L, g_min(L->g, cb, af), g_min(L->g, A->edb, A->xf)));
  A->comm_f[CM_EP] = PICK(L, L->overlap_ep, SUB(L, ef, hf), ef);
  A->comm_b[CM_EP] = PICK(L, L->overlap_ep, SUB(L, eb, hb), eb);
  /* the dispatch follows the router's sync: what runs after it is shorter by what hides */
  if (A->sync) A->sync_fc = PICK(L, L->overlap_ep, MAX(L, K(L, 0), SUB(L, A->sync_fc, hf)), A->sync_fc);
}

/* The share of micro-batch chunks whose forward runs merged with a backward on device 0: all
 * but its warm-up, one more than without the overlap (no pipeline: the first forward). */
static GId ep_merged_share(Lower *L) {
  GId chunks = MUL(L, L->m, L->vs);
  return DIV(L, MAX(L, K(L, 0), SUB(L, chunks, in_flight(L, K(L, 0)))), chunks);
}

/* A block's forward f at the host's pace of lo a launch, each side of a dropless router's
 * sync on its own: before it (npre launches) the host may be ahead, after it (the sync_fc
 * seconds of nsync launches) not.  f plus what the host adds, so that a GPU-paced block
 * returns f itself: (f - s) + s may round an ulp either side of f. */
static GId sync_paced(Lower *L, GId f, GId npre, GId sync_fc, GId nsync, double lo) {
  GId z = K(L, 0), pre = SUB(L, MUL(L, npre, K(L, lo)), SUB(L, f, sync_fc));
  return ADD(L, f, ADD(L, MAX(L, z, pre), MAX(L, z, SUB(L, MUL(L, nsync, K(L, lo)), sync_fc))));
}

/* A layer's forward f and backward b, one micro-batch, at the host's pace where lo > 0: the
 * part after a device-to-host sync runs at its own pace (the host is not ahead).  A layer in
 * CUDA graphs is one launch, but for the part after the sync, whose shapes are the router's
 * and cannot be captured (Megatron-Core's cuda_graph_scope). */
static GId layer_paced(Lower *L, const Acc *Ly, double lo, GId *f, GId *b) {
  GId f0 = ADD(L, Ly->fc, lower_comm_sum(L, Ly->comm_f)), b0 = ADD(L, Ly->bc, lower_comm_sum(L, Ly->comm_b));
  *f = f0, *b = b0;
  if (lo <= 0) return K(L, 0);
  GId npre = PICK(L, L->graphs, K(L, 1), SUB(L, Ly->launches, Ly->sync_launches));
  GId nall = ADD(L, npre, Ly->sync_launches);
  GId nb = ADD(L, nall, PICK(L, L->graphs, K(L, 0), Ly->blaunches));
  *f = sync_paced(L, f0, npre, Ly->sync_fc, Ly->sync_launches, lo);
  *b = MAX(L, b0, MUL(L, nb, K(L, lo)));
  return ADD(L, SUB(L, *f, f0), SUB(L, *b, b0)); /* what the host adds */
}

/* The blocks' times, the pipeline kernel over them, and the layers of the end devices. */
static void iter_pipeline(Lower *L, Iter *it) {
  Graph *g = L->g;
  Acc *E = it->E, *H = it->H;
  GId full = L->rec_full, sel = L->rec_sel, layers = L->layers, zb = EQ(L, L->sched, RT_ZERO_BUBBLE);

  /* one layer, one micro-batch; a block whose kernels take less GPU time than the host
   * needs to launch them runs at the host's pace: launch_overhead per forward launch, and as
   * much again in backward, where the autograd engine calls each forward node's backward once
   * (its data and weight gradients together; recalled), plus an operator's own extra backward launches
   * (the SSD scan's Triton kernels) */
  double lo = L->st.launch;
  GId *lf = it->lf, *lb = it->lb, *lr = it->lr;
  /* the EP overlap hides traffic in merged micro-batches; the first forward and the last
   * backward (the DP windows) run unmerged */
  bool merge = !kf(L, L->overlap_ep);
  GId share = merge ? ep_merged_share(L) : -1;
  for (int k = 0; k < it->ng; k++) {
    Acc *Ly = &it->Ly[k];
    it->host_l[k] = layer_paced(L, Ly, lo, &it->wf[k], &it->wb[k]);
    lf[k] = it->wf[k], lb[k] = it->wb[k];
    if (merge) {
      ep_hide(L, Ly, share);
      it->host_l[k] = layer_paced(L, Ly, lo, &lf[k], &lb[k]);
    }
    lr[k] = PICK(L, full, MUL(L, L->rec_frac, lf[k]), PICK(L, sel, Ly->sel, K(L, 0)));
  }
  if (merge) ep_hide(L, H, share);
  GId ef = ADD(L, E->fc, lower_comm_sum(L, E->comm_f)), eb = ADD(L, E->bc, lower_comm_sum(L, E->comm_b));
  GId hf = ADD(L, H->fc, lower_comm_sum(L, H->comm_f)), hb = ADD(L, H->bc, lower_comm_sum(L, H->comm_b));
  if (lo > 0) {
    GId ef0 = ef, eb0 = eb, hf0 = hf, hb0 = hb;
    GId enb = ADD(L, E->launches, E->blaunches);
    GId hnb = ADD(L, H->launches, H->blaunches);
    ef = MAX(L, ef, MUL(L, E->launches, K(L, lo))), eb = MAX(L, eb, MUL(L, enb, K(L, lo)));
    if (H->sync) /* the MTP layer's dropless router: as a layer's, uncaptured */
      hf = sync_paced(L, hf, SUB(L, H->launches, H->sync_launches), H->sync_fc, H->sync_launches, lo);
    else
      hf = MAX(L, hf, MUL(L, H->launches, K(L, lo)));
    hb = MAX(L, hb, MUL(L, hnb, K(L, lo)));
    it->host_e = ADD(L, SUB(L, ef, ef0), SUB(L, eb, eb0));
    it->host_h = ADD(L, SUB(L, hf, hf0), SUB(L, hb, hb0));
  } else {
    it->host_e = it->host_h = K(L, 0);
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
  for (int k = 0; k < it->ng; k++) {
    lf[k] = ADD(L, lf[k], blocking), lb[k] = ADD(L, lb[k], blocking);
    it->wf[k] = ADD(L, it->wf[k], blocking), it->wb[k] = ADD(L, it->wb[k], blocking);
  }
  it->blocking = blocking;
  /* outside zero-bubble, B and W run together: the whole backward is passed as B; groups
   * past the first follow the fifteen arguments of a model of one layer block */
  GId args[RT_PIPE_NARGS] = {L->sched, L->pp, L->vs, L->m, layers, L->balanced, 0, 0, 0, 0, ef, eb, hf, hb, p2p, K(L, L->layout)};
  for (int k = 0; k < RT_MAX_GROUPS; k++) {
    GId *at = k == 0 ? args + 6 : args + 16 + 4 * (k - 1);
    if (k >= it->ng) {
      at[0] = at[1] = at[2] = at[3] = K(L, 0);
      continue;
    }
    GId wg = it->Ly[k].wg;
    at[0] = lf[k], at[1] = PICK(L, zb, SUB(L, lb[k], wg), lb[k]), at[2] = PICK(L, zb, wg, K(L, 0)), at[3] = lr[k];
  }
  GId pipe = g_call(g, RTK_PIPELINE, args, RT_PIPE_NARGS, "pipeline");
  L->out->pipe = pipe;
  it->makespan = pipe, it->nop2p = pipe + 1;

  it->one_dev = g_bin(g, GN_EQ, L->pp, K(L, 1));
  if (!L->layout) { /* layers on the first and last device (closed forms of rt_partition_layers) */
    GId chunks = MUL(L, L->pp, L->vs);
    GId base = g_un(g, GN_FLOOR, DIV(L, layers, chunks));
    GId rem = SUB(L, layers, MUL(L, base, chunks));
    it->l0[0] = ADD(L, MUL(L, L->vs, base), g_un(g, GN_CEIL, DIV(L, rem, L->pp)));
    it->ll[0] = ADD(L, MUL(L, L->vs, base), g_un(g, GN_FLOOR, DIV(L, rem, L->pp)));
  } else { /* a layout's: counted by the runtime, group by group, on both end devices */
    for (int k = 0; k < it->ng; k++) {
      GId a[6] = {K(L, L->layout), layers, L->pp, L->vs, L->balanced, K(L, k)};
      it->l0[k] = g_call(g, RTK_LAYERS_ON, a, 6, "layers on the first and last stage");
      it->ll[k] = it->l0[k] + 1;
    }
  }
  it->z = K(L, 0);
  it->ef = ef, it->eb = eb, it->hf = hf, it->hb = hb;
}

/* The busy time of each end device, and the breakdown (parts) of the busier. */
static void iter_parts(Lower *L, Iter *it) {
  Graph *g = L->g;
  Acc *E = it->E, *H = it->H;
  GId ef = it->ef, eb = it->eb, hf = it->hf, hb = it->hb;
  GId one_dev = it->one_dev, z = it->z;
  GId *part = it->part;
  int ng = it->ng;

  GId per_layer[RT_MAX_GROUPS] = {0};
  for (int k = 0; k < ng; k++) per_layer[k] = ADD(L, ADD(L, it->lf[k], it->lb[k]), it->lr[k]);
  GId busy0 =
      MUL(L, L->m, ADD(L, ADD(L, gsum(L, it, it->l0, per_layer), ADD(L, ef, eb)), g_select(g, one_dev, ADD(L, hf, hb), z)));
  GId busyl = MUL(L, L->m, ADD(L, gsum(L, it, it->ll, per_layer), ADD(L, hf, hb)));
  GId last_busier = g_bin(g, GN_AND, g_un(g, GN_NOT, one_dev), g_bin(g, GN_GT, busyl, busy0));
  GId *nl = it->nl;
  for (int k = 0; k < ng; k++) nl[k] = g_select(g, last_busier, it->ll[k], it->l0[k]);
  GId with_e = g_un(g, GN_NOT, last_busier), with_h = g_bin(g, GN_OR, last_busier, one_dev);
  GId busy = g_select(g, last_busier, busyl, busy0);
  GId x[RT_MAX_GROUPS] = {0};
  /* per part, one micro-batch on that device, then times m */
#define ON_DEV(lay, emb, head) ADD(L, ADD(L, lay, g_select(g, with_e, emb, z)), g_select(g, with_h, head, z))
  GFIELD(it, fc, x);
  part[RP_FORWARD] = ON_DEV(gsum(L, it, nl, x), E->fc, H->fc);
  GFIELD(it, bc, x);
  part[RP_BACKWARD] = ON_DEV(gsum(L, it, nl, x), E->bc, H->bc);
  part[RP_RECOMPUTE] = gsum(L, it, nl, it->lr);
  for (int k = 0; k < ng; k++) x[k] = ADD(L, it->Ly[k].comm_f[CM_TP], it->Ly[k].comm_b[CM_TP]);
  part[RP_TP_COMM] = ON_DEV(gsum(L, it, nl, x), ADD(L, E->comm_f[CM_TP], E->comm_b[CM_TP]),
                            ADD(L, H->comm_f[CM_TP], H->comm_b[CM_TP]));
  for (int k = 0; k < ng; k++) x[k] = ADD(L, it->Ly[k].comm_f[CM_CP], it->Ly[k].comm_b[CM_CP]);
  part[RP_CP_COMM] = gsum(L, it, nl, x);
  for (int k = 0; k < ng; k++) x[k] = ADD(L, it->Ly[k].comm_f[CM_EP], it->Ly[k].comm_b[CM_EP]);
  part[RP_EP_COMM] = gsum(L, it, nl, x);
  for (int k = 0; k < ng; k++) x[k] = ADD(L, it->Ly[k].comm_f[CM_DP], it->Ly[k].comm_b[CM_DP]);
  GId zero3 = gsum(L, it, nl, x);
#undef ON_DEV
  for (int i = RP_FORWARD; i <= RP_EP_COMM; i++) part[i] = MUL(L, L->m, part[i]);
  it->zero3 = MUL(L, L->m, zero3);
  /* pipeline send/receive: what the sends add to the schedule, and the blocking sends and
   * host-bound time inside the busy device's blocks */
  GId hostdev =
      ADD(L, ADD(L, gsum(L, it, nl, it->host_l), g_select(g, with_e, it->host_e, z)), g_select(g, with_h, it->host_h, z));
  part[RP_HOST] = MUL(L, L->m, hostdev);
  GId nlayers = nl[0];
  for (int k = 1; k < ng; k++) nlayers = ADD(L, nlayers, nl[k]);
  part[RP_PP_COMM] = ADD(L, SUB(L, it->makespan, it->nop2p), MUL3(L, L->m, nlayers, MUL(L, K(L, 2), it->blocking)));
  /* one stage has no bubble: 0, not the rounding residue of simulation against closed form */
  part[RP_BUBBLE] = g_select(g, one_dev, z, MAX(L, z, SUB(L, it->nop2p, busy)));
}

/* The parameters of the first and of the last device, and of the one that holds the most
 * (data parallelism reduces those), with the tensors that hold them. */
static void iter_params(Lower *L, Iter *it) {
  Graph *g = L->g;
  Acc *E = it->E, *H = it->H;
  GId one_dev = it->one_dev, z = it->z;
  bool tied = bool_or(L, L->model, "tied_embeddings", false);
  GId x[RT_MAX_GROUPS] = {0}, params0, paramsl, tensors0, tensorsl, t0, tl;
  /* per device, its layers' share; the first holds the embedding (and a head that is not tied
   * to it, with one stage), the last the head */
#define ON_ENDS(f, d0, dl) \
  do { \
    GFIELD(it, f, x); \
    d0 = ADD(L, ADD(L, gsum(L, it, it->l0, x), E->f), g_select(g, one_dev, tied ? z : H->f, z)); \
    dl = ADD(L, gsum(L, it, it->ll, x), H->f); \
  } while (0)
  ON_ENDS(params, params0, paramsl);
  GId params = g_select(g, one_dev, params0, MAX(L, params0, paramsl));
  /* and the tensors that hold them (the optimizer step's per-tensor cost), counted alike */
  ON_ENDS(tensors, tensors0, tensorsl);
  GId first = g_select(g, one_dev, K(L, 1), g_bin(g, GN_GE, params0, paramsl)); /* the device reduced */
  it->tensors = g_select(g, first, tensors0, tensorsl);
  it->params0 = params0, it->paramsl = paramsl, it->params = params;
  /* the experts' share, replicated over edp rather than dp x cp (none in the embedding or head) */
  GFIELD(it, eparams, x);
  GId e0 = gsum(L, it, it->l0, x), el = gsum(L, it, it->ll, x);
  it->eparams0 = it->eparamsl = it->eparams = it->etensors = -1;
  /* the trained parameters (all but frozen ones): gradients, optimizer state and the dp
   * reduction are theirs; a frozen model's experts are frozen with it */
  ON_ENDS(trainable, t0, tl);
#undef ON_ENDS
  it->train0 = t0, it->trainl = tl, it->train = g_select(g, one_dev, t0, MAX(L, t0, tl));
  /* whether any block trains a parameter: arithmetic on the axes (a sweep's check), not the
   * device counts (a layout's are kernel calls) */
  GId any = ADD(L, E->trainable, H->trainable);
  for (int k = 0; k < it->ng; k++) any = ADD(L, any, it->Ly[k].trainable);
  if (cv(L, any) == 0)
    lower_err(L, L->at,
              "scenario `%s`: model `%s` trains no parameter (frozen = true and no LoRA adapters: lora_rank = 0)",
              sema_decl_name(L->scenario), sema_decl_name(L->model));
  else if (isnan(cv(L, any))) /* a sweep's point */
    lower_check(L, g_bin(g, GN_GT, any, z), "the model trains no parameter (frozen, lora_rank = 0)");
  it->etrain0 = it->etrainl = it->etrain = -1;
  if (kf(L, e0) && kf(L, el)) return;
  GFIELD(it, etensors, x);
  it->eparams0 = e0, it->eparamsl = el, it->eparams = g_select(g, first, e0, el);
  it->etensors = g_select(g, first, gsum(L, it, it->l0, x), gsum(L, it, it->ll, x));
  it->etrain0 = L->frozen ? z : e0, it->etrainl = L->frozen ? z : el, it->etrain = L->frozen ? z : it->eparams;
}

/* Of P parameters of which E are the experts' (E < 0: none), those a rank keeps when ZeRO
 * shards the dense ones over dp x cp and the experts' over edp. */
static GId shard_of(Lower *L, const Iter *it, GId P, GId E) {
  if (E < 0) return DIV(L, P, it->shard);
  return ADD(L, DIV(L, SUB(L, P, E), it->shard), DIV(L, E, L->edp));
}

/* One gradient buffer's data-parallel collectives over `group`: P elements in buckets of at
 * most `size`; the reduction (all of it, and its last bucket) unless ZeRO 3 reduces per
 * layer, and a sharded optimizer's parameter gather (all, last bucket). */
typedef struct DpBuf {
  GId red, last_red, gather, last_gather;
} DpBuf;

static DpBuf dp_buffer(Lower *L, Iter *it, GId P, GId size, int group) {
  Graph *g = L->g;
  GId z = it->z, grad_el = it->grad_el, w_el = it->w_el, z3 = it->z3, z0 = EQ(L, L->zero, 0);
  GId bucket = g_min(g, size, P);
  GId nb = g_un(g, GN_CEIL, DIV(L, P, bucket));
  GId last_el = SUB(L, P, MUL(L, SUB(L, nb, K(L, 1)), bucket));
  DpBuf r = {z, z, z, z};
  if (!kt(L, z3)) {
    GId gb_full = MUL(L, bucket, grad_el), gb_last = MUL(L, last_el, grad_el);
    /* a sharded optimizer's reduction: a reduce-scatter, or (DeepSpeed's ZeRO 1/2) an
     * all-reduce of each bucket of which each rank keeps its slice */
    RtKernel sharded = L->st.sharded_allreduce ? RTK_ALLREDUCE : RTK_REDUCESCATTER;
    GId full_b = PICK(L, z0, lower_coll(L, RTK_ALLREDUCE, gb_full, group, "dp gradients"),
                      lower_coll(L, sharded, gb_full, group, "dp gradients"));
    r.last_red = PICK(L, z0, lower_coll(L, RTK_ALLREDUCE, gb_last, group, "dp gradients"),
                      lower_coll(L, sharded, gb_last, group, "dp gradients"));
    r.red = ADD(L, MUL(L, SUB(L, nb, K(L, 1)), full_b), r.last_red);
  }
  GId gather_on = AND(L, it->z1, g_un(g, GN_NOT, z3));
  r.last_gather = PICK(L, gather_on, lower_coll(L, RTK_ALLGATHER, MUL(L, last_el, w_el), group, "dp parameters"), z);
  r.gather = PICK(
      L, gather_on,
      ADD(L, MUL(L, SUB(L, nb, K(L, 1)), lower_coll(L, RTK_ALLGATHER, MUL(L, bucket, w_el), group, "dp parameters")),
          r.last_gather),
      z);
  r.last_red = PICK(L, z3, z, r.last_red);
  r.red = PICK(L, z3, z, r.red);
  return r;
}

/* Data parallelism, for the device that holds the most parameters: its gradient reduction
 * and parameter gathers by ZeRO stage and bucket, exposed as overlap_dp allows.  Dense
 * parameters are reduced over dp x cp; the experts', in a buffer of their own, over edp
 * (Megatron-Core's expert-data-parallel group; distributed_data_parallel.py). */
static void iter_dp(Lower *L, Iter *it) {
  Graph *g = L->g;
  GId z = it->z, params = it->train;
  /* the device's layers, once, as its first forward and last backward run: alone, not merged
   * by the EP overlap */
  GId dev_f = gsum(L, it, it->nl, it->wf), dev_b = gsum(L, it, it->nl, it->wb);
  it->grad_el = K(L, lower_grad_bytes(L));
  it->w_el = L->bytes_act; /* weights are stored as the activations are */
  GId size = lower_field(L, L->plan, "plan", "dp_bucket_elements", 40e6);
  it->bucket = g_min(g, size, params);
  it->shard = MUL(L, L->dp, L->cp); /* ranks that hold the same weights: ZeRO shards over them */
  it->z3 = EQ(L, L->zero, 3), it->z1 = GE(L, L->zero, 1), it->z2 = GE(L, L->zero, 2);
  DpBuf d;
  if (it->etrain < 0) {
    d = dp_buffer(L, it, params, size, G_DPCP);
  } else { /* both buffers' buckets, the dense one's last (the embedding's) left exposed */
    GId has = g_bin(g, GN_GT, it->etrain, K(L, 0));
    DpBuf e = dp_buffer(L, it, MAX(L, it->etrain, K(L, 1)), size, G_EDP);
    d = dp_buffer(L, it, SUB(L, params, it->etrain), size, G_DPCP);
    d.red = ADD(L, d.red, PICK(L, has, e.red, z));
    d.gather = ADD(L, d.gather, PICK(L, has, e.gather, z));
  }
  GId last_red = d.last_red, dp_red = d.red, last_gather = d.last_gather, dp_gather = d.gather;
  /* The window a reduction hides behind: the device's last micro-batch backward (its buckets
   * become ready as it runs).  Interleaved, each model chunk reduces after its own last
   * backward, and min(pp, m) backwards of every earlier chunk still follow it (Megatron runs
   * micro-batches in groups of pp per chunk), so chunk c's reduction has c * min(pp, m) more
   * chunk backwards to hide behind: with v chunks of equal size the stream's excess is
   * T - (1 + (v - 1) min(pp, m)) b_chunk.  The parameter gathers mirror it in the forward. */
  GId groups = ADD(L, K(L, 1), MUL(L, SUB(L, L->vs, K(L, 1)), g_min(g, L->pp, L->m)));
  GId bwin = DIV(L, MUL(L, dev_b, groups), L->vs), fwin = DIV(L, MUL(L, dev_f, groups), L->vs);
  GId red_exposed = PICK(L, L->overlap_dp, MAX(L, last_red, SUB(L, dp_red, bwin)), dp_red);
  /* ZeRO 2 on a stack that reduces every micro-batch (DeepSpeed): m reductions, each hidden
   * (with overlap) behind that micro-batch's backward on this device */
  if (L->st.zero2_every) {
    GId every = MUL(L, L->m, PICK(L, L->overlap_dp, MAX(L, last_red, SUB(L, dp_red, dev_b)), dp_red));
    red_exposed = PICK(L, EQ(L, L->zero, 2), every, red_exposed);
  }
  GId gather_exposed = PICK(L, L->overlap_pg, MAX(L, last_gather, SUB(L, dp_gather, fwin)), dp_gather);
  GId dp_exposed = ADD(L, red_exposed, gather_exposed);
  it->part[RP_DP_COMM] = ADD(L, dp_exposed, it->zero3);
  it->dp_exposed = dp_exposed;
}

/* The optimizer step over this device's parameters (its shard of them under ZeRO), and the
 * iteration: makespan, exposed data-parallel communication, optimizer. */
static void iter_optimizer(Lower *L, Iter *it) {
  Graph *g = L->g;
  GId params = it->train, shard = it->shard, z1 = it->z1, tensors = it->tensors;
  bool sgd = !strcmp(word_or(L, L->plan, "optimizer", "adam"), "sgd");
  GId opt_params = PICK(L, z1, shard_of(L, it, params, it->etrain), params);
  /* ZeRO 1 and 2 (Megatron's distributed optimizer): a rank steps one fp32 shard tensor per
   * parameter whose range overlaps its 1/shard of the flat gradient buffer, about
   * tensors/shard of them (a tensor split at a shard boundary counts once; the experts'
   * buffer is sharded over edp); ZeRO 3 likewise. */
  GId per = g_un(g, GN_CEIL, DIV(L, tensors, shard));
  if (it->etensors >= 0)
    per = ADD(L, g_un(g, GN_CEIL, DIV(L, SUB(L, tensors, it->etensors), shard)),
              g_un(g, GN_CEIL, DIV(L, it->etensors, L->edp)));
  GId opt_tensors = PICK(L, z1, MAX(L, K(L, 1), per), tensors);
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

/* The model's parameters on the first and on the last pipeline stage (all of their ranks;
 * the whole model with one stage; the head's copy of a tied embedding on the last), and on
 * the GPU that holds most (iter_params').  total: the model's; pad: an embedding's extra rows. */
static void iter_stage_params(Lower *L, Iter *it, GId total, GId pad) {
  Graph *g = L->g;
  Acc *E = it->E, *H = it->H;
  GId x[RT_MAX_GROUPS] = {0};
  GFIELD(it, wtotal, x);
  GId first = SUB(L, ADD(L, gsum(L, it, it->l0, x), E->wtotal), pad);
  GId last = ADD(L, gsum(L, it, it->ll, x), H->wtotal);
  if (sema_ref(L->s, L->model, "head")) last = SUB(L, last, pad);
  graph_output(g, lower_output_names[O_PARAMS_FIRST], g_select(g, it->one_dev, total, first));
  graph_output(g, lower_output_names[O_PARAMS_LAST], g_select(g, it->one_dev, total, last));
  emit(L, O_PARAMS_GPU, it->params);
}

/* Throughput: tokens a second, model and hardware FLOPs (recompute included), per GPU, MFU. */
static void iter_throughput(Lower *L, Iter *it) {
  Acc *E = it->E, *H = it->H;
  GId full = L->rec_full, sel = L->rec_sel, z = it->z, iteration = it->iteration, x[RT_MAX_GROUPS] = {0};
  GId tokens = MUL(L, L->gb, L->seq);
  emit(L, O_TOKENS, DIV(L, tokens, iteration));
  GId ranks = MUL3(L, L->tp, L->cp, MUL(L, L->m, L->dp)); /* forward FLOP per rank -> whole iteration */
  GFIELD(it, flops, x);
  GId layer_flops = gsum(L, it, L->gcount, x);
  GId fwd_flops = ADD(L, ADD(L, layer_flops, E->flops), H->flops);
  GId model_flops = MUL3(L, K(L, 3), fwd_flops, ranks);
  GFIELD(it, sel_flops, x);
  GId rec_flops = PICK(L, full, MUL(L, L->rec_frac, layer_flops), PICK(L, sel, gsum(L, it, L->gcount, x), z));
  GId hw_flops = ADD(L, model_flops, MUL(L, rec_flops, ranks));
  GId gpus = MUL(L, MUL(L, L->tp, L->pp), MUL(L, L->dp, L->cp));
  GId per_gpu = DIV(L, model_flops, MUL(L, iteration, gpus));
  double peak = L->gpu->peak[L->dt_plan] > 0 ? L->gpu->peak[L->dt_plan] : L->gpu->peak[RT_FP16];
  /* the model's parameters, and those one token uses (MoE: its top_k experts); a tied head's
   * output weights are the embedding's */
  bool tied = bool_or(L, L->model, "tied_embeddings", false);
  GFIELD(it, wtotal, x);
  GId total = ADD(L, ADD(L, gsum(L, it, L->gcount, x), E->wtotal), H->wtotal);
  GFIELD(it, wactive, x);
  GId active = ADD(L, ADD(L, gsum(L, it, L->gcount, x), E->wactive), H->wactive);
  if (tied) total = SUB(L, total, E->wtied), active = SUB(L, active, E->wtied);
  /* the vocabulary as published, not as padded for tp (Megatron's 128 * tp multiple): the
   * embedding's extra rows, and the head's too where it has its own */
  GId pad = MAX(L, z, SUB(L, E->wtied, MUL(L, lower_field(L, L->model, "model", "vocab", 0), L->hidden)));
  GId pads = !tied && sema_ref(L->s, L->model, "head") ? MUL(L, K(L, 2), pad) : pad;
  total = SUB(L, total, pads), active = SUB(L, active, pads);
  emit(L, O_PARAMS, total);
  emit(L, O_ACTIVE, active);
  emit(L, O_TOKENS_ITER, tokens);
  iter_stage_params(L, it, total, pad);
  emit(L, O_MODEL_FLOPS, model_flops);
  emit(L, O_HW_FLOPS, hw_flops);
  emit(L, O_TFLOPS, per_gpu);
  emit(L, O_MFU, DIV(L, per_gpu, K(L, peak)));
}

/* Memory per GPU of the first and of the last device: weights, gradients and optimizer
 * state (sharded by ZeRO), activations in flight, buffers; the larger is reported. */
static void iter_memory(Lower *L, Iter *it) {
  Graph *g = L->g;
  Acc *E = it->E, *H = it->H;
  GId full = L->rec_full, sel = L->rec_sel, z = it->z, one_dev = it->one_dev;
  GId params0 = it->params0, paramsl = it->paramsl;
  GId shard = it->shard, w_el = it->w_el, grad_el = it->grad_el, bucket = it->bucket;
  GId z1 = it->z1, z2 = it->z2, z3 = it->z3;
  bool sgd = it->sgd;
  int ng = it->ng;
  /* per kind of layer, what it keeps; work: the largest layer rematerialised in backward;
   * lparams: the largest layer's parameters */
  GId act_layer[RT_MAX_GROUPS], work = z, lparams = z, ltrain = z, one_layer = z;
  for (int k = 0; k < ng; k++) {
    Acc *Ly = &it->Ly[k];
    /* full recompute keeps a layer's input; of recompute_layers' share of the layers only */
    GId kept_full = ADD(L, MUL(L, L->rec_frac, Ly->in_bytes), MUL(L, SUB(L, K(L, 1), L->rec_frac), Ly->act));
    act_layer[k] = PICK(L, full, kept_full, PICK(L, sel, SUB(L, Ly->act, Ly->act_sel), Ly->act));
    /* a captured layer keeps static copies of its input and output per micro-batch in flight */
    act_layer[k] = ADD(L, act_layer[k], PICK(L, L->graphs, MUL(L, K(L, 2), Ly->in_bytes), z));
    GId wk = PICK(L, full, Ly->act, PICK(L, sel, Ly->act_sel, z));
    work = k ? MAX(L, work, wk) : wk;
    one_layer = k ? MAX(L, one_layer, act_layer[k]) : act_layer[k];
    lparams = k ? MAX(L, lparams, Ly->params) : Ly->params;
    ltrain = k ? MAX(L, ltrain, Ly->trainable) : Ly->trainable;
  }
  GId opt_el = K(L, (L->dt_plan == RT_FP32 || L->dt_plan == RT_TF32 ? 8 : 12) - (sgd ? 4 : 0));
  GId mem0[RM_N], meml[RM_N];
  GId pdev[2] = {params0, g_select(g, one_dev, params0, paramsl)};
  GId edev[2] = {it->eparams0, it->eparams < 0 ? -1 : g_select(g, one_dev, it->eparams0, it->eparamsl)};
  GId tdev[2] = {it->train0, g_select(g, one_dev, it->train0, it->trainl)};
  GId etdev[2] = {it->etrain0, it->etrain < 0 ? -1 : g_select(g, one_dev, it->etrain0, it->etrainl)};
  const GId *ldev[2] = {it->l0, it->ll};
  GId *mem[2] = {mem0, meml};
  for (int d = 0; d < 2; d++) {
    GId dev = d == 0 ? z : SUB(L, L->pp, K(L, 1));
    GId P = pdev[d], Ps = shard_of(L, it, P, edev[d]); /* the rank's shard of them */
    mem[d][RM_WEIGHTS] = MUL(L, PICK(L, z3, Ps, P), w_el);
    GId T = tdev[d], Ts = shard_of(L, it, T, etdev[d]); /* the trained ones */
    mem[d][RM_GRADIENTS] = MUL(L, PICK(L, z2, Ts, T), grad_el);
    mem[d][RM_OPTIMIZER] = MUL(L, PICK(L, z1, Ts, T), opt_el);
    GId fl = in_flight(L, dev);
    GId a = z; /* each kind's layers of a chunk, times the chunks in flight */
    for (int k = 0; k < ng; k++) {
      GId kept = MUL3(L, fl, DIV(L, ldev[d][k], L->vs), act_layer[k]);
      a = k ? ADD(L, a, kept) : kept;
    }
    a = ADD(L, a, work);
    /* the EP overlap's warm-up runs one forward more, so it ends holding what a 1F1B step
     * peaks at; each merged step then makes a layer's activations while its backward frees
     * one: a layer more, the largest (inferred from combined_1f1b's order) */
    a = ADD(L, a, PICK(L, L->overlap_ep, one_layer, z));
    if (d == 0) a = ADD(L, a, MUL(L, first_chunk_in_flight(L), E->act));
    GId head_act = MUL(L, last_chunk_in_flight(L), H->act);
    a = ADD(L, a, d == 1 ? head_act : g_select(g, one_dev, head_act, z));
    mem[d][RM_ACTIVATIONS] = a;
    const Stack *st = &L->st;
    GId gbuf = MUL(L, bucket, grad_el);
    /* ZeRO 3 on a stack that holds whole layers' unsharded gradients until their
     * reduce-scatter ends (unsharded_grad_layers), instead of a bucket */
    if (st->grad_layers >= 0) gbuf = PICK(L, z3, MUL3(L, K(L, st->grad_layers), ltrain, grad_el), gbuf);
    GId buf = g_select(g, g_bin(g, GN_GT, shard, K(L, 1)), gbuf, z);
    /* ZeRO-3's gathered layers: the one computing and those prefetched, or, kept from the
     * forward for the backward (no reshard), all of this device's; at most max_live */
    GId x[RT_MAX_GROUPS] = {0};
    GFIELD(it, params, x);
    GId live = st->reshard ? MUL(L, K(L, 1 + (st->prefetch > 1 ? st->prefetch : 1)), lparams)
                           : gsum(L, it, ldev[d], x);
    if (!isinf(st->max_live)) live = g_min(g, live, MAX(L, K(L, st->max_live), lparams));
    /* and the output layer's weights, whole (in the activations' dtype) for its backward at the
     * activations' peak */
    GId head_w = MUL(L, H->params, L->bytes_act);
    head_w = d == 1 ? head_w : g_select(g, one_dev, head_w, z);
    buf = PICK(L, z3, ADD(L, ADD(L, buf, MUL(L, live, lower_zero3_weight_bytes(L))), head_w), buf);
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
  memcpy(L->out->stage_memory[0], mem0, sizeof mem0);
  memcpy(L->out->stage_memory[1], meml, sizeof meml);
  GId last_more = g_bin(g, GN_GT, peakl, peak0);
  for (int i = 0; i < RM_N; i++) graph_output(g, lower_memory_outputs[i], g_select(g, last_more, meml[i], mem0[i]));
  emit(L, O_PEAK, MAX(L, peak0, peakl));
  emit(L, O_PEAK_STAGE, g_select(g, last_more, SUB(L, L->pp, K(L, 1)), z));
}

void lower_assemble(Lower *L, Acc *E, Acc *Ly, Acc *H) {
  Iter it = {.E = E, .Ly = Ly, .H = H, .ng = L->ngroups};
  iter_pipeline(L, &it);
  iter_parts(L, &it);
  iter_params(L, &it);
  iter_dp(L, &it);
  iter_optimizer(L, &it);
  iter_throughput(L, &it);
  iter_memory(L, &it);
}
