#!/usr/bin/env python3
"""Fit, check and report the end-to-end factors of each (gpu, software stack) pair.

A factor is a figure of a stack's `gpu NAME { }` block (stdlib/frameworks/): a sustained
figure (`sustained_compute`, `sustained_compute_fp8`), the fraction of the operator tables'
tensor-core rate that training on that stack sustains, or `sustained_attention`, the rate of
the stack's flash-attention kernel over the modelled one (fitted on rows above 4096 tokens,
where attention is most of the time, after the compute figures). The rule, written before any value was fitted:

1. Each factor is fitted on the calibration rows of the sets named for it below, and on
   nothing else. A set's calibration rows are its scenarios at even positions (the 1st, 3rd,
   ...) in name order, among those the factor's selector keeps; every other row of the set
   validates. Sets that no factor names are validation only.
2. The value is the one on a grid of STEP in [LO, HI] that gives the calibration rows the
   least mean |error|. The mean |error| is unimodal in the factor (each row's time is a + b/s
   for s the factor), so the grid is searched coarse (0.05) then fine (STEP) around the best
   coarse value, which finds the same minimiser as the full grid. A value whose mean |error|
   is within TIE (0.05 points) of the minimiser's is kept where it is: in a flat valley (two
   figures fitted on overlapping rows) the fit stops instead of trading one for the other.
3. Factors are fitted in the order below, each with the others at their current values (a
   stack's bf16 figure before its fp8 figure: fp8 runs keep their attention in bf16), and the
   pass is repeated from the values it found until a pass moves none (at most MAX_PASSES):
   the shipped values are that fixed point, so one pass from them finds them again.
4. `launch_overhead`, the host's time per kernel launch (a block whose kernels take less GPU
   time than the host needs to launch them runs at the host's pace), is fitted like a factor
   on a grid of LAUNCH_STEP in [0, LAUNCH_HI] microseconds (coarse LAUNCH_COARSE), first, once
   per host (MB_HOSTS: the DGX's Xeon hosts of the H100, B200 and B300; the Grace of the GB200
   and GB300 trays), on the calibration rows of all of those GPUs' other figures together (the
   union of each dtype's even positions), so it adds no calibration row of its own. (Per host,
   not per GPU, since the second session of fits: fitted per GPU it spread from 31 to 142 us
   and stood in for the GPUs' own shortfalls; the GB300's 142 us made a micro-batch of 4
   host-bound that the data shows GPU-bound.)
5. A GPU's `sustained_compute` (the rate of its bf16 kernels) is fitted on all of that GPU's
   calibration rows, not only its bf16 rows: fp8 and fp4 runs keep their attention, output
   layer and other GEMMs in bf16, and a GPU whose bf16 rows are all of one model family (the
   B200's and the B300's are gpt-oss 120B's) would otherwise take that family's error as its
   bf16 rate. (Added after the first fits, when the B200's and the B300's bf16 figures sat at
   the grid's floor, 0.400, and made DeepSeek-V3's bf16 output layer the pipeline's
   bottleneck.)
6. A GPU's `sustained_grouped_gemm` (the rate of the stack's expert GEMMs over the dense GEMM
   model) is fitted last, on the mixture-of-experts rows among that GPU's calibration rows, so
   it adds no calibration row. Dense rows run no expert GEMM and cannot move it. (Added after
   the launch overhead, fitted alone, reached 142 us on the GB300 to slow its MoE rows, which
   made a micro-batch of 4 host-bound that runs GPU-bound.)

usage: stack_factors.py LLMP REPO_ROOT [--write] [--report]
  (no flag)  fails unless every shipped factor is its minimiser (CTest:
             validation.stack_factors)
  --write    writes the minimisers into the framework files
  --report   prints each set's calibration and validation errors (mean, max, rows)
"""
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

LO, HI, STEP, COARSE = 0.400, 1.000, 0.005, 0.05
MAX_PASSES = 8
HI_ATTENTION = 2.000  # sustained_attention may exceed 1: the stack's kernel may be faster
LAUNCH_HI, LAUNCH_STEP, LAUNCH_COARSE = 150.0, 1.0, 10.0  # launch_overhead, microseconds


