#!/usr/bin/env python3
"""generate.py - Megatron-Bridge's performance summary as llmp scenarios.

    python3 generate.py [--framework | --no-framework] CSV OUT_DIR
    python3 generate.py --check [--framework | --no-framework] CSV DIR

CSV is shared/data/published/megatron_bridge_perf_summary_2509_2602.csv (NVIDIA Megatron-Bridge's
docs/performance-summary-archive.md, containers 25.09 to 26.02.01).  Writes into OUT_DIR one
file per row that llmp can express, with one scenario and its `measured` iteration, and the
table of README.md between its `<!-- rows -->` markers: every row of the CSV, in or out, and
why.  The files are committed; this script is how they were made, and --check (CTest
validation.megatron_bridge_generated) fails unless the files in DIR, and README.md's table,
are what it makes from the CSV today.  Python's standard library only.

--framework writes `import "stdlib/frameworks"` and `framework = megatron_core` into each
scenario (the software stack, issue 31); --no-framework leaves them out.  The default is
FRAMEWORK below (True).

Which rows are in (README.md says the same, with each row's reason):
- GPU: DGX-H100 (hw/systems/eos.llmp) and DGX-B200 (hw/systems/dgx_b200.llmp).  GB200,
  GB300 and B300 are not in hw/gpus.llmp: out.
- Precision: FP8 with per-tensor current scaling (`FP8-CS`; 25.09's primary `FP8`; 26.02's
  `FP8`, on H100 the configurations 25.11 calls FP8-CS) is llmp's `fp8`; BF16 is `bf16`.
  MXFP8, FP8-MX and 25.09's block-scaled FP8 (MXFP8 on Blackwell, 128x128 blocks on H100) and
  NVFP4 are not dtypes llmp has: out.
- Model: Llama 3 8B/70B and 3.1 405B (stdlib/models/llama3.llmp), Qwen3-30B-A3B and
  Qwen3-235B-A22B (models.llmp: every layer MoE, no shared expert, which stdlib's MoE
  operators express).  DeepSeek-V3 and Kimi-K2 (multi-head latent attention, dense first
  layers), GPT-OSS 120B (sliding-window attention on alternate layers, attention sinks) and
  Nemotron 3 Nano (Mamba-2 hybrid) are not: out.
- MoE routing: only the 25.09 "(tokendrop)" Qwen3 rows say how they route (token drop at
  capacity factor 1, which llmp's balanced routing states exactly); the other Qwen3 rows do
  not, and the same plan's throughput moves 1.8x between containers: out.
- Plan: ep must divide dp (llmp carves the expert-parallel group out of dp; Megatron-Core
  folds it over tp x cp x dp).  A row whose ep does not is out.

How a row becomes a plan: tp, pp, cp, vp (`virtual_stages`, `schedule = interleaved` when it
is over 1), ep, micro-batch, global batch and sequence from the row; dp = GPUs / (tp pp cp)
(the row's ga, where given, must be global batch / (micro-batch dp): checked); fsdp > 0 is
Megatron-FSDP over all dp ranks (zero = 3), otherwise the distributed optimizer (zero = 1);
layers that do not divide into pp x vp chunks are split with layer_partition = balanced.
Assumed, as ../nemo_h100 assumes for NeMo (Megatron-Bridge's recipes are not in the data):
sequence parallelism where tp > 1, no activation recompute, data-, tensor- and
pipeline-parallel communication overlapped, Adam, flash attention; the 25.09 "tokendrop" MoE
rows route with capacity factor 1.0.

Checked per row written: iteration = gbs x seq / (tokens/s per GPU x GPUs) is the CSV's
step_time_s_derived (to 1e-3), and llmp's shapes give the row's model FLOP per token (its
model TFLOP/s over tokens/s) within 1 %, with the FLOP count 6 (active parameters outside
the input embedding) + 6 L s H dh (causal attention), per token.
"""
import csv
import os
import re
import sys
import textwrap

FRAMEWORK = True  # llmp has the `framework` kind and stdlib/frameworks/

SOURCE_URL = ("https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/"
              "docs/performance-summary-archive.md")
CSV_NAME = "shared/data/published/megatron_bridge_perf_summary_2509_2602.csv"

