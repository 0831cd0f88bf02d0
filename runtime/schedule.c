/* schedule.c - one iteration of a pipeline-parallel schedule (GPipe, 1F1B, Megatron's
 * interleaved 1F1B, ZB-H1) over stages x chunks model chunks.  The reference simulation runs
 * it op by op, each device in its schedule's fixed order and each op starting when its device
 * is free and its input has arrived, and writes the events; the fast path gives the same
 * makespan without visiting every op: closed forms for one stage and for GPipe, and for the
 * 1F1B family a compact engine that runs the fill, jumps over the steady periods once the
 * rebased state repeats (in integer ticks, so that repeats are exact) and runs the drain,
 * replaying the order it recorded for the same structure.  Activations held and busy time
 * are closed forms on both paths.  The orders, the derivations and the error bounds are in
 * docs/schedule.md (the model's view: docs/model.md, "Pipeline stages and the schedule").
 * Pure functions; the fast path's work arrays and recorded orders are thread-local, kept for
 * the next call and freed when the thread exits. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "llmp_rt.h"

typedef enum { RT_OP_F, RT_OP_B, RT_OP_W } RtOpKind;

/* --- arguments and closed forms shared by both paths ------------------------------------ */

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
  return rt_times_ok(p->fwd, nc, 1) && rt_times_ok(p->bwd, nc, 1) && rt_times_ok(p->wgrad, nc, 0) &&
         rt_times_ok(p->recompute, nc, 0);
}

/* Forwards a device runs before its first backward (the steady state keeps that many ahead). */
static int rt_warmup(const RtPipeline *p, int d, int n) {
  if (p->schedule == RT_GPIPE) return n;
  /* chunks > 1 only for INTERLEAVED; with one chunk it is 1F1B, and so is ZB-H1's F/B order */
  int w = p->chunks > 1 ? 2 * (p->stages - d - 1) + (p->chunks - 1) * p->stages : p->stages - d - 1;
  return w < n ? w : n;
}

/* Chunk c's backward op: R + B, with W unless zero-bubble runs it on its own. */
static double rt_bwd_op(const RtPipeline *p, int c, int zb) {
  return rt_at(p->recompute, c) + (p->bwd[c] + (zb ? 0.0 : rt_at(p->wgrad, c)));
}

/* busy and busiest: device d computes m (F + R + B + W) of every chunk it holds. */
static void rt_busy(const RtPipeline *p, RtPipeResult *r) {
  int zb = p->schedule == RT_ZERO_BUBBLE, nc = p->stages * p->chunks;
  r->busy = 0, r->busiest = 0;
  for (int d = 0; d < p->stages; d++) {
    double busy = 0;
    for (int c = d; c < nc; c += p->stages) {
      double w = zb ? rt_at(p->wgrad, c) : 0.0;
      busy += p->micro_batches * (p->fwd[c] + rt_bwd_op(p, c, zb) + w);
    }
    if (busy > r->busy) r->busy = busy, r->busiest = d;
  }
}

/* Events of devices d0 .. d1-1: F and B per (chunk, micro-batch), R and W where they take
 * time. */
static long long rt_nevents(const RtPipeline *p, int d0, int d1) {
  int zb = p->schedule == RT_ZERO_BUBBLE, nc = p->stages * p->chunks;
  long long nev = 0;
  for (int d = d0; d < d1; d++)
    for (int c = d; c < nc; c += p->stages)
      nev += (long long)p->micro_batches * (2 + (rt_at(p->recompute, c) > 0) + (zb && rt_at(p->wgrad, c) > 0));
  return nev;
}

static RtPipeResult rt_pipe_bad(int *nevents) {
  if (nevents) *nevents = 0;
  return (RtPipeResult){NAN, NAN, -1, 0, -1, RT_BAD_ARGS};
}

/* --- the reference: every op simulated, events written -------------------------------- */

/* One device's progress through its order. */
typedef struct RtDev {
  int nf, nb, nw;     /* forwards, backwards, weight gradients issued */
  int warmup;         /* forwards ahead of the backwards in the steady state */
  int lag;            /* zero-bubble: weight gradients it may owe */
  int held, held_max; /* (chunk, micro-batch) pairs between their F and their B */
  int queued;         /* on the wake-up stack */
  long long ev;       /* index of its next event */
  double free;        /* when its last op ends */
} RtDev;

typedef struct RtSim {
  const RtPipeline *p;
  int np, nv, nc, nm; /* stages, chunks per device, model chunks, micro-batches */
  int n;              /* forwards (and backwards) per device: nm x nv */
  int zb;             /* W is its own op */
  double *ready;      /* [chunk * nm + micro]: input arrival, -1 if not yet */
  RtDev *dev;
  int *stack, nstack; /* devices to look at */
  RtPipeEvent *events;
  long long maxevents;
  long long ops; /* ops run */
} RtSim;

/* The model chunk and micro-batch of device d's k-th forward (or backward). */
static void rt_pick(const RtSim *s, int d, int k, int backward, int *chunk, int *micro) {
  if (s->nv == 1) { /* the general form below, without its divisions */
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
  if (s->events && i < s->maxevents) s->events[i] = (RtPipeEvent){d, chunk, micro, kind, start, end};
}

/* The hop from chunk a to chunk b: a p2p send if they sit on different devices. */
static double rt_hop(const RtSim *s, int a, int b) { return a % s->np != b % s->np ? s->p->p2p : 0.0; }

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
    v->free = start + w;
    v->nw++, s->ops++;
    return 1;
  }
  rt_pick(s, d, kind == RT_OP_F ? v->nf : v->nb, kind == RT_OP_B, &c, &i);
  double *slot = &s->ready[(size_t)c * s->nm + i];
  if (*slot < 0) return 0;
  double start = v->free > *slot ? v->free : *slot;
  *slot = -1;
  if (kind == RT_OP_F) {
    double end = start + p->fwd[c];
    rt_emit(s, d, c, i, 'F', start, end);
    if (c + 1 < s->nc) {
      s->ready[(size_t)(c + 1) * s->nm + i] = end + rt_hop(s, c, c + 1);
      rt_wake(s, (c + 1) % s->np);
    } else {
      *slot = end; /* the last chunk's B starts from its own F */
    }
    v->free = end;
    v->nf++;
    if (++v->held > v->held_max) v->held_max = v->held;
  } else {
    double r = rt_at(p->recompute, c);
    double b = p->bwd[c] + (s->zb ? 0.0 : rt_at(p->wgrad, c));
    if (r > 0) rt_emit(s, d, c, i, 'R', start, start + r);
    double end = start + r + b;
    rt_emit(s, d, c, i, 'B', start + r, end);
    if (c > 0) {
      s->ready[(size_t)(c - 1) * s->nm + i] = end + rt_hop(s, c, c - 1);
      rt_wake(s, (c - 1) % s->np);
    }
    v->free = end;
    v->nb++, v->held--;
  }
  s->ops++;
  return 1;
}

RtPipeResult rt_pipeline_reference(const RtPipeline *p, RtPipeEvent *events, int maxevents, int *nevents) {
  if (!rt_args_ok(p, maxevents, events)) return rt_pipe_bad(nevents);
  /* clang-format off */
  RtSim s = {.p = p, .np = p->stages, .nv = p->chunks, .nc = p->stages * p->chunks,
             .nm = p->micro_batches, .zb = p->schedule == RT_ZERO_BUBBLE,
             .events = events, .maxevents = events ? maxevents : 0};
  /* clang-format on */
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
    nev += rt_nevents(p, d, d + 1);
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
    if (v->held_max > r.in_flight) r.in_flight = v->held_max, r.in_flight_device = d;
  }
  rt_busy(p, &r);
  long long total = (long long)s.np * s.n * (s.zb ? 3 : 2);
  free(s.ready), free(s.dev), free(s.stack);
  if (s.ops != total) return rt_pipe_bad(nevents); /* the order deadlocked */
  if (nevents) *nevents = (int)nev;
  return r;
}

