#!/usr/bin/env python3
"""generate.py - NeMo's long-sequence runs on H100 (context parallelism) as llmp scenarios.

    python3 generate.py PUBLISHED_DIR OUT_DIR
    python3 generate.py --check PUBLISHED_DIR DIR

PUBLISHED_DIR is shared/data/published.  Reads nemo_long_context_cp.csv and writes into
OUT_DIR llama2_7b_h100.llmp: one scenario per DGX-H100 row (Llama 2 7B, FP8, sequences of 4K
to 1M tokens on 4 to 1,024 GPUs, context parallelism up to 32), each with its `measured`
iteration.  The file is committed; this script is how it was made, and --check (CTest
validation.nemo_long_context_generated) fails unless the file in DIR is what it makes from
the CSV today.  Python's standard library only.

The CSV gives TFLOP/s per GPU, not time.  The time is recovered with NeMo's FLOP formula for
Llama 2 (per token: h^2 L (12 + 12 G/H + 18 F/h + 12 s/h + 6 V / (L h)), full, not causal,
attention; h hidden, L layers, G query groups, H heads, F FFN width, s sequence, V vocabulary):

    iteration = global_batch x s x FLOP per token / (TFLOP/s per GPU x GPUs)

The formula is checked here against a row that gives both figures: NeMo 24.07's LLAMA2-7B
pre-training row in nemo_2407_h100_perf_summary.csv (780 TFLOP/s at 16,934 tokens/s per GPU,
46.06 GFLOP per token; the formula gives 46.08).  The B200 rows are left out: the CSV flags
each (tp x pp x dp x cp is a quarter of the GPU count: a typo in the source table), so their
plans are not known.

How a row becomes a plan: tp, pp, dp and cp as the row gives them (checked: their product is
the GPU count); the rest is assumed, NeMo's defaults for its Llama recipes, as in ../nemo_h100:
micro-batch 1, sequence parallelism where tp > 1, no activation recompute, the distributed
optimizer (zero = 1), one virtual stage (1F1B), fp8 linears (Transformer Engine) and flash
attention; the cluster is Eos (DGX H100) with the row's node count (8 GPUs a node; the 4-GPU
row uses half a node).  The stack is megatron_core (stdlib/frameworks/megatron.llmp): its
overlapped data- and tensor-parallel communication; pipeline sends are not overlapped under
1F1B (Megatron forces --overlap-p2p-communication off without interleaving), which the one
row with pp > 1 says.
"""
import csv
import os
import sys

# Llama 2 7B (stdlib/models/llama2.llmp): hidden, layers, heads, kv heads, FFN, vocabulary.
H, L, HEADS, GROUPS, FFN, VOCAB = 4096, 32, 32, 32, 11008, 32000


def flop_per_token(seq):
    """NeMo's Llama 2 model FLOP per token (forward and backward, full attention)."""
    return H * H * L * (12 + 12 * GROUPS / HEADS + 18 * FFN / H + 12 * seq / H + 6 * VOCAB / (L * H))


def fail(msg):
    sys.exit("generate.py: " + msg)


def check_formula(published):
    path = os.path.join(published, "nemo_2407_h100_perf_summary.csv")
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["model"] == "LLAMA2-7B" and row["task"] == "pretrain":
                seq = int(row["seq_len"])
                measured = float(row["model_tflops_per_gpu"]) * 1e12 / float(row["tokens_per_s_per_gpu"])
                ours = flop_per_token(seq)
                if abs(ours / measured - 1) > 0.005:
                    fail("%s: NeMo's FLOP formula gives %.4g per token, the row %.4g" % (path, ours, measured))
                return measured, ours
    fail("%s: no LLAMA2-7B pretrain row to check the FLOP formula against" % path)


