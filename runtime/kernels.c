/* kernels.c - the runtime's kernels behind the one calling convention of llmp_kernels.h.
 *
 * Each wrapper converts its double arguments (dtype codes, flags and counts are exact small
 * integers) and calls the kernel of llmp_rt.h.  Collectives take a group as (size, stride)
 * so that placement is arithmetic in the cost graph: rt_group_layout turns it into the
 * nodes x gpus_per_node the collective kernels expect.  The pipeline wrapper builds the
 * per-chunk times of a model whose chunks differ only in their layer counts and in the
 * embedding (first chunk) and head (last chunk), and simulates the schedule twice: with its
 * sends and with free sends, so a report can tell the bubble from the send time (once when the
 * sends are free already); pipeline_makespan, for a sweep that needs no breakdown, only with
 * its sends. */
#include "llmp_kernels.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hash.h"
#include "ops.h"
#include "strbuf.h"

static RtDtype dt_of(double x) {
  if (!(x >= 0 && x < RT_NDTYPES)) return RT_NDTYPES; /* NaN included: (int)NaN is undefined */
  return (RtDtype)(int)x;
}

/* A count argument as an int: whole, from lo to hi; else -1 (NaN and huge values included). */
static int count_of(double x, int lo, int hi) { return x >= lo && x <= hi && x == floor(x) ? (int)x : -1; }

static void put(double *out, RtCost c) {
  out[0] = c.fwd;
  out[1] = c.bwd;
  out[2] = (double)c.flags;
}

static void bad(double *out) {
  out[0] = out[1] = NAN;
  out[2] = RT_BAD_ARGS;
}

#define GPU_KERNEL(fname, call) \
  static void fname(const void *t, const double *a, double *out) { \
    const RtGpu *g = t; \
    RtDtype dt = dt_of(a[0]); \
    if (dt == RT_NDTYPES) { \
      bad(out); \
      return; \
    } \
    put(out, call); \
  }

GPU_KERNEL(k_linear, rt_linear(g, dt, a[1], a[2], a[3], a[4] != 0))
GPU_KERNEL(k_bmm, rt_bmm(g, dt, a[1], a[2], a[3], a[4]))
GPU_KERNEL(k_softmax, rt_softmax(g, dt, a[1], a[2], a[3] != 0))
GPU_KERNEL(k_attention, rt_attention_ex(g, dt, a[1], a[2], a[3], a[6], a[4], a[7], a[5] != 0))
GPU_KERNEL(k_flash, rt_flash_attention_ex(g, dt, a[1], a[2], a[3], a[4], a[5], a[7], a[6] != 0, a[8], a[9] != 0))
GPU_KERNEL(k_layernorm, rt_layernorm(g, dt, a[1], a[2]))
GPU_KERNEL(k_rmsnorm, rt_rmsnorm(g, dt, a[1], a[2]))
GPU_KERNEL(k_gelu, rt_gelu(g, dt, a[1]))
GPU_KERNEL(k_swiglu, rt_swiglu(g, dt, a[1]))
GPU_KERNEL(k_add, rt_add(g, dt, a[1]))
GPU_KERNEL(k_rope, rt_rope(g, dt, a[1], a[2], a[3]))
GPU_KERNEL(k_embedding, rt_embedding(g, dt, a[1], a[2], a[3]))
GPU_KERNEL(k_cross_entropy, rt_cross_entropy(g, dt, a[1], a[2]))
GPU_KERNEL(k_adam, rt_adam(g, dt, a[1], a[2]))
GPU_KERNEL(k_conv1d, rt_conv1d(g, dt, a[1], a[2], a[3]))
GPU_KERNEL(k_ssd, rt_ssd(g, dt, a[1], a[2], a[3], a[4], a[5], a[6]))

int rt_group_layout(int size, int stride, int gpn, int *nodes, int *gpus_per_node) {
  if (size < 1 || stride < 1 || gpn < 1) return -1;
  if (size == 1 || (double)size * stride <= gpn) {
    *nodes = 1;
    *gpus_per_node = size;
  } else if (stride >= gpn) {
    if (stride % gpn) return -1;
    *nodes = size;
    *gpus_per_node = 1;
  } else {
    int per = gpn / stride; /* members sharing a node */
    if (gpn % stride || size % per) return -1;
    *nodes = size / per;
    *gpus_per_node = per;
  }
  return 0;
}

