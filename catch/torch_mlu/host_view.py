# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Zero-copy CPU views of ``mlu`` tensors, so code compiled for the CPU can run on device memory.

The emulated MLU runtime (``catch/csrc/runtime/memory.cpp``) backs every device allocation with host memory
and hands out *tagged* device addresses: the host address with the device number + 1 in bits 56..63
(``kTagShift = 56``). Dereferencing a device address faults, which is why compiled CPU kernels cannot take
``tensor.data_ptr()`` directly. The runtime's ``mapHost`` strips the tag; :func:`host_view` does the same and wraps
the host memory in a CPU tensor with the same sizes, strides and storage offset, through the storage constructor
PyTorch's Inductor uses for its CUDA graph trees (``torch._C._construct_storage_from_data_pointer``).

Inductor's generated code for mlu runs its kernels on these views (:func:`torch_mlu.inductor.runtime.call_host`,
which runs :func:`check_host_view` once first); fusion groups get theirs from the runtime in C++
(``torch_mlu._C._host_args``).
"""

from __future__ import annotations

import torch

# Bits 56..63 of a device address hold the device tag (catch/csrc/runtime/registry.h: kTagShift, kAddrMask).
_TAG_SHIFT = 56
#: ``device_address & HOST_ADDRESS_MASK`` is the host address of device memory (the tag bits cleared); host
#: addresses have those bits clear already. Inductor's C++ wrapper for mlu applies it in generated code
#: (:mod:`torch_mlu.inductor.cpp_wrapper`).
HOST_ADDRESS_MASK = (1 << _TAG_SHIFT) - 1
_CPU = torch.device("cpu")


def host_view(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor aliasing the memory of the ``mlu`` tensor ``t`` (same shape, strides, offset and dtype).

    Writes through the view change ``t``. The view does not keep ``t``'s storage alive: the caller must hold ``t``
    while it uses the view. Raises ``ValueError`` when ``t`` is not an ``mlu`` tensor.
    """
    if t.device.type != "mlu":
        raise ValueError(f"host_view: expected an mlu tensor, got one on {t.device}")
    storage = t.untyped_storage()
    host = torch._C._construct_storage_from_data_pointer(storage.data_ptr() & HOST_ADDRESS_MASK, _CPU, storage.nbytes())
    # device=_CPU: inside `with torch.device("mlu")` a device-less empty() would be an mlu tensor.
    return torch.empty((), dtype=t.dtype, device=_CPU).set_(host, t.storage_offset(), t.size(), t.stride())


class HostViewCache:
    """Memoizes :func:`host_view` by (storage address, dtype, sizes, strides, offset), at most ``capacity`` entries.

    A cached view stays correct when its storage is freed and another tensor is later allocated at the same
    address: the view is looked up only for a live mlu tensor with that address, whose memory it then names.
    Parameters and reused caching-allocator blocks make most lookups hits (a miss builds a new tensor view).
    """

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._views: dict[tuple[object, ...], torch.Tensor] = {}

    def __call__(self, t: torch.Tensor) -> torch.Tensor:
        key = (t.data_ptr(), t.dtype, t.shape, t.stride(), t.untyped_storage().nbytes())
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= self.capacity:
                self._views.clear()
            view = self._views[key] = host_view(t)
        return view


def check_host_view() -> None:
    """Checks that :func:`host_view` reads and writes device memory (the runtime's tag scheme is as assumed).

    Raises ``RuntimeError`` naming the mismatch when it does not, so generated kernels are never run on misread
    memory: :func:`torch_mlu.inductor.runtime.call_host` runs it before the first kernel of a process. Allocates an
    8-element float32 tensor on the current mlu device.
    """
    probe = torch.arange(8, dtype=torch.float32, device="mlu")
    view = host_view(probe)
    if not torch.equal(view, torch.arange(8, dtype=torch.float32)):
        raise RuntimeError("torch_mlu: host views do not read mlu memory (device address tag scheme changed)")
    view.mul_(2)
    if not torch.equal(probe.cpu(), torch.arange(0, 16, 2, dtype=torch.float32)):
        raise RuntimeError("torch_mlu: host views do not write mlu memory (device address tag scheme changed)")
