#!/usr/bin/env python3
"""generate.py - Megatron-Bridge's performance summary as llmp scenarios.

    python3 generate.py --llmp LLMP [--framework | --no-framework] CSV OUT_DIR
    python3 generate.py --check --llmp LLMP [--framework | --no-framework] CSV DIR
    python3 generate.py --needs CSV DIR
    python3 generate.py --llmp LLMP --have=FEATURE,... CSV OUT_DIR   (as if HAVE listed them)

CSV is shared/data/published/megatron_bridge_perf_summary_2509_2602.csv (NVIDIA Megatron-Bridge's
docs/performance-summary-archive.md, containers 25.09 to 26.02.01).  Writes into OUT_DIR one
file per row that llmp can express, with one scenario and its `measured` iteration, and the
table of README.md between its `<!-- rows -->` markers: every row of the CSV, in or out, and
why.  The files are committed; this script is how they were made, and --check (CTest
validation.megatron_bridge_generated) fails unless the files in DIR, and README.md's table,
are what it makes from the CSV today.  Python's standard library only.

LLMP is the llmp binary (build/llmp): which recompute a row's plan assumes is what llmp's
memory model says fits (below), so writing and --check need it, and fail without it.

--framework writes `import "stdlib/frameworks"` and `framework = megatron_bridge` into each
scenario (the software stack, issue 31); --no-framework leaves them out.  The default is
FRAMEWORK below (True).

Which rows are in (README.md says the same, with each row's reason):
- A row is in when llmp has every feature it needs (FEATURES: what each is; HAVE: what llmp
  has) and its own figures agree.  `--needs` prints, per system and model,
  the rows in and the features the others need.
- GPU: DGX-H100 (hw/systems/eos), DGX-B200 (dgx_b200), DGX-B300 (dgx_b300), DGX-GB200 and
  DGX-GB300 (gb200_nvl72, gb300_nvl72: racks of 4-GPU trays; the system files' gpus_per_node
  is checked against SYSTEMS).
- Precision: FP8 with per-tensor current scaling (`FP8-CS`; 25.09's primary `FP8`; 26.02's
  `FP8`) is `fp8`; MXFP8, FP8-MX and 25.09's Blackwell block-scaled FP8 are `mxfp8`; NVFP4 is
  `nvfp4`; BF16 is `bf16`.  25.09's H100 block-scaled FP8 (128x128 blocks, not MXFP8, which
  Hopper lacks) runs FP8 GEMMs at the per-tensor rate: `fp8` (dtype_of says why).
- Model: Llama 3 8B/70B and 3.1 405B (stdlib/models/llama3.llmp), Qwen3-30B-A3B and
  Qwen3-235B-A22B (models.llmp; stdlib/models/qwen3.llmp with feature qk_norm), DeepSeek-V3 (MTP depth 1, or `mtp_layers = 0` for the
  "(w/o MTP)" rows), Kimi-K2, GPT-OSS 120B and Nemotron 3 Nano (stdlib/models/).
- MoE routing: "(tokendrop)" rows route with capacity factor 1.0; "(dropless)" rows and the
  rows that do not say are taken as dropless (Megatron-Core's default without a capacity
  factor; an assumption, stated in each scenario).
- Plan: ep need not divide dp: Megatron-Core folds it over tp x cp x dp (feature ep_fold);
  an ep that does not divide tp x cp x dp is no plan (out).  A row whose ga is not global
  batch / (micro-batch dp), or whose FLOP figure disagrees with its model's other rows
  (ODD_ROWS), is out.

How a row becomes a plan: tp, pp, cp, vp (`virtual_stages`, `schedule = interleaved` when it
is over 1), ep, micro-batch, global batch and sequence from the row; dp = GPUs / (tp pp cp);
fsdp > 0 is Megatron-FSDP over all dp ranks (zero = 3), otherwise the distributed optimizer
(zero = 1); Llama 3.1 405B's 126 layers, where they do not divide into pp x vp chunks but do
with the embedding and the loss counted as a layer each (126 + 2), are laid out so
(stage_layers: the first and the last chunk one layer fewer), as Megatron-Bridge's 405B
recipe sets account_for_embedding/loss_in_pipeline_split (recalled); other layers that do not
divide are split with layer_partition = balanced; where there are fewer layers than chunks, the
first chunk holds the embedding alone and the last the loss (stage_layers, feature layout), as
Megatron-Bridge's recipes count them.  Assumed, as ../nemo_h100 assumes for NeMo (Megatron-Bridge's recipes are not in the
data): sequence parallelism where tp > 1, data-, tensor- and pipeline-parallel communication
overlapped, Adam, flash attention, expert tensor parallelism 1.  DeepSeek-V3 and Kimi-K2 on
DGX-H100 dispatch their tokens with DeepEP (Megatron-Core's flex dispatcher; DeepEP was built
for Hopper with InfiniBand, and Megatron-Bridge's Hopper recipes for these models turn it on:
recalled, not read here), the other rows with the all-to-all.

Recompute: the data does not say what each run recomputes; Megatron-Bridge's recipes set
Megatron's --recompute-granularity (selective or full) where memory needs it, and every row
was measured, so its plan fitted.  The rule: each row's plan is tried with recompute = none,
then selective, then full, and the first that llmp's memory model says fits (`LLMP run
--format json FILE`, its "fits"; LLMP_DATA the repository root, -I OUT_DIR for models.llmp)
is written, its recompute line saying why where it is not none ("# assumed: none does not fit
(llmp's memory model)"; "none and selective do not fit" for full).  Only the rows that do not
fit with none are tried again.  A row that fits with none of the three is out: as the row
states its plan, it cannot have run (26.02.01's Llama 3 70B NVFP4 on 64 GB300s, fsdp 0 with
tp = pp = 1: its unsharded weights and gradients alone exceed the GPU; the same plan's FP8
rows say fsdp 64).

Checked per row, in or out: iteration = gbs x seq / (tokens/s per GPU x GPUs) is the CSV's
step_time_s_derived (to 1e-3), and the model's shapes give the row's model FLOP per token (its
model TFLOP/s over tokens/s) within 1 % by Megatron-Core's count (flop_per_token; where that
count is not the shapes' own, FLOP_NOTES says why and the scenario gives both).
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap

FRAMEWORK = True  # llmp has the `framework` kind and stdlib/frameworks/

SOURCE_URL = ("https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/"
              "docs/performance-summary-archive.md")
CSV_NAME = "shared/data/published/megatron_bridge_perf_summary_2509_2602.csv"

# What each row needs that llmp may lack: feature -> what it is.  HAVE lists those llmp has; a
# row needing one outside HAVE is out, and the table says which.
FEATURES = {
    "b300": "the B300 and hw/systems/dgx_b300",
    "gb200": "the GB200 and hw/systems/gb200_nvl72",
    "gb300": "the GB300 and hw/systems/gb300_nvl72",
    "mxfp8": "the mxfp8 dtype",
    "nvfp4": "the nvfp4 dtype",
    "ep_fold": "ep folded over tp x cp x dp",
    "pattern": "layer patterns",
    "layout": "explicit stage layouts (stage_layers)",
    "mtp": "mtp_layers",
    "mla": "multi-head latent attention layers",
    "swa": "sliding-window attention with sinks",
    "mamba": "Mamba-2, squared-ReLU MoE and hybrid layers",
    "qk_norm": "QK-norm layers, for stdlib/models/qwen3.llmp",
}
HAVE = {"ep_fold", "pattern", "layout", "mtp", "b300", "gb200", "gb300", "mxfp8", "nvfp4", "mla", "swa", "mamba", "qk_norm"}

# system -> (short name, cluster declaration, import, GPUs per node, feature (None: llmp has it)).
# A GB200/GB300 node is a compute tray of 4 GPUs (hw/systems/gb*_nvl72.llmp, checked below).
SYSTEMS = {
    "DGX-H100": ("h100", "eos", "hw/systems/eos", 8, None),
    "DGX-B200": ("b200", "dgx_b200", "hw/systems/dgx_b200", 8, None),
    "DGX-B300": ("b300", "dgx_b300", "hw/systems/dgx_b300", 8, "b300"),
    "DGX-GB200": ("gb200", "gb200_nvl72", "hw/systems/gb200_nvl72", 4, "gb200"),
    "DGX-GB300": ("gb300", "gb300_nvl72", "hw/systems/gb300_nvl72", 4, "gb300"),
}

# Shapes, for the FLOP check (the same figures as the .llmp models).  kind gqa: layers,
# hidden, heads, kv heads, head dim, ffn (dense) or moe_ffn, experts, top_k, vocabulary, gated
# (SwiGLU) or not, window (sliding-window layers, every other one).  kind mla: DeepSeek-V3's
# attention, `dense` dense layers first, a shared expert, mtp MTP layers.  kind hybrid:
# Nemotron-H's Mamba-2, attention and MoE layers.
MODELS = {
    "llama3_8b": dict(kind="gqa", L=32, h=4096, H=32, kv=8, dh=128, ffn=14336, E=0, k=0, V=128256),
    "llama3_70b": dict(kind="gqa", L=80, h=8192, H=64, kv=8, dh=128, ffn=28672, E=0, k=0, V=128256),
    "llama3_405b": dict(kind="gqa", L=126, h=16384, H=128, kv=8, dh=128, ffn=53248, E=0, k=0, V=128256),
    "qwen3_30b_a3b": dict(kind="gqa", L=48, h=2048, H=32, kv=4, dh=128, ffn=768, E=128, k=8, V=151936),
    "qwen3_235b_a22b": dict(kind="gqa", L=94, h=4096, H=64, kv=4, dh=128, ffn=1536, E=128, k=8, V=151936),
    # stdlib/models/deepseek.llmp, kimi_k2.llmp (arXiv 2412.19437, 2507.20534; config.json)
    "deepseek_v3": dict(kind="mla", L=61, dense=3, h=7168, H=128, q_lora=1536, kv_lora=512, nope=128, rope=64,
                        v=128, ffn=18432, moe_ffn=2048, shared=2048, E=256, k=8, mtp=1, V=129280),
    "kimi_k2": dict(kind="mla", L=61, dense=1, h=7168, H=64, q_lora=1536, kv_lora=512, nope=128, rope=64,
                    v=128, ffn=18432, moe_ffn=2048, shared=2048, E=384, k=8, mtp=0, V=163840),
    # stdlib/models/gpt_oss.llmp (arXiv 2508.10925; config.json): 36 layers, every other one
    # attending over a window of 128 tokens.
    "gpt_oss_120b": dict(kind="gqa", L=36, h=2880, H=64, kv=8, dh=64, ffn=2880, E=128, k=4, V=201088,
                         window=128),
    # stdlib/models/nemotron.llmp (Nemotron 3 Nano 30B-A3B config.json)
    "nemotron3_nano": dict(kind="hybrid", h=2688, mamba=23, attn=6, moe=23, H=32, kv=2, dh=128, m_heads=64,
                           m_dh=64, state=128, groups=8, moe_ffn=1856, shared=3712, E=128, k=6, V=131072),
}
# The model sequence each .llmp file sets (a row with another sets seq itself), and the file.
MODEL_SEQ = {"llama3_8b": 8192, "llama3_70b": 8192, "llama3_405b": 8192, "qwen3_30b_a3b": 4096,
             "qwen3_235b_a22b": 4096, "deepseek_v3": 4096, "kimi_k2": 4096, "gpt_oss_120b": 4096,
             "nemotron3_nano": 8192}
MODEL_IMPORT = {"deepseek_v3": "stdlib/models/deepseek", "kimi_k2": "stdlib/models/kimi_k2",
                "gpt_oss_120b": "stdlib/models/gpt_oss", "nemotron3_nano": "stdlib/models/nemotron"}

# Rows out for their own figures: line -> (model, why).
ODD_ROWS = {
    128: ("DeepSeekV3 (dropless)", "its model TFLOP/s (330) over its tokens/s (1297) is 254.4 GFLOP per token, "
          "2.2 % under line 127's 260.6 for the same model, plan and throughput: the table's figures disagree"),
}


# Where Megatron-Core's FLOP count is not the shapes' own, why.
FLOP_NOTES = {
    "gpt_oss_120b": "it counts GPT-OSS's experts as not gated (the clamped SwiGLU is not Megatron's `swiglu`) "
                    "and every layer's attention as full causal, where half the layers attend over 128 tokens.",
    "nemotron3_nano": "its Mamba-2 term takes d_inner = 2 x hidden (5376), where Nano's is 64 heads x 64 (4096).",
}
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))


def fail(msg):
    sys.exit("generate.py: " + msg)


def gqa_flops(m, seq, gated=True, window=False):
    """Model FLOP per token, forward and backward: 6 x the active parameters outside the input
    embedding (attention projections, the MLP or the top-k experts and the router, the LM head)
    + 6 s H dh per causal attention layer (12 w H dh per layer over a window of w, when window)."""
    attn = m["h"] * (m["H"] + 2 * m["kv"]) * m["dh"] + m["H"] * m["dh"] * m["h"]
    up = (3 if gated else 2) * m["h"] * m["ffn"]
    mlp = up * (m["k"] if m["E"] else 1) + (m["h"] * m["E"] if m["E"] else 0)
    core = m["L"] * seq / 2
    if window and m.get("window"):  # half the layers over the window: mean keys w - w(w-1)/2s
        w = m["window"]
        core = m["L"] / 2 * seq / 2 + m["L"] / 2 * (w - w * (w - 1) / (2 * seq))
    return 6 * (m["L"] * (attn + mlp) + m["h"] * m["V"]) + 12 * core * m["H"] * m["dh"]


def mla_flops(m, seq, mtp):
    """Megatron-Core's count (megatron/training/training.py, num_floating_point_operations, with
    multi_latent_attention): per layer the q and kv down- and up-projections with their norms,
    the rope key, the output projection and causal attention over qk and v head dims; the dense
    and MoE MLPs (top-k routed + shared; no router); mtp MTP layers (an MoE layer, two norms
    and the 2h -> h projection each) and their logits."""
    h, H, qk = m["h"], m["H"], m["nope"] + m["rope"]
    n = m["L"] + mtp
    attn = (m["q_lora"] * (h + H * qk + 1) + m["kv_lora"] * (h + H * (m["nope"] + m["v"]) + 1) + h * m["rope"]
            + H * m["v"] * h + seq * H * qk / 2 + seq * H * m["v"] / 2)
    mlp = 3 * h * (m["dense"] * m["ffn"] + (n - m["dense"]) * (m["k"] * m["moe_ffn"] + m["shared"]))
    return 6 * n * attn + 6 * mlp + 6 * mtp * (3 * h + 2 * h * h) + 6 * h * m["V"] * (mtp + 1)


def hybrid_flops(m, seq, d_in=None):
    """Megatron-Core's count for hybrid models (training.py, hybrid_flops): Mamba-2 in_proj,
    scan (7 s d_in state) and out_proj, with d_in = 2 x hidden, the formula's constant (d_in
    given: the model's own); GQA attention; squared-ReLU MoE (top-k routed + shared); logits."""
    h = m["h"]
    d_in = d_in or 2 * h
    mamba = 2 * h * (2 * d_in + 2 * m["groups"] * m["state"] + m["m_heads"]) + 7 * d_in * m["state"] + 2 * d_in * h
    q = m["H"] * m["dh"]
    attn = 4 * q * (h + h * m["kv"] / m["H"] + seq / 2)
    moe = 4 * h * (m["moe_ffn"] * m["k"] + m["shared"])
    return 3 * (m["mamba"] * mamba + m["attn"] * attn + m["moe"] * moe + 2 * h * m["V"])


