"""hw/probe/order.py and the plans of grid.py: any prefix of the order covers every operator
and the range of its sizes, priorities decide between points that cover equally, and the
budget cuts the run without overrunning it."""
import math
import unittest

import _paths  # noqa: F401

import grid
import order
from order import Point


def pt(x, prio=0.0, est=1.0, stream=("s",)):
    return Point(stream, (x,), (float(x),), 2.0 ** x, prio, est)


class Spread(unittest.TestCase):
    def test_smallest_first_then_far_end(self):
        pts = [pt(x) for x in (5, 3, 9, 0, 7, 1)]
        out = [p.shape[0] for p in order.spread(pts)]
        self.assertEqual(out[:2], [0, 9])
        self.assertEqual(sorted(out), sorted(p.shape[0] for p in pts))

    def test_coarse_to_fine(self):
        out = [p.shape[0] for p in order.spread([pt(x) for x in range(17)])]
        self.assertEqual(out[:3], [0, 16, 8])
        self.assertEqual(sorted(out[3:5]), [4, 12])

    def test_priority_breaks_equal_cover(self):
        pts = [pt(0), pt(10), pt(4), pt(6, prio=1.0)]
        self.assertEqual([p.shape[0] for p in order.spread(pts)], [0, 10, 6, 4])
        pts = [pt(0), pt(10), pt(4, prio=1.0), pt(6)]
        self.assertEqual([p.shape[0] for p in order.spread(pts)], [0, 10, 4, 6])

    def test_priority_does_not_beat_a_big_gap(self):
        # a high-priority point next to a chosen one waits for a point that fills a gap
        pts = [pt(0), pt(100), pt(1, prio=2.0), pt(50)]
        self.assertEqual([p.shape[0] for p in order.spread(pts)], [0, 100, 50, 1])

    def test_deterministic(self):
        pts = [pt(x % 7, stream=("s",)) for x in range(20)]
        self.assertEqual(order.spread(pts), order.spread(pts))


class Interleave(unittest.TestCase):
    def test_round_robin_with_weights(self):
        a, b, c = ["a1", "a2", "a3", "a4"], ["b1"], ["c1", "c2"]
        self.assertEqual(order.interleave([a, b, c], [2, 1, 1]),
                         ["a1", "a2", "b1", "c1", "a3", "a4", "c2"])
        self.assertEqual(order.interleave([a, b]), ["a1", "b1", "a2", "a3", "a4"])


