#!/usr/bin/env python3
"""llmp's sampling harness: times operators and collectives on a GPU node and writes the
sample files that `llmp fit` turns into calibration tables.  See hw/probe/README.md and
docs/probe.md.

  python3 hw/probe/probe.py ops --out DIR [--minutes 30] [--dtype bf16,fp16] [--dry-run]
  python3 hw/probe/probe.py ops --out DIR --resume     # continue a run cut short
  torchrun --nproc-per-node 8 hw/probe/probe.py collectives --out DIR --layouts 1x8
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import csvout  # noqa: E402  (after the path: the probe's modules sit beside this file)
import env  # noqa: E402
import grid  # noqa: E402
import order  # noqa: E402

OPS_EPILOG = """\
Writes DIR/operator/OP_DTYPE.csv (kernel form: the kernel's columns, F_dur(us), B_dur(us)).
The points are ordered so that any prefix covers every operator and its range of sizes,
the least certain shapes first; --minutes stops the run when the budget is spent.
--resume continues a run cut short (a job's time limit) with the same options: the points
DIR already holds are not measured again, and the new rows go into the same files.
Then, on any machine: llmp fit --gpu GPU DIR -o hw/calibration/NAME
"""

COLL_EPILOG = """\
Launch one process per GPU, e.g. on 2 nodes of 8 GPUs:
  torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
      hw/probe/probe.py collectives --out DIR --layouts 1x8,2x8
  srun -N 2 --ntasks-per-node 8 --gpus-per-node 8 python3 hw/probe/probe.py collectives ...
Writes DIR/nccl/KIND_fp16_NODES_GPUSPERNODE.csv (shape,nodes,GPUsPerNode,dur(us)); only
rank 0 writes (and, with --resume, reads the files a run cut short left there, to measure
only the points they do not hold).  Then: llmp fit --cluster CLUSTER DIR -o hw/calibration/NAME
"""


def _list(text, valid, what):
    items = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in items if x not in valid]
    if bad or not items:
        raise ValueError("unknown %s `%s` (valid: %s)" % (what, ",".join(bad) or text,
                                                          ", ".join(valid)))
    return list(dict.fromkeys(items))


def parser():
    p = argparse.ArgumentParser(
        prog="probe.py",
        description="Sample this machine's GPU and network for llmp: time operators and "
                    "collectives with PyTorch and write the CSV files `llmp fit` reads.")
    sub = p.add_subparsers(dest="command", metavar="{ops,collectives}")
    sub.required = True

    o = sub.add_parser("ops", help="time the operators on one GPU",
                       description="Time the operators llmp models (GEMMs, attention, "
                                   "norms, activations, embedding, cross-entropy, Adam) on "
                                   "one GPU over shapes of the stdlib models.",
                       epilog=OPS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    o.add_argument("--out", required=True, metavar="DIR", help="output folder")
    o.add_argument("--dtype", default="bf16,fp16", metavar="LIST",
                   help="dtypes, comma-separated, of fp16, bf16, fp32, tf32, fp8 (default "
                        "bf16,fp16; fp8: the linear's GEMMs as Transformer Engine runs them, "
                        "torch._scaled_mm on a GPU with fp8 tensor cores)")
    o.add_argument("--ops", default=",".join(grid.DEFAULT_OPS), metavar="LIST",
                   help="operators, comma-separated (default: all but flash_attention_full): "
                        + ", ".join(grid.ALL_OPS))
    _common(o, repeats=20)
    o.add_argument("--device", default="cuda:0", help="torch device (default cuda:0)")
    o.add_argument("--attention", default="auto", choices=("auto", "flash", "cudnn", "efficient",
                                                            "math"),
                   help="the scaled_dot_product_attention backend the attention ops run "
                        "(torch >= 2.3): flash (FlashAttention-2, as flash-attn 2 runs), cudnn, "
                        "efficient, math; default auto, PyTorch's choice; the files' impl line "
                        "names it")
    o.set_defaults(sub_parser=o)
    o.add_argument("--sms", type=int, default=None, metavar="N",
                   help="streaming multiprocessors, for the wave-edge priority (default: the "
                        "device's; %d in a dry run)" % grid.DEFAULT_SMS)

    c = sub.add_parser("collectives", help="time the collectives over torch.distributed",
                       description="Time all-reduce, all-gather, reduce-scatter, all-to-all "
                                   "and send/receive (NCCL or RCCL) on the layouts given.",
                       epilog=COLL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.set_defaults(sub_parser=c)
    c.add_argument("--out", required=True, metavar="DIR", help="output folder (rank 0 writes)")
    c.add_argument("--layouts", required=True, metavar="LIST",
                   help="NODESxGPUS_PER_NODE, comma-separated, e.g. 1x8,2x8: the first NODES "
                        "nodes' first GPUS_PER_NODE GPUs")
    c.add_argument("--kinds", default=",".join(grid.COLLECTIVES), metavar="LIST",
                   help="collectives (default all): " + ", ".join(grid.COLLECTIVES))
    c.add_argument("--min-bytes", default="1K", metavar="SIZE",
                   help="smallest message, e.g. 1K (default)")
    c.add_argument("--max-bytes", default="4G", metavar="SIZE",
                   help="largest message, e.g. 4G (default)")
    c.add_argument("--steps-per-octave", type=int, default=4, metavar="N",
                   help="sizes per doubling (default 4: 89 sizes from 1K to 4G; 1: powers of "
                        "two).  llmp fit gives a layout one grid node per 8 sizes measured")
    c.add_argument("--iters", type=int, default=20, metavar="N",
                   help="calls between two events (default 20; fewer for calls over 2.5 ms)")
    _common(c, repeats=5)
    return p


def _common(p, repeats):
    p.add_argument("--minutes", type=float, default=30, metavar="N",
                   help="time budget (default 30; 0: no budget, the full grid)")
    p.add_argument("--repeats", type=int, default=repeats, metavar="N",
                   help="timed repeats, the median is kept (default %d)" % repeats)
    p.add_argument("--warmup", type=int, default=5, metavar="N",
                   help="untimed warm-up calls (default 5)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan (points in order, estimated times); needs no torch")
    keep = p.add_mutually_exclusive_group()
    keep.add_argument("--force", action="store_true",
                      help="overwrite sample files already in the output folder")
    keep.add_argument("--resume", action="store_true",
                      help="continue a run cut short: keep the sample files already in the "
                           "output folder, measure only the points they do not hold, in the "
                           "same order, and add the rows to them (refused if they come from "
                           "another GPU model)")
    p.add_argument("--no-comments", action="store_true",
                   help="write no `#` provenance lines (for tools that do not skip them)")


def check_args(args):
    """Validates what argparse cannot; the subcommand's parser's error() exits with 2."""
    try:
        if args.minutes < 0:
            raise ValueError("--minutes must be 0 or more")
        if args.repeats < 1 or args.warmup < 0:
            raise ValueError("--repeats must be 1 or more and --warmup 0 or more")
        if args.command == "ops":
            args.dtypes = _list(args.dtype, grid.DTYPES, "dtype")
            args.op_list = _list(args.ops, grid.ALL_OPS, "operator")
            if not any(op in grid.DTYPE_OPS.get(dt, (op,)) for op in args.op_list for dt in args.dtypes):
                raise ValueError("no operator of --ops runs in any dtype of --dtype (fp8: %s only)"
                                 % ", ".join(grid.DTYPE_OPS["fp8"]))
            if args.sms is not None and args.sms < 1:
                raise ValueError("--sms must be 1 or more")
        else:
            args.layout_list = grid.parse_layouts(args.layouts)
            args.kind_list = _list(args.kinds, grid.COLLECTIVES, "collective")
            args.min_b = grid.parse_size(args.min_bytes)
            args.max_b = grid.parse_size(args.max_bytes)
            if args.min_b > args.max_b:
                raise ValueError("--min-bytes %s is larger than --max-bytes %s"
                                 % (args.min_bytes, args.max_bytes))
            if args.steps_per_octave < 1 or args.steps_per_octave > 16:
                raise ValueError("--steps-per-octave must be 1 to 16")
            if args.iters < 1:
                raise ValueError("--iters must be 1 or more")
    except ValueError as e:
        args.sub_parser.error(str(e))


def build_plan(args, sms=None):
    if args.command == "ops":
        return grid.op_order(args.op_list, args.dtypes, args.warmup, args.repeats,
                             args.sms or sms or grid.DEFAULT_SMS)
    return grid.coll_order(args.layout_list, args.kind_list, args.min_b, args.max_b,
                           args.steps_per_octave, args.warmup, args.iters, args.repeats)


def _fmt_minutes(s):
    return "%.1f min" % (s / 60) if s < 5400 else "%.2f h" % (s / 3600)


def _shape_text(p):
    if len(p.stream) == 2:   # an operator
        return " ".join("%s=%d" % kv for kv in zip(grid.KERNEL_COLUMNS[p.stream[0]], p.shape))
    kind, n, g = p.stream
    return "%dx%d bytes=%d shape=%d" % (n, g, p.shape[2], grid.coll_shape(kind, p.shape[2], n * g))


def print_plan(args, plan, out=None, resumed=None):
    """The dry run: a summary, then every point in order with its estimate and whether it
    fits in the budget by the estimates (run() skips a point that does not fit and goes on).
    resumed: (points already measured, files) under --resume, where plan is what is left."""
    out = out or sys.stdout
    total = sum(p.est for p in plan)
    budget = args.minutes * 60 if args.minutes else None
    streams = list(dict.fromkeys(p.stream for p in plan))
    if args.command == "ops":
        what = "%d operators x %d dtypes" % (len(args.op_list), len(args.dtypes))
        if len(streams) != len(args.op_list) * len(args.dtypes):   # fp8: the linear only
            what += ", %d streams" % len(streams)
        gen = "a generic GPU: %g TFLOP/s, %g TB/s" % (grid.PEAK_FLOPS / 1e12, grid.BANDWIDTH / 1e12)
    else:
        what = "%d collectives x layouts, %d streams" % (len(args.kind_list), len(streams))
        gen = "a generic network: %g GB/s in a node, %g GB/s across nodes" % (
            grid.NET_BANDWIDTH["intra"] / 1e9, grid.NET_BANDWIDTH["inter"] / 1e9)
    print("probe %s: %d points (%s), estimated %s for all on %s"
          % (args.command, len(plan), what, _fmt_minutes(total), gen), file=out)
    if resumed is not None:
        print("resume: %d points already measured in %d files of %s, left out of the plan"
              % (resumed[0], resumed[1], out_folder(args)), file=out)
    if budget is None:
        print("budget: none, the full grid", file=out)
    else:
        n, t = order.budget_prefix(plan, budget)
        print("budget: %g min: %d points (%.0f %%) fit by the estimates, %s"
              % (args.minutes, n, 100.0 * n / max(1, len(plan)), _fmt_minutes(t)), file=out)
    print("%6s  %-28s %-48s %5s %9s %9s  %s" % ("#", "stream", "shape", "prio", "est s",
                                                  "cum s", "plan"), file=out)
    cum, used = 0.0, 0.0
    for i, p in enumerate(plan):
        cum += p.est
        fits = budget is None or used + p.est <= budget
        if fits:
            used += p.est
        stream = " ".join(str(x) for x in p.stream[:1]) + " " + (
            p.stream[1] if len(p.stream) == 2 else "%dx%d" % p.stream[1:])
        print("%6d  %-28s %-48s %5.2f %9.3f %9.1f  %s" % (
            i + 1, stream, _shape_text(p), p.priority, p.est, cum, "run" if fits else "skip"),
            file=out)
    return 0


def out_folder(args):
    """The folder of the run's sample files: DIR/operator or DIR/nccl."""
    return os.path.join(args.out, "operator" if args.command == "ops" else "nccl")


def check_out(args):
    d = out_folder(args)
    if args.force or args.resume:
        return
    if os.path.isdir(d) and any(f.endswith(".csv") for f in os.listdir(d)):
        args.sub_parser.error("%s already holds sample files: use another --out, --resume to "
                              "continue the run that wrote them, or --force to overwrite them"
                              % d)


# --- --resume: continue a run from the sample files it left --------------------------------

# Provenance that may differ between a run and its resumption, said in a note when it does
# (a different `gpu` is refused).
NOTED = ("driver", "cuda", "rocm", "torch", "nccl", "sms")


def file_key(stream):
    """The SampleSet key of a stream's file: (op, dtype) or (kind, nodes, gpus per node)."""
    return ("op",) + stream if len(stream) == 2 else ("nccl",) + stream


def row_key(p):
    """The key columns of the row a point writes, as integers: an operator's shape; for a
    collective (shape, nodes, GPUsPerNode), the shape grid.coll_shape of the point's bytes."""
    if len(p.stream) == 2:
        return tuple(p.shape)
    kind, n, g = p.stream
    return grid.coll_shape(kind, p.shape[2], n * g), n, g


def load_resumed(args, plan, samples):
    """Takes over into samples the files of the plan's streams that an earlier run left in
    the output folder: {file key: the set of its rows' keys}.  Files of other operators or
    layouts are left as they are.  A file that cannot be read or is malformed: SystemExit
    naming the file and line."""
    done = {}
    try:
        for s in dict.fromkeys(p.stream for p in plan):
            keys = samples.load_op(*s) if len(s) == 2 else samples.load_nccl(*s)
            if keys is not None:
                done[file_key(s)] = keys
    except (csvout.SampleFileError, OSError) as e:
        raise SystemExit("probe %s: --resume: %s" % (args.command, e))
    return done


def remaining(plan, done):
    """The points of the plan whose row the files do not hold yet, in the plan's order."""
    return [p for p in plan if row_key(p) not in done.get(file_key(p.stream), ())]


def _same(a, b):
    return " ".join(str(a).split()) == " ".join(str(b).split())


def check_resumed(args, samples, info, log):
    """Refuses (SystemExit) to resume a file whose `# gpu` line names another GPU than this
    run's: its samples and this run's would be mixed.  Notes the other provenance that
    differs (NOTED) and a file without a `# gpu` line, whose GPU cannot be checked."""
    for f in sorted(samples.files.values(), key=lambda f: f.path):
        had = csvout.provenance(f.comments)
        if "gpu" not in had:
            print("probe: note: %s has no `# gpu` line: its GPU is not checked" % f.path,
                  file=log)
        elif not _same(had["gpu"], info.get("gpu")):
            raise SystemExit("probe %s: --resume: %s was measured on `%s`, this run is on "
                             "`%s`: resuming would mix two GPUs' samples (use another --out)"
                             % (args.command, f.path, had["gpu"], info.get("gpu")))
        for k in NOTED:
            if k in had and info.get(k) is not None and not _same(had[k], info[k]):
                print("probe: note: %s has %s `%s`, this run `%s`" % (f.path, k, had[k], info[k]),
                      file=log)


def resume(args, plan, samples, info, log):
    """--resume, once the run's provenance (info) is known: loads the files an earlier run
    left (load_resumed), checks them (check_resumed), adds a `# resumed:` line to them and to
    the files this run creates, and returns the points still to measure.  An empty folder:
    the whole plan, and no `# resumed:` line."""
    done = load_resumed(args, plan, samples)
    if not done:
        return plan
    check_resumed(args, samples, info, log)
    todo = remaining(plan, done)
    samples.mark_resumed(env.utc_now(), env.command_line())
    samples.save_all()   # the `# resumed:` line, even if no row comes
    print("probe: resuming: %d of the %d points already in %d files of %s; %d to measure"
          % (len(plan) - len(todo), len(plan), len(done), out_folder(args), len(todo)),
          file=log)
    return todo


def run_ops(args, log=None):
    log = log or sys.stderr
    import ops
    torch = env.import_torch()
    try:
        device = torch.device(args.device)
    except RuntimeError as e:
        raise SystemExit("probe ops: --device %s: %s" % (args.device, e))
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("probe ops: no CUDA or ROCm device is visible to torch "
                             "(--device cpu times on the CPU, for testing only)")
        torch.cuda.set_device(device)
    plan = build_plan(args, ops.device_sms(torch, device))
    info = env.provenance(torch, device, args.minutes, extra={
        "timing": "torch.cuda events (perf_counter on a CPU), the repeats queued behind a GPU "
                  "spin (torch.cuda._sleep) so that the events time the GPU, not the launch: "
                  "median of %d after %d warm-ups "
                  "(fewer for calls over 5 ms), forward and backward separately"
                  % (args.repeats, args.warmup),
        "sms": ops.device_sms(torch, device)})
    samples = csvout.SampleSet(args.out, info, comments=not args.no_comments)
    if args.resume:
        plan = resume(args, plan, samples, info, log)
    measurer = ops.OpMeasurer(torch, device, args.warmup, args.repeats, log, args.attention)

    def measure(p):
        r = measurer(p)
        if r is not None:
            f, b, impl = r
            samples.add_op(p.stream[0], p.stream[1], p.shape, f, b, {"impl": impl})
        return r

    def progress(i, p, r, took):
        if r is not None:
            print("[%5d/%d] %-15s %-4s %-44s F %10.1f us  B %10s us" % (
                i + 1, len(plan), p.stream[0], p.stream[1], _shape_text(p), r[0],
                "-" if r[1] is None else "%.1f" % r[1]), file=log, flush=True)

    try:
        stats = order.run(plan, args.minutes * 60 if args.minutes else None, measure,
                          log=progress)
    except KeyboardInterrupt:   # the files hold every point measured so far
        print("probe: interrupted; the sample files hold the points measured", file=log)
        _files(samples, log)
        return 130
    _summary(stats, plan, samples, log)
    return 0


def run_collectives(args, log=None):
    log = log or sys.stderr
    import collectives
    plan = build_plan(args)
    extra = {"timing": "as nccl-tests: %d warm-ups, then per repeat a barrier and up to %d calls "
                       "between CUDA events; the max over ranks of the median of %d repeats"
                       % (args.warmup, args.iters, args.repeats),
             "layouts": ",".join("%dx%d" % l for l in args.layout_list)}
    samples = csvout.SampleSet(args.out, comments=not args.no_comments)
    todo = []

    def start(info):   # on rank 0, the provenance known: what to measure
        todo[:] = resume(args, plan, samples, info, log) if args.resume else plan
        return todo

    stats = collectives.run(args, plan, samples, extra, log, start)
    if stats is not None:
        _summary(stats, todo, samples, log)
    return 0


def _summary(stats, plan, samples, log):
    print("probe: measured %d of %d points in %s (%d skipped by the budget, %d failed%s)"
          % (stats.measured, len(plan), _fmt_minutes(stats.elapsed), stats.skipped,
             stats.failed, ", budget spent" if stats.stopped_early else ""), file=log)
    _files(samples, log)


def _files(samples, log):
    for path in samples.paths():
        print("  %s" % path, file=log)


def dry_run(args):
    """Prints the plan; under --resume without the points the output folder holds already
    (the files read, nothing written)."""
    plan, resumed = build_plan(args), None
    if args.resume:
        samples = csvout.SampleSet(args.out)
        done = load_resumed(args, plan, samples)
        if done:
            todo = remaining(plan, done)
            plan, resumed = todo, (len(plan) - len(todo), len(done))
    try:
        return print_plan(args, plan, resumed=resumed)
    except BrokenPipeError:   # `| head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    check_args(args)
    if args.dry_run:
        return dry_run(args)
    check_out(args)
    return run_ops(args) if args.command == "ops" else run_collectives(args)


if __name__ == "__main__":
    sys.exit(main())