def grid(field):
    """(lo, hi, step, coarse step, decimals) of a figure's grid."""
    if field == "launch_overhead":
        return 0.0, LAUNCH_HI, LAUNCH_STEP, LAUNCH_COARSE, 0
    return LO, HI_ATTENTION if field == "sustained_attention" else HI, STEP, COARSE, 3
TIE = 0.05  # percentage points of mean |error| within which a shipped value is a minimiser
SETS = "tests/validation/scenarios"
ROOT = "."  # the repository (main sets it)


def mosaicml(gpu, fp8, max_seq=None, min_seq=None):
    """MosaicML rows of one GPU (generate.py's name prefix), bf16 or fp8, in a sequence range."""
    def keep(name):
        m = re.match(gpu + r"_mpt_\w+?_s(\d+)_", name)
        return (bool(m) and name.endswith("_fp8") == fp8 and (max_seq is None or int(m.group(1)) <= max_seq)
                and (min_seq is None or int(m.group(1)) > min_seq))
    return keep


def every(name):
    return True


def megatron_bridge(gpu, dtypes):
    """Megatron-Bridge rows of one GPU (generate.py's name: mbCONTAINER_GPU_...) whose plan's
    dtype is one of dtypes (read from the scenario's file)."""
    def keep(name):
        if not re.match(r"mb\d+_" + gpu + "_", name):
            return False
        path = os.path.join(ROOT, SETS, "megatron_bridge", name + ".llmp")
        m = re.search(r"^\s*dtype\s*=\s*(\w+)", open(path, encoding="utf-8").read(), re.M)
        return bool(m) and m.group(1) in dtypes
    return keep


def union(*selectors):
    """The rows any selector keeps; their calibration rows are each selector's own."""
    def keep(name):
        return any(k(name) for k in selectors)
    keep.parts = selectors
    return keep


MB_DTYPES = (("bf16",), ("fp8", "mxfp8"), ("nvfp4",))
MB_MOE = ("qwen3_30b", "qwen3_235b", "deepseek_v3", "kimi_k2", "gpt_oss", "nemotron3_nano")


def moe_rows(gpu):
    """Megatron-Bridge rows of one GPU whose model routes tokens to experts, every dtype; its
    calibration rows are those of the GPU's dtype figures (rule 6), so it adds none."""
    def moe(name):
        return bool(re.match(r"mb\d+_" + gpu + "_(" + "|".join(MB_MOE) + ")", name))
    base = union(*(megatron_bridge(gpu, d) for d in MB_DTYPES))

    def keep(name):
        return base(name) and moe(name)
    keep.base, keep.only = base, moe
    return keep


