"""Operator timing with PyTorch, as training frameworks run the operators.

Each operator is built at one shape (build()) into a Case: `fwd`, a call of the forward pass
with autograd recording (as in training), and `bwd`, a call of the backward pass on a graph
retained from one forward (torch.autograd.grad with retain_graph=True and a random output
gradient), or None.  Timer.median_us() runs warm-ups, then times each repeat between two
CUDA events (queued back to back behind a spin of the GPU that lets the host queue them all,
so the events time the GPU's work and not the launch; one synchronisation at the end), and
returns the median;
on a CPU device it times with time.perf_counter instead (for tests and dry runs of the
code, not for calibration).

torch is imported by the caller (env.import_torch) and passed in: importing this module
needs no torch.
"""

import math
import statistics
import sys
import time

import grid

# The torch dtype each dtype computes in; fp8 GEMMs take fp8 inputs and write bf16 (_fp8_linear).
TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "tf32": "float32",
                "fp8": "bfloat16"}


class Unsupported(Exception):
    """The point cannot be measured with this PyTorch or at this shape."""


class Case:
    def __init__(self, fwd, bwd=None, impl=None):
        self.fwd, self.bwd, self.impl = fwd, bwd, impl


class Timer:
    """Median time of a callable: CUDA events on a GPU, perf_counter on a CPU.

    On a GPU the repeats are queued behind a spin of the GPU (torch.cuda._sleep) long enough
    for the host to queue them all, so that each pair of events brackets the GPU's work on
    the call and not the host's time to launch it: in training the host runs ahead of the
    GPU, and a small operator's launch (tens of microseconds of Python and autograd on a
    slow host) would otherwise be timed instead of its kernels."""

    HOLD_MIN_S, HOLD_MAX_S = 0.5e-3, 0.2

    def __init__(self, torch, device):
        self.torch, self.device = torch, device
        self.events = device.type == "cuda"
        self.cycles_per_s = None   # of torch.cuda._sleep, measured at the first hold

    def sync(self):
        if self.events:
            self.torch.cuda.synchronize(self.device)

    def can_hold(self):
        return self.events and hasattr(self.torch.cuda, "_sleep")

    def _sleep_rate(self):
        """Cycles per second of torch.cuda._sleep, timed once with events."""
        if self.cycles_per_s is None:
            cuda = self.torch.cuda
            cycles = 10 ** 7
            cuda._sleep(cycles // 10)   # clocks up
            start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
            start.record()
            cuda._sleep(cycles)
            end.record()
            self.sync()
            self.cycles_per_s = cycles / max(start.elapsed_time(end) * 1e-3, 1e-6)
        return self.cycles_per_s

    def hold(self, seconds):
        """Keeps the GPU busy for about `seconds` (bounded), from now in the stream."""
        seconds = min(max(seconds, self.HOLD_MIN_S), self.HOLD_MAX_S)
        self.torch.cuda._sleep(int(seconds * self._sleep_rate()))

    def median_us(self, fn, warmup, repeats):
        t0 = time.perf_counter()
        for _ in range(warmup):
            fn()
        launch_s = (time.perf_counter() - t0) / max(warmup, 1)   # the host's time to queue
        self.sync()
        if self.events:
            ev = [(self.torch.cuda.Event(enable_timing=True),
                   self.torch.cuda.Event(enable_timing=True)) for _ in range(repeats)]
            if self.can_hold():
                self.hold(2.0 * launch_s * repeats)
            for start, end in ev:
                start.record()
                fn()
                end.record()
            self.sync()
            times = [start.elapsed_time(end) * 1e3 for start, end in ev]
        else:
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e6)
        # CUDA events resolve about 0.5 us; a sample file needs positive times
        return max(statistics.median(times), 1e-3)


def _grad_case(torch, forward, inputs, impl=None):
    """A Case whose backward is autograd.grad of one retained forward w.r.t. inputs."""
    out = forward()
    grad = torch.randn_like(out)

    def bwd():
        torch.autograd.grad(out, inputs, grad, retain_graph=True)

    return Case(forward, bwd, impl)


def _randn(torch, shape, dtype, device, scale=1.0, grad=True):
    t = torch.randn(shape, dtype=dtype, device=device)
    if scale != 1.0:
        t.mul_(scale)
    return t.requires_grad_(grad)


def _causal_mask(torch, l, device):
    return torch.ones(l, l, dtype=torch.bool, device=device).triu_(1)