class OperatorOrder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dtypes = ("bf16", "fp16")
        cls.order = grid.op_order(grid.DEFAULT_OPS, cls.dtypes)
        cls.streams = {}
        for p in cls.order:
            cls.streams.setdefault(p.stream, []).append(p)

    def test_every_point_once(self):
        g = grid.op_grid(grid.DEFAULT_OPS)
        self.assertEqual(len(self.order), len(self.dtypes) * sum(len(v) for v in g.values()))
        self.assertEqual(len(set((p.stream, p.shape) for p in self.order)), len(self.order))

    def test_first_round_covers_every_operator_and_dtype(self):
        per_round = len(self.dtypes) * sum(grid.OP_WEIGHTS.get(op, 1) for op in grid.DEFAULT_OPS)
        first = {p.stream for p in self.order[:per_round]}
        self.assertEqual(first, {(op, dt) for op in grid.DEFAULT_OPS for dt in self.dtypes})
        # operators come in the order given, the first the GEMMs
        self.assertEqual(self.order[0].stream, ("linear", "bf16"))

    def test_every_prefix_is_balanced(self):
        # in any prefix, a stream that still has points has had its share of every round
        counts = {s: 0 for s in self.streams}
        weight = {s: grid.OP_WEIGHTS.get(s[0], 1) for s in self.streams}
        for p in self.order:
            counts[p.stream] += 1
            rounds = counts[p.stream] / weight[p.stream]
            for s, n in counts.items():
                if n < len(self.streams[s]):
                    self.assertGreaterEqual(n / weight[s], rounds - 1 - 1e-9, (p.stream, s))

    def test_prefixes_cover_the_range_of_sizes(self):
        for s, pts in self.streams.items():
            work = [math.log(p.work) for p in pts]
            lo, hi = min(work), max(work)
            # the smallest point first, the far end of the range within two
            self.assertEqual(work[0], lo, s)
            self.assertGreaterEqual(max(work[:2]) - lo, 0.75 * (hi - lo), s)
            # every axis half covered within 5 points, three quarters within 20
            for k, need in ((5, 0.5), (20, 0.75)):
                for d in range(len(pts[0].coords)):
                    v = [p.coords[d] for p in pts]
                    span = max(v) - min(v)
                    got = max(v[:k]) - min(v[:k])
                    self.assertGreaterEqual(got, need * span - 1e-9, (s, k, d))

    def test_uncertain_shapes_early(self):
        # the small and tile-edge GEMMs: the mean priority of the first tenth is above the
        # mean of the whole stream
        for s, pts in self.streams.items():
            if s[0] not in ("linear", "bmm", "flash_attention"):
                continue
            n = max(2, len(pts) // 10)
            head = sum(p.priority for p in pts[:n]) / n
            self.assertGreater(head, sum(p.priority for p in pts) / len(pts), s)

    def test_priority_scores(self):
        small = grid.op_priority("linear", (128, 512, 512, 0), False)
        big = grid.op_priority("linear", (16384, 8192, 8192, 0), False)
        self.assertGreater(small, big)
        self.assertGreater(grid.op_priority("linear", (16384, 8192, 8192 + 64, 0), False), big)
        self.assertGreater(grid.op_priority("linear", (16384, 8192, 8192 + 1, 0), False),
                           grid.op_priority("linear", (16384, 8192, 8192 + 64, 0), False))
        self.assertEqual(grid.op_priority("linear", (16384, 8192, 8192, 0), True), big + 0.25)
        # 132 SMs: 133 tiles of 128 x 128 leave one tile in the second wave
        edge = grid.op_priority("linear", (128 * 133, 8192, 128, 0), False, sms=132)
        full = grid.op_priority("linear", (128 * 132, 8192, 128, 0), False, sms=132)
        self.assertEqual(edge, full + 0.5)


class CollectiveOrder(unittest.TestCase):
    def test_layouts_across_nodes_first_and_every_stream_in_the_first_round(self):
        o = grid.coll_order([(1, 8), (2, 8)])
        streams = list(dict.fromkeys(p.stream for p in o))
        self.assertEqual(len(streams), 10)
        self.assertEqual([s for s in streams[:5]],
                         [(k, 2, 8) for k in grid.COLLECTIVES[:4]] + [("p2p", 2, 1)])
        self.assertEqual({p.stream for p in o[:10]}, set(streams))
        self.assertEqual(len(o), 10 * 23)

    def test_sizes_coarse_to_fine_knee_first(self):
        o = [p for p in grid.coll_order([(1, 8)]) if p.stream == ("allreduce", 1, 8)]
        sizes = [p.shape[2] for p in o]
        self.assertEqual(sizes[:2], [1024, 4 * 1024 ** 3])
        self.assertTrue(64 * 1024 <= sizes[2] <= 64 * 1024 ** 2)   # then inside the knee
        self.assertEqual(sorted(sizes), [2 ** e for e in range(10, 33)])


class Budget(unittest.TestCase):
    def fake(self, slowdown=1.0):
        clock = [0.0]

        def measure(p):
            clock[0] += p.est * slowdown
            return True

        return clock, measure

    def test_no_budget_measures_all(self):
        o = grid.op_order(("adam", "gelu"), ("fp16",))
        clock, measure = self.fake()
        st = order.run(o, None, measure, clock=lambda: clock[0])
        self.assertEqual(st.measured, len(o))
        self.assertFalse(st.stopped_early)

    def test_cut_within_budget(self):
        o = grid.op_order(grid.DEFAULT_OPS, ("fp16",))
        total = sum(p.est for p in o)
        for slowdown in (0.5, 1.0, 3.0):
            clock, measure = self.fake(slowdown)
            seen = []
            budget = total / 10
            st = order.run(o, budget, lambda p: seen.append(p) or measure(p),
                           clock=lambda: clock[0])
            self.assertLess(st.measured, len(o))
            # overrun at most by misjudging the first point of a stream
            worst = max(p.est for p in o) * slowdown
            self.assertLessEqual(clock[0], budget + worst, slowdown)
            self.assertGreater(clock[0], 0.5 * budget, slowdown)
            # what was measured is in plan order and covers every operator
            idx = [o.index(p) for p in seen]
            self.assertEqual(idx, sorted(idx))
            self.assertEqual({p.stream for p in seen}, {p.stream for p in o})

    def test_correction_learns_slowdown(self):
        c = order.Correction()
        self.assertEqual(c.factor("x"), 1.0)
        for _ in range(20):
            c.update("x", 1.0, 4.0)
        self.assertAlmostEqual(c.factor("x"), 4.0, places=3)
        self.assertAlmostEqual(c.factor("y"), 4.0, places=3)   # unseen: the mean of all
        c.update("y", 1.0, 1.0)
        self.assertLess(c.factor("y"), 4.0)
        self.assertLessEqual(c.min_factor(), c.factor("y"))

    def test_failed_points_are_counted(self):
        pts = [pt(x) for x in range(5)]
        st = order.run(pts, None, lambda p: None if p.shape[0] % 2 else 1)
        self.assertEqual((st.measured, st.failed), (3, 2))

    def test_budget_prefix_and_cumulative(self):
        pts = [pt(x, est=e) for x, e in enumerate((1, 5, 1, 1))]
        self.assertEqual(order.budget_prefix(pts, 3.5), (3, 3.0))
        self.assertEqual(order.cumulative(pts), [1, 6, 7, 8])


if __name__ == "__main__":
    unittest.main()
