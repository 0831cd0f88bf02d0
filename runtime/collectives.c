/* collectives.c - the time of one NCCL collective over a cluster's tier hierarchy.
 *
 * A group of nodes x gpus_per_node ranks (consecutive GPUs of consecutive nodes) is reduced to
 * one "path": the per-rank bandwidth of its bottleneck and the latencies of the hops a ring step
 * crosses.  Inside one node that is the innermost tier (NVLink); across nodes it is the slowest
 * tier between the first inter-node tier and the one whose span covers the group, seen per node
 * (a ring enters and leaves each node once per channel, so its inter-node edges share the node's
 * NICs), and the NVLink tier inside each node, whichever is slower.
 *
 * The time of a call then follows NCCL's own cost model (src/graph/tuning.cc): for each
 * algorithm (ring; tree for all-reduce) and protocol (LL for small messages, Simple for large)
 *
 *   t = base latency + intra-node steps x NVLink hop + inter-node steps x network hop
 *     + bus bytes / (bottleneck bandwidth x protocol efficiency)
 *     + pipeline fill: inside a node, every ring step also waits for one chunk in flight,
 *
 * and NCCL's tuner runs the cheapest one, so we take the minimum.  The fill term is the
 * size-dependent efficiency seen on NVLink: a message smaller than one chunk per rank runs at
 * half the link rate, a larger one approaches it (single-node nccl-tests: Selene's all-reduce
 * reaches 59 % of its plateau at 4 MiB per rank, 75 % at 16 MiB).  A ring across nodes pays
 * its hop latencies but no fill: the samples with one GPU per node show none (Vista's 8-node
 * all-reduce holds 23.5-24 GB/s of bus bandwidth from 2.6 to 16 MB per rank, where a fill per
 * step would have cost a third of the rate at the low end).  Then, if the cluster carries a
 * calibration table for (kernel, fp16, gpus_per_node=G nodes=N), its correction (interpolated
 * over log bytes) scales the answer and RT_CALIBRATED is set.
 *
 * The constants below are NCCL 2.x's where it has one (base latencies, protocol efficiencies);
 * the others are ours and say so.  Everything is a pure function of its arguments. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib.h"
#include "llmp_rt.h"


/* NCCL protocols we model.  LL moves 8 bytes of data per 16-byte store (half the link rate)
 * but needs no handshakes; Simple moves whole chunks at the link rate behind a flag per chunk.
 * Base latencies are tuning.cc's (ring: baseLat LL 6.6 us, Simple 8.4 us).  A tier's `latency`
 * is its Simple hop (tuning.cc's hwLat: 3.4 us on NVLink, which hw/systems/ uses); LL's hop is
 * the same fraction of it as in tuning.cc's table: 0.6 / 3.4 on NVLink, 2.7 / 14 on the
 * network.  LL128 (tuning.cc's third protocol) is not modelled: without NCCL's per-channel
 * caps it makes the 64 KiB - 64 MiB range up to 2x too fast on the nccl-tests rows. */
enum { RT_PROTO_LL, RT_PROTO_SIMPLE, RT_NPROTO };
static const double rt_proto_base[RT_NPROTO] = {6.6e-6, 8.4e-6};
static const double rt_proto_eff[RT_NPROTO] = {0.5, 1.0}; /* data per byte moved */
static const double rt_proto_hop_nvlink[RT_NPROTO] = {0.6 / 3.4, 1.0};
static const double rt_proto_hop_net[RT_NPROTO] = {2.7 / 14.0, 1.0};
/* LL's flag-per-word stores also cap its rate well below the link's; NCCL limits it per
 * channel.  Ours: LL is only worth it below a few hundred KiB, so a fixed cap suffices. */
enum { RT_LL_MAX_BYTES = 1 << 20 }; /* per rank: above this NCCL does not pick LL */

/* Simple's chunk in flight per ring step: NCCL_BUFFSIZE (4 MiB) over NCCL_STEPS (8) slots,
 * times the channels that run in parallel (ours: 8, NCCL's usual count on NVLink and on
 * 4-8 NIC nodes).  A ring step cannot finish before its chunk has crossed the slowest hop. */
