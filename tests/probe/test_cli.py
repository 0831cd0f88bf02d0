"""hw/probe/probe.py: argument errors exit 2 with a message, --help, the dry run's plan, an
output folder already holding samples, and every module importing without torch."""
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest

from _paths import PROBE

import collectives
import probe

SCRIPT = os.path.join(PROBE, "probe.py")


def run_main(*argv):
    """(exit status, stdout, stderr) of probe.main(argv)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = probe.main(list(argv))
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
            if not isinstance(e.code, int) and e.code is not None:
                err.write(str(e.code))
    return rc, out.getvalue(), err.getvalue()


class Arguments(unittest.TestCase):
    def bad(self, *argv, says):
        rc, _, err = run_main(*argv)
        self.assertEqual(rc, 2, argv)
        self.assertIn(says, err, argv)
        self.assertIn("usage:", err)

    def test_errors(self):
        self.bad(says="required")
        self.bad("gpu", says="invalid choice")
        self.bad("ops", says="--out")
        self.bad("ops", "--out", "d", "--dtype", "fp4", says="unknown dtype `fp4`")
        self.bad("ops", "--out", "d", "--dtype", "fp8", "--ops", "gelu,add",
                 says="no operator of --ops runs in any dtype of --dtype")
        self.bad("ops", "--out", "d", "--ops", "linear,conv", says="unknown operator `conv`")
        self.bad("ops", "--out", "d", "--minutes", "-1", says="--minutes")
        self.bad("ops", "--out", "d", "--minutes", "x", says="invalid float value")
        self.bad("ops", "--out", "d", "--repeats", "0", says="--repeats")
        self.bad("ops", "--out", "d", "--sms", "0", says="--sms")
        self.bad("collectives", "--out", "d", says="--layouts")
        self.bad("collectives", "--out", "d", "--layouts", "8", says="not NODESxGPUS")
        self.bad("collectives", "--out", "d", "--layouts", "1x1", says="at least 2 GPUs")
        self.bad("collectives", "--out", "d", "--layouts", "1x8", "--kinds", "broadcast",
                 says="unknown collective `broadcast`")
        self.bad("collectives", "--out", "d", "--layouts", "1x8", "--min-bytes", "1Q",
                 says="not a size")
        self.bad("collectives", "--out", "d", "--layouts", "1x8", "--min-bytes", "1G",
                 "--max-bytes", "1M", says="larger than --max-bytes")
        self.bad("collectives", "--out", "d", "--layouts", "1x8", "--steps-per-octave", "0",
                 says="--steps-per-octave")

    def test_help(self):
        for argv in (["--help"], ["ops", "--help"], ["collectives", "--help"]):
            rc, out, _ = run_main(*argv)
            self.assertEqual(rc, 0)
            self.assertIn("usage:", out)
        _, out, _ = run_main("ops", "--help")
        for opt in ("--out", "--dtype", "--minutes", "--ops", "--repeats", "--warmup",
                    "--device", "--dry-run"):
            self.assertIn(opt, out)
        _, out, _ = run_main("collectives", "--help")
        for opt in ("--layouts", "--min-bytes", "--max-bytes", "torchrun", "srun"):
            self.assertIn(opt, out)

    def test_existing_samples_need_force(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "operator"))
            open(os.path.join(d, "operator", "linear_fp16.csv"), "w").close()
            rc, _, err = run_main("ops", "--out", d)
            self.assertEqual(rc, 2)
            self.assertIn("--force", err)


class DryRun(unittest.TestCase):
    def test_ops_plan(self):
        rc, out, _ = run_main("ops", "--out", "d", "--dry-run", "--ops", "adam,gelu",
                              "--dtype", "fp16", "--minutes", "0.05")
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertRegex(lines[0], r"^probe ops: \d+ points \(2 operators x 1 dtypes\), "
                                   r"estimated [\d.]+ min")
        self.assertRegex(lines[1], r"^budget: 0.05 min: \d+ points")
        rows = lines[3:]
        self.assertEqual(rows[0].split()[:3], ["1", "adam", "fp16"])
        self.assertEqual(rows[1].split()[1], "gelu")   # round-robin
        self.assertIn("run", rows[0])
        self.assertTrue(any(r.endswith("skip") for r in rows), "a 3 s budget cuts the plan")
        n = int(lines[0].split()[2])
        self.assertEqual(len(rows), n)

    def test_collectives_plan(self):
        rc, out, _ = run_main("collectives", "--out", "d", "--layouts", "1x4,2x4", "--dry-run",
                              "--minutes", "0", "--steps-per-octave", "1")
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertIn("230 points", lines[0])
        self.assertEqual(lines[1], "budget: none, the full grid")
        self.assertIn("allreduce 2x4", lines[3])
        self.assertIn("2x4 bytes=1024 shape=512", lines[3])
        self.assertIn("allgather 2x4", lines[4])
        self.assertIn("shape=64", lines[4])   # per-rank input of 8 ranks
        rc, out, _ = run_main("collectives", "--out", "d", "--layouts", "1x4,2x4", "--dry-run")
        self.assertIn("890 points", out.splitlines()[0])   # 4 sizes per doubling by default

    def test_dry_run_without_torch_in_a_subprocess(self):
        # torch made unimportable: the plan still prints, measuring says what is missing
        code = ("import sys, runpy; sys.modules['torch'] = None; sys.argv = %r; "
                "runpy.run_path(%r, run_name='__main__')")
        r = subprocess.run([sys.executable, "-c", code % (
            ["probe.py", "ops", "--out", "d", "--dry-run", "--ops", "adam"], SCRIPT)],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("probe ops:", r.stdout)
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, "-c", code % (
                ["probe.py", "ops", "--out", d, "--ops", "adam"], SCRIPT)],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1)
            self.assertIn("needs PyTorch", r.stderr)
            self.assertIn("--dry-run", r.stderr)


class LazyTorch(unittest.TestCase):
    def test_modules_import_without_torch(self):
        code = ("import sys; sys.modules['torch'] = None; sys.path.insert(0, %r); "
                "import grid, order, csvout, env, ops, collectives, probe; "
                "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]; "
                "print('ok')" % PROBE)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "ok")


class Launch(unittest.TestCase):
    def test_dist_env(self):
        self.assertEqual(collectives.dist_env({"RANK": "3", "WORLD_SIZE": "16", "LOCAL_RANK": "3"}),
                         (3, 16, 3))
        self.assertEqual(collectives.dist_env({"SLURM_PROCID": "9", "SLURM_NTASKS": "16",
                                               "SLURM_LOCALID": "1"}), (9, 16, 1))
        with self.assertRaises(SystemExit):
            collectives.dist_env({})
        self.assertEqual(collectives.master_address({"MASTER_ADDR": "n1"}), "n1")

    def test_layout_ranks(self):
        nodes = collectives.nodes_of(["a", "a", "b", "b", "a", "b"])
        self.assertEqual(nodes, [[0, 1, 4], [2, 3, 5]])
        self.assertEqual(collectives.layout_ranks(nodes, 2, 2), [0, 1, 2, 3])
        self.assertEqual(collectives.layout_ranks(nodes, 1, 3), [0, 1, 4])
        self.assertEqual(collectives.layout_ranks(nodes, 2, 1), [0, 2])
        with self.assertRaises(ValueError):
            collectives.layout_ranks(nodes, 3, 1)
        with self.assertRaises(ValueError):
            collectives.layout_ranks(nodes, 1, 4)


if __name__ == "__main__":
    unittest.main()
