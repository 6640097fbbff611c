// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "shallow_copy.h"

#include <c10/core/TensorImpl.h>

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

}  // namespace

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  // c10's rule first (same key set, or two dense tensors of the backends it knows).
  if (self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set())) return true;
  // Added: dense cpu <-> mlu and mlu <-> mlu across key-set differences, as c10 treats cpu <-> cuda.
  return plain_dense_cpu_or_mlu(self) && plain_dense_cpu_or_mlu(from);
}

}  // namespace torch_mlu
