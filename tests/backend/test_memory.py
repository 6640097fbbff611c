# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Caching allocator: torch.cuda.memory semantics (allocated vs reserved, peaks, empty_cache, OOM)."""

from __future__ import annotations

import gc

import torch
from mlu_helpers import run_python

MiB = 1 << 20


def test_allocated_and_reserved_follow_cuda_semantics():
    gc.collect()  # mlu tensors in reference cycles left by earlier tests (e.g. captured graphs) would be freed mid-test
    torch.mlu.empty_cache()
    base_alloc = torch.mlu.memory_allocated()
    t = torch.empty(MiB, dtype=torch.uint8, device="mlu")
    assert torch.mlu.memory_allocated() - base_alloc >= MiB
    reserved = torch.mlu.memory_reserved()
    assert reserved >= torch.mlu.memory_allocated()
    del t
    # Freed memory stays cached: allocated drops, reserved does not.
    assert torch.mlu.memory_allocated() == base_alloc
    assert torch.mlu.memory_reserved() == reserved
    # Same-size request reuses the cached block: nothing new reserved.
    t = torch.empty(MiB, dtype=torch.uint8, device="mlu")
    assert torch.mlu.memory_reserved() == reserved
    del t
    torch.mlu.empty_cache()
    assert torch.mlu.memory_reserved() == torch.mlu.memory_allocated() == base_alloc


def test_peak_and_reset():
    torch.mlu.reset_peak_memory_stats()
    start = torch.mlu.memory_allocated()
    t = torch.empty(4 * MiB, dtype=torch.uint8, device="mlu")
    del t
    assert torch.mlu.max_memory_allocated() >= start + 4 * MiB
    torch.mlu.reset_peak_memory_stats()
    assert torch.mlu.max_memory_allocated() == torch.mlu.memory_allocated()


def test_per_device_accounting():
    before0, before1 = torch.mlu.memory_allocated(0), torch.mlu.memory_allocated(1)
    t = torch.empty(MiB, dtype=torch.uint8, device="mlu:1")
    assert torch.mlu.memory_allocated(0) == before0
    assert torch.mlu.memory_allocated(1) >= before1 + MiB
    del t


def test_memory_stats_keys_like_cuda():
    stats = torch.mlu.memory_stats()
    for key in ["allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
                "active_bytes.all.current", "num_alloc_retries", "num_ooms", "allocation.all.current"]:
        assert key in stats, key


def test_kernel_outputs_are_device_memory():
    x = torch.randn(256, 256, device="mlu")
    before = torch.mlu.memory_allocated()
    y = x @ x  # the output buffer comes from the device allocator
    assert torch.mlu.memory_allocated() >= before + y.nbytes
    del y
    assert torch.mlu.memory_allocated() == before


def test_oom_raises_out_of_memory_error_with_numbers():
    code = (
        "import torch\n"
        "a = torch.empty(40 * 2**20, dtype=torch.uint8, device='mlu')\n"
        "try:\n"
        "    torch.empty(40 * 2**20, dtype=torch.uint8, device='mlu')\n"
        "except torch.OutOfMemoryError as e:\n"
        "    print('OOM|' + str(e).splitlines()[0])\n"
        "    print('retries', torch.mlu.memory_stats()['num_ooms'])\n"
        "b = torch.empty(10 * 2**20, dtype=torch.uint8, device='mlu')\n"
        "print('still usable', b.numel())\n"
    )
    out = run_python(code, env={"CATCH_MLU_MEMORY_BYTES": str(64 * MiB)})
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("OOM|"))
    assert "Tried to allocate 40.00 MiB" in line
    assert "total capacity of 64.00 MiB" in line
    assert "40.00 MiB is allocated by PyTorch" in line
    assert "retries 1" in out.stdout
    assert "still usable 10485760" in out.stdout


def test_oom_frees_cache_before_failing():
    code = (
        "import torch\n"
        "a = torch.empty(40 * 2**20, dtype=torch.uint8, device='mlu')\n"
        "del a\n"
        "b = torch.empty(50 * 2**20, dtype=torch.uint8, device='mlu')\n"  # needs the cached 40 MiB released
        "print(torch.mlu.memory_stats()['num_alloc_retries'], torch.mlu.memory_reserved() // 2**20)\n"
    )
    out = run_python(code, env={"CATCH_MLU_MEMORY_BYTES": str(64 * MiB)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "50"]


def test_pinned_host_memory_and_dataloader():
    t = torch.randn(64)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned()
    assert torch.equal(p, t)
    ds = torch.utils.data.TensorDataset(torch.arange(32.0).reshape(16, 2))
    batch = next(iter(torch.utils.data.DataLoader(ds, batch_size=4, pin_memory=True)))[0]
    assert batch.is_pinned()  # pinned for the current accelerator, mlu
    dev = batch.to("mlu", non_blocking=True)
    torch.mlu.synchronize()
    assert torch.equal(dev.cpu(), batch)