def flop_per_token(model, seq, mtp=None):
    """(Megatron-Core's count as Megatron-Bridge reports it, the shapes' own count), per token."""
    m = MODELS[model]
    if m["kind"] == "mla":
        f = mla_flops(m, seq, m["mtp"] if mtp is None else mtp)
        return f, f
    if m["kind"] == "hybrid":
        return hybrid_flops(m, seq), hybrid_flops(m, seq, m["m_heads"] * m["m_dh"])
    if model.startswith("gpt_oss"):
        # Megatron-Bridge counts GPT-OSS's experts as not gated (its clamped SwiGLU is not
        # Megatron's `swiglu`) and every layer's attention as full: the rows' figure.
        return gqa_flops(m, seq, gated=False) - 6 * m["L"] * m["h"] * m["E"], gqa_flops(m, seq, window=True)
    f = gqa_flops(m, seq)
    return f, f


def model_of(name):
    """(llmp model, what the row needs, MTP layers or None, routing) for the CSV's model."""
    n = name.lower()
    routing = "tokendrop" if "tokendrop" in n else "dropless" if "dropless" in n else None
    if n == "llama3_8b":
        return "llama3_8b", [], None, None
    if n == "llama3_70b":
        return "llama3_70b", [], None, None
    if n == "llama3.1_405b":
        return "llama3_405b", [], None, None
    if n.startswith("qwen3_30b_a3b"):
        return "qwen3_30b_a3b", [], None, routing
    if n.startswith("qwen3_235b_a22b"):
        return "qwen3_235b_a22b", [], None, routing
    if n.startswith("deepseekv3"):
        # Rows without "(w/o MTP)" count the MTP layer's FLOPs (260 GFLOP per token against
        # 250 without): MTP on, depth 1, DeepSeek-V3's own.
        mtp = 0 if "w/o mtp" in n else None
        return "deepseek_v3", ["pattern", "mla"] + (["mtp"] if mtp is None else []), mtp, routing
    if n.startswith("kimi_k2"):
        return "kimi_k2", ["pattern", "mla"], None, routing
    if n.startswith("gpt oss 120b"):
        return "gpt_oss_120b", ["pattern", "swa"], None, routing
    if n.startswith("nemotron_3_nano"):
        return "nemotron3_nano", ["pattern", "mamba"], None, routing
    fail(f"unknown model {name!r}")


