/* test_schedule.c - the pipeline-schedule simulation (runtime/schedule.c): the closed forms for
 * equal stages (GPipe, 1F1B, interleaved, ZB-H1), activations held, unequal stages worked by
 * hand, p2p sends, one stage, the event list, bad arguments, layer partitions, a large case;
 * and the fast path (rt_pipeline without events) against the full simulation
 * (rt_pipeline_reference) over thousands of random pipelines, bit for bit where the sums are
 * exact or nothing is fast-forwarded, with its recorded orders, and through the kernel. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"
#include "llmp_kernels.h"

/* Per-chunk times for a pipeline of equal chunks. */
typedef struct Times {
  double f[RT_MAX_CHUNKS], b[RT_MAX_CHUNKS], w[RT_MAX_CHUNKS], r[RT_MAX_CHUNKS];
} Times;

/* A pipeline whose whole model takes f, b, w, r per micro-batch, split evenly over its
 * stages x chunks model chunks (w and r of 0 leave wgrad and recompute NULL). */
static RtPipeline equal(Times *t, RtSchedule s, int p, int v, int m, double f, double b, double w, double r,
                        double p2p) {
  int n = p * v;
  for (int c = 0; c < n; c++) t->f[c] = f / n, t->b[c] = b / n, t->w[c] = w / n, t->r[c] = r / n;
  return (RtPipeline){s, p, v, m, t->f, t->b, w > 0 ? t->w : NULL, r > 0 ? t->r : NULL, p2p};
}

/* Per stage times as the closed forms use them: one stage (one device's share) is f and b. */
static RtPipeline stages_of(Times *t, RtSchedule s, int p, int v, int m, double f, double b, double w, double p2p) {
  return equal(t, s, p, v, m, f * p, b * p, w * p, 0, p2p);
}

static RtPipeResult run(const RtPipeline *pl) {
  int nev = -1;
  RtPipeResult r = rt_pipeline(pl, NULL, 0, &nev);
  assert_int_equal(r.flags, 0);
  assert_true(nev > 0);
  return r;
}

static void assert_near(double got, double want) {
  if (fabs(got - want) > 1e-9 * (fabs(want) + 1)) fail_msg("got %.17g, want %.17g", got, want);
}

/* Field by field: the padding after `kind` is not part of an event. */
static void assert_same_event(const RtPipeEvent *a, const RtPipeEvent *b) {
  assert_int_equal(a->device, b->device);
  assert_int_equal(a->chunk, b->chunk);
  assert_int_equal(a->micro, b->micro);
  assert_int_equal(a->kind, b->kind);
  assert_true(a->start == b->start && a->end == b->end);
}

/* GPipe and 1F1B with equal stages and free sends: (m + p - 1)(f + b), a bubble of (p-1)/m.
 * The per-stage times are dyadic, so the sums are exact. */
TEST(gpipe_1f1b_closed_form) {
  Times t;
  for (int p = 1; p <= 8; p++)
    for (int m = 1; m <= 20; m++) {
      double f = 1.5, b = 2.25, want = (m + p - 1) * (f + b);
      RtPipeline g = stages_of(&t, RT_GPIPE, p, 1, m, f, b, 0, 0);
      assert_true(run(&g).makespan == want);
      RtPipeline o = stages_of(&t, RT_1F1B, p, 1, m, f, b, 0, 0);
      RtPipeResult r = run(&o);
      assert_true(r.makespan == want);
      assert_true(r.busy == m * (f + b));
      assert_int_equal(r.busiest, 0); /* all equal: the lowest index */
      /* the same with one chunk through INTERLEAVED: that is 1F1B */
      RtPipeline i = stages_of(&t, RT_INTERLEAVED, p, 1, m, f, b, 0, 0);
      assert_true(run(&i).makespan == want);
      /* Outside zero-bubble a weight gradient is part of the backward. */
      RtPipeline ow = stages_of(&t, RT_1F1B, p, 1, m, f, 1.25, 1.0, 0);
      assert_true(run(&ow).makespan == want);
    }
}

/* Interleaved 1F1B (m % p == 0), chunks of f/v and b/v: m (f + b) + (p - 1)(f + b) / v. */
TEST(interleaved_closed_form) {
  Times t;
  for (int p = 1; p <= 8; p++)
    for (int v = 2; v <= 4; v++)
      for (int m = p; m <= 6 * p; m += p) {
        double f = 1, b = 2;
        RtPipeline pl = stages_of(&t, RT_INTERLEAVED, p, v, m, f, b, 0, 0);
        RtPipeResult r = run(&pl);
        assert_near(r.makespan, m * (f + b) + (p - 1) * (f + b) / v);
        assert_near(r.busy, m * (f + b));
        if (v != 3) assert_true(r.makespan == m * (f + b) + (p - 1) * (f + b) / v);
        /* never slower than 1F1B */
        RtPipeline o = stages_of(&t, RT_1F1B, p, 1, m, f, b, 0, 0);
        assert_true(r.makespan <= run(&o).makespan + 1e-9);
      }
}

/* ZB-H1 with m >= p and equal stages: bubble (p - 1)(T_F + T_B - T_W) (Qi et al., sec. 2.2)
 * when T_W <= min(T_F, T_B); with T_F = T_B = T_W a third of 1F1B's (p - 1)(T_F + T_B + T_W).
 * A longer W no longer fits the drain's gaps: the bubble is (p - 1)(T_F + T_B - min(T_F, T_B,
 * T_W)), still below 1F1B's. */
static double min3(double a, double b, double c) {
  double m = a < b ? a : b;
  return m < c ? m : c;
}

