"""What the probe samples: the shapes of the operators and collectives, their cost estimates
and their priorities.  Pure Python (no torch), so that the plan can be printed and tested
anywhere.

Operator shapes come from the models of stdlib/models/*.llmp (the table MODELS below, copied
from those files; tests/probe checks that it still agrees with them), lowered as the compiler
lowers them (compiler/lower/lower.c, stdlib/transformer.llmp) for tensor parallelism 1, 2, 4, 8 and
micro-batches 1, 2, 4, plus sweeps of sizes (element-wise operators, Adam) and small and
tile-edge GEMMs.  Every shape is in the kernel form that `llmp fit` reads
(docs/calibration.md, "Sample files"): the columns of KERNEL_COLUMNS.
"""

import math
from collections import namedtuple

import order

# --- the operators: kernel-form columns, as runtime/fit/samples.c reads them ------------------

KERNEL_COLUMNS = {
    "linear": ("m", "k", "n", "bias"),
    "bmm": ("batch", "m", "k", "n"),
    "softmax": ("rows", "cols"),
    "masked_softmax": ("rows", "cols"),
    "masked_fill": ("rows", "cols"),
    "flash_attention": ("b", "l", "heads", "kv_heads", "head_dim"),
    "flash_attention_full": ("b", "l", "heads", "kv_heads", "head_dim"),
    "layernorm": ("tokens", "hidden"),
    "rmsnorm": ("tokens", "hidden"),
    "gelu": ("elements",),
    "swiglu": ("elements",),
    "add": ("elements",),
    "rope": ("tokens", "heads", "head_dim"),
    "embedding": ("tokens", "rows", "hidden"),
    "cross_entropy": ("tokens", "vocab"),
    "adam": ("params", "tensors"),   # the parameters split into that many tensors
}

# Operators sampled by default, in the order of the round-robin.  flash_attention_full
# (non-causal) is available with --ops but not sampled by default: the models are causal.
DEFAULT_OPS = (
    "linear", "bmm", "flash_attention", "masked_softmax", "softmax", "masked_fill",
    "layernorm", "rmsnorm", "gelu", "swiglu", "add", "rope", "embedding", "cross_entropy",
    "adam",
)
ALL_OPS = tuple(KERNEL_COLUMNS)

# Operators without a backward pass: their files have no B_dur(us) column.
FORWARD_ONLY = frozenset({"adam"})

# Share of the round-robin: per round, an operator contributes this many points.  GEMMs and
# attention dominate an iteration, so they get more of a short budget.
OP_WEIGHTS = {"linear": 3, "bmm": 2, "flash_attention": 2}

DTYPES = ("fp16", "bf16", "fp32", "tf32", "fp8")
DTYPE_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4, "fp8": 1}
# The operators a dtype has: fp8 is Transformer Engine's recipe, the linears' GEMMs only (the
# rest of an fp8 run is bf16, as llmp lowers it); every other dtype has every operator.
DTYPE_OPS = {"fp8": ("linear",)}


def dtype_shape_ok(op, shape, dtype):
    """Whether the dtype can run op at shape: fp8 GEMMs (torch._scaled_mm) need every matrix
    dimension a multiple of 16."""
    if dtype == "fp8":
        return all(d % 16 == 0 for d in shape[:3])
    return True

# --- the models of stdlib/models/*.llmp ------------------------------------------------

Model = namedtuple("Model", "name family hidden heads kv_heads ffn vocab seq experts top_k")

