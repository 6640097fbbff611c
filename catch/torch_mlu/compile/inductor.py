# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Inductor for ``mlu``: plain ``torch.compile(model)`` (the default Inductor backend) on mlu models.

Inductor looks its code generators up by device type (``torch._inductor.codegen.common``); for ``mlu`` it finds
none and fails with ``KeyError: 'mlu'``. PyTorch's reference PrivateUse1 backend (torch_openreg,
``inductor_backend.py``) registers ``register_device_op_overrides`` plus ``register_backend_for_device`` with the
CPU's C++ scheduling and a wrapper that calls the kernels on a host view of the device memory. This module does the
same for mlu:

- kernels: Inductor's CPU C++ code generation (``CppScheduling``): fused loops, vectorized, OpenMP;
- wrapper: Inductor's Python wrapper; buffers are allocated on mlu (caching allocator), extern kernels (``mm``,
  convolution, fallbacks) run as eager mlu kernels, and each generated C++ kernel is called through
  :func:`call_host` with host views of its mlu arguments (:mod:`torch_mlu.compile.host_view`), so it reads and writes
  device memory in place, after the current queue's asynchronous work (kernels run on the submitting thread, as
  eager mlu kernels do);
- scheduling: mlu nodes take the scheduler's CPU paths (:func:`_schedule_mlu_nodes_as_cpu`), and code generation
  asks for the C++ backend's rules on mlu (:func:`_report_cpp_backend_for_mlu`);
- device op overrides: ``torch.mlu`` for ``set_device``/``synchronize``/``device_guard``, the queue id as raw stream.

:func:`register` is idempotent; it runs lazily (:mod:`torch_mlu._inductor_hooks`) the first time Inductor lowers a
graph with mlu tensors, so ``import torch`` does not import Inductor. The C++ wrapper (``cpp_wrapper=True``) and
AOTInductor are not supported for mlu: they raise ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch._inductor.codegen.common import (
    DeviceOpOverrides,
    get_scheduling_for_device,
    register_backend_for_device,
    register_device_op_overrides,
)
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen
from torch._inductor.codegen.wrapper_fxir import WrapperFxCodegen

from torch_mlu import mlu
from torch_mlu.compile.host_view import HostViewCache

_views = HostViewCache()


def get_raw_stream(device_index: int) -> int:
    """The id of the current queue of mlu device ``device_index`` (what ``get_raw_stream`` means for cuda)."""
    return int(mlu.current_stream(device_index).stream_id)


def call_host(kernel: Callable[..., Any], *args: Any) -> Any:
    """Calls a generated CPU kernel with host views of its mlu tensor arguments (other arguments unchanged).

    Waits for the asynchronous work queued on the current queue of the arguments' device first (non-blocking copies).
    """
    host = []
    synced = False
    for a in args:
        if isinstance(a, torch.Tensor) and a.device.type == "mlu":
            if not synced:
                mlu.current_stream(a.device).synchronize()
                synced = True
            host.append(_views(a))
        else:
            host.append(a)
    return kernel(*host)


class MluDeviceOpOverrides(DeviceOpOverrides):
    """Python snippets Inductor's wrapper emits for device handling (cf. ``CpuDeviceOpOverrides``)."""

    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_mlu.compile.inductor import get_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.mlu.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.mlu.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.mlu.device({device_idx})"

    def cpp_kernel_type(self) -> str:
        return "void*"


class MluWrapperCodegen(PythonWrapperCodegen):
    """Inductor's Python wrapper, calling the C++ kernels of mlu graphs through :func:`call_host`."""

    @staticmethod
    def create(is_subgraph: bool, subgraph_name: str | None, parent_wrapper: Any,
               partition_signatures: Any = None) -> PythonWrapperCodegen:
        if is_subgraph:
            return SubgraphPythonWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return MluWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.header.splice("from torch_mlu.compile.inductor import call_host as _mlu_call_host")

    def _generate_kernel_call_helper(self, kernel_name: str, call_args: Any, *, device: Any = None,
                                     triton: bool = True, **kwargs: Any) -> None:
        from torch._inductor.virtualized import V

        device = device or V.graph.get_current_device_or_throw()
        if device.type == "mlu" and not triton:
            self.writeline(f"_mlu_call_host({kernel_name}, {', '.join(str(a) for a in call_args)})")
            return
        super()._generate_kernel_call_helper(kernel_name, call_args, device=device, triton=triton, **kwargs)