static const double rt_fill_chunk = 4.0 * 1048576.0 / 8.0 * 8.0;
/* NCCL's tree all-reduce reaches ~92% of the ring's bus bandwidth (tuning.cc: busBw * .92). */
static const double rt_tree_eff = 0.92;
/* A transport's achievable fraction of the link rate when the tier gives none: NCCL's Simple
 * protocol reaches ~80% of NVLink (the reduction and flag traffic share the link and HBM) and
 * ~95% of an RDMA NIC (nccl-tests on Vista's NDR, paper-samples/gh200-vista/nccl/). */
static const double rt_default_eff_nvlink = 0.80, rt_default_eff_net = 0.95;

/* NVLink SHARP (NVLS): the all-reduce that NVSwitch 3 (DGX/HGX H100 and later) reduces in the
 * switch.  A tier's switch_reduction says whether NCCL may use it (false: NCCL_NVLS_ENABLE=0);
 * where the tier does not say, the rule is keyed on what it does say:
 *   the group is inside one node, has more than 2 GPUs, and the node's innermost tier is a
 *   switch (links_per_node 0: one port set per GPU) of at least rt_nvls_min_bw per GPU,
 * i.e. NVLink 4 (450 GB/s per GPU and direction) or newer; NVSwitch 2 (A100, 300 GB/s) has no
 * SHARP and gets the ring.  switch_reduction true drops the bandwidth test, not the others.
 * Multi-node NVLS (NVLS-tree over the NICs) is not modelled.
 * Each GPU's slice of 1/n is reduced by one multimem load-reduce (the switch reads the slice
 * from every GPU) and returned by one multicast store, so every GPU sends and receives
 * (n + 1)/n x bytes, against the ring's 2(n - 1)/n.  rt_nvls_eff, the fraction of the link
 * NVLS reaches, is ours: NCCL runs NVLS on fewer channels and the switch's reduction caps it.
 * It is the one figure read off a measured curve: the large-message plateau of NVIDIA's DGX
 * H100 nccl-tests output (busbw ~480 GB/s, i.e. ~0.68 of 450 GB/s with (n + 1)/n traffic), the
 * same published/nccl_collective_bandwidth.csv rows the validation checks, so for the Eos
 * rows above 1 GiB it checks the shape of the curve, not its level. */
static const double rt_nvls_min_bw = 450e9, rt_nvls_eff = 0.68;
/* NVLS's latency: tuning.cc's hwLat for NVLS on NVLink (25 us, one figure for the call). */
static const double rt_nvls_lat = 25e-6;

/* What a group's traffic crosses: per-rank bottleneck bandwidths and hop latencies. */
typedef struct RtPath {
  int n, nodes, gpn;         /* ranks, nodes, GPUs per node */
  double bw_intra;           /* bytes/s a GPU reaches its ring neighbours with in-node */
  double bw_net;             /* bytes/s through the node's NICs (all participating GPUs) */
  double bw_nic;             /* bytes/s of the one NIC a single GPU drives */
  double lat_intra, lat_net; /* seconds per hop */
} RtPath;

static double rt_tier_eff(const RtTier *t, double dflt) {
  return t->efficiency > 0 && t->efficiency <= 1 ? t->efficiency : dflt;
}

/* The GPUs' own fabric (NVLink, Infinity Fabric): the innermost tier if it is inside a node
 * (span 0), or, on nodes of several GPUs, whatever its span, since it is what joins a node's
 * GPUs: a span of N nodes is one NVLink domain of N nodes (an NVL72 rack: 18 trays of 4
 * GPUs).  NULL where the innermost tier is a network (one GPU per node, as on Vista). */
static const RtTier *rt_intra_tier(const RtCluster *c) {
  if (c->ntiers < 1) return NULL;
  const RtTier *t = &c->tiers[0];
  return t->span_nodes == 0 || c->gpus_per_node > 1 ? t : NULL;
}

