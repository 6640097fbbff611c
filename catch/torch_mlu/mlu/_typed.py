# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Typed tensor classes (``torch.mlu.FloatTensor``, ``torch.mlu.BoolTensor``, ...), the analogues of the
classes PyTorch generates for ``torch.cuda`` (``torch/csrc/tensor/python_tensor.cpp``).

``isinstance(t, torch.mlu.FloatTensor)`` is true for float32 strided tensors on mlu. The legacy constructor works
as for CUDA: ``FloatTensor(2, 3)`` (uninitialized, that size), ``FloatTensor([1, 2])`` (from data),
``FloatTensor()`` (empty), ``FloatTensor(torch.Size([2]))``; the result is on the current mlu device (or
``device=``).
"""

from __future__ import annotations

from typing import Any

import torch

_DTYPES = {"Float": torch.float32, "Double": torch.float64, "Half": torch.float16, "BFloat16": torch.bfloat16,
           "Byte": torch.uint8, "Char": torch.int8, "Short": torch.int16, "Int": torch.int32, "Long": torch.int64,
           "Bool": torch.bool}


class _TypedTensorMeta(type):
    dtype: torch.dtype
    layout: torch.layout

    def __instancecheck__(cls, obj: object) -> bool:
        return (isinstance(obj, torch.Tensor) and obj.device.type == "mlu" and obj.dtype == cls.dtype
                and obj.layout == cls.layout)


def _device(device: Any) -> torch.device:
    if device is None:
        return torch.device("mlu", torch.mlu.current_device())
    d = torch.device(device)
    if d.type != "mlu":
        raise RuntimeError(f"legacy constructor expects device type: mlu but device type: {d.type} was passed")
    return d


class _TypedTensor(metaclass=_TypedTensorMeta):
    dtype = torch.float32
    layout = torch.strided
    is_cuda = False
    is_mlu = True

    def __new__(cls, *args: Any, device: Any = None) -> torch.Tensor:  # type: ignore[misc]
        dev = _device(device)
        if not args:
            return torch.empty(0, dtype=cls.dtype, device=dev)
        if all(isinstance(a, int) for a in args):
            return torch.empty(args, dtype=cls.dtype, device=dev)
        if len(args) == 1 and isinstance(args[0], torch.Size):
            return torch.empty(args[0], dtype=cls.dtype, device=dev)
        if len(args) == 1 and isinstance(args[0], torch.Tensor):
            t = args[0]
            if t.dtype != cls.dtype or t.device != dev:
                raise TypeError(f"expected {cls.dtype} on {dev} (got {t.dtype} on {t.device})")
            return t.detach()
        if len(args) == 1:
            return torch.tensor(args[0], dtype=cls.dtype, device=dev)
        raise TypeError(f"{cls.__module__}.{cls.__name__}(): invalid arguments {args!r}")


def make(namespace: str) -> dict[str, type]:
    """The typed classes for ``namespace`` (``torch.mlu``), keyed by class name."""
    out: dict[str, type] = {}
    for prefix, dtype in _DTYPES.items():
        name = f"{prefix}Tensor"
        out[name] = _TypedTensorMeta(name, (_TypedTensor,), {
            "dtype": dtype, "layout": torch.strided, "__module__": namespace, "__qualname__": name,
            "__doc__": f"{dtype} tensors on mlu (legacy typed class)."})
    return out
