# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Inductor's C++ wrapper for ``mlu``: ``torch.compile(..., options={"cpp_wrapper": True})`` and AOTInductor.

Inductor looks the C++ wrapper up per device (``register_backend_for_device(..., cpp_wrapper_codegen)``,
torch/_inductor/codegen/common.py); :class:`MluCppWrapperCodegen` is the CPU's (``CppWrapperCpu``,
torch/_inductor/codegen/cpp_wrapper_cpu.py) with what mlu memory needs. mlu tensors name *tagged* device addresses
(:mod:`torch_mlu.host_view`); the generated C++ reaches the bytes as :func:`torch_mlu.inductor.runtime.call_host` does
for the Python wrapper:

- buffers are allocated on mlu (``aoti_torch_empty_strided`` with ``aoti_torch_device_type_privateuse1()``: ``mlu``
  is entered into Inductor's device-to-ATen table as ``at::kPrivateUse1``);
- each generated CPU kernel gets the host address of its arguments (the device address with the tag bits cleared,
  :data:`torch_mlu.host_view.HOST_ADDRESS_MASK`);
- extern kernels that Inductor calls through the CPU's C shim (``mm``/``addmm``/``bmm`` out variants, convolution,
  ``scatter``) run ATen's CPU kernels on CPU host views of their mlu tensors; a result the shim allocates
  (convolution) is copied into a new mlu tensor with the layout Inductor planned; ``index_put`` goes through the
  dispatcher (``aoti_torch_index_put_out``); a list of tensors for the C shim raises ``NotImplementedError``;
- other ATen and custom ops (fallback kernels) go through the dispatcher, so they run mlu's kernels:
  ``aoti_torch_call_dispatcher`` with ``cpp_wrapper=True``, the package's proxy executor with AOTInductor;
- with ``cpp_wrapper=True`` the compiled entry point waits for the current queue first
  (:func:`torch_mlu.inductor.runtime.after_queued_work`); AOTInductor's mlu runner (``catch/csrc/inductor``) does the
  same before each run.