/* --- the fast path: closed forms ------------------------------------------------------ */

/* in_flight from the orders alone: device d peaks at min(w_d + 1, n) (GPipe: n). */
static void rt_held(const RtPipeline *p, RtPipeResult *r) {
  int n = p->micro_batches * p->chunks;
  r->in_flight = 0, r->in_flight_device = 0;
  for (int d = 0; d < p->stages; d++) {
    int w = rt_warmup(p, d, n), held = w < n ? w + 1 : n;
    if (held > r->in_flight) r->in_flight = held, r->in_flight_device = d;
  }
}

/* GPipe over p >= 2 stages: two tandem lines, the forwards and then the backwards, whose
 * longest lattice path spends its m-1 extra steps on the slowest stage (docs/schedule.md). */
static double rt_gpipe_makespan(const RtPipeline *p) {
  double s = p->p2p, m1 = p->micro_batches - 1;
  double fsum = 0, fmax = 0, tsum = 0, tmax = 0, best = 0;
  for (int d = 0; d < p->stages; d++) {
    double f = p->fwd[d], t = rt_bwd_op(p, d, 0);
    fsum += f, tsum += t;
    if (f > fmax) fmax = f;
    if (t > tmax) tmax = t;
    double e = fsum + d * s + m1 * fmax;       /* device d's last forward ends */
    double end = e + tsum + d * s + m1 * tmax; /* device 0's last backward via d */
    if (end > best) best = end;
  }
  return best;
}

/* --- the fast path: the engines ------------------------------------------------------- */

enum {
  RT_KEEP_BYTES = 4 << 20, /* larger work arrays are freed after the call */
  FS_MIN_PERIODS = 3,      /* fewer steady periods: no fast-forward (it would not pay) */
  FS_REPLAY_N = 32,        /* one stage, n up to this: its ops run (the reference's sums) */
  FS_ORDER_SETS = 64,      /* op orders kept per thread: FS_ORDER_SETS x FS_ORDER_WAYS, */
  FS_ORDER_WAYS = 4,       /*   a structure's set chosen by its hash */
  FS_ORDERS = FS_ORDER_SETS * FS_ORDER_WAYS,
  FS_ORDER_MAX = 1 << 20,    /* ops of the longest order kept */
  FS_ORDER_BYTES = 16 << 20, /* the most the kept orders hold together, per thread */
};

#define FS_TICK_MAX ((int64_t)1 << 62) /* larger times saturate and flag an overflow */
#define FS_ROOM (FS_TICK_MAX / 4)      /* the most a rebased time at a cut may be, in size */

/* Where a device's next F (or B) is in its order: the k-th is micro-batch base + j of local
 * chunk `local` (reversed for B), with j = k % P, local = (k / P) % v, base = (k / (P v)) P,
 * and P = p when v > 1, else 1 (the device's one chunk, micro-batch k). */
typedef struct FsPos {
  int j, local, base;
} FsPos;

typedef struct FsDev {
  int nf, nb, nw; /* F, B, W issued */
  int warmup;     /* w_d */
  int limit;      /* it stops before its backward number `limit` */
  int wait_for;   /* blocked until *wait_on > wait_for (wait_on NULL: not blocked
                                   on an input: running, on the stack, or at its limit) */
  const int *wait_on;
  int nf0, nb0;             /* nf, nb at the cut the period started from */
  FsPos pf, pb;             /* its next F and next B */
  const int64_t *fin, *bin; /* one chunk per device: where its F and B inputs end (fin NULL:
                                   chunk 0, its input there at 0) */
  int64_t *fout, *bout;     /* and where its own F and B end */
  int64_t bhop;             /* the send before its B (none from its own F) */
  int64_t free;             /* when its last op ends: ticks from FsSim.base */
  double xfree;             /* the same in seconds, exact mode */
} FsDev;

/* The engine.  Fast-forwarding, times are integer ticks of FsSim.tick seconds (sums exact,
 * so the rebased state repeats exactly when the real-number one does); otherwise (`exact`)
 * they are the reference's doubles with its arithmetic, bit for bit. */
typedef struct FsSim {
  const RtPipeline *p;
  int np, nv, nc, n, zb; /* stages, chunks per device, model chunks, n, ZB-H1 */
  int period;            /* P: micro-batches per period */
  int per_cut;           /* U = P v: backwards (and forwards) per device per period */
  int exact;             /* doubles (xfend, xbend, xfree) instead of ticks */
  int64_t p2p;
  int64_t *f, *r, *b, *w;    /* per chunk: forward, recompute, backward (with W but in ZB-H1),
                                   ZB-H1's W */
  double *xf, *xr, *xb, *xw; /* the same in seconds (the same memory), exact mode */
  FsDev *dev;
  int *fdone, *bdone;    /* per chunk: micro-batches through its F, through its B */
  int64_t *fend, *bend;  /* per chunk, `ring` slots: when its F / B of micro i ended */
  double *xfend, *xbend; /* the same memory, exact mode */
  int ring, mask;
  int *stack, nstack; /* devices to look at */
  int64_t *slack;     /* while not NULL: [d 2U + 2k (+1 for the F)]: free - arrival of
                                   the k-th B (F) of device d in the period (0: no input) */
  uint16_t *log;      /* while not NULL: each op run is appended, (device << 2) | kind */
  int nlog, logroom;  /* ops run, room in log */
  int overflow;       /* a time reached FS_TICK_MAX */
  double tick;        /* seconds per tick: a power of two */
  double base;        /* seconds: the ticks are from here (rebased at cuts) */
} FsSim;

/* Device u, if it waits for the counter just raised to `done`: onto the stack. */
static void fs_feed(FsSim *s, int u, const int *counter, int done) {
  FsDev *x = &s->dev[u];
  if (x->wait_on != counter || done <= x->wait_for) return;
  x->wait_on = NULL;
  s->stack[s->nstack++] = u;
}

/* Device v stops: blocked until *counter > value. */
static void fs_block(FsDev *v, const int *counter, int value) { v->wait_on = counter, v->wait_for = value; }

static void fs_record(FsSim *s, int d, RtOpKind kind) {
  if (!s->log) return;
  if (s->nlog < s->logroom) s->log[s->nlog] = (uint16_t)(d << 2 | (int)kind);
  s->nlog++; /* more than the room: not recorded (fs_part) */
}

/* An op's end from its start (each below FS_TICK_MAX, so no overflow); saturates there. */
static int64_t fs_sat(int64_t start, int64_t took) {
  int64_t end = start + took;
  return end < FS_TICK_MAX ? end : FS_TICK_MAX;
}

/* fs_sat, flagging the saturation. */
static int64_t fs_end(FsSim *s, int64_t start, int64_t took) {
  int64_t end = fs_sat(start, took);
  if (end == FS_TICK_MAX) s->overflow = 1;
  return end;
}

static void fs_advance(const FsSim *s, FsPos *q) {
  if (++q->j < s->period) return;
  q->j = 0;
  if (++q->local < s->nv) return;
  q->local = 0, q->base += s->period;
}

static int fs_w_next(const FsSim *s, const FsDev *v, int d) {
  return s->zb && (v->nb - v->nw > d || (v->nb == s->n && v->nw < s->n));
}

static int fs_f_next(const FsSim *s, const FsDev *v) { return v->nf < s->n && v->nf - v->nb <= v->warmup; }

/* Runs device d until it waits for an input, reaches its limit or is done, in rt_next's
 * order, for one chunk per device (chunk d; its k-th F and B are micro-batch k), with its
 * counters in registers: start = max(free, arrival), arrival = the producer's end + the send
 * (none from the last chunk's own forward). */
