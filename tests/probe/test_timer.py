"""hw/probe/ops.py's Timer on a GPU, with a fake torch.cuda that keeps a log of the stream:
the timed repeats are queued behind a spin of the GPU long enough for the host to queue them
all (so the events time the GPU, not the launch), bounded both ways, and timed between
their own events; without torch.cuda._sleep the repeats are timed as before."""
import types
import unittest

from _paths import PROBE

import ops


class FakeCuda:
    """A stream log: ('sleep', cycles), ('record', event), ('call',), ('sync',).  _sleep runs
    at 1e9 cycles per second; each event pair of a repeat brackets `gpu_us` of work."""

    def __init__(self, gpu_us=7.0, sleep=True):
        self.log, self.gpu_us = [], gpu_us
        cuda = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self):
                cuda.log.append(("record", self))

            def elapsed_time(self, end):   # milliseconds, as torch's
                return end.t - self.t

        self.Event = Event
        if sleep:
            self._sleep = lambda cycles: self.log.append(("sleep", cycles))

    def synchronize(self, device=None):
        # replay the stream: a sleep advances by cycles / 1e9 s, a call by gpu_us
        t = 0.0
        for item in self.log:
            if item[0] == "sleep":
                t += item[1] / 1e9 * 1e3
            elif item[0] == "call":
                t += self.gpu_us * 1e-3
            elif item[0] == "record":
                item[1].t = t
        self.log.append(("sync",))


def fake(gpu_us=7.0, sleep=True):
    cuda = FakeCuda(gpu_us, sleep)
    torch = types.SimpleNamespace(cuda=cuda)
    timer = ops.Timer(torch, types.SimpleNamespace(type="cuda"))
    return cuda, timer


class TimerTest(unittest.TestCase):
    def test_the_probe_s_ops(self):
        self.assertTrue(ops.__file__.startswith(PROBE))

    def test_repeats_queued_behind_a_hold(self):
        cuda, timer = fake()
        us = timer.median_us(lambda: cuda.log.append(("call",)), warmup=3, repeats=10)
        self.assertAlmostEqual(us, 7.0, places=6)
        kinds = [e[0] for e in cuda.log]
        # the warm-ups, the sleep rate's probe (once), then one hold and the ten repeats,
        # each call between its own events
        last_sleep = len(kinds) - 1 - kinds[::-1].index("sleep")
        self.assertEqual(kinds[:3], ["call"] * 3)
        timed = kinds[last_sleep:]
        self.assertEqual(timed[0], "sleep")
        self.assertEqual(timed[1:-1], ["record", "call", "record"] * 10)
        self.assertEqual(timed[-1], "sync")
        self.assertAlmostEqual(timer.cycles_per_s, 1e9, delta=1e3)

    def test_hold_bounded(self):
        cuda, timer = fake()
        timer._sleep_rate()
        cuda.log.clear()
        timer.hold(0.0)
        timer.hold(10.0)
        timer.hold(0.01)
        cycles = [e[1] for e in cuda.log if e[0] == "sleep"]
        self.assertEqual(cycles, [int(ops.Timer.HOLD_MIN_S * 1e9), int(ops.Timer.HOLD_MAX_S * 1e9),
                                  int(0.01 * 1e9)])

    def test_without_sleep_times_as_before(self):
        cuda, timer = fake(sleep=False)
        self.assertFalse(timer.can_hold())
        us = timer.median_us(lambda: cuda.log.append(("call",)), warmup=2, repeats=5)
        self.assertAlmostEqual(us, 7.0, places=6)
        self.assertNotIn("sleep", [e[0] for e in cuda.log])


if __name__ == "__main__":
    unittest.main()