/* The nodes apart a group's consecutive members sit: stride / gpn where each has its own node,
 * else 1. */
static int node_stride_of(int stride, int gpn) { return stride >= gpn ? stride / gpn : 1; }

/* A collective's group from its size and stride arguments: 1 with out written where there is
 * nothing to cost (bad arguments, or a group of one rank, which communicates with nobody),
 * else 0 with its nodes, GPUs per node and the nodes between members. */
static int group_args(const RtCluster *c, const double *a, double *out, int *nodes, int *gpn, int *node_stride) {
  double size = a[1], stride = a[2];
  if (!(size >= 1 && size <= 1e9 && stride >= 1 && stride <= 1e9) || size != floor(size) || stride != floor(stride)) {
    bad(out);
    return 1;
  }
  if (size == 1) {
    out[0] = out[1] = out[2] = 0;
    return 1;
  }
  if (rt_group_layout((int)size, (int)stride, c->gpus_per_node, nodes, gpn) < 0) {
    bad(out);
    return 1;
  }
  *node_stride = node_stride_of((int)stride, c->gpus_per_node);
  return 0;
}

static void collective(RtColl kernel, const void *t, const double *a, double *out) {
  const RtCluster *c = t;
  int nodes, gpn, ns;
  if (group_args(c, a, out, &nodes, &gpn, &ns)) return;
  put(out, rt_collective_strided(kernel, c, a[0], nodes, gpn, ns));
  out[1] = 0;
}

static void k_allreduce(const void *t, const double *a, double *out) { collective(RT_COLL_ALLREDUCE, t, a, out); }
static void k_allgather(const void *t, const double *a, double *out) { collective(RT_COLL_ALLGATHER, t, a, out); }
static void k_reducescatter(const void *t, const double *a, double *out) { collective(RT_COLL_REDUCESCATTER, t, a, out); }
static void k_alltoall(const void *t, const double *a, double *out) { collective(RT_COLL_ALLTOALL, t, a, out); }

/* A deduplicating expert dispatch (rt_dispatch): bytes size stride, then the routing's
 * experts top_k groups group_top_k. */
static void k_dispatch(const void *t, const double *a, double *out) {
  const RtCluster *c = t;
  int nodes, gpn, ns;
  for (int i = 3; i < 7; i++)
    if (!(a[i] >= 1 && a[i] <= 1e6 && a[i] == floor(a[i]))) {
      bad(out);
      return;
    }
  if (group_args(c, a, out, &nodes, &gpn, &ns)) return;
  put(out, rt_dispatch(c, a[0], (int)a[3], (int)a[4], (int)a[5], (int)a[6], nodes, gpn, ns));
  out[1] = 0;
}

/* One send between consecutive pipeline stages; the slowest boundary decides. */
static void k_p2p(const void *t, const double *a, double *out) {
  const RtCluster *c = t;
  double size = a[1], stride = a[2];
  if (!(size >= 1 && stride >= 1)) {
    bad(out);
    return;
  }
  if (size == 1) {
    out[0] = out[1] = out[2] = 0;
    return;
  }
  bool cross = stride >= c->gpus_per_node || stride * size > c->gpus_per_node;
  /* nodes apart: stride / gpn, at most what the cluster holds (the last stage's neighbour) */
  double apart = stride >= c->gpus_per_node ? floor(stride / c->gpus_per_node) : 1;
  int ns = apart < c->nodes - 1 ? (int)apart : c->nodes > 1 ? c->nodes - 1 : 1;
  put(out, rt_collective_strided(RT_COLL_P2P, c, a[0], cross ? 2 : 1, cross ? 1 : 2, ns));
  out[1] = 0;
}

