/* trace.c - the Chrome trace-event file of one iteration (report_trace, report.h), which
 * Perfetto and chrome://tracing open.
 *
 * The trace has a process per pipeline stage ("stage D") and four threads in it: compute
 * (0), tp/cp/ep comm (1), pp send/recv (2) and dp comm (3).  Times are written in whole
 * nanoseconds (microseconds with three decimals), and an event's operators are placed by
 * integer arithmetic, so they tile their parent exactly and never stick out of it. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "jsonw.h"

static const char *str(const char *s) { return s ? s : ""; }

enum { TID_COMPUTE, TID_TP, TID_PP, TID_DP, NTIDS };
static const char *const thread_names[NTIDS] = {"compute", "tp/cp/ep comm", "pp send/recv", "dp comm"};

typedef long long Ns; /* nanoseconds: event edges are whole numbers, so nesting is exact */

/* Seconds to nanoseconds; false if s is not finite or beyond what Ns holds (~290 years). */
static bool to_ns(double s, Ns *out) {
  if (!isfinite(s) || fabs(s) > 9e9) return false;
  *out = llround(s * 1e9);
  return true;
}

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

/* Opens a complete event; the caller may add members (args) and closes it. */
static void j_event(J *j, const char *name, const char *cat, int pid, int tid, Ns start, Ns dur) {
  j_open(j, NULL, '{');
  j_str(j, "name", name);
  j_str(j, "cat", cat);
  j_str(j, "ph", "X");
  j_int(j, "pid", pid);
  j_int(j, "tid", tid);
  j_us(j, "ts", start);
  j_us(j, "dur", dur);
}

/* Opens the args of a schedule event with the micro-batch and chunk it belongs to; the
 * caller may add more. */
static void j_args_of(J *j, int micro, int chunk) {
  j_open(j, "args", '{');
  j_int(j, "micro", micro);
  j_int(j, "chunk", chunk);
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
static void trace_ops(J *j, const TraceInput *t, const RtPipeEvent *e, int nchunks, Ns start, Ns end) {
  int c = e->chunk;
  if (!t->ops || !t->nops || c < 0 || c >= nchunks || !t->ops[c] || t->nops[c] <= 0) return;
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
      j_event(j, str(ops[i].name), "op", e->device, ops[i].stream == 't' ? TID_TP : TID_COMPUTE, at, next - at);
      j_args_of(j, e->micro, c);
      j_num(j, "time_s", x);
      j_args_end(j);
    }
    at = next;
  }
}

/* The pipeline send after a forward (to the next chunk) or a backward (to the previous
 * one), where that chunk is on another device. */
static void trace_send(J *j, const TraceInput *t, const RtPipeEvent *e, int nchunks, Ns end, Ns p2p) {
  int c = e->chunk, to;
  if (t->stages < 2 || c < 0 || c >= nchunks) return;
  if (e->kind == 'F' && c + 1 < nchunks)
    to = c + 1;
  else if (e->kind == 'B' && c > 0)
    to = c - 1;
  else
    return;
  if (to % t->stages == c % t->stages) return;
  char name[96];
  snprintf(name, sizeof name, "send %c mb%d to stage %d", e->kind, e->micro, to % t->stages);
  j_event(j, name, "pp", e->device, TID_PP, end, p2p);
  j_args_of(j, e->micro, c);
  j_int(j, "to_chunk", to);
  j_args_end(j);
}

/* The names and the order of the processes (stages) and of their threads. */
static void trace_metadata(J *j, int stages) {
  for (int d = 0; d < stages; d++) {
    char name[32];
    snprintf(name, sizeof name, "stage %d", d);
    j_metadata(j, "process_name", d, -1, "name", name, 0);
    j_metadata(j, "process_sort_index", d, -1, "sort_index", NULL, d);
    for (int tid = 0; tid < NTIDS; tid++) {
      j_metadata(j, "thread_name", d, tid, "name", thread_names[tid], 0);
      j_metadata(j, "thread_sort_index", d, tid, "sort_index", NULL, tid);
    }
  }
}

/* Each event of the schedule, with its operators and its pipeline send. */
static void trace_events(J *j, const TraceInput *t, int nevents, int nchunks, Ns p2p) {
  Ns a, b;
  for (int i = 0; i < nevents; i++) {
    const RtPipeEvent *e = &t->events[i];
    if (!to_ns(e->start, &a) || !to_ns(e->end, &b) || b < a) continue;
    char name[96];
    snprintf(name, sizeof name, "%c mb%d chunk%d", e->kind ? e->kind : '?', e->micro, e->chunk);
    j_event(j, name, kind_category(e->kind), e->device, TID_COMPUTE, a, b - a);
    j_args_of(j, e->micro, e->chunk);
    j_args_end(j);
    trace_ops(j, t, e, nchunks, a, b);
    if (p2p > 0) trace_send(j, t, e, nchunks, b, p2p);
  }
}

/* The data-parallel reduction and the optimizer step, on every stage. */
static void trace_tail(J *j, const TraceInput *t, int stages) {
  Ns a, b;
  for (int d = 0; d < stages; d++) {
    if (t->dp_comm > 0 && to_ns(t->dp_start, &a) && to_ns(t->dp_comm, &b)) {
      j_event(j, "dp gradient reduction", "dp", d, TID_DP, a, b);
      j_close(j, '}');
    }
    if (t->optimizer > 0 && to_ns(t->optimizer_start, &a) && to_ns(t->optimizer, &b)) {
      j_event(j, "optimizer step", "optimizer", d, TID_COMPUTE, a, b);
      j_close(j, '}');
    }
  }
}

int report_trace(FILE *out, const TraceInput *t) {
  if (!out || !t) {
    errno = EINVAL;
    return -1;
  }
  W w = {out, 0};
  J j = {&w, true, 0, 2}; /* one event a line */
  int nevents = t->events && t->nevents > 0 ? t->nevents : 0;
  int stages = t->stages;
  if (stages < 1) { /* not given: as many as the events use */
    stages = 0;
    for (int i = 0; i < nevents; i++)
      if (t->events[i].device >= stages) stages = t->events[i].device + 1;
  }
  long long nchunks_ll = (long long)(t->stages > 0 ? t->stages : 0) * (t->chunks > 0 ? t->chunks : 1);
  int nchunks = nchunks_ll > RT_MAX_CHUNKS ? RT_MAX_CHUNKS : (int)nchunks_ll;
  Ns p2p = 0;
  if (!to_ns(t->p2p, &p2p) || p2p < 0) p2p = 0;

  j_open(&j, NULL, '{');
  j_open(&j, "traceEvents", '[');
  trace_metadata(&j, stages);
  trace_events(&j, t, nevents, nchunks, p2p);
  trace_tail(&j, t, stages);
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