int rt_domain_nodes(const RtCluster *c) {
  const RtTier *t = c ? rt_intra_tier(c) : NULL;
  if (!t || t->span_nodes == 0) return 1;
  return t->span_nodes < 0 || t->span_nodes > c->nodes ? c->nodes : t->span_nodes;
}

/* The ports one GPU has on an intra-node tier: links_per_node / GPUs (0: one, a switch). */
static int rt_gpu_ports(const RtCluster *c, const RtTier *t) {
  int ports = t->links_per_node > 0 ? t->links_per_node / c->gpus_per_node : 1;
  return ports < 1 ? 1 : ports;
}

/* The links of a node on an inter-node tier (links_per_node 0: one NIC per GPU). */
static int rt_node_links(const RtCluster *c, const RtTier *t) {
  return t->links_per_node > 0 ? t->links_per_node : c->gpus_per_node;
}

/* A GPU of a gpn-GPU group inside a node.  links_per_node of the innermost tier counts the GPU
 * ports of the node: 0 or one per GPU is a switch (one port reaches every peer); more is a
 * mesh without a switch (Perlmutter: 4 GPUs x 3 peers = 12 ports of 100 GB/s), where each port
 * joins one peer, so a GPU drives at most gpn-1 of its ports. */
static double rt_intra_bw(const RtCluster *c, const RtTier *t, int gpn) {
  int ports = rt_gpu_ports(c, t);
  if (ports > gpn - 1) ports = gpn - 1;
  return t->bandwidth * ports * rt_tier_eff(t, rt_default_eff_nvlink);
}

/* Fills p for a group of nodes x gpn GPUs whose nodes are node_stride apart (its first
 * instance, from node 0); returns 0, or -1 if the cluster cannot hold it.  Where the GPUs'
 * fabric spans D > 1 nodes, a domain of D nodes stands for a node: a group inside one domain
 * is an in-node group of all its GPUs, and a larger one has p->nodes domains of n / domains
 * GPUs each (the fewest whole GPUs a domain holds, rounded down), whose network links are
 * the D nodes' links. */
static int rt_path(const RtCluster *c, int nodes, int gpn, int node_stride, RtPath *p) {
  const RtTier *in = rt_intra_tier(c);
  int dn = rt_domain_nodes(c);
  double ext = (nodes - 1.0) * node_stride + 1; /* the nodes the group spans */
  memset(p, 0, sizeof *p);
  p->n = nodes * gpn, p->nodes = nodes, p->gpn = gpn;
  if (ext > c->nodes) return -1;
  if (dn > 1) {
    p->nodes = (int)((ext - 1) / dn) + 1;
    p->gpn = p->n / p->nodes;
  }
  if (p->gpn > 1) {
    if (!in) return -1;
    p->bw_intra = rt_intra_bw(c, in, p->gpn);
    p->lat_intra = in->latency;
  }
  if (p->nodes == 1) return 0;
  p->bw_net = INFINITY, p->bw_nic = INFINITY;
  /* Every tier from the first inter-node one to the first whose span covers the group: the
   * ring's node-to-node edges cross all of them, so the slowest sets the rate and the
   * outermost (the longest path, most switch hops) the latency. */
  for (int i = in ? 1 : 0; i < c->ntiers; i++) {
    const RtTier *t = &c->tiers[i];
    int links = rt_node_links(c, t) * dn;
    double eff = rt_tier_eff(t, rt_default_eff_net);
    /* A GPU drives the NIC next to it; gpn GPUs use at most gpn NICs and share fewer. */
    double node = t->bandwidth * eff * (links < p->gpn ? links : p->gpn);
    if (node < p->bw_net) p->bw_net = node;
    if (t->bandwidth * eff < p->bw_nic) p->bw_nic = t->bandwidth * eff;
    p->lat_net = t->latency;
    if (t->span_nodes < 0 || t->span_nodes >= ext) return 0;
  }
  return -1; /* no tier spans that many nodes */
}