static void fs_run1(FsSim *s, int d) {
  FsDev *v = &s->dev[d];
  int nf = v->nf, nb = v->nb, nw = v->nw, n = s->n, warm = v->warmup, limit = v->limit;
  int mask = s->mask, last = d + 1 == s->np, zb = s->zb;
  int64_t t = v->free, p2p = s->p2p, f = s->f[d], rb = s->r[d] + s->b[d], w = s->w[d];
  size_t ring = (size_t)s->ring;
  int64_t *fout = s->fend + d * ring, *bout = s->bend + d * ring;
  const int64_t *fin = fout - (d > 0 ? ring : 0), *bin = last ? fout : bout + ring;
  int64_t *slack = s->slack ? s->slack + (size_t)d * 2 * s->per_cut : NULL;
  for (;;) {
    if (zb && (nb - nw > d || (nb == n && nw < n))) { /* ZB-H1's W */
      t = fs_end(s, t, w), nw++;
      fs_record(s, d, RT_OP_W);
    } else if (nf < n && nf - nb <= warm) {
      int64_t start = t, gap = 0; /* chunk 0's input is there at 0 */
      if (d > 0) {
        if (s->fdone[d - 1] <= nf) {
          fs_block(v, &s->fdone[d - 1], nf);
          break;
        }
        int64_t a = fin[nf & mask] + p2p;
        gap = t - a;
        if (a > start) start = a;
      }
      if (slack) slack[2 * (nf - v->nf0) + 1] = gap;
      fout[nf & mask] = t = fs_end(s, start, f);
      s->fdone[d] = ++nf;
      fs_record(s, d, RT_OP_F);
      if (!last) fs_feed(s, d + 1, &s->fdone[d], nf);
    } else {
      if (nb == n || nb == limit) break;
      int64_t a;
      if (last) {
        a = bin[nb & mask]; /* its forward ran: nf > nb */
      } else {
        if (s->bdone[d + 1] <= nb) {
          fs_block(v, &s->bdone[d + 1], nb);
          break;
        }
        a = bin[nb & mask] + p2p;
      }
      if (slack) slack[2 * (nb - v->nb0)] = t - a;
      bout[nb & mask] = t = fs_end(s, t > a ? t : a, rb);
      s->bdone[d] = ++nb;
      fs_record(s, d, RT_OP_B);
      if (d > 0) fs_feed(s, d - 1, &s->bdone[d], nb);
    }
  }
  v->nf = nf, v->nb = nb, v->nw = nw, v->free = t;
}

/* fs_run1 for v > 1 chunks per device (interleaved: no W), chunks and micro-batches from
 * FsPos. */
static void fs_runv(FsSim *s, int d) {
  FsDev *v = &s->dev[d];
  int nf = v->nf, nb = v->nb, n = s->n, warm = v->warmup, limit = v->limit, mask = s->mask;
  int np = s->np, nc = s->nc;
  FsPos pf = v->pf, pb = v->pb;
  int64_t t = v->free, p2p = s->p2p;
  size_t ring = (size_t)s->ring;
  int64_t *slack = s->slack ? s->slack + (size_t)d * 2 * s->per_cut : NULL;
  for (;;) {
    if (nf < n && nf - nb <= warm) {
      int c = pf.local * np + d, i = pf.base + pf.j;
      int64_t start = t, gap = 0;
      if (c > 0) {
        if (s->fdone[c - 1] <= i) {
          fs_block(v, &s->fdone[c - 1], i);
          break;
        }
        int64_t a = s->fend[(size_t)(c - 1) * ring + (i & mask)] + p2p;
        gap = t - a;
        if (a > start) start = a;
      }
      if (slack) slack[2 * (nf - v->nf0) + 1] = gap;
      s->fend[(size_t)c * ring + (i & mask)] = t = fs_end(s, start, s->f[c]);
      s->fdone[c]++, nf++;
      fs_advance(s, &pf);
      fs_record(s, d, RT_OP_F);
      if (c + 1 < nc) fs_feed(s, d + 1 < np ? d + 1 : 0, &s->fdone[c], s->fdone[c]);
    } else {
      if (nb == n || nb == limit) break;
      int c = (s->nv - 1 - pb.local) * np + d, i = pb.base + pb.j;
      int64_t a;
      if (c == nc - 1) { /* from its own forward, no send */
        if (s->fdone[c] <= i) {
          fs_block(v, &s->fdone[c], i);
          break;
        }
        a = s->fend[(size_t)c * ring + (i & mask)];
      } else {
        if (s->bdone[c + 1] <= i) {
          fs_block(v, &s->bdone[c + 1], i);
          break;
        }
        a = s->bend[(size_t)(c + 1) * ring + (i & mask)] + p2p;
      }
      if (slack) slack[2 * (nb - v->nb0)] = t - a;
      s->bend[(size_t)c * ring + (i & mask)] = t = fs_end(s, t > a ? t : a, s->r[c] + s->b[c]);
      s->bdone[c]++, nb++;
      fs_advance(s, &pb);
      fs_record(s, d, RT_OP_B);
      if (c > 0) fs_feed(s, d > 0 ? d - 1 : np - 1, &s->bdone[c], s->bdone[c]);
    }
  }
  v->nf = nf, v->nb = nb, v->pf = pf, v->pb = pb, v->free = t;
}

/* The exact engine: fs_run1 / fs_runv for any chunks per device in the reference's doubles
 * and arithmetic (end = start + R + B, arrival = end + send), so its makespan is the
 * reference's bit for bit. */
static void fs_runx(FsSim *s, int d) {
  const RtPipeline *p = s->p;
  FsDev *v = &s->dev[d];
  int np = s->np, nc = s->nc, mask = s->mask;
  size_t ring = (size_t)s->ring;
  double send = np > 1 ? p->p2p : 0.0; /* one stage: every chunk on one device */
  for (;;) {
    if (fs_w_next(s, v, d)) { /* ZB-H1 has one chunk per device: W of chunk d */
      v->xfree = v->xfree + s->xw[d], v->nw++;
      fs_record(s, d, RT_OP_W);
    } else if (fs_f_next(s, v)) {
      int c = v->pf.local * np + d, i = v->pf.base + v->pf.j;
      double start = v->xfree; /* chunk 0's input is there at 0, and free >= 0 */
      if (c > 0) {
        if (s->fdone[c - 1] <= i) {
          fs_block(v, &s->fdone[c - 1], i);
          return;
        }
        double a = s->xfend[(size_t)(c - 1) * ring + (i & mask)] + send;
        if (!(start > a)) start = a;
      }
      s->xfend[(size_t)c * ring + (i & mask)] = v->xfree = start + s->xf[c];
      s->fdone[c]++, v->nf++;
      fs_advance(s, &v->pf);
      fs_record(s, d, RT_OP_F);
      if (c + 1 < nc) fs_feed(s, d + 1 < np ? d + 1 : 0, &s->fdone[c], s->fdone[c]);
    } else {
      if (v->nb == s->n || v->nb == v->limit) return;
      int c = (s->nv - 1 - v->pb.local) * np + d, i = v->pb.base + v->pb.j;
      double a;
      if (c == nc - 1) { /* from its own forward, no send */
        if (s->fdone[c] <= i) {
          fs_block(v, &s->fdone[c], i);
          return;
        }
        a = s->xfend[(size_t)c * ring + (i & mask)];
      } else {
        if (s->bdone[c + 1] <= i) {
          fs_block(v, &s->bdone[c + 1], i);
          return;
        }
        a = s->xbend[(size_t)(c + 1) * ring + (i & mask)] + send;
      }
      double start = v->xfree > a ? v->xfree : a;
      s->xbend[(size_t)c * ring + (i & mask)] = v->xfree = start + s->xr[c] + s->xb[c];
      s->bdone[c]++, v->nb++;
      fs_advance(s, &v->pb);
      fs_record(s, d, RT_OP_B);
      if (c > 0) fs_feed(s, d > 0 ? d - 1 : np - 1, &s->bdone[c], s->bdone[c]);
    }
  }
}

/* Sets every device's limit to cut K (K < 0: none); the period starts here. */
static void fs_limits(FsSim *s, int K) {
  for (int d = 0; d < s->np; d++) {
    FsDev *v = &s->dev[d];
    v->limit = K < 0 ? INT_MAX : K * s->per_cut + d;
    v->nf0 = v->nf, v->nb0 = v->nb;
  }
}

