# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Caching-allocator statistics and controls for mlu, with ``torch.cuda.memory`` semantics; the pluggable allocator
names (:class:`MLUPluggableAllocator`, :func:`change_current_allocator`) come from ``pluggable_allocator``.

Numbers come from the backend's caching allocator (a ``c10::DeviceAllocator``) through ``torch.accelerator``'s
generic memory API; keys of :func:`memory_stats` match ``torch.cuda.memory_stats`` (``allocated_bytes.all.current``
...). Units: bytes.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import torch

from torch_mlu import _C
from torch_mlu.mlu._utils import _get_device_index
from torch_mlu.mlu.pluggable_allocator import (  # noqa: F401 (torch.cuda.memory has these names)
    MLUPluggableAllocator,
    _get_current_allocator,
    _MLUAllocator,
    change_current_allocator,
    get_allocator_backend,
)


def memory_stats(device: object = None) -> OrderedDict[str, Any]:
    """Allocator statistics of ``device`` (default: current) as a flat ordered dict."""
    return torch.accelerator.memory_stats(_get_device_index(device, optional=True))


def memory_allocated(device: object = None) -> int:
    """Bytes currently occupied by tensors on ``device``."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: object = None) -> int:
    """Peak of :func:`memory_allocated` since start or the last :func:`reset_peak_memory_stats`."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: object = None) -> int:
    """Bytes held by the caching allocator on ``device`` (allocated + cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: object = None) -> int:
    """Peak of :func:`memory_reserved`."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device: object = None) -> None:
    """Reset the peaks tracked by the allocator to the current values."""
    torch.accelerator.reset_peak_memory_stats(_get_device_index(device, optional=True))


def reset_max_memory_allocated(device: object = None) -> None:
    """Alias of :func:`reset_peak_memory_stats` (as in torch.cuda)."""
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device: object = None) -> None:
    """Reset the accumulated (allocated/freed totals, retries, OOM) counters."""
    torch.accelerator.reset_accumulated_memory_stats(_get_device_index(device, optional=True))


def empty_cache() -> None:
    """Release all unoccupied cached blocks to the runtime (memory_reserved drops to memory_allocated)."""
    _C.empty_cache()


def mem_get_info(device: object = None) -> tuple[int, int]:
    """(free, total) bytes of the device as the runtime sees them."""
    free, total = _C.mem_get_info(_get_device_index(device, optional=True))
    return int(free), int(total)


# ---- deprecated aliases (torch.cuda keeps them; DeepSpeed's MLU accelerator calls them) ----------------------------

def memory_cached(device: object = None) -> int:
    """Deprecated alias of :func:`memory_reserved` (FutureWarning, as ``torch.cuda.memory_cached``)."""
    warnings.warn("torch.mlu.memory_cached has been renamed to torch.mlu.memory_reserved", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device: object = None) -> int:
    """Deprecated alias of :func:`max_memory_reserved`."""
    warnings.warn("torch.mlu.max_memory_cached has been renamed to torch.mlu.max_memory_reserved", FutureWarning,
                  stacklevel=2)
    return max_memory_reserved(device)


