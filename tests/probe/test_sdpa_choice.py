"""hw/probe/ops.py: the attention backend PyTorch picks under --attention auto is named in the
impl line (sdpa_choice, by torch._fused_sdp_choice), and a file whose rows ran more than one
implementation says which ran how many (csvout.SampleFile's `# impl of N rows:` lines).
Pure Python: fake torch modules stand in for the private function and the enum."""
import enum
import os
import types
import unittest

from _paths import TempDirCase  # (importing _paths puts hw/probe on sys.path)

import csvout
import ops


class SDPBackend(enum.IntEnum):   # the values of torch's SDPBackend
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3


def fake_torch(choose, where="nn"):
    """A torch with _fused_sdp_choice = choose and SDPBackend in torch.nn.attention (where
    "nn", torch >= 2.3) or torch.backends.cuda ("backends", torch 2.0-2.2)."""
    nn = types.SimpleNamespace(attention=types.SimpleNamespace(SDPBackend=SDPBackend)) \
        if where == "nn" else types.SimpleNamespace()
    cuda = types.SimpleNamespace(SDPBackend=SDPBackend) if where == "backends" else \
        types.SimpleNamespace()
    t = types.SimpleNamespace(nn=nn, backends=types.SimpleNamespace(cuda=cuda))
    if choose is not None:
        t._fused_sdp_choice = choose
    return t


class Choice(unittest.TestCase):
    def test_names_the_backend(self):
        calls = []

        def choose(q, k, v, mask, dropout, causal, **kw):
            calls.append((mask, dropout, causal, kw))
            return 1 if not kw else 2   # flash for MHA, efficient for the GQA call

        t = fake_torch(choose)
        self.assertEqual(ops.sdpa_choice(t, "q", "k", "v", True, False), "FLASH_ATTENTION")
        self.assertEqual(ops.sdpa_choice(t, "q", "k", "v", False, True), "EFFICIENT_ATTENTION")
        self.assertEqual(calls, [(None, 0.0, True, {}), (None, 0.0, False, {"enable_gqa": True})])
        self.assertEqual(ops.sdpa_choice(fake_torch(lambda *a, **k: 3, "backends"),
                                         "q", "k", "v", True, False), "CUDNN_ATTENTION")

    def test_cannot_say(self):
        self.assertIsNone(ops.sdpa_choice(fake_torch(None), "q", "k", "v", True, False))

        def broken(*a, **k):
            raise RuntimeError("no such kernel on this device")

        self.assertIsNone(ops.sdpa_choice(fake_torch(broken), "q", "k", "v", True, False))
        # an index the enum does not know is shown as a number, not dropped
        self.assertEqual(ops.sdpa_choice(fake_torch(lambda *a, **k: 9), "q", "k", "v", True,
                                         False), "backend 9")


class ImplLines(TempDirCase):
    def lines(self, op="flash_attention", dt="bf16"):
        with open(csvout.op_path(self.out, op, dt)) as f:
            return f.read().splitlines()

    def test_one_impl_keeps_the_header_line_alone(self):
        s = csvout.SampleSet(self.out, {"gpu": "G"})
        for l in (128, 256):
            s.add_op("flash_attention", "bf16", (1, l, 4, 4, 64), 10.0, 20.0, {"impl": "sdpa: FLASH"})
        lines = self.lines()
        self.assertIn("# impl: sdpa: FLASH", lines)
        self.assertFalse([ln for ln in lines if ln.startswith("# impl of")])

    def test_rows_of_another_impl_are_counted(self):
        s = csvout.SampleSet(self.out, {"gpu": "G"})
        s.add_op("flash_attention", "bf16", (1, 128, 4, 4, 64), 10.0, 20.0, {"impl": "sdpa: FLASH"})
        s.add_op("flash_attention", "bf16", (1, 128, 4, 2, 64), 11.0, 21.0, {"impl": "sdpa: EFFICIENT"})
        s.add_op("flash_attention", "bf16", (1, 256, 4, 4, 64), 12.0, 22.0, {"impl": "sdpa: FLASH"})
        lines = self.lines()
        header = lines.index("b,l,heads,kv_heads,head_dim,F_dur(us),B_dur(us)")
        self.assertEqual(lines[header - 2:header], ["# impl of 2 rows: sdpa: FLASH",
                                                    "# impl of 1 rows: sdpa: EFFICIENT"])
        self.assertEqual(lines[0], "# gpu: G")
        self.assertEqual(len(lines) - header - 1, 3)

    def test_resumed_file_counts_this_runs_rows(self):
        s = csvout.SampleSet(self.out, {"gpu": "G"})
        s.add_op("flash_attention", "bf16", (1, 128, 4, 4, 64), 10.0, 20.0, {"impl": "old"})
        r = csvout.SampleSet(self.out, {"gpu": "G"})
        self.assertEqual(r.load_op("flash_attention", "bf16"), {(1, 128, 4, 4, 64)})
        r.mark_resumed("D", "C")
        r.add_op("flash_attention", "bf16", (1, 256, 4, 4, 64), 10.0, 20.0, {"impl": "old"})
        self.assertFalse([ln for ln in self.lines() if ln.startswith("# impl of")])
        r.add_op("flash_attention", "bf16", (1, 512, 4, 4, 64), 10.0, 20.0, {"impl": "new"})
        lines = self.lines()
        self.assertEqual(lines[lines.index("# resumed: D C") + 1:][:2],
                         ["# impl of 1 rows: old", "# impl of 1 rows: new"])
        self.assertEqual(lines.count("# impl: old"), 1)

    def test_no_comments_no_lines(self):
        s = csvout.SampleSet(self.out, {"gpu": "G"}, comments=False)
        s.add_op("flash_attention", "bf16", (1, 128, 4, 4, 64), 10.0, 20.0, {"impl": "a"})
        s.add_op("flash_attention", "bf16", (1, 256, 4, 4, 64), 10.0, 20.0, {"impl": "b"})
        self.assertFalse([ln for ln in self.lines() if ln.startswith("#")])
        self.assertTrue(os.path.isfile(csvout.op_path(self.out, "flash_attention", "bf16")))


if __name__ == "__main__":
    unittest.main()