# family: gpt (pre-LayerNorm, GeLU, learned positions, biases, unfused attention),
# megatron_gpt (gpt with dropout), gpt_neox (gpt with rotary on 1/4 of each head),
# llama (RMSNorm, SwiGLU, rotary, flash attention, no biases), mixtral (llama with a routed
# MoE MLP: ffn is one expert's inner size, moe_ffn).
MODELS = (
    Model("gpt3_175b", "gpt", 12288, 96, 96, 49152, 50257, 2048, 0, 0),
    Model("gpt_neox_20b", "gpt_neox", 6144, 64, 64, 24576, 50432, 2048, 0, 0),
    Model("llama2_7b", "llama", 4096, 32, 32, 11008, 32000, 4096, 0, 0),
    Model("llama2_13b", "llama", 5120, 40, 40, 13824, 32000, 4096, 0, 0),
    Model("llama2_70b", "llama", 8192, 64, 8, 28672, 32000, 4096, 0, 0),
    Model("llama3_8b", "llama", 4096, 32, 8, 14336, 128256, 8192, 0, 0),
    Model("llama3_70b", "llama", 8192, 64, 8, 28672, 128256, 8192, 0, 0),
    Model("llama3_405b", "llama", 16384, 128, 8, 53248, 128256, 8192, 0, 0),
    Model("gpt_1_7b", "megatron_gpt", 2304, 24, 24, 9216, 51200, 2048, 0, 0),
    Model("gpt_3_6b", "megatron_gpt", 3072, 32, 32, 12288, 51200, 2048, 0, 0),
    Model("gpt_7_5b", "megatron_gpt", 4096, 32, 32, 16384, 51200, 2048, 0, 0),
    Model("gpt_18_4b", "megatron_gpt", 6144, 48, 48, 24576, 51200, 2048, 0, 0),
    Model("gpt_39_1b", "megatron_gpt", 8192, 64, 64, 32768, 51200, 2048, 0, 0),
    Model("gpt_76_1b", "megatron_gpt", 10240, 80, 80, 40960, 51200, 2048, 0, 0),
    Model("gpt_145_6b", "megatron_gpt", 12288, 96, 96, 49152, 51200, 2048, 0, 0),
    Model("gpt_310_1b", "megatron_gpt", 16384, 128, 128, 65536, 51200, 2048, 0, 0),
    Model("gpt_529_6b", "megatron_gpt", 20480, 128, 128, 81920, 51200, 2048, 0, 0),
    Model("gpt_1t", "megatron_gpt", 25600, 160, 160, 102400, 51200, 2048, 0, 0),
    Model("mixtral_8x7b", "mixtral", 4096, 32, 8, 14336, 32000, 32768, 8, 2),
)

# The zoo's families (stdlib/models/) whose layers this grid does not cover yet: their
# operators (QK-norm, multi-head latent attention, windowed attention with sinks, Mamba-2,
# shared experts, head_dim other than hidden / heads) have no shapes here.
UNPROBED_FAMILIES = ("qwen3", "qwen3_moe", "deepseek", "gpt_oss", "nemotron_h", "llama4")
# Zoo models of a probed family left out of the grid: their shapes (Mixtral 8x22B's 65536-token
# sequence, Grok-1's 32768-wide experts) would reorder the probe's first points; probing them
# is a run of its own.
UNPROBED_MODELS = ("mixtral_8x22b", "grok1")

TP_DEGREES = (1, 2, 4, 8)
MICRO_BATCHES = (1, 2, 4)
EP_DEGREES = (1, 2, 4, 8)


def rotary_fraction(m):
    return {"gpt_neox": 0.25, "llama": 1.0, "mixtral": 1.0}.get(m.family, 0.0)


def padded_vocab(vocab, tp):
    """Megatron and GPT-NeoX pad the vocabulary to a multiple of 128 * tp."""
    q = 128 * tp
    return vocab + (q - vocab % q) % q