TEST(zero_bubble_closed_form) {
  Times t;
  const double fbw[][3] = {{1, 1, 1},   {1, 2, 1}, {2, 1, 1},   {1, 1, 0.5}, {2, 2, 1.5},
                           {1.5, 2, 2}, {1, 1, 2}, {2, 0.5, 1}, {0.5, 3, 3}};
  for (size_t k = 0; k < sizeof fbw / sizeof fbw[0]; k++)
    for (int p = 1; p <= 8; p++)
      for (int m = p; m <= 4 * p + 3; m++) {
        double f = fbw[k][0], b = fbw[k][1], w = fbw[k][2];
        RtPipeline z = stages_of(&t, RT_ZERO_BUBBLE, p, 1, m, f, b, w, 0);
        RtPipeline o = stages_of(&t, RT_1F1B, p, 1, m, f, b, w, 0);
        RtPipeResult rz = run(&z), ro = run(&o);
        assert_true(rz.makespan == m * (f + b + w) + (p - 1) * (f + b - min3(f, b, w)));
        assert_true(ro.makespan == (m + p - 1) * (f + b + w));
        assert_true(rz.makespan <= ro.makespan);
        if (f == b && b == w) /* the bubble is a third of 1F1B's */
          assert_true(3 * (rz.makespan - m * (f + b + w)) == ro.makespan - m * (f + b + w));
        /* the same activations held as 1F1B */
        assert_int_equal(rz.in_flight, ro.in_flight);
        assert_int_equal(rz.in_flight_device, ro.in_flight_device);
      }
  /* Fewer micro-batches than stages: still no slower than 1F1B. */
  for (int p = 2; p <= 8; p++)
    for (int m = 1; m < p; m++) {
      RtPipeline z = stages_of(&t, RT_ZERO_BUBBLE, p, 1, m, 1, 1, 1, 0);
      RtPipeline o = stages_of(&t, RT_1F1B, p, 1, m, 1, 1, 1, 0);
      assert_true(run(&z).makespan <= run(&o).makespan);
    }
}

/* Activations held: 1F1B's device 0 holds min(p, m), GPipe's every device m, interleaved
 * device 0 its warm-up plus one, 2 (p - 1) + (v - 1) p + 1, at most m v. */
TEST(in_flight) {
  Times t;
  for (int p = 1; p <= 8; p++)
    for (int m = 1; m <= 20; m++) {
      RtPipeline o = stages_of(&t, RT_1F1B, p, 1, m, 1, 2, 0, 0);
      RtPipeResult r = run(&o);
      assert_int_equal(r.in_flight, m < p ? m : p);
      assert_int_equal(r.in_flight_device, 0);
      RtPipeline g = stages_of(&t, RT_GPIPE, p, 1, m, 1, 2, 0, 0);
      r = run(&g);
      assert_int_equal(r.in_flight, m);
      assert_int_equal(r.in_flight_device, 0);
      for (int v = 2; v <= 4 && m % p == 0; v++) {
        RtPipeline i = stages_of(&t, RT_INTERLEAVED, p, v, m, 1, 2, 0, 0);
        r = run(&i);
        int want = 2 * (p - 1) + (v - 1) * p + 1;
        assert_int_equal(r.in_flight, want < m * v ? want : m * v);
        assert_int_equal(r.in_flight_device, 0);
      }
    }
  /* Activations are counted per device: a slower last stage does not change them. */
  RtPipeline o = stages_of(&t, RT_1F1B, 4, 1, 8, 1, 2, 0, 0);
  t.f[3] = 10;
  RtPipeResult r = run(&o);
  assert_int_equal(r.in_flight, 4);
  assert_int_equal(r.in_flight_device, 0);
}

/* p = 2, m = 2, chunk 1 twice as slow (f = 1, 2; b = 2, 4), by hand:
 *   device 0: F0 0-1  F1 1-2  B0 7-9  B1 13-15
 *   device 1: F0 1-3  B0 3-7  F1 7-9  B1 9-13
 * GPipe: device 1 runs F0 1-3 F1 3-5 B0 5-9 B1 9-13; device 0 B0 9-11 B1 13-15.
 * With p2p = 0.5 (1F1B): device 1 F0 1.5-3.5 B0 3.5-7.5 F1 7.5-9.5 B1 9.5-13.5;
 * device 0 B0 8-10 B1 14-16. */
TEST(unequal_by_hand) {
  double f[] = {1, 2}, b[] = {2, 4};
  RtPipeline pl = {RT_1F1B, 2, 1, 2, f, b, NULL, NULL, 0};
  RtPipeEvent ev[8];
  int nev = 0;
  RtPipeResult r = rt_pipeline(&pl, ev, 8, &nev);
  assert_int_equal(r.flags, 0);
  assert_true(r.makespan == 15);
  assert_true(r.busy == 12);
  assert_int_equal(r.busiest, 1);
  assert_int_equal(r.in_flight, 2);
  assert_int_equal(r.in_flight_device, 0);
  assert_int_equal(nev, 8);
  const RtPipeEvent want[] = {{0, 0, 0, 'F', 0, 1}, {0, 0, 1, 'F', 1, 2}, {0, 0, 0, 'B', 7, 9}, {0, 0, 1, 'B', 13, 15},
                              {1, 1, 0, 'F', 1, 3}, {1, 1, 0, 'B', 3, 7}, {1, 1, 1, 'F', 7, 9}, {1, 1, 1, 'B', 9, 13}};
  for (int k = 0; k < 8; k++) assert_same_event(&ev[k], &want[k]);
  pl.schedule = RT_GPIPE;
  r = run(&pl);
  assert_true(r.makespan == 15);
  assert_int_equal(r.in_flight, 2);
  pl.schedule = RT_1F1B;
  pl.p2p = 0.5;
  assert_true(run(&pl).makespan == 16);

  /* A slower last stage: its extra time is paid by every micro-batch, m delta in all (it is
   * the bottleneck, and the fill in front of it is unchanged). */
  Times t;
  for (int m = 4; m <= 32; m *= 2) {
    RtPipeline o = stages_of(&t, RT_1F1B, 4, 1, m, 1, 2, 0, 0);
    double base = run(&o).makespan;
    t.f[3] += 0.5, t.b[3] += 0.25;
    RtPipeResult s = run(&o);
    assert_true(s.makespan == base + m * 0.75);
    assert_int_equal(s.busiest, 3);
    assert_true(s.busy == m * 3.75);
  }
}