/* The per-rank bus bandwidth of a ring through the group: NVLink in-node, the NICs between. */
static double rt_ring_bw(const RtPath *p) {
  double bw = INFINITY;
  if (p->gpn > 1) bw = p->bw_intra;
  if (p->nodes > 1 && p->bw_net < bw) bw = p->bw_net;
  return bw;
}

/* One ring collective of `steps` steps (inter of them node-to-node) moving bus_bytes per rank.
 * rank_bytes is the slice a rank contributes per step, which bounds the chunk in flight.  Inside
 * a node every step waits for it (the fill, above); across nodes every step's pace is set by
 * its network edges, which pay their hop latency only. */
static double rt_ring_time(const RtPath *p, double bus_bytes, double rank_bytes, int steps, int inter) {
  double bw = rt_ring_bw(p), best = INFINITY;
  for (int pr = 0; pr < RT_NPROTO; pr++) {
    if (pr == RT_PROTO_LL && rank_bytes > RT_LL_MAX_BYTES) continue;
    double lat = rt_proto_base[pr] + (steps - inter) * rt_proto_hop_nvlink[pr] * p->lat_intra +
                 inter * rt_proto_hop_net[pr] * p->lat_net;
    double t = lat + bus_bytes / (bw * rt_proto_eff[pr]);
    if (pr == RT_PROTO_SIMPLE && p->nodes == 1) t += steps * fmin(rank_bytes, rt_fill_chunk) / bw;
    if (t < best) best = t;
  }
  return best;
}

/* NVLink SHARP all-reduce inside one node or NVLink domain (see rt_nvls_min_bw), or INFINITY
 * where the rule does not give it.  It moves the message through a pipeline of chunks, each step paying a
 * fixed cost; with chunks sized for the message (NCCL picks channels and chunk by size), a
 * pipeline of total step cost S filling over time B/bw costs at best 2 sqrt(S B / bw) more
 * than the transfer (the optimal-segmentation result: time (sqrt(S) + sqrt(B/bw))^2 less the
 * latency).  S = rt_nvls_step is read off DGX H100 nccl-tests (the Eos rows of
 * published/nccl_collective_bandwidth.csv from 2 MiB up, mean |error| 3.1 %); stas00's H200
 * figures (the same NVLink 4, through torch.distributed) check it (docs/model.md). */
static const double rt_nvls_step = 3.75e-6;
static double rt_nvls_time(const RtCluster *c, const RtPath *p, double bytes) {
  const RtTier *in = rt_intra_tier(c);
  if (p->nodes != 1 || p->gpn <= 2 || !in || in->links_per_node != 0 || in->switch_reduction < 0 ||
      (in->switch_reduction == 0 && in->bandwidth < rt_nvls_min_bw))
    return INFINITY;
  double bw = in->bandwidth * rt_nvls_eff;
  return rt_nvls_lat + (p->n + 1.0) / p->n * bytes / bw + 2 * sqrt(rt_nvls_step * bytes / bw);
}

/* NCCL's double binary tree across nodes, a chain inside each (all-reduce only): latency
 * grows with log2(nodes) rather than with the ranks. */
static double rt_tree_time(const RtPath *p, double bytes) {
  double bw = rt_ring_bw(p) * rt_tree_eff;
  double depth = ceil(log2((double)p->nodes));
  double lat = rt_proto_base[RT_PROTO_SIMPLE] + 2 * ((p->gpn - 1) * p->lat_intra + depth * p->lat_net);
  return lat + 2 * bytes / bw + 2 * (depth + p->gpn - 1) * fmin(bytes, rt_fill_chunk) / bw;
}

