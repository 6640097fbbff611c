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
// VALID ONLY WHILE mlu TENSORS ARE PLAIN c10::TensorImpl (empty_generic/empty_strided_generic in device_kernels.cpp,
// HostCall::to_device, mlu_tensor_like in module.cpp): `set_data` then calls TensorImpl::shallow_copy_from, which
// copies storage, sizes, strides, key set and device between two TensorImpls of the same C++ type. If mlu tensors
// ever get their own TensorImpl subclass (as NPUTensorImpl), a CPU TensorImpl could not hold their state; the RTTI
// check below then answers False (Module._apply replaces the Parameter, as before) instead of corrupting it.
#include <ATen/core/Tensor.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

#include <typeinfo>

namespace torch_mlu {
namespace {

// A dense strided tensor on cpu or mlu held by a plain TensorImpl (not a subclass: no wrapper, functional, fake,
// sparse or quantized impl).
bool plain_dense_cpu_or_mlu(const at::Tensor& t) {
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (typeid(*impl) != typeid(c10::TensorImpl)) return false;
  const c10::DispatchKeySet ks = impl->key_set();
  return ks.has(c10::DispatchKey::CPU) || ks.has(c10::DispatchKey::PrivateUse1);
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  // c10's rule first (same key set, or two dense tensors of the backends it knows).
  if (self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set())) return true;
  // Added: dense cpu <-> mlu and mlu <-> mlu across key-set differences, as c10 treats cpu <-> cuda.
  return plain_dense_cpu_or_mlu(self) && plain_dense_cpu_or_mlu(from);
}

}  // namespace
}  // namespace torch_mlu

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", &torch_mlu::has_compatible_shallow_copy_type);
}
