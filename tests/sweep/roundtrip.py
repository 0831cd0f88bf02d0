#!/usr/bin/env python3
"""roundtrip.py - `llmp sweep`'s kept plans read back (tests/sweep/CMakeLists.txt).

    roundtrip.py LLMP EQUIVALENT_LLMP OUT_DIR

1. --emit: the plans of a sweep written as scenarios (one file, and a folder) give under
   `llmp run` the sweep's iteration time and peak memory, to the bit.
2. --format json: one JSON document whose flags are JSON booleans.
3. Equivalent plans: every point the sweep drops as equivalent has a kept plan that differs
   only in the axes without effect there, with the same figures (memory to the bit, the time
   to a rounding); and the plans kept are those --keep-equivalent keeps, with the same bits.
"""
import json
import os
import subprocess
import sys

llmp, equivalent, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
problems = []


def run(*args):
    p = subprocess.run([llmp, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"llmp {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    return p.stdout


def rows_of(jsonl):
    return [json.loads(line) for line in jsonl.splitlines()[1:]]


# 1. sweep -> emit -> run
plans, folder = os.path.join(out, "plans.llmp"), os.path.join(out, "plans") + "/"
rows = rows_of(run("sweep", "--no-progress", "--sweep", "emitted", "--format", "jsonl", "--emit", plans, equivalent))
run("sweep", "--no-progress", "--sweep", "emitted", "--emit", folder, equivalent)
ran = {}
for line in run("run", "--format", "json", plans).splitlines():
    x = json.loads(line)
    ran[x["scenario"]] = x
for line in run("run", "--format", "json", os.path.join(folder, "emitted_3.llmp")).splitlines():
    ran["folder"] = json.loads(line)
if len(rows) != 12 or len(ran) != len(rows) + 1:
    problems.append(f"{len(rows)} plans kept, {len(ran) - 1} scenarios run")
for r in rows:
    x = ran.get(f"emitted_{r['rank']}", {})
    if x.get("iteration_s") != r["iteration_s"] or x.get("memory", {}).get("peak") != r["memory.peak"]:
        problems.append(f"plan {r['rank']}: the sweep's {r['iteration_s']} s, {r['memory.peak']} B; run's {x}")
if ran["folder"]["iteration_s"] != rows[2]["iteration_s"]:
    problems.append("the folder's plan 3 differs from the sweep's")

# 2. one JSON document, flags as booleans
doc = json.loads(run("sweep", "--no-progress", "--sweep", "emitted", "--format", "json", equivalent))
r0 = doc["rows"][0]
if not isinstance(r0["fits"], bool) or not isinstance(r0["plan.sequence_parallel"], bool):
    problems.append(f"flags that are not JSON booleans: {r0}")
if len(doc["rows"]) != len(rows):
    problems.append("the JSON document and JSON Lines keep different plans")

# 3. equivalent plans, in each sweep that has some
inert = {"plan.schedule", "plan.virtual_stages", "plan.sequence_parallel", "plan.overlap_tp", "plan.overlap_pp",
         "plan.overlap_dp", "plan.overlap_ep"}
checked = 0
for sweep, rule in (("equivalent", "equivalent to overlap_tp = false"), ("equivalent_ep", "equivalent to overlap_ep = false")):
    kept_jsonl = run("sweep", "--no-progress", "--sweep", sweep, "--format", "jsonl", equivalent)
    kept = {r["point"]: r for r in rows_of(kept_jsonl)}
    every = {r["point"]: r for r in rows_of(run("sweep", "--no-progress", "--sweep", sweep, "--format", "jsonl",
                                                "--keep-equivalent", equivalent))}
    head = json.loads(kept_jsonl.splitlines()[0])
    dropped = sum(n for why, n in head["dropped"].items() if why.startswith("equivalent to "))
    checked += dropped
    if not any(why.startswith(rule) for why in head["dropped"]):
        problems.append(f"{sweep}: no point dropped as {rule}: {head['dropped']}")
    if not dropped or len(every) - len(kept) != dropped:
        problems.append(f"{sweep}: {len(every)} kept with --keep-equivalent, {len(kept)} without, {dropped} counted "
                        "equivalent")
    for p, r in kept.items():
        if every.get(p, {}).get("objective") != r["objective"]:
            problems.append(f"{sweep}: point {p} is kept with another objective")
    by_rest = {}
    for r in kept.values():
        by_rest.setdefault(tuple((k, v) for k, v in r.items() if k.startswith("plan.") and k not in inert), []).append(r)
    for p, r in every.items():
        if p in kept:
            continue
        rest = tuple((k, v) for k, v in r.items() if k.startswith("plan.") and k not in inert)
        same = [q for q in by_rest.get(rest, []) if q["memory.peak"] == r["memory.peak"] and
                abs(q["iteration_s"] - r["iteration_s"]) <= 1e-12 * r["iteration_s"]]
        if not same:
            problems.append(f"{sweep}: point {p} was dropped as equivalent, but no plan kept has its figures: {r}")
if problems:
    sys.exit("roundtrip.py:\n" + "\n".join(problems[:20]))
print(f"ok: {len(rows)} plans emitted and run, {checked} equivalent points checked")