# (stack file, stack, gpu, field, [(set folder, selector)]): fitted in this order.
FACTORS = [
    ("stdlib/frameworks/megatron.llmp", "megatron_core", "h100_sxm", "sustained_compute",
     [(f"{SETS}/h100_weak_scaling", every)]),
    ("stdlib/frameworks/megatron.llmp", "megatron_core", "h100_sxm", "sustained_compute_fp8",
     [(f"{SETS}/nemo_h100", every)]),
    ("stdlib/frameworks/llm_foundry.llmp", "llm_foundry", "h100_sxm", "sustained_compute",
     [(f"{SETS}/mosaicml", mosaicml("h100", False, 4096))]),
    ("stdlib/frameworks/llm_foundry.llmp", "llm_foundry", "h100_sxm", "sustained_compute_fp8",
     [(f"{SETS}/mosaicml", mosaicml("h100", True, 4096))]),
    ("stdlib/frameworks/llm_foundry.llmp", "llm_foundry", "h100_sxm", "sustained_attention",
     [(f"{SETS}/mosaicml", mosaicml("h100", False, min_seq=4096))]),
    ("stdlib/frameworks/llm_foundry.llmp", "llm_foundry", "a100_sxm4_80gb", "sustained_compute",
     [(f"{SETS}/mosaicml", mosaicml("a100", False, 4096))]),
    ("stdlib/frameworks/llm_foundry.llmp", "llm_foundry", "a100_sxm4_40gb", "sustained_compute",
     [(f"{SETS}/mosaicml", mosaicml("a100_40g", False, 4096))]),
    ("stdlib/frameworks/llm_foundry.llmp", "llm_foundry", "a100_sxm4_80gb", "sustained_attention",
     [(f"{SETS}/mosaicml", mosaicml("a100", False, min_seq=4096))]),
    ("stdlib/frameworks/llm_foundry.llmp", "llm_foundry", "a100_sxm4_40gb", "sustained_attention",
     [(f"{SETS}/mosaicml", mosaicml("a100_40g", False, min_seq=4096))]),
    ("stdlib/frameworks/megatron.llmp", "megatron_core", "h100_sxm", "sustained_attention",
     [(f"{SETS}/nemo_long_context", every)]),
]
# Megatron-Bridge's stack (megatron_bridge): the host time per launch first, per host on the rows
# of all its GPUs' figures (rule 4); then per GPU the bf16 figure on all its rows (rule 5), the
# quantized one on its fp8 and mxfp8 rows, nvfp4's on its nvfp4 rows (the H100, the B200 and the
# B300 have none; their nvfp4 takes their fp8 figure), and the expert GEMMs' on its MoE rows (rule 6).
MB_GPUS = (("h100_sxm", 2), ("b200", 2), ("b300", 2), ("gb200", 3), ("gb300", 3))
# The hosts that launch the kernels (rule 4): DGX H100, B200 and B300 on Intel Xeon hosts, the
# GB200 and GB300 trays on Grace.
MB_HOSTS = (("h100_sxm", "b200", "b300"), ("gb200", "gb300"))
for _gpus in MB_HOSTS:
    FACTORS.append(("stdlib/frameworks/megatron.llmp", "megatron_bridge", _gpus, "launch_overhead",
                    [(f"{SETS}/megatron_bridge", union(*(megatron_bridge(g.split("_")[0], d) for g, n in MB_GPUS
                                                         if g in _gpus for d in MB_DTYPES[:n])))]))
for _gpu, _fields in MB_GPUS:
    _short = _gpu.split("_")[0]
    for _field, _dtypes in (("sustained_compute", ("bf16",)), ("sustained_compute_fp8", ("fp8", "mxfp8")),
                            ("sustained_compute_fp4", ("nvfp4",)))[:_fields]:
        _rows = megatron_bridge(_short, _dtypes)
        if _field == "sustained_compute":  # rule 5: every row runs bf16 kernels
            _rows = union(*(megatron_bridge(_short, d) for d in MB_DTYPES[:_fields]))
        FACTORS.append(("stdlib/frameworks/megatron.llmp", "megatron_bridge", _gpu, _field,
                        [(f"{SETS}/megatron_bridge", _rows)]))
    FACTORS.append(("stdlib/frameworks/megatron.llmp", "megatron_bridge", _gpu, "sustained_grouped_gemm",
                    [(f"{SETS}/megatron_bridge", moe_rows(_short))]))

# Every set reported, with the factors' calibration rows marked.
REPORTED = ["examples/megatron", f"{SETS}/h100_weak_scaling", f"{SETS}/nemo_h100", f"{SETS}/mosaicml",
            f"{SETS}/mlperf", f"{SETS}/megatron_llama3_fp8", f"{SETS}/nemo_long_context",
            f"{SETS}/megatron_bridge"]


def field_re(stack, gpu, field):
    return re.compile(r"(\nframework " + stack + r"\b[^{]*\{(?:(?!\nframework ).)*?\n  gpu " + gpu +
                      r" \{[^}]*?\n    " + field + r" += )([0-9.]+)", re.S)


def validate(llmp, data, folder, files=None):
    """{scenario: error %} of `llmp validate` on folder (or on its files) with data folder
    `data`; files, where given, also gets each scenario's file."""
    env = dict(os.environ, LLMP_DATA=data)
    paths = folder if isinstance(folder, list) else [folder]
    out = subprocess.run([llmp, "validate", "--no-jit", "--format", "csv"] + paths, capture_output=True, text=True,
                         env=env)
    if out.returncode not in (0, 1) or not out.stdout:
        sys.exit(f"llmp validate {folder} failed ({out.returncode}): {out.stderr}")
    rows = {}
    for r in csv.DictReader(io.StringIO(out.stdout)):
        rows[r["scenario"]] = float(r["error_pct"]) if r.get("error_pct") not in (None, "", "-") else None
        if files is not None:
            files[r["scenario"]] = r["file"]
    return rows


