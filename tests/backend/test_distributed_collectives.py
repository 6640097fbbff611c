# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Every ``cncl`` collective on mlu tensors against the same collective on ``gloo`` with cpu tensors, same run.

Real process groups: 2 and 3 ranks on 127.0.0.1 (free port), started with ``torch.multiprocessing``. Each rank joins
a ``cncl`` default group and a ``gloo`` group on the same store, runs each collective on both with the same inputs
(seeded per rank), and saves both results; the test process compares them. The same launch also checks the
argument errors (cpu tensor, mismatched shapes) and that the group stays usable after them.
"""

from __future__ import annotations

import datetime
import gc
import os
import socket
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.distributed_c10d import _coalescing_manager

import torch_mlu.distributed  # noqa: F401  (registers "cncl" until torch_mlu imports it itself)
from torch_mlu.distributed.process_group import PIPELINE_CHUNK_BYTES

LAUNCH_TIMEOUT_S = 180


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(fn: Callable[..., None], world: int, *args: object, timeout: float = LAUNCH_TIMEOUT_S) -> None:
    """Run ``fn(rank, world, port, *args)`` in ``world`` spawned processes; fail (not hang) after ``timeout``."""
    ctx = mp.start_processes(fn, args=(world, free_port(), *args), nprocs=world, join=False, start_method="spawn")
    deadline = time.monotonic() + timeout
    while not ctx.join(timeout=1):
        if time.monotonic() > deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail(f"distributed workers did not finish within {timeout} s")


# ---------------------------------------------------------------------------------------------------------------
# worker (runs in each spawned rank)


def _collectives(rank: int, world: int, device: torch.device, gloo: dist.ProcessGroup) -> dict[str, object]:
    """Run each collective on cncl (mlu) and gloo (cpu); return {name: (cncl result, gloo result)} on cpu."""
    gen = torch.Generator().manual_seed(100 + rank)
    out: dict[str, object] = {}

    def both(name: str, run: Callable[[torch.device, dist.ProcessGroup | None], object]) -> None:
        out[name] = (cpu(run(device, None)), cpu(run(torch.device("cpu"), gloo)))

    def cpu(x: object) -> object:
        if isinstance(x, torch.Tensor):
            return x.cpu()
        if isinstance(x, list | tuple):
            return [cpu(v) for v in x]
        return x

    x = torch.randn(5, 3, generator=gen)
    for op in ("SUM", "AVG", "MAX", "MIN", "PRODUCT"):
        def all_reduce(dev: torch.device, g: dist.ProcessGroup | None, op: str = op) -> object:
            t = x.to(dev, copy=True)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op), group=g)
            return cpu(t)
        both(f"all_reduce_{op}", all_reduce)

    xi = torch.randint(-50, 50, (7,), generator=gen, dtype=torch.int64)
    for op in ("SUM", "MAX", "BXOR"):
        def all_reduce_int(dev: torch.device, g: dist.ProcessGroup | None, op: str = op) -> object:
            t = xi.to(dev, copy=True)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op), group=g)
            return cpu(t)
        both(f"all_reduce_int64_{op}", all_reduce_int)

    # Integer-valued floats: gloo sums a strided cpu tensor in a different element order than our contiguous
    # staging buffer, so only exactly representable sums are comparable bit for bit.
    xn = torch.randint(-8, 8, (5, 3), generator=gen).float()

    def all_reduce_noncontig(dev: torch.device, g: dist.ProcessGroup | None) -> object:
        t = xn.to(dev, copy=True).t()  # transposed view: staged through a strided copy
        dist.all_reduce(t, group=g)
        return cpu(t)
    both("all_reduce_noncontiguous", all_reduce_noncontig)

    # Large enough to be staged and reduced chunk by chunk (PIPELINE_CHUNK_BYTES), the last chunk short; with and
    # without async_op. Integer-valued floats: exact sums, whatever the chunking.
    big = torch.randint(-8, 8, (PIPELINE_CHUNK_BYTES * 5 // 8 + 3,), generator=gen).float()
    for async_op in (False, True):
        def all_reduce_chunked(dev: torch.device, g: dist.ProcessGroup | None, async_op: bool = async_op) -> object:
            t = big.to(dev, copy=True)
            work = dist.all_reduce(t, group=g, async_op=async_op)
            if async_op:
                assert work is not None
                work.wait()
            return cpu(t)
        both("all_reduce_chunked_async" if async_op else "all_reduce_chunked", all_reduce_chunked)

    # Chunked, the layouts differing across ranks: rank 0 contiguous, the others a transposed view. The split into
    # chunks depends on size and dtype only, so the ranks' transfers match (gloo reference: contiguous tensors).
    big2d = torch.randint(-8, 8, (PIPELINE_CHUNK_BYTES // 4096 * 5 // 2, 1024), generator=gen).float()  # 2.5 chunks

    def all_reduce_chunked_layouts(dev: torch.device, g: dist.ProcessGroup | None) -> object:
        t = big2d.to(dev, copy=True)
        if dev.type == "mlu" and rank != 0:
            t = t.t().contiguous().t()  # same shape and values, column-major
        dist.all_reduce(t, group=g)
        return cpu(t.contiguous())
    both("all_reduce_chunked_layouts", all_reduce_chunked_layouts)

    root = world - 1
    xr = torch.randn(world * 4, 2, generator=gen)
    for name, fn in {
        "broadcast": lambda dev, g: _bcast(x.to(dev, copy=True), root, g),
        "reduce_to_root": lambda dev, g: _reduce(x.to(dev, copy=True), root, g),
        "all_gather": lambda dev, g: _all_gather(x.to(dev, copy=True), world, g),
        "all_gather_into_tensor": lambda dev, g: _all_gather_into(x.to(dev, copy=True), world, g),
        "reduce_scatter_tensor": lambda dev, g: _reduce_scatter(xr, dev, world, g),
        "gather": lambda dev, g: _gather(x.to(dev, copy=True), rank, root, world, g),
        "scatter": lambda dev, g: _scatter(x, dev, rank, root, world, g),
        "all_to_all_single": lambda dev, g: _a2a(torch.arange(world * 3.0) + 10 * rank, dev, None, None, g),
        # rank r sends j + 1 elements to rank j, so it receives r + 1 elements from every rank
        "all_to_all_single_uneven": lambda dev, g: _a2a(
            torch.arange(float(sum(range(1, world + 1)))) + 100 * rank, dev, list(range(1, world + 1)),
            [rank + 1] * world, g),
        "send_recv_ring": lambda dev, g: _ring(x.to(dev, copy=True), rank, world, g),
        "all_to_all_lists": lambda dev, g: _a2a_lists(rank, world, dev, g),
    }.items():
        out[name] = (cpu(fn(device, None)), cpu(fn(torch.device("cpu"), gloo)))

    # async_op=True: several collectives in flight, waited out of order; Work API as DDP uses it.
    ts = [x.to(device, copy=True) * (i + 1) for i in range(3)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    fut_values = [w.get_future() for w in works]
    for w in reversed(works):
        assert w.wait() is True
        assert w.is_completed()
    cs = [x * (i + 1) for i in range(3)]
    for c in cs:
        dist.all_reduce(c, group=gloo)
    out["async_all_reduce"] = ([t.cpu() for t in ts], cs)
    out["async_future_value"] = ([f.value()[0].cpu() for f in fut_values], cs)

    # coalesced calls (c10d's _coalescing_manager, as FSDP uses it): one work for several collectives; with a
    # device (cncl: _start/_end_coalescing) or without (gloo implements only the fast path). Integer-valued
    # floats: gloo reduces coalesced tensors as one flat buffer, i.e. in another summation order for 3 ranks.
    xc = torch.randint(-8, 8, (5, 3), generator=gen).float()
    xrc = torch.randint(-8, 8, (world * 4, 2), generator=gen).float()

    def coalesced(dev: torch.device, g: dist.ProcessGroup | None) -> object:
        cm_dev = dev if dev.type == "mlu" else None
        a, b = xc.to(dev, copy=True), (xc * 3).to(dev, copy=True)
        gathered = [torch.empty(world * xc.shape[0], *xc.shape[1:], device=dev) for _ in range(2)]
        scattered = [torch.empty(4, 2, device=dev) for _ in range(2)]
        with _coalescing_manager(group=g, device=cm_dev, async_ops=True) as cm:
            dist.all_reduce(a, group=g)
            dist.all_reduce(b, group=g)
        cm.wait()
        with _coalescing_manager(group=g, device=cm_dev, async_ops=True) as cm:
            for out in gathered:
                dist.all_gather_into_tensor(out, a, group=g)
        cm.wait()
        with _coalescing_manager(group=g, device=cm_dev, async_ops=True) as cm:
            for i, out in enumerate(scattered):
                dist.reduce_scatter_tensor(out, (xrc + i).to(dev, copy=True), group=g)
        cm.wait()
        return cpu([a, b, *gathered, *scattered])
    both("coalesced", coalesced)

    # object collectives pickle into uint8 tensors on the group's device (mlu for cncl)
    objs: list[object] = [None] * world
    objs_gloo: list[object] = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "sq": rank * rank})
    dist.all_gather_object(objs_gloo, {"rank": rank, "sq": rank * rank}, group=gloo)
    out["all_gather_object"] = (objs, objs_gloo)

    # a subgroup of the first and last rank: cncl picked again by default, gloo alongside
    members = [0, world - 1]
    sub, sub_gloo = dist.new_group(members), dist.new_group(members, backend="gloo")
    if rank in members:
        a, b = x.to(device, copy=True), x.clone()
        dist.all_reduce(a, group=sub)
        dist.all_reduce(b, group=sub_gloo)
        out["subgroup_all_reduce"] = (a.cpu(), b)
    else:
        out["subgroup_all_reduce"] = (None, None)

    dist.barrier()
    return out


def _bcast(t: torch.Tensor, root: int, g: dist.ProcessGroup | None) -> torch.Tensor:
    dist.broadcast(t, src=root, group=g)
    return t


def _reduce(t: torch.Tensor, root: int, g: dist.ProcessGroup | None) -> torch.Tensor | None:
    dist.reduce(t, dst=root, op=dist.ReduceOp.SUM, group=g)
    return t if dist.get_rank() == root else None  # non-root contents are unspecified (as in c10d)


def _all_gather(t: torch.Tensor, world: int, g: dist.ProcessGroup | None) -> list[torch.Tensor]:
    outs = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(outs, t, group=g)
    return outs


def _all_gather_into(t: torch.Tensor, world: int, g: dist.ProcessGroup | None) -> torch.Tensor:
    out = torch.empty((world * t.shape[0], *t.shape[1:]), dtype=t.dtype, device=t.device)
    dist.all_gather_into_tensor(out, t, group=g)
    return out


def _reduce_scatter(x: torch.Tensor, dev: torch.device, world: int, g: dist.ProcessGroup | None) -> torch.Tensor:
    out = torch.empty(x.shape[0] // world, *x.shape[1:], device=dev)
    dist.reduce_scatter_tensor(out, x.to(dev, copy=True), group=g)
    return out


def _gather(t: torch.Tensor, rank: int, root: int, world: int, g: dist.ProcessGroup | None) -> object:
    outs = [torch.empty_like(t) for _ in range(world)] if rank == root else None
    dist.gather(t, outs, dst=root, group=g)
    return outs


def _scatter(x: torch.Tensor, dev: torch.device, rank: int, root: int, world: int,
             g: dist.ProcessGroup | None) -> torch.Tensor:
    ins = [(x + i).to(dev) for i in range(world)] if rank == root else None
    out = torch.empty_like(x, device=dev)
    dist.scatter(out, ins, src=root, group=g)
    return out


def _a2a(x: torch.Tensor, dev: torch.device, in_splits: list[int] | None, out_splits: list[int] | None,
         g: dist.ProcessGroup | None) -> torch.Tensor:
    out = torch.empty(sum(out_splits) if out_splits else x.numel(), device=dev)
    dist.all_to_all_single(out, x.to(dev, copy=True), output_split_sizes=out_splits, input_split_sizes=in_splits,
                           group=g)
    return out


def _a2a_lists(rank: int, world: int, dev: torch.device, g: dist.ProcessGroup | None) -> list[torch.Tensor]:
    # one tensor per peer (gloo's list all_to_all needs equal sizes)
    ins = [torch.arange(3.0, device=dev) + 10 * rank + j for j in range(world)]
    outs = [torch.empty(3, device=dev) for _ in range(world)]
    dist.all_to_all(outs, ins, group=g)
    return outs


def _ring(t: torch.Tensor, rank: int, world: int, g: dist.ProcessGroup | None) -> torch.Tensor:
    recv = torch.empty_like(t)
    send_to, recv_from = (rank + 1) % world, (rank - 1) % world
    if rank % 2 == 0:
        dist.send(t * (rank + 1), send_to, group=g)
        dist.recv(recv, recv_from, group=g)
    else:
        dist.recv(recv, recv_from, group=g)
        dist.send(t * (rank + 1), send_to, group=g)
    return recv


def _errors(rank: int, device: torch.device) -> dict[str, str]:
    """Argument errors: the message of each, and a collective after them to prove the group still works."""
    got: dict[str, str] = {}
    try:
        dist.all_reduce(torch.ones(3))
    except ValueError as e:
        got["cpu_tensor"] = str(e)
    try:
        dist.all_reduce(torch.ones(4 + rank, device=device))
    except ValueError as e:
        got["shape_mismatch"] = str(e)
    try:
        dist.broadcast(torch.ones(2, 2, device=device), src=0) if rank == 0 else dist.all_reduce(
            torch.ones(2, 2, device=device))
    except ValueError as e:
        got["op_mismatch"] = str(e)
    try:  # every rank expects 1 element from each peer, but rank 0 sends 2 to rank 1
        splits = [2 if rank == 0 and j == 1 else 1 for j in range(dist.get_world_size())]
        dist.all_to_all_single(torch.empty(dist.get_world_size(), device=device),
                               torch.ones(sum(splits), device=device), [1] * dist.get_world_size(), splits)
    except ValueError as e:
        got["split_mismatch"] = str(e)
    # Ranks that diverge after a repeated call: the ones repeating it issue it before the check (speculatively),
    # the others must complete it; every rank gets the error. First rank 0 repeats, then the others do.
    for name, repeats in (("diverged_rank0_repeats", rank == 0), ("diverged_others_repeat", rank != 0)):
        same = torch.ones(6, device=device)
        dist.all_reduce(same)
        dist.all_reduce(same)
        try:
            dist.all_reduce(same if repeats else torch.ones(7, device=device))
        except ValueError as e:
            got[name] = str(e)
    t = torch.ones(2, device=device)
    dist.all_reduce(t)
    got["after_errors"] = str(t.cpu().tolist())
    return got


def _garbage_after_collectives(device: torch.device) -> int:
    """Objects the cycle collector finds after sync and async all_reduces, small and chunked (expected: none)."""
    small, big = torch.ones(16, device=device), torch.ones(PIPELINE_CHUNK_BYTES // 2 + 5, device=device)
    gc.collect()
    gc.disable()
    try:
        for t in (small, big):
            for async_op in (False, True):
                for _ in range(5):
                    work = dist.all_reduce(t, async_op=async_op)
                    if work is not None:
                        work.wait()
        dist.barrier()
    finally:
        gc.enable()
    return gc.collect()


def worker(rank: int, world: int, port: int, out_dir: str) -> None:
    try:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
        # No backend and no device_id: c10d picks the default backend of the accelerator, mlu -> cncl.
        dist.init_process_group(timeout=datetime.timedelta(seconds=60))
        device = torch.device("mlu", rank % torch.mlu.device_count())
        torch.mlu.set_device(device)
        gloo = dist.new_group(backend="gloo")
        result = {
            "backend_config": dist.get_backend_config(),
            "default_for_mlu": dist.get_default_backend_for_device("mlu"),
            "pg_type": type(dist.group.WORLD).__name__,
            "collectives": _collectives(rank, world, device, gloo),
            "errors": _errors(rank, device),
            "garbage": _garbage_after_collectives(device),
        }
        dist.destroy_process_group()
        torch.save(result, Path(out_dir) / f"rank{rank}.pt")
    except BaseException:
        (Path(out_dir) / f"rank{rank}.err").write_text(traceback.format_exc())
        raise


# ---------------------------------------------------------------------------------------------------------------
# tests


@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def results(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    world = request.param
    out = tmp_path_factory.mktemp(f"cncl{world}")
    launch(worker, world, str(out))
    errs = sorted(out.glob("*.err"))
    assert not errs, errs[0].read_text()
    return [torch.load(out / f"rank{r}.pt", weights_only=False) for r in range(world)]


def _same(a: object, b: object) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a == b
    return a is None and b is None


def test_default_backend_picks_cncl(results: list[dict]) -> None:
    # init_process_group() without backend: c10d records "undefined" and configures the accelerator's default
    assert {r["backend_config"] for r in results} == {"mlu:cncl"}
    assert {r["default_for_mlu"] for r in results} == {"cncl"}
    assert {r["pg_type"] for r in results} == {"ProcessGroupCNCL"}


COLLECTIVES = [
    *(f"all_reduce_{op}" for op in ("SUM", "AVG", "MAX", "MIN", "PRODUCT")),
    *(f"all_reduce_int64_{op}" for op in ("SUM", "MAX", "BXOR")),
    "all_reduce_noncontiguous", "all_reduce_chunked", "all_reduce_chunked_async", "all_reduce_chunked_layouts",
    "broadcast", "reduce_to_root", "all_gather", "all_gather_into_tensor",
    "reduce_scatter_tensor", "gather", "scatter", "all_to_all_single", "all_to_all_single_uneven", "all_to_all_lists",
    "send_recv_ring", "async_all_reduce", "async_future_value", "all_gather_object", "subgroup_all_reduce",
    "coalesced",
]


@pytest.mark.parametrize("name", COLLECTIVES)
def test_collective_matches_gloo(results: list[dict], name: str) -> None:
    for rank, r in enumerate(results):
        cncl_result, gloo_result = r["collectives"][name]
        assert _same(cncl_result, gloo_result), f"{name} on rank {rank}: cncl {cncl_result} != gloo {gloo_result}"


def test_collectives_changed_something(results: list[dict]) -> None:
    """Guards against a vacuous comparison: the reduced values differ from the rank's own input."""
    r0, r1 = results[0]["collectives"], results[1]["collectives"]
    assert not torch.equal(r0["all_reduce_SUM"][0], r0["all_reduce_MAX"][0])
    assert torch.equal(r0["all_reduce_SUM"][0], r1["all_reduce_SUM"][0])
    assert not torch.equal(r0["scatter"][0], r1["scatter"][0])
    assert [o["rank"] for o in r0["all_gather_object"][0]] == list(range(len(results)))


