# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""mlu implementations of ``torch.cuda`` names that have an mlu meaning but no same-named function in ``torch.mlu``.

Targets of ``api_map.csv`` rows (``mapped`` and ``not_applicable``); used by ``transfer_to_mlu`` at run time and
emitted by ``torch_gpu2mlu`` in converted code. Each docstring names the ``torch.cuda`` API it stands for; the
semantics follow that API's upstream documentation (PyTorch 2.13) applied to mlu.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from torch_mlu.contrib.cuda_compat import nvtx

__all__ = [
    "amp_definitely_not_available", "can_device_access_peer", "custom_bwd", "custom_fwd", "device_memory_used",
    "get_sync_debug_mode", "has_half", "has_magma", "ipc_collect",
    "is_current_stream_capturing", "is_nccl_available", "is_tf32_supported", "max_memory_cached", "memory_cached",
    "memory_stats_as_nested_dict", "memory_summary", "nvtx", "reset_max_memory_cached", "set_sync_debug_mode",
    "warn_once",
]

F = TypeVar("F", bound=Callable[..., Any])

_warned: set[str] = set()

has_half: bool = True
"""``torch.cuda.has_half``: mlu has float16 kernels."""

has_magma: bool = False
"""``torch.cuda.has_magma``: there is no MAGMA linear algebra on mlu."""


def warn_once(api: str, stacklevel: int = 3) -> None:
    """Warn (``UserWarning``) the first time ``api`` is used in this process, with the table's reason.

    ``stacklevel`` as for :func:`warnings.warn`, counted from the caller of ``warn_once``."""
    if api in _warned:
        return
    _warned.add(api)
    from torch_mlu.contrib.api_map import load_api_map

    entry = load_api_map().get(api)
    text = entry.message() if entry is not None else f"{api} has no mlu meaning"
    warnings.warn(text, UserWarning, stacklevel=stacklevel)


def _mlu() -> Any:
    return torch.mlu  # type: ignore[attr-defined]


def memory_cached(device: Any = None) -> int:
    """``torch.cuda.memory_cached`` (deprecated upstream alias of ``memory_reserved``): bytes reserved on mlu."""
    return int(_mlu().memory_reserved(device))


def max_memory_cached(device: Any = None) -> int:
    """``torch.cuda.max_memory_cached`` (deprecated alias of ``max_memory_reserved``)."""
    return int(_mlu().max_memory_reserved(device))


def reset_max_memory_cached(device: Any = None) -> None:
    """``torch.cuda.reset_max_memory_cached`` (deprecated alias): resets the mlu allocator's peaks."""
    _mlu().reset_peak_memory_stats(device)


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """``torch.cuda.memory_stats_as_nested_dict``: :func:`torch.mlu.memory_stats` nested at the dots of its keys."""
    nested: dict[str, Any] = {}
    for key, value in _mlu().memory_stats(device).items():
        node = nested
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """``torch.cuda.memory_summary``: a text table of the mlu allocator's byte counters (current and peak)."""
    stats: OrderedDict[str, Any] = _mlu().memory_stats(device)
    lines = [f"{'metric':<28}{'current':>16}{'peak':>16}"]
    for metric in ("allocated_bytes", "reserved_bytes", "active_bytes", "inactive_split_bytes"):
        cur = stats.get(f"{metric}.all.current")
        if cur is None:
            continue
        lines.append(f"{metric:<28}{cur:>16}{stats.get(f'{metric}.all.peak', 0):>16}")
    return "\n".join(lines)


def device_memory_used(device: Any = None) -> int:
    """``torch.cuda.device_memory_used``: bytes in use on the device (total minus free of ``mem_get_info``)."""
    free, total = _mlu().mem_get_info(device)
    return int(total - free)


def is_current_stream_capturing() -> bool:
    """``torch.cuda.is_current_stream_capturing``: always False (mlu queues have no graph capture)."""
    return False


def is_tf32_supported() -> bool:
    """``torch.cuda.is_tf32_supported``: False (the mlu device has no TF32 mode)."""
    return False


def can_device_access_peer(device: Any, peer_device: Any) -> bool:
    """``torch.cuda.can_device_access_peer``: True for two valid mlu devices (device-to-device copies work).

    Raises AssertionError for an invalid index, as torch.cuda does."""
    from torch_mlu.mlu._utils import _get_device_index

    count = _mlu().device_count()
    for d in (device, peer_device):
        idx = _get_device_index(d, optional=True)
        if not 0 <= idx < count:
            raise AssertionError("Invalid device id")
    return True


def amp_definitely_not_available() -> bool:
    """``torch.cuda.amp.common.amp_definitely_not_available``: True when no mlu device is visible."""
    return not _mlu().is_available()


def custom_fwd(fwd: Any = None, *, cast_inputs: torch.dtype | None = None) -> Any:
    """``torch.cuda.amp.custom_fwd``: ``torch.amp.custom_fwd(fwd, device_type="mlu", cast_inputs=...)``."""
    return torch.amp.custom_fwd(fwd, device_type="mlu", cast_inputs=cast_inputs)


def custom_bwd(bwd: Any = None) -> Any:
    """``torch.cuda.amp.custom_bwd``: ``torch.amp.custom_bwd(bwd, device_type="mlu")``."""
    return torch.amp.custom_bwd(bwd, device_type="mlu")


def is_nccl_available() -> bool:
    """``torch.distributed.is_nccl_available``: whether the ``cncl`` process-group backend is registered."""
    import torch.distributed as dist

    return bool(dist.is_available() and dist.is_backend_available("cncl"))


def ipc_collect() -> None:
    """``torch.cuda.ipc_collect``: CUDA IPC handles do not exist on mlu; no-op (warns once)."""
    warn_once("torch.cuda.ipc_collect")


def get_sync_debug_mode() -> int:
    """``torch.cuda.get_sync_debug_mode``: 0 ("default"), the only mode on mlu (warns once)."""
    warn_once("torch.cuda.get_sync_debug_mode")
    return 0


def set_sync_debug_mode(debug_mode: int | str) -> None:
    """``torch.cuda.set_sync_debug_mode``: ignored on mlu (warns once)."""
    warn_once("torch.cuda.set_sync_debug_mode")
