# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""All-reduce bandwidth of ``cncl`` (mlu tensors, staged through host memory) vs ``gloo`` (cpu tensors), one run.

Usage: python benchmarks/bench_cncl.py [--ranks 2] [--sizes-mb 1 64] [--rounds 15] [--warmup 5] [--async-op]

Spawns ``--ranks`` processes on 127.0.0.1. Each process joins a ``cncl`` default group (the cross-rank argument
check on, as users get it), a ``gloo`` group over the same store, and a second ``cncl`` group with
``check_arguments=False`` (the cost of the host staging alone). For each size, every group first runs one call whose
result is verified and ``--warmup`` untimed calls (connections, staging pool); then ``--rounds`` rounds of the same
number of calls per group follow (about 64 MB of data per group and round: 64 calls at 1 MB, 3 at 64 MB), the
groups taking turns call by call in an order that rotates, so that a burst of load on a shared machine hits them
alike. Each call is timed until its collective completed: ``all_reduce(async_op=False)`` (c10d waits on the call's
work), or with ``--async-op`` ``all_reduce(async_op=True)`` and ``work.wait()``; for mlu tensors
``torch.mlu.synchronize`` follows. Every group sees the same sizes and call counts; the tensors hold zeros during
the timed calls (no overflow, no special floating-point values).

Printed per size: the algorithm bandwidth (tensor MB / median seconds per call, MB = 2**20 bytes) of each group,
its ratio to gloo (gloo's median call time / the group's) and the range of that ratio over the rounds. Target:
ratio >= 0.80 (the staging should cost little next to the transport).
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import statistics
import sys
import time
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import torch_mlu.distributed  # registers "cncl" until torch_mlu imports it itself

TARGET = 0.8
#: the groups timed, in the order of the table; ratios are against "gloo"
GROUPS = ("gloo", "cncl", "cncl-nocheck")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _calls_per_round(mb: float) -> int:
    """About 64 MB of data per round, at least 3 and at most 100 calls."""
    return min(100, max(3, int(64 / mb)))


def _time_call(tensor: torch.Tensor, group: dist.ProcessGroup, async_op: bool) -> float:
    """Seconds of one all_reduce until its result is complete (on the device for mlu tensors): c10d waits on the
    work of a synchronous call; with ``async_op`` the returned work is waited on here."""
    start = time.perf_counter()
    work = dist.all_reduce(tensor, group=group, async_op=async_op)
    if work is not None:
        work.wait()
    if tensor.device.type == "mlu":
        torch.mlu.synchronize(tensor.device)
    return time.perf_counter() - start


def _verify(tensor: torch.Tensor, group: dist.ProcessGroup, rank: int, world: int) -> None:
    """One all_reduce whose result is checked: sum over ranks of (rank + 1)."""
    tensor.fill_(rank + 1)
    dist.all_reduce(tensor, group=group)
    expected = world * (world + 1) / 2
    if not bool((tensor == expected).all()):
        raise AssertionError(f"all_reduce on {tensor.device} gave a wrong result (expected {expected})")
    tensor.zero_()  # the timed calls reduce zeros: no overflow, no special floating-point values


def _worker(rank: int, world: int, port: int, sizes_mb: list[float], rounds: int, warmup: int, async_op: bool,
            queue: mp.Queue) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    warnings.filterwarnings("ignore", message=r"barrier\(\): using the device under current context")
    device = torch.device("mlu", rank % torch.mlu.device_count())
    torch.mlu.set_device(device)
    dist.init_process_group("cncl", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=120),
                            device_id=device)
    world_group = dist.group.WORLD
    assert world_group is not None
    groups = {
        "gloo": dist.new_group(backend="gloo"),
        "cncl": world_group,
        "cncl-nocheck": dist.new_group(
            backend="cncl", pg_options=torch_mlu.distributed.ProcessGroupCNCL.Options(check_arguments=False)
        ),
    }
    results = []
    for mb in sizes_mb:
        numel = int(mb * (1 << 20)) // 4
        calls = _calls_per_round(mb)
        tensors = {name: torch.zeros(numel, device="cpu" if name == "gloo" else device) for name in GROUPS}
        for name in GROUPS:
            _verify(tensors[name], groups[name], rank, world)
            for _ in range(warmup):
                _time_call(tensors[name], groups[name], async_op)
        # times[name][round] = seconds of each call of that round; the groups take turns call by call, so a burst of
        # load on the shared machine hits them alike.
        times: dict[str, list[list[float]]] = {name: [] for name in GROUPS}
        for r in range(rounds):
            dist.barrier(group=groups["gloo"])
            for name in GROUPS:
                times[name].append([])
            for i in range(calls):
                for k in range(len(GROUPS)):
                    name = GROUPS[(r + i + k) % len(GROUPS)]
                    times[name][r].append(_time_call(tensors[name], groups[name], async_op))
        results.append((mb, calls, times))
    if rank == 0:
        queue.put(results)
    dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print, per size, each group's MB/s and its ratio to gloo; exit status 0.

    Raises:
        AssertionError (in a rank, reported by ``torch.multiprocessing``): a verified all_reduce gave a wrong result.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[1.0, 64.0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls per group and size (default 5)")
    parser.add_argument("--async-op", action="store_true",
                        help="time all_reduce(async_op=True) followed by work.wait() instead of async_op=False")
    args = parser.parse_args(argv)
    ctx = mp.get_context("spawn")
    queue: mp.Queue = ctx.Queue()
    mp.spawn(_worker, args=(args.ranks, _free_port(), args.sizes_mb, args.rounds, args.warmup, args.async_op, queue),
             nprocs=args.ranks)
    results = queue.get(timeout=10)
    print(f"all_reduce SUM float32, {args.ranks} ranks on 127.0.0.1, async_op={args.async_op}; {args.warmup} warm-up "
          "calls per "
          f"group, then {args.rounds} rounds in which the groups take turns call by call; MB/s from the median call "
          "time, ratio = gloo's median call time / the group's, (range) = the per-round ratios")
    print(f"{'size':>8} {'calls':>5} {'gloo cpu MB/s':>14} {'cncl mlu MB/s':>14} {'ratio':>6} {'(range)':>13} "
          f"{'cncl no-check MB/s':>19} {'ratio':>6} {'(range)':>13}")
    worst = float("inf")
    for mb, calls, times in results:
        median = {name: statistics.median(t for rnd in times[name] for t in rnd) for name in GROUPS}
        cells = []
        for name in GROUPS[1:]:
            ratio = median["gloo"] / median[name]
            per_round = [statistics.median(g) / statistics.median(c)
                         for g, c in zip(times["gloo"], times[name], strict=True)]
            worst = min(worst, ratio)
            cells.append(f"{mb / median[name]:>{19 if name == 'cncl-nocheck' else 14}.1f} {ratio:>5.2f}x "
                         f"({min(per_round):.2f}-{max(per_round):.2f})")
        print(f"{mb:>6g}MB {calls * len(times['gloo']):>5} {mb / median['gloo']:>14.1f} " + " ".join(cells))
    print("cncl = default group (cross-rank argument check on); no-check = check_arguments=False (staging only).")
    print(f"Worst median ratio {worst:.3f}x (target >= {TARGET:.2f}x): {'met' if worst >= TARGET else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
