// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// add, sub, mul and div (.Tensor, and their in-place forms) run many times per training step, often on small
// tensors, and mm, bmm and addmm (and their .out forms, which Inductor's generated code calls) once per layer, where
// the boxed kernel's fixed cost showed (callgrind: a 64-element `a + b` took 1.5x CPU's instructions). Much of it
// was not the kernel: boxing the arguments into an IValue stack copies each at::Tensor, and the first copy of a
// tensor that Python owns takes the GIL (intrusive_ptr's incref_pyobject on the 1 -> 2 refcount transition; the
// dispatcher runs with the GIL released), as does the matching release. These kernels take their arguments by
// reference and, in the common case -- the tensors on one mlu device (add/sub/mul/div: `other` may be a 0-dim CPU
// tensor, as a Python number arrives; an out= tensor already of the result's sizes) -- run the CPU kernel on host
// views through the typed redispatch, as the generic kernel does through the boxed one (HostKernelRun: ordered on
// the current queue, under HostKernelScope, so the profilers record the kernel), the result buffer adopted.
// Everything else takes the generic kernel (same errors).
#include "typed_kernels.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/mm_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/sub_ops.h>
#include <c10/util/SmallVector.h>

#include <array>
#include <initializer_list>
#include <optional>
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

// The device of a common-case binary call, or -1: `self` on an mlu device, `other` on the same device or a 0-dim
// CPU tensor.
c10::DeviceIndex binary_device(const at::Tensor& self, const at::Tensor& other) {
  if (!self.defined() || !other.defined() || self.device().type() != kMLU) return -1;
  const c10::Device od = other.device();
  const bool ok = od.type() == kMLU ? od.index() == self.device().index() : od.type() == c10::kCPU && other.dim() == 0;
  return ok ? self.device().index() : -1;
}

// The device of a common-case call whose tensors are all on one mlu device, or -1.
c10::DeviceIndex same_device(std::initializer_list<const at::Tensor*> tensors) {
  c10::DeviceIndex d = -1;
  for (const at::Tensor* t : tensors) {
    if (!t->defined() || t->device().type() != kMLU || (d >= 0 && t->device().index() != d)) return -1;
    d = t->device().index();
  }
  return d;
}

// The most tensor arguments of a typed kernel (addmm.out: self, mat1, mat2, out).
constexpr size_t kMaxTensors = 4;

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
  HostViewSlot slot[kMaxTensors];
  bool busy = false;
};
thread_local ThreadHostViews tls_views;

// The host views of a typed call's N tensor arguments; a tensor not on mlu (a 0-dim CPU operand) is used as it is. A
// tensor passed twice gets one host view. Two distinct tensors over one storage, and a nested call, take HostCall's
// views instead of the thread's slots: there views of one storage share one host storage, so the CPU kernel's alias
// and overlap checks see what they would see on CPU tensors. (The thread's slots are reached through one pointer:
// each access of a thread_local in a shared library is a call of __tls_get_addr.)
template <size_t N>
class HostViews {
  static_assert(N <= kMaxTensors);

 public:
  HostViews(c10::DeviceIndex d, const std::array<const at::Tensor*, N>& args) {
    bool shared_storage = false;
    for (size_t i = 0; i < N; ++i) {
      mlu_[i] = args[i]->device().type() == kMLU;
      for (size_t j = 0; j < i; ++j) {
        shared_storage |= mlu_[i] && mlu_[j] && args[i]->unsafeGetTensorImpl() != args[j]->unsafeGetTensorImpl() &&
                          args[i]->storage().unsafeGetStorageImpl() == args[j]->storage().unsafeGetStorageImpl();
      }
    }
    ThreadHostViews* slots = &tls_views;
    if (shared_storage || slots->busy) {
      fresh_.emplace(d);
      for (size_t i = 0; i < N; ++i) {
        if (mlu_[i]) {
          fresh_->views[i] = fresh_->call.host_view(*args[i]);
          owned_[i] = &fresh_->views[i];
        }
        views_[i] = mlu_[i] ? owned_[i] : args[i];
      }
      return;
    }
    slots_ = slots;
    slots_->busy = true;
    for (size_t i = 0; i < N; ++i) {
      if (!mlu_[i]) {
        views_[i] = args[i];
        continue;
      }
      for (size_t j = 0; j < i && owned_[i] == nullptr; ++j) {
        if (args[j]->unsafeGetTensorImpl() == args[i]->unsafeGetTensorImpl()) owned_[i] = owned_[j];
      }
      if (owned_[i] == nullptr) {
        owned_[i] = &slots_->slot[i].bind(*args[i]);
        bound_[i] = true;
      }
      views_[i] = owned_[i];
    }
  }
  ~HostViews() {
    if (slots_ == nullptr) return;
    for (size_t i = 0; i < N; ++i) {
      if (bound_[i]) slots_->slot[i].unbind();
    }
    slots_->busy = false;
  }
  HostViews(const HostViews&) = delete;
  HostViews& operator=(const HostViews&) = delete;

  // The host view of the i-th tensor given to the constructor (a tensor not on mlu: that tensor).
  const at::Tensor& operator[](size_t i) const { return *views_[i]; }
  // The host view of the i-th tensor, an mlu tensor the kernel writes (in place or out=).
  at::Tensor& written(size_t i) {
    TORCH_INTERNAL_ASSERT(mlu_[i]);
    return *owned_[i];
  }