/* p2p = s: each micro-batch crosses p - 1 sends forward and p - 1 back.  With one or two
 * micro-batches (1F1B), and for any m with GPipe, that is all: (m + p - 1)(f + b) + 2 (p - 1) s.
 * Worked by hand for p = 2, m = 2, f = 1, b = 2, s = 0.5: device 1 F0 1.5-2.5 B0 2.5-4.5
 * F1 4.5-5.5 B1 5.5-7.5; device 0 F0 0-1 F1 1-2 B0 5-7 B1 8-10: 10 = 3 x 3 + 2 x 0.5.
 * With more micro-batches 1F1B's minimal warm-up puts the sends on a loop: device 0's F(j+p)
 * follows its B(j), which waited for F(j) to go out to the last stage and its gradient to come
 * back: p (f + b) + 2 (p - 1) s per p micro-batches. */
TEST(p2p_sends) {
  Times t;
  const double s = 0.5;
  RtPipeline hand = stages_of(&t, RT_1F1B, 2, 1, 2, 1, 2, 0, s);
  assert_true(run(&hand).makespan == 10);
  for (int p = 1; p <= 8; p++)
    for (int m = 1; m <= 24; m++) {
      double f = 1, b = 2, want = (m + p - 1) * (f + b) + 2 * (p - 1) * s;
      RtPipeline g = stages_of(&t, RT_GPIPE, p, 1, m, f, b, 0, s);
      assert_true(run(&g).makespan == want);
      RtPipeline o = stages_of(&t, RT_1F1B, p, 1, m, f, b, 0, s);
      double got = run(&o).makespan;
      if (m <= 2 || p == 1) assert_true(got == want);
      assert_true(got >= want);
      if (m >= 2) {
        RtPipeline o2 = stages_of(&t, RT_1F1B, p, 1, m + p, f, b, 0, s);
        assert_true(run(&o2).makespan - got == p * (f + b) + 2 * (p - 1) * s);
      }
    }
  /* Sends between chunks of one device are free: one stage, many chunks. */
  RtPipeline one = stages_of(&t, RT_INTERLEAVED, 1, 4, 3, 1, 2, 0, 7.0);
  assert_true(run(&one).makespan == 9);
}

/* One stage: no pipeline, no sends: m (f + b + r), and R runs right before its B. */
TEST(single_stage) {
  Times t;
  for (int s = 0; s < RT_NSCHEDULES; s++)
    for (int m = 1; m <= 9; m++) {
      RtPipeline pl = equal(&t, (RtSchedule)s, 1, 1, m, 1, 2, 0, 0.5, 3.0);
      RtPipeResult r = run(&pl);
      assert_true(r.makespan == m * 3.5);
      assert_true(r.busy == m * 3.5);
      assert_int_equal(r.busiest, 0);
    }
  RtPipeline pl = equal(&t, RT_1F1B, 1, 1, 3, 1, 2, 0, 0.5, 0);
  RtPipeEvent ev[16];
  int nev = 0;
  RtPipeResult r = rt_pipeline(&pl, ev, 16, &nev);
  assert_int_equal(r.flags, 0);
  assert_int_equal(nev, 9);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ev[3 * i].kind, 'F');
    assert_int_equal(ev[3 * i + 1].kind, 'R');
    assert_int_equal(ev[3 * i + 2].kind, 'B');
    assert_int_equal(ev[3 * i + 1].micro, i);
    assert_true(ev[3 * i + 1].end == ev[3 * i + 2].start);
    assert_true(ev[3 * i + 1].end - ev[3 * i + 1].start == 0.5);
  }
}

/* Checks an event list against the pipeline: one F and one B per (chunk, micro-batch), R right
 * before its B, W after its B, on the chunk's device, grouped by device in start order, no two
 * overlapping, every input there before its op starts. */
static void check_events(const RtPipeline *pl, const RtPipeEvent *ev, int n) {
  int nc = pl->stages * pl->chunks, m = pl->micro_batches;
  size_t pairs = (size_t)nc * m;
  double *fs = malloc(pairs * sizeof *fs), *fe = malloc(pairs * sizeof *fe);
  double *bs = malloc(pairs * sizeof *bs), *be = malloc(pairs * sizeof *be);
  assert_true(fs && fe && bs && be);
  for (size_t k = 0; k < pairs; k++) fs[k] = fe[k] = bs[k] = be[k] = -1;
  int zb = pl->schedule == RT_ZERO_BUBBLE;
  for (int k = 0; k < n; k++) {
    const RtPipeEvent *e = &ev[k];
    assert_true(e->chunk >= 0 && e->chunk < nc && e->micro >= 0 && e->micro < m);
    assert_int_equal(e->device, e->chunk % pl->stages);
    assert_true(e->end >= e->start && e->start >= 0);
    if (k > 0) {
      assert_true(e->device >= ev[k - 1].device);
      if (e->device == ev[k - 1].device) assert_true(e->start >= ev[k - 1].end);
    }
    size_t i = (size_t)e->chunk * m + e->micro;
    switch (e->kind) {
    case 'F':
      assert_true(fs[i] < 0);
      fs[i] = e->start, fe[i] = e->end;
      break;
    case 'R':
      assert_true(k + 1 < n);
      assert_int_equal(ev[k + 1].kind, 'B');
      assert_int_equal(ev[k + 1].chunk, e->chunk);
      assert_int_equal(ev[k + 1].micro, e->micro);
      assert_true(ev[k + 1].start == e->end);
      bs[i] = e->start;
      break;
    case 'B':
      assert_true(be[i] < 0 && fe[i] >= 0);
      if (k == 0 || ev[k - 1].kind != 'R') bs[i] = e->start;
      be[i] = e->end;
      break;
    case 'W':
      assert_true(zb);
      assert_true(be[i] >= 0 && e->start >= be[i]);
      break;
    default: fail_msg("kind %c", e->kind);
    }
  }
  for (int c = 0; c < nc; c++)
    for (int i = 0; i < m; i++) {
      size_t k = (size_t)c * m + i;
      assert_true(fe[k] >= 0 && be[k] >= 0);
      int other = pl->stages > 1;
      if (c > 0) {
        size_t j = k - (size_t)m;
        assert_true(fs[k] >= fe[j] + (other ? pl->p2p : 0));
        assert_true(bs[j] >= be[k] + (other ? pl->p2p : 0));
      }
      if (c == nc - 1) assert_true(bs[k] >= fe[k]);
    }
  free(fs), free(fe), free(bs), free(be);
}

