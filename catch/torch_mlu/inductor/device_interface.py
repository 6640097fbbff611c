# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dynamo's device interface for ``mlu`` (``torch._dynamo.device_interface``), backed by ``torch.mlu``.

Dynamo and Inductor look device runtimes up by device type (``get_interface_for_device("mlu")``) to trace
``torch.mlu`` stream/event code and to query devices; :func:`register` adds :class:`MluInterface` for ``mlu`` and
``mlu:<n>``, as PyTorch registers ``CudaInterface`` for ``cuda`` and ``cuda:<n>``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface, register_interface_for_device

from torch_mlu import mlu
from torch_mlu.inductor import runtime

_worker_device: dict[str, int] = {}


def _device_index(device: torch.types.Device) -> int:
    if device is None:
        return mlu.current_device()
    if isinstance(device, int):
        return device
    dev = torch.device(device)
    if dev.type != "mlu":
        raise ValueError(f"expected an mlu device, got {dev}")
    return mlu.current_device() if dev.index is None else int(dev.index)


class MluInterface(DeviceInterface):
    """``torch.mlu`` as seen by Dynamo/Inductor (mirrors ``CudaInterface`` in torch/_dynamo/device_interface.py)."""

    device = mlu.device  # type: ignore[assignment]
    Event = mlu.Event  # type: ignore[assignment]
    Stream = mlu.Stream  # type: ignore[assignment]

    class Worker:
        """Device queries usable in compile workers (values recorded in the parent process)."""

        @staticmethod
        def set_device(device: int) -> None:
            _worker_device["mlu"] = device

        @staticmethod
        def current_device() -> int:
            return _worker_device.get("mlu", mlu.current_device())

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> Any:
            index = MluInterface.Worker.current_device() if device is None else _device_index(device)
            return mlu.get_device_properties(index)

    current_device = staticmethod(mlu.current_device)
    set_device = staticmethod(mlu.set_device)  # type: ignore[assignment]
    device_count = staticmethod(mlu.device_count)
    stream = staticmethod(mlu.stream)  # type: ignore[assignment]
    current_stream = staticmethod(mlu.current_stream)  # type: ignore[assignment]
    set_stream = staticmethod(mlu.set_stream)  # type: ignore[assignment]
    synchronize = staticmethod(mlu.synchronize)  # type: ignore[assignment]
    memory_allocated = staticmethod(mlu.memory_allocated)  # type: ignore[assignment]
    is_bf16_supported = staticmethod(mlu.is_bf16_supported)  # type: ignore[assignment]

    @staticmethod
    def is_available() -> bool:
        return mlu.is_available()

    @staticmethod
    def exchange_device(device: int) -> int:
        old = mlu.current_device()
        if device >= 0 and device != old:
            mlu.set_device(device)
        return old

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        return MluInterface.exchange_device(device)

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        mlu.set_stream(mlu.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type))

    get_raw_stream = staticmethod(runtime.get_raw_stream)  # type: ignore[assignment]

    @classmethod
    def get_device_properties(cls, device: torch.types.Device = None) -> Any:
        return mlu.get_device_properties(_device_index(device))

    @staticmethod
    def get_compute_capability(device: torch.types.Device = None) -> Any:
        major, minor = mlu.get_device_capability(_device_index(device))
        return major * 10 + minor

    @staticmethod
    def is_triton_capable(device: torch.types.Device = None) -> bool:
        return False


def register() -> None:
    """Registers :class:`MluInterface` for ``mlu`` and each ``mlu:<n>`` (idempotent)."""
    register_interface_for_device("mlu", MluInterface)
    for index in range(mlu.device_count()):
        register_interface_for_device(f"mlu:{index}", MluInterface)