/* Runs every device until nothing more can run. */
static void fs_drain(FsSim *s) {
  for (int d = s->np - 1; d >= 0; d--) {
    s->dev[d].wait_on = NULL;
    s->stack[s->nstack++] = d;
  }
  while (s->nstack > 0) {
    int d = s->stack[--s->nstack];
    if (s->exact)
      fs_runx(s, d);
    else if (s->nv == 1)
      fs_run1(s, d);
    else
      fs_runv(s, d);
  }
}

/* Whether every device stopped at its limit with a backward next: the cut was reached. */
static int fs_at_cut(const FsSim *s) {
  for (int d = 0; d < s->np; d++) {
    const FsDev *v = &s->dev[d];
    if (v->nb != v->limit || fs_w_next(s, v, d) || fs_f_next(s, v)) return 0;
  }
  return 1;
}

/* --- the fast path: replaying a recorded order ---------------------------------------- */

/* Where device d's inputs and outputs are, for fs_replay1 (one chunk per device). */
static void fs_wire1(FsSim *s) {
  size_t ring = (size_t)s->ring;
  for (int d = 0; d < s->np; d++) {
    FsDev *v = &s->dev[d];
    int last = d + 1 == s->np;
    v->fout = s->fend + d * ring, v->bout = s->bend + d * ring;
    v->fin = d > 0 ? v->fout - ring : NULL;
    v->bin = last ? v->fout : v->bout + ring;
    v->bhop = last ? 0 : s->p2p;
  }
}

/* The recorded ops again, in their order, for one chunk per device: their inputs are there
 * (the order is one the DAG allows), so no checks and no wake-ups; the same arithmetic. */
static void fs_replay1(FsSim *s, const uint16_t *log, int nlog) {
  FsDev *dev = s->dev;
  const int64_t *f = s->f, *r = s->r, *b = s->b, *w = s->w;
  int64_t p2p = s->p2p, *slack = s->slack, top = 0;
  int mask = s->mask;
  size_t span = 2 * (size_t)s->per_cut;
  for (int k = 0; k < nlog; k++) {
    int d = log[k] >> 2;
    FsDev *v = &dev[d];
    int64_t t = v->free, a;
    if ((log[k] & 3) == RT_OP_W) {
      v->free = t = fs_sat(t, w[d]), v->nw++;
    } else if ((log[k] & 3) == RT_OP_F) {
      int i = v->nf;
      int64_t gap = 0;
      if (v->fin) {
        a = v->fin[i & mask] + p2p;
        gap = t - a;
        if (a > t) t = a;
      }
      if (slack) slack[d * span + 2 * (size_t)(i - v->nf0) + 1] = gap;
      v->fout[i & mask] = v->free = t = fs_sat(t, f[d]);
      v->nf = i + 1;
    } else {
      int i = v->nb;
      a = v->bin[i & mask] + v->bhop;
      if (slack) slack[d * span + 2 * (size_t)(i - v->nb0)] = t - a;
      if (a > t) t = a;
      v->bout[i & mask] = v->free = t = fs_sat(t, r[d] + b[d]);
      v->nb = i + 1;
    }
    if (t > top) top = t;
  }
  for (int d = 0; d < s->np; d++) s->fdone[d] = dev[d].nf, s->bdone[d] = dev[d].nb;
  if (top == FS_TICK_MAX) s->overflow = 1;
}

/* fs_replay1 for v > 1 chunks per device. */
static void fs_replayv(FsSim *s, const uint16_t *log, int nlog) {
  size_t ring = (size_t)s->ring, span = 2 * (size_t)s->per_cut;
  int mask = s->mask, np = s->np, nc = s->nc;
  int64_t p2p = s->p2p;
  for (int k = 0; k < nlog; k++) {
    int d = log[k] >> 2;
    FsDev *v = &s->dev[d];
    int64_t t = v->free, a;
    if ((log[k] & 3) == RT_OP_F) {
      int c = v->pf.local * np + d, i = v->pf.base + v->pf.j;
      int64_t gap = 0;
      if (c > 0) {
        a = s->fend[(size_t)(c - 1) * ring + (i & mask)] + p2p;
        gap = t - a;
        if (a > t) t = a;
      }
      if (s->slack) s->slack[d * span + 2 * (size_t)(v->nf - v->nf0) + 1] = gap;
      s->fend[(size_t)c * ring + (i & mask)] = v->free = fs_end(s, t, s->f[c]);
      s->fdone[c]++, v->nf++;
      fs_advance(s, &v->pf);
    } else {
      int c = (s->nv - 1 - v->pb.local) * np + d, i = v->pb.base + v->pb.j;
      a = c < nc - 1 ? s->bend[(size_t)(c + 1) * ring + (i & mask)] + p2p : s->fend[(size_t)c * ring + (i & mask)];
      if (s->slack) s->slack[d * span + 2 * (size_t)(v->nb - v->nb0)] = t - a;
      s->bend[(size_t)c * ring + (i & mask)] = v->free = fs_end(s, t > a ? t : a, s->r[c] + s->b[c]);
      s->bdone[c]++, v->nb++;
      fs_advance(s, &v->pb);
    }
  }
}

/* fs_replay1 for the exact engine (any chunks per device): fs_runx's arithmetic. */
static void fs_replayx(FsSim *s, const uint16_t *log, int nlog) {
  size_t ring = (size_t)s->ring;
  int mask = s->mask, np = s->np, nc = s->nc;
  double send = np > 1 ? s->p->p2p : 0.0;
  for (int k = 0; k < nlog; k++) {
    int d = log[k] >> 2;
    FsDev *v = &s->dev[d];
    double start = v->xfree, a;
    if ((log[k] & 3) == RT_OP_W) {
      v->xfree = start + s->xw[d], v->nw++;
    } else if ((log[k] & 3) == RT_OP_F) {
      int c = v->pf.local * np + d, i = v->pf.base + v->pf.j;
      if (c > 0) {
        a = s->xfend[(size_t)(c - 1) * ring + (i & mask)] + send;
        if (!(start > a)) start = a;
      }
      s->xfend[(size_t)c * ring + (i & mask)] = v->xfree = start + s->xf[c];
      s->fdone[c]++, v->nf++;
      fs_advance(s, &v->pf);
    } else {
      int c = (s->nv - 1 - v->pb.local) * np + d, i = v->pb.base + v->pb.j;
      a = c < nc - 1 ? s->xbend[(size_t)(c + 1) * ring + (i & mask)] + send : s->xfend[(size_t)c * ring + (i & mask)];
      if (!(start > a)) start = a;
      s->xbend[(size_t)c * ring + (i & mask)] = v->xfree = start + s->xr[c] + s->xb[c];
      s->bdone[c]++, v->nb++;
      fs_advance(s, &v->pb);
    }
  }
}

/* The order of a run's ops for one structure (schedule, stages, chunks, micro-batches), in
 * three parts: to cut 0, one period, and from the last steady cut to the end (without
 * fast-forward: the whole run in the first).  The DAG depends on the structure alone, so an
 * order recorded with one set of times is one the DAG allows with any other. */
typedef enum { FS_WARM, FS_PERIOD, FS_DRAIN, FS_NPARTS } FsPart;

typedef struct FsOrder {
  int schedule, np, nv, nm; /* the structure (np 0: none) */
  int size[FS_NPARTS];      /* ops of each part (its room in log) */
  int have[FS_NPARTS];      /* recorded */
  uint16_t *log;
  size_t cap;
} FsOrder;

/* The calling thread's orders: a structure is looked for in the FS_ORDER_WAYS orders of its
 * set, and replaces them in turn.  A sweep's innermost loops may visit many structures (with
 * a global-batch axis innermost, every schedule for every batch: 120 for 4 schedules and 30
 * batches) before they come back with other times (the next ZeRO stage or recompute): a
 * few orders would be evicted before their reuse. */
