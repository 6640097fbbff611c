# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Caching-allocator statistics for mlu, with ``torch.cuda.memory`` semantics.

Numbers come from the backend's caching allocator (a ``c10::DeviceAllocator``) through ``torch.accelerator``'s
generic memory API; keys of :func:`memory_stats` match ``torch.cuda.memory_stats`` (``allocated_bytes.all.current``
...). Units: bytes.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch

from torch_mlu import _C
from torch_mlu.mlu._utils import _get_device_index


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
