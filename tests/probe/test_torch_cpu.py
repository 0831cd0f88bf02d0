"""hw/probe/ops.py with PyTorch on the CPU, where torch is installed (skipped otherwise): every
operator builds and times at a tiny shape, and `probe.py ops --device cpu` writes sample
files end to end.  Timings on a CPU calibrate nothing; this checks the code."""
import contextlib
import io
import os
import tempfile
import unittest

import _paths  # noqa: F401

import grid
import order
import probe

try:
    import torch
except ImportError:
    torch = None

TINY = {
    "linear": (64, 32, 48, 1), "bmm": (3, 16, 8, 16), "softmax": (64, 16),
    "masked_softmax": (64, 16), "masked_fill": (64, 16), "flash_attention": (2, 16, 4, 2, 8),
    "flash_attention_full": (1, 16, 2, 2, 8), "layernorm": (16, 32), "rmsnorm": (16, 32),
    "gelu": (1024,), "swiglu": (1536,), "add": (1024,), "rope": (16, 4, 8),
    "embedding": (16, 100, 32), "cross_entropy": (16, 100), "adam": (4096, 3),
}


@unittest.skipIf(torch is None, "torch is not installed")
class CpuTiming(unittest.TestCase):
    def test_every_operator(self):
        import ops
        self.assertEqual(set(TINY), set(grid.ALL_OPS))
        dev = torch.device("cpu")
        timer = ops.Timer(torch, dev)
        for op, shape in TINY.items():
            with self.subTest(op=op):
                try:
                    case = ops.build(torch, op, shape, torch.float32, dev)
                except ops.Unsupported as e:   # e.g. no SDPA before torch 2.0
                    self.assertTrue(op.startswith("flash"), e)
                    continue
                self.assertTrue(case.impl)
                self.assertGreater(timer.median_us(case.fwd, 1, 3), 0)
                if op == "adam":
                    self.assertIsNone(case.bwd)
                else:
                    self.assertGreater(timer.median_us(case.bwd, 1, 3), 0)

    def test_backward_is_repeatable(self):
        # the retained graph runs backward again and again (cross-entropy's saved softmax
        # is not modified in place)
        import ops
        dev = torch.device("cpu")
        for op in ("cross_entropy", "linear", "embedding"):
            case = ops.build(torch, op, TINY[op], torch.float32, dev)
            for _ in range(3):
                case.bwd()

    def test_cross_entropy_matches_torch(self):
        import ops
        xent = ops._vocab_parallel_cross_entropy(torch)
        logits = torch.randn(8, 50, requires_grad=True)
        target = torch.randint(0, 50, (8,))
        loss = xent.apply(logits, target)
        ref = torch.nn.functional.cross_entropy(logits, target, reduction="none")
        self.assertTrue(torch.allclose(loss, ref, atol=1e-5))
        g, = torch.autograd.grad(loss.sum(), logits)
        gr, = torch.autograd.grad(ref.sum(), logits)
        self.assertTrue(torch.allclose(g, gr, atol=1e-5))

    def test_flash_attention_paths(self):
        # grouped-query heads through enable_gqa (torch >= 2.5) or, without it, by repeating
        # the key/value heads: each checked against a plain reference attention, whatever
        # this torch's own SDPA is
        import ops
        F = torch.nn.functional
        real = getattr(F, "scaled_dot_product_attention", None)

        def attend(q, k, v, is_causal=False):
            if k.shape[1] != q.shape[1]:
                raise RuntimeError("heads differ")
            s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
            if is_causal:
                s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), -1e9)
            return torch.softmax(s, -1) @ v

        def new(q, k, v, is_causal=False, enable_gqa=False):
            if enable_gqa and k.shape[1] != q.shape[1]:
                r = q.shape[1] // k.shape[1]
                k, v = k.repeat_interleave(r, 1), v.repeat_interleave(r, 1)
            return attend(q, k, v, is_causal)

        try:
            for fake, impl in ((new, "enable_gqa"), (attend, "repeat_interleave")):
                F.scaled_dot_product_attention = fake
                case = ops.build(torch, "flash_attention", (2, 16, 4, 2, 8), torch.float32,
                                 torch.device("cpu"))
                self.assertIn(impl, case.impl)
                self.assertEqual(tuple(case.fwd().shape), (2, 4, 16, 8))
                case.bwd()
                case = ops.build(torch, "flash_attention_full", (1, 16, 2, 2, 8), torch.float32,
                                 torch.device("cpu"))
                self.assertIn("full", case.impl)
        finally:
            if real is None:
                del F.scaled_dot_product_attention
            else:
                F.scaled_dot_product_attention = real

    def test_unsupported_shapes(self):
        import ops
        with self.assertRaises(ops.Unsupported):
            ops.build(torch, "masked_fill", (65, 16), torch.float32, torch.device("cpu"))

    def test_probe_ops_on_cpu_end_to_end(self):
        tiny = [p for p in grid.op_order(("linear", "gelu", "adam"), ("fp32",))
                if p.est < 0.03 and p.work < 1e-4][:6]
        self.assertTrue(tiny)
        real = probe.build_plan
        probe.build_plan = lambda args, sms=None: tiny
        try:
            with tempfile.TemporaryDirectory() as d:
                err = io.StringIO()
                with contextlib.redirect_stderr(err):
                    rc = probe.main(["ops", "--out", d, "--device", "cpu", "--dtype", "fp32",
                                     "--repeats", "2", "--warmup", "1", "--minutes", "1"])
                self.assertEqual(rc, 0, err.getvalue())
                self.assertIn("probe: measured %d of %d points" % (len(tiny), len(tiny)),
                              err.getvalue())
                files = sorted(os.listdir(os.path.join(d, "operator")))
                self.assertEqual(files, sorted({"%s_fp32.csv" % p.stream[0] for p in tiny}))
                with open(os.path.join(d, "operator", files[0])) as f:
                    lines = f.read().splitlines()
                keys = [ln.split(":")[0] for ln in lines if ln.startswith("# ")]
                for k in ("# probe", "# gpu", "# gpu_count", "# torch", "# hostname", "# date",
                          "# command", "# budget", "# impl", "# timing"):
                    self.assertIn(k, keys)
        finally:
            probe.build_plan = real

    def test_probe_ops_resumed_on_cpu(self):
        # a run cut after 3 points, resumed with the plan of 6: the 3 others measured, appended
        tiny = [p for p in grid.op_order(("linear", "gelu", "adam"), ("fp32",))
                if p.est < 0.03 and p.work < 1e-4][:6]
        real = probe.build_plan
        argv = ["ops", "--device", "cpu", "--dtype", "fp32", "--repeats", "2", "--warmup", "1",
                "--minutes", "1"]
        try:
            with tempfile.TemporaryDirectory() as d:
                probe.build_plan = lambda args, sms=None: tiny[:3]
                with contextlib.redirect_stderr(io.StringIO()):
                    self.assertEqual(probe.main(argv + ["--out", d]), 0)
                files = sorted(os.listdir(os.path.join(d, "operator")))
                before = {f: self.read(d, f) for f in files}
                probe.build_plan = lambda args, sms=None: tiny
                err = io.StringIO()
                with contextlib.redirect_stderr(err):
                    rc = probe.main(argv + ["--out", d, "--resume"])
                self.assertEqual(rc, 0, err.getvalue())
                self.assertIn("probe: resuming: 3 of the 6 points already in %d files"
                              % len(files), err.getvalue())
                self.assertIn("probe: measured 3 of 3 points", err.getvalue())
                rows = 0
                for f in sorted(os.listdir(os.path.join(d, "operator"))):
                    lines = self.read(d, f)
                    resumed = [ln for ln in lines if ln.startswith("# resumed: ")]
                    self.assertEqual(len(resumed), 1, f)
                    if f in before:   # the earlier lines kept, in place
                        old = before[f]
                        k = lines.index(resumed[0])
                        self.assertEqual(lines[:k] + lines[k + 1:len(old) + 1], old)
                    rows += len(lines) - lines.index(next(ln for ln in lines
                                                          if not ln.startswith("#"))) - 1
                self.assertEqual(rows, 6)
        finally:
            probe.build_plan = real

    @staticmethod
    def read(d, f, sub="operator"):
        with open(os.path.join(d, sub, f)) as fh:
            return fh.read().splitlines()

    @staticmethod
    def gloo_collectives(out, *argv):
        """Runs probe.py collectives on 3 processes on this machine, as 2 "nodes" (ranks 0
        and 1 on one, 2 on the other, by LLMP_PROBE_HOST), over gloo on the loopback: [(exit
        status, output)] of each rank."""
        import socket
        import subprocess
        import sys
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        for rank, host in enumerate(("node0", "node0", "node1")):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE="3", LOCAL_RANK=str(rank % 2),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       LLMP_PROBE_HOST=host, CUDA_VISIBLE_DEVICES="")
            procs.append(subprocess.Popen(
                [sys.executable, os.path.join(_paths.PROBE, "probe.py"), "collectives",
                 "--out", out, "--layouts", "1x2,2x1",
                 "--kinds", "allreduce,allgather,alltoall,p2p", "--min-bytes", "1K",
                 "--steps-per-octave", "1", "--repeats", "2", "--warmup", "1", "--iters", "2",
                 "--minutes", "0"] + list(argv),
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        outs = [p.communicate(timeout=120)[0] for p in procs]
        return [(p.returncode, out) for p, out in zip(procs, outs)]

    def test_collectives_over_gloo_on_two_fake_nodes(self):
        # the launch variables, the groups, the broadcast of the points, the maximum over
        # ranks and rank 0's files
        with tempfile.TemporaryDirectory() as d:
            outs = self.gloo_collectives(d, "--max-bytes", "16K")
            for rank, (rc, out) in enumerate(outs):
                self.assertEqual(rc, 0, "rank %d:\n%s" % (rank, out))
            self.assertIn("probe: measured 40 of 40 points", outs[0][1])
            files = sorted(os.listdir(os.path.join(d, "nccl")))
            self.assertEqual(files, sorted("%s_fp16_%s.csv" % (k, l) for k in
                                           ("allreduce", "allgather", "alltoall", "p2p")
                                           for l in ("1_2", "2_1")))
            with open(os.path.join(d, "nccl", "allgather_fp16_2_1.csv")) as f:
                lines = f.read().splitlines()
            self.assertIn("# backend: gloo", lines)
            self.assertIn("# gpu_count: 3", lines)
            self.assertIn("# world: 2 nodes, 1/2 GPUs per node", lines)
            header = lines.index("shape,nodes,GPUsPerNode,dur(us)")
            rows = [ln.split(",") for ln in lines[header + 1:]]
            # the per-rank input of 2 ranks: a quarter of the bytes in fp16 elements
            self.assertEqual(sorted(int(r[0]) for r in rows), [256, 512, 1024, 2048, 4096])
            self.assertTrue(all(r[1:3] == ["2", "1"] and float(r[3]) > 0 for r in rows))

    def test_collectives_resumed_over_gloo(self):
        # 1K to 4K measured, then resumed to 16K: rank 0 measures only the 16 new points and
        # the other ranks follow it by the points' index in the whole plan (a rank on the
        # wrong point would hang or time the wrong size); then another GPU is refused on
        # every rank
        with tempfile.TemporaryDirectory() as d:
            outs = self.gloo_collectives(d, "--max-bytes", "4K")
            self.assertEqual([rc for rc, _ in outs], [0, 0, 0], outs[0][1])
            self.assertIn("probe: measured 24 of 24 points", outs[0][1])
            outs = self.gloo_collectives(d, "--max-bytes", "16K", "--resume")
            for rank, (rc, out) in enumerate(outs):
                self.assertEqual(rc, 0, "rank %d:\n%s" % (rank, out))
            self.assertIn("probe: resuming: 24 of the 40 points already in 8 files",
                          outs[0][1])
            self.assertIn("probe: measured 16 of 16 points", outs[0][1])
            lines = self.read(d, "allgather_fp16_2_1.csv", "nccl")
            resumed = [ln for ln in lines if ln.startswith("# resumed: ")]
            self.assertEqual(len(resumed), 1)
            self.assertIn("--max-bytes 16K --resume", resumed[0])
            header = lines.index("shape,nodes,GPUsPerNode,dur(us)")
            self.assertEqual(sorted(int(ln.split(",")[0]) for ln in lines[header + 1:][:3]),
                             [256, 512, 1024])   # the first run's rows first
            self.assertEqual(sorted(int(ln.split(",")[0]) for ln in lines[header + 1:]),
                             [256, 512, 1024, 2048, 4096])
            path = os.path.join(d, "nccl", "allgather_fp16_2_1.csv")
            with open(path, "w") as f:
                f.write("\n".join(ln.replace("# gpu: none (cpu)", "# gpu: NVIDIA H100")
                                  for ln in lines) + "\n")
            outs = self.gloo_collectives(d, "--max-bytes", "32K", "--resume")
            self.assertEqual(outs[0][0], 1, outs[0][1])
            self.assertIn("was measured on `NVIDIA H100`, this run is on `none (cpu)`",
                          outs[0][1])
            self.assertEqual([rc for rc, _ in outs[1:]], [0, 0], outs[1][1])

    def test_measurer_skips_what_it_cannot_run(self):
        import ops
        m = ops.OpMeasurer(torch, torch.device("cpu"), 0, 1, log=io.StringIO())
        p = order.Point(("masked_fill", "fp32"), (65, 16), (0, 0), 1.0)
        self.assertIsNone(m(p))
        p = order.Point(("gelu", "fp32"), (1024,), (10,), 1.0)
        f, b, impl = m(p)
        self.assertGreater(f, 0)
        self.assertGreater(b, 0)

    def test_attention_backend(self):
        """--attention names the backend in the impl line, or says why it cannot run it."""
        import ops
        m = ops.OpMeasurer(torch, torch.device("cpu"), 0, 1, log=io.StringIO(), attention="math")
        p = order.Point(("flash_attention", "fp32"), (1, 64, 4, 4, 16), (0,), 1.0)
        r = m(p)
        auto = ops.OpMeasurer(torch, torch.device("cpu"), 0, 1, log=io.StringIO())
        ra = auto(p)
        if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):   # torch < 2.0
            self.assertIsNone(r)
            self.assertIsNone(ra)
            self.assertIn("no scaled_dot_product_attention", m.log.getvalue())
            return
        self.assertIn("backend: PyTorch's choice", ra[2])
        if hasattr(torch.nn, "attention"):   # torch >= 2.3
            self.assertIn("backend: MATH", r[2])
        else:
            self.assertIsNone(r)
            self.assertIn("needs torch >= 2.3", m.log.getvalue())

if __name__ == "__main__":
    unittest.main()