/* The event list: counts, order, no overlap, dependencies, truncation to maxevents. */
TEST(events) {
  Times t;
  RtPipeEvent *ev = malloc(20000 * sizeof *ev);
  assert_non_null(ev);
  for (int s = 0; s < RT_NSCHEDULES; s++)
    for (int p = 1; p <= 5; p++)
      for (int m = p; m <= 3 * p; m += p) {
        int v = s == RT_INTERLEAVED ? 3 : 1;
        RtPipeline pl = stages_of(&t, (RtSchedule)s, p, v, m, 1, 2, 0.75, 0.125);
        t.r[0] = 0.25, pl.recompute = t.r; /* chunk 0 recomputes, the others not */
        for (int c = 1; c < p * v; c++) t.r[c] = 0;
        int nev = -1;
        RtPipeResult r = rt_pipeline(&pl, ev, 20000, &nev);
        assert_int_equal(r.flags, 0);
        int want = p * v * m * (s == RT_ZERO_BUBBLE ? 3 : 2) + m;
        assert_int_equal(nev, want);
        check_events(&pl, ev, nev);
        double last = 0;
        for (int k = 0; k < nev; k++)
          if (ev[k].end > last) last = ev[k].end;
        assert_true(last == r.makespan);
        /* Truncated: the first ones, the same; the rest untouched. */
        RtPipeEvent few[8];
        memset(few, 0x5a, sizeof few);
        int nfew = -1;
        RtPipeResult r2 = rt_pipeline(&pl, few, 5, &nfew);
        assert_int_equal(nfew, nev);
        assert_true(r2.makespan == r.makespan);
        int nw = nev < 5 ? nev : 5;
        for (int k = 0; k < nw; k++) assert_same_event(&few[k], &ev[k]);
        for (int k = nw; k < 8; k++) assert_int_equal(((unsigned char *)&few[k])[0], 0x5a);
        RtPipeResult r3 = rt_pipeline(&pl, NULL, 0, NULL);
        assert_true(r3.makespan == r.makespan && r3.in_flight == r.in_flight);
      }
  free(ev);
}

static void assert_bad(const RtPipeline *pl) {
  int nev = 7;
  RtPipeEvent ev[4];
  RtPipeResult r = rt_pipeline(pl, ev, 4, &nev);
  assert_int_equal(r.flags, RT_BAD_ARGS);
  assert_true(isnan(r.makespan));
  assert_int_equal(nev, 0);
}

TEST(bad_arguments) {
  double f[8] = {1, 1, 1, 1, 1, 1, 1, 1}, b[8] = {2, 2, 2, 2, 2, 2, 2, 2};
  double bad[8] = {1, 1, 1, -1, 1, 1, 1, 1}, nan8[8] = {1, 1, NAN, 1, 1, 1, 1, 1};
  double inf8[8] = {INFINITY, 1, 1, 1, 1, 1, 1, 1};
  const RtPipeline ok = {RT_1F1B, 4, 1, 8, f, b, NULL, NULL, 0.1};
  assert_int_equal(rt_pipeline(&ok, NULL, 0, NULL).flags, 0);
  assert_bad(NULL);
  RtPipeline pl;
  /* clang-format off */
  pl = ok, pl.stages = 0; assert_bad(&pl);
  pl = ok, pl.chunks = 0; assert_bad(&pl);
  pl = ok, pl.micro_batches = 0; assert_bad(&pl);
  pl = ok, pl.micro_batches = -3; assert_bad(&pl);
  pl = ok, pl.schedule = RT_NSCHEDULES; assert_bad(&pl);
  pl = ok, pl.schedule = (RtSchedule)-1; assert_bad(&pl);
  pl = ok, pl.fwd = NULL; assert_bad(&pl);
  pl = ok, pl.bwd = NULL; assert_bad(&pl);
  pl = ok, pl.p2p = -1; assert_bad(&pl);
  pl = ok, pl.p2p = NAN; assert_bad(&pl);
  pl = ok, pl.p2p = INFINITY; assert_bad(&pl);
  /* clang-format on */
  const double *arrays[] = {bad, nan8, inf8};
  for (int k = 0; k < 3; k++) {
    /* clang-format off */
    pl = ok, pl.fwd = arrays[k]; assert_bad(&pl);
    pl = ok, pl.bwd = arrays[k]; assert_bad(&pl);
    pl = ok, pl.wgrad = arrays[k]; assert_bad(&pl);
    pl = ok, pl.recompute = arrays[k]; assert_bad(&pl);
    /* clang-format on */
  }
  /* chunks > 1 only interleaved, and then m % p == 0 */
  /* clang-format off */
  pl = ok, pl.stages = 2, pl.chunks = 2; assert_bad(&pl);
  pl.schedule = RT_GPIPE; assert_bad(&pl);
  pl.schedule = RT_ZERO_BUBBLE; assert_bad(&pl);
  pl.schedule = RT_INTERLEAVED; pl.micro_batches = 7; assert_bad(&pl);
  /* clang-format on */
  pl.micro_batches = 8;
  assert_int_equal(rt_pipeline(&pl, NULL, 0, NULL).flags, 0);
  /* more than RT_MAX_CHUNKS model chunks */
  Times t;
  pl = equal(&t, RT_INTERLEAVED, 512, 2, 512, 1, 2, 0, 0, 0);
  assert_int_equal(rt_pipeline(&pl, NULL, 0, NULL).flags, 0);
  pl.chunks = 4;
  assert_bad(&pl);
  pl = equal(&t, RT_1F1B, 1024, 1, 4, 1, 2, 0, 0, 0);
  assert_int_equal(rt_pipeline(&pl, NULL, 0, NULL).flags, 0);
  pl.stages = 1025;
  assert_bad(&pl);
  /* a negative room for events, and more events than an int counts */
  pl = ok;
  assert_int_equal(rt_pipeline(&pl, NULL, -1, NULL).flags, 0);
  RtPipeEvent ev[1];
  assert_int_equal(rt_pipeline(&pl, ev, -1, NULL).flags, RT_BAD_ARGS);
  pl = equal(&t, RT_1F1B, 1024, 1, 1 << 20, 1, 2, 0, 0, 0);
  assert_bad(&pl);
}

