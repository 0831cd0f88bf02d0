#!/usr/bin/env python3
"""`llmp run` on a plan that does not fit lists changes of plan that fit, with their times.

Each change is written out as a plan of its own and run: its iteration and peak memory must be
what the list says, to the bit (the list lowers and evaluates each candidate; it estimates
nothing).

usage: fit_changes.py LLMP SOURCE_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys


def run_json(llmp, args, cwd):
    out = subprocess.run([llmp, "run", "--format", "json"] + args, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"llmp run {' '.join(args)} exited {out.returncode}:\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.strip().split("\n")[-1])
    llmp, src, work = sys.argv[1:]
    example = os.path.join(src, "examples", "does_not_fit.llmp")
    report = run_json(llmp, [example], src)
    fixes = report.get("fit_changes")
    if report["fits"] or not fixes:
        raise SystemExit("examples/does_not_fit.llmp: expected a plan that does not fit, with changes that do")
    os.makedirs(work, exist_ok=True)
    bad = 0
    for k, fix in enumerate(fixes):
        fields = "\n".join("  " + f.replace("=", " = ") for f in fix["change"].split())
        path = os.path.join(work, f"fix{k}.llmp")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f'import "does_not_fit"\n\nplan changed_plan extends llama3_70b_tp8_dp4 {{\n{fields}\n}}\n\n'
                    "scenario changed {\n  model = llama3_70b\n  cluster = eos { nodes = 4 }\n"
                    "  plan = changed_plan\n  framework = megatron_core\n}\n")
        got = run_json(llmp, ["-I", os.path.join(src, "examples"), path], src)
        if not got["fits"] or got["iteration_s"] != fix["iteration_s"] or got["memory"]["peak"] != fix["peak"]:
            print(f"{fix['change']}: listed {fix['iteration_s']} s, peak {fix['peak']} B; "
                  f"run as a plan: {got['iteration_s']} s, peak {got['memory']['peak']} B, fits {got['fits']}")
            bad += 1
    print(f"{len(fixes)} changes, {bad} differ from their plan run alone")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
