"""Collective timing with torch.distributed over NCCL (RCCL on ROCm: the same backend).

Launched on every GPU with torchrun (RANK, WORLD_SIZE, LOCAL_RANK) or srun (SLURM_PROCID,
SLURM_NTASKS, SLURM_LOCALID), one process per GPU.  The ranks are grouped into nodes by
host name; a layout NxG is the group of the first G GPUs of each of the first N nodes
(torch.distributed.new_group).  Rank 0 walks the order with the budget (order.run) and
broadcasts each point it runs; the ranks of the point's group run it, the others wait for
the next.  A point is timed as nccl-tests does: warm-up calls, then per repeat a barrier and
`iters` calls between two CUDA events (time per call = elapsed / iters); the point's time is
the maximum over the group's ranks of their median over the repeats.  Only rank 0 writes
(and, under --resume, reads the files an earlier run left: it alone decides what to measure).

Without a GPU (torch.cuda not available) it runs over gloo on the CPU and times with
perf_counter: for testing the harness, not for calibration.  LLMP_PROBE_HOST, where set, stands
for the host name in the grouping into nodes (to test layouts across "nodes" on one machine).

Importing this module needs no torch; the functions that measure get it passed in.
"""

import os
import statistics
import subprocess
import sys
import time

import grid

RUN, STOP = 1, 0


def dist_env(env=None):
    """(rank, world_size, local_rank) from torchrun's or Slurm's variables."""
    env = os.environ if env is None else env
    try:
        if "RANK" in env and "WORLD_SIZE" in env:
            return int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", "0"))
        if "SLURM_PROCID" in env and "SLURM_NTASKS" in env:
            return (int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"]),
                    int(env.get("SLURM_LOCALID", "0")))
    except ValueError as e:
        raise SystemExit("probe collectives: bad rank variable: %s" % e)
    raise SystemExit("probe collectives: no RANK and WORLD_SIZE (torchrun) nor SLURM_PROCID and "
                     "SLURM_NTASKS (srun): launch one process per GPU with torchrun or srun")


def master_address(env=None):
    """MASTER_ADDR as given, or under Slurm the first host of the job (scontrol)."""
    env = os.environ if env is None else env
    if env.get("MASTER_ADDR"):
        return env["MASTER_ADDR"]
    nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST")
    if nodelist:
        try:
            r = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True,
                               text=True, timeout=30)
            if r.returncode == 0 and r.stdout.split():
                return r.stdout.split()[0]
        except (OSError, subprocess.SubprocessError):
            pass
    raise SystemExit("probe collectives: set MASTER_ADDR (and MASTER_PORT) to the first node's "
                     "address, e.g. export MASTER_ADDR=$(scontrol show hostnames "
                     "$SLURM_JOB_NODELIST | head -n1)")


def nodes_of(hostnames):
    """[[ranks of node 0], [ranks of node 1], ...] from each rank's host name, nodes in the
    order of their lowest rank, ranks ascending."""
    nodes, where = [], {}
    for r, h in enumerate(hostnames):
        if h not in where:
            where[h] = len(nodes)
            nodes.append([])
        nodes[where[h]].append(r)
    return nodes


def layout_ranks(nodes, n, g):
    """The ranks of layout n x g: the first g ranks of each of the first n nodes."""
    if n > len(nodes):
        raise ValueError("layout %dx%d needs %d nodes, the job has %d" % (n, g, n, len(nodes)))
    short = [len(nodes[i]) for i in range(n) if len(nodes[i]) < g]
    if short:
        raise ValueError("layout %dx%d needs %d GPUs per node, a node of the job has %d"
                         % (n, g, g, min(short)))
    return [nodes[i][j] for i in range(n) for j in range(g)]


