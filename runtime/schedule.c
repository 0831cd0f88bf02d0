/* schedule.c - one iteration of a pipeline-parallel schedule, simulated op by op.
 *
 * The model is split into C = stages x chunks model chunks; chunk c runs on device c % stages
 * (Megatron's interleaving: device d holds chunks d, d + stages, ...).  A micro-batch's forward
 * F runs chunks 0, 1, ..., C-1; its backward B runs C-1, ..., 0.  F(c, i) waits for F(c-1, i),
 * B(c, i) for B(c+1, i) (the last chunk's B for its own F), plus one p2p send when the two
 * chunks sit on different devices (the receiver waits, the sender does not).
 *
 * Each device runs its ops in the fixed order its schedule dictates, each op starting when the
 * device is free and its input has arrived; the first forward of device 0 starts at t = 0.
 * The orders, per device d, with n = micro_batches x chunks forwards and as many backwards:
 *
 *   GPIPE         all n forwards, then all backwards (micro-batches 0 .. m-1).
 *   1F1B          PipeDream-flush as Megatron runs it without interleaving: w = min(p-d-1, m)
 *                 warm-up forwards, then pairs (F, B), then the last w backwards.
 *   INTERLEAVED   Megatron's interleaved 1F1B (Narayanan et al., SC'21): the k-th forward of a
 *                 device is micro-batch (k / (p v)) p + k % p of its local chunk (k / p) % v;
 *                 the k-th backward is the same with the local chunks reversed; warm-up
 *                 w = min(2 (p-d-1) + (v-1) p, n), then (F, B) pairs, then the rest of the B.
 *                 Needs m % p == 0 when v > 1.  With v = 1 it is 1F1B (Megatron runs its
 *                 non-interleaved schedule then, whose warm-up is p-d-1, not 2 (p-d-1)).
 *   ZERO_BUBBLE   ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24): the backward
 *                 is split into B (input gradient, on the critical path) and W (weight
 *                 gradient, free to move).  F and B keep 1F1B's order, so the activations held
 *                 stay 1F1B's; device d lets up to d of its W run late: after each B, if more
 *                 than d W are owed, the oldest one runs; the owed ones run at the end.  So the
 *                 last stage runs p-1 W after its last B while the B's travel back to device 0:
 *                 the drain bubble shrinks by (p-1) T_W.  This is PyTorch's
 *                 ScheduleInterleavedZeroBubble with one stage per rank (num_1f1b_microbatches
 *                 = rank).  With equal stages, m >= p and no p2p its bubble is the paper's
 *                 (p-1)(T_F + T_B - T_W) when T_W <= min(T_F, T_B); a longer W does not fit
 *                 the drain's gaps and it is (p-1)(T_F + T_B - min(T_F, T_B, T_W)).  (Each
 *                 device lags by its own index d, not p-d-1: the last stage's W's are the
 *                 ones that can wait while the gradients travel back.)
 *
 * Recompute R runs right before its B, on the same device, once B's input has arrived (as in
 * Megatron, which recomputes inside the backward).  Outside zero-bubble the weight gradient is
 * part of the backward: one op of bwd + wgrad, reported as one 'B' event, and the gradient is
 * sent after all of it.
 *
 * Sends cost 1F1B more than its fill: its minimal warm-up puts them on a loop (device 0's
 * F(j+p) follows its B(j), which waited for F(j) to reach the last stage and its gradient to
 * come back), so with equal stages it runs p (f + b) + 2 (p-1) s per p micro-batches, and only
 * m <= 2 gives (m + p - 1)(f + b) + 2 (p-1) s, which GPipe gives for every m.
 *
 * Activations held (in_flight) are counted along each device's order: +1 at an F, -1 at its
 * B (input gradient); the device's ops never overlap, so that is the count over time.
 *
 * The simulation keeps, per device, how many F, B and W it has issued (the next op follows from
 * those counts) and, per (chunk, micro-batch), when that chunk's next input arrives: the
 * activations for its F, later the gradient for its B (the two never overlap, so one slot
 * holds both).  A device blocked on a missing input is woken by the op that provides it, so
 * the run is linear in the number of ops; an order that cannot progress is reported as
 * RT_BAD_ARGS (it cannot happen with the orders above), and so is a failed allocation (one
 * double per (chunk, micro-batch): 80 MB for 10^4 micro-batches through 1024 chunks, which
 * runs in well under a second).  Everything is a pure function of its arguments; the work
 * arrays are the calling thread's own. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "llmp_rt.h"

typedef enum { RT_OP_F, RT_OP_B, RT_OP_W } RtOpKind;

/* One device's progress through its order. */
typedef struct RtDev {
  int nf, nb, nw;               /* forwards, backwards, weight gradients issued */
  int warmup;                   /* forwards ahead of the backwards in the steady state */
  int lag;                      /* zero-bubble: weight gradients it may owe */
  int held, held_max;           /* (chunk, micro-batch) pairs between their F and their B */
  int queued;                   /* on the wake-up stack */
  long long ev;                 /* index of its next event */
  double free;                  /* when its last op ends */
  double busy;                  /* sum of its ops' times */
} RtDev;