/* 44 layers over 8 stages: 6 6 6 6 5 5 5 5 balanced; uniform needs a divisor. */
TEST(partition) {
  int out[16];
  assert_int_equal(rt_partition_layers(44, 8, 1, 1, out), 0);
  const int want[] = {6, 6, 6, 6, 5, 5, 5, 5};
  for (int i = 0; i < 8; i++) assert_int_equal(out[i], want[i]);
  assert_int_equal(rt_partition_layers(44, 8, 1, 0, out), -1);
  assert_int_equal(rt_partition_layers(48, 8, 1, 0, out), 0);
  for (int i = 0; i < 8; i++) assert_int_equal(out[i], 6);
  assert_int_equal(rt_partition_layers(32, 4, 2, 0, out), 0); /* 8 model chunks of 4 */
  for (int i = 0; i < 8; i++) assert_int_equal(out[i], 4);
  assert_int_equal(rt_partition_layers(30, 4, 4, 1, out), 0); /* 16 chunks: 14 x 2, 2 x 1 */
  for (int i = 0; i < 16; i++) assert_int_equal(out[i], i < 14 ? 2 : 1);
  assert_int_equal(rt_partition_layers(8, 8, 1, 1, out), 0);
  for (int i = 0; i < 8; i++) assert_int_equal(out[i], 1);
  assert_int_equal(rt_partition_layers(7, 8, 1, 1, out), -1); /* fewer layers than chunks */
  assert_int_equal(rt_partition_layers(0, 1, 1, 1, out), -1);
  assert_int_equal(rt_partition_layers(8, 0, 1, 1, out), -1);
  assert_int_equal(rt_partition_layers(8, 1, 0, 0, out), -1);
  assert_int_equal(rt_partition_layers(8, 1, 1, 0, NULL), -1);
  assert_int_equal(rt_partition_layers(1 << 30, 1 << 16, 1 << 16, 1, out), -1);
}

/* m = 2048, p = 16, v = 4: runs, matches the closed form, and twice gives the same bits. */
TEST(large_deterministic) {
  Times t;
  RtPipeline pl = stages_of(&t, RT_INTERLEAVED, 16, 4, 2048, 1, 2, 0, 0);
  int n = 0;
  RtPipeResult a = rt_pipeline(&pl, NULL, 0, &n);
  assert_int_equal(a.flags, 0);
  assert_int_equal(n, 2 * 64 * 2048);
  assert_true(a.makespan == 2048 * 3.0 + 15 * 3.0 / 4);
  assert_int_equal(a.in_flight, 2 * 15 + 3 * 16 + 1);
  RtPipeEvent *ev = malloc((size_t)n * sizeof *ev), *ev2 = malloc((size_t)n * sizeof *ev2);
  assert_true(ev && ev2);
  RtPipeResult b = rt_pipeline(&pl, ev, n, NULL), c = rt_pipeline(&pl, ev2, n, NULL);
  assert_memory_equal(&a, &b, sizeof a);
  assert_memory_equal(&b, &c, sizeof b);
  for (int k = 0; k < n; k++) assert_same_event(&ev[k], &ev2[k]);
  check_events(&pl, ev, n);
  free(ev), free(ev2);
  /* Unequal chunks and sends, every schedule: deterministic too. */
  for (int s = 0; s < RT_NSCHEDULES; s++) {
    int v = s == RT_INTERLEAVED ? 4 : 1;
    RtPipeline q = stages_of(&t, (RtSchedule)s, 16, v, 2048, 1, 2, 1, 1e-3);
    for (int k = 0; k < 16 * v; k++) t.f[k] *= 1 + 0.01 * (k % 5), t.b[k] *= 1 + 0.02 * (k % 3);
    RtPipeResult x = rt_pipeline(&q, NULL, 0, NULL), y = rt_pipeline(&q, NULL, 0, NULL);
    assert_int_equal(x.flags, 0);
    assert_memory_equal(&x, &y, sizeof x);
    assert_true(x.makespan >= x.busy);
  }
}

/* --- the fast path against the reference ---------------------------------------------- */

/* xorshift64: the random configurations are the same on every run. */
static uint64_t rng_state = 88172645463325252u;

static uint64_t rng(void) { return xorshift64(&rng_state); }

static double rng_uniform(void) { return unit_double(rng()); }

static int rng_int(int lo, int hi) { return lo + (int)(rng() % (uint64_t)(hi - lo + 1)); }

/* Log-uniform in [lo, hi]: as many small pipelines as large ones. */
static int rng_log(int lo, int hi) { return (int)floor(exp(log(lo) + rng_uniform() * (log(hi + 1.0) - log(lo)))); }

/* A random pipeline: every schedule, 1 to 64 stages, virtual stages, 1 to 2000 micro-batches,
 * and per-chunk times that are equal (dyadic or not), equal but for the first and last chunks
 * (embedding, head), a balanced partition of layers (two levels), or all different; with or
 * without sends, recompute and a weight gradient. */
static RtPipeline random_pipeline(Times *t) {
  RtSchedule s = (RtSchedule)rng_int(0, RT_NSCHEDULES - 1);
  int p = rng_log(1, 64), v = 1, m = rng_log(1, 2000);
  if (s == RT_INTERLEAVED) {
    v = rng_int(1, 6 < RT_MAX_CHUNKS / p ? 6 : RT_MAX_CHUNKS / p);
    if (v > 1) m = m < p ? p : m / p * p;
  }
  int n = p * v, kind = rng_int(0, 4), extra = rng_int(0, n);
  double layer = 1e-3 * (0.5 + rng_uniform());
  for (int c = 0; c < n; c++) {
    double x = layer;
    if (kind == 1 && (c == 0 || c == n - 1)) x = layer * (0.3 + 2 * rng_uniform());
    if (kind == 2) x = layer * (0.5 + rng_uniform());
    if (kind == 3) x = layer * (1 + (c < extra));
    if (kind == 4) x = rng_int(1, 8) * 0.25;
    t->f[c] = x, t->b[c] = kind == 4 ? 2 * x : x * (1.7 + 0.6 * rng_uniform());
    t->w[c] = kind == 4 ? 0.5 * rng_int(0, 4) : x * rng_uniform(), t->r[c] = x;
  }
  double p2p = rng_int(0, 1) ? (kind == 4 ? 0.125 * rng_int(1, 4) : layer * rng_uniform()) : 0;
  return (RtPipeline){s, p, v, m, t->f, t->b, rng_int(0, 1) ? t->w : NULL, rng_int(0, 3) == 0 ? t->r : NULL, p2p};
}

