"""The order in which the probe samples, and the budget that cuts it.  Pure Python.

The order is coverage first: any prefix of it samples every operator (or collective layout)
and spreads over the range of its sizes, so that a run cut short by its budget still
calibrates everything, coarsely, rather than a few operators finely.

- Streams: one per operator and dtype (per collective kind and layout).  interleave() takes
  points from the streams round-robin, `weight` points from a stream per round.
- Within a stream, spread() orders the points by a priority-weighted farthest-point rule in
  log-shape space: the first point is the smallest (least work: launch- and latency-bound,
  where the physics is least certain), the second the one farthest from it (the other end
  of the range), and each next one the point that maximises

      distance to the nearest point already chosen  x  (1 + priority)

  so that the chosen points fill the range coarse to fine, and among points that fill it
  about as well those where the physics is least certain (grid.op_priority,
  grid.coll_priority: small shapes, tile and wave edges, the latency-bandwidth knee, node
  crossings) come first.
- run() walks the order with a budget: it measures a point only when its estimated time
  (corrected by what the points measured so far took against their estimates) fits in what
  is left, skips it otherwise, and stops when nothing left can fit.
"""

import math
import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Point:
    """One measurement: `stream` groups the points ordered together (e.g. ('linear', 'bf16'));
    `shape` is what the sample file records; `coords` are the coordinates for distances
    (log2 sizes); `work` sizes the point (the smallest is measured first); `priority` is the
    grid's score; `est` the estimated seconds to measure it."""
    stream: tuple
    shape: tuple
    coords: tuple = field(compare=False)
    work: float = field(compare=False)
    priority: float = field(compare=False, default=0.0)
    est: float = field(compare=False, default=0.0)


def spread(points):
    """The points of one stream in coverage-first order (see the module's description).
    Deterministic: ties go to the point given first."""
    pts = list(points)
    n = len(pts)
    if n <= 1:
        return pts
    coords = [p.coords for p in pts]
    # squared distances throughout: the argmax of d * w is the argmax of d^2 * w^2
    w2 = [(1 + p.priority) ** 2 for p in pts]
    first = min(range(n), key=lambda i: (pts[i].work, i))
    chosen = [first]
    left = [i for i in range(n) if i != first]
    dmin = [0.0] * n
    c = coords[first]
    for i in left:
        dmin[i] = sum((x - y) * (x - y) for x, y in zip(coords[i], c))
    while left:
        weighted = len(chosen) >= 2   # the second point is the far end of the range
        best, best_v = -1, -1.0
        for i in left:   # in index order: a tie keeps the earlier point
            v = dmin[i] * w2[i] if weighted else dmin[i]
            if v > best_v:
                best, best_v = i, v
        chosen.append(best)
        left.remove(best)
        c = coords[best]
        for i in left:
            d = sum((x - y) * (x - y) for x, y in zip(coords[i], c))
            if d < dmin[i]:
                dmin[i] = d
    return [pts[i] for i in chosen]


def interleave(streams, weights=None):
    """Round-robin over ordered streams (a list of lists of points): per round, stream j
    gives its next weights[j] points (1 by default); streams that run out drop out."""
    weights = weights or [1] * len(streams)
    pos = [0] * len(streams)
    out = []
    while True:
        progressed = False
        for j, s in enumerate(streams):
            take = s[pos[j]:pos[j] + max(1, weights[j])]
            if take:
                out.extend(take)
                pos[j] += len(take)
                progressed = True
        if not progressed:
            return out


def plan(points, stream_order, weights=None):
    """The full order: the points grouped by stream, each stream spread(), the streams
    interleaved in stream_order (streams not listed follow in the order first seen).
    weights maps a stream to its points per round."""
    groups = {}
    for p in points:
        groups.setdefault(p.stream, []).append(p)
    keys = [k for k in stream_order if k in groups] + \
           [k for k in groups if k not in stream_order]
    weights = weights or {}
    memo, ordered = {}, []
    for k in keys:   # streams of the same shapes (one operator in two dtypes) share the work
        g = groups[k]
        sig = tuple((p.shape, p.coords, p.work, p.priority) for p in g)
        if sig not in memo:
            idx = {id(p): i for i, p in enumerate(g)}
            memo[sig] = [idx[id(p)] for p in spread(g)]
        ordered.append([g[i] for i in memo[sig]])
    return interleave(ordered, [weights.get(k, 1) for k in keys])


def cumulative(order):
    """Cumulative estimated seconds after each point of the order."""
    out, t = [], 0.0
    for p in order:
        t += p.est
        out.append(t)
    return out


def budget_prefix(order, budget_s):
    """How many points of the order fit in budget_s seconds by their estimates, taken as
    run() takes them (a point that does not fit is skipped, later ones may still fit)."""
    t, n = 0.0, 0
    for p in order:
        if t + p.est <= budget_s:
            t += p.est
            n += 1
    return n, t


class Correction:
    """Measured / estimated time of the points so far, per stream key (the operator or
    collective), as an exponential moving average in log space: it scales the estimates of
    the points still to run.  Until a stream has a measurement the mean over all streams is
    used, and 1 before anything is measured."""

    def __init__(self, alpha=0.3):
        self.alpha = alpha
        self.log = {}
        self.all = None

    def update(self, key, estimated, measured):
        if not (estimated > 0 and measured > 0):
            return
        r = math.log(measured / estimated)
        r = max(-5.0, min(5.0, r))
        a = self.alpha
        self.log[key] = r if key not in self.log else (1 - a) * self.log[key] + a * r
        self.all = r if self.all is None else (1 - a) * self.all + a * r

    def factor(self, key):
        v = self.log.get(key, self.all)
        return 1.0 if v is None else math.exp(v)

    def min_factor(self):
        """The smallest factor any point can get (for the stopping test)."""
        return math.exp(min([0.0 if self.all is None else self.all] + list(self.log.values())))


@dataclass
class RunStats:
    measured: int = 0
    skipped: int = 0        # estimated not to fit in what was left of the budget
    failed: int = 0         # measure() returned None (out of memory, unsupported)
    elapsed: float = 0.0
    stopped_early: bool = False


def run(order, budget_s, measure, clock=time.monotonic, key=lambda p: p.stream[0], log=None):
    """Measures the points of `order` in turn within budget_s seconds (None: no budget).

    measure(point) measures one point and returns a result (anything but None) or None when
    the point could not be measured.  A point is measured only when its estimate, scaled by
    the Correction of its key, fits in the time left; else it is skipped.  The run stops once
    the time left is below the smallest corrected estimate of the points still to come.
    Returns RunStats."""
    start = clock()
    corr = Correction()
    stats = RunStats()
    n = len(order)
    # the smallest raw estimate from each position on, to know when nothing more can fit
    tail_min = [0.0] * (n + 1)
    tail_min[n] = math.inf
    for i in range(n - 1, -1, -1):
        tail_min[i] = min(tail_min[i + 1], order[i].est)
    for i, p in enumerate(order):
        now = clock() - start
        if budget_s is not None:
            left = budget_s - now
            lowest = tail_min[i] * corr.min_factor()
            if left < lowest:
                stats.stopped_early = True
                break
            if p.est * corr.factor(key(p)) > left:
                stats.skipped += 1
                continue
        t0 = clock()
        result = measure(p)
        took = clock() - t0
        if result is None:
            stats.failed += 1
        else:
            stats.measured += 1
            corr.update(key(p), p.est, took)
        if log:
            log(i, p, result, took)
    stats.elapsed = clock() - start
    return stats