def _time_collective(torch, dist, fn, group, device, warmup, iters, repeats):
    cuda = device.type == "cuda"
    for _ in range(warmup):
        fn()
    if cuda:
        torch.cuda.synchronize(device)
    times = []
    for _ in range(repeats):
        if cuda:
            try:
                dist.barrier(group=group, device_ids=[device.index])
            except TypeError:   # older torch without device_ids
                dist.barrier(group=group)
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / iters)
        else:   # gloo: the calls return when done
            dist.barrier(group=group)
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            times.append((time.perf_counter() - t0) * 1e6 / iters)
    t = torch.tensor([statistics.median(times)], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return t.item()


def _call(torch, dist, kind, shape, ranks, rank, group, device):
    """The collective at shape (fp16 elements, grid.coll_shape) as a zero-argument call."""
    f16 = torch.float16
    n = len(ranks)
    if kind == "allreduce":
        buf = torch.zeros(shape, dtype=f16, device=device)
        return lambda: dist.all_reduce(buf, group=group)
    if kind == "allgather":
        inp = torch.zeros(shape, dtype=f16, device=device)
        out = torch.empty(shape * n, dtype=f16, device=device)
        if device.type == "cpu":   # gloo has only the list form
            parts = list(out.chunk(n))
            return lambda: dist.all_gather(parts, inp, group=group)
        return lambda: dist.all_gather_into_tensor(out, inp, group=group)
    if kind == "reducescatter":
        inp = torch.zeros(shape, dtype=f16, device=device)
        out = torch.empty(shape // n, dtype=f16, device=device)
        return lambda: dist.reduce_scatter_tensor(out, inp, group=group)
    if kind == "alltoall":
        inp = torch.zeros(shape, dtype=f16, device=device)
        out = torch.empty(shape, dtype=f16, device=device)
        return lambda: dist.all_to_all_single(out, inp, group=group)
    if kind == "p2p":   # ranks[0] sends to ranks[1]
        buf = torch.zeros(shape, dtype=f16, device=device)
        if rank == ranks[0]:
            return lambda: dist.send(buf, dst=ranks[1], group=group)
        return lambda: dist.recv(buf, src=ranks[0], group=group)
    raise ValueError(kind)


def run(args, plan, out_set, extra, log=sys.stderr, start=None):
    """Measures the plan's points on every rank; rank 0 writes rows into out_set.  Returns
    order.RunStats on rank 0, None on the others.  start(info), where given, is called on rank
    0 once the provenance (info) is known, and returns the points of the plan to measure (by
    default all); a SystemExit it raises stops every rank."""
    import env
    import order
    torch = env.import_torch()
    import torch.distributed as dist

    rank, world, local = dist_env()
    os.environ.setdefault("MASTER_PORT", "29500")
    os.environ["MASTER_ADDR"] = master_address()
    if torch.cuda.is_available():   # a task may see all the node's GPUs, or only its own
        device = torch.device("cuda", local % torch.cuda.device_count())
        backend = "nccl"
        torch.cuda.set_device(device)
    else:
        device, backend = torch.device("cpu"), "gloo"
        if rank == 0:
            print("probe collectives: no GPU visible to torch: timing gloo on the CPU, which "
                  "calibrates nothing (for tests of the harness)", file=log)
        if "reducescatter" in args.kind_list:
            raise SystemExit("probe collectives: gloo has no reduce-scatter: leave it out of "
                             "--kinds without a GPU")
    dist.init_process_group(backend, rank=rank, world_size=world)
    try:
        hosts = [None] * world
        dist.all_gather_object(hosts, os.environ.get("LLMP_PROBE_HOST") or os.uname().nodename)
        nodes = nodes_of(hosts)
        groups = {}
        for kind, n, g in dict.fromkeys(p.stream for p in plan):
            key = (n, g)
            if key in groups:
                continue
            try:
                ranks = layout_ranks(nodes, n, g)
            except ValueError as e:
                if rank == 0:
                    print("probe collectives: %s" % e, file=log)
                raise SystemExit(2)
            groups[key] = (ranks, dist.new_group(ranks))   # every rank, in the same order
        msg = torch.zeros(2, dtype=torch.int64, device=device)
        todo = plan
        if rank == 0:   # the provenance: gpu_count is the job's GPUs
            info = env.provenance(torch, device, args.minutes, extra=extra)
            info["gpu_count"] = world
            info["backend"] = backend
            info["world"] = "%d nodes, %s GPUs per node" % (
                len(nodes), "/".join(sorted({str(len(x)) for x in nodes})))
            out_set.info.update(info)
            try:
                todo = start(out_set.info) if start else plan
            except BaseException:   # the other ranks wait for a point: tell them to stop
                msg[0], msg[1] = STOP, 0
                dist.broadcast(msg, src=0)
                raise

        def point_call(p):
            kind, n, g = p.stream
            ranks, group = groups[(n, g)]
            if rank not in ranks:
                return None
            shape = grid.coll_shape(kind, p.shape[2], len(ranks))
            call_s = grid.coll_call_seconds(kind, p.shape[2], n, g)
            iters = grid.coll_iters(call_s, args.iters)
            fn = _call(torch, dist, kind, shape, ranks, rank, group, device)
            us = _time_collective(torch, dist, fn, group, device, min(args.warmup, iters), iters,
                                  args.repeats)
            del fn
            return shape, us

        if rank == 0:   # the index of a point in the whole plan, which every rank holds
            index = {id(p): i for i, p in enumerate(plan)}

            def measure(p):
                msg[0], msg[1] = RUN, index[id(p)]
                dist.broadcast(msg, src=0)
                shape, us = point_call(p)
                kind, n, g = p.stream
                out_set.add_nccl(kind, n, g, shape, us)
                return us

            def progress(i, p, result, took):
                print("[%5d/%d] %-13s %dx%d %12d B %12.1f us" % (
                    i + 1, len(todo), p.stream[0], p.stream[1], p.stream[2], p.shape[2],
                    result or 0), file=log, flush=True)

            budget = args.minutes * 60 if args.minutes else None
            stats = order.run(todo, budget, measure, log=progress)
            msg[0], msg[1] = STOP, 0
            dist.broadcast(msg, src=0)
            return stats
        while True:
            dist.broadcast(msg, src=0)
            if int(msg[0]) == STOP:
                return None
            point_call(plan[int(msg[1])])
    finally:
        dist.destroy_process_group()