 private:
  struct Fresh {
    explicit Fresh(c10::DeviceIndex d) : call(d) {}
    HostCall call;
    at::Tensor views[N];
  };
  ThreadHostViews* slots_ = nullptr;  // the thread's slots, when they hold the views
  std::optional<Fresh> fresh_;        // else HostCall's views
  const at::Tensor* views_[N] = {};
  at::Tensor* owned_[N] = {};  // the views of the mlu tensors
  bool mlu_[N] = {};
  bool bound_[N] = {};
};

// Runs `cpu()` for a common-case call on device `d` (its host views made): in order on the current queue, on device
// `d`, under HostKernelScope, below autograd (as run_device_kernel runs the CPU kernel).
template <class Cpu>
decltype(auto) on_host(c10::DeviceIndex d, Cpu&& cpu) {
  ++tls_typed_calls;
  HostKernelRun run(d);
  return cpu();
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
  const c10::DeviceIndex d = binary_device(self, other);
  if (d < 0) return std::move(generic_call<Op>(self, other, extra...)[0]).toTensor();
  HostViews<2> v(d, {&self, &other});
  return adopt_result(on_host(d, [&] { return Op::redispatch(kHostKeys, v[0], v[1], extra...); }), d);
}

// Op(self!, other, extra...) -> self, e.g. add_.Tensor. In-place TensorIterator kernels never resize `self`.
template <class Op, class... Extra>
at::Tensor& binary_inplace_kernel(at::Tensor& self, const at::Tensor& other, Extra... extra) {
  const c10::DeviceIndex d = binary_device(self, other);
  if (d < 0) {
    generic_call<Op>(self, other, extra...);
    return self;
  }
  HostViews<2> v(d, {&self, &other});
  on_host(d, [&] { Op::redispatch(kHostKeys, v.written(0), v[1], extra...); });
  return self;
}

// The sizes of a matrix product's result, or an empty vector when an operand has the wrong number of dimensions
// (the CPU kernel raises that error; the generic kernel runs it): mm/addmm [n, m] @ [m, p] -> [n, p], bmm
// [b, n, m] @ [b, m, p] -> [b, n, p].
c10::SmallVector<int64_t, 3> product_sizes(const at::Tensor& a, const at::Tensor& b) {
  const int64_t dim = a.dim();
  if ((dim != 2 && dim != 3) || b.dim() != dim) return {};
  if (dim == 2) return {a.size(0), b.size(1)};
  return {a.size(0), a.size(1), b.size(2)};
}

// Op(a, b) -> Tensor: mm, bmm.
template <class Op>
at::Tensor product_kernel(const at::Tensor& a, const at::Tensor& b) {
  const c10::DeviceIndex d = same_device({&a, &b});
  if (d < 0) return std::move(generic_call<Op>(a, b)[0]).toTensor();
  HostViews<2> v(d, {&a, &b});
  return adopt_result(on_host(d, [&] { return Op::redispatch(kHostKeys, v[0], v[1]); }), d);
}

// Op(a, b, out!) -> out: mm.out, bmm.out. `out` already has the result's sizes (else the CPU kernel would resize
// it: the generic kernel mirrors that onto the device tensor).
template <class Op>
at::Tensor& product_out_kernel(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  const c10::DeviceIndex d = same_device({&a, &b, &out});
  if (d < 0 || out.sizes() != c10::IntArrayRef(product_sizes(a, b))) {
    generic_call<Op>(a, b, out);
    return out;
  }
  HostViews<3> v(d, {&a, &b, &out});
  on_host(d, [&] { Op::redispatch(kHostKeys, v[0], v[1], v.written(2)); });
  return out;
}

at::Tensor addmm_kernel(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                        const at::Scalar& alpha) {
  using Op = at::_ops::addmm;
  const c10::DeviceIndex d = same_device({&self, &mat1, &mat2});
  if (d < 0) return std::move(generic_call<Op>(self, mat1, mat2, beta, alpha)[0]).toTensor();
  HostViews<3> v(d, {&self, &mat1, &mat2});
  return adopt_result(on_host(d, [&] { return Op::redispatch(kHostKeys, v[0], v[1], v[2], beta, alpha); }), d);
}

at::Tensor& addmm_out_kernel(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                             const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  using Op = at::_ops::addmm_out;
  const c10::DeviceIndex d = same_device({&self, &mat1, &mat2, &out});
  if (d < 0 || mat1.dim() != 2 || out.sizes() != c10::IntArrayRef(product_sizes(mat1, mat2))) {
    generic_call<Op>(self, mat1, mat2, beta, alpha, out);
    return out;
  }
  HostViews<4> v(d, {&self, &mat1, &mat2, &out});
  on_host(d, [&] { Op::redispatch(kHostKeys, v[0], v[1], v[2], beta, alpha, v.written(3)); });
  return out;
}

template <class Op, auto Kernel>
void register_typed(torch::Library& lib, std::set<std::string>& names) {
  std::string full = Op::name;
  if (*Op::overload_name != '\0') full = full + "." + Op::overload_name;
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
  register_typed<at::_ops::mm, &product_kernel<at::_ops::mm>>(lib, names);
  register_typed<at::_ops::bmm, &product_kernel<at::_ops::bmm>>(lib, names);
  register_typed<at::_ops::mm_out, &product_out_kernel<at::_ops::mm_out>>(lib, names);
  register_typed<at::_ops::bmm_out, &product_out_kernel<at::_ops::bmm_out>>(lib, names);
  register_typed<at::_ops::addmm, &addmm_kernel>(lib, names);
  register_typed<at::_ops::addmm_out, &addmm_out_kernel>(lib, names);
  return names;
}

int64_t typed_kernel_calls() { return tls_typed_calls; }

}  // namespace torch_mlu
