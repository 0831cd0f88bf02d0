"""hw/probe/csvout.py: file names, comment lines, columns exactly as runtime/fit/samples.c and
runtime/fit/fit_collectives.c read them, and atomic rewrites."""
import os
import re
import unittest

from _paths import ROOT, TempDirCase

import csvout
import grid


def read(path):
    with open(path) as f:
        return f.read().splitlines()


class FitterColumns(unittest.TestCase):
    """The columns the fitter's C source names, against the probe's."""

    def test_kernel_form_columns_match_samples_c(self):
        with open(os.path.join(ROOT, "runtime", "fit", "samples.c")) as f:
            src = f.read()
        forms = {m.group(1): tuple(re.findall(r'"([^"]+)"', m.group(2)))
                 for m in re.finditer(r'\{"(\w+)", RT_OP_\w+, \{([^}]*)\}, \d+\}', src)}
        self.assertEqual(forms, grid.KERNEL_COLUMNS)
        for col in ('"F_dur(us)"', '"B_dur(us)"'):
            self.assertIn(col, src)

    def test_nccl_columns_match_fit_collectives_c(self):
        with open(os.path.join(ROOT, "runtime", "fit", "fit_collectives.c")) as f:
            src = f.read()
        self.assertIn('"shape"', src)
        self.assertIn('"dur(us)"', src)
        # KIND[_large]_fp16_NODES_GPUS.csv (fit_parse_name)
        self.assertIn('strstr(name, "_fp16_")', src)
        self.assertIn('strcmp(q, ".csv")', src)
        self.assertEqual(csvout.NCCL_COLUMNS, ("shape", "nodes", "GPUsPerNode", "dur(us)"))


class Files(TempDirCase):
    def test_paths(self):
        self.assertEqual(csvout.op_path("D", "linear", "bf16"),
                         os.path.join("D", "operator", "linear_bf16.csv"))
        self.assertEqual(csvout.nccl_path("D", "allgather", 2, 4),
                         os.path.join("D", "nccl", "allgather_fp16_2_4.csv"))

    def test_operator_file(self):
        info = {"command": "python3 probe.py ops\n--out x", "gpu": "NVIDIA H100 80GB HBM3",
                "date": "2025-01-01T00:00:00+00:00", "probe": "p", "driver": None, "zzz": 1}
        s = csvout.SampleSet(self.out, info)
        s.add_op("linear", "fp16", (8192, 4096, 12288, 1), 1803.25, 3702.9, {"impl": "F.linear"})
        s.add_op("linear", "fp16", (512, 512, 512, 0), 12.0, 20.5)
        s.add_op("adam", "fp16", (1048576, 12), 55.5)
        lines = read(csvout.op_path(self.out, "linear", "fp16"))
        comments = [ln for ln in lines if ln.startswith("#")]
        self.assertEqual(lines[:len(comments)], comments, "comment lines come first")
        self.assertTrue(all(ln.startswith("# ") for ln in comments))
        self.assertEqual(comments[:3], ["# probe: p", "# gpu: NVIDIA H100 80GB HBM3",
                                        "# date: 2025-01-01T00:00:00+00:00"])
        self.assertIn("# command: python3 probe.py ops --out x", comments)   # one line
        self.assertIn("# impl: F.linear", comments)
        self.assertFalse(any(ln.startswith("# driver") for ln in comments))   # None: left out
        body = lines[len(comments):]
        self.assertEqual(body, ["m,k,n,bias,F_dur(us),B_dur(us)",
                                "8192,4096,12288,1,1803.25,3702.9",
                                "512,512,512,0,12,20.5"])
        adam = read(csvout.op_path(self.out, "adam", "fp16"))
        self.assertEqual([ln for ln in adam if not ln.startswith("#")],
                         ["params,tensors,F_dur(us)", "1048576,12,55.5"])
        self.assertEqual(s.paths(), sorted([csvout.op_path(self.out, "linear", "fp16"),
                                            csvout.op_path(self.out, "adam", "fp16")]))

    def test_every_operator_header(self):
        s = csvout.SampleSet(self.out, comments=False)
        for op, cols in grid.KERNEL_COLUMNS.items():
            s.add_op(op, "bf16", tuple(range(1, len(cols) + 1)), 1.5, 2.5)
            lines = read(csvout.op_path(self.out, op, "bf16"))
            want = list(cols) + ["F_dur(us)"] + ([] if op == "adam" else ["B_dur(us)"])
            self.assertEqual(lines[0].split(","), want)
            self.assertEqual(len(lines[1].split(",")), len(want))

    def test_nccl_file(self):
        s = csvout.SampleSet(self.out, {"gpu": "x"})
        s.add_nccl("allreduce", 2, 4, 134217728, 110918.6)
        lines = read(csvout.nccl_path(self.out, "allreduce", 2, 4))
        self.assertEqual(lines[-2:], ["shape,nodes,GPUsPerNode,dur(us)", "134217728,2,4,110919"])

    def test_rewritten_atomically_after_each_row(self):
        s = csvout.SampleSet(self.out, comments=False)
        path = csvout.op_path(self.out, "gelu", "fp16")
        for i in range(1, 4):
            s.add_op("gelu", "fp16", (1024 * i,), 3.0, 4.0)
            self.assertEqual(len(read(path)), 1 + i)
            self.assertEqual(os.listdir(os.path.dirname(path)), ["gelu_fp16.csv"])   # no temp left

    def test_row_length_checked(self):
        f = csvout.SampleFile(os.path.join(self.out, "x.csv"), ("a", "b"))
        with self.assertRaises(ValueError):
            f.add((1,))

    def test_numbers(self):
        self.assertEqual(csvout.fmt_number(5), "5")
        self.assertEqual(csvout.fmt_number(5.0), "5")
        self.assertEqual(csvout.fmt_number(12.345678), "12.3457")
        self.assertEqual(csvout.fmt_number(0.0042), "0.0042")


if __name__ == "__main__":
    unittest.main()