def _fused_upper_triang():
    """Megatron's (or Apex's) fused scale-mask-softmax extension, or None."""
    try:
        import scaled_upper_triang_masked_softmax_cuda as mod
        return mod
    except ImportError:
        return None


ATTENTION_BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION",
                      "efficient": "EFFICIENT_ATTENTION", "math": "MATH"}


def sdpa_backend(torch, name):
    """A context manager factory that makes scaled_dot_product_attention run backend `name`
    (ATTENTION_BACKENDS), or None for "auto" (PyTorch's choice)."""
    if name == "auto":
        return None
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        raise Unsupported("--attention %s needs torch >= 2.3 (torch.nn.attention.sdpa_kernel); "
                          "torch %s" % (name, torch.__version__))
    backend = getattr(SDPBackend, ATTENTION_BACKENDS[name], None)
    if backend is None:
        raise Unsupported("torch %s has no SDPBackend.%s" % (torch.__version__,
                                                            ATTENTION_BACKENDS[name]))
    return lambda: sdpa_kernel(backend)


def sdpa_choice(torch, q, k, v, causal, gqa):
    """The backend PyTorch's scaled_dot_product_attention picks for these inputs, by
    torch._fused_sdp_choice (torch >= 2.0; an index into SDPBackend: "FLASH_ATTENTION", ...),
    or None where this PyTorch cannot say."""
    choose = getattr(torch, "_fused_sdp_choice", None)
    if choose is None:
        return None
    try:
        index = choose(q, k, v, None, 0.0, causal, enable_gqa=True) if gqa else \
            choose(q, k, v, None, 0.0, causal)
    except Exception:   # noqa: BLE001 - a private function: any failure means "cannot say"
        return None
    enum = getattr(getattr(torch.nn, "attention", None), "SDPBackend", None) or \
        getattr(torch.backends.cuda, "SDPBackend", None)
    try:
        return enum(int(index)).name if enum is not None else "backend %d" % int(index)
    except (TypeError, ValueError):
        return "backend %s" % index


def _fp8_linear(torch, shape, device):
    """A linear's GEMMs as Transformer Engine runs them in fp8 (its default recipe: e4m3
    activations and weights, e5m2 gradients, per-tensor scales, bf16 output): forward X W^T
    (+ bias in the epilogue); backward dX = dY W (e5m2 x e4m3) and dW = dY^T X (e5m2 x e4m3),
    from the transposed fp8 copies TE keeps, and the bias gradient.  torch._scaled_mm wants
    its first operand row-major and its second column-major, every dimension a multiple of 16.
    The casts to fp8 are not timed (llmp's fp8 linear is its GEMMs; the casts are memory-bound
    passes TE fuses into the neighbouring kernels)."""
    m, k, n, bias = shape
    mm = getattr(torch, "_scaled_mm", None)
    e4m3, e5m2 = getattr(torch, "float8_e4m3fn", None), getattr(torch, "float8_e5m2", None)
    if mm is None or e4m3 is None or e5m2 is None:
        raise Unsupported("fp8 needs torch._scaled_mm and the float8 dtypes (torch >= 2.1); "
                          "torch %s" % torch.__version__)
    if device.type != "cuda":
        raise Unsupported("fp8 GEMMs need a GPU with fp8 tensor cores (sm_89 or later)")
    if not grid.dtype_shape_ok("linear", shape, "fp8"):
        raise Unsupported("fp8 GEMMs need every dimension a multiple of 16: %d x %d x %d" % (m, k, n))
    bf16 = torch.bfloat16

    def fp8(rows, cols, dt, scale=1.0):
        return (torch.randn((rows, cols), dtype=bf16, device=device) * scale).to(dt)

    x, w, dy = fp8(m, k, e4m3), fp8(n, k, e4m3, 1 / math.sqrt(k)), fp8(m, n, e5m2)
    xt, wt, dyt = x.t().contiguous(), w.t().contiguous(), dy.t().contiguous()
    one = torch.ones((), dtype=torch.float32, device=device)
    b = torch.randn((n,), dtype=bf16, device=device) if bias else None
    db_src = torch.randn((m, n), dtype=bf16, device=device) if bias else None

    def gemm(a, b_colmajor, **kw):
        r = mm(a, b_colmajor, scale_a=one, scale_b=one, out_dtype=bf16, **kw)
        return r[0] if isinstance(r, tuple) else r   # torch 2.1-2.3 also return amax

    def fwd():
        return gemm(x, w.t(), bias=b) if bias else gemm(x, w.t())

    def bwd():
        gemm(dy, wt.t())     # dX (m x k) = dY (m x n) W (n x k)
        gemm(dyt, xt.t())    # dW (n x k) = dY^T (n x m) X (m x k)
        if bias:
            db_src.sum(0)

    return Case(fwd, bwd, "torch._scaled_mm (fp8: e4m3 x e4m3 forward%s, e5m2 x e4m3 dgrad "
                          "and wgrad, per-tensor scales, bf16 out; the casts not timed)"
                % (" with bias" if bias else ""))