AOTInductor models are compiled for device ``mlu``: the runtime of the model library accepts only cpu/cuda/xpu/mps
device strings (``parse_device_str`` in torch/csrc/inductor/aoti_runtime/model_base.h), so the generated model
constructor hands its base class ``"cpu"`` and then records ``mlu``'s device type and index itself. The weights are
declared as host (CPU) constants of the mlu model, the runtime's "mixed-device constants" whose secondary device is
the CPU (``AOTInductorModelBase::load_constants``): the library's weights are loaded into host memory and read there
by the CPU kernels, which is where mlu memory lives on this device. A weight the model passes to an mlu kernel
through the dispatcher (a fallback kernel, through the package's proxy executor) is copied to mlu before that call.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._inductor import codecache, ir
from torch._inductor.codegen.cpp_utils import DEVICE_TO_ATEN, cexpr
from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
from torch._inductor.utils import IndentedBuffer
from torch._inductor.virtualized import V

from torch_mlu.host_view import HOST_ADDRESS_MASK

# C++ emitted once into every wrapper: host addresses and host views of mlu tensors, mlu copies of CPU results, and
# the model device of AOTInductor models.
_HELPERS = r"""
namespace catch_mlu {
using torch::aot_inductor::ConstantHandle;
using torch::aot_inductor::RAIIAtenTensorHandle;

// The host address of device memory: the device address with its tag bits cleared (torch_mlu.host_view).
constexpr uintptr_t kHostAddressMask = %(mask)sULL;

inline void* host_address(void* address) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(address) & kHostAddressMask);
}

// What a generated CPU kernel call takes the data pointer of: `(float*)(host(buf0).data_ptr())`.
struct HostPointer {
  void* address;
  void* data_ptr() const { return address; }
};

template <typename T>
inline HostPointer host(const T& tensor) {
  return {host_address(tensor.data_ptr())};
}

// The sizes, strides and dtype of a tensor (the pointers belong to the tensor).
struct Layout {
  int64_t dim = 0;
  int64_t* sizes = nullptr;
  int64_t* strides = nullptr;
  int32_t dtype = 0;
};

inline Layout layout_of(AtenTensorHandle tensor) {
  Layout layout;
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dim(tensor, &layout.dim));
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_sizes(tensor, &layout.sizes));
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_strides(tensor, &layout.strides));
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(tensor, &layout.dtype));
  return layout;
}

// A CPU tensor aliasing an mlu tensor's memory; another reference to a tensor of any other device.
inline RAIIAtenTensorHandle host_view(AtenTensorHandle tensor) {
  AtenTensorHandle view = nullptr;
  int32_t device_type = 0;
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(tensor, &device_type));
  if (device_type != aoti_torch_device_type_privateuse1()) {
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_new_tensor_handle(tensor, &view));
    return RAIIAtenTensorHandle(view);
  }
  void* data = nullptr;
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_data_ptr(tensor, &data));
  Layout layout = layout_of(tensor);
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_create_tensor_from_blob(host_address(data), layout.dim, layout.sizes,
      layout.strides, 0, layout.dtype, aoti_torch_device_type_cpu(), 0, &view));
  return RAIIAtenTensorHandle(view);
}

// A tensor argument of a C shim function, as a host view.
struct HostTensor {
  RAIIAtenTensorHandle view;
  operator AtenTensorHandle() const { return view.get(); }
};

// An optional tensor argument (nullptr for none), as a host view.
struct HostOptionalTensor {
  RAIIAtenTensorHandle view;
  AtenTensorHandle handle;
  operator AtenTensorHandle*() { return handle == nullptr ? nullptr : &handle; }
};

inline HostTensor host_arg(AtenTensorHandle tensor) { return {host_view(tensor)}; }
inline HostTensor host_arg(const RAIIAtenTensorHandle& tensor) { return {host_view(tensor.get())}; }
inline HostTensor host_arg(RAIIAtenTensorHandle& tensor) { return {host_view(tensor.get())}; }
inline HostTensor host_arg(const ConstantHandle& tensor) { return {host_view(tensor.get())}; }
inline HostOptionalTensor host_arg(AtenTensorHandle* tensor) {
  if (tensor == nullptr || *tensor == nullptr) return {RAIIAtenTensorHandle(), nullptr};
  RAIIAtenTensorHandle view = host_view(*tensor);
  AtenTensorHandle handle = view.get();
  return {std::move(view), handle};
}
// Tensor lists are not viewed: a CPU kernel must never get an mlu tensor (it would read a tagged address).
void host_arg(const AtenTensorHandle* tensors) = delete;
template <typename T>
inline T host_arg(T value) { return value; }

// A new mlu tensor with the given sizes and strides (and `source`'s dtype), holding a copy of `source`.
inline AtenTensorHandle mlu_copy_as(AtenTensorHandle source, int64_t dim, const int64_t* sizes, const int64_t* strides,
                                    int32_t device_index) {
  int32_t dtype = 0;
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(source, &dtype));
  AtenTensorHandle result = nullptr;
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(
      dim, sizes, strides, dtype, aoti_torch_device_type_privateuse1(), device_index, &result));
  AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_copy_(result, source, 0));
  return result;
}

// An mlu copy, with the sizes and strides Inductor planned, of a CPU tensor the C shim allocated; takes ownership of
// `cpu`.
inline AtenTensorHandle to_mlu(AtenTensorHandle cpu, int64_t dim, const int64_t* sizes, const int64_t* strides,
                               int32_t device_index) {
  RAIIAtenTensorHandle source(cpu);
  return mlu_copy_as(cpu, dim, sizes, strides, device_index);
}

// An mlu copy of a host (CPU) constant of an AOTInductor model, for a kernel that runs on mlu.
inline RAIIAtenTensorHandle mlu_copy(AtenTensorHandle host, int32_t device_index) {
  Layout layout = layout_of(host);
  return RAIIAtenTensorHandle(mlu_copy_as(host, layout.dim, layout.sizes, layout.strides, device_index));
}

// The device of an AOTInductor model compiled for mlu: "mlu" or "mlu:<index>" (index -1: the current device).
inline void set_model_device(const std::string& device_str, int32_t& device_type, int32_t& device_index) {
  std::smatch match;
  if (!std::regex_match(device_str, match, std::regex("mlu(:([0-9]+))?"))) {
    throw std::runtime_error("Invalid device: " + device_str + " (this model was compiled for mlu)");
  }
  device_type = aoti_torch_device_type_privateuse1();
  device_index = match[2].matched ? std::stoi(match[2].str()) : -1;
}
}  // namespace catch_mlu
"""


def _is_mlu(device: Any) -> bool:
    return device is not None and getattr(device, "type", device) == "mlu"


def _has_top_level_comma(arg: str) -> bool:
    depth = 0
    for c in arg:
        depth += c in "([{<"
        depth -= c in ")]}>"
        if c == "," and depth == 0:
            return True
    return False


def _host_args(kernel: str, args: list[str]) -> list[str]:
    """``args`` of a C shim call with each tensor argument as a host view (``catch_mlu::host_arg``).

    An argument that is a list (``std::array<...>{...}.cbegin(), n``) stays as it is; a list of tensors raises
    ``NotImplementedError``: the CPU kernel would get mlu tensors.
    """
    out = []
    for a in map(str, args):
        if _has_top_level_comma(a):
            if "AtenTensorHandle" in a:
                raise NotImplementedError(f"mlu: Inductor's C++ wrapper cannot pass a list of tensors to {kernel}")
            out.append(a)
        else:
            out.append(f"catch_mlu::host_arg({a})")
    return out


def _cpu_shim(kernel: str) -> str:
    """The CPU C shim's name for a kernel Inductor named after mlu (``aoti_torch_mlu_addmm_out``)."""
    return "aoti_torch_cpu_" + kernel.removeprefix("aoti_torch_mlu_") if kernel.startswith("aoti_torch_mlu_") \
        else kernel


class MluCppWrapperCodegen(CppWrapperCpu):
    """``CppWrapperCpu`` for graphs on mlu (see the module docstring for what changes)."""

    def __init__(self) -> None:
        self.device = "mlu"
        self._constants_on_host = False
        self._mlu_copies = itertools.count()
        super().__init__()
        # The kernels are the CPU's C++ (CppScheduling): compile them with the CPU's vector ISA.
        self.needs_vec_isa = True

    @staticmethod
    def create(is_subgraph: bool, subgraph_name: str | None, parent_wrapper: Any,
               partition_signatures: Any = None) -> MluCppWrapperCodegen:
        return MluCppWrapperCodegen()

    @staticmethod
    def get_device_include_path_jit(device: str) -> str:
        return CppWrapperCpu.get_device_include_path_jit("cpu" if device == "mlu" else device)

    @staticmethod
    def get_device_include_path_aot(device: str) -> str:
        return CppWrapperCpu.get_device_include_path_aot("cpu" if device == "mlu" else device)

    def write_header(self) -> None:
        super().write_header()
        if not V.graph.is_const_graph:
            self.header.splice("#include <regex>")
            self.header.splice(_HELPERS % {"mask": hex(HOST_ADDRESS_MASK)})

    def _generate_kernel_call_helper(self, kernel_name: str, call_args: Any, *, device: Any = None,
                                     triton: bool = True, arg_types: Any = None, **kwargs: Any) -> None:
        if not triton and arg_types is not None:
            call_args = [f"catch_mlu::host({arg})" if isinstance(t, str) and "*" in t else arg
                         for arg, t in zip(call_args, arg_types, strict=True)]
        super()._generate_kernel_call_helper(kernel_name, call_args, device=device, triton=triton,
                                             arg_types=arg_types, **kwargs)

    def generate_c_shim_extern_kernel_call(self, kernel: str, args: list[str], device: str,
                                           **kwargs: Any) -> None:
        if device == "mlu":
            kernel, args, device = _cpu_shim(kernel), _host_args(kernel, args), "cpu"
        super().generate_c_shim_extern_kernel_call(kernel, args, device, **kwargs)

    def generate_c_shim_extern_kernel_alloc(self, extern_kernel: ir.ExternKernelAlloc, args: list[str]) -> None:
        device = extern_kernel.get_device()
        if not _is_mlu(device):
            super().generate_c_shim_extern_kernel_alloc(extern_kernel, args)
            return
        kernel = _cpu_shim(extern_kernel.get_kernel_name())
        host_args = _host_args(kernel, args)
        op = extern_kernel.op_overload
        if isinstance(op, torch._ops.OpOverload) and torch.Tag.inplace_view in op.tags:
            CppWrapperCpu.generate_c_shim_extern_kernel_call(self, kernel, host_args, "cpu")
            return
        # The shim allocates the result on the CPU (it ran on host views): copy it into a new mlu tensor.
        name = extern_kernel.get_name()
        self.writeline(f"AtenTensorHandle {name}_cpu_handle;")
        CppWrapperCpu.generate_c_shim_extern_kernel_call(self, kernel, [*host_args, f"&{name}_cpu_handle"], "cpu")
        _, index = self.codegen_device(device).split(", ")
        index = self.codegen_device_idx(device, index)
        sizes, strides = (self._generate_temporary_array_pointer("int64_t", [cexpr(v) for v in values])
                          for values in (extern_kernel.get_size(), extern_kernel.get_stride()))
        self.writeline(f"RAIIAtenTensorHandle {name}(catch_mlu::to_mlu({name}_cpu_handle, "
                       f"{len(extern_kernel.get_size())}, {sizes}, {strides}, {index}));")

    def _generate_scatter_fallback(self, output: str, inputs: list[Any], cpp_kernel_name: str,
                                   python_kernel_name: str, src_is_tensor: bool, reduce: Any, kwargs: Any,
                                   device: str) -> None:
        if device == "mlu":
            cpp_kernel_name, device = _cpu_shim(cpp_kernel_name), "cpu"
            output, *inputs = _host_args(cpp_kernel_name, [output, *inputs])
        super()._generate_scatter_fallback(output, inputs, cpp_kernel_name, python_kernel_name, src_is_tensor,
                                           reduce, kwargs, device)

    def generate_c_shim_fallback_kernel(self, fallback_kernel: ir.FallbackKernel, args: list[str]) -> None:
        if _is_mlu(fallback_kernel.get_device()):
            raise NotImplementedError(f"mlu: Inductor's C++ wrapper cannot call {fallback_kernel.get_kernel_name()} "
                                      "through the C shim (a multi-output extern kernel)")
        super().generate_c_shim_fallback_kernel(fallback_kernel, args)

    def generate_fallback_kernel(self, node: ir.FallbackKernel) -> None:
        if not _is_mlu(node.get_device()):
            super().generate_fallback_kernel(node)
            return
        # mlu's kernels through the dispatcher, as FallbackKernel.codegen does for ops without a C shim function.
        node.use_runtime_dispatch = True
        self.generate_fallback_kernel_with_runtime_lookup(
            node.get_name(), node.python_kernel_name,
            lambda: [*node.codegen_args(), *node.codegen_kwargs()],
            node.op_overload, node.export_extern_kernel_node(),
            node.outputs if node.outputs else node.mutation_outputs)

    def codegen_runtime_lookup_tensor_call_args(self, tensor_call_args: Sequence[str]) -> Sequence[str]:
        """The tensor arguments of an AOTInductor proxy-executor call (a kernel run through the dispatcher). Each
        weight that was an mlu tensor when the model was compiled, and is a host constant in the model library, is
        replaced by an mlu copy made before the call (``catch_mlu::mlu_copy``), so the kernel sees the device it was
        traced with."""
        names = [name for name, tensor in V.graph.constants.items() if _is_mlu(tensor.device)]
        if not (V.graph.aot_mode and names):
            return tensor_call_args
        constant = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
        out = []
        for arg in map(str, tensor_call_args):
            def copy(match: re.Match[str]) -> str:
                name = f"{match.group(1)}_mlu_{next(self._mlu_copies)}"
                self.writeline(f"auto {name} = catch_mlu::mlu_copy({match.group(1)}, this->device_idx_);")
                return f"{name}.get()"

            out.append(constant.sub(copy, arg))
        return out

    def codegen_device(self, device: torch.device) -> str:
        # In the model constructor the weights are declared as host constants (see the module docstring).
        if self._constants_on_host and _is_mlu(device):
            device = torch.device("cpu")
        return super().codegen_device(device)

    def codegen_model_constructor(self) -> None:
        generated = IndentedBuffer()
        self._constants_on_host = True
        try:
            with self._target_buf("prefix", generated):
                super().codegen_model_constructor()
        finally:
            self._constants_on_host = False
        text, base = re.subn(r"^(\s*)device_str,$", r'\1"cpu",', generated.getvalue(), count=1, flags=re.M)
        text, body = re.subn(r"^(\s*(?:true|false)\) \{)$",
                             r"\1\n    catch_mlu::set_model_device(device_str, device_type_, device_idx_);",
                             text, count=1, flags=re.M)
        if base != 1 or body != 1:
            raise RuntimeError("mlu: the AOTInductor model constructor generated by this torch version has an "
                               "unexpected form (torch_mlu.inductor.cpp_wrapper)")
        self.prefix.splice(text)

    def _generate_end_jit(self, result: IndentedBuffer) -> None:
        # The wrapper is compiled as CPU code (cpu headers, vector ISA, precompiled header): there is no mlu.h.
        self.device = "cpu"
        try:
            super()._generate_end_jit(result)
        finally:
            self.device = "mlu"
        result.splice("""
            from torch_mlu.inductor.runtime import after_queued_work as _mlu_after_queued_work
            call = _mlu_after_queued_work(call)
            """)


def _precompiled_header_of_cpu(header_of: Callable[..., str]) -> Callable[..., str]:
    """``codecache._get_cpp_wrapper_header`` with the CPU's header for ``mlu``: the C++ wrapper of an mlu model
    includes the CPU's (:meth:`MluCppWrapperCodegen.get_device_include_path_aot`), and AOTInductor precompiles the
    header it names (``aot_inductor.precompile_headers``); there is no ``aoti_include/mlu.h``."""
    if getattr(header_of, "catch_mlu", False):
        return header_of

    def cpp_wrapper_header(device: str, aot_mode: bool = False) -> str:
        base = device.partition(":")[0]
        return header_of("cpu" if base == "mlu" else device, aot_mode)

    cpp_wrapper_header.catch_mlu = True  # type: ignore[attr-defined]
    return cpp_wrapper_header


def register() -> None:
    """Enters ``mlu`` into Inductor's device-to-ATen table (``at::kPrivateUse1``) for the C++ wrapper, and gives
    AOTInductor the CPU's precompiled header for mlu models (idempotent)."""
    DEVICE_TO_ATEN.setdefault("mlu", "at::kPrivateUse1")
    codecache._get_cpp_wrapper_header = _precompiled_header_of_cpu(codecache._get_cpp_wrapper_header)
