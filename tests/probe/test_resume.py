"""hw/probe/probe.py --resume: the sample files a run cut short left are read back (comment
lines and rows kept, malformed ones refused by file and line), the points they hold are not
planned again, the rest is measured in the same order into the same files, each file of a
resumed run gets a `# resumed:` line, and a file from another GPU is refused.  Without torch:
the measuring is a fake that writes rows as run_ops and collectives.run do."""
import io
import os
import tempfile
import unittest

from _paths import TempDirCase

import csvout
import grid
import order
import probe
from test_cli import run_main

GPU = "NVIDIA H100 80GB HBM3"
INFO = {"probe": "test", "gpu": GPU, "torch": "2.4.0", "date": "2025-01-01T00:00:00+00:00",
        "command": "python3 probe.py ops --out x"}
OPS = ["--ops", "adam,gelu,add", "--dtype", "fp16"]
COLL = ["--layouts", "1x4,2x4", "--kinds", "allreduce,allgather,p2p", "--steps-per-octave", "1",
        "--max-bytes", "1M"]


def args_of(*argv):
    a = probe.parser().parse_args(list(argv))
    probe.check_args(a)
    return a


def write_rows(samples, points, us=10.0):
    """Rows for the points as run_ops and collectives.run write them (fake timings)."""
    for p in points:
        if len(p.stream) == 2:
            samples.add_op(p.stream[0], p.stream[1], p.shape, us, None if p.stream[0] == "adam"
                           else 2 * us, {"impl": "fake"})
        else:
            kind, n, g = p.stream
            samples.add_nccl(kind, n, g, grid.coll_shape(kind, p.shape[2], n * g), us)


def read(path):
    with open(path) as f:
        return f.read().splitlines()


def rows_of_lines(lines):
    return [ln for ln in lines if not ln.startswith("#")][1:]


def rows_of(path):
    return rows_of_lines(read(path))