def test_finished_collectives_leave_no_reference_cycles(results: list[dict]) -> None:
    """Jobs are freed by reference counting: a training loop never feeds the garbage collector's full collections."""
    assert [r["garbage"] for r in results] == [0] * len(results)


def test_cpu_tensor_error_names_gloo(results: list[dict]) -> None:
    for r in results:
        msg = r["errors"]["cpu_tensor"]
        assert "cncl" in msg and "only mlu tensors" in msg and "'gloo'" in msg


def test_shape_mismatch_is_a_clear_error_on_every_rank(results: list[dict]) -> None:
    for r in results:
        msg = r["errors"]["shape_mismatch"]
        assert "different arguments" in msg
        assert "rank 0: all_reduce float32[4]" in msg and "rank 1: all_reduce float32[5]" in msg


def test_op_mismatch_is_reported(results: list[dict]) -> None:
    for r in results:
        msg = r["errors"]["op_mismatch"]
        assert "rank 0: broadcast" in msg and "rank 1: all_reduce" in msg


@pytest.mark.parametrize("case", ["diverged_rank0_repeats", "diverged_others_repeat"])
def test_divergence_after_a_repeated_call_is_reported(results: list[dict], case: str) -> None:
    for r in results:
        msg = r["errors"][case]
        assert "different arguments" in msg
        assert "rank 0: all_reduce float32[" in msg and "rank 1: all_reduce float32[" in msg
        assert "float32[6]" in msg and "float32[7]" in msg


def test_all_to_all_split_mismatch_is_reported(results: list[dict]) -> None:
    for r in results:
        assert "rank 0 sends 8 bytes to rank 1, which expects 4 bytes from it" in r["errors"]["split_mismatch"]


def test_group_usable_after_argument_errors(results: list[dict]) -> None:
    world = len(results)
    for r in results:
        assert r["errors"]["after_errors"] == str([float(world)] * 2)