def dtype_of(prec, system):
    """(llmp dtype, what it needs, name suffix)."""
    if prec in ("FP8", "FP8-CS") or prec.startswith("FP8 (25.09 table: primary=per-tensor"):
        return "fp8", [], ""
    if prec == "BF16":
        return "bf16", [], "_bf16"
    if prec.startswith("FP8 block-scaled") and system == "DGX-H100":
        # Hopper has no MXFP8: its block-scaled FP8 (128x128 weight, 1x128 activation blocks)
        # runs the same FP8 tensor-core GEMMs as per-tensor scaling, with the scales applied
        # around them: llmp's fp8 (the scale work is not modelled).
        return "fp8", [], "_fp8block"
    if prec in ("MXFP8", "FP8-MX") or prec.startswith("FP8 block-scaled"):
        return "mxfp8", ["mxfp8"], "_mxfp8"  # 25.09's Blackwell block-scaled FP8 is MXFP8
    if prec == "NVFP4":
        return "nvfp4", ["nvfp4"], "_nvfp4"
    fail(f"unknown precision {prec!r}")


def num(v, default=None):
    if v in ("", "n/a"):
        if default is None:
            fail(f"a value is missing: {v!r}")
        return default
    return int(v)


def classify(row, n):
    """(plan, why): the plan for a sane row (None if its figures disagree) and why it is out
    ([] for a row that is in).  The FLOP check runs on every sane row, in or out."""
    short, cluster, imp, per_node, sys_need = SYSTEMS[row["system"]]
    dtype, needs, suffix = dtype_of(row["precision"], row["system"])
    model, m_needs, mtp, routing = model_of(row["model"])
    needs = ([sys_need] if sys_need else []) + needs + m_needs
    gpus, tp, pp, cp = (num(row[k]) for k in ("n_gpus", "tp", "pp", "cp"))
    vp, ep = num(row["vp"], 1), num(row["ep"], 1)
    mbs, gbs, seq, fsdp = num(row["mbs"]), num(row["gbs"]), num(row["seq_len"]), num(row["fsdp"])
    if gpus % (tp * pp * cp):
        fail(f"line {n}: {gpus} GPUs do not divide into tp {tp} x pp {pp} x cp {cp}")
    dp = gpus // (tp * pp * cp)
    if gbs % (mbs * dp):
        fail(f"line {n}: global batch {gbs} does not divide into micro-batch {mbs} x dp {dp}")
    if gpus % per_node:
        fail(f"line {n}: {gpus} GPUs is not whole {per_node}-GPU nodes")
    why = []
    if row["ga"] and int(row["ga"]) != gbs // (mbs * dp):
        why.append(f"ga {row['ga']}, but global batch / (micro-batch x dp) = {gbs // (mbs * dp)}: the row's plan "
                   "does not add up")
    if model.startswith("llama") and ep != 1:
        fail(f"line {n}: a dense model with ep {ep}")
    if (tp * cp * dp) % ep:
        why.append(f"ep {ep} does not divide tp x cp x dp = {tp * cp * dp} (a pipeline stage's GPUs): no "
                   "Megatron-Core plan has it")
    elif dp % ep:
        needs.append("ep_fold")
    if layers(MODELS[model]) < pp * vp:
        needs.append("layout")
    if fsdp and fsdp != dp:
        why.append(f"fsdp {fsdp} is not dp {dp}")
    if n in ODD_ROWS:
        if ODD_ROWS[n][0] != row["model"]:
            fail(f"line {n} is {row['model']}, not {ODD_ROWS[n][0]}: ODD_ROWS names the wrong line")
        why.append(ODD_ROWS[n][1])
    it = gbs * seq / (float(row["tokens_per_s_per_gpu"]) * gpus)
    if abs(it / float(row["step_time_s_derived"]) - 1) > 1e-3:
        fail(f"line {n}: gbs x seq / (tokens/s x GPUs) = {it:.5g} s, step_time_s_derived {row['step_time_s_derived']}")
    ours, own = flop_per_token(model, seq, mtp)
    theirs = float(row["model_tflops_per_gpu"]) * 1e12 / float(row["tokens_per_s_per_gpu"])
    if n not in ODD_ROWS and abs(ours / theirs - 1) > 0.01:
        fail(f"line {n}: {model} at {seq}: {ours / 1e9:.2f} GFLOP per token, the row {theirs / 1e9:.2f}")
    missing = [f for f in needs if f not in HAVE]
    if missing:
        why.append("needs " + ", ".join(FEATURES[f] for f in missing))
    return dict(model=model, dtype=dtype, suffix=suffix, mtp=mtp, routing=routing, gpus=gpus, tp=tp, pp=pp,
                cp=cp, dp=dp, vp=vp, ep=ep, mbs=mbs, gbs=gbs, seq=seq, fsdp=fsdp, needs=needs,
                it=float(row["step_time_s_derived"]), ours=ours, own=own, theirs=theirs), why