typedef struct RtSim {
  const RtPipeline *p;
  int np, nv, nc, nm;           /* stages, chunks per device, model chunks, micro-batches */
  int n;                        /* forwards (and backwards) per device: nm x nv */
  int zb;                       /* W is its own op */
  double *ready;                /* [chunk * nm + micro]: input arrival, -1 if not yet */
  RtDev *dev;
  int *stack, nstack;           /* devices to look at */
  RtPipeEvent *events;
  long long maxevents;
  long long ops;                /* ops run */
} RtSim;

static double rt_at(const double *a, int c) { return a ? a[c] : 0.0; }

static int rt_time_ok(double t) { return isfinite(t) && t >= 0; }

static int rt_times_ok(const double *a, int n, int required) {
  if (!a) return !required;
  for (int c = 0; c < n; c++)
    if (!rt_time_ok(a[c])) return 0;
  return 1;
}

static int rt_args_ok(const RtPipeline *p, int maxevents, const RtPipeEvent *events) {
  if (!p || (unsigned)p->schedule >= RT_NSCHEDULES) return 0;
  if (p->stages < 1 || p->chunks < 1 || p->micro_batches < 1) return 0;
  if (p->stages > RT_MAX_CHUNKS || p->chunks > RT_MAX_CHUNKS / p->stages) return 0;
  if (p->chunks > 1 && p->schedule != RT_INTERLEAVED) return 0;
  if (p->chunks > 1 && p->micro_batches % p->stages != 0) return 0;
  if (!rt_time_ok(p->p2p)) return 0;
  if (events && maxevents < 0) return 0;
  int nc = p->stages * p->chunks;
  /* At most 4 events (F, R, B, W) per (chunk, micro-batch); their count must fit an int. */
  if ((long long)p->micro_batches * nc > INT_MAX / 4) return 0;
  return rt_times_ok(p->fwd, nc, 1) && rt_times_ok(p->bwd, nc, 1) &&
         rt_times_ok(p->wgrad, nc, 0) && rt_times_ok(p->recompute, nc, 0);
}

/* Forwards a device runs before its first backward (the steady state keeps that many ahead). */
static int rt_warmup(const RtPipeline *p, int d, int n) {
  if (p->schedule == RT_GPIPE) return n;
  /* chunks > 1 only for INTERLEAVED; with one chunk it is 1F1B, and so is ZB-H1's F/B order */
  int w = p->chunks > 1 ? 2 * (p->stages - d - 1) + (p->chunks - 1) * p->stages
                        : p->stages - d - 1;
  return w < n ? w : n;
}

/* The model chunk and micro-batch of device d's k-th forward (or backward). */
static void rt_pick(const RtSim *s, int d, int k, int backward, int *chunk, int *micro) {
  if (s->nv == 1) {             /* the general form below, without its divisions */
    *chunk = d, *micro = k;
    return;
  }
  int local = (k / s->np) % s->nv;
  if (backward) local = s->nv - 1 - local;
  *chunk = local * s->np + d;
  *micro = k / (s->np * s->nv) * s->np + k % s->np;
}

static RtOpKind rt_next(const RtSim *s, const RtDev *v) {
  if (s->zb && (v->nb - v->nw > v->lag || (v->nb == s->n && v->nw < s->n))) return RT_OP_W;
  if (v->nf < s->n && v->nf - v->nb <= v->warmup) return RT_OP_F;
  return RT_OP_B;
}

static int rt_finished(const RtSim *s, const RtDev *v) {
  return v->nf == s->n && v->nb == s->n && (!s->zb || v->nw == s->n);
}

static void rt_wake(RtSim *s, int d) {
  if (s->dev[d].queued) return;
  s->dev[d].queued = 1;
  s->stack[s->nstack++] = d;
}

/* Records one op of device d as an event (ops of zero time for R and W are not events). */
static void rt_emit(RtSim *s, int d, int chunk, int micro, char kind, double start, double end) {
  long long i = s->dev[d].ev++;
  if (s->events && i < s->maxevents)
    s->events[i] = (RtPipeEvent){d, chunk, micro, kind, start, end};
}

/* The hop from chunk a to chunk b: a p2p send if they sit on different devices. */
static double rt_hop(const RtSim *s, int a, int b) {
  return a % s->np != b % s->np ? s->p->p2p : 0.0;
}