static _Thread_local FsOrder fs_orders[FS_ORDERS];
static _Thread_local unsigned char fs_order_next[FS_ORDER_SETS];
static _Thread_local size_t fs_order_bytes; /* sum of the orders' cap, in bytes */

/* The calling thread's work arrays (see fs_alloc), kept between calls. */
static _Thread_local void *fs_kept;
static _Thread_local size_t fs_kept_size;

/* What a thread keeps is freed when it exits (a sweep's workers do): a thread-specific key
 * whose destructor runs in the exiting thread, while its thread-locals are still there. */
static pthread_key_t fs_key;
static pthread_once_t fs_key_once = PTHREAD_ONCE_INIT;
static _Thread_local int fs_key_set;

static void fs_thread_exit(void *unused) {
  (void)unused;
  for (int k = 0; k < FS_ORDERS; k++) {
    free(fs_orders[k].log);
    fs_orders[k] = (FsOrder){0};
  }
  fs_order_bytes = 0;
  free(fs_kept);
  fs_kept = NULL;
  fs_kept_size = 0;
}

static void fs_key_init(void) { pthread_key_create(&fs_key, fs_thread_exit); }

/* Registers the calling thread for fs_thread_exit, once, before it keeps anything. */
static void fs_keep_begin(void) {
  if (fs_key_set) return;
  pthread_once(&fs_key_once, fs_key_init);
  fs_key_set = 1;
  pthread_setspecific(fs_key, &fs_key_set);
}

/* Ops from cut `from` to cut `to` (-1: the start, the end): at cut K device d has run
 * K U + d backwards, w_d + 1 more forwards, and in ZB-H1 K U W. */
static long long fs_ops_between(const FsSim *s, int from, int to) {
  long long ops = 0;
  for (int d = 0; d < s->np; d++) {
    long long b0 = from < 0 ? 0 : (long long)from * s->per_cut + d;
    long long b1 = to < 0 ? s->n : (long long)to * s->per_cut + d;
    long long f0 = from < 0 ? 0 : b0 + s->dev[d].warmup + 1;
    long long f1 = to < 0 ? s->n : b1 + s->dev[d].warmup + 1;
    long long w0 = from < 0 ? 0 : b0 - d, w1 = to < 0 ? s->n : b1 - d;
    ops += (b1 - b0) + (f1 - f0) + (s->zb ? w1 - w0 : 0);
  }
  return ops;
}

/* The thread's order for p (recorded, or to record), or NULL if it is too long to keep or
 * the thread's orders hold FS_ORDER_BYTES without it.
 * Whether a structure is fast-forwarded (ff) follows from the structure. */
static FsOrder *fs_order(const FsSim *s, const RtPipeline *p, int ff, int kmax) {
  uint32_t h = (uint32_t)p->schedule * 2654435761u;
  h = (h ^ (uint32_t)p->stages) * 2654435761u;
  h = (h ^ (uint32_t)p->chunks) * 2654435761u;
  h = (h ^ (uint32_t)p->micro_batches) * 2654435761u;
  _Static_assert(FS_ORDER_SETS == 1 << 6, "the set is the hash's top 6 bits");
  int set = (int)(h >> 26);
  FsOrder *way = &fs_orders[set * FS_ORDER_WAYS];
  for (int k = 0; k < FS_ORDER_WAYS; k++) {
    FsOrder *o = &way[k];
    if (o->np == p->stages && o->schedule == (int)p->schedule && o->nv == p->chunks && o->nm == p->micro_batches)
      return o;
  }
  long long size[FS_NPARTS] = {fs_ops_between(s, -1, ff ? 0 : -1), ff ? fs_ops_between(s, 0, 1) : 0,
                               ff ? fs_ops_between(s, kmax + 1, -1) : 0};
  if (size[0] + size[1] + size[2] > FS_ORDER_MAX) return NULL;
  FsOrder *o = &way[fs_order_next[set]];
  size_t need = (size_t)(size[0] + size[1] + size[2]);
  if (need > o->cap) {
    size_t bytes = need * sizeof *o->log, old = o->cap * sizeof *o->log;
    if (fs_order_bytes - old + bytes > FS_ORDER_BYTES) return NULL; /* run unrecorded */
    fs_keep_begin();
    free(o->log);
    fs_order_bytes -= old;
    o->log = malloc(bytes);
    o->cap = o->log ? need : 0;
    fs_order_bytes += o->log ? bytes : 0;
  }
  fs_order_next[set] = (unsigned char)((fs_order_next[set] + 1) % FS_ORDER_WAYS);
  if (!o->log) return o->np = 0, NULL;
  *o = (FsOrder){(int)p->schedule, p->stages, p->chunks, p->micro_batches, {(int)size[0], (int)size[1], (int)size[2]},
                 {0, 0, 0},        o->log,    o->cap};
  return o;
}

/* Runs to cut K (K < 0: to the end), which is `part` of the order o (NULL: none): replayed if
 * recorded, else simulated (and recorded).  Returns 0 if the cut was not reached. */
static int fs_part(FsSim *s, FsOrder *o, FsPart part, int K) {
  fs_limits(s, K);
  uint16_t *log = NULL;
  if (o) {
    log = o->log;
    for (int k = 0; k < (int)part; k++) log += o->size[k];
    if (o->have[part]) {
      if (s->exact)
        fs_replayx(s, log, o->size[part]);
      else if (s->nv == 1)
        fs_replay1(s, log, o->size[part]);
      else
        fs_replayv(s, log, o->size[part]);
      return 1;
    }
  }
  s->log = log, s->nlog = 0, s->logroom = o ? o->size[part] : 0;
  fs_drain(s);
  s->log = NULL;
  int ok = K < 0 || fs_at_cut(s);
  if (o && ok) o->have[part] = s->nlog == o->size[part];
  return ok;
}

/* --- the fast path: the state at a cut, and the jumps ---------------------------------- */

/* The fast-forward's memory: the rebased states at the last `depth` cuts, the slacks of the
 * last two periods. */
typedef struct FsHist {
  int depth, width;  /* cuts kept, room per state */
  int64_t *z, *beta; /* [slot * width]: states; [slot]: base moved at that cut */
  uint64_t *hash;
  int *len;
  int64_t *slack[2]; /* [K % 2]: the period that ended at cut K */
} FsHist;

/* What fs_state does with each time of the state. */
typedef enum { FS_REBASE, FS_PUT } FsIo;

static int fs_range(FsSim *s, int64_t *ring, int lo, int hi, int64_t *z, int k, FsIo io, int64_t b0) {
  for (int i = lo; i < hi; i++, k++) {
    int64_t *t = &ring[i & s->mask];
    if (io == FS_PUT)
      *t = z[k];
    else
      z[k] = *t -= b0;
  }
  return k;
}

/* The state at a cut in its fixed order: free times, then per chunk the F inputs arrived and
 * not consumed, then the B inputs, then the last chunk's forwards its B has not consumed;
 * rebased by b0 into z, or put back from z.  Returns the count: p + F_done(0) - B_done(0). */
static int fs_state(FsSim *s, int64_t *z, FsIo io, int64_t b0) {
  int k = 0, nc = s->nc;
  size_t ring = (size_t)s->ring;
  for (int d = 0; d < s->np; d++, k++) {
    if (io == FS_PUT)
      s->dev[d].free = z[k];
    else
      z[k] = s->dev[d].free -= b0;
  }
  for (int c = 1; c < nc; c++) k = fs_range(s, s->fend + (c - 1) * ring, s->fdone[c], s->fdone[c - 1], z, k, io, b0);
  for (int c = 0; c + 1 < nc; c++)
    k = fs_range(s, s->bend + (c + 1) * ring, s->bdone[c], s->bdone[c + 1], z, k, io, b0);
  return fs_range(s, s->fend + (nc - 1) * ring, s->bdone[nc - 1], s->fdone[nc - 1], z, k, io, b0);
}

