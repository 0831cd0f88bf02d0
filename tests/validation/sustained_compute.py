#!/usr/bin/env python3
"""Recompute the calibration of h100_sxm's `sustained_compute` (hw/gpus.llmp).

MosaicML measured MPT-7B, same code and configuration, at 4,641 tokens/s per A100-80GB and
10,643 per H100: a ratio of 2.293 (tests/validation/scenarios/mosaicml/README.md). llmp's
ratio of tokens/s on the pair must equal it within 1 %; if a change to the model
moves it, recalibrate `sustained_compute` (the README says how) rather than widen this.

usage: sustained_compute.py LLMP SCENARIO_FILE
"""
import json
import subprocess
import sys

MEASURED = 10643 / 4641          # tokens/s per GPU, H100 over A100-80GB
SCENARIOS = ("mpt_7b_a100", "mpt_7b_h100")   # 8 GPUs each: total tokens/s compare as per GPU


def main():
    llmp, path = sys.argv[1], sys.argv[2]
    out = subprocess.run([llmp, "run", "--format", "json", path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"llmp run failed ({out.returncode}): {out.stderr}")
    rate = {}
    for line in out.stdout.splitlines():
        row = json.loads(line)
        if row["scenario"] in SCENARIOS:
            rate[row["scenario"]] = row["tokens_per_s"]
    if len(rate) != 2:
        sys.exit(f"expected scenarios {list(SCENARIOS)}, got {sorted(rate)}")
    ratio = rate["mpt_7b_h100"] / rate["mpt_7b_a100"]
    err = ratio / MEASURED - 1
    print(f"H100 / A100 tokens/s: llmp {ratio:.4f}, measured {MEASURED:.4f} ({err:+.2%})")
    if abs(err) > 0.01:
        sys.exit("off by more than 1 %: recalibrate h100_sxm's sustained_compute in hw/gpus.llmp")


if __name__ == "__main__":
    main()