def calibration_rows(rows, keep):
    """The calibration rows of a set among those keep() selects: even positions in name order."""
    if hasattr(keep, "base"):
        return {n for n in calibration_rows(rows, keep.base) if keep.only(n)}
    if hasattr(keep, "parts"):
        return set().union(*(calibration_rows(rows, k) for k in keep.parts))
    chosen = sorted(n for n in rows if keep(n))
    return set(chosen[0::2])


CALIBRATION_FILES = {}  # (folder, selector): (calibration rows, their files), found once


def mean_error(llmp, data, sets, root):
    errs = []
    for folder, keep in sets:
        key = (folder, keep)
        if key not in CALIBRATION_FILES:  # the whole set once, then only its calibration rows' files
            files = {}
            names = calibration_rows(validate(llmp, data, os.path.join(root, folder), files), keep)
            CALIBRATION_FILES[key] = (names, sorted({files[n] for n in names}))
        names, paths = CALIBRATION_FILES[key]
        rows = validate(llmp, data, paths)
        for name in names:
            if rows[name] is not None:  # a plan that does not fit has no prediction: skipped
                errs.append(abs(rows[name]))
    if not errs:
        sys.exit(f"no calibration row of {sets} has a prediction")
    return sum(errs) / len(errs), len(errs)


def field_res(stack, gpus, field):
    """The patterns of a figure shared by one GPU's block or by several (a tuple of GPUs)."""
    return [field_re(stack, g, field) for g in (gpus if isinstance(gpus, tuple) else (gpus,))]


def patch(path, patterns, value, decimals=3):
    text = open(path, encoding="utf-8").read()
    for pattern in patterns:
        text, n = pattern.subn(lambda g: g.group(1) + f"{value:.{decimals}f}", text, count=1)
        if n != 1:
            sys.exit(f"{path}: no `{pattern.pattern}`")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def fit(llmp, data, root, fw, field, pattern, sets):
    """The grid minimiser of the calibration rows' mean |error|, and the curve near it."""
    path = os.path.join(data, fw)
    seen = {}
    lo, hi, step, coarse_step, decimals = grid(field)

    def err(s):
        s = round(s, 3)
        if s not in seen:
            patch(path, pattern, s, decimals)
            seen[s] = mean_error(llmp, data, sets, root)
        return seen[s][0]

    coarse = [lo + i * coarse_step for i in range(int(round((hi - lo) / coarse_step)) + 1)]
    c = min(coarse, key=err)
    fine = [c + i * step for i in range(-int(coarse_step / step), int(coarse_step / step) + 1) if lo <= c + i * step <= hi]
    best = min(fine, key=lambda s: (err(s), s))
    patch(path, pattern, best, decimals)
    return round(best, 3), seen


def report(llmp, root):
    """Per set: calibration and validation rows' mean and max |error|."""
    cal = {}
    for fw, stack, gpu, field, sets in FACTORS:
        for folder, keep in sets:
            rows = validate(llmp, root, os.path.join(root, folder))
            cal.setdefault(folder, set()).update(calibration_rows(rows, keep))
    print(f"{'set':42} {'calibration rows':>28} {'validation rows':>28}")
    for folder in REPORTED:
        if not os.path.isdir(os.path.join(root, folder)):
            continue
        rows = validate(llmp, root, os.path.join(root, folder))
        parts = []
        for which in (True, False):
            e = [abs(v) for n, v in rows.items() if (n in cal.get(folder, ())) == which and v is not None]
            parts.append(f"{len(e):4d}: {sum(e) / len(e):5.2f} % mean {max(e):6.2f} % max" if e else f"{'-':>28}")
        print(f"{folder:42} {parts[0]:>28} {parts[1]:>28}")
    by_group(llmp, root, cal)


FAMILIES = ("llama3", "qwen3_30b", "qwen3_235b", "deepseek_v3", "kimi_k2", "gpt_oss", "nemotron3_nano")


