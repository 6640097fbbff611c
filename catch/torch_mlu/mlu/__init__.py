# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.mlu``: the mlu device module, mirroring ``torch.cuda``.

Device indices follow ``torch.cuda``: ``None`` or ``-1`` means the current device; an index outside
``[0, device_count())`` raises ``RuntimeError`` ("invalid device ordinal"), as CUDA does.
"""

from __future__ import annotations

import torch

from torch_mlu import _C
from torch_mlu.mlu import _utils, amp
from torch_mlu.mlu._utils import _get_device_index
from torch_mlu.mlu.memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
from torch_mlu.mlu.random import (
    default_generators,
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from torch_mlu.mlu.streams import Event, Stream, StreamContext, current_stream, default_stream, set_stream, stream

__all__ = [
    "Event", "Stream", "StreamContext", "amp", "current_device", "current_stream", "default_generators",
    "default_stream", "device", "device_count", "device_of", "empty_cache", "fallback_report",
    "get_amp_supported_dtype", "get_device_capability", "get_device_name", "get_device_properties",
    "get_rng_state", "get_rng_state_all", "init", "initial_seed", "is_available", "is_bf16_supported",
    "is_initialized", "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_reserved",
    "mem_get_info", "memory_allocated", "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
    "reset_fallback_report", "reset_max_memory_allocated", "reset_peak_memory_stats", "seed", "seed_all",
    "set_device", "set_fallback_strict", "set_rng_state", "set_rng_state_all", "set_stream", "stream",
    "synchronize",
]


def is_available() -> bool:
    """True when at least one emulated device is visible (``MLU_VISIBLE_DEVICE_COUNT`` > 0)."""
    return _C.device_count() > 0


def device_count() -> int:
    """Number of visible mlu devices (``MLU_VISIBLE_DEVICE_COUNT``, default 2)."""
    return _C.device_count()


def is_initialized() -> bool:
    """The emulated runtime initializes on import; always True (``torch.cuda.is_initialized`` analogue)."""
    return True


def init() -> None:
    """No-op kept for ``torch.cuda.init`` compatibility."""


def _is_in_bad_fork() -> bool:
    """True in a process forked after mlu was initialized in its parent (``torch.cuda._is_in_bad_fork``).

    ``torch.manual_seed`` then leaves mlu alone (PrivateUse1 seeding protocol); :func:`_lazy_init` raises.
    """
    return _C._is_in_bad_fork()


def _lazy_init() -> None:
    """Called by PyTorch before the first mlu tensor of a process (``torch.utils`` device lazy init).

    Registers the fork handler (so children forked from here on are poisoned, as with CUDA), and in such a child
    raises CUDA's error: the runtime's queue worker threads do not survive fork, so device work there could hang.
    """
    if _C._is_in_bad_fork():
        raise RuntimeError("Cannot re-initialize MLU in forked subprocess. To use MLU with multiprocessing, you must "
                           "use the 'spawn' start method")
    _C._register_fork_handler()


def current_device() -> int:
    """Index of the current mlu device of this thread."""
    return _C.current_device()


def set_device(device: torch.device | str | int) -> None:
    """Set the current device. Raises RuntimeError for an index outside ``[0, device_count())``."""
    idx = _get_device_index(device)
    if idx >= 0:
        _C.set_device(idx)


class device:
    """Context manager that changes the current device (``torch.cuda.device`` analogue)."""

    def __init__(self, device: torch.device | str | int | None) -> None:
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        self.prev_idx = _C.exchange_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        _C.exchange_device(self.prev_idx)


class device_of(device):
    """Context manager that makes the device of tensor ``obj`` current (CPU tensors: no change)."""

    def __init__(self, obj: torch.Tensor) -> None:
        super().__init__(obj.get_device() if obj.device.type == "mlu" else -1)


def synchronize(device: torch.device | str | int | None = None) -> None:
    """Wait for all queues of ``device`` (default: current) to finish their work."""
    _C.synchronize(_get_device_index(device, optional=True))


def get_device_name(device: torch.device | str | int | None = None) -> str:
    """Name of the device (the emulated runtime reports one name for all devices)."""
    _get_device_properties_checked(device)
    return _C.device_name()


class _MLUDeviceProperties:
    """Subset of ``torch.cuda.get_device_properties``' fields that the emulated device has."""

    def __init__(self, name: str, total_memory: int, index: int) -> None:
        self.name = name
        self.total_memory = total_memory
        self.major = 1
        self.minor = 0
        self.multi_processor_count = 1
        self.index = index

    def __repr__(self) -> str:
        return f"_MLUDeviceProperties(name='{self.name}', total_memory={self.total_memory // (1024 * 1024)}MB)"


def _get_device_properties_checked(device: torch.device | str | int | None) -> int:
    idx = _get_device_index(device, optional=True)
    if not 0 <= idx < device_count():
        raise AssertionError("Invalid device id")
    return idx


def get_device_properties(device: torch.device | str | int | None = None) -> _MLUDeviceProperties:
    """Properties of ``device``: name, total_memory (bytes, = ``CATCH_MLU_MEMORY_BYTES``), major/minor."""
    idx = _get_device_properties_checked(device)
    return _MLUDeviceProperties(_C.device_name(), _C.capacity(), idx)


def get_device_capability(device: torch.device | str | int | None = None) -> tuple[int, int]:
    """(major, minor) of the emulated device: (1, 0)."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def get_amp_supported_dtype() -> list[torch.dtype]:
    """Dtypes ``torch.autocast("mlu", dtype=...)`` accepts (required by torch.amp for PrivateUse1)."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 kernels exist on the emulated device."""
    return True


def fallback_report() -> dict[str, int]:
    """Ops that fell back to the CPU since start (or the last reset): ``{"aten::op.overload": calls}``."""
    return dict(_C.fallback_report())


def reset_fallback_report() -> None:
    """Clear the counts returned by :func:`fallback_report` (warnings stay once per process)."""
    _C.reset_fallback_report()


def set_fallback_strict(strict: bool) -> None:
    """Strict mode (also ``CATCH_FALLBACK_STRICT=1``): a fallback raises NotImplementedError naming the op."""
    _C.set_fallback_strict(bool(strict))


def device_kernel_ops() -> list[str]:
    """Ops that run as mlu device kernels (the rest of the PrivateUse1 ops fall back to the CPU)."""
    return list(_C.device_op_names())


# torch.serialization (PrivateUse1 path) calls torch.mlu._utils._get_device_index: keep the submodule bound.
_ = _utils