def reset_max_memory_cached(device: object = None) -> None:
    """Reset the peaks (``torch.cuda.reset_max_memory_cached`` now resets all peaks too)."""
    warnings.warn("torch.mlu.reset_max_memory_cached now calls torch.mlu.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"a.b.c": v}`` -> ``{"a": {"b": {"c": v}}}`` (the inverse of torch.cuda.memory_stats' flattening)."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def memory_stats_as_nested_dict(device: object = None) -> dict[str, Any]:
    """:func:`memory_stats` as a nested dict (``{"allocated_bytes": {"all": {"current": ...}}}``)."""
    return _nest(dict(memory_stats(device)))


# ---- summary ----------------------------------------------------------------------------------------------------

def _format_size(sz: int, pref_sz: int) -> str:
    prefixes = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref_sz < 768 * 1024:
            break
        prefix = new_prefix
        sz //= 1024
        pref_sz /= 1024  # type: ignore[assignment]
    return f"{sz:6d} {prefix}"


def _format_count(cnt: int, pref_cnt: int) -> str:
    prefixes = [" ", "K", "M"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref_cnt < 750 * 1000:
            break
        prefix = new_prefix
        cnt //= 1000
        pref_cnt /= 1000  # type: ignore[assignment]
    return f"{cnt:7d} {prefix} "


def memory_summary(device: object = None, abbreviated: bool = False) -> str:
    """Human-readable table of :func:`memory_stats` in ``torch.cuda.memory_summary``'s layout (75 columns: one
    row per metric and pool with current, peak, total allocated and total freed; sizes scaled to B/KiB/MiB/GiB)."""
    idx = _get_device_index(device, optional=True)
    stats = memory_stats(idx)
    rows = [("allocated_bytes", "Allocated memory", _format_size), ("active_bytes", "Active memory", _format_size),
            ("requested_bytes", "Requested memory", _format_size),
            ("reserved_bytes", "MLU reserved memory", _format_size),
            ("inactive_split_bytes", "Non-releasable memory", _format_size),
            ("allocation", "Allocations", _format_count), ("active", "Active allocs", _format_count),
            ("segment", "MLU reserved segments", _format_count),
            ("inactive_split", "Non-releasable allocs", _format_count)]
    sep, bar = "-" * 75, "=" * 75
    lines = [bar, f" {'':16} PyTorch MLU memory summary, device ID {idx:<17d} ", sep,
             f"  {'':9} MLU OOMs: {stats.get('num_ooms', 0):<12d} | {'':6} cnrtMalloc retries: "
             f"{stats.get('num_alloc_retries', 0):<8d}  ", bar,
             "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    for key, name, fmt in rows:
        lines.append(sep)
        subs = [("all", name)] + ([] if abbreviated else [("large_pool", "      from large pool"),
                                                          ("small_pool", "      from small pool")])
        pref = None
        for sub, subname in subs:
            vals = [int(stats.get(f"{key}.{sub}.{m}", 0)) for m in ("current", "peak", "allocated", "freed")]
            pref = pref or vals
            cells = " | ".join(fmt(v, p) for v, p in zip(vals, pref))
            lines.append(f" {subname:<21} | {cells} ")
    for key, name in (("oversize_allocations", "Oversize allocations"), ("oversize_segments", "Oversize GPU segments")):
        lines.append(sep)
        vals = [int(stats.get(f"{key}.{m}", 0)) for m in ("current", "peak", "allocated", "freed")]
        lines.append(f" {name:<21} | " + " | ".join(_format_count(v, v) for v in vals) + " ")
    lines.append(bar)
    return "|" + "|\n|".join(lines) + "|\n"


# ---- per-process fraction, caching switch, raw allocations -------------------------------------------------------

def set_per_process_memory_fraction(fraction: float, device: object = None) -> None:
    """Cap what the caching allocator may reserve on ``device`` at ``fraction * total_memory`` (0..1). A request
    beyond it first frees the cache, then raises ``torch.OutOfMemoryError`` ("... N allowed; ...")."""
    idx = _get_device_index(device, optional=True)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C.set_memory_fraction(fraction, idx)


def get_per_process_memory_fraction(device: object = None) -> float:
    """The fraction set by :func:`set_per_process_memory_fraction` (1.0 by default)."""
    return float(_C.get_memory_fraction(_get_device_index(device, optional=True)))


def caching_allocator_enable(value: bool = True) -> None:
    """Turn block caching on or off (off: each free returns its block to the runtime; turning it off empties the
    cache)."""
    _C.set_caching_enabled(bool(value))


@contextlib.contextmanager
def caching_allocator_disabled() -> Iterator[None]:
    """Context manager that turns block caching off for its body."""
    prev = bool(_C.caching_enabled())
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(prev)


_raw_allocations: dict[int, torch.Tensor] = {}


def caching_allocator_alloc(size: int, device: object = None, stream: torch.Stream | None = None) -> int:
    """Allocate ``size`` bytes from the caching allocator on ``device`` (in the order of ``stream``, default: the
    current queue); returns the device address. Free it with :func:`caching_allocator_delete`."""
    from torch_mlu.mlu.streams import StreamContext

    idx = _get_device_index(device, optional=True)
    if not isinstance(size, int) or size < 0:
        raise TypeError(f"Invalid type for size argument: expected a non-negative int, got {size!r}")
    with StreamContext(stream):
        t = torch.empty(size, dtype=torch.uint8, device=torch.device("mlu", idx))
    ptr = t.data_ptr()
    _raw_allocations[ptr] = t
    return ptr


def caching_allocator_delete(mem_ptr: int) -> None:
    """Free an address returned by :func:`caching_allocator_alloc` (back to the cache)."""
    if _raw_allocations.pop(mem_ptr, None) is None:
        raise ValueError(f"caching_allocator_delete: {mem_ptr:#x} was not allocated by caching_allocator_alloc")


def device_memory_used(device: object = None) -> int:
    """Bytes in use on the device as the runtime sees them (all allocations of this process)."""
    free, total = mem_get_info(device)
    return total - free


def list_gpu_processes(device: object = None) -> str:
    """Processes using the device and their memory (the emulated runtime is per process: only this one)."""
    idx = _get_device_index(device, optional=True)
    used = device_memory_used(idx)
    lines = [f"MLU:{idx}"]
    lines.append("no processes are running" if used == 0 else
                 f"process {os.getpid():>10d} uses {used / (1024 * 1024):>12.3f} MB MLU memory")
    return "\n".join(lines)


# ---- pinned host memory -----------------------------------------------------------------------------------------

def host_memory_stats() -> OrderedDict[str, Any]:
    """Pinned host allocator statistics (``torch.cuda.host_memory_stats`` keys: ``allocations.*``,
    ``allocated_bytes.*``, ``active_requests.*``, ``active_bytes.*``, ``num_host_alloc``, ``num_host_free``)."""
    return OrderedDict(sorted(_C.host_memory_stats().items()))


def host_memory_stats_as_nested_dict() -> dict[str, Any]:
    """:func:`host_memory_stats` as a nested dict."""
    return _nest(dict(host_memory_stats()))


def reset_accumulated_host_memory_stats() -> None:
    """Reset the pinned allocator's accumulated counters (allocated/freed totals, alloc/free counts)."""
    _C.reset_host_memory_stats(False)


def reset_peak_host_memory_stats() -> None:
    """Reset the pinned allocator's peaks to the current values."""
    _C.reset_host_memory_stats(True)


# ---- snapshots and history ----------------------------------------------------------------------------------------

def _record_memory_history(enabled: str | bool | None = "all", context: str | None = "all", stacks: str = "all",
                           max_entries: int = sys.maxsize, device: object = None, clear_history: bool = False,
                           **_unused: Any) -> None:
    """Start (``enabled="all"``) or stop (``None``) recording allocator events with their Python stacks, as
    ``torch.cuda.memory._record_memory_history``: :func:`_snapshot` then has ``device_traces`` and per-block
    ``frames``, which ``torch.cuda._memory_viz`` renders. ``context=None`` records events without stacks; at most
    ``max_entries`` events are kept per device (oldest dropped). C++ frames are not recorded."""
    if enabled is True:
        enabled = "all"
    on = bool(enabled)
    if on and enabled not in ("all", "state"):
        raise ValueError(f"enabled must be None, 'state' or 'all', got {enabled!r}")
    with_stacks = on and context is not None and stacks in ("all", "python")
    _C.record_memory_history(on, with_stacks, min(int(max_entries), 2**63 - 1), bool(clear_history))


def _snapshot(device: object = None, augment_with_fx_traces: bool = False) -> dict[str, Any]:
    """Allocator state of all devices in ``torch.cuda.memory._snapshot``'s format: ``segments`` (one per runtime
    allocation, each with its ``blocks``), ``device_traces`` (events since :func:`_record_memory_history`)."""
    snap = dict(_C.memory_snapshot())
    snap["allocator_settings"] = {"PYTORCH_MLU_ALLOC_CONF": "", "expandable_segments": False,
                                  "max_split_size": -1, "garbage_collection_threshold": 0.0,
                                  "roundup_power2_divisions": {}}
    return snap


def memory_snapshot(mempool_id: object = None, include_traces: bool = True) -> list[dict[str, Any]]:
    """The segments of :func:`_snapshot` (``torch.cuda.memory_snapshot``)."""
    return _snapshot()["segments"]


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """Pickle :func:`_snapshot` to ``filename`` (load it at pytorch.org/memory_viz or with torch.cuda._memory_viz)."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


# ---- private pools -----------------------------------------------------------------------------------------------

class MemPool:
    """A private pool of the caching allocator (``torch.cuda.MemPool``): blocks allocated inside
    :func:`use_mem_pool` come from it and, once freed, stay cached for its next users only (the default pool does
    not reuse them and :func:`empty_cache` does not release them). Deleting the pool returns its cached blocks to
    where they came from. ``use_on_oom=True`` lets an allocation that fails outside the pool take one of its cached
    blocks.

    ``allocator``: ``MLUPluggableAllocator(...).allocator()``, whose alloc and free functions then provide and take
    back the pool's segments, as cuda's pool allocator does (``torch.cuda.MemPool(allocator=...)``); its errors,
    out of memory included, are the allocation's. None: the runtime's memory. Raises ``RuntimeError`` for another
    allocator (the caching allocator itself) and for any pool while a pluggable allocator is the process's.
    """

    def __init__(self, allocator: _C.MLUAllocator | None = None, use_on_oom: bool = False,
                 no_split: bool = False) -> None:
        self._allocator = allocator
        self._id = int(_C.create_mem_pool(bool(use_on_oom), allocator))
        self._users = 0

    @property
    def id(self) -> tuple[int, int]:
        """Pool id as in snapshots' ``segment_pool_id``."""
        return (0, self._id)

    @property
    def allocator(self) -> _C.MLUAllocator | None:
        """The allocator of the pool's segments; None: the runtime's memory."""
        return self._allocator

    def use_count(self) -> int:
        """References to the pool: this object plus active :func:`use_mem_pool` contexts."""
        return 1 + self._users

    def snapshot(self) -> list[dict[str, Any]]:
        """The segments of this pool (:func:`memory_snapshot` format)."""
        return [s for s in memory_snapshot() if tuple(s["segment_pool_id"]) == self.id]

    def __del__(self) -> None:
        try:
            _C.release_mem_pool(self._id)
        except Exception:  # noqa: S110 (interpreter shutdown)
            pass


@contextlib.contextmanager
def use_mem_pool(pool: MemPool, device: object = None) -> Iterator[None]:
    """Route this thread's allocations on ``device`` (default: current) to ``pool`` for the block."""
    idx = _get_device_index(device, optional=True)
    prev = _C.exchange_thread_pool(pool._id, idx)
    pool._users += 1
    try:
        yield
    finally:
        pool._users -= 1
        _C.exchange_thread_pool(prev[0], prev[1])