int rt_pipeline_of_args(const double *a, RtPipeline *p, double *buf) {
  int sched = count_of(a[0], 0, RT_NSCHEDULES - 1), stages = count_of(a[1], 1, RT_MAX_CHUNKS);
  int chunks = count_of(a[2], 1, RT_MAX_CHUNKS), m = count_of(a[3], 1, INT_MAX), layers = count_of(a[4], 0, INT_MAX);
  int layout = count_of(a[RT_PIPE_LAYOUT], 0, RT_MAX_LAYOUTS);
  if (sched < 0 || stages < 0 || chunks < 0 || m < 0 || layers < 0 || layout < 0 || stages * chunks > RT_MAX_CHUNKS)
    return -1;
  int n = stages * chunks;
  int counts[RT_MAX_CHUNKS][RT_MAX_GROUPS];
  if (rt_layout_counts(layout, layers, stages, chunks, a[5] != 0, counts) < 0) return -1;
  const double *g[RT_MAX_GROUPS] = {a + 6, a + 16, a + 20, a + 24}; /* each group's fwd bwd wgrad recompute */
  double *f = buf, *b = buf + n, *w = buf + 2 * n, *r = buf + 3 * n;
  for (int c = 0; c < n; c++) { /* chunk c: its layers, plus the embedding (first) and head (last) */
    f[c] = (c == 0 ? a[10] : 0) + (c == n - 1 ? a[12] : 0);
    b[c] = (c == 0 ? a[11] : 0) + (c == n - 1 ? a[13] : 0);
    w[c] = r[c] = 0;
    for (int k = 0; k < RT_MAX_GROUPS; k++)
      if (counts[c][k]) {
        f[c] += counts[c][k] * g[k][0], b[c] += counts[c][k] * g[k][1];
        w[c] += counts[c][k] * g[k][2], r[c] += counts[c][k] * g[k][3];
      }
  }
  *p = (RtPipeline){(RtSchedule)sched, stages, chunks, m, f, b, w, r, a[14]};
  return 0;
}

/* The pipeline kernels' arguments as an RtPipeline in buf; false (out set bad) if none. */
static bool pipeline_args(const double *a, RtPipeline *p, double *buf, double *out) {
  if (rt_pipeline_of_args(a, p, buf) == 0) return true;
  bad(out);
  return false;
}

/* The pipeline kernels remember their last results per thread, by their arguments' bits: a
 * sweep calls them again with the same stage times for plans that differ only outside the
 * pipeline (ZeRO 0, 1 and 2, the DP bucket size, ...).  Pure functions, so a hit returns the
 * same bits a simulation would.  The memo is set-associative (PIPE_WAYS entries per set,
 * replaced in turn), so a sweep's dozen stage-time sets in flight do not evict each other. */
enum { PIPE_SETS = 64, PIPE_WAYS = 4, PIPE_NARGS = RT_PIPE_NARGS };
typedef struct PipeMemo {
  double args[PIPE_NARGS], out[RT_KERNEL_NOUT];
  bool used, both; /* both: out[1] (free sends) is there too */
} PipeMemo;
static _Thread_local PipeMemo pipe_memo[PIPE_SETS][PIPE_WAYS];
static _Thread_local unsigned char pipe_next[PIPE_SETS];

/* The first and the last device's layers per split (layout layers stages chunks balanced),
 * remembered per thread: a sweep asks for each group, and again at each point of the axes it
 * runs between pp and virtual_stages.  Direct-mapped on the split's bits; a pure function of
 * them, so a hit is what counting again would give. */
enum { ON_SETS = 64, ON_KEY = 5 };
typedef struct OnMemo {
  double key[ON_KEY];
  int ok; /* 0 empty, 1 counted, -1 the layout does not place these layers */
  int first[RT_MAX_GROUPS], last[RT_MAX_GROUPS];
} OnMemo;
static _Thread_local OnMemo on_memo[ON_SETS];

/* The memo set of n arguments, by their bits, among `sets`. */
static unsigned memo_set(const double *a, int n, unsigned sets) {
  uint64_t h = HASH_BASIS;
  for (int i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &a[i], sizeof bits);
    h = hash_word(h, bits);
  }
  return (unsigned)((h ^ h >> 32) % sets);
}

void rt_pipeline_memo_clear(void) {
  memset(pipe_memo, 0, sizeof pipe_memo);
  memset(pipe_next, 0, sizeof pipe_next);
  memset(on_memo, 0, sizeof on_memo);
}

/* both: out[1] is the makespan with free sends (a second simulation); else out[1] is NaN and
 * out[0] the same bits as with both. */
