/* trace.c - the Chrome trace-event file of one iteration (report_trace, report.h), which
 * Perfetto and chrome://tracing open.
 *
 * The trace has a process per pipeline stage ("stage D") and four threads in it: compute
 * (0), tp/cp/ep comm (1), pp send/recv (2) and dp comm (3).  Times are written in whole
 * nanoseconds (microseconds with three decimals), and an event's operators are placed by
 * integer arithmetic, so they tile their parent exactly and never stick out of it.  The spans
 * are placed once, by report_trace_walk, which the file writer and the HTML timeline
 * (html.c) both visit. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "jsonw.h"

static const char *str(const char *s) { return s ? s : ""; }

const char *const report_trace_threads[TRACE_THREADS] = {"compute", "tp/cp/ep comm", "pp send/recv", "dp comm"};

typedef long long Ns; /* nanoseconds: event edges are whole numbers, so nesting is exact */

/* Seconds to nanoseconds; false if s is not finite or beyond what Ns holds (~290 years). */
static bool to_ns(double s, Ns *out) {
  if (!isfinite(s) || fabs(s) > 9e9) return false;
  *out = llround(s * 1e9);
  return true;
}

/* The walk: the input, the visitor, and the span handed to it. */
typedef struct Walk {
  const TraceInput *t;
  void (*visit)(void *ctx, const TraceSpan *s);
  void *ctx;
  int nchunks;
} Walk;

static void span(Walk *k, const char *name, const char *cat, int stage, int thread, Ns start, Ns dur, int micro,
                 int chunk) {
  TraceSpan s = {name, cat, stage, thread, start, dur, micro, chunk, NAN, -1};
  k->visit(k->ctx, &s);
}

static const char *kind_category(char kind) {
  switch (kind) {
  case 'F': return "forward";
  case 'R': return "recompute";
  case 'B': return "backward";
  case 'W': return "weight gradient";
  default: return "compute";
  }
}

/* The chunk's operators inside the event [start, end], end to end, scaled to fill it: op i
 * ends at start + dur * (sum of times up to i) / (sum of all), rounded to the nanosecond,
 * and the last one ends at `end`. */
static void walk_ops(Walk *k, const RtPipeEvent *e, Ns start, Ns end) {
  const TraceInput *t = k->t;
  int c = e->chunk;
  if (!t->ops || !t->nops || c < 0 || c >= k->nchunks || !t->ops[c] || t->nops[c] <= 0) return;
  const TraceOp *ops = t->ops[c];
  int n = t->nops[c], last = -1;
  bool fwd = e->kind == 'F' || e->kind == 'R';
  double sum = 0;
  for (int i = 0; i < n; i++) {
    double x = fwd ? ops[i].fwd : ops[i].bwd;
    if (isfinite(x) && x > 0) {
      sum += x;
      last = i;
    }
  }
  if (!(sum > 0) || !isfinite(sum)) return;
  double dur = (double)(end - start), cum = 0;
  Ns at = start;
  for (int i = 0; i <= last; i++) {
    double x = fwd ? ops[i].fwd : ops[i].bwd;
    if (!(isfinite(x) && x > 0)) continue;
    cum += x;
    Ns next = i == last ? end : start + llround(dur * (cum / sum));
    if (next < at) next = at;
    if (next > end) next = end;
    if (next > at) {
      int thread = ops[i].stream == 't' ? TRACE_TP : TRACE_COMPUTE;
      TraceSpan s = {str(ops[i].name), "op", e->device, thread, at, next - at, e->micro, c, x, -1};
      k->visit(k->ctx, &s);
    }
    at = next;
  }
}

/* The pipeline send after a forward (to the next chunk) or a backward (to the previous
 * one), where that chunk is on another device. */
static void walk_send(Walk *k, const RtPipeEvent *e, Ns end, Ns p2p) {
  int c = e->chunk, to;
  if (k->t->stages < 2 || c < 0 || c >= k->nchunks) return;
  if (e->kind == 'F' && c + 1 < k->nchunks)
    to = c + 1;
  else if (e->kind == 'B' && c > 0)
    to = c - 1;
  else
    return;
  if (to % k->t->stages == c % k->t->stages) return;
  char name[96];
  snprintf(name, sizeof name, "send %c mb%d to stage %d", e->kind, e->micro, to % k->t->stages);
  TraceSpan s = {name, "pp", e->device, TRACE_PP, end, p2p, e->micro, c, NAN, to};
  k->visit(k->ctx, &s);
}

/* Each event of the schedule, with its operators and its pipeline send. */
static void walk_events(Walk *k, int nevents, Ns p2p) {
  Ns a, b;
  for (int i = 0; i < nevents; i++) {
    const RtPipeEvent *e = &k->t->events[i];
    if (!to_ns(e->start, &a) || !to_ns(e->end, &b) || b < a) continue;
    char name[96];
    snprintf(name, sizeof name, "%c mb%d chunk%d", e->kind ? e->kind : '?', e->micro, e->chunk);
    span(k, name, kind_category(e->kind), e->device, TRACE_COMPUTE, a, b - a, e->micro, e->chunk);
    walk_ops(k, e, a, b);
    if (p2p > 0) walk_send(k, e, b, p2p);
  }
}

