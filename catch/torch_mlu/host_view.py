# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Zero-copy CPU views of ``mlu`` tensors, so code compiled for the CPU can run on device memory.

The emulated MLU runtime (``catch/csrc/runtime/memory.cpp``) backs every device allocation with host memory and
hands out *tagged* device addresses (the device number + 1 in bits 56..63, ``catch/csrc/runtime/registry.h``):
dereferencing one faults, which is why compiled CPU kernels cannot take ``tensor.data_ptr()`` directly. The backend's
host alias (``catch/csrc/ops/host_call.cpp``) maps a device storage to its host memory and wraps it in a CPU tensor
of the same sizes, strides and storage offset; :func:`host_args` and :func:`host_view` hand those out to Python.

Inductor's generated code for mlu runs its kernels on these views (:func:`torch_mlu.inductor.runtime.call_host`,
which runs :func:`check_host_view` once first); fusion groups get theirs from the same C++ call
(``torch_mlu._C._host_args``, :mod:`torch_mlu.compile.group`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from torch_mlu import _C

#: ``device_address & HOST_ADDRESS_MASK`` is the host address of device memory: bits 56..63 of a device address
#: hold the device tag (``catch/csrc/runtime/registry.h``: ``kTagShift``, ``kAddrMask``); host addresses have them
#: clear already. Inductor's C++ wrapper for mlu applies it in generated code (:mod:`torch_mlu.inductor.cpp_wrapper`);
#: :func:`check_host_view` checks it against the backend's host alias.
HOST_ADDRESS_MASK = (1 << 56) - 1


def host_view(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor aliasing the memory of the ``mlu`` tensor ``t`` (same shape, strides, offset and dtype), after
    the work queued on the current queue of ``t``'s device has finished.

    Writes through the view change ``t``. The view does not keep ``t``'s storage alive: the caller must hold ``t``
    while it uses the view. Raises ``ValueError`` when ``t`` is not an ``mlu`` tensor. The view is the one compiled
    code gets (:func:`host_args`).
    """
    if not isinstance(t, torch.Tensor) or t.device.type != "mlu":
        where = t.device if isinstance(t, torch.Tensor) else type(t).__name__
        raise ValueError(f"host_view: expected an mlu tensor, got one on {where}")
    return host_args([t])[0]


def host_args(args: Sequence[object]) -> list[object]:
    """``args`` with each ``mlu`` tensor replaced by its host view (other values as they are), after the work queued
    on the current queues of their devices has finished: the arguments a generated CPU kernel is called with.

    One C++ call (``torch_mlu._C._host_args``, ``catch/csrc/python/host_kernel.cpp``), which fusion groups use too;
    arguments on one device storage share one host storage.
    """
    views, _key = _C._host_args(list(args))
    return views


def check_host_view() -> None:
    """Checks that :func:`host_view` reads and writes device memory, and that :data:`HOST_ADDRESS_MASK` gives the
    address of that view (the runtime's tag scheme is as assumed).

    Raises ``RuntimeError`` naming the mismatch when it does not, so generated kernels are never run on misread
    memory: :func:`torch_mlu.inductor.runtime.call_host` and the C++ wrapper's entry point run it before the first
    kernel of a process. Allocates an 8-element float32 tensor on the current mlu device.
    """
    probe = torch.arange(8, dtype=torch.float32, device="mlu")
    view = host_view(probe)
    if not torch.equal(view, torch.arange(8, dtype=torch.float32)):
        raise RuntimeError("torch_mlu: host views do not read mlu memory (device address tag scheme changed)")
    view.mul_(2)
    if not torch.equal(probe.cpu(), torch.arange(0, 16, 2, dtype=torch.float32)):
        raise RuntimeError("torch_mlu: host views do not write mlu memory (device address tag scheme changed)")
    if probe.data_ptr() & HOST_ADDRESS_MASK != view.data_ptr():
        raise RuntimeError("torch_mlu: a device address masked with HOST_ADDRESS_MASK is not its host address "
                           "(device address tag scheme changed)")