static double relative(double a, double b) { return fabs(a - b) / fabs(b); }

/* Every field of the fast path's result against the reference's: the makespan within 1e-12
 * relative (the reference's own rounding; the fast path is within about 1e-15 of the exact
 * sum), the rest equal.  Returns the makespan's relative difference. */
static double check_fast(const RtPipeline *pl) {
  int nf = -1, nr = -2;
  RtPipeResult f = rt_pipeline(pl, NULL, 0, &nf), r = rt_pipeline_reference(pl, NULL, 0, &nr);
  assert_int_equal(f.flags, 0);
  assert_int_equal(r.flags, 0);
  double rel = relative(f.makespan, r.makespan);
  if (!(rel <= 1e-12))
    fail_msg("schedule %d, p %d, v %d, m %d, p2p %g: makespan %.17g, reference %.17g", (int)pl->schedule, pl->stages,
             pl->chunks, pl->micro_batches, pl->p2p, f.makespan, r.makespan);
  assert_true(f.busy == r.busy);
  assert_int_equal(f.busiest, r.busiest);
  assert_int_equal(f.in_flight, r.in_flight);
  assert_int_equal(f.in_flight_device, r.in_flight_device);
  assert_int_equal(nf, nr);
  return rel;
}

/* Thousands of random pipelines, each twice with different times (the second run replays the
 * first's recorded order of ops), within 1e-12 of the reference. */
TEST(fast_matches_reference) {
  Times t;
  double worst = 0;
  rng_state = 88172645463325252u;
  for (int k = 0; k < 3000; k++) {
    RtPipeline pl = random_pipeline(&t);
    double rel = check_fast(&pl);
    if (rel > worst) worst = rel;
    for (int c = 0; c < pl.stages * pl.chunks; c++) t.f[c] *= 1.0 + 0.01 * (c % 3);
    pl.p2p = pl.p2p > 0 ? 0 : 1e-4;
    rel = check_fast(&pl);
    if (rel > worst) worst = rel;
  }
  printf("fast path against the reference: largest relative difference %.3g\n", worst);
}

/* Where the reference's sums are exact (dyadic times) the fast path's are the same bits, with
 * fast-forward or not; without fast-forward (few micro-batches, one short stage) it is the
 * reference's arithmetic: the same bits for any times. */
TEST(fast_bit_identical) {
  Times t;
  for (int s = 0; s < RT_NSCHEDULES; s++)
    for (int p = 1; p <= 12; p++)
      for (int m = p; m <= 6 * p + 40; m += p + 3) {
        int v = s == RT_INTERLEAVED ? 2 : 1, mm = v > 1 ? (m + p - 1) / p * p : m;
        RtPipeline pl =
            stages_of(&t, (RtSchedule)s, p, v, mm, 1.5, 2.25, s == RT_ZERO_BUBBLE ? 1 : 0, p % 2 ? 0.25 : 0);
        t.f[0] += 0.125, t.b[p * v - 1] += 0.5; /* an embedding and a head */
        RtPipeResult f = rt_pipeline(&pl, NULL, 0, NULL), r = rt_pipeline_reference(&pl, NULL, 0, NULL);
        assert_memory_equal(&f, &r, sizeof f);
      }
  rng_state = 12345;
  for (int k = 0; k < 400; k++) { /* no fast-forward: m < p + 4 (v = 1), short single stages */
    RtPipeline pl = random_pipeline(&t);
    pl.chunks = 1, pl.schedule = pl.schedule == RT_INTERLEAVED ? RT_1F1B : pl.schedule;
    pl.micro_batches = pl.stages > 1 ? rng_int(1, pl.stages + 3) : rng_int(1, 32);
    for (int again = 0; again < 2; again++) { /* the second time replays the first's order */
      RtPipeResult f = rt_pipeline(&pl, NULL, 0, NULL);
      RtPipeResult r = rt_pipeline_reference(&pl, NULL, 0, NULL);
      if (pl.schedule != RT_GPIPE || pl.stages == 1)
        assert_memory_equal(&f, &r, sizeof f);
      else
        assert_true(relative(f.makespan, r.makespan) <= 1e-12); /* GPipe: a closed form */
      for (int c = 0; c < pl.stages; c++) t.f[c] *= 1.0 + 0.1 * c, t.b[c] *= 1.0 / 3;
      pl.p2p = pl.p2p > 0 ? 0 : 0.3;
    }
  }
}

/* The recorded orders are kept per structure: other structures in between, then the first
 * again with other times, replayed. */
TEST(fast_orders_kept) {
  Times a, b;
  for (int round = 0; round < 3; round++)
    for (int k = 0; k < 7; k++) {
      RtSchedule s = (RtSchedule)(1 + k % 3);
      int p = 4 + k, v = s == RT_INTERLEAVED ? 2 : 1;
      RtPipeline pl = stages_of(&a, s, p, v, 40 * p, 1.1 + round * 0.3, 2.3, 0.7, 0.01 * k);
      check_fast(&pl);
      RtPipeline other = stages_of(&b, RT_1F1B, 3, 1, 50 + k + round, 1.3, 2.9, 0, 0.02);
      check_fast(&other);
    }
}

/* More structures than the thread keeps orders for, in the order a sweep's inner loops visit
 * them (every structure, then every one again with other times), and orders too large to
 * keep together (the byte budget: they run unrecorded): each run within 1e-12 of the
 * reference, whether its order was replayed, evicted or never kept. */
