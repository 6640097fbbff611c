# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""torch.mlu.memory.MLUPluggableAllocator and change_current_allocator, against torch.cuda's rules (upstream
torch/cuda/memory.py, torch/csrc/cuda/CUDAPluggableAllocator.cpp): an allocator of two C functions from a shared
library, swappable only before the allocator in use has handed out memory ("Can't swap an already initialized
allocator"), and without the caching allocator's statistics ("... does not yet support getDeviceStats ...").
Each swap runs in a fresh interpreter: a process keeps the allocator it swapped in."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import torch
from mlu_helpers import run_python

# A counting allocator on malloc/free, with cuda's signatures adapted to mlu (queue instead of cudaStream_t).
ALLOCATOR_C = r"""
#include <stdlib.h>
#include <sys/types.h>

static long n_alloc, n_free, live_bytes;
static int last_device = -1;
static void* last_queue;
static void* last_ptr;

void* counting_alloc(ssize_t size, int device, void* queue) {
  void* p = malloc((size_t)size);
  if (p) {
    __atomic_fetch_add(&n_alloc, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&live_bytes, (long)size, __ATOMIC_SEQ_CST);
    last_device = device;
    last_queue = queue;
    last_ptr = p;
  }
  return p;
}

void counting_free(void* ptr, ssize_t size, int device, void* queue) {
  (void)device;
  (void)queue;
  __atomic_fetch_add(&n_free, 1, __ATOMIC_SEQ_CST);
  __atomic_fetch_sub(&live_bytes, (long)size, __ATOMIC_SEQ_CST);
  free(ptr);
}

long alloc_calls(void) { return n_alloc; }
long free_calls(void) { return n_free; }
long bytes_live(void) { return live_bytes; }
int device_of_last(void) { return last_device; }
void* queue_of_last(void) { return last_queue; }
void* last_alloc(void) { return last_ptr; }
"""


@pytest.fixture(scope="module")
def allocator_so(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH to build the test allocator library")
    d = tmp_path_factory.mktemp("pluggable")
    (d / "alloc.c").write_text(ALLOCATOR_C)
    so = d / "libcounting_alloc.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(so), str(d / "alloc.c")], check=True,
                   capture_output=True, text=True)
    return so


SWAPPED = r"""
import ctypes, gc, os
import torch, torch_mlu

so = os.environ["ALLOC_SO"]
lib = ctypes.CDLL(so)
lib.queue_of_last.restype = ctypes.c_void_p
lib.last_alloc.restype = ctypes.c_void_p
torch.mlu.memory.change_current_allocator(torch.mlu.memory.MLUPluggableAllocator(so, "counting_alloc", "counting_free"))
print("backend", torch.mlu.get_allocator_backend())

torch.manual_seed(0)
a, b = torch.randn(64, 32), torch.randn(32, 16)
x, y = a.to("mlu"), b.to("mlu")
z = (x @ y).relu() + 1
s = z.sum(0)
torch.testing.assert_close(z.cpu(), (a @ b).relu() + 1)
torch.testing.assert_close(s.cpu(), ((a @ b).relu() + 1).sum(0))
print("allocs_after_ops", lib.alloc_calls())
print("device", lib.device_of_last(), "queue_set", lib.queue_of_last() is not None)

t = torch.empty(16, dtype=torch.uint8, device="mlu")
t.copy_(torch.arange(16, dtype=torch.uint8))
torch.mlu.synchronize()
print("bytes_are_the_allocators", ctypes.string_at(lib.last_alloc(), 16) == bytes(range(16)))

w = torch.ones(8, device="mlu")
if torch.mlu.device_count() > 1:
    with torch.mlu.device(1):
        w = torch.ones(8, device="mlu")
    print("device_of_w", lib.device_of_last(), w.device)

live = lib.bytes_live()
del x, y, z, s, t, w
gc.collect()
print("freed", lib.free_calls() > 0, "live_dropped", lib.bytes_live() < live)

for name, call in (("memory_stats", torch.mlu.memory_stats), ("snapshot", torch.mlu.memory_snapshot)):
    try:
        call()
        print(name, "no error")
    except RuntimeError as e:
        print(name, str(e).splitlines()[0])
try:
    torch.mlu.memory.change_current_allocator(
        torch.mlu.memory.MLUPluggableAllocator(so, "counting_alloc", "counting_free"))
    print("second swap: no error")
except RuntimeError as e:
    print("second swap:", str(e).splitlines()[0])
"""


def _lines(code: str, so: Path) -> dict[str, str]:
    r = run_python(code, env={"ALLOC_SO": str(so)})
    assert r.returncode == 0, r.stderr[-3000:]
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in r.stdout.splitlines() if " " in line}