static void pipeline(const double *a, double *out, bool both) {
  unsigned set = memo_set(a, PIPE_NARGS, PIPE_SETS);
  PipeMemo *ways = pipe_memo[set];
  for (int w = 0; w < PIPE_WAYS; w++)
    if (ways[w].used && (ways[w].both || !both) && !memcmp(ways[w].args, a, sizeof ways[w].args)) {
      memcpy(out, ways[w].out, sizeof ways[w].out);
      if (!both) out[1] = NAN;
      return;
    }
  double buf[4 * RT_MAX_CHUNKS];
  RtPipeline p;
  if (!pipeline_args(a, &p, buf, out)) return;
  RtPipeResult with = rt_pipeline(&p, NULL, 0, NULL), without = with;
  if (both && p.p2p > 0) { /* free sends already: the same run */
    p.p2p = 0;
    without = rt_pipeline(&p, NULL, 0, NULL);
  }
  out[0] = with.makespan;
  out[1] = both ? without.makespan : NAN;
  out[2] = (double)(with.flags | without.flags);
  PipeMemo *m = &ways[pipe_next[set]];
  pipe_next[set] = (unsigned char)((pipe_next[set] + 1) % PIPE_WAYS);
  memcpy(m->args, a, sizeof m->args);
  memcpy(m->out, out, sizeof m->out);
  m->used = true, m->both = both;
}

static void k_pipeline(const void *t, const double *a, double *out) {
  (void)t;
  pipeline(a, out, true);
}

static void k_pipeline_makespan(const void *t, const double *a, double *out) {
  (void)t;
  pipeline(a, out, false);
}

/* rt_pipeline_bound: out[0] a lower bound on pipeline_makespan's out[0] (a sweep's pruning). */
static void k_pipeline_bound(const void *t, const double *a, double *out) {
  (void)t;
  double buf[4 * RT_MAX_CHUNKS];
  RtPipeline p;
  if (!pipeline_args(a, &p, buf, out)) return;
  out[0] = rt_pipeline_bound(&p);
  out[1] = NAN;
  out[2] = 0;
}

/* Layers of each group on device dev (its chunks dev, dev + stages, ...) under counts (per
 * chunk, rt_layout_counts), into s. */
static void device_layers(int (*counts)[RT_MAX_GROUPS], int stages, int chunks, int dev, int *s) {
  for (int g = 0; g < RT_MAX_GROUPS; g++) {
    s[g] = 0;
    for (int c = dev; c < stages * chunks; c += stages) s[g] += counts[c][g];
  }
}

/* The first and the last device's layers of each group for the split a[0 .. ON_KEY) (layout
 * layers stages chunks balanced), counted on a miss of on_memo. */
static const OnMemo *ends_of(const double *a, int layout, int layers, int stages, int chunks) {
  OnMemo *m = &on_memo[memo_set(a, ON_KEY, ON_SETS)];
  if (m->ok && !memcmp(m->key, a, sizeof m->key)) return m;
  memcpy(m->key, a, sizeof m->key);
  int counts[RT_MAX_CHUNKS][RT_MAX_GROUPS];
  m->ok = -1;
  if (rt_layout_counts(layout, layers, stages, chunks, a[4] != 0, counts) == 0) {
    device_layers(counts, stages, chunks, 0, m->first);
    device_layers(counts, stages, chunks, stages - 1, m->last);
    m->ok = 1;
  }
  return m;
}

/* Layers of a group on the first pipeline device (out[0]) and on the last (out[1]). */
static void k_layers_on(const void *t, const double *a, double *out) {
  (void)t;
  int layout = count_of(a[0], 0, RT_MAX_LAYOUTS), layers = count_of(a[1], 0, INT_MAX);
  int stages = count_of(a[2], 1, RT_MAX_CHUNKS), chunks = count_of(a[3], 1, RT_MAX_CHUNKS);
  int grp = count_of(a[5], 0, RT_MAX_GROUPS - 1);
  const OnMemo *m = layout < 0 || layers < 0 || stages < 0 || chunks < 0 || grp < 0
                        ? NULL
                        : ends_of(a, layout, layers, stages, chunks);
  if (!m || m->ok < 0) {
    bad(out);
    return;
  }
  out[0] = m->first[grp], out[1] = m->last[grp], out[2] = 0;
}

/* --- why a kernel rejects its arguments, for messages ------------------------------------ */