# system -> (short name, cluster declaration, import)
SYSTEMS = {
    "DGX-H100": ("h100", "eos", "hw/systems/eos"),
    "DGX-B200": ("b200", "dgx_b200", "hw/systems/dgx_b200"),
}

# Shapes, for the FLOP check: layers, hidden, heads, kv heads, head dim, ffn (dense) or
# moe_ffn, experts, top_k, vocabulary.  The same figures as the .llmp models.
MODELS = {
    "llama3_8b": dict(L=32, h=4096, H=32, kv=8, dh=128, ffn=14336, E=0, k=0, V=128256),
    "llama3_70b": dict(L=80, h=8192, H=64, kv=8, dh=128, ffn=28672, E=0, k=0, V=128256),
    "llama3_405b": dict(L=126, h=16384, H=128, kv=8, dh=128, ffn=53248, E=0, k=0, V=128256),
    "qwen3_30b_a3b": dict(L=48, h=2048, H=32, kv=4, dh=128, ffn=768, E=128, k=8, V=151936),
    "qwen3_235b_a22b": dict(L=94, h=4096, H=64, kv=4, dh=128, ffn=1536, E=128, k=8, V=151936),
}
MODEL_SEQ = {"llama3_8b": 8192, "llama3_70b": 8192, "llama3_405b": 8192, "qwen3_30b_a3b": 4096,
             "qwen3_235b_a22b": 4096}


def fail(msg):
    sys.exit("generate.py: " + msg)


def flop_per_token(m, seq):
    """Model FLOP per token, forward and backward: 6 x the active parameters outside the input
    embedding (attention projections, the SwiGLU MLP or the top-k experts and the router, the LM
    head) + 6 L s H dh for causal attention's two batched matrix products."""
    attn = m["h"] * (m["H"] + 2 * m["kv"]) * m["dh"] + m["H"] * m["dh"] * m["h"]
    mlp = 3 * m["h"] * m["ffn"] * (m["k"] if m["E"] else 1) + (m["h"] * m["E"] if m["E"] else 0)
    return 6 * (m["L"] * (attn + mlp) + m["h"] * m["V"]) + 6 * m["L"] * seq * m["H"] * m["dh"]


def model_of(name):
    """(llmp model, None) or (None, why it is out)."""
    n = name.lower()
    if n == "llama3_8b":
        return "llama3_8b", None
    if n == "llama3_70b":
        return "llama3_70b", None
    if n == "llama3.1_405b":
        return "llama3_405b", None
    if n.startswith("qwen3_30b_a3b"):
        return "qwen3_30b_a3b", None
    if n.startswith("qwen3_235b_a22b"):
        return "qwen3_235b_a22b", None
    if n.startswith("deepseekv3"):
        return None, "DeepSeek-V3: multi-head latent attention and 3 dense layers before the MoE ones (no llmp block)"
    if n.startswith("kimi_k2"):
        return None, "Kimi-K2: DeepSeek-V3's architecture (multi-head latent attention, a dense first layer)"
    if n.startswith("gpt oss"):
        return None, "GPT-OSS: sliding-window attention on every other layer and attention sinks (no llmp operator)"
    if n.startswith("nemotron_3_nano"):
        return None, "Nemotron 3 Nano: Mamba-2 hybrid (no llmp operator)"
    fail(f"unknown model {name!r}")


def dtype_of(prec):
    """(llmp dtype, None) or (None, why it is out)."""
    if prec in ("FP8", "FP8-CS") or prec.startswith("FP8 (25.09 table: primary=per-tensor"):
        return "fp8", None
    if prec == "BF16":
        return "bf16", None
    if prec in ("MXFP8", "FP8-MX") or prec.startswith("FP8 block-scaled"):
        return None, f"{prec.split(' (')[0]}: block-scaled FP8, not an llmp dtype"
    if prec == "NVFP4":
        return None, "NVFP4: not an llmp dtype"
    fail(f"unknown precision {prec!r}")


def num(v, default=None):
    if v in ("", "n/a"):
        if default is None:
            fail(f"a value is missing: {v!r}")
        return default
    return int(v)


