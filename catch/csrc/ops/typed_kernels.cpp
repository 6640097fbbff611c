// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// add, sub, mul and div (.Tensor, and their in-place forms) run many times per training step, often on small
// tensors, where the boxed kernel's fixed cost showed (callgrind: a 64-element `a + b` took 1.5x CPU's
// instructions). Much of it was not the kernel: boxing the arguments into an IValue stack copies each at::Tensor,
// and the first copy of a tensor that Python owns takes the GIL (intrusive_ptr's incref_pyobject on the 1 -> 2
// refcount transition; the dispatcher runs with the GIL released), as does the matching release. These kernels take
// their arguments by reference and, in the common case -- `self` on an mlu device, `other` on the same device or a
// 0-dim CPU tensor (a Python number arrives as one) -- run the CPU kernel on host views through the typed redispatch,
// as the generic kernel does through the boxed one (HostKernelRun: ordered on the current queue, under
// HostKernelScope, so the profilers record the kernel), the result buffer adopted. Everything else takes the generic
// kernel (same errors).
#include "typed_kernels.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/sub_ops.h>

#include <typeinfo>
#include <utility>

#include "../core/device.h"
#include "../core/current_allocator.h"
#include "../core/host_kernel.h"
#include "device_kernel.h"
#include "host_call.h"

namespace torch_mlu {
namespace {

using torch::jit::Stack;

thread_local int64_t tls_typed_calls = 0;
constexpr c10::DispatchKeySet kHostKeys{c10::DispatchKey::CPU};

// The device of a common-case call, or -1.
c10::DeviceIndex typed_device(const at::Tensor& self, const at::Tensor& other) {
  if (!self.defined() || !other.defined() || self.device().type() != kMLU) return -1;
  const c10::Device od = other.device();
  const bool ok = od.type() == kMLU ? od.index() == self.device().index() : od.type() == c10::kCPU && other.dim() == 0;
  return ok ? self.device().index() : -1;
}

// A host view per argument position and thread, reused by the typed kernels (making and freeing a TensorImpl and a
// StorageImpl per argument was ~0.4 k instructions of each call). A slot is re-pointed only while nothing but the
// slot holds its view; its storage is pointed at nothing between calls.
struct HostViewSlot {
  at::Tensor view;

  at::Tensor& bind(const at::Tensor& t) {
    const c10::StorageImpl& ds = *t.storage().unsafeGetStorageImpl();
    if (!view.defined() || view.use_count() != 1 || view.storage().use_count() != 1) {
      view = host_alias(t, map_storage(ds));
      return view;
    }
    c10::TensorImpl* impl = view.unsafeGetTensorImpl();
    c10::StorageImpl* hs = impl->unsafe_storage().unsafeGetStorageImpl();
    hs->set_data_ptr_noswap(c10::DataPtr(host_address(ds), c10::Device(c10::kCPU)));
    hs->set_nbytes(ds.nbytes());
    hs->set_resizable(ds.resizable());
    if (impl->dtype() != t.dtype()) impl->set_storage_and_dtype(impl->storage(), t.dtype());
    impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
    impl->_set_conj(t.is_conj());
    impl->_set_neg(t.is_neg());
    return view;
  }

  void unbind() {
    if (view.use_count() != 1) return;  // kept by someone: left as it is (the next bind replaces it)
    c10::StorageImpl* hs = view.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl();
    hs->set_data_ptr_noswap(c10::DataPtr(nullptr, c10::Device(c10::kCPU)));
    hs->set_nbytes(0);
  }
};
struct ThreadHostViews {
  HostViewSlot slot[2];
  bool busy = false;
};
thread_local ThreadHostViews tls_views;

// The host views of a typed call's arguments: `self` on mlu, `other` on mlu or a 0-dim CPU tensor (used as it
// is). As in HostCall, a tensor passed twice gets one host view and two views of one storage share one host
// storage, so the CPU kernel's alias and overlap checks see what they would see on CPU tensors (that rare case,
// and a nested call, get fresh views instead of the thread's slots).
class HostViews {
 public:
  HostViews(const at::Tensor& self, const at::Tensor& other) {
    const bool other_mlu = other.device().type() == kMLU;
    const bool same = other.unsafeGetTensorImpl() == self.unsafeGetTensorImpl();
    c10::StorageImpl* ss = self.storage().unsafeGetStorageImpl();
    const bool shared_storage = other_mlu && !same && other.storage().unsafeGetStorageImpl() == ss;
    slots_ = shared_storage || tls_views.busy ? nullptr : &tls_views;
    if (slots_ != nullptr) {
      slots_->busy = true;
      self_ = &slots_->slot[0].bind(self);
      if (other_mlu && !same) other_ = &slots_->slot[1].bind(other);
    } else {
      c10::Storage hs = map_storage(*ss);
      if (other_mlu && !same) {
        fresh_[1] = host_alias(other, shared_storage ? hs : map_storage(*other.storage().unsafeGetStorageImpl()));
        other_ = &fresh_[1];
      }
      fresh_[0] = host_alias(self, std::move(hs));
      self_ = &fresh_[0];
    }
    if (!other_mlu) other_ = &other;
    if (same) other_ = self_;
    bound_other_ = other_mlu && !same;
  }
  ~HostViews() {
    if (slots_ == nullptr) return;
    slots_->slot[0].unbind();
    if (bound_other_) slots_->slot[1].unbind();
    slots_->busy = false;
  }
  HostViews(const HostViews&) = delete;
  HostViews& operator=(const HostViews&) = delete;