def scenario(row, line):
    seq = int(row["seq_len_k"]) * 1024
    gpus, gbs = int(row["n_gpus"]), int(row["global_batch_seqs"])
    tp, pp, dp, cp = (int(row[k]) for k in ("tp", "pp", "dp", "cp"))
    if tp * pp * dp * cp != gpus:
        fail("line %d: tp %d x pp %d x dp %d x cp %d is not %d GPUs" % (line, tp, pp, dp, cp, gpus))
    if gbs * seq != int(row["tokens_per_batch"]):
        fail("line %d: %d sequences of %d tokens are not %s tokens" % (line, gbs, seq, row["tokens_per_batch"]))
    if gbs % dp:
        fail("line %d: global batch %d does not divide over dp %d" % (line, gbs, dp))
    tflops = float(row["tflops_per_gpu_with_cp"])
    iteration = gbs * seq * flop_per_token(seq) / (tflops * 1e12 * gpus)
    nodes = max(1, gpus // 8)
    name = "nemo_llama2_7b_s%dk_%dgpu" % (seq // 1024, gpus)
    # Megatron turns --overlap-p2p-communication off without interleaving (one virtual stage here)
    pp_line = "\n  overlap_pp        = false  # 1F1B: Megatron overlaps P2P only when interleaved" if pp > 1 else ""

    def c(value):
        """A value padded so that the plan's comments line up as `llmp fmt` lays them out."""
        return value.ljust(len("false" if pp > 1 else "none") + 2)
    cluster = "eos { nodes = %d }" % nodes if gpus >= 8 else "eos { nodes = 1; gpus_per_node = %d }" % gpus
    src = "%s (%s, %s, %dK tokens, %d GPUs); via shared/data/published/nemo_long_context_cp.csv line %d" % (
        row["source"], row["table"], row["container"], seq // 1024, gpus, line)
    return f"""
# Line {line}: {row['table']}, {row['container']}: sequence {seq} ({row['seq_len_k']}K), {gpus} GPUs,
# global batch {gbs}, tp {tp} pp {pp} dp {dp} cp {cp}, {row['tflops_per_gpu_with_cp']} TFLOP/s per GPU
# ({row['tflops_per_gpu_without_cp']} without context parallelism): iteration {gbs} x {seq} x
# {flop_per_token(seq) / 1e9:.2f} GFLOP / ({tflops:g} TFLOP/s x {gpus}) = {iteration:.4f} s.
plan {name}_plan {{
  tp                = {tp}
  pp                = {pp}
  dp                = {dp}
  cp                = {cp}
  micro_batch       = {c('1')}# assumed
  global_batch      = {gbs}
  dtype             = fp8
  sequence_parallel = {'true' if tp > 1 else 'false'}
  recompute         = {c('none')}# assumed
  zero              = {c('1')}# assumed: distributed optimizer{pp_line}
  optimizer         = adam
}}

scenario {name} {{
  model     = llama2_7b {{ seq = {seq} }}
  cluster   = {cluster}
  plan      = {name}_plan
  framework = megatron_core  # NeMo 24.03.01: its recipe settings not read, Megatron-Core's
  source    = "{src}"
  measured {{  # from TFLOP/s per GPU with NeMo's FLOP formula (above)
    iteration = {iteration:.4f} s
  }}
}}
"""


def main():
    check = len(sys.argv) == 4 and sys.argv[1] == "--check"
    if check:
        del sys.argv[1]
    if len(sys.argv) != 3:
        fail("usage: generate.py [--check] PUBLISHED_DIR OUT_DIR")
    published, out = sys.argv[1], sys.argv[2]
    measured, ours = check_formula(published)
    path = os.path.join(published, "nemo_long_context_cp.csv")
    parts = [f"""# NeMo's long-sequence performance table on DGX H100: Llama 2 7B, FP8, context parallelism.
# Generated by generate.py from shared/data/published/nemo_long_context_cp.csv (the DGX-H100
# rows); do not edit: run `python3 generate.py shared/data/published .` here.  The iteration
# times come from the rows' TFLOP/s per GPU with NeMo's FLOP formula for Llama 2, checked
# against NeMo 24.07's LLAMA2-7B row ({measured / 1e9:.2f} GFLOP per token measured, {ours / 1e9:.2f} by
# the formula).  Assumptions: README.md.

import "stdlib/models/llama2"
import "stdlib/frameworks/megatron"
import "hw/systems/eos"
"""]
    n = 0
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), 2):
            if row["system"] != "DGX-H100":
                continue
            if row.get("consistency_flag"):
                fail("line %d: flagged `%s`" % (line, row["consistency_flag"]))
            parts.append(scenario(row, line))
            n += 1
    if n == 0:
        fail("%s: no DGX-H100 rows" % path)
    text = "".join(parts)
    target = os.path.join(out, "llama2_7b_h100.llmp")
    if check:
        with open(target) as f:
            if f.read() != text:
                fail("%s is not what generate.py makes from %s today: regenerate it" % (target, path))
        print("generate.py: %s matches %s (%d scenarios)" % (target, path, n))
        return
    with open(target, "w") as f:
        f.write(text)
    print("generate.py: wrote %d scenarios to %s" % (n, target))


if __name__ == "__main__":
    main()