def by_group(llmp, root, cal):
    """Megatron-Bridge's rows by GPU and by model family: calibration and validation errors,
    and the rows with no prediction (plans that do not fit)."""
    folder = f"{SETS}/megatron_bridge"
    if not os.path.isdir(os.path.join(root, folder)):
        return
    rows = validate(llmp, root, os.path.join(root, folder))

    def line(label, names):
        parts = []
        for which in (True, False):
            e = [abs(rows[n]) for n in names if (n in cal.get(folder, ())) == which and rows[n] is not None]
            parts.append(f"{len(e):4d}: {sum(e) / len(e):5.2f} % mean {max(e):6.2f} % max" if e else f"{'-':>28}")
        nofit = sum(rows[n] is None for n in names)
        print(f"  {label:40} {parts[0]:>28} {parts[1]:>28} {nofit:4d}")

    print(f"\n{folder}, by GPU and by model family ({'calibration rows':>26} {'validation rows':>28} no fit)")
    gpus = sorted({n.split("_")[1] for n in rows})
    for g in gpus:
        line(g, [n for n in rows if n.split("_")[1] == g])
    for fam in FAMILIES:
        line(fam, [n for n in rows if "_".join(n.split("_")[2:]).startswith(fam)])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-4])
    llmp, root = os.path.abspath(args[0]), os.path.abspath(args[1])
    global ROOT
    ROOT = root
    if "--report" in sys.argv:
        report(llmp, root)
        return
    write = "--write" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("stdlib", "hw"):
            shutil.copytree(os.path.join(root, d), os.path.join(tmp, d))
        for npass in range(1, (MAX_PASSES if write else 1) + 1):
            wrong = []
            for fw, stack, gpu, field, sets in FACTORS:
                pattern = field_res(stack, gpu, field)
                text = open(os.path.join(tmp, fw), encoding="utf-8").read()
                ms = [p.search(text) for p in pattern]
                if not all(ms):
                    sys.exit(f"{fw}: framework {stack} has no `gpu {gpu} {{ {field} = ... }}`")
                shipped = float(ms[0].group(2))
                if any(float(m.group(2)) != shipped for m in ms):  # a shared figure set apart
                    shipped = float("nan")
                gpu = "+".join(gpu) if isinstance(gpu, tuple) else gpu
                best, seen = fit(llmp, tmp, root, fw, field, pattern, sets)
                _, _, step, _, decimals = grid(field)
                key = round(shipped, 3)
                if key != key:  # NaN: the shared figure differs between its blocks
                    key = best
                if key not in seen:
                    patch(os.path.join(tmp, fw), pattern, shipped, decimals)
                    seen[key] = mean_error(llmp, tmp, sets, root)
                if seen[key][0] - seen[best][0] <= TIE:  # a flat valley: the shipped value stays
                    best = key
                patch(os.path.join(tmp, fw), pattern, best, decimals)
                near = [f"{s:.3f}: {e:.2f} %" for s, (e, n) in sorted(seen.items()) if abs(s - best) <= 2.5 * step]
                print(f"{stack} on {gpu}, {field} ({seen[best][1]} calibration rows): " + ", ".join(near))
                print(f"  minimiser {best:.3f} ({seen[best][0]:.2f} %), {'was' if write else 'shipped'} {shipped:.3f}")
                if not abs(best - shipped) <= step / 2:
                    wrong.append(f"{stack} on {gpu}: {field} (minimiser {best:.3f}, shipped {shipped:.3f})")
            if write:
                for fw, stack, gpu, field, sets in FACTORS:
                    pattern = field_res(stack, gpu, field)
                    patch(os.path.join(root, fw), pattern,
                          float(pattern[0].search(open(os.path.join(tmp, fw), encoding="utf-8").read()).group(2)), grid(field)[4])
                print(f"pass {npass}: {len(wrong)} factor(s) moved")
                if not wrong:
                    return
    if wrong:
        sys.exit(("no fixed point after %d passes: " % MAX_PASSES if write else
                  "a shipped factor is not its minimiser: run with --write, or recalibrate ") + "; ".join(wrong))


if __name__ == "__main__":
    main()