/* The data-parallel reduction and the optimizer step, on every stage. */
static void walk_tail(Walk *k, int stages) {
  const TraceInput *t = k->t;
  Ns a, b;
  for (int d = 0; d < stages; d++) {
    if (t->dp_comm > 0 && to_ns(t->dp_start, &a) && to_ns(t->dp_comm, &b))
      span(k, "dp gradient reduction", "dp", d, TRACE_DP, a, b, -1, -1);
    if (t->optimizer > 0 && to_ns(t->optimizer_start, &a) && to_ns(t->optimizer, &b))
      span(k, "optimizer step", "optimizer", d, TRACE_COMPUTE, a, b, -1, -1);
  }
}

int report_trace_stages(const TraceInput *t) {
  if (!t) return 0;
  int stages = t->stages;
  if (stages < 1) { /* not given: as many as the events use */
    stages = 0;
    for (int i = 0; t->events && i < t->nevents; i++)
      if (t->events[i].device >= stages) stages = t->events[i].device + 1;
  }
  return stages;
}

void report_trace_walk(const TraceInput *t, void (*visit)(void *ctx, const TraceSpan *s), void *ctx) {
  if (!t || !visit) return;
  long long nchunks_ll = (long long)(t->stages > 0 ? t->stages : 0) * (t->chunks > 0 ? t->chunks : 1);
  Walk k = {t, visit, ctx, nchunks_ll > RT_MAX_CHUNKS ? RT_MAX_CHUNKS : (int)nchunks_ll};
  Ns p2p = 0;
  if (!to_ns(t->p2p, &p2p) || p2p < 0) p2p = 0;
  walk_events(&k, t->events && t->nevents > 0 ? t->nevents : 0, p2p);
  walk_tail(&k, report_trace_stages(t));
}

/* --- the trace-event file ------------------------------------------------------------------ */

/* A time member in microseconds with three decimals (whole nanoseconds). */
static void j_us(J *j, const char *key, Ns ns) {
  j_key(j, key);
  if (ns < 0) {
    w_putc(j->w, '-');
    ns = -ns;
  }
  w_printf(j->w, "%lld.%03lld", ns / 1000, ns % 1000);
}

/* Closes an event's args and the event. */
static void j_args_end(J *j) {
  j_close(j, '}');
  j_close(j, '}');
}

/* A metadata event: the process or thread's `key` is the text s, or n where s is NULL. */
static void j_metadata(J *j, const char *name, int pid, int tid, const char *key, const char *s, int n) {
  j_open(j, NULL, '{');
  j_str(j, "name", name);
  j_str(j, "ph", "M");
  j_int(j, "pid", pid);
  if (tid >= 0) j_int(j, "tid", tid);
  j_open(j, "args", '{');
  if (s)
    j_str(j, key, s);
  else
    j_int(j, key, n);
  j_args_end(j);
}

/* The names and the order of the processes (stages) and of their threads. */
static void trace_metadata(J *j, int stages) {
  for (int d = 0; d < stages; d++) {
    char name[32];
    snprintf(name, sizeof name, "stage %d", d);
    j_metadata(j, "process_name", d, -1, "name", name, 0);
    j_metadata(j, "process_sort_index", d, -1, "sort_index", NULL, d);
    for (int tid = 0; tid < TRACE_THREADS; tid++) {
      j_metadata(j, "thread_name", d, tid, "name", report_trace_threads[tid], 0);
      j_metadata(j, "thread_sort_index", d, tid, "sort_index", NULL, tid);
    }
  }
}

/* A complete event ("ph":"X"); a schedule event's args say its micro-batch and chunk, an
 * operator's its own seconds too, a send's the chunk it goes to. */
static void trace_event(void *ctx, const TraceSpan *s) {
  J *j = ctx;
  j_open(j, NULL, '{');
  j_str(j, "name", s->name);
  j_str(j, "cat", s->cat);
  j_str(j, "ph", "X");
  j_int(j, "pid", s->stage);
  j_int(j, "tid", s->thread);
  j_us(j, "ts", s->start);
  j_us(j, "dur", s->dur);
  if (s->micro >= 0) {
    j_open(j, "args", '{');
    j_int(j, "micro", s->micro);
    j_int(j, "chunk", s->chunk);
    if (!isnan(s->time_s)) j_num(j, "time_s", s->time_s);
    if (s->to_chunk >= 0) j_int(j, "to_chunk", s->to_chunk);
    j_close(j, '}');
  }
  j_close(j, '}');
}

int report_trace(FILE *out, const TraceInput *t) {
  if (!out || !t) {
    errno = EINVAL;
    return -1;
  }
  W w = {out, 0};
  J j = {&w, true, 0, 2}; /* one event a line */
  j_open(&j, NULL, '{');
  j_open(&j, "traceEvents", '[');
  trace_metadata(&j, report_trace_stages(t));
  report_trace_walk(t, trace_event, &j);
  w_putc(&w, '\n');
  j_close(&j, ']');
  j_str(&j, "displayTimeUnit", "ms");
  if (t->report) {
    j_open(&j, "otherData", '{');
    j_str(&j, "scenario", str(t->report->scenario));
    j_str(&j, "file", str(t->report->file));
    j_close(&j, '}');
  }
  j_close(&j, '}');
  w_putc(&w, '\n');
  return w_finish(&w);
}