TEST(fast_orders_many) {
  Times a;
  for (int round = 0; round < 2; round++)
    for (int k = 0; k < 300; k++) { /* the thread keeps 256 */
      RtSchedule s = (RtSchedule)(1 + k % 3);
      int p = 2 + k % 7, v = s == RT_INTERLEAVED ? 2 : 1, m = p * (4 + k / 21);
      RtPipeline pl = stages_of(&a, s, p, v, m, 1.1 + round * 0.3, 2.3, 0.7, 0.01 * (k % 5));
      a.f[0] *= 1.07, a.b[p * v - 1] *= 1.11; /* unequal stages */
      check_fast(&pl);
    }
  /* 1F1B over 700 stages with m <= p + 3 micro-batches has no steady periods to skip: its
   * order is the whole run, 2 m p ops (2 MB).  Nine of them do not fit the 16 MB the thread
   * keeps: the first are kept, the last run unrecorded; then the first again (replayed) and
   * the ninth (unrecorded again). */
  for (int k = 0; k < 11; k++) {
    int j = k < 9 ? k : k == 9 ? 0 : 8;
    RtPipeline pl = stages_of(&a, RT_1F1B, 700, 1, 700 - j, 1.3 + k * 0.02, 2.9, 0, 0.02);
    check_fast(&pl);
  }
}

/* Times at the ends of the doubles' range, where the fast path's integer ticks cannot hold
 * them (their bound overflows, or its 2^62 ticks would need a scale past 2^1023), run exactly:
 * the reference's makespan, inf where the sums overflow, and no signed overflow (UBSan). */
TEST(extreme_times) {
  static const double scales[] = {1e306, 1e300, 1e-290, 1e-300, 4.9e-324};
  Times t;
  for (int i = 0; i < 5; i++)
    for (int s = RT_1F1B; s < RT_NSCHEDULES; s++) {
      int v = s == RT_INTERLEAVED ? 2 : 1;
      RtPipeline pl = stages_of(&t, (RtSchedule)s, 4, v, 64, scales[i], 2 * scales[i],
                                s == RT_ZERO_BUBBLE ? scales[i] : 0, scales[i] / 8);
      RtPipeResult f = rt_pipeline(&pl, NULL, 0, NULL), r = rt_pipeline_reference(&pl, NULL, 0, NULL);
      assert_int_equal(f.flags, 0);
      if (f.makespan != r.makespan && !(relative(f.makespan, r.makespan) <= 1e-12))
        fail_msg("times x %g, schedule %d: %.17g, want %.17g", scales[i], s, f.makespan, r.makespan);
      if (scales[i] > 1e305) assert_true(isinf(f.makespan));
    }
}

/* The pipeline kernel: with and without its sends, as two runs of the reference give them;
 * with free sends already, both outputs are the one run. */
TEST(kernel_pipeline) {
  RtKernelFn *fn = rt_kernels[RTK_PIPELINE].fn;
  rng_state = 777;
  for (int k = 0; k < 400; k++) {
    int s = rng_int(0, RT_NSCHEDULES - 1), p = rng_log(1, 32), v = 1, m = rng_log(1, 1000);
    if (s == RT_INTERLEAVED) v = rng_int(1, 3), m = v > 1 ? (m + p - 1) / p * p : m;
    int zb = s == RT_ZERO_BUBBLE, layers = rng_int(p * v, 128);
    /* clang-format off */
    double lf = 6.2e-3 * (0.5 + rng_uniform()), args[28] = {
        s, p, v, m, layers, rng_int(0, 1), lf, zb ? lf : 2 * lf, zb ? lf * 0.9 : 0,
        rng_int(0, 2) ? 0 : lf, 0.3e-3, 0.5e-3, 4e-3, 8e-3, rng_int(0, 1) ? 0.25e-3 : 0};
    /* clang-format on */
    if (layers % (p * v) && !args[5]) args[5] = 1;
    double out[RT_KERNEL_NOUT], buf[4 * RT_MAX_CHUNKS];
    fn(NULL, args, out);
    RtPipeline pl;
    assert_int_equal(rt_pipeline_of_args(args, &pl, buf), 0);
    RtPipeResult with = rt_pipeline_reference(&pl, NULL, 0, NULL);
    pl.p2p = 0;
    RtPipeResult without = rt_pipeline_reference(&pl, NULL, 0, NULL);
    assert_true(out[2] == 0);
    assert_true(relative(out[0], with.makespan) <= 1e-12);
    assert_true(relative(out[1], without.makespan) <= 1e-12);
    if (args[14] == 0) assert_true(out[0] == out[1]);
  }
}

/* Layouts: a pattern's groups follow the layers into their chunks; explicit per-chunk counts,
 * first/last stage counts (split over each stage's chunks, Megatron's uneven pipeline) and
 * what they reject; equal layouts share an id. */
TEST(layout_counts) {
  /* DeepSeek-V3's shape: 3 dense (group 0) then 58 MoE (group 1), 61 layers */
  unsigned char g[61];
  for (int i = 0; i < 61; i++) g[i] = i >= 3;
  RtLayout l = {61, g, 0, NULL, -1, -1};
  int id = rt_layout_register(&l);
  assert_true(id >= 1);
  assert_int_equal(rt_layout_register(&l), id);
  int (*c)[RT_MAX_GROUPS] = calloc(RT_MAX_CHUNKS, sizeof *c);
  assert_int_equal(rt_layout_counts(id, 61, 8, 1, 0, c), -1); /* 61 does not divide by 8 */
  assert_int_equal(rt_layout_counts(id, 61, 8, 1, 1, c), 0);  /* balanced: 8 8 8 8 8 7 7 7 */
  assert_int_equal(c[0][0], 3), assert_int_equal(c[0][1], 5);
  assert_int_equal(c[1][0], 0), assert_int_equal(c[1][1], 8);
  assert_int_equal(c[7][1], 7);
  assert_int_equal(rt_layout_counts(id, 60, 8, 1, 1, c), -1); /* not its layers */
  /* first and last stage: 5 and 4 layers, the 52 others over 6 stages (not even: balanced) */
  RtLayout fl = {61, g, 0, NULL, 5, 4};
  int idf = rt_layout_register(&fl);
  assert_true(idf >= 1 && idf != id);
  assert_int_equal(rt_layout_counts(idf, 61, 8, 1, 0, c), -1);
  assert_int_equal(rt_layout_counts(idf, 61, 8, 1, 1, c), 0);
  assert_int_equal(c[0][0] + c[0][1], 5), assert_int_equal(c[7][1], 4);
  assert_int_equal(c[1][1], 9), assert_int_equal(c[6][1], 8);
  assert_int_equal(rt_layout_counts(idf, 61, 1, 1, 1, c), -1); /* needs two stages */
  /* interleaved: stage d's layers over chunks d, d + stages */
  unsigned char h[16] = {0};
  RtLayout fl2 = {16, h, 0, NULL, 2, 2};
  int id2 = rt_layout_register(&fl2);
  assert_int_equal(rt_layout_counts(id2, 16, 4, 2, 0, c), 0); /* stages 2 6 6 2 over 2 chunks */
  int want[8] = {1, 3, 3, 1, 1, 3, 3, 1};
  for (int k = 0; k < 8; k++) assert_int_equal(c[k][0], want[k]);
  /* explicit, with an embedding-only first chunk and a loss-only last one */
  int st[4] = {0, 8, 8, 0};
  RtLayout ex = {16, h, 4, st, -1, -1};
  int ide = rt_layout_register(&ex);
  assert_int_equal(rt_layout_counts(ide, 16, 4, 1, 0, c), 0);
  assert_int_equal(c[0][0], 0), assert_int_equal(c[1][0], 8), assert_int_equal(c[3][0], 0);
  assert_int_equal(rt_layout_counts(ide, 16, 2, 1, 0, c), -1); /* 4 entries, 2 chunks */
  /* malformed */
  unsigned char bad[2] = {0, RT_MAX_GROUPS};
  assert_int_equal(rt_layout_register(&(RtLayout){2, bad, 0, NULL, -1, -1}), -1);
  assert_int_equal(rt_layout_counts(RT_MAX_LAYOUTS, 16, 4, 1, 0, c), -1); /* not registered */
  free(c);
}