def model_shapes(m, tp, mb):
    """The kernel calls of one layer, the embedding and the head of model m on one rank, for
    tensor parallelism tp and micro-batch mb (cp = 1), as compiler/lower/lower.c makes them: a list
    of (op, shape).  Shapes with and without sequence parallelism are both listed where they
    differ (norms and residual adds on t / tp tokens)."""
    t = mb * m.seq
    h, dh = m.hidden, m.hidden // m.heads
    hq, kvr = m.heads // tp, max(1, m.kv_heads // tp)
    gated = m.family in ("llama", "mixtral")
    bias = 1 if m.family in ("gpt", "megatron_gpt", "gpt_neox") else 0
    unfused = m.family in ("gpt", "megatron_gpt", "gpt_neox")
    vp = padded_vocab(m.vocab, tp)
    out = [
        ("linear", (t, h, (m.heads + 2 * m.kv_heads) * dh // tp, bias)),   # qkv, column
        ("linear", (t, m.heads * dh // tp, h, bias)),                       # proj, row
        ("linear", (t, h, vp // tp, 0)),                                    # LM head
        ("flash_attention", (mb, m.seq, hq, kvr, dh)),
        ("embedding", (t, vp // tp, h)),
        ("cross_entropy", (t, vp // tp)),
    ]
    for tok in {t, t // tp}:
        out += [("layernorm", (tok, h)), ("rmsnorm", (tok, h)), ("add", (tok * h,))]
    if m.family in ("gpt", "megatron_gpt"):
        out.append(("embedding", (t, m.seq, h)))                            # learned positions
    if unfused:   # scores, softmax, values (runtime/ops.c rt_attention), and the masked_fill
        bh = mb * hq
        out += [("bmm", (bh, m.seq, dh, m.seq)), ("bmm", (bh, m.seq, m.seq, dh)),
                ("masked_softmax", (bh * m.seq, m.seq)), ("softmax", (bh * m.seq, m.seq)),
                ("masked_fill", (bh * m.seq, m.seq))]
    if m.family == "megatron_gpt":   # dropout over the probabilities, costed as an add
        out.append(("add", (mb * hq * m.seq * m.seq,)))
    rd = int(dh * rotary_fraction(m))
    if rd:
        out.append(("rope", (t, hq, rd)))
    act = "swiglu" if gated else "gelu"
    if m.family == "mixtral":   # router, then the routed experts (lower_experts)
        out += [("linear", (t // tp, h, m.experts, 0)), ("softmax", (t // tp, m.experts))]
        pairs = t // tp * m.top_k
        for ep in EP_DEGREES:
            if m.experts % ep == 0:
                el = m.experts // ep
                per = pairs // el
                out += [("bmm", (el, per, h, 2 * m.ffn)), ("bmm", (el, per, m.ffn, h))]
        out.append((act, (pairs * m.ffn,)))
    else:
        up = 2 * m.ffn if gated else m.ffn
        out += [("linear", (t, h, up // tp, bias)), ("linear", (t, m.ffn // tp, h, bias)),
                (act, (t * m.ffn // tp,))]
    return out


def _elementwise_sweep(lo=10, hi=31):
    """2^e and 1.5 * 2^e elements for e in [lo, hi), and 2^hi: multiples of 512."""
    vals = []
    for e in range(lo, hi):
        vals += [2 ** e, 3 * 2 ** (e - 1)]
    return vals + [2 ** hi]


def sweep_shapes():
    """Shapes that no model produces but that pin down the physics: small (launch- and
    latency-bound) GEMMs, tile and wave edges, and size sweeps of the 1-D operators."""
    out = []
    for m in (128, 512, 2048):                      # small and medium GEMMs
        for k in (512, 2048, 8192):
            for n in (512, 2048, 8192):
                out.append(("linear", (m, k, n, 0)))
    for d in (4032, 4160, 4224, 4097, 4095):        # tile edges around 4096 (64, 128 steps)
        out += [("linear", (8192, 4096, d, 0)), ("linear", (8192, d, 4096, 0)),
                ("linear", (d, 4096, 4096, 0))]
    for n in range(1024, 8192 + 1, 512):            # wave quantisation along n
        out.append(("linear", (2048, 4096, n, 1)))
    for b in (1, 8, 64):
        for mn in (128, 512, 2048):
            for k in (64, 128):
                out.append(("bmm", (b, mn, k, mn)))
    for l in (128, 512, 1000, 2048, 8192):          # short and odd sequences
        out.append(("flash_attention", (1, l, 16, 16, 128)))
        out.append(("flash_attention", (4, l, 32, 8, 64)))
    for cols in (128, 1000, 2048):                  # rows of whole L x L score matrices
        for mats in (8, 128):
            out += [("softmax", (mats * cols, cols)), ("masked_fill", (mats * cols, cols))]
    for cols in (128, 512, 1024):
        out.append(("masked_softmax", (64 * cols, cols)))
    for tok in (128, 1024):
        for hid in (1024, 4096):
            out += [("layernorm", (tok, hid)), ("rmsnorm", (tok, hid))]
    for e in _elementwise_sweep():
        out += [("gelu", (e,)), ("swiglu", (e,)), ("add", (e,))]
    for p in _elementwise_sweep(20, 31):   # one tensor, and a GPT stage's ~100 (llmp's `tensors` axis)
        out += [("adam", (p, 1)), ("adam", (p, 96))]
    for tok in (512, 4096):
        out.append(("rope", (tok, 8, 64)))
        out.append(("cross_entropy", (tok, 32000)))
        out.append(("embedding", (tok, 32000, 1024)))
    return out


def op_grid(ops=DEFAULT_OPS):
    """{op: {shape: is_model_shape}} for the operators asked for, every shape once."""
    grid = {op: {} for op in ops}
    for m in MODELS:
        for tp in TP_DEGREES:
            for mb in MICRO_BATCHES:
                for op, shape in model_shapes(m, tp, mb):
                    if op in grid:
                        grid[op][shape] = True
                    if op == "flash_attention" and "flash_attention_full" in grid:
                        grid["flash_attention_full"][shape] = True
    for op, shape in sweep_shapes():
        for o in ((op, "flash_attention_full") if op == "flash_attention" else (op,)):
            if o in grid:
                grid[o].setdefault(shape, False)
    return grid


# --- cost estimates on a generic GPU ---------------------------------------------------
# Rough: what matters is that the budget is not overrun by much, and the probe corrects
# these by the ratio of measured to estimated time as it goes (order.run).

PEAK_FLOPS = 400e12          # dense fp16/bf16 GEMM FLOP/s actually reached
BANDWIDTH = 1.5e12           # bytes/s of HBM actually reached
LAUNCH = 8e-6                # seconds per kernel launched
POINT_OVERHEAD = 0.02        # seconds per point: allocation, initialisation, synchronisation
DTYPE_RATE = {"fp16": 1.0, "bf16": 1.0, "tf32": 0.5, "fp32": 1.0 / 16, "fp8": 2.0}


def op_cost(op, shape, dtype="fp16"):
    """(forward, backward) seconds of one call of op at shape on a generic GPU."""
    eb = DTYPE_BYTES[dtype]
    peak, bw = PEAK_FLOPS * DTYPE_RATE[dtype], BANDWIDTH

    def mem(nbytes, kernels=1):
        return nbytes / bw + kernels * LAUNCH

    def gemm(flops, nbytes):
        return max(flops / peak, nbytes / bw) + LAUNCH

    if op in ("linear", "bmm"):
        b, m, k, n = (1,) + shape[:3] if op == "linear" else shape
        io = b * (m * k + k * n + m * n) * eb
        return gemm(2 * b * m * k * n, io), 2 * gemm(2 * b * m * k * n, io)
    if op in ("flash_attention", "flash_attention_full"):
        b, l, hq, kv, d = shape
        frac = 0.5 if op == "flash_attention" else 1.0
        flops = 4 * b * hq * l * l * d * frac
        io = b * l * d * (2 * hq + 2 * kv) * eb
        return gemm(flops / 0.7, io), gemm(2.5 * flops / 0.55, 2.5 * io)
    if op in ("softmax", "masked_softmax", "masked_fill"):
        e = shape[0] * shape[1]
        return mem(2.5 * e * eb, 2), mem(3 * e * eb, 2)
    if op in ("layernorm", "rmsnorm"):
        e = shape[0] * shape[1]
        k = 1 if op == "layernorm" else 4   # eager RMSNorm: several kernels
        return mem(2 * k * e * eb, k), mem(3 * k * e * eb, 2 * k)
    if op in ("gelu", "swiglu", "add"):
        e = shape[0]
        f = {"gelu": (2, 3), "swiglu": (3, 5), "add": (3, 3)}[op]
        return mem(f[0] * e * eb, 2), mem(f[1] * e * eb, 2)
    if op == "rope":
        e = shape[0] * shape[1] * shape[2]
        return mem(6 * e * eb, 6), mem(6 * e * eb, 6)
    if op == "embedding":
        t, rows, hid = shape
        return mem(2 * t * hid * eb, 4), mem(rows * hid * eb + 3 * t * hid * eb, 3)
    if op == "cross_entropy":
        e = shape[0] * shape[1]
        return mem(e * (eb + 28), 8), mem(e * (8 + eb), 3)
    if op == "adam":   # shape (params,) reads as one tensor; two launches' worth per tensor
        tensors = shape[1] if len(shape) > 1 else 1
        return mem(shape[0] * (32 + eb), 2 + 2 * tensors), 0.0
    raise KeyError(op)


def op_reps(call_s, warmup, repeats):
    """(warm-up, timed repeats) for a point whose forward + backward takes call_s: as asked,
    but for calls over 5 ms at most 2 warm-ups and only the repeats that fit in 0.25 s (at
    least 3): a long kernel varies little from call to call."""
    if call_s <= 5e-3:
        return warmup, repeats
    return min(warmup, 2), max(3, min(repeats, int(0.25 / call_s)))


def op_point_seconds(op, shape, dtype, warmup, repeats):
    """Estimated seconds to measure one point: initialisation, warm-up and timed repeats of
    forward and backward (op_reps), and the overhead of a point."""
    f, b = op_cost(op, shape, dtype)
    w, r = op_reps(f + b, warmup, repeats)
    init = 4 * op_bytes(op, shape, dtype) / BANDWIDTH
    return POINT_OVERHEAD + init + (w + r + 1) * (f + b)


def op_bytes(op, shape, dtype="fp16"):
    """Bytes of the inputs and outputs of one call (the tensors the probe allocates), roughly."""
    eb = DTYPE_BYTES[dtype]
    if op in ("linear", "bmm"):
        b, m, k, n = (1,) + shape[:3] if op == "linear" else shape
        return 2 * b * (m * k + k * n + m * n) * eb
    if op in ("flash_attention", "flash_attention_full"):
        b, l, hq, kv, d = shape
        return 2 * b * l * d * (2 * hq + 2 * kv) * eb
    if op == "adam":
        return shape[0] * (16 + eb)
    if op == "cross_entropy":
        return shape[0] * shape[1] * (2 * eb + 8)
    if op == "embedding":
        return (shape[1] + 2 * shape[0]) * shape[2] * eb * 2
    return 3 * math.prod(shape) * eb


# --- priority: where the physics model is least certain -----------------------------------

GEMM_TILE = 128               # the tile edge of the GEMM kernels the physics assumes
DEFAULT_SMS = 132             # for the wave-edge test when the GPU is not known (H100 SXM)


def gemm_dims(op, shape):
    """(batch, m, k, n) of a GEMM-like op, or None."""
    if op == "linear":
        return (1,) + tuple(shape[:3])
    if op == "bmm":
        return tuple(shape)
    return None


def op_priority(op, shape, is_model, sms=DEFAULT_SMS, dtype="fp16"):
    """The priority score of an operator point; higher is sampled earlier (order.spread).

      +1.0   small: one call takes under 50 us on the generic GPU (launch- and latency-bound,
             where a roofline is least right); +0.5 under 500 us
      +0.5   a GEMM dimension (m, k, n), or a flash-attention sequence, not a multiple of 128
             (partial tiles); +0.25 more if not a multiple of 64
      +0.5   a GEMM on a wave edge: its 128 x 128 output tiles fill fewer than 8 waves of the
             GPU's SMs and the last wave is less than a quarter full
      +0.25  a shape a stdlib model runs (llmp predicts with it), rather than a sweep point
    """
    f, _ = op_cost(op, shape, dtype)
    p = 1.0 if f < 50e-6 else 0.5 if f < 500e-6 else 0.0
    dims = gemm_dims(op, shape)
    edges = dims[1:] if dims else (shape[1],) if op.startswith("flash") else ()
    if any(d % GEMM_TILE for d in edges):
        p += 0.5
        if any(d % 64 for d in edges):
            p += 0.25
    if dims:
        b, m, _, n = dims
        tiles = b * math.ceil(m / GEMM_TILE) * math.ceil(n / GEMM_TILE)
        waves = tiles / sms
        if waves < 8 and 0 < waves - math.floor(waves) < 0.25:
            p += 0.5
    if is_model:
        p += 0.25
    return p


def op_coords(op, shape):
    """Coordinates for distances between points of one operator: log2 of every column (the
    bias flag counts as one doubling)."""
    cols = KERNEL_COLUMNS[op]
    return tuple(float(v) if c == "bias" else math.log2(v) for c, v in zip(cols, shape))


# --- collectives ------------------------------------------------------------------------

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall", "p2p")

# A generic cluster, for the time estimates only (corrected as the run goes, order.run).
NET_LATENCY = {"intra": 10e-6, "inter": 30e-6}        # seconds per step
NET_BANDWIDTH = {"intra": 150e9, "inter": 20e9}       # bytes/s per GPU (bus bandwidth)
COLL_POINT_OVERHEAD = 0.01


def parse_size(text):
    """'1K', '64M', '4G', '4GiB', '1048576' -> bytes (K = 1024)."""
    s = text.strip().upper()
    if s.endswith("IB"):
        s = s[:-2]
    elif s.endswith("B"):
        s = s[:-1]
    mult = 1
    if s and s[-1] in "KMGT":
        mult = 1024 ** ("KMGT".index(s[-1]) + 1)
        s = s[:-1]
    try:
        v = float(s)
    except ValueError:
        raise ValueError("`%s` is not a size (e.g. 1K, 64M, 4G)" % text) from None
    if not (v > 0) or not math.isfinite(v):
        raise ValueError("`%s` is not a positive size" % text)
    return int(v * mult)


def parse_layouts(text):
    """'1x8,2x8' -> [(1, 8), (2, 8)]: NODES x GPUS_PER_NODE, at least 2 GPUs each."""
    out = []
    for item in text.split(","):
        item = item.strip().lower()
        parts = item.split("x")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError("layout `%s` is not NODESxGPUS (e.g. 2x8)" % item)
        n, g = int(parts[0]), int(parts[1])
        if n < 1 or g < 1 or n * g < 2:
            raise ValueError("layout `%s` needs at least 2 GPUs" % item)
        if (n, g) not in out:
            out.append((n, g))
    if not out:
        raise ValueError("no layouts given")
    return out


def p2p_layouts(layouts):
    """Send/receive runs between two GPUs of one node (1x2) when a layout has 2 or more GPUs
    per node, and between the first GPUs of two nodes (2x1) when one spans nodes: the only
    layouts runtime/collectives.c accepts for p2p."""
    out = []
    if any(g >= 2 for _, g in layouts):
        out.append((1, 2))
    if any(n >= 2 for n, _ in layouts):
        out.append((2, 1))
    return out


def coll_sizes(min_bytes, max_bytes, steps_per_octave=1):
    """Message sizes in bytes from min to max: powers of two (and steps_per_octave - 1 sizes
    between each), multiples of 2 bytes (fp16 elements)."""
    if min_bytes > max_bytes:
        raise ValueError("--min-bytes is larger than --max-bytes")
    lo, hi = math.log2(min_bytes), math.log2(max_bytes)
    out, i = [], 0
    while True:
        x = math.ceil(lo * steps_per_octave) / steps_per_octave + i / steps_per_octave
        if x > hi + 1e-9:
            break
        b = int(round(2 ** x / 2)) * 2
        if b >= 2 and (not out or b > out[-1]):
            out.append(b)
        i += 1
    return out


def coll_shape(kind, nbytes, ranks):
    """The CSV's `shape` for a collective whose kernel argument (runtime/llmp_rt.h: the full
    tensor) is nbytes: fp16 elements of the buffer, as the paper's files give it: the buffer
    all-reduced, the per-rank input of all-gather (llmp fit multiplies it by the ranks),
    the input of reduce-scatter and of all-to-all (a multiple of the ranks), the message of
    p2p.  None where the size is too small for the ranks."""
    el = nbytes // 2
    if kind == "allgather":
        el //= ranks
    elif kind in ("reducescatter", "alltoall"):
        el -= el % ranks
    return el if el >= 1 else None


def coll_kernel_bytes(kind, shape, ranks):
    """Inverse of coll_shape: the runtime kernel's bytes (what llmp fit computes)."""
    return 2 * shape * (ranks if kind == "allgather" else 1)


def coll_call_seconds(kind, nbytes, nodes, gpn):
    """Seconds of one call on a generic cluster: ring latency plus bytes over bandwidth."""
    n = nodes * gpn
    tier = "inter" if nodes > 1 else "intra"
    lat, bw = NET_LATENCY[tier], NET_BANDWIDTH[tier]
    if kind == "allreduce":
        return 2 * (n - 1) * lat + 2 * (n - 1) / n * nbytes / bw
    if kind in ("allgather", "reducescatter"):
        return (n - 1) * lat + (n - 1) / n * nbytes / bw
    if kind == "alltoall":
        return lat + (n - 1) / n * nbytes / bw
    return lat + nbytes / bw   # p2p


def coll_iters(call_s, iters):
    """Calls between two events: nccl-tests' fixed count, fewer for calls over 2.5 ms so that
    one timed loop stays near 50 ms (at least 2)."""
    return max(2, min(iters, int(0.05 / call_s))) if call_s > 0.0025 else iters


def coll_point_seconds(kind, nbytes, nodes, gpn, warmup, iters, repeats):
    c = coll_call_seconds(kind, nbytes, nodes, gpn)
    it = coll_iters(c, iters)
    return COLL_POINT_OVERHEAD + (min(warmup, it) + it * repeats) * c


def coll_priority(kind, nbytes, nodes, gpn):
    """The priority score of a collective point; higher is sampled earlier.

      +1.0   64 KiB <= bytes <= 64 MiB: the knee between latency and bandwidth, where NCCL
             switches protocol (LL, LL128, Simple) and algorithm (tree, ring)
      +0.5   below 64 KiB: latency-bound
      +0.5   the layout spans nodes (the network tier, least certain), +0.25 more if it also
             has several GPUs per node (two tiers in one call)
    """
    p = 1.0 if 64 * 1024 <= nbytes <= 64 * 1024 ** 2 else 0.5 if nbytes < 64 * 1024 else 0.0
    if nodes > 1:
        p += 0.5 + (0.25 if gpn > 1 else 0.0)
    return p


# --- the plans: points in order ---------------------------------------------------------

def op_order(ops=DEFAULT_OPS, dtypes=("bf16", "fp16"), warmup=5, repeats=20, sms=DEFAULT_SMS):
    """Every operator point of the grid, in sampling order (order.plan): streams per
    (operator, dtype), the operators in the order asked for, each dtype in turn (fp8 only for
    the operators DTYPE_OPS gives it)."""
    points, streams = [], []
    grid = op_grid(ops)
    for op in ops:
        shapes = sorted(grid[op].items())
        for dt in dtypes:
            if op not in DTYPE_OPS.get(dt, (op,)):
                continue
            streams.append((op, dt))
            for shape, is_model in shapes:
                if not dtype_shape_ok(op, shape, dt):
                    continue
                f, b = op_cost(op, shape, dt)
                points.append(order.Point(
                    (op, dt), shape, op_coords(op, shape), f + b,
                    op_priority(op, shape, is_model, sms, dt),
                    op_point_seconds(op, shape, dt, warmup, repeats)))
    weights = {s: OP_WEIGHTS.get(s[0], 1) for s in streams}
    return order.plan(points, streams, weights)


def coll_order(layouts, kinds=COLLECTIVES, min_bytes=1024, max_bytes=4 * 1024 ** 3,
               steps_per_octave=1, warmup=5, iters=20, repeats=5):
    """Every collective point, in sampling order: streams per (kind, nodes, gpus per node),
    the layouts that span nodes first (coll_priority), then as given; p2p on p2p_layouts().
    A point's shape is (nodes, gpus_per_node, bytes): bytes as the runtime kernel takes it."""
    sizes = coll_sizes(min_bytes, max_bytes, steps_per_octave)
    streams, points = [], []
    for kind in kinds:
        for n, g in (p2p_layouts(layouts) if kind == "p2p" else layouts):
            streams.append((kind, n, g))
            for b in sizes:
                if coll_shape(kind, b, n * g) is None:
                    continue
                points.append(order.Point(
                    (kind, n, g), (n, g, b), (math.log2(b),), b,
                    coll_priority(kind, b, n, g),
                    coll_point_seconds(kind, b, n, g, warmup, iters, repeats)))
    # layouts across nodes first, then in the order given; kinds alternate within a layout
    rank = {s: (-coll_priority(s[0], 2 ** 40, s[1], s[2]), i) for i, s in enumerate(streams)}
    streams.sort(key=lambda s: rank[s])
    return order.plan(points, streams)
