// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "sparse_tensor.h"

#include <ATen/NativeFunctions.h>
#include <ATen/SparseCsrTensorImpl.h>
#include <ATen/SparseCsrTensorUtils.h>
#include <ATen/SparseTensorImpl.h>
#include <ATen/native/SparseTensorUtils.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/SmallVector.h>

#include <utility>

#include "../core/device.h"
#include "device_kernel.h"
#include "host_call.h"

namespace torch_mlu {
namespace {

bool on_mlu(const at::Tensor& t) { return t.defined() && t.device().type() == kMLU; }

// The guard ATen's generated wrappers put around a factory: the device of its `device` argument.
std::optional<c10::Device> factory_device(std::optional<c10::Device> device) {
  if (device.has_value() && device->type() == kMLU) return device;
  return std::nullopt;
}

// A COO tensor of dispatch key `key` with the sizes, sparse and dense dims, dtype and coalesced flag of `like`, over
// `indices` and `values` (on the key's device).
at::Tensor coo_over(const at::Tensor& like, c10::DispatchKey key, const at::Tensor& indices, const at::Tensor& values) {
  auto* from = at::sparse::get_sparse_impl(like);
  auto t = at::detail::make_tensor<at::SparseTensorImpl>(c10::DispatchKeySet(key), like.dtype());
  auto* impl = at::sparse::get_sparse_impl(t);
  impl->raw_resize_(from->sparse_dim(), from->dense_dim(), like.sizes());
  impl->set_indices_and_values_unsafe(indices, values);
  impl->set_coalesced(from->coalesced());
  return t;
}

// A compressed tensor (the layout of `like`) of dispatch key `key` on `device` with the sizes and dtype of `like`,
// over `compressed`, `plain` and `values`.
at::Tensor compressed_over(const at::Tensor& like, c10::DispatchKey key, c10::Device device,
                           const at::Tensor& compressed, const at::Tensor& plain, const at::Tensor& values) {
  auto t = at::detail::make_tensor<at::SparseCsrTensorImpl>(c10::DispatchKeySet(key), device, like.layout(),
                                                            like.dtype());
  at::sparse_csr::get_sparse_csr_impl(t)->set_member_tensors(compressed, plain, values, like.sizes());
  return t;
}

// One call of a CPU kernel on sparse (and dense) mlu tensors: HostCall (host_call.h) for the member tensors, plus
// the sparse host tensors made for the sparse arguments.
class SparseHostCall {
 public:
  explicit SparseHostCall(c10::DeviceIndex device) : hc_(device) {}