class MluCppWrapperUnsupported(PythonWrapperCodegen):
    """Stands for the C++ wrapper (``cpp_wrapper=True``, AOTInductor), which mlu does not support."""

    @staticmethod
    def create(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("mlu: Inductor's C++ wrapper (cpp_wrapper=True / AOTInductor) is not supported; "
                                  "use the default Python wrapper")


def _schedule_mlu_nodes_as_cpu() -> None:
    """Makes Inductor's scheduler treat mlu nodes as CPU nodes (``BaseSchedulerNode.is_cpu``).

    The scheduler takes every non-CPU node for a SIMD (Triton-style) kernel when it fuses and reorders loops
    (e.g. ``_try_reindex_pointwise_for_reduction`` fails with a ``TypeError`` on a layer norm); mlu nodes get CPU C++
    kernels, so they must take the CPU paths. Only the answer for ``mlu`` nodes changes.
    """
    from torch._inductor.scheduler import BaseSchedulerNode

    original = BaseSchedulerNode.is_cpu
    if getattr(original, "_catch_mlu", False):
        return

    def is_cpu(self: BaseSchedulerNode) -> bool:
        device = self.get_device()
        return original(self) or (device is not None and device.type == "mlu")

    is_cpu._catch_mlu = True  # type: ignore[attr-defined]
    BaseSchedulerNode.is_cpu = is_cpu  # type: ignore[method-assign]


# The modules that bind torch._inductor.utils.get_current_backend by name (torch 2.13: codegen.common, scheduler,
# kernel.mm_common); each gets the wrapper below.
_BACKEND_QUERY_USERS = ("torch._inductor.utils", "torch._inductor.codegen.common", "torch._inductor.scheduler",
                        "torch._inductor.kernel.mm_common")


def _report_cpp_backend_for_mlu() -> None:
    """Makes ``torch._inductor.utils.get_current_backend`` answer ``"cpp"`` for mlu.

    Inductor assumes every device other than cpu/mps/xpu/tpu generates Triton (it returns ``config.cuda_backend``),
    and code generation branches on that answer: the C++ kernel of a masked load (e.g. the ``cat`` of an attention
    backward) then took Triton's path and failed with ``AttributeError: 'str' object has no attribute 'dtype'``, and
    half-precision math would be upcast as for Triton. mlu kernels are the CPU's C++ (``CppScheduling``), so mlu
    answers as cpu does (``config.cpu_backend``). Upstream tried to make this a device-interface property (pytorch
    PR 151314, reverted); only the answer for ``mlu`` changes.
    """
    import importlib

    from torch._inductor import config
    from torch._inductor import utils as inductor_utils

    original = inductor_utils.get_current_backend
    if getattr(original, "_catch_mlu", False):
        return

    def get_current_backend(device_type: str | None = None) -> str:
        if not device_type:
            from torch._inductor.virtualized import V

            device_type = V.graph.get_current_device_or_throw().type
        if device_type == "mlu":
            return str(config.cpu_backend)
        return original(device_type)

    get_current_backend._catch_mlu = True  # type: ignore[attr-defined]
    for name in _BACKEND_QUERY_USERS:
        module = importlib.import_module(name)
        if getattr(module, "get_current_backend", None) is original:
            module.get_current_backend = get_current_backend  # type: ignore[attr-defined]


def register() -> None:
    """Registers the mlu code generators with Inductor (idempotent)."""
    _schedule_mlu_nodes_as_cpu()
    _report_cpp_backend_for_mlu()
    register_device_op_overrides("mlu", MluDeviceOpOverrides())
    if get_scheduling_for_device("mlu") is None:
        register_backend_for_device("mlu", CppScheduling, MluWrapperCodegen, MluCppWrapperUnsupported,
                                    WrapperFxCodegen)