/* The state's hash; *far gets its largest time in magnitude. */
static uint64_t fs_hash(const int64_t *z, int n, int64_t *far) {
  uint64_t h = HASH_BASIS;
  int64_t top = 0;
  for (int i = 0; i < n; i++) {
    h = hash_word(h, (uint64_t)z[i]);
    h ^= h >> 29;
    int64_t x = z[i] < 0 ? -z[i] : z[i];
    if (x > top) top = x;
  }
  *far = top;
  return h;
}

/* Skips `periods` periods: counters and micro-batch indices move on, and the rebased state
 * becomes z at its new indices (the base is the caller's). */
static void fs_jump(FsSim *s, int periods, int64_t *z) {
  int ops = periods * s->per_cut, micro = periods * s->period;
  for (int d = 0; d < s->np; d++) {
    FsDev *v = &s->dev[d];
    v->nf += ops, v->nb += ops, v->nw += s->zb ? ops : 0;
    v->pf.base += micro, v->pb.base += micro;
  }
  for (int c = 0; c < s->nc; c++) s->fdone[c] += micro, s->bdone[c] += micro;
  fs_state(s, z, FS_PUT, 0);
}

static int64_t *fs_slot(const FsHist *h, int K) { return h->z + (size_t)(K % h->depth) * h->width; }

/* The smallest r such that the state at cut K is the one at cut K-r (no earlier than cut
 * `first`); 0 if none. */
static int fs_repeat(const FsHist *h, int K, int first) {
  int now = K % h->depth, old = now;
  for (int r = 1; r <= K - first && r < h->depth; r++) {
    old = old > 0 ? old - 1 : h->depth - 1; /* (K - r) % depth */
    if (h->hash[old] == h->hash[now] && h->len[old] == h->len[now] &&
        !memcmp(fs_slot(h, K - r), fs_slot(h, K), (size_t)h->len[now] * sizeof *h->z))
      return r;
  }
  return 0;
}

/* The periods the last period's max choices last for, if each kept its side since the period
 * before: a slack moving by a step per period keeps its sign for |slack| / |step| periods
 * when moving towards 0 (at 0 both sides are equal, either choice gives the same time). */
static int64_t fs_choices_last(const FsSim *s, const FsHist *h, int K) {
  const int64_t *now = h->slack[K % 2], *before = h->slack[(K - 1) % 2];
  int64_t last = INT_MAX;
  for (int k = 0; k < 2 * s->per_cut * s->np; k++) {
    int64_t a = now[k], b = before[k], step = a - b, hold = INT_MAX;
    if ((a > 0) != (b > 0) || (a < 0) != (b < 0)) return 0; /* a choice changed */
    if (a > 0 && step < 0) hold = a / -step;
    if (a < 0 && step > 0) hold = -a / step;
    if (hold < last) last = hold;
  }
  return last;
}

/* The affine jump: if cuts K-2, K-1, K moved by one constant step (device 0's base too) with
 * the same max choices in both periods, each period is the same affine map (each time the sum
 * of the same ops after the same state time), under which the state keeps moving by that step
 * while those choices hold: jumps as far as they do and the steady maps reach.  Returns the
 * periods jumped (0: none). */
static int fs_affine(FsSim *s, FsHist *h, int K, int kmax) {
  int len = h->len[K % h->depth];
  if (h->len[(K - 1) % h->depth] != len || h->len[(K - 2) % h->depth] != len) return 0;
  if (h->beta[K % h->depth] != h->beta[(K - 1) % h->depth]) return 0;
  const int64_t *z = fs_slot(h, K), *y = fs_slot(h, K - 1), *x = fs_slot(h, K - 2);
  for (int k = 0; k < len; k++)
    if (z[k] - y[k] != y[k] - x[k]) return 0;
  int64_t j = fs_choices_last(s, h, K);
  if (j > kmax + 1 - K) j = kmax + 1 - K;
  for (int k = 0; k < len && j >= 2; k++) /* the moved times must stay in the room */
    if (fabs((double)z[k] + (double)j * (double)(z[k] - y[k])) > (double)FS_ROOM) j = 0;
  if (j < 2) return 0;
  int64_t *to = fs_slot(h, K + (int)j); /* may be the slot of K or K-1: read before written */
  for (int k = 0; k < len; k++) to[k] = z[k] + j * (z[k] - y[k]);
  int at = (K + (int)j) % h->depth;
  int64_t far;
  h->len[at] = len, h->beta[at] = h->beta[K % h->depth], h->hash[at] = fs_hash(to, len, &far);
  fs_jump(s, (int)j, to);
  s->base += (double)j * ((double)h->beta[at] * s->tick);
  return (int)j;
}

/* Rebases the state at cut K on device 0's free time into the history; returns 0 if a time
 * is out of the room (then the next period or the drain could reach FS_TICK_MAX). */
static int fs_remember(FsSim *s, FsHist *h, int K) {
  int now = K % h->depth;
  int64_t *z = fs_slot(h, K), b0 = s->dev[0].free;
  int64_t far;
  h->len[now] = fs_state(s, z, FS_REBASE, b0);
  h->beta[now] = b0, s->base += (double)b0 * s->tick;
  h->hash[now] = fs_hash(z, h->len[now], &far);
  return far <= FS_ROOM;
}

/* The steady-state fast-forward (docs/schedule.md): cuts K = 0, 1, ... (rebased, remembered)
 * with affine jumps through transients, until the state repeats; then the periodic jump.
 * Leaves the engine on the last steady cut kmax + 1 and returns 1, or returns 0 if a cut was
 * not reached (cannot happen with the schedules' orders) or the ticks ran out of room. */
static int fs_fast_forward(FsSim *s, FsHist *h, FsOrder *o, int kmax) {
  int first = 0; /* the history holds cuts first .. K */
  if (!fs_part(s, o, FS_WARM, 0)) return 0;
  for (int K = 0; K <= kmax + 1; K++) {
    if (K > 0) {
      s->slack = h->slack[K % 2];
      int ok = fs_part(s, o, FS_PERIOD, K);
      s->slack = NULL;
      if (!ok) return 0;
    }
    if (s->overflow || !fs_remember(s, h, K)) return 0;
    int r = fs_repeat(h, K, first);
    if (r > 0) {
      int j = (kmax + 1 - K) / r;
      int64_t lambda = 0; /* the base's growth over the r periods */
      for (int q = 0; q < r; q++) lambda += h->beta[(K - q) % h->depth];
      if (j > 0) fs_jump(s, j * r, fs_slot(h, K));
      s->base += (double)j * ((double)lambda * s->tick);
      for (K += j * r; K < kmax + 1; K++) /* the rest (fewer than r), still rebased */
        if (!fs_part(s, o, FS_PERIOD, K + 1) || !fs_remember(s, h, K + 1)) return 0;
      return !s->overflow;
    }
    if (K - first >= 2 && K >= 2) {
      int j = fs_affine(s, h, K, kmax);
      if (j > 0) K += j, first = K;
    }
  }
  return 1;
}

/* --- the fast path: memory and the run ------------------------------------------------ */

/* The calling thread's work arrays, kept between calls (up to RT_KEEP_BYTES). */
static void *fs_alloc(size_t bytes) {
  if (bytes > RT_KEEP_BYTES) return malloc(bytes);
  if (bytes > fs_kept_size) {
    fs_keep_begin();
    size_t size = bytes < 65536 ? 65536 : bytes;
    free(fs_kept);
    fs_kept = malloc(size);
    fs_kept_size = fs_kept ? size : 0;
  }
  return fs_kept;
}

static void fs_release(void *mem) {
  if (mem != fs_kept) free(mem);
}

/* Reserves n items of `size` bytes at offset *at (kept 16-byte aligned); returns the offset. */
static size_t fs_take(size_t *at, size_t n, size_t size) {
  size_t o = *at;
  *at += (n * size + 15) / 16 * 16;
  return o;
}

/* Lays out the engine and the history in mem (NULL: only measures); returns the bytes.  The
 * rings hold ticks or, in exact mode, doubles (the same 8 bytes). */
