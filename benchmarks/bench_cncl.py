"""All-reduce bandwidth of ``cncl`` (mlu tensors, staged through host memory) vs ``gloo`` (cpu tensors), one run.

Usage: python benchmarks/bench_cncl.py [--ranks 2] [--sizes-mb 1 64] [--rounds 5]

Spawns ``--ranks`` processes on 127.0.0.1. Each process joins a ``cncl`` default group and a ``gloo`` group over
the same store, plus a second ``cncl`` group with ``check_arguments=False``; for each size it alternates rounds of
``all_reduce`` (SUM, float32) on a cpu tensor over gloo, on an mlu tensor over cncl, and on an mlu tensor over the
unchecked cncl group (the cost of the host staging alone, without the argument check's extra round trip); a round
times back-to-back synchronous calls. Bandwidth is the algorithm
bandwidth (tensor bytes / seconds per call, MB/s) of the fastest round (like ``timeit``: on a shared machine the
fastest round is the one least disturbed by other processes), printed for both with the ratio cncl/gloo (target
>= 0.8: the staging should cost little next to the transport).
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import torch_mlu.distributed  # registers "cncl" until torch_mlu imports it itself


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _time_calls(tensor: torch.Tensor, group: dist.ProcessGroup, iters: int) -> float:
    """Seconds per synchronous all_reduce, over ``iters`` calls after a barrier."""
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(tensor, group=group)
    if tensor.device.type == "mlu":
        torch.mlu.synchronize(tensor.device)
    return (time.perf_counter() - start) / iters


def _worker(rank: int, world: int, port: int, sizes_mb: list[float], rounds: int, queue: mp.Queue) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("cncl", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=120))
    gloo = dist.new_group(backend="gloo")
    staging_only = dist.new_group(
        backend="cncl", pg_options=torch_mlu.distributed.ProcessGroupCNCL.Options(check_arguments=False)
    )
    device = torch.device("mlu", rank % torch.mlu.device_count())
    world_group = dist.group.WORLD
    assert world_group is not None
    results = []
    for mb in sizes_mb:
        numel = int(mb * (1 << 20)) // 4
        iters = min(200, max(3, int(64 / mb)))
        cpu_t = torch.ones(numel)
        mlu_t = torch.ones(numel, device=device)
        _time_calls(cpu_t, gloo, 1)  # warm-up: connections, staging pool
        _time_calls(mlu_t, world_group, 1)
        _time_calls(mlu_t, staging_only, 1)
        gloo_s, cncl_s, staging_s = [], [], []
        for _ in range(rounds):
            gloo_s.append(_time_calls(cpu_t, gloo, iters))
            cncl_s.append(_time_calls(mlu_t, world_group, iters))
            staging_s.append(_time_calls(mlu_t, staging_only, iters))
        results.append((mb, min(gloo_s), min(cncl_s), min(staging_s)))
    if rank == 0:
        queue.put(results)
    dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per size: gloo MB/s, cncl MB/s and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[1.0, 64.0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    ctx = mp.get_context("spawn")
    queue: mp.Queue = ctx.Queue()
    mp.spawn(_worker, args=(args.ranks, _free_port(), args.sizes_mb, args.rounds, queue), nprocs=args.ranks)
    results = queue.get(timeout=10)
    print(f"all_reduce SUM float32, {args.ranks} ranks on 127.0.0.1, fastest of {args.rounds} rounds")
    header = ("size", "gloo cpu MB/s", "cncl mlu MB/s", "ratio", "staging-only MB/s", "ratio")
    print(f"{header[0]:>8} {header[1]:>14} {header[2]:>14} {header[3]:>7} {header[4]:>18} {header[5]:>7}")
    worst = float("inf")
    for mb, gloo_s, cncl_s, staging_s in results:
        gloo_bw, cncl_bw, staging_bw = mb / gloo_s, mb / cncl_s, mb / staging_s
        worst = min(worst, staging_bw / gloo_bw)
        print(f"{mb:>6g}MB {gloo_bw:>14.1f} {cncl_bw:>14.1f} {cncl_bw / gloo_bw:>6.2f}x {staging_bw:>18.1f} "
              f"{staging_bw / gloo_bw:>6.2f}x")
    print("cncl = default group (cross-rank argument check on); staging-only = check_arguments=False, i.e. the cost")
    print(f"of the host staging alone. Worst staging-only ratio {worst:.2f}x (target >= 0.80x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