class Resume(TempDirCase):
    def first_run(self, argv, n, info=INFO, comments=True):
        """The plan of argv and its first n points measured, as a run cut short leaves them."""
        plan = probe.build_plan(args_of(*argv))
        s = csvout.SampleSet(self.out, info, comments=comments, durable=False)
        write_rows(s, plan[:n])
        return plan

    def resumed(self, argv, info=INFO):
        """(args, samples, the points left, log) of a resumed run of argv."""
        a = args_of(*argv, "--resume")
        plan = probe.build_plan(a)
        s = csvout.SampleSet(self.out, info, comments=not a.no_comments, durable=False)
        log = io.StringIO()
        return a, s, probe.resume(a, plan, s, info, log), log

    def check_resumed_run(self, argv, folder, n):
        plan = self.first_run(argv, n)
        before = {f: read(os.path.join(folder, f)) for f in os.listdir(folder)}
        _, s, todo, log = self.resumed(argv)
        # exactly the points not yet measured, in the plan's order
        self.assertEqual(todo, plan[n:])
        self.assertIn("%d of the %d points already in %d files" % (n, len(plan), len(before)),
                      log.getvalue())
        # the loaded files are rewritten at once: their lines kept, a `# resumed:` line added
        for f, lines in before.items():
            now = read(os.path.join(folder, f))
            comments = [ln for ln in lines if ln.startswith("#")]
            self.assertEqual(now[:len(comments)], comments)
            self.assertRegex(now[len(comments)], r"^# resumed: \d{4}-\d\d-\d\dT\S+ python3 ")
            self.assertEqual(now[len(comments) + 1:], lines[len(comments):])
        # the fake measurer: only the rest is measured, appended to the same files
        seen = []
        st = order.run(todo, None, lambda p: seen.append(p) or write_rows(s, [p]) or 1)
        self.assertEqual((st.measured, seen), (len(plan) - n, plan[n:]))
        for f in os.listdir(folder):
            rows = rows_of(os.path.join(folder, f))
            self.assertEqual(len(rows), len(set(rows)), f)   # no point twice
            if f in before:
                self.assertEqual(rows[:len(rows_of_lines(before[f]))], rows_of_lines(before[f]))
            created = read(os.path.join(folder, f))
            self.assertEqual(sum(ln.startswith("# resumed: ") for ln in created), 1, f)
        total = sum(len(rows_of(os.path.join(folder, f))) for f in os.listdir(folder))
        self.assertEqual(total, len(plan))
        # resumed again: nothing left, a second `# resumed:` line, the first kept
        _, _, todo, _ = self.resumed(argv)
        self.assertEqual(todo, [])
        for f in os.listdir(folder):
            self.assertEqual(sum(ln.startswith("# resumed: ")
                                 for ln in read(os.path.join(folder, f))), 2, f)
        return plan

    def test_ops_measures_only_what_is_left(self):
        plan = self.check_resumed_run(["ops", "--out", self.out] + OPS,
                                      os.path.join(self.out, "operator"), 7)
        self.assertEqual({p.stream[0] for p in plan[:7]}, {"adam", "gelu", "add"})

    def test_files_created_by_a_resumed_run_are_marked(self):
        folder = os.path.join(self.out, "operator")
        self.check_resumed_run(["ops", "--out", self.out] + OPS, folder, 2)
        add = read(csvout.op_path(self.out, "add", "fp16"))   # its first row came after
        self.assertIn("# gpu: %s" % GPU, add)
        self.assertEqual(add.index("# impl: fake") + 1,
                         add.index([ln for ln in add if ln.startswith("# resumed: ")][0]))

    def test_collectives_keys_are_the_rows_shapes(self):
        # allgather's shape is the per-rank input (bytes / 2 / ranks): the key is the row's
        plan = self.check_resumed_run(["collectives", "--out", self.out] + COLL,
                                      os.path.join(self.out, "nccl"), 11)
        self.assertIn(("allgather", 2, 4), {p.stream for p in plan[:11]})

    def test_keys_match_integers_however_written(self):
        argv = ["ops", "--out", self.out, "--ops", "gelu", "--dtype", "fp16"]
        plan = probe.build_plan(args_of(*argv))
        path = csvout.op_path(self.out, "gelu", "fp16")
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as f:
            f.write("# gpu: %s\nelements,F_dur(us),B_dur(us)\n%d.0,1.5,2\n %d , 1e1 , 3.25\n"
                    % (GPU, plan[0].shape[0], plan[1].shape[0]))
        _, _, todo, _ = self.resumed(argv)
        self.assertEqual(todo, plan[2:])
        self.assertEqual(rows_of(path)[:2], ["%d.0,1.5,2" % plan[0].shape[0],
                                             "%d,1e1,3.25" % plan[1].shape[0]])

    def test_other_files_left_alone(self):
        self.first_run(["ops", "--out", self.out] + OPS, 6)
        gelu = csvout.op_path(self.out, "gelu", "fp16")
        before = read(gelu)
        self.resumed(["ops", "--out", self.out, "--ops", "adam", "--dtype", "fp16"])
        self.assertEqual(read(gelu), before)
        self.assertTrue(any(ln.startswith("# resumed: ")
                            for ln in read(csvout.op_path(self.out, "adam", "fp16"))))

    def test_empty_or_missing_folder_runs_normally(self):
        self.out = os.path.join(self.out, "missing")
        argv = ["ops", "--out", self.out] + OPS
        a, s, todo, log = self.resumed(argv)
        self.assertEqual(todo, probe.build_plan(a))
        self.assertEqual(log.getvalue(), "")
        write_rows(s, todo[:3])
        for path in s.paths():
            self.assertFalse(any(ln.startswith("# resumed") for ln in read(path)))
        probe.check_out(a)   # --resume: no refusal of a folder with samples

    def test_no_comments(self):
        argv = ["ops", "--out", self.out] + OPS + ["--no-comments"]
        self.first_run(argv, 5, comments=False)
        _, s, todo, log = self.resumed(argv)
        self.assertIn("has no `# gpu` line: its GPU is not checked", log.getvalue())
        write_rows(s, todo[:3])
        for path in s.paths():
            self.assertFalse(any(ln.startswith("#") for ln in read(path)), path)

    def test_another_gpu_refused(self):
        argv = ["ops", "--out", self.out] + OPS
        self.first_run(argv, 5)
        adam = csvout.op_path(self.out, "adam", "fp16")
        before = read(adam)
        with self.assertRaises(SystemExit) as e:
            self.resumed(argv, dict(INFO, gpu="NVIDIA A100-SXM4-80GB"))
        msg = str(e.exception.code)
        for want in (adam, GPU, "NVIDIA A100-SXM4-80GB", "mix"):
            self.assertIn(want, msg)
        self.assertEqual(read(adam), before, "nothing written")
        # the same GPU, whitespace aside, with another torch: a note, no refusal
        _, _, todo, log = self.resumed(argv, dict(INFO, gpu="NVIDIA  H100 80GB HBM3 ",
                                                  torch="2.5.1"))
        self.assertEqual(len(todo), len(probe.build_plan(args_of(*argv))) - 5)
        self.assertIn("has torch `2.4.0`, this run `2.5.1`", log.getvalue())

    def test_collectives_gpu_checked(self):
        argv = ["collectives", "--out", self.out] + COLL
        self.first_run(argv, 4)
        with self.assertRaises(SystemExit) as e:
            self.resumed(argv, dict(INFO, gpu="AMD Instinct MI300X"))
        self.assertIn("AMD Instinct MI300X", str(e.exception.code))