def test_mlu_runs_on_a_pluggable_allocator(allocator_so: Path) -> None:
    out = _lines(SWAPPED, allocator_so)
    assert out["backend"] == "pluggable"  # torch.cuda.get_allocator_backend: the allocator's name()
    assert int(out["allocs_after_ops"]) >= 4  # x, y, x @ y, relu, + 1, sum: all from the library
    assert out["device"] == "0 queue_set True"
    assert out["bytes_are_the_allocators"] == "True"  # tensors live in the memory alloc returned
    if torch.mlu.device_count() > 1:
        assert out["device_of_w"] == "1 mlu:1"
    assert out["freed"] == "True live_dropped True"
    # CUDAPluggableAllocator's messages, with MLU for CUDA.
    assert out["memory_stats"] == ("MLUPluggableAllocator does not yet support getDeviceStats. If you need it, "
                                   "please file an issue describing your use case.")
    assert out["snapshot"].startswith("MLUPluggableAllocator does not yet support snapshot.")
    assert out["second"] == "swap: Can't swap an already initialized allocator"


def test_swap_after_the_first_allocation_raises(allocator_so: Path) -> None:
    code = r"""
import os
import torch, torch_mlu
x = torch.ones(4, device="mlu")
try:
    torch.mlu.memory.change_current_allocator(
        torch.mlu.memory.MLUPluggableAllocator(os.environ["ALLOC_SO"], "counting_alloc", "counting_free"))
    print("swap no-error")
except RuntimeError as e:
    print("swap", str(e).splitlines()[0])
print("backend", torch.mlu.get_allocator_backend())
print("still_works", bool((x + 1).sum().item() == 8))
"""
    out = _lines(code, allocator_so)
    assert out["swap"] == "Can't swap an already initialized allocator"  # upstream changeCurrentAllocator
    assert out["backend"] == "native"
    assert out["still_works"] == "True"


def test_missing_function_is_an_attribute_error(allocator_so: Path) -> None:
    # cuda's CUDAPluggableAllocator looks the names up with getattr on ctypes.CDLL.
    with pytest.raises(AttributeError, match="no_such_alloc"):
        torch.mlu.memory.MLUPluggableAllocator(str(allocator_so), "no_such_alloc", "counting_free")


POOL = r"""
import ctypes, gc, os
import torch, torch_mlu

so = os.environ["ALLOC_SO"]
lib = ctypes.CDLL(so)
lib.last_alloc.restype = ctypes.c_void_p
pool = torch.mlu.MemPool(allocator=torch.mlu.memory.MLUPluggableAllocator(so, "counting_alloc",
                                                                          "counting_free").allocator())
print("backend", torch.mlu.get_allocator_backend())
outside = torch.randn(1000, device="mlu")
print("outside_calls", lib.alloc_calls())
torch.manual_seed(0)
a = torch.randn(64, 32)
with torch.mlu.use_mem_pool(pool):
    x = a.to("mlu")
    y = (x @ x.t()).relu()
    t = torch.empty(16, dtype=torch.uint8, device="mlu")
    t.copy_(torch.arange(16, dtype=torch.uint8))
torch.mlu.synchronize()
torch.testing.assert_close(y.cpu(), (a @ a.t()).relu())
print("inside_calls", lib.alloc_calls() >= 3)
print("bytes_are_the_allocators", ctypes.string_at(lib.last_alloc(), 16) == bytes(range(16)))
print("segments_in_pool", len(pool.snapshot()) >= 3)
del x, y, t
gc.collect()
print("cached_in_pool", lib.free_calls(), lib.bytes_live() > 0)
del pool
gc.collect()
print("pool_gone", lib.free_calls() > 0, lib.bytes_live())
try:
    torch.mlu.MemPool(allocator=torch.mlu.memory._get_current_allocator().allocator())
    print("caching no error")
except RuntimeError as e:
    print("caching", str(e).splitlines()[0])
"""


def test_mem_pool_takes_its_segments_from_a_pluggable_allocator(allocator_so: Path) -> None:
    """``torch.cuda.MemPool(allocator=...)``: blocks allocated in the pool live in memory the pool's allocator
    returned, stay cached in the pool when freed, and go back to its free function when the pool goes; the caching
    allocator stays the process's and serves everything else."""
    out = _lines(POOL, allocator_so)
    assert out["backend"] == "native"
    assert out["outside_calls"] == "0"
    assert out["inside_calls"] == "True"
    assert out["bytes_are_the_allocators"] == "True"
    assert out["segments_in_pool"] == "True"
    assert out["cached_in_pool"] == "0 True"  # freed blocks stay in the pool's cache
    assert out["pool_gone"] == "True 0"
    assert out["caching"].startswith("MemPool: the allocator of a pool must be a pluggable allocator")
