// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// aten::_has_compatible_shallow_copy_type for mlu: `Module.to("mlu")` keeps Parameter objects (and so optimizer
// references and weight ties) exactly as `Module.to("cuda")` does, and `param.data = mlu_tensor` works.
//
// Module._apply converts each parameter in place (`param.data = fn(param)`) only when
// torch._has_compatible_shallow_copy_type(cpu_param, mlu_param) is True; otherwise it replaces the Parameter with a
// new object, so an optimizer built before `.to()` keeps updating the old CPU tensors and tied weights untie.
// c10's TensorImpl::has_compatible_shallow_copy_type lists the dense backends CPU, CUDA, MPS, HIP, XPU, HPU and MTIA
// but not PrivateUse1 (pytorch issues 116255 and 196975), and says a PrivateUse1 backend should register its own
// kernel for this op (as torch_npu does). The op is CompositeImplicitAutograd; a PrivateUse1 kernel wins over it
// whenever either tensor is an mlu tensor (PrivateUse1 is the highest backend bit of the union of both key sets).
//
// VALID ONLY WHILE mlu TENSORS ARE PLAIN c10::TensorImpl (empty_generic/empty_strided_generic in ops/copy.cpp,
// device_alias in ops/host_call.cpp): `set_data` then calls TensorImpl::shallow_copy_from, which
// copies storage, sizes, strides, key set and device between two TensorImpls of the same C++ type. If mlu tensors
// ever get their own TensorImpl subclass (as NPUTensorImpl), a CPU TensorImpl could not hold their state; the RTTI
// check below then answers False (Module._apply replaces the Parameter, as before) instead of corrupting it.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_mlu {

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from);

}  // namespace torch_mlu