class Malformed(TempDirCase):
    def setUp(self):
        super().setUp()
        self.path = csvout.op_path(self.out, "linear", "bf16")
        os.makedirs(os.path.dirname(self.path))

    def refused(self, text, line, says):
        with open(self.path, "w") as f:
            f.write(text)
        with self.assertRaises(csvout.SampleFileError) as e:
            csvout.read(self.path, csvout.op_columns("linear"), 4)
        self.assertIn("%s:%d: " % (self.path, line), str(e.exception))
        self.assertIn(says, str(e.exception))
        rc, _, err = run_main("ops", "--out", self.out, "--ops", "linear", "--dtype", "bf16",
                              "--resume", "--dry-run")   # the same loading as a run's
        self.assertEqual(rc, 1, err)
        self.assertIn("probe ops: --resume: %s:%d: " % (self.path, line), err)

    def test_errors_name_the_file_and_line(self):
        head = "# gpu: x\n\nm,k,n,bias,F_dur(us),B_dur(us)\n128,512,512,0,11.2,19.8\n"
        self.refused("# gpu: x\nm,k,n,F_dur(us),B_dur(us)\n", 2, "header `m,k,n,F_dur(us)")
        self.refused("params,tensors,F_dur(us)\n1,2,3\n", 1, "expected `m,k,n,bias,F_dur(us),")
        self.refused(head + "128,512,512,0,fast,19.8\n", 5, "column `F_dur(us)`: `fast`")
        self.refused(head + "128,512,512,0,11.2,nan\n", 5, "column `B_dur(us)`: `nan`")
        self.refused(head + "128,512,512,0,11.2,0\n", 5, "not a positive number")
        self.refused(head + "128,512,512.5,0,11.2,3\n", 5, "column `n`: `512.5` is not an integer")
        self.refused(head + "128,x,512,0,11.2,3\n", 5, "column `k`: `x`")
        self.refused(head + "128,512,512,0,11.2\n", 5, "5 values, the header has 6")
        self.refused("", 1, "an empty file")
        self.refused("# gpu: x\n# date: y\n", 3, "only comments")

    def test_read_keeps_comments_and_rows(self):
        with open(self.path, "w") as f:
            f.write("# probe: p\n# gpu: G  1\nm,k,n,bias,F_dur(us),B_dur(us)\n"
                    "128,512,512,0,11.2,19.8\n1024,1024,1024,1,1.23457e+06,20\n")
        f, keys = csvout.read(self.path, csvout.op_columns("linear"), 4)
        self.assertEqual(f.comments, ["# probe: p", "# gpu: G  1"])
        self.assertEqual(csvout.provenance(f.comments), {"probe": "p", "gpu": "G 1"})
        self.assertEqual(keys, {(128, 512, 512, 0), (1024, 1024, 1024, 1)})
        f.add((64, 64, 64, 0, 1.5, 2.5), save=False)
        self.assertEqual(f.text().splitlines()[2:], [
            "m,k,n,bias,F_dur(us),B_dur(us)", "128,512,512,0,11.2,19.8",
            "1024,1024,1024,1,1.23457e+06,20", "64,64,64,0,1.5,2.5"])


class CommandLine(unittest.TestCase):
    def test_resume_and_force_exclusive(self):
        rc, _, err = run_main("ops", "--out", "d", "--resume", "--force")
        self.assertEqual(rc, 2)
        self.assertIn("not allowed with argument", err)
        rc, _, err = run_main("collectives", "--out", "d", "--layouts", "1x8", "--force",
                              "--resume")
        self.assertEqual(rc, 2)
        self.assertIn("not allowed with argument", err)

    def test_help(self):
        for argv in (["ops", "--help"], ["collectives", "--layouts", "1x8", "--help"]):
            _, out, _ = run_main(*argv)
            self.assertIn("--resume", out)

    def test_dry_run_leaves_out_what_is_measured(self):
        with tempfile.TemporaryDirectory() as d:
            argv = ["ops", "--out", d, "--dry-run", "--minutes", "0"] + OPS
            _, fresh, _ = run_main(*argv)
            _, same, _ = run_main(*argv + ["--resume"])   # nothing there yet: the same plan
            self.assertEqual(same, fresh)
            plan = probe.build_plan(args_of(*argv))
            write_rows(csvout.SampleSet(d, INFO, durable=False), plan[:9])
            files = sorted(os.listdir(os.path.join(d, "operator")))
            before = [read(os.path.join(d, "operator", f)) for f in files]
            rc, out, _ = run_main(*argv + ["--resume"])
            self.assertEqual(rc, 0)
            lines = out.splitlines()
            self.assertIn("probe ops: %d points" % (len(plan) - 9), lines[0])
            self.assertEqual(lines[1], "resume: 9 points already measured in 3 files of %s, "
                                       "left out of the plan" % os.path.join(d, "operator"))
            rows = lines[4:]
            self.assertEqual(len(rows), len(plan) - 9)
            for p, row in zip(plan[9:], rows):
                self.assertIn(probe._shape_text(p), row)
            self.assertEqual([read(os.path.join(d, "operator", f)) for f in files], before,
                             "a dry run writes nothing")


if __name__ == "__main__":
    unittest.main()