static size_t fs_layout(FsSim *s, FsHist *h, char *mem) {
  size_t at = 0, nc = (size_t)s->nc, np = (size_t)s->np, slots = nc * (size_t)s->ring;
  size_t depth = (size_t)h->depth, t = sizeof(int64_t), i = sizeof(int);
  size_t nslack = 2 * (size_t)s->per_cut * np;
  size_t dev = fs_take(&at, np, sizeof(FsDev)), f = fs_take(&at, nc, t), r = fs_take(&at, nc, t);
  size_t b = fs_take(&at, nc, t), w = fs_take(&at, nc, t);
  size_t fend = fs_take(&at, slots, t), bend = fs_take(&at, slots, t);
  size_t z = fs_take(&at, depth * (size_t)h->width, t), beta = fs_take(&at, depth, t);
  size_t sl0 = fs_take(&at, nslack, t), sl1 = fs_take(&at, nslack, t);
  size_t hash = fs_take(&at, depth, sizeof(uint64_t)), len = fs_take(&at, depth, i);
  size_t fdone = fs_take(&at, nc, i), bdone = fs_take(&at, nc, i), stack = fs_take(&at, np, i);
  if (mem) {
    s->dev = (FsDev *)(mem + dev), s->stack = (int *)(mem + stack);
    s->f = (int64_t *)(mem + f), s->r = (int64_t *)(mem + r);
    s->b = (int64_t *)(mem + b), s->w = (int64_t *)(mem + w);
    s->xf = (double *)(mem + f), s->xr = (double *)(mem + r);
    s->xb = (double *)(mem + b), s->xw = (double *)(mem + w);
    s->fend = (int64_t *)(mem + fend), s->bend = (int64_t *)(mem + bend);
    s->xfend = (double *)(mem + fend), s->xbend = (double *)(mem + bend);
    s->fdone = (int *)(mem + fdone), s->bdone = (int *)(mem + bdone);
    h->z = (int64_t *)(mem + z), h->beta = (int64_t *)(mem + beta);
    h->slack[0] = (int64_t *)(mem + sl0), h->slack[1] = (int64_t *)(mem + sl1);
    h->hash = (uint64_t *)(mem + hash), h->len = (int *)(mem + len);
  }
  return at;
}

/* The engine's sizes for p; h sized for the fast-forward. */
static void fs_init(FsSim *s, FsHist *h, const RtPipeline *p) {
  *s = (FsSim){.p = p,
               .np = p->stages,
               .nv = p->chunks,
               .nc = p->stages * p->chunks,
               .zb = p->schedule == RT_ZERO_BUBBLE,
               .period = p->chunks > 1 ? p->stages : 1};
  s->n = p->micro_batches * s->nv;
  s->per_cut = s->period * s->nv;
  /* a chunk's outputs not yet consumed are at most what its device holds: w_0 + 1 */
  int held = rt_warmup(p, 0, s->n) + 1;
  for (s->ring = 1; s->ring <= held; s->ring *= 2) {}
  s->mask = s->ring - 1;
  /* the state has p + F_done(0) - B_done(0) <= p + held times; 1F1B with sends repeats every
   * p periods, interleaved (p micro-batches a period) within a few */
  h->width = s->np + held;
  h->depth = (s->nv == 1 ? 2 * s->np + 2 : 4) + 1;
}

/* The engine before its first op (exact: in doubles, the op times as the reference has them). */
static void fs_start(FsSim *s, int exact) {
  const RtPipeline *p = s->p;
  for (int c = 0; c < s->nc; c++) {
    s->fdone[c] = s->bdone[c] = 0;
    if (!exact) continue;
    s->xf[c] = p->fwd[c], s->xr[c] = rt_at(p->recompute, c);
    s->xb[c] = p->bwd[c] + (s->zb ? 0.0 : rt_at(p->wgrad, c));
    s->xw[c] = s->zb ? rt_at(p->wgrad, c) : 0.0;
  }
  for (int d = 0; d < s->np; d++) s->dev[d] = (FsDev){.warmup = rt_warmup(s->p, d, s->n), .limit = INT_MAX};
  s->exact = exact, s->nstack = 0, s->slack = NULL, s->log = NULL;
  s->overflow = 0, s->base = 0;
}

/* The tick: a power of two, with 2^62 ticks above 4 (one micro-batch's round trip through
 * every chunk with its sends + device 0's warm-up and a period, each op at the longest), the
 * most any time is from a cut's base.  Times become ticks rounded to the nearest (an op's
 * rounding is below 2^-59 of that bound: the makespan's stays below about 1e-15 relative).
 * Returns 0 when that bound is beyond the doubles (times near 1e308) or so small that 2^62
 * ticks of it overflow (near 1e-290): the run goes exactly, in doubles. */
static int fs_ticks(FsSim *s) {
  const RtPipeline *p = s->p;
  double trip = 0, op = 0, send = p->p2p;
  for (int c = 0; c < s->nc; c++) {
    double w = rt_at(p->wgrad, c), x = p->fwd[c] + rt_bwd_op(p, c, s->zb) + (s->zb ? w : 0);
    trip += x + 2 * send;
    if (x + 2 * send > op) op = x + 2 * send;
  }
  int e;
  double bound = 4 * (trip + (s->dev[0].warmup + 1 + s->per_cut) * op);
  if (!isfinite(bound)) return 0;
  frexp(bound, &e);
  if (62 - e > DBL_MAX_EXP - 1) return 0; /* the scale 2^(62 - e) would be infinite */
  s->tick = ldexp(1, e - 62);
  double scale = ldexp(1, 62 - e);
  for (int c = 0; c < s->nc; c++) {
    s->f[c] = (int64_t)nearbyint(p->fwd[c] * scale);
    s->r[c] = (int64_t)nearbyint(rt_at(p->recompute, c) * scale);
    s->b[c] = (int64_t)nearbyint((p->bwd[c] + (s->zb ? 0.0 : rt_at(p->wgrad, c))) * scale);
    s->w[c] = (int64_t)nearbyint((s->zb ? rt_at(p->wgrad, c) : 0.0) * scale);
  }
  s->p2p = (int64_t)nearbyint(send * scale);
  return 1;
}

/* The last cut whose next period is steady for every device: (K+1) U + d + w_d < n. */
static int fs_kmax(const FsSim *s) {
  int top = 0;
  for (int d = 0; d < s->np; d++) {
    int w = rt_warmup(s->p, d, s->n);
    if (d + w > top) top = d + w;
  }
  return s->n - top - 1 < 0 ? -1 : (s->n - top - 1) / s->per_cut - 1;
}

/* The fast-forwarded run in ticks; returns 0 (to be run exactly) if it could not be. */
static int fs_run_fast(FsSim *s, FsHist *h, int kmax) {
  fs_start(s, 0);
  if (!fs_ticks(s)) return 0;
  FsOrder *o = fs_order(s, s->p, 1, kmax);
  if (s->nv == 1) fs_wire1(s);
  if (!fs_fast_forward(s, h, o, kmax)) return 0;
  fs_part(s, o, FS_DRAIN, -1);
  return !s->overflow;
}

/* The makespan of a 1F1B-family schedule over p >= 2 stages, or of any over one stage (run
 * exactly: GPipe's order too); -1 if out of memory or if the order did not finish. */
static double fs_makespan(const RtPipeline *p) {
  FsSim s;
  FsHist h;
  fs_init(&s, &h, p);
  char *mem = fs_alloc(fs_layout(&s, &h, NULL));
  if (!mem) return -1;
  fs_layout(&s, &h, mem);
  int kmax = fs_kmax(&s), ff = s.np > 1 && kmax >= FS_MIN_PERIODS;
  if (!ff) {
    fs_start(&s, 1);
    fs_part(&s, fs_order(&s, p, 0, kmax), FS_WARM, -1);
  } else if (!fs_run_fast(&s, &h, kmax)) {
    fs_start(&s, 1); /* out of ticks (times near the doubles' limits): run exactly, unrecorded */
    fs_part(&s, NULL, FS_DRAIN, -1);
  }
  double last = s.exact ? s.dev[0].xfree : (double)s.dev[0].free;
  int done = 1;
  for (int d = 0; d < s.np; d++) {
    const FsDev *v = &s.dev[d];
    done &= v->nf == s.n && v->nb == s.n && (!s.zb || v->nw == s.n);
    double t = s.exact ? v->xfree : (double)v->free;
    if (t > last) last = t;
  }
  fs_release(mem);
  return !done ? -1 : s.exact ? last : s.base + last * s.tick;
}

