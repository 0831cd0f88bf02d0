"""hw/probe/grid.py: the model table agrees with stdlib/models, the grid covers every model's
kernel calls, the shapes are valid, and the collective sizes and shapes follow the paper's
files and llmp fit."""
import glob
import math
import os
import re
import unittest

from _paths import ROOT

import grid

# The fields of a model block, as written in stdlib/models/*.llmp.
FIELDS = ("hidden", "heads", "kv_heads", "ffn", "moe_ffn", "vocab", "seq", "experts", "top_k")


def stdlib_models():
    """{name: {field: value}} from the `model NAME extends BASE { field = N ... }` blocks that
    set `layers` (the others are a family's templates, which concrete models extend)."""
    out = {}
    for path in glob.glob(os.path.join(ROOT, "stdlib", "models", "*.llmp")):
        with open(path) as f:
            text = f.read()
        for m in re.finditer(r"^model (\w+) extends (\w+) \{(.*?)^\}", text, re.S | re.M):
            fields = {"base": m.group(2)}
            for f in re.finditer(r"^\s*(\w+)\s*=\s*(\d+)\b", m.group(3), re.M):
                fields[f.group(1)] = int(f.group(2))
            if "layers" in fields:
                out[m.group(1)] = fields
    return out


class ModelTable(unittest.TestCase):
    def test_table_matches_stdlib(self):
        models = stdlib_models()
        unprobed = {n for n, f in models.items()
                    if f["base"] in grid.UNPROBED_FAMILIES or n in grid.UNPROBED_MODELS}
        self.assertGreaterEqual(len(unprobed), 13)
        models = {n: f for n, f in models.items() if n not in unprobed}
        self.assertGreaterEqual(len(models), 19)
        table = {m.name: m for m in grid.MODELS}
        self.assertEqual(sorted(table), sorted(models),
                         "grid.MODELS lists exactly the models of stdlib/models")
        for name, f in models.items():
            m = table[name]
            with self.subTest(model=name):
                self.assertEqual(m.hidden, f["hidden"])
                self.assertEqual(m.heads, f["heads"])
                self.assertEqual(m.kv_heads, f.get("kv_heads", f["heads"]))
                ffn = f.get("moe_ffn", f.get("ffn", 4 * f["hidden"]))   # gpt: ffn = 4 hidden
                self.assertEqual(m.ffn, ffn)
                self.assertEqual(m.vocab, f["vocab"])
                self.assertEqual(m.seq, f["seq"])
                self.assertEqual(m.experts, f.get("experts", 0 if f["base"] != "mixtral" else 8))
                self.assertEqual(m.family, f["base"])

    def test_padded_vocab(self):
        self.assertEqual(grid.padded_vocab(50257, 1), 50304)
        self.assertEqual(grid.padded_vocab(50257, 8), 51200)
        self.assertEqual(grid.padded_vocab(32000, 4), 32256)