def classify(row, n):
    """(plan dict, None) or (None, why the row is out)."""
    why = []
    if row["system"] not in SYSTEMS:
        why.append(f"{row['system']}: GPU not in hw/gpus.llmp")
    dtype, w = dtype_of(row["precision"])
    if w:
        why.append(w)
    model, w = model_of(row["model"])
    if w:
        why.append(w)
    gpus, tp, pp, cp = (num(row[k]) for k in ("n_gpus", "tp", "pp", "cp"))
    vp, ep = num(row["vp"], 1), num(row["ep"], 1)
    mbs, gbs, seq, fsdp = num(row["mbs"]), num(row["gbs"]), num(row["seq_len"]), num(row["fsdp"])
    if gpus % (tp * pp * cp):
        fail(f"line {n}: {gpus} GPUs do not divide into tp {tp} x pp {pp} x cp {cp}")
    dp = gpus // (tp * pp * cp)
    if gbs % (mbs * dp):
        fail(f"line {n}: global batch {gbs} does not divide into micro-batch {mbs} x dp {dp}")
    ga_note = None
    if row["ga"] and int(row["ga"]) != gbs // (mbs * dp):
        ga_note = f"ga {row['ga']}, but global batch / (micro-batch x dp) = {gbs // (mbs * dp)}"
    if model and model.startswith("llama") and ep != 1:
        fail(f"line {n}: a dense model with ep {ep}")
    if dp % ep:
        why.append(f"ep {ep} does not divide dp {dp} (README.md, Plan)")
    if model and model.startswith("qwen3") and "tokendrop" not in row["model"]:
        why.append("MoE routing not stated (README.md, MoE routing)")
    if fsdp and fsdp != dp:
        why.append(f"fsdp {fsdp} is not dp {dp}")
    if why:
        return None, "; ".join(why + ([f"(also: {ga_note})"] if ga_note else []))
    if ga_note:
        fail(f"line {n}: {ga_note}")
    it = gbs * seq / (float(row["tokens_per_s_per_gpu"]) * gpus)
    if abs(it / float(row["step_time_s_derived"]) - 1) > 1e-3:
        fail(f"line {n}: gbs x seq / (tokens/s x GPUs) = {it:.5g} s, step_time_s_derived {row['step_time_s_derived']}")
    ours = flop_per_token(MODELS[model], seq)
    theirs = float(row["model_tflops_per_gpu"]) * 1e12 / float(row["tokens_per_s_per_gpu"])
    if abs(ours / theirs - 1) > 0.01:
        fail(f"line {n}: {model} at {seq}: {ours / 1e9:.2f} GFLOP per token, the row {theirs / 1e9:.2f}")
    return dict(model=model, dtype=dtype, gpus=gpus, tp=tp, pp=pp, cp=cp, dp=dp, vp=vp, ep=ep, mbs=mbs,
                gbs=gbs, seq=seq, fsdp=fsdp, it=float(row["step_time_s_derived"]), ours=ours,
                theirs=theirs), None


