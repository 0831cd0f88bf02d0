#!/usr/bin/env python3
"""Recompute the calibration of h100_sxm's two sustained figures (hw/gpus.llmp).

The H100's operator tables (hw/calibration/h100-sxm5-80gb-hbm3) hold what one GPU reaches in a
short benchmark (hw/probe). Two end-to-end figures, the fraction of that tensor-core rate a
training run sustains, scale them at prediction, each set on published runs of its own precision:

- `sustained_compute` (bf16, fp16 and every other type but fp8) on MosaicML llm-foundry's H100
  bf16 runs at sequences up to 4096 (tests/validation/scenarios/mosaicml/h100_80gb.llmp: 53 of
  its 77 rows; PyTorch FSDP, MPT 125M-70B, 8-512 GPUs, with and without activation
  checkpointing). Longer sequences are left out because attention is most of their time there,
  and the flash-attention kernel those runs used is not the one the tables sampled: their error
  is that kernel's, not the GEMMs' rate. The fp8 rows are the second figure's.
- `sustained_compute_fp8` (the fp8 GEMMs of Transformer Engine's recipe) on NeMo 24.07's nine
  H100 pre-training runs (tests/validation/scenarios/nemo_h100: GPT-3 5B-175B, Llama 2 and 3,
  8-512 GPUs, Megatron-Core in fp8), with `sustained_compute` at its shipped value (their
  attention and the rest run in bf16).

The rule, for each: the value on a grid of STEP in [LO, HI] that gives its runs the least mean
absolute error. This program scans both grids, in that order, with patched copies of hw/ and
fails unless each shipped value is its minimiser, so a change to the model that moves a minimum
says to recalibrate here rather than pass unnoticed.

Megatron-Core's H100 weak-scaling table (tests/validation/scenarios/h100_weak_scaling, bf16)
and MLPerf's runs (tests/validation/scenarios/mlperf, fp8) are not read: they validate the
figures.

usage: sustained_compute.py LLMP REPO_ROOT
"""
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

LO, HI, STEP = 0.400, 1.000, 0.005


def mosaicml_bf16_short(name):
    """An H100 bf16 MosaicML row at a sequence of at most 4096 (generate.py's names)."""
    m = re.match(r"h100_mpt_\w+?_s(\d+)_", name)
    return bool(m) and int(m.group(1)) <= 4096 and not name.endswith("_fp8")


# (field, what, scenario path under the repository, which rows of it)
FIGURES = [
    ("sustained_compute", "MosaicML H100 bf16 runs, seq <= 4096",
     "tests/validation/scenarios/mosaicml/h100_80gb.llmp", mosaicml_bf16_short),
    ("sustained_compute_fp8", "NeMo H100 fp8 runs",
     "tests/validation/scenarios/nemo_h100", lambda name: True),
]


def field_re(field):
    return re.compile(r"(gpu h100_sxm \{[^}]*?\n  " + field + r" += )([0-9.]+)", re.S)


def mean_error(llmp, hw_root, scenarios, keep):
    out = subprocess.run([llmp, "validate", "--no-jit", "--format", "csv", "-I", hw_root, scenarios],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"llmp validate failed ({out.returncode}): {out.stderr}")
    rows = [r for r in csv.DictReader(io.StringIO(out.stdout)) if keep(r["scenario"])]
    errs = [abs(float(r["error_pct"])) for r in rows if r["error_pct"] not in ("", "-")]
    if len(errs) != len(rows) or not rows:
        sys.exit(f"every chosen scenario of {scenarios} must predict a time:\n{out.stdout}")
    return sum(errs) / len(errs), len(errs)


def scan(llmp, tmp, gpus, field, scenarios, keep):
    """The grid's (value, mean |error|) pairs for `field`, the others as in `gpus`."""
    path = os.path.join(tmp, "hw", "gpus.llmp")
    pattern = field_re(field)
    curve = []
    for i in range(int(round((HI - LO) / STEP)) + 1):
        s = LO + i * STEP
        with open(path, "w", encoding="utf-8") as f:
            f.write(pattern.sub(lambda g: g.group(1) + f"{s:.3f}", gpus, count=1))
        e, rows = mean_error(llmp, tmp, scenarios, keep)
        curve.append((s, e))
    return curve, rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    llmp, root = sys.argv[1], sys.argv[2]
    gpus = open(os.path.join(root, "hw", "gpus.llmp"), encoding="utf-8").read()
    wrong = []
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(root, "hw"), os.path.join(tmp, "hw"))
        for field, what, rel, keep in FIGURES:
            m = field_re(field).search(gpus)
            if not m:
                sys.exit(f"hw/gpus.llmp: no `{field} = ` line in gpu h100_sxm")
            shipped = float(m.group(2))
            curve, rows = scan(llmp, tmp, gpus, field, os.path.join(root, rel), keep)
            best = min(curve, key=lambda p: p[1])
            near = [f"{s:.3f}: {e:.2f} %" for s, e in curve if abs(s - best[0]) <= 2.5 * STEP]
            print(f"{field}, {what} ({rows}): mean |error| " + ", ".join(near))
            print(f"  minimiser {best[0]:.3f} ({best[1]:.2f} %), shipped {shipped:.3f}")
            if abs(best[0] - shipped) > STEP / 2:
                wrong.append(f"{field} (minimiser {best[0]:.3f}, shipped {shipped:.3f})")
    if wrong:
        sys.exit("a shipped value is not its minimiser: recalibrate h100_sxm's " + ", ".join(wrong) +
                 " in hw/gpus.llmp, in the order above")


if __name__ == "__main__":
    main()
