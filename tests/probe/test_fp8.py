"""hw/probe: fp8, the linear's GEMMs as Transformer Engine runs them (ops._fp8_linear), with
a fake torch that checks what torch._scaled_mm requires (its first operand row-major, its
second column-major, fp8 inputs of which at most one e5m2, dimensions multiples of 16) and
records the calls; the grid (fp8 for the linear only, shapes that divide by 16) and the
command line.  Pure Python: no torch, no GPU."""
import io
import types
import unittest

import _paths  # noqa: F401 - puts hw/probe on sys.path

import grid
import ops
import order


class FakeTensor:
    """Shape, dtype and whether it is a transposed view of a contiguous tensor."""

    def __init__(self, torch, shape, dtype, transposed=False):
        self.torch, self.shape, self.dtype, self.transposed = torch, tuple(shape), dtype, transposed

    def __mul__(self, scale):
        return self

    def to(self, dtype):
        return FakeTensor(self.torch, self.shape, dtype, self.transposed)

    def t(self):
        return FakeTensor(self.torch, self.shape[::-1], self.dtype, not self.transposed)

    def contiguous(self):
        return FakeTensor(self.torch, self.shape, self.dtype, False)

    def sum(self, dim):
        self.torch.calls.append(("sum", self.shape, dim))
        return FakeTensor(self.torch, self.shape[1:], self.dtype)


def fake_torch(tuple_result=False, version="2.5.0"):
    t = types.SimpleNamespace(__version__=version, calls=[])
    t.bfloat16, t.float32 = "bfloat16", "float32"
    t.float8_e4m3fn, t.float8_e5m2 = "e4m3", "e5m2"
    t.randn = lambda shape, dtype, device: FakeTensor(t, shape, dtype)
    t.ones = lambda shape, dtype, device: FakeTensor(t, shape, dtype)

    def scaled_mm(a, b, scale_a, scale_b, out_dtype, bias=None):
        assert a.dtype in ("e4m3", "e5m2") and b.dtype in ("e4m3", "e5m2"), (a.dtype, b.dtype)
        assert not (a.dtype == "e5m2" and b.dtype == "e5m2"), "e5m2 x e5m2"
        assert not a.transposed, "first operand must be row-major"
        assert b.transposed, "second operand must be column-major"
        assert a.shape[1] == b.shape[0], (a.shape, b.shape)
        assert all(d % 16 == 0 for d in a.shape + b.shape), (a.shape, b.shape)
        assert scale_a.dtype == "float32" and scale_b.dtype == "float32"
        assert bias is None or bias.shape == (b.shape[1],)
        t.calls.append(("mm", a.shape, b.shape, a.dtype, b.dtype, out_dtype, bias is not None))
        out = FakeTensor(t, (a.shape[0], b.shape[1]), out_dtype)
        return (out, None) if tuple_result else out

    t._scaled_mm = scaled_mm
    return t


CUDA = types.SimpleNamespace(type="cuda")


class Fp8Linear(unittest.TestCase):
    def test_gemms_as_transformer_engine_runs_them(self):
        for bias in (0, 1):
            for tuple_result in (False, True):
                t = fake_torch(tuple_result)
                case = ops.build(t, "linear", (4096, 1024, 3072, bias), "bfloat16", CUDA, fp8=True)
                out = case.fwd()
                self.assertEqual((out.shape, out.dtype), ((4096, 3072), "bfloat16"))
                self.assertEqual(t.calls, [("mm", (4096, 1024), (1024, 3072), "e4m3", "e4m3", "bfloat16", bool(bias))])
                del t.calls[:]
                case.bwd()
                want = [("mm", (4096, 3072), (3072, 1024), "e5m2", "e4m3", "bfloat16", False),   # dX
                        ("mm", (3072, 4096), (4096, 1024), "e5m2", "e4m3", "bfloat16", False)]   # dW
                if bias:
                    want.append(("sum", (4096, 3072), 0))
                self.assertEqual(t.calls, want)
                self.assertIn("torch._scaled_mm (fp8", case.impl)

    def test_unsupported(self):
        with self.assertRaisesRegex(ops.Unsupported, "multiple of 16"):
            ops.build(fake_torch(), "linear", (4096, 1000, 3072, 0), "bfloat16", CUDA, fp8=True)
        with self.assertRaisesRegex(ops.Unsupported, "GPU with fp8 tensor cores"):
            ops.build(fake_torch(), "linear", (4096, 1024, 3072, 0), "bfloat16",
                      types.SimpleNamespace(type="cpu"), fp8=True)
        old = fake_torch(version="2.0.1")
        del old._scaled_mm
        with self.assertRaisesRegex(ops.Unsupported, r"torch >= 2.1.*2\.0\.1"):
            ops.build(old, "linear", (4096, 1024, 3072, 0), "bfloat16", CUDA, fp8=True)
        with self.assertRaisesRegex(ops.Unsupported, "linear's GEMMs only"):
            ops.build(fake_torch(), "gelu", (4096,), "bfloat16", CUDA, fp8=True)

    def test_measurer_skips_what_cannot_run(self):
        """On a CPU the point is skipped with the reason, not a crash."""
        t = fake_torch()
        m = ops.OpMeasurer(t, types.SimpleNamespace(type="cpu"), 0, 1, log=io.StringIO())
        self.assertIsNone(m(order.Point(("linear", "fp8"), (4096, 1024, 3072, 0), (0,), 1.0)))
        self.assertIn("linear fp8 (4096, 1024, 3072, 0): skipped: fp8 GEMMs need a GPU", m.log.getvalue())


class Fp8Grid(unittest.TestCase):
    def test_linear_only_and_shapes_divide_by_16(self):
        plan = grid.op_order(dtypes=("bf16", "fp8"))
        fp8 = [p for p in plan if p.stream[1] == "fp8"]
        self.assertTrue(fp8)
        self.assertEqual({p.stream for p in fp8}, {("linear", "fp8")})
        self.assertTrue(all(d % 16 == 0 for p in fp8 for d in p.shape[:3]))
        bf16_linear = [p for p in plan if p.stream == ("linear", "bf16")]
        self.assertGreater(len(bf16_linear), len(fp8))   # the others are left out, not moved
        self.assertEqual(len([p for p in plan if p.stream[1] == "bf16"]),
                         len(grid.op_order(dtypes=("bf16",))))

    def test_cost_is_half_the_bytes_and_twice_the_rate(self):
        f16, b16 = grid.op_cost("linear", (8192, 8192, 8192, 0), "bf16")
        f8, b8 = grid.op_cost("linear", (8192, 8192, 8192, 0), "fp8")
        self.assertLess(f8, f16)
        self.assertLess(b8, b16)


if __name__ == "__main__":
    unittest.main()