  at::Tensor& self() { return *self_; }
  const at::Tensor& other() { return *other_; }

 private:
  ThreadHostViews* slots_;
  at::Tensor fresh_[2];
  at::Tensor* self_ = nullptr;
  const at::Tensor* other_ = nullptr;
  bool bound_other_ = false;
};

// `cpu(host view of self, host view of other or the CPU scalar)` for a common-case call on device `d`: in order on
// the current queue, on device `d`, under HostKernelScope, below autograd (as run_device_kernel runs the CPU kernel).
template <class Cpu>
decltype(auto) on_host(c10::DeviceIndex d, const at::Tensor& self, const at::Tensor& other, Cpu&& cpu) {
  ++tls_typed_calls;
  HostViews views(self, other);
  HostKernelRun run(d);
  return cpu(views.self(), views.other());
}

// A typed kernel's fresh CPU result as an mlu tensor of device `d`. Its buffer is device memory (allocated under
// HostKernelScope) and becomes the mlu storage; the TensorImpl itself becomes the mlu tensor (device and backend
// dispatch keys changed, as a TensorImpl made for mlu has them) when nothing else holds it, else
// HostCall::to_device makes a new one.
at::Tensor adopt_result(at::Tensor r, c10::DeviceIndex d) {
  c10::TensorImpl* impl = r.unsafeGetTensorImpl();
  if (r.defined() && r.is_cpu() && r.use_count() == 1 && r.weak_use_count() == 1 &&
      typeid(*impl) == typeid(c10::TensorImpl) && impl->storage().use_count() == 1) {
    c10::StorageImpl* s = impl->unsafe_storage().unsafeGetStorageImpl();
    if (adopt_host_block(s->_mutable_data_ptr_no_checks(), d)) {
      s->set_allocator(device_allocator());
      impl->set_storage_keep_dtype(impl->storage());  // the device: the storage's, now mlu:d
      impl->_change_backend_component_keys(c10::Device(kMLU, d));
      return r;
    }
  }
  return HostCall(d).to_device(r);
}

// The generic device kernel for a typed call; returns its stack (the results).
template <class Op, class... Args>
Stack generic_call(const Args&... args) {
  static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name);
  Stack stack;
  stack.reserve(sizeof...(Args));
  (stack.emplace_back(args), ...);
  run_device_kernel(op, &stack, &redispatch_cpu);
  return stack;
}

// Op(self, other, extra...) -> Tensor, e.g. add.Tensor (Op: at::_ops::add_Tensor).
template <class Op, class... Extra>
at::Tensor binary_kernel(const at::Tensor& self, const at::Tensor& other, Extra... extra) {
  const c10::DeviceIndex d = typed_device(self, other);
  if (d < 0) return std::move(generic_call<Op>(self, other, extra...)[0]).toTensor();
  return adopt_result(on_host(d, self, other, [&](const at::Tensor& s, const at::Tensor& o) {
                        return Op::redispatch(kHostKeys, s, o, extra...);
                      }),
                      d);
}

// Op(self!, other, extra...) -> self, e.g. add_.Tensor. In-place TensorIterator kernels never resize `self`.
template <class Op, class... Extra>
at::Tensor& binary_inplace_kernel(at::Tensor& self, const at::Tensor& other, Extra... extra) {
  const c10::DeviceIndex d = typed_device(self, other);
  if (d < 0) {
    generic_call<Op>(self, other, extra...);
    return self;
  }
  on_host(d, self, other, [&](at::Tensor& s, const at::Tensor& o) { Op::redispatch(kHostKeys, s, o, extra...); });
  return self;
}

template <class Op, auto Kernel>
void register_typed(torch::Library& lib, std::set<std::string>& names) {
  std::string full = std::string(Op::name) + "." + Op::overload_name;
  lib.impl(full.c_str(), TORCH_FN(Kernel));
  names.insert(std::move(full));
}

}  // namespace

std::set<std::string> register_typed_kernels(torch::Library& lib) {
  using S = const at::Scalar&;
  std::set<std::string> names;
  register_typed<at::_ops::add_Tensor, &binary_kernel<at::_ops::add_Tensor, S>>(lib, names);
  register_typed<at::_ops::sub_Tensor, &binary_kernel<at::_ops::sub_Tensor, S>>(lib, names);
  register_typed<at::_ops::mul_Tensor, &binary_kernel<at::_ops::mul_Tensor>>(lib, names);
  register_typed<at::_ops::div_Tensor, &binary_kernel<at::_ops::div_Tensor>>(lib, names);
  register_typed<at::_ops::add__Tensor, &binary_inplace_kernel<at::_ops::add__Tensor, S>>(lib, names);
  register_typed<at::_ops::sub__Tensor, &binary_inplace_kernel<at::_ops::sub__Tensor, S>>(lib, names);
  register_typed<at::_ops::mul__Tensor, &binary_inplace_kernel<at::_ops::mul__Tensor>>(lib, names);
  register_typed<at::_ops::div__Tensor, &binary_inplace_kernel<at::_ops::div__Tensor>>(lib, names);
  return names;
}

int64_t typed_kernel_calls() { return tls_typed_calls; }

}  // namespace torch_mlu