  // The host tensor of mlu tensor `t` (dense: its host view; sparse: a CPU sparse tensor over host views of its
  // members); `writes`: the kernel may write `t` (in-place and out arguments).
  at::Tensor host_view(const at::Tensor& t, bool writes) {
    if (t.layout() == c10::kStrided) {
      at::Tensor h = hc_.host_view(t);
      if (writes) hc_.note_written(t, h);
      return h;
    }
    for (auto& v : views_) {
      if (v.original.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return v.host;
    }
    View v{t, at::Tensor(), writes, {}};
    if (t.layout() == c10::kSparse) {
      auto* impl = at::sparse::get_sparse_impl(t);
      for (const at::Tensor& m : {impl->indices(), impl->values()}) v.members.push_back(member_view(m, writes));
      v.host = coo_over(t, c10::DispatchKey::SparseCPU, v.members[0], v.members[1]);
    } else {
      auto* impl = at::sparse_csr::get_sparse_csr_impl(t);
      for (const at::Tensor& m : {impl->compressed_indices(), impl->plain_indices(), impl->values()}) {
        v.members.push_back(member_view(m, writes));
      }
      v.host = compressed_over(t, c10::DispatchKey::SparseCsrCPU, c10::Device(c10::kCPU), v.members[0], v.members[1],
                               v.members[2]);
    }
    views_.push_back(v);
    return v.host;
  }

  template <class Kernel>
  void run(Kernel&& kernel) {
    hc_.run(std::forward<Kernel>(kernel));
    write_back();
  }

  // A result of the kernel as an mlu tensor: a sparse argument's host tensor is that argument; a CPU sparse tensor
  // becomes an mlu one over its members moved by HostCall::to_device; dense tensors as HostCall::to_device.
  at::Tensor to_device(const at::Tensor& r) {
    if (!r.defined() || r.device().type() != c10::kCPU) return r;
    if (r.layout() == c10::kStrided) return hc_.to_device(r);
    for (auto& v : views_) {
      if (v.host.unsafeGetTensorImpl() == r.unsafeGetTensorImpl()) return v.original;
    }
    const c10::Device dev(kMLU, hc_.device());
    c10::DeviceGuard guard(dev);
    if (r.layout() == c10::kSparse) {
      auto* impl = at::sparse::get_sparse_impl(r);
      return coo_over(r, c10::DispatchKey::SparsePrivateUse1, hc_.to_device(impl->indices()),
                      hc_.to_device(impl->values()));
    }
    auto* impl = at::sparse_csr::get_sparse_csr_impl(r);
    return compressed_over(r, c10::DispatchKey::SparseCsrPrivateUse1, dev, hc_.to_device(impl->compressed_indices()),
                           hc_.to_device(impl->plain_indices()), hc_.to_device(impl->values()));
  }

 private:
  struct View {
    at::Tensor original;  // the sparse mlu tensor
    at::Tensor host;      // the CPU sparse tensor the kernel sees
    bool writes;
    // The host views of the members, alive for the call (HostCall maps them back to the mlu members by address).
    c10::SmallVector<at::Tensor, 3> members;
  };

  at::Tensor member_view(const at::Tensor& m, bool writes) {
    at::Tensor h = hc_.host_view(m);
    if (writes) hc_.note_written(m, h);
    return h;
  }

  // Written sparse arguments take their host tensor's sizes, members and flags (the kernel may resize them or
  // replace their members, e.g. add.out's result).
  void write_back() {
    for (auto& v : views_) {
      if (!v.writes) continue;
      if (v.original.layout() == c10::kSparse) {
        auto* h = at::sparse::get_sparse_impl(v.host);
        auto* o = at::sparse::get_sparse_impl(v.original);
        at::Tensor indices = hc_.to_device(h->indices());
        at::Tensor values = hc_.to_device(h->values());
        o->raw_resize_(h->sparse_dim(), h->dense_dim(), v.host.sizes());
        o->set_indices_and_values_unsafe(indices, values);
        o->set_coalesced(h->coalesced());
      } else {
        auto* h = at::sparse_csr::get_sparse_csr_impl(v.host);
        auto* o = at::sparse_csr::get_sparse_csr_impl(v.original);
        o->set_layout(v.host.layout());
        o->set_member_tensors(hc_.to_device(h->compressed_indices()), hc_.to_device(h->plain_indices()),
                              hc_.to_device(h->values()), v.host.sizes());
      }
    }
  }

  HostCall hc_;
  c10::SmallVector<View, 2> views_;
};

}  // namespace

at::Tensor sparse_coo_with_dims(int64_t sparse_dim, int64_t dense_dim, c10::IntArrayRef size,
                                std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                                std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  c10::OptionalDeviceGuard guard(factory_device(device));
  return at::native::new_with_dims_sparse(sparse_dim, dense_dim, size, dtype, layout, device, pin_memory);
}

at::Tensor sparse_coo_with_dims_and_tensors(int64_t sparse_dim, int64_t dense_dim, c10::SymIntArrayRef size,
                                            const at::Tensor& indices, const at::Tensor& values,
                                            std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                                            std::optional<c10::Device> device, std::optional<bool> pin_memory,
                                            std::optional<bool> is_coalesced) {
  c10::OptionalDeviceGuard guard(factory_device(device));
  return at::native::new_with_dims_and_tensor_sparse_symint(sparse_dim, dense_dim, size, indices, values, dtype,
                                                            layout, device, pin_memory, is_coalesced);
}

at::Tensor empty_sparse_coo(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                            std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                            std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  c10::OptionalDeviceGuard guard(factory_device(device));
  return at::native::empty_sparse(size, dtype, layout, device, pin_memory, memory_format);
}

void sparse_host_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const auto& args = op.schema().arguments();
  const size_t n = args.size();
  const size_t begin = stack->size() - n;
  SparseHostCall call(op_device(op, *stack, begin, n));
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& iv = (*stack)[begin + i];
    const auto* alias = args[i].alias_info();
    const bool writes = alias != nullptr && alias->isWrite();
    if (iv.isTensor() && on_mlu(iv.toTensor())) {
      iv = c10::IValue(call.host_view(iv.toTensor(), writes));
    } else if (iv.isDevice() && iv.toDevice().type() == kMLU) {
      iv = c10::IValue(c10::Device(c10::kCPU));
    }
  }
  // The host tensors select the CPU kernel.
  call.run([&] { op.callBoxed(stack); });
  const size_t nret = op.schema().returns().size();
  for (size_t i = stack->size() - nret; i < stack->size(); ++i) {
    c10::IValue& iv = (*stack)[i];
    if (iv.isTensor()) iv = c10::IValue(call.to_device(iv.toTensor()));
  }
}

}  // namespace torch_mlu