def ident(s):
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def model_import(model):
    """The file a scenario imports for its model: the zoo's, or models.llmp (Llama 3, and
    Qwen3 until stdlib/models/qwen3.llmp's QK-norm layers are in: feature qk_norm)."""
    if model.startswith("qwen3") and "qk_norm" in HAVE:
        return "stdlib/models/qwen3"
    return MODEL_IMPORT.get(model, "models")


def layers(m):
    return m["mamba"] + m["attn"] + m["moe"] if m["kind"] == "hybrid" else m["L"]


def nodes_of(row, p):
    """The scenario's node count; the system file's GPUs per node must be SYSTEMS' figure."""
    short, cluster, imp, per_node, _ = SYSTEMS[row["system"]]
    path = os.path.join(ROOT, imp + ".llmp")
    if os.path.exists(path):
        m = re.search(r"^\s*gpus_per_node\s*=\s*(\d+)", open(path, encoding="utf-8").read(), re.M)
        if not m or int(m.group(1)) != per_node:
            fail(f"{path}: gpus_per_node is not {per_node} (SYSTEMS)")
    return p["gpus"] // per_node


# Recompute, tried in this order (the docstring's rule): the plan's comment and the header's
# words for each, where it fits; RECOMPUTE_NONE_FITS where none of them fits.
RECOMPUTE = {
    "none": ("assumed", "no recompute"),
    "selective": ("assumed: none does not fit (llmp's memory model)",
                  "selective recompute (none does not fit, by llmp's memory model)"),
    "full": ("assumed: none and selective do not fit (llmp's memory model)",
             "full recompute (neither none nor selective fits, by llmp's memory model)"),
}
RECOMPUTE_NONE_FITS = ("assumed: selective and full do not fit either (llmp's memory model)",
                       "no recompute (none, selective and full all overflow llmp's memory model)")