/* Argument i's name in a space-separated list, into buf. */
static const char *arg_name(const char *names, int i, char *buf, size_t n) {
  while (i-- > 0 && names) {
    names = strchr(names, ' ');
    if (names) names++;
  }
  size_t len = names ? strcspn(names, " ") : 0;
  snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), names ? names : "");
  return buf;
}

#define WHY(...) \
  do { \
    snprintf(why, n, __VA_ARGS__); \
    return; \
  } while (0)

static void why_gpu(RtKernel k, const RtGpu *g, const double *a, char *why, size_t n) {
  char name[32], v[32], w[32];
  RtDtype dt = dt_of(a[0]);
  if (dt == RT_NDTYPES) WHY("`dtype` = %s is no dtype code (0 to %d)", str_brief(v, sizeof v, a[0]), RT_NDTYPES - 1);
  if (!(g->memory_bandwidth > 0 && isfinite(g->memory_bandwidth)) || g->sms < 1)
    WHY("gpu `%s` has no memory bandwidth or no SMs", g->name);
  double peak = rt_peak(g, dt);
  if (!(peak > 0 && peak < INFINITY)) WHY("gpu `%s` has no peak FLOP/s for %s", g->name, rt_dtype_name(dt));
  for (int i = 1; i < rt_kernels[k].nargs; i++) {
    arg_name(rt_kernels[k].argnames, i, name, sizeof name);
    /* flags, and a window of 0 (none) */
    if (!strcmp(name, "bias") || !strcmp(name, "causal") || !strcmp(name, "sinks")) continue;
    if (!strcmp(name, "window") && a[i] == 0) continue;
    if (!(a[i] >= 1 && a[i] < INFINITY))
      WHY("`%s` = %s: a size is a finite number of at least 1", name, str_brief(v, sizeof v, a[i]));
  }
  if (k == RTK_ATTENTION && !(a[6] <= a[3]))
    WHY("`kv_heads` = %s is more than `heads` = %s", str_brief(v, sizeof v, a[6]), str_brief(w, sizeof w, a[3]));
  if (k == RTK_FLASH && !(a[4] <= a[3]))
    WHY("`kv_heads` = %s is more than `heads` = %s", str_brief(v, sizeof v, a[4]), str_brief(w, sizeof w, a[3]));
  WHY("%s", "no argument is out of range: the sizes' products may be beyond a double");
}

static void why_cluster(RtKernel k, const RtCluster *c, const double *a, char *why, size_t n) {
  char v[32];
  double size = a[1], stride = a[2];
  const char *names[2] = {"size", "stride"};
  for (int i = 0; i < 2; i++) {
    double x = a[1 + i];
    if (k == RTK_P2P ? !(x >= 1) : !(x >= 1 && x <= 1e9 && x == floor(x)))
      WHY("`%s` = %s: a group's %s is a whole number from 1 to 1000000000", names[i], str_brief(v, sizeof v, x), names[i]);
  }
  if (!(isfinite(a[0]) && a[0] >= 0))
    WHY("`bytes` = %s: a size in bytes is finite and at least 0", str_brief(v, sizeof v, a[0]));
  if (k == RTK_DISPATCH) {
    char name[32];
    for (int i = 3; i < 7; i++)
      if (!(a[i] >= 1 && a[i] <= 1e6 && a[i] == floor(a[i])))
        WHY("`%s` = %s: a whole number from 1 to 1000000", arg_name(rt_kernels[k].argnames, i, name, sizeof name),
            str_brief(v, sizeof v, a[i]));
    if (fmod(a[3], size) || a[4] > a[3] || fmod(a[3], a[5]) || a[6] > a[5])
      WHY("%g experts do not split over %g ranks and %g groups, or top_k %g / group_top_k %g exceed them", a[3], size,
          a[5], a[4], a[6]);
  }
  if (k == RTK_P2P) WHY("cluster `%s` has no tier for a send between these ranks", c->name);
  int nodes, gpn;
  if (rt_group_layout((int)size, (int)stride, c->gpus_per_node, &nodes, &gpn) < 0)
    WHY("a group of %d ranks %d apart does not tile nodes of %d GPUs", (int)size, (int)stride, c->gpus_per_node);
  double ext = (nodes - 1.0) * node_stride_of((int)stride, c->gpus_per_node) + 1; /* the nodes it spans */
  if (ext > c->nodes) WHY("the group spans %.0f nodes; cluster `%s` has %d", ext, c->name, c->nodes);
  WHY("cluster `%s` has no network tier that spans %.0f nodes", c->name, ext);
}