/* --- a lower bound without simulation ------------------------------------------------ */

double rt_pipeline_bound(const RtPipeline *p) {
  if (!rt_args_ok(p, 0, NULL)) return NAN;
  int np = p->stages, zb = p->schedule == RT_ZERO_BUBBLE;
  double m = p->micro_batches, send = np > 1 ? p->p2p : 0.0;
  double head = 0, tail = 0, best = 0; /* chunks 0 .. d-1: forwards, backward ops, with sends */
  for (int d = 0; d < np; d++) {
    double busy = 0;
    for (int c = d; c < np * p->chunks; c += np)
      busy += m * (p->fwd[c] + rt_bwd_op(p, c, zb) + (zb ? rt_at(p->wgrad, c) : 0.0));
    double lb = head + busy;
    if (zb && d > 0) { /* up to d + 1 W after its last B; device 0 runs one after its own */
      double late = (m < d + 1 ? m : d + 1) * rt_at(p->wgrad, d);
      lb = fmax(lb, head + busy - late + tail + rt_at(p->wgrad, 0));
    } else if (!zb) {
      lb += tail; /* the last op of device d is the backward of chunk d */
    }
    if (lb > best) best = lb;
    head += p->fwd[d] + send;
    tail += rt_bwd_op(p, d, zb) + send;
  }
  return best * (1 - 1e-9);
}

/* --- the entry point ------------------------------------------------------------------ */

RtPipeResult rt_pipeline(const RtPipeline *p, RtPipeEvent *events, int maxevents, int *nevents) {
  if (events && maxevents > 0) return rt_pipeline_reference(p, events, maxevents, nevents);
  if (!rt_args_ok(p, maxevents, events)) return rt_pipe_bad(nevents);
  RtPipeResult r = {0, 0, 0, 0, 0, 0};
  rt_busy(p, &r);
  rt_held(p, &r);
  if (p->stages == 1 && p->micro_batches * p->chunks > FS_REPLAY_N)
    r.makespan = r.busy; /* one device never waits */
  else if (p->stages > 1 && p->schedule == RT_GPIPE)
    r.makespan = rt_gpipe_makespan(p);
  else
    r.makespan = fs_makespan(p);
  if (!(r.makespan >= 0)) return rt_pipe_bad(nevents);
  if (nevents) *nevents = (int)rt_nevents(p, 0, p->stages);
  return r;
}

/* n items over k bins: uniform (must divide) or balanced (the first ones get the extra);
 * false if they do not divide. */
static bool spread(int n, int k, int balanced, int *out, int step) {
  if (k < 1 || n < 0 || (!balanced && n % k)) return false;
  for (int i = 0; i < k; i++) out[i * step] = n / k + (i < n % k);
  return true;
}

int rt_partition_layers(int layers, int stages, int chunks, int balanced, int *out) {
  if (!out || layers < 1 || stages < 1 || chunks < 1 || stages > INT_MAX / chunks) return -1;
  int n = stages * chunks;
  return layers >= n && spread(layers, n, balanced, out, 1) ? 0 : -1;
}

/* --- layouts -------------------------------------------------------------------------- */

static const RtLayout *layouts[RT_MAX_LAYOUTS + 1]; /* [id]; written once, under the lock */
static int nlayouts;
static pthread_mutex_t layouts_lock = PTHREAD_MUTEX_INITIALIZER;

static bool layout_equal(const RtLayout *a, const RtLayout *b) {
  return a->layers == b->layers && a->nstage == b->nstage && a->first == b->first && a->last == b->last &&
         !memcmp(a->group, b->group, (size_t)a->layers) &&
         (!a->nstage || !memcmp(a->stage, b->stage, (size_t)a->nstage * sizeof *a->stage));
}

int rt_layout_register(const RtLayout *l) {
  if (!l || l->layers < 1 || !l->group || l->nstage < 0 || l->nstage > RT_MAX_CHUNKS || (l->nstage && !l->stage) ||
      l->first < -1 || l->last < -1)
    return -1;
  for (int i = 0; i < l->layers; i++)
    if (l->group[i] >= RT_MAX_GROUPS) return -1;
  pthread_mutex_lock(&layouts_lock);
  int id = -1;
  for (int i = 1; i <= nlayouts && id < 0; i++)
    if (layout_equal(layouts[i], l)) id = i;
  if (id < 0 && nlayouts < RT_MAX_LAYOUTS) {
    RtLayout *c = malloc(sizeof *c);
    unsigned char *g = malloc((size_t)l->layers);
    int *st = l->nstage ? malloc((size_t)l->nstage * sizeof *st) : NULL;
    if (c && g && (st || !l->nstage)) {
      memcpy(g, l->group, (size_t)l->layers);
      if (st) memcpy(st, l->stage, (size_t)l->nstage * sizeof *st);
      *c = (RtLayout){l->layers, g, l->nstage, st, l->first, l->last};
      __atomic_store_n(&layouts[nlayouts + 1], c, __ATOMIC_RELEASE);
      id = ++nlayouts;
    } else {
      free(c), free(g), free(st);
    }
  }
  pthread_mutex_unlock(&layouts_lock);
  return id;
}

/* Layers per model chunk under l: explicit, by first/last stage, or by rt_partition_layers. */
static int layout_chunks(const RtLayout *l, int stages, int chunks, int balanced, int *counts) {
  int n = stages * chunks;
  if (l->nstage) {
    if (l->nstage != n) return -1;
    long long sum = 0;
    for (int c = 0; c < n; c++) sum += counts[c] = l->stage[c];
    return sum == l->layers ? 0 : -1;
  }
  bool f = l->first >= 0, la = l->last >= 0;
  if (!f && !la) return rt_partition_layers(l->layers, stages, chunks, balanced, counts);
  if (stages < 2) return -1;
  int rest = l->layers - (f ? l->first : 0) - (la ? l->last : 0), mid = stages - f - la, per[RT_MAX_CHUNKS];
  if (rest < 0 || (mid == 0 && rest) || (mid > 0 && !spread(rest, mid, balanced, per + f, 1))) return -1;
  if (f) per[0] = l->first;
  if (la) per[stages - 1] = l->last;
  for (int d = 0; d < stages; d++) /* stage d's layers over its chunks d, d + stages, ... */
    if (!spread(per[d], chunks, balanced, counts + d, stages)) return -1;
  return 0;
}

int rt_layout_counts(int id, int layers, int stages, int chunks, int balanced, int (*out)[RT_MAX_GROUPS]) {
  if (id < 0 || stages < 1 || chunks < 1 || stages > RT_MAX_CHUNKS / chunks) return -1;
  int n = stages * chunks, counts[RT_MAX_CHUNKS];
  const RtLayout *l = id ? __atomic_load_n(&layouts[id <= RT_MAX_LAYOUTS ? id : 0], __ATOMIC_ACQUIRE) : NULL;
  if (id && (!l || l->layers != layers)) return -1;
  if (l ? layout_chunks(l, stages, chunks, balanced, counts) < 0
        : rt_partition_layers(layers, stages, chunks, balanced, counts) < 0)
    return -1;
  int at = 0;
  for (int c = 0; c < n; c++) {
    memset(out[c], 0, sizeof out[c]);
    if (!l) {
      out[c][0] = counts[c];
      continue;
    }
    for (int i = 0; i < counts[c]; i++) out[c][l->group[at++]]++;
  }
  return 0;
}