def build(torch, op, shape, dtype, device, attention="auto", fp8=False):
    """The Case of op at shape (grid.KERNEL_COLUMNS order), dtype a torch dtype; attention:
    the scaled_dot_product_attention backend of the attention ops (ATTENTION_BACKENDS, or
    "auto": PyTorch's choice); fp8: the fp8 recipe (the linear only: grid.DTYPE_OPS)."""
    if fp8:
        if op != "linear":
            raise Unsupported("fp8 is the linear's GEMMs only")
        return _fp8_linear(torch, shape, device)
    F = torch.nn.functional
    R = lambda s, scale=1.0, grad=True: _randn(torch, s, dtype, device, scale, grad)  # noqa: E731

    if op == "linear":   # F.linear: x W^T + b; backward: data- and weight-gradient GEMMs, db
        m, k, n, bias = shape
        x, w = R((m, k)), R((n, k), 1 / math.sqrt(k))
        b = R((n,)) if bias else None
        ins = (x, w, b) if bias else (x, w)
        return _grad_case(torch, lambda: F.linear(x, w, b), ins, "torch.nn.functional.linear")
    if op == "bmm":
        bt, m, k, n = shape
        a, c = R((bt, m, k)), R((bt, k, n), 1 / math.sqrt(k))
        return _grad_case(torch, lambda: torch.bmm(a, c), (a, c), "torch.bmm")
    if op == "softmax":
        x = R(tuple(shape))
        return _grad_case(torch, lambda: torch.softmax(x, -1), (x,), "torch.softmax")
    if op in ("masked_softmax", "masked_fill"):
        rows, cols = shape
        if rows % cols:
            raise Unsupported("rows %d is not a multiple of cols %d (a causal L x L mask)"
                              % (rows, cols))
        x = R((rows // cols, cols, cols))
        mask = _causal_mask(torch, cols, device)
        if op == "masked_fill":   # Megatron's attention_mask_func: fill with -10000
            return _grad_case(torch, lambda: x.masked_fill(mask, -10000.0), (x,),
                              "Tensor.masked_fill (causal mask, -10000)")
        fusable = device.type == "cuda" and dtype in (torch.float16, torch.bfloat16)
        mod = _fused_upper_triang() if fusable else None
        if mod is not None and cols <= 16384:
            scale = 1.0

            class Fused(torch.autograd.Function):   # Megatron's ScaledUpperTriangMaskedSoftmax
                @staticmethod
                def forward(ctx, inp):
                    y = mod.forward(inp, scale)
                    ctx.save_for_backward(y)
                    return y

                @staticmethod
                def backward(ctx, g):
                    (y,) = ctx.saved_tensors
                    return mod.backward(g.contiguous(), y, scale)

            return _grad_case(torch, lambda: Fused.apply(x), (x,),
                              "scaled_upper_triang_masked_softmax_cuda (fused)")
        return _grad_case(torch, lambda: torch.softmax(x.masked_fill(mask, -10000.0), -1), (x,),
                          "masked_fill + torch.softmax (unfused: no fused kernel found)")
    if op in ("flash_attention", "flash_attention_full"):
        b, l, hq, kv, d = shape
        if hq % kv:
            raise Unsupported("heads %d do not divide by kv_heads %d" % (hq, kv))
        q, k_, v = R((b, hq, l, d)), R((b, kv, l, d)), R((b, kv, l, d))
        causal = op == "flash_attention"
        sdpa = getattr(F, "scaled_dot_product_attention", None)
        if sdpa is None:
            raise Unsupported("torch %s has no scaled_dot_product_attention (torch >= 2.0)"
                              % torch.__version__)
        if kv == hq:
            fwd, impl = (lambda: sdpa(q, k_, v, is_causal=causal)), "sdpa"
        else:
            try:
                sdpa(q[:, :, :1], k_[:, :, :1], v[:, :, :1], is_causal=causal, enable_gqa=True)
                fwd, impl = (lambda: sdpa(q, k_, v, is_causal=causal, enable_gqa=True)), \
                    "sdpa enable_gqa"
            except TypeError:   # torch < 2.5: repeat the key/value heads, as frameworks did
                r = hq // kv

                def fwd():
                    return sdpa(q, k_.repeat_interleave(r, 1), v.repeat_interleave(r, 1),
                                is_causal=causal)

                impl = "sdpa + repeat_interleave of k, v"
        ctx = sdpa_backend(torch, attention)
        if ctx is not None:   # the forward in the backend's context; autograd keeps its backward
            plain = fwd

            def fwd():
                with ctx():
                    return plain()

        if ctx is None:   # name what PyTorch picks for this shape where it can say
            chosen = sdpa_choice(torch, q, k_, v, causal, impl == "sdpa enable_gqa")
            backend = "PyTorch's choice" + (": %s" % chosen if chosen else "")
        else:
            backend = ATTENTION_BACKENDS[attention]
        return _grad_case(torch, fwd, (q, k_, v), "torch.nn.functional.scaled_dot_product_attention"
                          " (%s, %s, backend: %s)" % (impl, "causal" if causal else "full",
                                                      backend))
    if op == "layernorm":
        t, h = shape
        x, w, bb = R((t, h)), R((h,)), R((h,))
        return _grad_case(torch, lambda: F.layer_norm(x, (h,), w, bb, 1e-5), (x, w, bb),
                          "torch.nn.functional.layer_norm")
    if op == "rmsnorm":
        t, h = shape
        x, w = R((t, h)), R((h,))
        if hasattr(F, "rms_norm"):
            return _grad_case(torch, lambda: F.rms_norm(x, (h,), w, 1e-5), (x, w),
                              "torch.nn.functional.rms_norm")
        return _grad_case(torch,
                          lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w,
                          (x, w), "x * rsqrt(mean(x^2) + eps) * w (eager)")
    if op == "gelu":
        x = R(tuple(shape))
        return _grad_case(torch, lambda: F.gelu(x), (x,), "torch.nn.functional.gelu")
    if op == "swiglu":   # output elements; the input is [rows, 2 c] split in halves
        e = shape[0]
        c = math.gcd(e, 8192)
        x = R((e // c, 2 * c))

        def fwd():
            a, g = x.chunk(2, -1)
            return F.silu(a) * g

        return _grad_case(torch, fwd, (x,), "silu(x1) * x2 of x.chunk(2, -1) (eager)")
    if op == "add":   # backward: the residual fork's gradient accumulation, one add as well
        a, b = R(tuple(shape)), R(tuple(shape))
        g1, g2 = R(tuple(shape), grad=False), R(tuple(shape), grad=False)
        return Case(lambda: a + b, lambda: torch.add(g1, g2),
                    "a + b; backward: the gradient accumulation g1 + g2")
    if op == "rope":   # GPT-NeoX / LLaMA eager rotary: x cos + rotate_half(x) sin
        t, h, d = shape
        if d % 2:
            raise Unsupported("rotary dimensions %d are odd" % d)
        x = R((t, h, d))
        cos, sin = R((t, 1, d), grad=False), R((t, 1, d), grad=False)

        def fwd():
            x1, x2 = x[..., :d // 2], x[..., d // 2:]
            return x * cos + torch.cat((-x2, x1), -1) * sin

        return _grad_case(torch, fwd, (x,), "x * cos + rotate_half(x) * sin (eager)")
    if op == "embedding":   # Megatron's VocabParallelEmbedding: range mask, lookup, zero rows
        t, rows, h = shape
        w = R((rows, h))
        idx = torch.randint(0, rows, (t,), device=device)

        def fwd():
            outside = (idx < 0) | (idx >= rows)
            e = F.embedding(idx.masked_fill(outside, 0), w)
            return e.masked_fill(outside.unsqueeze(-1), 0.0)

        return _grad_case(torch, fwd, (w,), "Megatron VocabParallelEmbedding (eager)")
    if op == "cross_entropy":
        t, vocab = shape
        logits = R((t, vocab))
        target = torch.randint(0, vocab, (t,), device=device)
        xent = _vocab_parallel_cross_entropy(torch)
        return _grad_case(torch, lambda: xent.apply(logits.float(), target), (logits,),
                          "Megatron vocab-parallel cross-entropy on fp32 logits (eager, tp 1)")
    if op == "adam":   # (params, tensors): the parameters in `tensors` near-equal tensors
        n = shape[0]
        t = shape[1] if len(shape) > 1 else 1
        sizes = [n // t + (1 if i < n % t else 0) for i in range(t)]
        ps = [torch.nn.Parameter(torch.randn(s, dtype=torch.float32, device=device)) for s in sizes]
        for p in ps:
            p.grad = torch.randn(p.numel(), dtype=torch.float32, device=device)
        try:
            opt, impl = torch.optim.Adam(ps, lr=1e-4, fused=True), "torch.optim.Adam(fused=True)"
        except (TypeError, RuntimeError, ValueError):
            opt, impl = torch.optim.Adam(ps, lr=1e-4), "torch.optim.Adam"
        models = [torch.empty(s, dtype=dtype, device=device) for s in sizes] \
            if dtype != torch.float32 else None

        def step():   # the fp32 master step, then the copy into the model's weights
            opt.step()
            if models is not None:
                for m, p in zip(models, ps):
                    m.copy_(p.detach())

        return Case(step, None, impl + (" + copy to the %s weights" % str(dtype)[6:]
                                        if models is not None else ""))
    raise Unsupported("unknown operator %s" % op)


def _vocab_parallel_cross_entropy(torch):
    """Megatron-LM's _VocabParallelCrossEntropy for one tensor-parallel rank (the all-reduces
    are no-ops): max, shift, target logit, exp, sum, log; backward softmax - one-hot.  The
    backward writes a new gradient instead of reusing the saved softmax in place, which moves
    the same bytes and lets the graph be run backward repeatedly."""

    class VocabParallelCrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, target):
            logits_max = torch.max(logits, dim=-1)[0]
            logits = logits - logits_max.unsqueeze(-1)
            rows = torch.arange(logits.size(0), device=logits.device)
            predicted = logits[rows, target].clone()
            exp_logits = torch.exp(logits, out=logits)   # in place, as Megatron
            sum_exp = exp_logits.sum(dim=-1)
            loss = torch.log(sum_exp) - predicted
            exp_logits.div_(sum_exp.unsqueeze(-1))
            ctx.save_for_backward(exp_logits, target)
            return loss

        @staticmethod
        def backward(ctx, grad_output):
            softmax, target = ctx.saved_tensors
            grad = softmax * grad_output.unsqueeze(-1)
            rows = torch.arange(grad.size(0), device=grad.device)
            grad[rows, target] -= grad_output
            return grad, None

    return VocabParallelCrossEntropy


def is_oom(torch, e):
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(e, oom)) or "out of memory" in str(e).lower()


def device_sms(torch, device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return grid.DEFAULT_SMS


class OpMeasurer:
    """measure(point) for order.run: builds the case, times it, frees it.  Returns
    (fwd_us, bwd_us or None, impl) or None where the point cannot be measured (out of
    memory, unsupported), saying why on stderr."""

    def __init__(self, torch, device, warmup, repeats, log=sys.stderr, attention="auto"):
        self.torch, self.device, self.attention = torch, device, attention
        self.warmup, self.repeats = warmup, repeats
        self.timer = Timer(torch, device)
        self.log = log

    def __call__(self, point):
        torch = self.torch
        op, dt = point.stream
        dtype = getattr(torch, TORCH_DTYPES[dt])
        if self.device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
            torch.backends.cudnn.allow_tf32 = dt == "tf32"
        f_est, b_est = grid.op_cost(op, point.shape, dt)
        warmup, repeats = grid.op_reps(f_est + b_est, self.warmup, self.repeats)
        case = None
        try:
            case = build(torch, op, point.shape, dtype, self.device, self.attention, dt == "fp8")
            f = self.timer.median_us(case.fwd, warmup, repeats)
            b = self.timer.median_us(case.bwd, warmup, repeats) if case.bwd else None
            return f, b, case.impl
        except Unsupported as e:
            print("probe: %s %s %s: skipped: %s" % (op, dt, point.shape, e), file=self.log)
        except Exception as e:   # one point failing does not end the run
            why = "out of memory" if is_oom(torch, e) else "%s: %s" % (type(e).__name__, e)
            print("probe: %s %s %s: skipped: %s" % (op, dt, point.shape, why.splitlines()[0]),
                  file=self.log)
        finally:
            del case
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
        return None