static void why_layers_on(const double *a, char *why, size_t n) {
  int stages = count_of(a[2], 1, RT_MAX_CHUNKS), chunks = count_of(a[3], 1, RT_MAX_CHUNKS);
  if (stages < 0 || chunks < 0 || stages * chunks > RT_MAX_CHUNKS)
    WHY("%s", "stages and chunks are whole numbers from 1, with at most 1024 model chunks");
  if (count_of(a[5], 0, RT_MAX_GROUPS - 1) < 0)
    WHY("group %g is not one of the %d a model may have", a[5], RT_MAX_GROUPS);
  WHY("the model's stage layout does not place its %g layers on %d model chunks", a[1], stages * chunks);
}

static void why_pipeline(RtKernel k, const double *a, char *why, size_t n) {
  char name[32], v[32];
  if (k == RTK_LAYERS_ON) {
    why_layers_on(a, why, n);
    return;
  }
  static const double lo[5] = {0, 1, 1, 1, 0},
                      hi[5] = {RT_NSCHEDULES - 1, RT_MAX_CHUNKS, RT_MAX_CHUNKS, INT_MAX, INT_MAX};
  for (int i = 0; i < 5; i++)
    if (count_of(a[i], (int)lo[i], (int)hi[i]) < 0)
      WHY("`%s` = %s: a whole number from %.0f to %.0f", arg_name(rt_kernels[k].argnames, i, name, sizeof name),
          str_brief(v, sizeof v, a[i]), lo[i], hi[i]);
  int stages = (int)a[1], chunks = (int)a[2], m = (int)a[3], layers = (int)a[4];
  if (stages * chunks > RT_MAX_CHUNKS)
    WHY("stages x chunks = %d: at most %d model chunks", stages * chunks, RT_MAX_CHUNKS);
  int layout = count_of(a[RT_PIPE_LAYOUT], 0, RT_MAX_LAYOUTS);
  if (layout < 0) WHY("%s", "`layout` is not a registered layout");
  int counts[RT_MAX_CHUNKS][RT_MAX_GROUPS];
  if (rt_layout_counts(layout, layers, stages, chunks, a[5] != 0, counts) < 0) {
    if (layout) WHY("the model's stage layout does not place its %d layers on %d model chunks", layers, stages * chunks);
    WHY(a[5] != 0 || layers < stages * chunks ? "%d layers are fewer than the %d model chunks"
                                              : "%d layers do not divide into %d model chunks",
        layers, stages * chunks);
  }
  for (int i = 6; i < RT_PIPE_NARGS; i++)
    if (i != RT_PIPE_LAYOUT && !(isfinite(a[i]) && a[i] >= 0))
      WHY("`%s` = %s: a time is finite and at least 0", arg_name(rt_kernels[k].argnames, i, name, sizeof name),
          str_brief(v, sizeof v, a[i]));
  if (chunks > 1 && (int)a[0] != RT_INTERLEAVED) WHY("%d chunks per stage need the interleaved schedule", chunks);
  if (chunks > 1 && m % stages)
    WHY("the interleaved schedule needs micro_batches (%d) to be a multiple of stages (%d)", m, stages);
  if ((long long)m * stages * chunks > INT_MAX / 4)
    WHY("micro_batches x model chunks = %lld: at most %d", (long long)m * stages * chunks, INT_MAX / 4);
  WHY("%s", "no argument is out of range: the stage times may be beyond a double");
}

void rt_kernel_why(RtKernel k, const void *target, const double *args, char *why, size_t n) {
  if (!n) return;
  why[0] = '\0';
  if ((unsigned)k >= RTK_N) return;
  if (rt_kernels[k].target == 'G' && target)
    why_gpu(k, target, args, why, n);
  else if (rt_kernels[k].target == 'C' && target)
    why_cluster(k, target, args, why, n);
  else if (rt_kernels[k].target == 'N')
    why_pipeline(k, args, why, n);
}

const RtKernelInfo rt_kernels[RTK_N] = {
#define X(e, name, fn, nargs, target, argnames) [RTK_##e] = {name, nargs, #target[0], argnames, fn},
#include "kernels.def"
#undef X
};