class OperatorGrid(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.grid = grid.op_grid(grid.ALL_OPS)

    def test_every_model_call_is_in_the_grid(self):
        for m in grid.MODELS:
            for tp in grid.TP_DEGREES:
                for mb in grid.MICRO_BATCHES:
                    for op, shape in grid.model_shapes(m, tp, mb):
                        self.assertIn(shape, self.grid[op], (m.name, tp, mb, op))
                        self.assertTrue(self.grid[op][shape])   # marked a model shape

    def test_every_operator_has_points(self):
        for op in grid.ALL_OPS:
            self.assertGreater(len(self.grid[op]), 10, op)

    def test_shapes_are_valid_kernel_arguments(self):
        for op, shapes in self.grid.items():
            cols = grid.KERNEL_COLUMNS[op]
            for s in shapes:
                self.assertEqual(len(s), len(cols), op)
                for c, v in zip(cols, s):
                    self.assertIsInstance(v, int, (op, s))
                    self.assertGreaterEqual(v, 0 if c == "bias" else 1, (op, s))
                if op in ("masked_softmax", "masked_fill"):
                    self.assertEqual(s[0] % s[1], 0, "a causal mask is L x L: %s" % (s,))
                if op.startswith("flash"):
                    self.assertEqual(s[2] % s[3], 0, "query heads by kv heads: %s" % (s,))
                if op == "rope":
                    self.assertEqual(s[2] % 2, 0, s)

    def test_known_shapes(self):
        # Llama 2 70B, tp 8, micro-batch 1: QKV (64 + 2 * 8) * 128 / 8 outputs, no bias
        l70 = next(m for m in grid.MODELS if m.name == "llama2_70b")
        calls = grid.model_shapes(l70, 8, 1)
        self.assertIn(("linear", (4096, 8192, 1280, 0)), calls)
        self.assertIn(("flash_attention", (1, 4096, 8, 1, 128)), calls)
        self.assertIn(("linear", (4096, 8192, 2 * 28672 // 8, 0)), calls)   # gate and up
        self.assertIn(("swiglu", (4096 * 28672 // 8,)), calls)
        # GPT-3 175B, tp 4, micro-batch 2: unfused attention, padded vocabulary
        g3 = next(m for m in grid.MODELS if m.name == "gpt3_175b")
        calls = grid.model_shapes(g3, 4, 2)
        self.assertIn(("bmm", (2 * 24, 2048, 128, 2048)), calls)
        self.assertIn(("masked_softmax", (2 * 24 * 2048, 2048)), calls)
        self.assertIn(("linear", (4096, 12288, 50688 // 4, 0)), calls)
        self.assertIn(("cross_entropy", (4096, 50688 // 4)), calls)
        # GPT-NeoX-20B: rotary on a quarter of the 96 head dimensions
        nx = next(m for m in grid.MODELS if m.name == "gpt_neox_20b")
        self.assertIn(("rope", (2048, 16, 24)), grid.model_shapes(nx, 4, 1))

    def test_sweeps_span_sizes(self):
        for op in ("gelu", "swiglu", "add"):
            el = [s[0] for s in self.grid[op]]
            self.assertLessEqual(min(el), 1024)
            self.assertGreaterEqual(max(el), 2 ** 31)
        small = [s for s in self.grid["linear"] if s[0] * s[1] * s[2] <= 128 * 512 * 512]
        self.assertTrue(small)
        self.assertTrue(any(s[2] % 128 for s in self.grid["linear"]))

    def test_columns_and_forward_only(self):
        self.assertEqual(grid.KERNEL_COLUMNS["linear"], ("m", "k", "n", "bias"))
        self.assertEqual(grid.FORWARD_ONLY, frozenset({"adam"}))
        self.assertEqual(set(grid.DEFAULT_OPS) | {"flash_attention_full"}, set(grid.ALL_OPS))


class Estimates(unittest.TestCase):
    def test_costs_grow_with_size(self):
        a = grid.op_cost("linear", (1024, 1024, 1024, 0))
        b = grid.op_cost("linear", (8192, 8192, 8192, 0))
        self.assertLess(a[0], b[0])
        self.assertAlmostEqual(b[1] / b[0], 2, delta=0.1)
        self.assertEqual(grid.op_cost("adam", (10 ** 6,))[1], 0.0)
        for op in grid.ALL_OPS:
            s = next(iter(grid.op_grid((op,))[op]))
            f, b = grid.op_cost(op, s)
            self.assertGreater(f, 0, op)
            self.assertGreater(grid.op_point_seconds(op, s, "fp16", 5, 20), f)

    def test_fewer_repeats_for_long_calls(self):
        self.assertEqual(grid.op_reps(1e-3, 5, 20), (5, 20))
        self.assertEqual(grid.op_reps(0.1, 5, 20), (2, 3))
        self.assertEqual(grid.op_reps(0.02, 5, 20), (2, 12))


class Collectives(unittest.TestCase):
    def test_sizes(self):
        s = grid.coll_sizes(1024, 4 * 1024 ** 3)
        self.assertEqual(s, [2 ** e for e in range(10, 33)])
        fine = grid.coll_sizes(1024, 4 * 1024 ** 3, 2)
        self.assertEqual(len(fine), 45)
        self.assertTrue(set(s) <= set(fine))
        self.assertTrue(all(b % 2 == 0 for b in fine))
        self.assertEqual(grid.coll_sizes(3000, 5000), [4096])

    def test_parse_size(self):
        for text, v in (("1K", 1024), ("4G", 4 * 1024 ** 3), ("64MiB", 64 * 1024 ** 2),
                        ("512", 512), ("2kb", 2048), ("1.5M", 1572864)):
            self.assertEqual(grid.parse_size(text), v, text)
        for bad in ("", "x", "0", "-1K", "1Q", "inf"):
            with self.assertRaises(ValueError, msg=bad):
                grid.parse_size(bad)

    def test_layouts(self):
        self.assertEqual(grid.parse_layouts("1x8, 2x8,1x8"), [(1, 8), (2, 8)])
        for bad in ("1x1", "2", "ax8", "2x8x1", "0x4", ""):
            with self.assertRaises(ValueError, msg=bad):
                grid.parse_layouts(bad)
        self.assertEqual(grid.p2p_layouts([(1, 8)]), [(1, 2)])
        self.assertEqual(grid.p2p_layouts([(4, 1)]), [(2, 1)])
        self.assertEqual(grid.p2p_layouts([(1, 4), (2, 4)]), [(1, 2), (2, 1)])

    def test_shape_as_the_paper_and_the_fitter(self):
        # all-reduce: the buffer; all-gather: the per-rank input, which llmp fit multiplies by
        # the ranks (runtime/fit/fit_collectives.c rt_nccl_kernel_bytes); the paper's
        # allgather_large_fp16_2_4.csv starts at shape 134217728 for a 2 GiB gathered output
        self.assertEqual(grid.coll_shape("allreduce", 2 ** 28, 8), 2 ** 27)
        self.assertEqual(grid.coll_shape("allgather", 2 ** 31, 8), 134217728)
        self.assertEqual(grid.coll_shape("reducescatter", 2 ** 20, 8), 2 ** 19)
        self.assertEqual(grid.coll_shape("reducescatter", 1000, 3), 498)
        self.assertEqual(grid.coll_shape("p2p", 4096, 2), 2048)
        self.assertIsNone(grid.coll_shape("allgather", 16, 16))
        for kind in grid.COLLECTIVES:
            for ranks in (2, 8, 16):
                sh = grid.coll_shape(kind, 2 ** 24, ranks)
                self.assertEqual(grid.coll_kernel_bytes(kind, sh, ranks), 2 ** 24, kind)

    def test_priority(self):
        knee = grid.coll_priority("allreduce", 2 ** 20, 1, 8)
        self.assertGreater(knee, grid.coll_priority("allreduce", 2 ** 32, 1, 8))
        self.assertGreater(grid.coll_priority("allreduce", 2 ** 12, 1, 8),
                           grid.coll_priority("allreduce", 2 ** 32, 1, 8))
        self.assertGreater(grid.coll_priority("allreduce", 2 ** 20, 2, 8), knee)
        self.assertGreater(grid.coll_priority("allreduce", 2 ** 20, 2, 8),
                           grid.coll_priority("allreduce", 2 ** 20, 2, 1))
        self.assertGreater(grid.coll_call_seconds("allreduce", 2 ** 30, 2, 8),
                           grid.coll_call_seconds("allreduce", 2 ** 30, 1, 8))
        self.assertEqual(grid.coll_iters(1e-5, 20), 20)
        self.assertEqual(grid.coll_iters(0.5, 20), 2)
        self.assertTrue(math.isfinite(grid.coll_point_seconds("p2p", 2 ** 32, 2, 1, 5, 20, 5)))


if __name__ == "__main__":
    unittest.main()