static double rt_physics(RtColl k, const RtCluster *c, const RtPath *p, double bytes) {
  int n = p->n, inter = p->nodes > 1 ? p->nodes : 0;
  switch (k) {
  case RT_COLL_ALLREDUCE: {
    double t = rt_ring_time(p, 2.0 * (n - 1) / n * bytes, bytes / n, 2 * (n - 1), 2 * inter);
    if (p->nodes > 2) t = fmin(t, rt_tree_time(p, bytes));
    return fmin(t, rt_nvls_time(c, p, bytes));
  }
  case RT_COLL_ALLGATHER:
  case RT_COLL_REDUCESCATTER: return rt_ring_time(p, (double)(n - 1) / n * bytes, bytes / n, n - 1, inter);
  case RT_COLL_ALLTOALL: {
    /* Every rank sends bytes/n to each peer at once: G-1 of them over NVLink, the n-G remote
     * ones through the node's NICs, which all G GPUs of the node share. */
    double intra = p->gpn > 1 ? (p->gpn - 1.0) / n * bytes / p->bw_intra : 0;
    double net = p->nodes > 1 ? p->gpn * (double)(n - p->gpn) / n * bytes / p->bw_net : 0;
    double lat = rt_proto_base[RT_PROTO_SIMPLE] + (p->nodes > 1 ? p->lat_net : p->lat_intra);
    return lat + fmax(intra, net) + fmin(bytes / n, rt_fill_chunk) / rt_ring_bw(p);
  }
  case RT_COLL_P2P: {
    /* One message over one NVLink port or one NIC. */
    double bw = p->nodes > 1 ? p->bw_nic : p->bw_intra;
    double lat = p->nodes > 1 ? p->lat_net : p->lat_intra;
    return rt_proto_base[RT_PROTO_SIMPLE] + lat + bytes / bw + fmin(bytes, rt_fill_chunk) / bw;
  }
  }
  return NAN;
}

/* The calibration table of this layout, or NULL: resolved at load (calib.c, whose
 * rt_coll_kernels[] is in RtColl order). */
static const RtTable *rt_coll_table(const RtCalib *cal, RtColl k, int nodes, int gpn) {
  return rt_layout_table(cal, (int)k, nodes, gpn);
}

static RtCost rt_bad(void) { return (RtCost){NAN, NAN, RT_BAD_ARGS}; }

static int rt_group_ok(const RtCluster *c, double bytes, int nodes, int gpn) {
  return c && isfinite(bytes) && bytes >= 0 && nodes >= 1 && gpn >= 1 && nodes <= c->nodes && gpn <= c->gpus_per_node &&
         c->ntiers >= 0 && c->ntiers <= RT_MAX_TIERS;
}

static RtCost rt_collective(RtColl k, const RtCluster *c, double bytes, int nodes, int gpn, int node_stride) {
  RtPath p;
  if (!rt_group_ok(c, bytes, nodes, gpn) || node_stride < 1) return rt_bad();
  if (k == RT_COLL_P2P && !((nodes == 1 && gpn == 2) || (nodes == 2 && gpn == 1))) return rt_bad();
  /* One rank: nothing moves (frameworks skip the call); a size-0 call is NCCL's no-op. */
  if (nodes * gpn == 1 || bytes == 0) return (RtCost){0, 0, 0};
  if (rt_path(c, nodes, gpn, node_stride, &p) != 0) return rt_bad();
  RtCost cost = {rt_physics(k, c, &p, bytes), 0, 0};
  const RtTable *t = c->calib ? rt_coll_table(c->calib, k, nodes, gpn) : NULL;
  if (t) {
    cost.fwd *= rt_table_eval(t, 0, &bytes, &cost.flags);
    cost.flags |= RT_CALIBRATED;
  }
  return cost;
}

/* The chance that a token misses a unit of u consecutive experts: its top_k experts drawn
 * uniformly among the experts of group_top_k groups, themselves drawn uniformly of `groups`
 * equal groups (balanced routing, DeepSeek-V3's node-limited routing; groups = 1 without).
 * A unit that neither holds whole groups nor lies inside one is taken as ungrouped. */