def ident(s):
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def scenario(row, n, p, framework):
    short, cluster, imp = SYSTEMS[row["system"]]
    container = row["container"].replace(".", "")
    stem = f"mb{container}_{short}_{p['model']}_{p['gpus']}gpu"
    name = stem
    m = MODELS[p["model"]]
    chunks = p["pp"] * p["vp"]
    balanced = m["L"] % chunks != 0
    tokendrop = "tokendrop" in row["model"]
    model_fields = []
    if p["seq"] != MODEL_SEQ[p["model"]]:
        model_fields.append(f"seq = {p['seq']}")
    if tokendrop:
        model_fields.append("capacity_factor = 1.0")
    model_expr = p["model"] + (" { " + "; ".join(model_fields) + " }" if model_fields else "")
    prec = row["precision"].split(" (")[0]
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
    ] + ["# " + t for t in textwrap.wrap(
        "Assumed (README.md): sequence parallel with tp > 1, no recompute, " +
        ("Megatron-FSDP (zero 3), " if p["fsdp"] else "the distributed optimizer (zero 1), ") +
        ("overlapped dp/tp/pp communication (the stack's, megatron_core)" if framework
         else "overlapped dp/tp/pp communication") + (", capacity factor 1.0 (token drop)" if tokendrop else "") + ".",
        width=92)] + [
        "# Generated by generate.py; edit that, not this.",
        "",
        'import "models"',
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
        fields.append(("ep", p["ep"], None))
    fields += [("micro_batch", p["mbs"], None), ("global_batch", p["gbs"], None),
               ("dtype", p["dtype"], "the row's precision")]
    if p["vp"] > 1:
        fields += [("schedule", "interleaved", None), ("virtual_stages", p["vp"], "the row's vp")]
    if balanced:
        fields.append(("layer_partition", "balanced",
                       f"{m['L']} layers do not divide into {chunks} chunks"))
    fields += [("sequence_parallel", "true" if p["tp"] > 1 else "false", "assumed" if p["tp"] > 1 else None),
               ("recompute", "none", "assumed"),
               ("zero", 3 if p["fsdp"] else 1,
                "the row's fsdp: Megatron-FSDP" if p["fsdp"] else "assumed: distributed optimizer"),
               ("optimizer", "adam", None)]
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
    sfields = [("model", model_expr), ("cluster", f"{cluster} {{ nodes = {p['gpus'] // 8} }}"),
               ("plan", f"{name}_plan")]
    if framework:
        sfields.append(("framework", "megatron_core  # Megatron-Bridge: Megatron-Core with Transformer Engine"))
    sfields.append(("source", f'"{src}"'))
    width = max(len(k) for k, _ in sfields)
    lines += ["}", "", f"scenario {name} {{"] + [f"  {k.ljust(width)} = {v}" for k, v in sfields]
    lines += ["  measured {  # step_time_s_derived", f"    iteration = {p['it']:g} s", "  }", "}", ""]
    if p["gpus"] % 8:
        fail(f"line {n}: {p['gpus']} GPUs is not whole 8-GPU nodes")
    return stem, "\n".join(lines)


ROWS_BEGIN, ROWS_END = "<!-- rows: written by generate.py -->", "<!-- end of rows -->"


def table(entries):
    out = [ROWS_BEGIN,
           "| line | container | system | model | precision | GPUs | tp/pp/cp/vp/ep | fsdp | mbs/gbs | step (s) | "
           "in? | scenario, or why not |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n, row, stem, why in entries:
        prec = row["precision"].split(" (")[0]
        par = "/".join(row[k] for k in ("tp", "pp", "cp", "vp", "ep"))
        out.append(f"| {n} | {row['container']} | {row['system']} | {row['model']} | {prec} | {row['n_gpus']} | "
                   f"{par} | {row['fsdp']} | {row['mbs']}/{row['gbs']} | {row['step_time_s_derived']} | "
                   + (f"in | `{stem}.llmp` |" if stem else f"out | {why} |"))
    n_in = sum(1 for e in entries if e[2])
    out += ["", f"{len(entries)} rows: {n_in} in, {len(entries) - n_in} out.", ROWS_END]
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    check = "--check" in args
    framework = FRAMEWORK
    if "--framework" in args:
        framework = True
    if "--no-framework" in args:
        framework = False
    args = [a for a in args if a not in ("--check", "--framework", "--no-framework")]
    if len(args) != 2:
        fail("usage: generate.py [--check] [--framework | --no-framework] CSV OUT_DIR")
    path, out_dir = args
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    files, entries = {}, []
    for n, row in enumerate(rows, start=2):  # line number in the CSV (header is line 1)
        if row["source"] != SOURCE_URL:
            fail(f"line {n}: source {row['source']}, not {SOURCE_URL}")
        p, why = classify(row, n)
        stem = None
        if p:
            stem, text = scenario(row, n, p, framework)
            if stem + ".llmp" in files:
                fail(f"line {n}: a second row named {stem}")
            files[stem + ".llmp"] = text
        entries.append((n, row, stem, why))
    rows_md = table(entries)
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
              f"({len(entries)} rows, {len(files)} in)")
        return
    for f in existing - set(files):
        os.remove(os.path.join(out_dir, f))
    for f, t in files.items():
        with open(os.path.join(out_dir, f), "w", encoding="utf-8") as fh:
            fh.write(t)
    with open(readme, "w", encoding="utf-8") as fh:
        fh.write(new_readme)
    print(f"generate.py: wrote {len(files)} scenarios of {len(entries)} rows to {out_dir}")


if __name__ == "__main__":
    main()