/* Runs device d's next op if its input is there; returns 1 if it ran one. */
static int rt_step(RtSim *s, int d) {
  RtDev *v = &s->dev[d];
  const RtPipeline *p = s->p;
  if (rt_finished(s, v)) return 0;
  RtOpKind kind = rt_next(s, v);
  int c, i;
  if (kind == RT_OP_W) {
    rt_pick(s, d, v->nw, 1, &c, &i);
    double w = rt_at(p->wgrad, c), start = v->free;
    if (w > 0) rt_emit(s, d, c, i, 'W', start, start + w);
    v->free = start + w, v->busy += w;
    v->nw++, s->ops++;
    return 1;
  }
  rt_pick(s, d, kind == RT_OP_F ? v->nf : v->nb, kind == RT_OP_B, &c, &i);
  double *slot = &s->ready[(size_t)c * s->nm + i];
  if (*slot < 0) return 0;
  double start = v->free > *slot ? v->free : *slot, took;
  *slot = -1;
  if (kind == RT_OP_F) {
    took = p->fwd[c];
    double end = start + took;
    rt_emit(s, d, c, i, 'F', start, end);
    if (c + 1 < s->nc) {
      s->ready[(size_t)(c + 1) * s->nm + i] = end + rt_hop(s, c, c + 1);
      rt_wake(s, (c + 1) % s->np);
    } else {
      *slot = end;              /* the last chunk's B starts from its own F */
    }
    v->free = end;
    v->nf++;
    if (++v->held > v->held_max) v->held_max = v->held;
  } else {
    double r = rt_at(p->recompute, c);
    double b = p->bwd[c] + (s->zb ? 0.0 : rt_at(p->wgrad, c));
    if (r > 0) rt_emit(s, d, c, i, 'R', start, start + r);
    double end = start + r + b;
    took = r + b;
    rt_emit(s, d, c, i, 'B', start + r, end);
    if (c > 0) {
      s->ready[(size_t)(c - 1) * s->nm + i] = end + rt_hop(s, c, c - 1);
      rt_wake(s, (c - 1) % s->np);
    }
    v->free = end;
    v->nb++, v->held--;
  }
  v->busy += took;
  s->ops++;
  return 1;
}

static RtPipeResult rt_pipe_bad(int *nevents) {
  if (nevents) *nevents = 0;
  return (RtPipeResult){NAN, NAN, -1, 0, -1, RT_BAD_ARGS};
}

RtPipeResult rt_pipeline(const RtPipeline *p, RtPipeEvent *events, int maxevents, int *nevents) {
  if (!rt_args_ok(p, maxevents, events)) return rt_pipe_bad(nevents);
  RtSim s = {.p = p, .np = p->stages, .nv = p->chunks, .nc = p->stages * p->chunks,
             .nm = p->micro_batches, .zb = p->schedule == RT_ZERO_BUBBLE,
             .events = events, .maxevents = events ? maxevents : 0};
  s.n = s.nm * s.nv;
  size_t pairs = (size_t)s.nc * s.nm;
  s.ready = malloc(pairs * sizeof *s.ready);
  s.dev = calloc((size_t)s.np, sizeof *s.dev);
  s.stack = malloc((size_t)s.np * sizeof *s.stack);
  if (!s.ready || !s.dev || !s.stack) {
    free(s.ready), free(s.dev), free(s.stack);
    return rt_pipe_bad(nevents);
  }
  for (size_t k = 0; k < pairs; k++) s.ready[k] = k < (size_t)s.nm ? 0.0 : -1.0;

  /* Events are grouped by device: device d's come after those of devices 0 .. d-1. */
  long long nev = 0;
  for (int d = 0; d < s.np; d++) {
    RtDev *v = &s.dev[d];
    v->warmup = rt_warmup(p, d, s.n);
    v->lag = d;
    v->ev = nev;
    for (int c = d; c < s.nc; c += s.np)
      nev += (long long)s.nm * (2 + (rt_at(p->recompute, c) > 0) +
                                (s.zb && rt_at(p->wgrad, c) > 0));
  }

  for (int d = s.np - 1; d >= 0; d--) rt_wake(&s, d);
  while (s.nstack > 0) {
    int d = s.stack[--s.nstack];
    s.dev[d].queued = 0;
    while (rt_step(&s, d)) {}
  }

  RtPipeResult r = {0, 0, 0, 0, 0, 0};
  for (int d = 0; d < s.np; d++) {
    const RtDev *v = &s.dev[d];
    if (v->free > r.makespan) r.makespan = v->free;
    if (v->busy > r.busy) r.busy = v->busy, r.busiest = d;
    if (v->held_max > r.in_flight) r.in_flight = v->held_max, r.in_flight_device = d;
  }
  long long total = (long long)s.np * s.n * (s.zb ? 3 : 2);
  free(s.ready), free(s.dev), free(s.stack);
  if (s.ops != total) return rt_pipe_bad(nevents);     /* the order deadlocked */
  if (nevents) *nevents = (int)nev;
  return r;
}

int rt_partition_layers(int layers, int stages, int chunks, int balanced, int *out) {
  if (!out || layers < 1 || stages < 1 || chunks < 1 || stages > INT_MAX / chunks) return -1;
  int n = stages * chunks;
  if (layers < n || (!balanced && layers % n != 0)) return -1;
  for (int c = 0; c < n; c++) out[c] = layers / n + (c < layers % n);
  return 0;
}