static double rt_miss_of(double pool, double u, int k) {
  double p = 1; /* C(pool - u, k) / C(pool, k) */
  for (int i = 0; i < k; i++) p *= fmax(0, pool - u - i) / (pool - i);
  return p;
}
static double rt_binom(int n, int k) { /* C(n, k) by its product (lgamma writes signgam: not thread-safe) */
  double c = 1;
  for (int i = 1; i <= k; i++) c = c * (n - k + i) / i;
  return c;
}
double rt_dispatch_miss(int experts, int top_k, int groups, int group_top_k, int u) {
  if (groups < 1 || group_top_k < 1 || group_top_k > groups || experts % groups || u < 1 || u > experts) return NAN;
  int s = experts / groups, pool = group_top_k * s;
  if (groups == 1 || (u % s && s % u)) return rt_miss_of(experts, u, top_k);
  if (u < s) /* inside one group: chosen with chance group_top_k / groups */
    return 1 - (double)group_top_k / groups + (double)group_top_k / groups * rt_miss_of(pool, u, top_k);
  int m = u / s; /* whole groups: j of them chosen, hypergeometrically */
  double miss = 0, all = 0;
  for (int j = 0; j <= m && j <= group_top_k; j++) {
    if (group_top_k - j > groups - m) continue;
    double w = rt_binom(m, j) * rt_binom(groups - m, group_top_k - j);
    miss += w * rt_miss_of(pool, (double)j * s, top_k), all += w;
  }
  return miss / all;
}

/* A deduplicating expert dispatch (DeepEP's normal kernels under Megatron-Core's flex
 * dispatcher): each token crosses the network once per remote node that holds one of its
 * experts, and NVLink once per local rank that does (forwarded inside the node), in place of
 * the all-to-all's copy per token-expert pair.  bytes: one copy of the rank's tokens. */
RtCost rt_dispatch(const RtCluster *c, double bytes, int experts, int top_k, int groups, int group_top_k, int nodes,
                   int gpn, int node_stride) {
  RtPath p;
  int n = nodes * gpn;
  if (!rt_group_ok(c, bytes, nodes, gpn) || node_stride < 1 || experts % n || top_k < 1 || top_k > experts)
    return rt_bad();
  if (n == 1 || bytes == 0) return (RtCost){0, 0, 0};
  if (rt_path(c, nodes, gpn, node_stride, &p) != 0) return rt_bad();
  /* an NVLink domain of several nodes (an NVL72 rack) forwards inside itself as one node;
   * a group over unequal domains counts dg GPUs each, as rt_path does */
  int dn = p.nodes, dg = p.gpn;
  double miss_r = rt_dispatch_miss(experts, top_k, groups, group_top_k, experts / n);
  double miss_n = rt_dispatch_miss(experts, top_k, groups, group_top_k, experts / n * dg);
  if (isnan(miss_r) || isnan(miss_n)) return rt_bad();
  double nvl, net = 0;
  if (dn == 1)
    nvl = bytes * (n - 1) * (1 - miss_r);
  else
    net = bytes * (dn - 1) * (1 - miss_n), nvl = bytes * n * (1 - miss_r) * (dg - 1) / dg;
  double t_in = dg > 1 ? nvl / p.bw_intra : 0, t_net = dn > 1 ? net * dg / p.bw_net : 0;
  double lat = rt_proto_base[RT_PROTO_SIMPLE] + (dn > 1 ? p.lat_net : p.lat_intra);
  return (RtCost){lat + fmax(t_in, t_net) + fmin(bytes / n, rt_fill_chunk) / rt_ring_bw(&p), 0, 0};
}

RtCost rt_allreduce(const RtCluster *c, double bytes, int nodes, int gpus_per_node) {
  return rt_collective(RT_COLL_ALLREDUCE, c, bytes, nodes, gpus_per_node, 1);
}
RtCost rt_allgather(const RtCluster *c, double bytes, int nodes, int gpus_per_node) {
  return rt_collective(RT_COLL_ALLGATHER, c, bytes, nodes, gpus_per_node, 1);
}
RtCost rt_reducescatter(const RtCluster *c, double bytes, int nodes, int gpus_per_node) {
  return rt_collective(RT_COLL_REDUCESCATTER, c, bytes, nodes, gpus_per_node, 1);
}
RtCost rt_alltoall(const RtCluster *c, double bytes, int nodes, int gpus_per_node) {
  return rt_collective(RT_COLL_ALLTOALL, c, bytes, nodes, gpus_per_node, 1);
}
RtCost rt_p2p(const RtCluster *c, double bytes, int nodes, int gpus_per_node) {
  return rt_collective(RT_COLL_P2P, c, bytes, nodes, gpus_per_node, 1);
}

