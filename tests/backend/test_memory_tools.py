# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Memory tooling of torch.mlu against PyTorch's own consumers: memory_summary in torch.cuda's layout, snapshots
that torch.cuda._memory_viz parses and renders, the per-process fraction enforced by the caching allocator (OOM in
CUDA's message shape), deprecated aliases, nested stats, pinned host stats."""

from __future__ import annotations

import gc
import pickle
import re
import warnings

import pytest
import torch
from mlu_helpers import run_python
from torch.cuda import _memory_viz

MiB = 1 << 20


def test_memory_summary_matches_cuda_layout():
    x = torch.empty(3 * MiB, dtype=torch.uint8, device="mlu")
    ours = torch.mlu.memory_summary()
    stats = torch.mlu.memory_stats()
    # Oracle: torch.cuda's own formatter fed with our statistics (cuda's memory_stats patched for the call).
    orig = torch.cuda.memory.memory_stats
    torch.cuda.memory.memory_stats = lambda device=None: {**{k: 0 for k in _keys_cuda_needs()}, **stats}
    try:
        upstream = torch.cuda.memory.memory_summary(device=torch.mlu.current_device())
    finally:
        torch.cuda.memory.memory_stats = orig
    expect = (upstream.replace("PyTorch CUDA memory summary", "PyTorch MLU memory summary")
              .replace("CUDA OOMs", "MLU OOMs").replace("cudaMalloc retries", "cnrtMalloc retries")
              .replace("GPU reserved", "MLU reserved"))
    assert [len(line) for line in ours.splitlines()] == [len(line) for line in expect.splitlines()]
    assert ours == expect
    assert "Allocated memory" in ours and "MLU reserved memory" in ours
    del x
    assert torch.mlu.memory_summary(abbreviated=True).count("from large pool") == 0


def _keys_cuda_needs() -> list[str]:
    keys = []
    for m in ("allocated_bytes", "active_bytes", "requested_bytes", "reserved_bytes", "inactive_split_bytes",
              "allocation", "active", "segment", "inactive_split"):
        for pool in ("all", "large_pool", "small_pool"):
            keys += [f"{m}.{pool}.{k}" for k in ("current", "peak", "allocated", "freed")]
    for m in ("oversize_allocations", "oversize_segments"):
        keys += [f"{m}.{k}" for k in ("current", "peak", "allocated", "freed")]
    return keys + ["num_ooms", "num_alloc_retries"]


def test_nested_stats_and_deprecated_aliases():
    gc.collect()  # garbage of earlier tests (captured graphs) freed between the two reads would change the counts
    nested = torch.mlu.memory_stats_as_nested_dict()
    flat = torch.mlu.memory_stats()
    assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"]
    assert nested["num_ooms"] == flat["num_ooms"]
    with pytest.warns(FutureWarning):
        assert torch.mlu.memory_cached() == torch.mlu.memory_reserved()
    with pytest.warns(FutureWarning):
        assert torch.mlu.max_memory_cached() == torch.mlu.max_memory_reserved()
    with pytest.warns(FutureWarning):
        torch.mlu.reset_max_memory_cached()
    assert torch.mlu.max_memory_reserved() == torch.mlu.memory_reserved()


def test_snapshot_loads_in_pytorch_memory_viz(tmp_path):
    torch.mlu.empty_cache()
    torch.mlu.memory._record_memory_history(max_entries=10000)
    try:
        w = torch.randn(64, 32, device="mlu", requires_grad=True)
        loss = (torch.randn(16, 64, device="mlu") @ w).relu().sum()
        loss.backward()
        keep = torch.empty(2 * MiB, dtype=torch.uint8, device="mlu")
        snap = torch.mlu.memory._snapshot()
    finally:
        torch.mlu.memory._record_memory_history(enabled=None)
    seg_addrs = {s["address"] for s in snap["segments"]}
    assert keep.data_ptr() in seg_addrs
    seg = next(s for s in snap["segments"] if s["address"] == keep.data_ptr())
    assert seg["blocks"][0]["state"] == "active_allocated" and seg["total_size"] >= 2 * MiB
    frames = seg["blocks"][0]["frames"]
    assert any(f["filename"].endswith("test_memory_tools.py") for f in frames), frames
    actions = {e["action"] for e in snap["device_traces"][keep.device.index]}
    assert {"alloc", "free_requested", "free_completed", "segment_alloc"} <= actions
    # PyTorch's own readers of the format
    folded = _memory_viz.memory(snap, format_flamegraph=lambda stacks: stacks)  # flamegraph.pl input, no download
    assert "test_memory_tools.py" in folded
    assert _memory_viz.segments(snap, format_flamegraph=lambda stacks: stacks)
    assert _memory_viz.segsum(snap)
    assert "alloc" in _memory_viz.trace(snap)
    html = _memory_viz.trace_plot(snap)
    assert html.startswith("\n<!DOCTYPE html>") or "<!DOCTYPE html>" in html
    (tmp_path / "trace.html").write_text(html)
    assert "<!DOCTYPE html>" in _memory_viz.segment_plot(snap)
    pickle.loads(pickle.dumps(snap))
    torch.mlu.memory._dump_snapshot(str(tmp_path / "snap.pickle"))
    with open(tmp_path / "snap.pickle", "rb") as f:
        assert "segments" in pickle.load(f)
    assert torch.mlu.memory_snapshot()  # segments only


def test_history_off_records_nothing_new():
    torch.mlu.memory._record_memory_history(enabled=None)
    x = torch.empty(MiB, device="mlu")
    del x
    assert all(not t for t in torch.mlu.memory._snapshot()["device_traces"])


def test_per_process_fraction_enforced_with_cuda_message_shape():
    # A fresh process with a 64 MiB device: a 50% fraction allows 32 MiB reserved.
    code = r"""
import torch, re
torch.mlu.set_per_process_memory_fraction(0.5)
assert torch.mlu.get_per_process_memory_fraction() == 0.5
a = torch.empty(20 << 20, dtype=torch.uint8, device="mlu")
try:
    b = torch.empty(20 << 20, dtype=torch.uint8, device="mlu")
except torch.OutOfMemoryError as e:
    msg = str(e)
    print(msg)
    assert isinstance(e, torch.mlu.OutOfMemoryError)
else:
    raise SystemExit("no OOM")
pat = (r"^MLU out of memory\. Tried to allocate 20\.00 MiB\. MLU 0 has a total capacity of 64\.00 MiB of which "
       r"[\d.]+ MiB is free\. Including non-PyTorch memory, this process has [\d.]+ MiB memory in use\. "
       r"32\.00 MiB allowed; Of the allocated memory 20\.00 MiB is allocated by PyTorch, and .* is reserved by "
       r"PyTorch but unallocated\.")
assert re.match(pat, msg), msg
torch.mlu.set_per_process_memory_fraction(1.0)
b = torch.empty(20 << 20, dtype=torch.uint8, device="mlu")
for bad in (1.5, -0.1):
    try:
        torch.mlu.set_per_process_memory_fraction(bad)
    except ValueError:
        pass
    else:
        raise SystemExit("accepted " + str(bad))
try:
    torch.mlu.set_per_process_memory_fraction(1)
except TypeError:
    print("OK")
"""
    r = run_python(code, env={"CATCH_MLU_MEMORY_BYTES": str(64 * MiB)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("OK")


def test_cuda_oom_message_has_the_same_shape():
    # The shape we claim, checked against the text of c10's CUDA allocator message (as PyTorch prints it).
    cuda_msg = ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which "
                "1.00 GiB is free. Including non-PyTorch memory, this process has 78.15 GiB memory in use. "
                "39.58 GiB allowed; Of the allocated memory 38.00 GiB is allocated by PyTorch, and 0 bytes is "
                "reserved by PyTorch but unallocated.")
    pat = (r"^(CUDA|MLU) out of memory\. Tried to allocate .+?\. (GPU|MLU) \d+ has a total capacity of .+? of which "
           r".+? is free\. Including non-PyTorch memory, this process has .+? memory in use\. (.+? allowed; )?Of the "
           r"allocated memory .+? is allocated by PyTorch, and .+? is reserved by PyTorch but unallocated\.")
    assert re.match(pat, cuda_msg)
    with pytest.raises(torch.OutOfMemoryError) as e:
        torch.empty(1 << 50, dtype=torch.uint8, device="mlu")
    assert re.match(pat, str(e.value)), str(e.value)


def test_host_stats_count_pinned_blocks():
    torch.mlu.reset_accumulated_host_memory_stats()
    before = torch.mlu.host_memory_stats()
    p = torch.empty(1000, dtype=torch.uint8).pin_memory()
    during = torch.mlu.host_memory_stats()
    assert during["allocations.current"] == before["allocations.current"] + 1
    assert during["allocated_bytes.current"] >= before["allocated_bytes.current"] + 1000
    assert during["num_host_alloc"] == before["num_host_alloc"] + 1
    del p
    after = torch.mlu.host_memory_stats()
    assert after["allocations.current"] == before["allocations.current"]
    assert torch.mlu.host_memory_stats_as_nested_dict()["allocations"]["current"] == after["allocations.current"]
    torch.mlu.reset_peak_host_memory_stats()
    assert torch.mlu.host_memory_stats()["allocated_bytes.peak"] == after["allocated_bytes.current"]


def test_raw_alloc_caching_switch_and_device_info():
    ptr = torch.mlu.caching_allocator_alloc(MiB)
    assert torch.mlu.memory_allocated() >= MiB
    torch.mlu.caching_allocator_delete(ptr)
    with pytest.raises(ValueError):
        torch.mlu.caching_allocator_delete(ptr)
    torch.mlu.empty_cache()
    with torch.mlu.caching_allocator_disabled():
        x = torch.empty(MiB, dtype=torch.uint8, device="mlu")
        reserved = torch.mlu.memory_reserved()
        del x
        assert torch.mlu.memory_reserved() == reserved - MiB  # returned at once, not cached
    y = torch.empty(MiB, dtype=torch.uint8, device="mlu")
    del y
    assert torch.mlu.memory_reserved() >= MiB  # cached again
    free, total = torch.mlu.mem_get_info()
    assert torch.mlu.device_memory_used() == total - free
    assert torch.mlu.list_gpu_processes().startswith(f"MLU:{torch.mlu.current_device()}")
    assert torch.mlu.get_allocator_backend() == "native"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.mlu.memory_summary()


def test_mem_pool_keeps_its_blocks_private():
    torch.mlu.empty_cache()
    pool = torch.mlu.MemPool()
    with torch.mlu.use_mem_pool(pool):
        assert pool.use_count() == 2
        x = torch.empty(3 * MiB, dtype=torch.uint8, device="mlu")
    addr = x.data_ptr()
    assert [s["address"] for s in pool.snapshot()] == [addr]
    del x
    y = torch.empty(3 * MiB, dtype=torch.uint8, device="mlu")  # default pool: must not reuse the pool's block
    assert y.data_ptr() != addr
    torch.mlu.empty_cache()  # keeps the pool's cached block
    assert [s["address"] for s in pool.snapshot()] == [addr]
    with torch.mlu.use_mem_pool(pool):
        z = torch.empty(3 * MiB, dtype=torch.uint8, device="mlu")
    assert z.data_ptr() == addr  # reused inside the pool
    del z, pool
    assert all(s["address"] != addr for s in torch.mlu.memory_snapshot())  # pool gone: block released
    with pytest.raises(TypeError):  # an allocator is MLUPluggableAllocator(...).allocator()
        torch.mlu.MemPool(allocator=object())


def test_utilization_and_memory_usage_measure_device_work():
    torch.mlu.utilization()
    torch.mlu.memory_usage()
    a = torch.randn(512, 512, device="mlu")
    for _ in range(30):
        a = (a @ a).tanh()
    a.cpu()
    busy_u, busy_m = torch.mlu.utilization(), torch.mlu.memory_usage()
    assert 0 < busy_u <= 100 and 0 < busy_m <= 100
    import time

    time.sleep(0.3)
    assert torch.mlu.utilization() < busy_u  # idle period
    assert torch.mlu.clock_rate() >= 0