/* The pipeline kernel over a two-group layout equals the one over per-chunk times built by
 * hand; the layers_on kernel counts a device's chunks. */
TEST(kernel_pipeline_layout) {
  unsigned char g[8] = {0, 0, 1, 1, 1, 1, 1, 1};
  int id = rt_layout_register(&(RtLayout){8, g, 0, NULL, -1, -1});
  double a[28] = {RT_1F1B, 2, 1, 4, 8, 0, 1e-3, 2e-3, 0, 0, 1e-4, 2e-4, 3e-4, 4e-4, 0, id, 5e-3, 7e-3, 0, 0};
  double out[RT_KERNEL_NOUT], buf[4 * RT_MAX_CHUNKS];
  RtPipeline p;
  assert_int_equal(rt_pipeline_of_args(a, &p, buf), 0);
  assert_true(p.fwd[0] == 1e-4 + 2 * 1e-3 + 2 * 5e-3 && p.fwd[1] == 4 * 5e-3 + 3e-4);
  assert_true(p.bwd[0] == 2e-4 + 2 * 2e-3 + 2 * 7e-3 && p.bwd[1] == 4 * 7e-3 + 4e-4);
  rt_kernels[RTK_PIPELINE].fn(NULL, a, out);
  RtPipeResult r = rt_pipeline_reference(&p, NULL, 0, NULL);
  assert_true(relative(out[0], r.makespan) <= 1e-12);
  double on[6] = {id, 8, 2, 1, 0, 1}; /* group 1 on the first device and the last */
  rt_kernels[RTK_LAYERS_ON].fn(NULL, on, out);
  assert_true(out[0] == 2 && out[1] == 4);
  on[5] = RT_MAX_GROUPS; /* no such group */
  rt_kernels[RTK_LAYERS_ON].fn(NULL, on, out);
  assert_true(isnan(out[0]) && isnan(out[1]));
}

/* layers_on remembers the ends of a split per thread: asked again, in any order, with splits
 * that share its memo's slots or that no layout places, it answers what counting gives. */
TEST(kernel_layers_on_memo) {
  unsigned char g[61];
  for (int i = 0; i < 61; i++) g[i] = i < 3 ? 0 : 1 + i % 2; /* DeepSeek-V3-like: 3, then two kinds */
  int id = rt_layout_register(&(RtLayout){61, g, 0, NULL, -1, -1});
  assert_true(id > 0);
  static const int pp[] = {1, 2, 4, 8, 16}, vs[] = {1, 2, 4, 8};
  int (*c)[RT_MAX_GROUPS] = malloc(sizeof(int[RT_MAX_CHUNKS][RT_MAX_GROUPS]));
  assert_non_null(c);
  for (int pass = 0; pass < 3; pass++) { /* cold, warm, then after a clear */
    if (pass == 2) rt_pipeline_memo_clear();
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 4; j++)
        for (int bal = 0; bal < 2; bal++)
          for (int grp = 2; grp >= 0; grp--) {
            double a[6] = {id, 61, pp[i], vs[j], bal, grp}, out[RT_KERNEL_NOUT];
            rt_kernels[RTK_LAYERS_ON].fn(NULL, a, out);
            if (rt_layout_counts(id, 61, pp[i], vs[j], bal, c) < 0) {
              assert_true(isnan(out[0]) && isnan(out[1]));
              continue;
            }
            double first = 0, last = 0;
            for (int k = 0; k < vs[j]; k++) first += c[k * pp[i]][grp], last += c[k * pp[i] + pp[i] - 1][grp];
            if (out[0] != first || out[1] != last)
              fail_msg("pass %d pp %d vs %d balanced %d group %d: %g %g, counted %g %g", pass, pp[i], vs[j], bal, grp,
                       out[0], out[1], first, last);
          }
  }
  free(c);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gpipe_1f1b_closed_form),
      cmocka_unit_test(interleaved_closed_form),
      cmocka_unit_test(zero_bubble_closed_form),
      cmocka_unit_test(in_flight),
      cmocka_unit_test(unequal_by_hand),
      cmocka_unit_test(p2p_sends),
      cmocka_unit_test(single_stage),
      cmocka_unit_test(events),
      cmocka_unit_test(bad_arguments),
      cmocka_unit_test(partition),
      cmocka_unit_test(large_deterministic),
      cmocka_unit_test(fast_matches_reference),
      cmocka_unit_test(fast_bit_identical),
      cmocka_unit_test(fast_orders_kept),
      cmocka_unit_test(fast_orders_many),
      cmocka_unit_test(extreme_times),
      cmocka_unit_test(kernel_pipeline),
      cmocka_unit_test(layout_counts),
      cmocka_unit_test(kernel_pipeline_layout),
      cmocka_unit_test(kernel_layers_on_memo),
  };
  return RUN_TESTS(tests);
}