# DeepSeek-V3's and Kimi-K2's 61 layers in pp x vp chunks as Megatron-Bridge's recipes lay
# them out (--pipeline-model-parallel-layout): the embedding with a full chunk, the last chunk
# short for the loss and the MTP layer; 32 chunks as Megatron-LM's DeepSeek-V3 example,
# "Et|(tt|)*30mL".  Recalled, not read here: an assumption, stated in each scenario.
MLA_LAYOUT_MODELS = ("deepseek_v3", "kimi_k2")
MLA_LAYOUTS = {4: [16, 16, 16, 13], 8: [8] * 7 + [5], 16: [4] * 15 + [1], 32: [1] + [2] * 30 + [0]}


def scenario(row, n, p, framework, recompute="none", fits=True, rlayers=None):
    short, cluster, imp, per_node, _ = SYSTEMS[row["system"]]
    container = row["container"].replace(".", "")
    mname = p["model"] + ("_nomtp" if p["mtp"] == 0 else "")
    stem = f"mb{container}_{short}_{mname}_{p['gpus']}gpu{p['suffix']}"
    name = stem
    m = MODELS[p["model"]]
    chunks = p["pp"] * p["vp"]
    balanced = layers(m) % chunks != 0
    tokendrop = p["routing"] == "tokendrop"
    moe = m.get("E", 0) > 0
    model_fields = []
    if p["seq"] != MODEL_SEQ[p["model"]]:
        model_fields.append(f"seq = {p['seq']}")
    if tokendrop:
        model_fields.append("capacity_factor = 1.0")
    if p["mtp"] == 0:
        model_fields.append("mtp_layers = 0")
    model_expr = p["model"] + (" { " + "; ".join(model_fields) + " }" if model_fields else "")
    routing = ""
    if tokendrop:
        routing = ", capacity factor 1.0 (token drop)"
    elif moe and p["routing"] == "dropless":
        routing = ", dropless routing (the row's)"
    elif moe:
        routing = ", dropless routing (the row does not say; Megatron-Core's default without a capacity factor)"
    flop_note = []
    if abs(p["own"] / p["ours"] - 1) > 1e-3:
        flop_note = ["# " + t for t in textwrap.wrap(
            f"The count above is Megatron-Core's, which the row reports; the shapes' own is {p['own'] / 1e9:.2f} "
            f"GFLOP per token: {FLOP_NOTES[p['model']]}", width=92)]
    prec = row["precision"].split(" (")[0]
    rc_comment, rc_words = RECOMPUTE[recompute] if fits else RECOMPUTE_NONE_FITS
    if rlayers:
        rc_words = (f"full recompute of {rlayers} layers of each model chunk (none and selective do not fit; the "
                    "fewest that fit, by llmp's memory model)")
    per_stage = p["gbs"] // (p["mbs"] * p["dp"])
    lines = [
        f"# Megatron-Bridge performance summary, container {row['container']}: {row['model']} on {p['gpus']}",
        f"# {row['system']} GPUs, {prec} ({row['variant']} figure).",
        "#",
        f"# Source: {CSV_NAME}, line {n}, from",
        f"# {row['source']}",
        f"# From the row: {p['gpus']} GPUs, tp {p['tp']}, pp {p['pp']}, cp {p['cp']}, vp {row['vp']}, ep {row['ep']},"
        f" fsdp {p['fsdp']},",
        f"# micro-batch {p['mbs']}, global batch {p['gbs']}, sequence {p['seq']}, {row['tokens_per_s_per_gpu']} tokens/s"
        f" per GPU, {row['model_tflops_per_gpu']}",
        f"# model TFLOP/s per GPU ({p['theirs'] / 1e9:.2f} GFLOP per token; llmp's shapes give {p['ours'] / 1e9:.2f});"
        " step time",
        f"# {p['it']:g} s (step_time_s_derived: global batch x sequence / (tokens/s per GPU x GPUs)).",
        f"# dp = {p['gpus']} / (tp {p['tp']} x pp {p['pp']} x cp {p['cp']}) = {p['dp']}; {per_stage} micro-batches"
        " per step.",
    ] + flop_note + ["# " + t for t in textwrap.wrap(
        "Assumed (README.md): sequence parallel with tp > 1, " + rc_words + ", " +
        ("Megatron-FSDP (zero 3), " if p["fsdp"] else "the distributed optimizer (zero 1), ") +
        ("overlapped dp/tp/pp communication (the stack's, megatron_bridge)" if framework
         else "overlapped dp/tp/pp communication") + routing + (
            ", the embedding and the loss each a chunk of its own (stage_layers: Megatron-Bridge counts them as "
            "layers, account_for_embedding/loss_in_pipeline_split)" if layers(m) < chunks else "") + ".",
        width=92)] + [
        "# Generated by generate.py; edit that, not this.",
        "",
        f'import "{model_import(p["model"])}"',
        f'import "{imp}"',
    ]
    if framework:
        lines.append('import "stdlib/frameworks"')
    lines += ["", f"plan {name}_plan {{"]
    fields = [("tp", p["tp"], None), ("pp", p["pp"], None)]
    if p["cp"] > 1:
        fields.append(("cp", p["cp"], None))
    fields.append(("dp", p["dp"], None))
    if p["ep"] > 1:
        fields.append(("ep", p["ep"], "folded over tp x cp x dp" if p["dp"] % p["ep"] else None))
    fields += [("micro_batch", p["mbs"], None), ("global_batch", p["gbs"], None),
               ("dtype", p["dtype"], "the row's precision")]
    if p["vp"] > 1:
        fields += [("schedule", "interleaved", None), ("virtual_stages", p["vp"], "the row's vp")]
    def counted():
        """Megatron-Bridge's recipes counting the embedding and the loss as a layer each of the
        first and the last chunk (account_for_embedding/loss_in_pipeline_split): layers + 2
        split evenly, those two chunks one transformer layer fewer."""
        per = (layers(m) + 2) // chunks
        return ("stage_layers", f"[{per - 1}, " + ", ".join([str(per)] * (chunks - 2)) + f", {per - 1}]", None)

    if layers(m) < chunks:  # as many chunks as layers + 2: the end chunks hold no layer
        if layers(m) + 2 != chunks:
            fail(f"line {n}: {layers(m)} layers in {chunks} chunks")
        fields.append(counted())
    elif p["model"] in MLA_LAYOUT_MODELS and chunks in MLA_LAYOUTS:
        fields.append(("stage_layers", "[" + ", ".join(map(str, MLA_LAYOUTS[chunks])) + "]",
                       "assumed: Megatron-Bridge's DeepSeek-V3 layout (README.md)"))
    elif balanced and p["model"] == "llama3_405b" and (layers(m) + 2) % chunks == 0:
        # Megatron-Core builds layers / chunks per chunk or fails; Megatron-Bridge's Llama 3.1
        # 405B recipe counts the embedding and the loss (recalled): 126 + 2 = 128 layers
        fields.append(counted())
    elif balanced:
        fields.append(("layer_partition", "balanced",
                       f"{layers(m)} layers do not divide into {chunks} chunks"))
    fields += [("sequence_parallel", "true" if p["tp"] > 1 else "false", "assumed" if p["tp"] > 1 else None),
               ("recompute", recompute, rc_comment)] + (
                  [("recompute_layers", rlayers, "assumed: the fewest per chunk that fit (llmp's memory model)")]
                  if rlayers else []) + [
               ("zero", 3 if p["fsdp"] else 1,
                "the row's fsdp: Megatron-FSDP" if p["fsdp"] else "assumed: distributed optimizer"),
               ("optimizer", "adam", None)]
    if p["model"] in MLA_LAYOUT_MODELS and row["system"] == "DGX-H100" and p["ep"] > 1:
        fields.append(("moe_token_dispatcher", "flex", "assumed: DeepEP on Hopper (README.md)"))
    if not framework:  # with the stack, its defaults (megatron_core: all three true)
        fields[-1:-1] = [("overlap_dp", "true", "assumed"), ("overlap_tp", "true", "assumed"),
                         ("overlap_pp", "true", "assumed")]
    width = max(len(k) for k, _, _ in fields)
    vwidth = max(len(str(v)) for k, v, c in fields if c)
    for k, v, c in fields:
        text = f"  {k.ljust(width)} = {v}"
        if c:
            text = f"  {k.ljust(width)} = {str(v).ljust(vwidth)}  # {c}"
        lines.append(text)
    src = (f"{row['source']} (Megatron-Bridge performance summary, container {row['container']}, {row['system']}, "
           f"{row['model']}, {prec}, {p['gpus']} GPUs); via {CSV_NAME} line {n}")
    sfields = [("model", model_expr), ("cluster", f"{cluster} {{ nodes = {nodes_of(row, p)} }}"),
               ("plan", f"{name}_plan")]
    if framework:
        sfields.append(("framework", "megatron_bridge  # Megatron-Bridge's recipes on Megatron-Core with Transformer Engine"))
    sfields.append(("source", f'"{src}"'))
    width = max(len(k) for k, _ in sfields)
    lines += ["}", "", f"scenario {name} {{"] + [f"  {k.ljust(width)} = {v}" for k, v in sfields]
    lines += ["  measured {  # step_time_s_derived", f"    iteration = {p['it']:g} s", "  }", "}", ""]
    return stem, "\n".join(lines)


