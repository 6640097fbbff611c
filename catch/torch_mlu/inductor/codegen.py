# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Inductor's code generators for ``mlu``: plain ``torch.compile(model)`` (the default Inductor backend) on mlu models.

Inductor looks its code generators up by device type (``torch._inductor.codegen.common``); for ``mlu`` it finds
none and fails with ``KeyError: 'mlu'``. PyTorch's reference PrivateUse1 backend (torch_openreg,
``inductor_backend.py``) registers ``register_device_op_overrides`` plus ``register_backend_for_device`` with the
CPU's C++ scheduling and a wrapper that calls the kernels on a host view of the device memory. This module does the
same for mlu:

- kernels: Inductor's CPU C++ code generation (``CppScheduling``): fused loops, vectorized, OpenMP;
- wrapper: Inductor's Python wrapper; buffers are allocated on mlu (caching allocator, through
  :data:`torch_mlu.inductor.runtime.empty_strided_mlu`), extern kernels (``mm``, convolution, fallbacks) run as eager
  mlu kernels, and each generated C++ kernel is called through :func:`torch_mlu.inductor.runtime.call_host` with host
  views of its mlu arguments (:mod:`torch_mlu.host_view`), so it reads and writes device memory in place, after the
  current queue's asynchronous work (kernels run on the submitting thread, as eager mlu kernels do);
- scheduling: mlu nodes take the scheduler's CPU paths (:func:`_schedule_mlu_nodes_as_cpu`), and code generation
  asks for the C++ backend's rules on mlu (:func:`_report_cpp_backend_for_mlu`);
- device op overrides: ``torch.mlu`` for ``set_device``/``synchronize``/``device_guard``, the queue id as raw stream;
- C++ wrapper: :mod:`torch_mlu.inductor.cpp_wrapper` (``cpp_wrapper=True`` and AOTInductor);
- flex attention: :mod:`torch_mlu.inductor.flex_attention` lowers ``flex_attention`` on mlu with the CPU's C++
  template;
- fallbacks: :mod:`torch_mlu.inductor.fallbacks` names the ops Inductor calls as mlu kernels instead of generating
  code for them (max pooling);
- the FX graph cache: :class:`CodegenVersion` puts the source of this module, of the run-time module, of the C++
  wrapper, of the flex attention lowering and of the fallbacks into the key of every cached graph, so code generated
  by another version of them is not reused.

:func:`register` is idempotent; it runs lazily (:mod:`torch_mlu.inductor.lazy_registration`) the first time Inductor
lowers a graph, so ``import torch`` does not import Inductor. The C++ wrapper (``cpp_wrapper=True``) and
AOTInductor use :class:`torch_mlu.inductor.cpp_wrapper.MluCppWrapperCodegen`.
"""

from __future__ import annotations

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
from torch._inductor.custom_graph_pass import CustomGraphModulePass, get_hash_for_files

from torch_mlu.inductor import cpp_wrapper, fallbacks, flex_attention, runtime


class MluDeviceOpOverrides(DeviceOpOverrides):
    """Python snippets Inductor's wrapper emits for device handling (cf. ``CpuDeviceOpOverrides``)."""

    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_mlu.inductor.runtime import get_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.mlu.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.mlu.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.mlu.device({device_idx})"

    def cpp_kernel_type(self) -> str:
        return "void*"


class MluWrapperCodegen(PythonWrapperCodegen):
    """Inductor's Python wrapper, calling the C++ kernels of mlu graphs through
    :func:`torch_mlu.inductor.runtime.call_host`."""

    @staticmethod
    def create(is_subgraph: bool, subgraph_name: str | None, parent_wrapper: Any,
               partition_signatures: Any = None) -> PythonWrapperCodegen:
        if is_subgraph:
            return SubgraphPythonWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return MluWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.header.splice("from torch_mlu.inductor.runtime import empty_strided_mlu, host_caller\n"
                           "_mlu_call_host = host_caller()")

    def make_allocation(self, name: str, device: torch.device, dtype: torch.dtype, shape: Any, stride: Any,
                        allocation_shape: Any = None, is_pinned: bool = False) -> str:
        """mlu buffers come from :data:`torch_mlu.inductor.runtime.empty_strided_mlu`, as cpu and cuda buffers come
        from ``empty_strided_cpu`` / ``empty_strided_cuda`` (``PythonWrapperCodegen.make_allocation``); other
        devices, and memory-lifecycle tracking, as upstream."""
        from torch._inductor import config

        if device.type != "mlu" or config.test_configs.track_memory_lifecycle:
            return super().make_allocation(name, device, dtype, shape, stride, allocation_shape, is_pinned)
        shape_tuple = self.codegen_python_shape_tuple(shape)
        allocation_tuple = self.codegen_python_shape_tuple(shape if allocation_shape is None else allocation_shape)
        stride_tuple = self.codegen_python_shape_tuple(stride)
        out = f"{name} = empty_strided_mlu({allocation_tuple}, {stride_tuple}, {dtype})"
        if shape_tuple != allocation_tuple:
            out += f".as_strided({shape_tuple}, {stride_tuple})"
        return out

    def _generate_kernel_call_helper(self, kernel_name: str, call_args: Any, *, device: Any = None,
                                     triton: bool = True, **kwargs: Any) -> None:
        from torch._inductor.virtualized import V

        device = device or V.graph.get_current_device_or_throw()
        if device.type == "mlu" and not triton:
            self.writeline(f"_mlu_call_host({kernel_name}, {', '.join(str(a) for a in call_args)})")
            return
        super()._generate_kernel_call_helper(kernel_name, call_args, device=device, triton=triton, **kwargs)


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


class CodegenVersion(CustomGraphModulePass):
    """The device pass registered for mlu (``register_backend_for_device(device_custom_pass=...)``): it changes no
    graph, and its ``uuid`` -- the hash of the source of this module, :mod:`torch_mlu.inductor.runtime`,
    :mod:`torch_mlu.inductor.cpp_wrapper`, :mod:`torch_mlu.inductor.flex_attention` and
    :mod:`torch_mlu.inductor.fallbacks` -- enters
    the key of every graph in Inductor's FX graph cache (``torch._inductor.codecache.FxGraphHashDetails``). The
    cached wrapper code names the run-time module and the code generators' choices, so it is reused only by the same
    version of both."""

    def __call__(self, gm: torch.fx.GraphModule) -> None:
        return None

    def uuid(self) -> bytes:
        return get_hash_for_files((__file__, runtime.__file__, flex_attention.__file__, cpp_wrapper.__file__,
                                   fallbacks.__file__))


def register() -> None:
    """Registers the mlu code generators with Inductor (idempotent)."""
    _schedule_mlu_nodes_as_cpu()
    _report_cpp_backend_for_mlu()
    flex_attention.register()
    fallbacks.register_lowerings()
    cpp_wrapper.register()
    register_device_op_overrides("mlu", MluDeviceOpOverrides())
    if get_scheduling_for_device("mlu") is None:
        register_backend_for_device("mlu", CppScheduling, MluWrapperCodegen, cpp_wrapper.MluCppWrapperCodegen,
                                    WrapperFxCodegen, device_custom_pass=CodegenVersion())