/* --- a hard lower bound, for the fitter ------------------------------------------------
 *
 * No run of a collective can beat the time its busiest rank needs to move the data it must
 * move through the links it has, at their declared rates (no efficiency, no latency):
 *
 *   all-gather, all-to-all   every rank receives the (n - 1)/n of the output it does not hold;
 *   reduce-scatter           every rank sends the (n - 1)/n of its input that other ranks'
 *                            slices need (true with in-switch reduction too: the switch still
 *                            has to get each rank's contribution);
 *   all-reduce               both, whatever the algorithm (ring, tree, NVLS or SHARP);
 *   p2p                      the receiver receives the whole message,
 *
 * a volume of (n - 1)/n x bytes (p2p: bytes) in one direction.  Links are declared per
 * direction, so one rate serves both.  The rate of one rank is at most
 *
 *   inside a node    its NVLink ports, all of them (a mesh GPU drives every port, through
 *                    peers outside the group too): tier bandwidth x links_per_node / GPUs;
 *   across nodes     the node's NICs (the first inter-node tier, the links a node has), shared
 *                    by the group's gpn ranks of that node: bandwidth x links / gpn.
 *
 * Every byte a rank receives (or sends) crosses one of its NVLink ports or comes straight
 * from a NIC, and the node's NICs deliver at most their sum to the group's gpn ranks, which
 * all need the same volume: so the average rank, hence the slowest, needs at least
 * volume / (NVLink + NICs / gpn).  A group inside one node has no NIC term, a group of one
 * GPU per node no NVLink term (what reaches it over NVLink came through the node's NICs). */
static double rt_bound_rate(const RtCluster *c, const RtPath *p) {
  const RtTier *in = rt_intra_tier(c);
  double rate = 0;
  if (p->gpn > 1) rate += in->bandwidth * rt_gpu_ports(c, in);
  if (p->nodes > 1) { /* a domain of several nodes (rt_path): its nodes' NICs */
    const RtTier *nic = &c->tiers[in ? 1 : 0];
    rate += nic->bandwidth * rt_node_links(c, nic) * rt_domain_nodes(c) / p->gpn;
  }
  return rate;
}

double rt_collective_min_time(const char *kernel, const RtCluster *c, double bytes, int nodes, int gpus_per_node) {
  RtPath p;
  int k = rt_coll_index(kernel);
  if (k < 0 || !rt_group_ok(c, bytes, nodes, gpus_per_node)) return NAN;
  int n = nodes * gpus_per_node;
  if (n == 1 || bytes == 0) return 0;
  if (rt_path(c, nodes, gpus_per_node, 1, &p) != 0) return NAN; /* the cluster cannot hold it */
  double volume = k == RT_COLL_P2P ? bytes : (n - 1.0) / n * bytes;
  return volume / rt_bound_rate(c, &p);
}

RtCost rt_collective_named(const char *kernel, const RtCluster *c, double bytes, int nodes, int gpus_per_node) {
  int k = rt_coll_index(kernel);
  return k < 0 ? rt_bad() : rt_collective((RtColl)k, c, bytes, nodes, gpus_per_node, 1);
}

RtCost rt_collective_strided(RtColl kernel, const RtCluster *c, double bytes, int nodes, int gpus_per_node,
                             int node_stride) {
  if ((unsigned)kernel >= RT_NCOLLS) return rt_bad();
  return rt_collective(kernel, c, bytes, nodes, gpus_per_node, node_stride);
}

double rt_collective_physics(const char *kernel, const RtCluster *c, double bytes, int nodes, int gpus_per_node) {
  RtCluster bare = *c;
  bare.calib = NULL;
  return rt_collective_named(kernel, &bare, bytes, nodes, gpus_per_node).fwd;
}
