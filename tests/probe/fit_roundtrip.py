"""The probe's sample files feed the real fitter.

  python3 fit_roundtrip.py LLMP WORKDIR

Writes, with hw/probe/csvout.py, operator samples (fp16 and bf16, every operator, and fp8, the
linear only: the first points of the probe's order) and collective samples (every kind on Perlmutter's layouts),
with synthetic timings: the probe's generic cost estimate times a smooth factor.  Then runs
`LLMP fit --gpu a100_sxm4_80gb WORKDIR -o WORKDIR/gpu` and `LLMP fit --cluster perlmutter
WORKDIR -o WORKDIR/cluster`, and checks that both succeed, report every sample file and
write a table for every kernel, dtype and layout.  Exit 0 on success."""
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "hw", "probe"))

import csvout  # noqa: E402
import grid  # noqa: E402

ROWS_PER_FILE = 40
# The files carry the probe's `# key: value` provenance lines, which llmp fit skips; False
# writes them without (for a fitter that does not skip comments).
COMMENTS = True
LAYOUTS = [(1, 4), (2, 4)]   # Perlmutter: 4 A100 per node

# the table each operator's samples feed (docs/calibration.md), by file name
TABLES = {"masked_softmax": "softmax_%s_causal-1", "flash_attention": "flash_attention_%s_causal-1",
          "flash_attention_full": "flash_attention_%s"}


def factor(x):
    """A smooth, positive 'measured / estimated' ratio over log size."""
    return 1.2 + 0.3 * math.sin(math.log(x))


def write_samples(out):
    info = {"probe": "fit_roundtrip.py (synthetic timings)", "gpu": "synthetic",
            "gpu_count": 1, "torch": "none", "hostname": "test",
            "date": "2025-01-01T00:00:00+00:00", "command": "fit_roundtrip.py",
            "budget": "none (the full grid)"}
    samples = csvout.SampleSet(out, info, comments=COMMENTS, durable=False, autosave=False)
    for p in grid.op_order(grid.ALL_OPS, ("fp16", "bf16", "fp8")):
        op, dt = p.stream
        f = samples.files.get(("op", op, dt))
        if f is not None and len(f.rows) >= ROWS_PER_FILE:
            continue
        fwd, bwd = grid.op_cost(op, p.shape, dt)
        samples.add_op(op, dt, p.shape, fwd * 1e6 * factor(p.work), bwd * 1e6 * factor(2 * p.work),
                       {"impl": "synthetic"})
    for p in grid.coll_order(LAYOUTS):
        kind, n, g = p.stream
        b = p.shape[2]
        samples.add_nccl(kind, n, g, grid.coll_shape(kind, b, n * g),
                         grid.coll_call_seconds(kind, b, n, g) * 1e6 * factor(b))
    samples.save_all()
    return samples


def fit(llmp, args):
    r = subprocess.run([llmp, "fit"] + args, capture_output=True, text=True, timeout=300)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    return r


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    llmp, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    samples = write_samples(work)
    failures = []

    r = fit(llmp, ["--gpu", "a100_sxm4_80gb", work, "-o", os.path.join(work, "gpu")])
    if r.returncode != 0:
        failures.append("llmp fit --gpu exited %d" % r.returncode)
    else:
        got = set(os.listdir(os.path.join(work, "gpu")))
        for op in grid.ALL_OPS:
            for dt in ("fp16", "bf16", "fp8"):
                if op not in grid.DTYPE_OPS.get(dt, (op,)):
                    continue
                name = TABLES.get(op, op + "_%s") % dt + ".tbl"
                if name not in got:
                    failures.append("no table %s" % name)
        if os.path.isfile(os.path.join(work, "gpu", "gelu_fp8.tbl")):
            failures.append("a gelu fp8 table, from no fp8 gelu samples")
        for op in grid.ALL_OPS:   # a line of the cross-validation report per sample file
            if not re.search(r"^%s[ _,]" % op, r.stdout, re.M):
                failures.append("no cross-validated error for %s" % op)

    r = fit(llmp, ["--cluster", "perlmutter", work, "-o", os.path.join(work, "cluster")])
    if r.returncode != 0:
        failures.append("llmp fit --cluster exited %d" % r.returncode)
    else:
        got = set(os.listdir(os.path.join(work, "cluster")))
        want = {"%s_fp16_%d_%d.tbl" % (k, n, g) for k in grid.COLLECTIVES if k != "p2p"
                for n, g in LAYOUTS} | {"p2p_fp16_1_2.tbl", "p2p_fp16_2_1.tbl"}
        for name in sorted(want - got):
            failures.append("no table %s" % name)

    for msg in failures:
        print("FAIL: %s" % msg, file=sys.stderr)
    print("fit_roundtrip: %d sample files, %s" % (len(samples.paths()),
                                                  "ok" if not failures else "FAILED"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