ROWS_BEGIN, ROWS_END = "<!-- rows: written by generate.py -->", "<!-- end of rows -->"


def roles(entries, plans):
    """stem -> "calibration" or "validation": stack_factors.py's rule, per GPU (its selector
    `_gpu_` in the name) and per dtype group (bf16; fp8 and mxfp8; nvfp4), the rows at even
    positions (1st, 3rd, ...) in name order calibrate megatron_bridge's figures."""
    out, dtype = {}, {e[2]: p["dtype"] for e, p in zip(entries, plans) if e[2]}
    groups = (("bf16",), ("fp8", "mxfp8"), ("nvfp4",))
    for short, _, _, _, _ in SYSTEMS.values():
        for dts in groups:
            stems = sorted(e[2] for e in entries if e[2] and f"_{short}_" in e[2] and dtype[e[2]] in dts)
            for i, stem in enumerate(stems):
                out[stem] = "calibration" if i % 2 == 0 else "validation"
    return out


def table(entries, plans, chosen):
    role = roles(entries, plans)
    out = [ROWS_BEGIN, "| system | model | rows in | the features its rows need |",
           "|---|---|---|---|"]
    for (system, model), (total, n_in, needs) in sorted(need_groups(entries, plans).items()):
        need = ", ".join(f"{f}{'' if f not in HAVE else ' (in)'}" for f in sorted(needs)) or "-"
        out.append(f"| {system} | {model} | {n_in} of {total} | {need} |")
    out += ["",
           "| line | container | system | model | precision | GPUs | tp/pp/cp/vp/ep | fsdp | mbs/gbs | step (s) | "
           "in? | scenario (role), or why not |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n, row, stem, why in entries:
        prec = row["precision"].split(" (")[0]
        par = "/".join(row[k] for k in ("tp", "pp", "cp", "vp", "ep"))
        out.append(f"| {n} | {row['container']} | {row['system']} | {row['model']} | {prec} | {row['n_gpus']} | "
                   f"{par} | {row['fsdp']} | {row['mbs']}/{row['gbs']} | {row['step_time_s_derived']} | "
                   + (f"in | `{stem}.llmp` ({role[stem]}{rc_note(chosen[stem])}) |" if stem
                      else f"out | {'; '.join(why)} |"))
    n_in = sum(1 for e in entries if e[2])
    out += ["", f"{len(entries)} rows: {n_in} in, {len(entries) - n_in} out.", ROWS_END]
    return "\n".join(out)


def rc_note(choice):
    """The table's word on a row's recompute, where it is not none or nothing fits."""
    rc, fits, _ = choice
    if not fits:
        return "; does not fit in llmp's memory model with any recompute"
    return {"none": "", "selective": "; selective recompute: none does not fit",
            "full": "; full recompute: none and selective do not fit"}[rc]


def need_groups(entries, plans):
    """(system, model) -> [rows, rows in, the features its rows need]."""
    groups = {}
    for (n, row, stem, why), p in zip(entries, plans):
        if p is None:
            continue
        key = (row["system"], p["model"])
        g = groups.setdefault(key, [0, 0, set()])
        g[0] += 1
        g[1] += bool(stem)
        g[2].update(p["needs"])
    return groups


def needs_report(entries, plans):
    """What the rows out for a missing feature need, by system and model (--needs)."""
    for (system, model), (total, n_in, needs) in sorted(need_groups(entries, plans).items()):
        need = ", ".join(sorted(needs)) or "-"
        print(f"{system:10} {model:16} {n_in:3}/{total:<3} in; needs: {need}")
    full = sum(1 for (n, row, stem, why) in entries if all(w.startswith("needs ") for w in why))
    print(f"{len(entries)} rows: {sum(1 for e in entries if e[2])} in today, {full} with every feature of FEATURES")


def fits_by_llmp(llmp, texts, import_dirs):
    """{stem: fits} for each scenario text, by `llmp run --format json` (its "fits"), the
    files written to a temporary folder and run together; LLMP_DATA is this repository."""
    if not texts:
        return {}
    env = dict(os.environ, LLMP_DATA=ROOT)
    with tempfile.TemporaryDirectory(prefix="mb_recompute_") as tmp:
        paths = []
        for stem, text in texts.items():
            paths.append(os.path.join(tmp, stem + ".llmp"))
            with open(paths[-1], "w", encoding="utf-8") as fh:
                fh.write(text)
        cmd = [llmp, "run", "--format", "json"] + [a for d in import_dirs for a in ("-I", d)] + paths
        try:
            r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        except OSError as e:
            fail(f"--llmp {llmp}: {e}")
    if r.returncode != 0:
        fail(f"{llmp} run failed (exit {r.returncode}):\n{r.stderr.strip()}")
    out = {}
    for line in r.stdout.splitlines():
        if line.strip():
            d = json.loads(line)
            out[d["scenario"]] = d["fits"]
    missing = sorted(set(texts) - set(out))
    if missing:
        fail(f"{llmp} run gave no result for {', '.join(missing)}")
    return out


def choose_recompute(llmp, rows_in, framework, import_dirs):
    """{stem: (recompute, fits, text)}: per row, the first of none, selective, full whose plan
    llmp's memory model says fits; none (fits False) where none of them does.  rows_in: stem ->
    (row, line, plan).  Only the rows that do not fit are tried with the next."""
    chosen, left = {}, dict(rows_in)
    for rc in RECOMPUTE:
        texts = {stem: scenario(row, n, p, framework, rc)[1] for stem, (row, n, p) in left.items()}
        fits = fits_by_llmp(llmp, texts, import_dirs)
        for stem in list(left):
            if fits[stem]:
                chosen[stem] = (rc, True, texts[stem])
                del left[stem]
        if not left:
            break
    for stem, (row, n, p) in left.items():
        chosen[stem] = ("none", False, scenario(row, n, p, framework, "none", fits=False)[1])
    # full recompute of the fewest layers per model chunk that fit (Megatron's --recompute-method
    # block --recompute-num-layers): bisected, all rows a round
    span = {}  # stem -> [does not fit, fits, layers per chunk]
    for stem, (rc, fits, _) in chosen.items():
        p = rows_in[stem][2]
        per_chunk = -(-layers(MODELS[p["model"]]) // (p["pp"] * p["vp"]))
        if rc == "full" and fits and per_chunk > 1:
            span[stem] = [0, per_chunk, per_chunk]
    while span:
        texts = {stem: scenario(*rows_in[stem], framework, "full", rlayers=(a + b) // 2)[1]
                 for stem, (a, b, _) in span.items()}
        fits = fits_by_llmp(llmp, texts, import_dirs)
        for stem in list(span):
            a, b, per_chunk = span[stem]
            a, b = (a, (a + b) // 2) if fits[stem] else ((a + b) // 2, b)
            span[stem] = [a, b, per_chunk]
            if b - a == 1:
                if b < per_chunk:
                    chosen[stem] = ("full", True, scenario(*rows_in[stem], framework, "full", rlayers=b)[1])
                del span[stem]
    return chosen


def main():
    args = sys.argv[1:]
    check = "--check" in args
    report = "--needs" in args
    for a in args:  # --have=f1,f2: as if HAVE listed them too (to try a merge before it lands)
        if a.startswith("--have="):
            for f in a[len("--have="):].split(","):
                if f not in FEATURES:
                    fail(f"--have: no feature {f!r} (FEATURES: {', '.join(FEATURES)})")
                HAVE.add(f)
    args = [a for a in args if not a.startswith("--have=")]
    llmp = None
    for i, a in enumerate(args):
        if a.startswith("--llmp="):
            llmp = a[len("--llmp="):]
            del args[i]
            break
        if a == "--llmp":
            if i + 1 >= len(args):
                fail("--llmp needs the llmp binary's path")
            llmp = args[i + 1]
            del args[i:i + 2]
            break
    framework = FRAMEWORK
    if "--framework" in args:
        framework = True
    if "--no-framework" in args:
        framework = False
    args = [a for a in args if a not in ("--check", "--needs", "--framework", "--no-framework")]
    if len(args) != 2:
        fail("usage: generate.py [--check] --llmp LLMP [--framework | --no-framework] CSV OUT_DIR")
    path, out_dir = args
    if not report and not llmp:
        fail("--llmp LLMP (the llmp binary, e.g. build/llmp) is needed to write or --check the folder: each "
             "row's recompute is the first of none, selective, full that llmp's memory model says fits")
    if llmp and not (os.path.isfile(llmp) and os.access(llmp, os.X_OK)):
        fail(f"--llmp {llmp}: not an executable file")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    files, entries, plans, stems, rows_in = {}, [], [], set(), {}
    for n, row in enumerate(rows, start=2):  # line number in the CSV (header is line 1)
        if row["source"] != SOURCE_URL:
            fail(f"line {n}: source {row['source']}, not {SOURCE_URL}")
        p, why = classify(row, n)
        stem, text = scenario(row, n, p, framework)  # every row, to check its name is its own
        if stem in stems:
            fail(f"line {n}: a second row named {stem}")
        stems.add(stem)
        if why:
            stem = None
        else:
            rows_in[stem] = (row, n, p)
        entries.append((n, row, stem, why))
        plans.append(p)
    if report:
        needs_report(entries, plans)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    chosen = choose_recompute(llmp, rows_in, framework, [out_dir] + ([here] if os.path.abspath(out_dir) != here else []))
    for i, (n, row, stem, why) in enumerate(entries):  # a plan that fits under no recompute is out
        if stem and not chosen[stem][1]:
            entries[i] = (n, row, None, "its plan fits in llmp's memory model under no recompute (none, selective, "
                          "full): as the row states it, it cannot have run")
            del rows_in[stem], chosen[stem]
    for stem in rows_in:
        files[stem + ".llmp"] = chosen[stem][2]
    rows_md = table(entries, plans, chosen)
    counts = {}
    for stem, (rc, fits, _) in sorted(chosen.items()):
        counts.setdefault(rc if fits else "nothing fits", []).append(stem)
    rc_summary = "; ".join(f"{k}: {len(v)}" for k, v in counts.items())
    readme = os.path.join(out_dir, "README.md")
    text = open(readme, encoding="utf-8").read() if os.path.exists(readme) else ""
    if ROWS_BEGIN not in text or ROWS_END not in text:
        fail(f"{readme} has no {ROWS_BEGIN} ... {ROWS_END} section")
    new_readme = text[:text.index(ROWS_BEGIN)] + rows_md + text[text.index(ROWS_END) + len(ROWS_END):]
    existing = {f for f in os.listdir(out_dir) if re.match(r"mb\d+_.*\.llmp$", f)} if os.path.isdir(out_dir) else set()
    if check:
        stale = [f for f, t in files.items()
                 if not os.path.exists(os.path.join(out_dir, f))
                 or open(os.path.join(out_dir, f), encoding="utf-8").read() != t]
        stale += sorted(existing - set(files))
        if new_readme != text:
            stale.append("README.md's table")
        if stale:
            fail(f"{', '.join(stale)} in {out_dir} differ from what {path} makes: run generate.py CSV DIR")
        print(f"generate.py: the {len(files)} scenarios and README.md's table of {out_dir} are what {path} makes "
              f"({len(entries)} rows, {len(files)} in; recompute {rc_summary})")
        return
    for f in existing - set(files):
        os.remove(os.path.join(out_dir, f))
    for f, t in files.items():
        with open(os.path.join(out_dir, f), "w", encoding="utf-8") as fh:
            fh.write(t)
    with open(readme, "w", encoding="utf-8") as fh:
        fh.write(new_readme)
    print(f"generate.py: wrote {len(files)} scenarios of {len(entries)} rows to {out_dir} (recompute {rc_summary})")
    for k, v in counts.items():
        if k != "none":
            print(f"  {k}: {', '.join(v)}")


if __name__ == "__main__":
    main()
