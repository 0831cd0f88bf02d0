#!/usr/bin/env python3
"""korthikanti_layer.py - one 22B GPT layer's forward and backward time against Korthikanti et
al. 2022, Table 4 (arXiv 2205.05198).

    python3 korthikanti_layer.py LLMP ROOT CSV [--max-error PCT]

LLMP is the llmp binary, ROOT the repository (its stdlib/ and hw/ are used: LLMP_DATA=ROOT),
CSV shared/data/published/korthikanti2022_table4_per_layer.csv.  Runs the scenarios of
ROOT/tests/validation/scenarios/korthikanti_layer/layer.llmp, one per variant of the table,
and prints per variant the predicted and measured layer forward and backward time and their
errors, then the mean and maximum |error| over the ten figures.  CTest
validation.korthikanti_layer.

Where the figures come from: `llmp run --format json` gives each scenario's breakdown
(forward, backward, recompute, tp_comm, optimizer); its tensor-parallel part is one sum over
both passes, so `llmp run --trace` gives the split: the forward span (the layer's forward
operators and its exposed tensor-parallel collectives), and the recompute and backward spans,
whose sum is the layer's backward as the paper counts it (its full-recompute backward, 19.5
ms, is its plain backward, 11.9 ms, plus a forward).  The optimizer step, which the table does
not time, is left out.  The script checks that the spans add up to the JSON breakdown (and,
with the optimizer, to the iteration) and that every variant of the CSV has a scenario.

Exit status: 1 if a scenario does not run, the figures disagree, a variant is missing, or
(with --max-error) any |error| exceeds PCT; 0 otherwise.  Python's standard library only.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

# the CSV's experiment -> the scenario of layer.llmp
SCENARIOS = {
    "Baseline no recompute": "korthikanti_baseline",
    "Sequence Parallelism": "korthikanti_sequence_parallel",
    "Baseline with recompute": "korthikanti_full_recompute",
    "Selective Recompute": "korthikanti_selective_recompute",
    "Selective + Sequence": "korthikanti_selective_sequence_parallel",
}


def fail(msg):
    sys.exit("korthikanti_layer.py: " + msg)


def run(llmp, root, args):
    env = dict(os.environ, LLMP_DATA=root)
    p = subprocess.run([llmp, "run"] + args, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        fail(f"llmp run {' '.join(args)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def spans(llmp, root, path, scenario):
    """The forward, recompute and backward spans of the scenario's trace, in seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        run(llmp, root, ["--scenario", scenario, "--trace", trace, path])
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
    out = {"forward": 0.0, "recompute": 0.0, "backward": 0.0}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in out:
            out[e["cat"]] += e["dur"] * 1e-6
    return out


def main():
    args = sys.argv[1:]
    max_error = None
    if "--max-error" in args:
        i = args.index("--max-error")
        max_error = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 3:
        fail("usage: korthikanti_layer.py LLMP ROOT CSV [--max-error PCT]")
    llmp, root, csv_path = args
    path = os.path.join(root, "tests", "validation", "scenarios", "korthikanti_layer", "layer.llmp")
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    reports = {}
    for line in run(llmp, root, ["--format", "json", path]).splitlines():
        r = json.loads(line)
        reports[r["scenario"]] = r
    print("Korthikanti et al. 2022, Table 4: one layer of the 22B GPT (h 6144, 64 heads, seq 2048), tp 8,")
    print("micro-batch 4, A100-SXM4-80GB (Selene); times in ms per layer, error = (predicted - measured) / measured")
    print()
    head = f"{'variant':<26} {'sp':>3} {'recompute':>9} | {'fwd pred':>8} {'meas':>5} {'error':>7} | " \
           f"{'bwd pred':>8} {'meas':>5} {'error':>7} | {'sum pred':>8} {'meas':>5} {'error':>7}"
    print(head)
    print("-" * len(head))
    errors, bad = [], 0
    for row in rows:
        exp = row["experiment"]
        if exp not in SCENARIOS:
            fail(f"{csv_path}: no scenario for the variant {exp!r}")
        name = SCENARIOS[exp]
        if name not in reports:
            fail(f"{path}: no scenario {name} (variant {exp!r})")
        r = reports[name]
        if not r.get("fits"):
            fail(f"{name}: does not fit in memory")
        b = r["breakdown"]
        s = spans(llmp, root, path, name)
        total = s["forward"] + s["recompute"] + s["backward"]
        parts = b["forward"] + b["backward"] + b["recompute"] + b["tp_comm"]
        rest = sum(v for k, v in b.items() if k not in ("forward", "backward", "recompute", "tp_comm", "optimizer"))
        if abs(total - parts) > 1e-6 * parts or rest > 1e-12 or \
                abs(total + b["optimizer"] - r["iteration_s"]) > 1e-6 * r["iteration_s"]:
            print(f"{name}: the trace's spans ({total * 1e3:.4f} ms) disagree with the breakdown "
                  f"({parts * 1e3:.4f} ms, other parts {rest * 1e3:.4f} ms, iteration {r['iteration_s'] * 1e3:.4f} ms)")
            bad += 1
        fwd, bwd = s["forward"] * 1e3, (s["recompute"] + s["backward"]) * 1e3
        mf, mb = float(row["forward_ms_per_layer"]), float(row["backward_ms_per_layer"])
        ef, eb = 100 * (fwd - mf) / mf, 100 * (bwd - mb) / mb
        ec = 100 * (fwd + bwd - (mf + mb)) / (mf + mb)
        errors += [ef, eb]
        p = r["plan"]
        print(f"{exp:<26} {'yes' if p['sequence_parallel'] else 'no':>3} {p['recompute']:>9} | "
              f"{fwd:8.2f} {mf:5.1f} {ef:+6.1f}% | {bwd:8.2f} {mb:5.1f} {eb:+6.1f}% | "
              f"{fwd + bwd:8.2f} {mf + mb:5.1f} {ec:+6.1f}%")
    mean = sum(abs(e) for e in errors) / len(errors)
    worst = max(abs(e) for e in errors)
    print()
    print(f"{len(rows)} variants, {len(errors)} figures (forward and backward): mean |error| {mean:.2f} %, "
          f"max |error| {worst:.2f} %")
    if bad:
        fail(f"{bad} scenarios' trace and breakdown disagree")
    if max_error is not None and worst > max_error:
        fail(f"max |error| {worst:.2f} % exceeds --max-error {max_error:g} %")


if __name__ == "__main__":
    main()
