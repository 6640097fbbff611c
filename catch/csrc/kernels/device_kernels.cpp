// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Device kernels for mlu, and the CPU fallback for everything else.
//
// A device kernel runs an ATen CPU kernel directly on the device buffers:
// every mlu tensor argument becomes a CPU tensor over the runtime's host view
// of its storage (catch_rt::mapHost), the op is redispatched to the CPU key
// under HostKernelScope (so new buffers the kernel allocates are device
// memory), and results are turned back into mlu tensors: the argument itself
// for in-place/out ops, a view of the argument's storage for view ops, or the
// adopted device buffer for new tensors. No copies. Work is ordered on the
// current queue (catch_rt::runInline).
//
// Which ops are device kernels is one list (kDeviceOps). Everything else goes
// through the boxed CPU fallback: on by default, warns once per op, counts
// calls per op (torch.mlu.fallback_report()); CATCH_FALLBACK_STRICT=1 turns a
// fallback into an error naming the op.
#include <ATen/EmptyTensor.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/ConvUtils.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/_fused_sdp_choice_native.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/sub_ops.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "../aten/mlu_aten.h"
#include "../core/mlu_core.h"

namespace torch_mlu {

// ---- host views (declared in mlu_aten.h) ----
// The host address of the device storage `ds`'s bytes.
void* host_address(const c10::StorageImpl& ds) {
  const c10::DataPtr& dp = ds.data_ptr();
  if (is_allocator_block(dp)) return catch_rt::mapHostUnchecked(dp.get());  // a live block of ours: no lookup
  void* host = nullptr;
  MLU_CHECK(catch_rt::mapHost(dp.get(), ds.nbytes(), &host));
  return host;
}

// A CPU storage over the host view of the device storage `ds` (same bytes, no copy).
c10::Storage map_storage(const c10::StorageImpl& ds) {
  return c10::Storage(c10::Storage::use_byte_size_t(), ds.nbytes(),
                      c10::DataPtr(host_address(ds), c10::Device(c10::kCPU)), c10::GetCPUAllocator(),
                      ds.resizable());
}

// A CPU tensor over the host storage `hs` with the sizes, strides, offset, dtype and conj/neg bits of `t`.
at::Tensor host_alias(const at::Tensor& t, c10::Storage hs) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(hs), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                   t.dtype());
  impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  impl->_set_conj(t.is_conj());
  impl->_set_neg(t.is_neg());
  return at::Tensor(std::move(impl));
}

namespace {

using c10::IValue;
using torch::jit::Stack;

// ---- host views ------------------------------------------------------------------
struct StorageMap {
  c10::StorageImpl* host;
  c10::Storage device;
};

struct Written {
  at::Tensor original;  // the mlu tensor
  at::Tensor host;      // its host view handed to the CPU kernel
  void* host_ptr;       // host view's data pointer before the kernel ran
};

struct HostCall {
  c10::DeviceIndex device = -1;
  c10::SmallVector<StorageMap, 4> storages;
  c10::SmallVector<std::pair<c10::TensorImpl*, at::Tensor>, 4> wrapped;  // host view impl -> original
  c10::SmallVector<Written, 2> written;

  c10::Storage host_storage(const c10::Storage& ds) {
    for (auto& s : storages) {
      if (s.device.unsafeGetStorageImpl() == ds.unsafeGetStorageImpl()) return c10::Storage(
          c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(s.host));
    }
    c10::Storage hs = map_storage(*ds.unsafeGetStorageImpl());
    storages.push_back({hs.unsafeGetStorageImpl(), ds});
    return hs;
  }

  at::Tensor host_view(const at::Tensor& t) {
    for (auto& w : wrapped) {  // the same tensor twice (x * x, a.add_(a)): one host view, as CPU sees one tensor
      if (w.second.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
        return at::Tensor(c10::intrusive_ptr<c10::TensorImpl>::reclaim_copy(w.first));
      }
    }
    at::Tensor h = host_alias(t, host_storage(t.storage()));
    wrapped.emplace_back(h.unsafeGetTensorImpl(), t);
    return h;
  }

  c10::Storage device_storage_for(c10::StorageImpl* hs) {
    for (auto& s : storages) {
      if (s.host == hs) return s.device;
    }
    // A buffer the kernel allocated: adopt it (no copy) or, if it was not
    // allocated in host-kernel mode, copy it to the device.
    size_t nbytes = hs->nbytes();
    c10::DataPtr& hp = hs->_mutable_data_ptr_no_checks();
    c10::Storage ds;
    if (adopt_host_block(hp, device)) {
      // hp (the storage's own DataPtr) is now the device DataPtr: the kernel's fresh storage becomes the mlu
      // storage itself, without a second StorageImpl.
      hs->set_allocator(device_allocator());
      ds = c10::Storage(c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(hs));
    } else {
      // Not device memory (e.g. a CPU tensor argument handed back): copy, leave the host buffer alone.
      c10::DataPtr fresh = device_allocator()->allocate(nbytes);
      if (nbytes > 0) {
        MLU_CHECK(catch_rt::memcpy(fresh.get(), hp.get(), nbytes, catch_rt::MemcpyKind::HostToDevice));
      }
      ds = c10::Storage(c10::Storage::use_byte_size_t(), nbytes, std::move(fresh), device_allocator(), true);
    }
    storages.push_back({hs, ds});
    return ds;
  }

  at::Tensor to_device(const at::Tensor& r) {
    if (!r.defined() || r.device().type() != c10::kCPU) return r;
    for (auto& w : wrapped) {
      if (w.first == r.unsafeGetTensorImpl()) return w.second;
    }
    c10::Storage ds = device_storage_for(r.storage().unsafeGetStorageImpl());
    auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(ds), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                     r.dtype());
    impl->set_sizes_and_strides(r.sizes(), r.strides(), r.storage_offset());
    impl->_set_conj(r.is_conj());
    impl->_set_neg(r.is_neg());
    return at::Tensor(std::move(impl));
  }

  // After the kernel: mirror resizes / set_ done on host views of written args.
  void write_back() {
    for (auto& w : written) {
      auto* himpl = w.host.unsafeGetTensorImpl();
      auto* oimpl = w.original.unsafeGetTensorImpl();
      c10::StorageImpl* hs = himpl->storage().unsafeGetStorageImpl();
      bool same_storage = false;
      for (auto& s : storages) {
        if (s.host == hs && s.device.unsafeGetStorageImpl() == oimpl->storage().unsafeGetStorageImpl()) {
          same_storage = true;
        }
      }
      if (same_storage && hs->data_ptr().get() != w.host_ptr) {
        // The kernel resized the storage: move the new buffer into the device storage.
        size_t nbytes = hs->nbytes();
        c10::DataPtr p = hs->set_data_ptr(c10::DataPtr(w.host_ptr, c10::Device(c10::kCPU)));
        if (!adopt_host_block(p, device)) {
          c10::DataPtr fresh = device_allocator()->allocate(nbytes);
          if (nbytes > 0) {
            MLU_CHECK(catch_rt::memcpy(fresh.get(), p.get(), nbytes, catch_rt::MemcpyKind::HostToDevice));
          }
          p = std::move(fresh);
        }
        auto* ods = oimpl->storage().unsafeGetStorageImpl();
        ods->set_data_ptr_noswap(std::move(p));
        ods->set_nbytes(nbytes);
      } else if (!same_storage) {
        oimpl->set_storage_keep_dtype(device_storage_for(hs));
      }
      if (oimpl->sizes() != himpl->sizes() || oimpl->strides() != himpl->strides() ||
          oimpl->storage_offset() != himpl->storage_offset()) {
        oimpl->set_sizes_and_strides(himpl->sizes(), himpl->strides(), himpl->storage_offset());
      }
    }
  }
};

std::string device_str(const at::Tensor& t) { return t.device().str(); }

[[noreturn]] void mixed_devices(const std::string& a, const std::string& b, const c10::OperatorHandle& op) {
  TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ", a, " and ", b,
              "! (when checking arguments for ", op.schema().name(), ")");
}

// Finds the op's mlu device and refuses CUDA-incompatible device mixes:
// tensors on two mlu devices, or an mlu tensor with a non-scalar CPU tensor.
// CPU tensors inside index lists (Tensor?[]) are allowed, as on CUDA.
c10::DeviceIndex op_device(const c10::OperatorHandle& op, const Stack& stack, size_t begin, size_t n) {
  c10::DeviceIndex dev = -1;
  const at::Tensor* cpu_arg = nullptr;
  const at::Tensor* other = nullptr;
  auto note = [&](const at::Tensor& t, bool in_index_list) {
    if (!t.defined()) return;
    auto type = t.device().type();
    if (type == kMLU) {
      if (dev == -1) {
        dev = t.device().index();
      } else if (t.device().index() != dev) {
        mixed_devices("mlu:" + std::to_string(dev), device_str(t), op);
      }
    } else if (type == c10::kCPU) {
      if (t.dim() != 0 && !in_index_list && cpu_arg == nullptr) cpu_arg = &t;
    } else if (other == nullptr) {
      other = &t;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    const IValue& iv = stack[begin + i];
    if (iv.isTensor()) {
      note(iv.toTensor(), false);
    } else if (iv.isTensorList()) {
      for (const at::Tensor& t : iv.toTensorList()) note(t, false);
    } else if (iv.isList()) {
      for (const IValue& e : iv.toListRef()) {
        if (e.isTensor()) note(e.toTensor(), true);
      }
    } else if (iv.isDevice() && iv.toDevice().type() == kMLU && dev == -1) {
      dev = iv.toDevice().has_index() ? iv.toDevice().index() : current_device();
      check_device_index(dev);
    }
  }
  if (dev == -1) dev = current_device();
  if (cpu_arg != nullptr) mixed_devices("mlu:" + std::to_string(dev), device_str(*cpu_arg), op);
  if (other != nullptr) mixed_devices("mlu:" + std::to_string(dev), device_str(*other), op);
  return dev;
}

bool is_optional_generator(const c10::Argument& a) {
  const auto& t = a.type();
  if (t->kind() == c10::TypeKind::GeneratorType) return true;
  return t->kind() == c10::TypeKind::OptionalType &&
         t->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType;
}

using HostFn = void (*)(const c10::OperatorHandle&, Stack*);

void redispatch_cpu(const c10::OperatorHandle& op, Stack* stack) {
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
}

// The generic device kernel: `call` runs the host computation on the rewritten stack.
void run_device_kernel(const c10::OperatorHandle& op, Stack* stack, HostFn call) {
  const auto& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t n = args.size();
  const size_t begin = stack->size() - n;
  HostCall hc;
  hc.device = op_device(op, *stack, begin, n);

  for (size_t i = 0; i < n; ++i) {
    IValue& iv = (*stack)[begin + i];
    const auto* alias = args[i].alias_info();
    bool writes = alias != nullptr && alias->isWrite();
    if (iv.isTensor()) {
      const at::Tensor& t = iv.toTensor();
      if (t.defined() && t.device().type() == kMLU) {
        at::Tensor h = hc.host_view(t);
        if (writes) hc.written.push_back({t, h, h.storage().unsafeGetStorageImpl()->data_ptr().get()});
        iv = IValue(std::move(h));
      }
    } else if (iv.isTensorList()) {
      auto list = iv.toTensorList();
      c10::List<at::Tensor> out;
      out.reserve(list.size());
      for (const at::Tensor& t : list) {
        if (t.defined() && t.device().type() == kMLU) {
          at::Tensor h = hc.host_view(t);
          if (writes) hc.written.push_back({t, h, h.storage().unsafeGetStorageImpl()->data_ptr().get()});
          out.push_back(h);
        } else {
          out.push_back(t);
        }
      }
      iv = IValue(out);
    } else if (iv.isList() && args[i].type()->str() == "Tensor?[]") {
      c10::List<std::optional<at::Tensor>> out;
      for (const IValue& e : iv.toListRef()) {
        if (e.isTensor() && e.toTensor().defined() && e.toTensor().device().type() == kMLU) {
          out.push_back(hc.host_view(e.toTensor()));
        } else if (e.isTensor() && e.toTensor().defined()) {
          out.push_back(e.toTensor());
        } else {
          out.push_back(std::nullopt);
        }
      }
      iv = IValue(out);
    } else if (iv.isDevice() && iv.toDevice().type() == kMLU) {
      iv = IValue(c10::Device(c10::kCPU));
    } else if (iv.isStorage()) {
      c10::Storage s = iv.toStorage();
      if (s.device_type() == kMLU) iv = IValue(hc.host_storage(s));
    } else if (is_optional_generator(args[i])) {
      std::optional<at::Generator> g;
      if (iv.isGenerator()) g = iv.toGenerator();
      iv = IValue(host_engine(g, hc.device));
    }
  }

  {
    // In order on the current queue: earlier queued work finishes first (catch_rt::runInline, spelled out).
    catch_rt::Queue* q = current_queue(hc.device);
    if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
    std::optional<c10::DeviceGuard> guard;  // most calls are on the current device already
    if (current_device() != hc.device) guard.emplace(c10::Device(kMLU, hc.device));
    HostKernelScope scope;
    c10::impl::ExcludeDispatchKeyGuard below(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
    call(op, stack);
    hc.write_back();
  }

  const size_t nret = schema.returns().size();
  const size_t rbegin = stack->size() - nret;
  for (size_t i = 0; i < nret; ++i) {
    IValue& iv = (*stack)[rbegin + i];
    if (iv.isTensor()) {
      iv = IValue(hc.to_device(iv.toTensor()));
    } else if (iv.isTensorList()) {
      c10::List<at::Tensor> out;
      for (const at::Tensor& t : iv.toTensorList()) out.push_back(hc.to_device(t));
      iv = IValue(out);
    }
  }
}

void device_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  run_device_kernel(op, stack, &redispatch_cpu);
}

// ---- typed device kernels for the hottest elementwise ops ------------------------------------------------
// add, sub, mul and div (.Tensor, and their in-place forms) run many times per training step, often on small
// tensors, where the boxed kernel's fixed cost showed (callgrind: a 64-element `a + b` took 1.5x CPU's
// instructions). Much of it was not the kernel: boxing the arguments into an IValue stack copies each at::Tensor,
// and the first copy of a tensor that Python owns takes the GIL (intrusive_ptr's incref_pyobject on the 1 -> 2
// refcount transition; the dispatcher runs with the GIL released), as does the matching release. These kernels take
// their arguments by reference and, in the common case -- `self` on an mlu device, `other` on the same device or a
// 0-dim CPU tensor (a Python number arrives as one) -- run the CPU kernel on host views through the typed redispatch,
// as the generic kernel does through the boxed one: ordered on the current queue, under HostKernelScope (so the
// profilers record the kernel), the result buffer adopted. Everything else takes the generic kernel (same errors).
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
  catch_rt::Queue* q = current_queue(d);
  if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
  std::optional<c10::DeviceGuard> guard;
  if (current_device() != d) guard.emplace(c10::Device(kMLU, d));
  HostKernelScope scope;
  c10::impl::ExcludeDispatchKeyGuard below(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
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
  HostCall hc;
  hc.device = d;
  return hc.to_device(r);
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

// Registers the typed kernels; returns their full names ("aten::add.Tensor").
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

// Ops whose CPU kernel draws from the default CPU generator (no Generator argument).
void implicit_rng_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  run_device_kernel(op, stack, [](const c10::OperatorHandle& o, Stack* s) {
    with_device_rng(current_device(), [&] { redispatch_cpu(o, s); });
  });
}

// The memory format ATen promises for an Overrideable (PrivateUse1) convolution's results:
// at::native::_determine_backend_memory_format(input, weight, ConvBackend::Overrideable), the rule FakeTensor's
// convolution impl applies to mlu tensors (torch/_subclasses/fake_impls.py: conv). The host kernel is CPU's, whose
// oneDNN path returns channels-last results for channels-last inputs; Inductor asserts the fake strides on the real
// results (assert_size_stride), so torch.compile of a channels-last CNN on mlu failed. Results are laid out as
// promised: a no-op unless the CPU kernel chose another layout.
at::MemoryFormat overrideable_conv_format(const Stack& stack, size_t input_pos) {
  const at::Tensor& input = stack[input_pos].toTensor();
  const at::Tensor& weight = stack[input_pos + 1].toTensor();
  return at::native::_determine_backend_memory_format(input, weight, at::native::ConvBackend::Overrideable);
}

void lay_out(IValue& result, at::MemoryFormat format) {
  if (!result.isTensor()) return;
  const at::Tensor& t = result.toTensor();
  if (t.defined() && !t.is_contiguous(format)) result = IValue(t.contiguous(format));
}

// convolution_overrideable(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
// runs aten::convolution (same arguments) on the host views.
void convolution_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  const at::MemoryFormat format = overrideable_conv_format(*stack, stack->size() - 9);
  run_device_kernel(op, stack, [](const c10::OperatorHandle&, Stack* s) {
    static auto conv = c10::Dispatcher::singleton().findSchemaOrThrow("aten::convolution", "");
    conv.callBoxed(s);
  });
  lay_out(stack->back(), format);
}

// convolution_backward_overrideable(grad_output, input, weight, stride, padding, dilation, transposed,
// output_padding, groups, output_mask) -> aten::convolution_backward, which also takes bias_sizes. grad_input and
// grad_weight get the promised layout (FakeTensor lays out both so).
void convolution_backward_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  const at::MemoryFormat format = overrideable_conv_format(*stack, stack->size() - 9);
  run_device_kernel(op, stack, [](const c10::OperatorHandle&, Stack* s) {
    static auto bwd = c10::Dispatcher::singleton().findSchemaOrThrow("aten::convolution_backward", "");
    const size_t begin = s->size() - 10;
    const at::Tensor& weight = (*s)[begin + 2].toTensor();
    bool transposed = (*s)[begin + 6].toBool();
    int64_t groups = (*s)[begin + 8].toInt();
    int64_t channels = transposed ? weight.size(1) * groups : weight.size(0);
    s->insert(s->begin() + static_cast<std::ptrdiff_t>(begin + 3), IValue(std::vector<int64_t>{channels}));
    bwd.callBoxed(s);
  });
  const size_t results = stack->size() - 3;
  lay_out((*stack)[results], format);
  lay_out((*stack)[results + 1], format);
}

// max_pool2d_with_indices and its backward (the functional overloads) run Catch's kernels
// (pool_kernels.cpp: torch_mlu::max_pool2d_with_indices[_backward], same schemas, ATen's values and indices) on the
// host views; they hand every case outside their fast paths to ATen's CPU kernels. ATen's kernel for contiguous
// (NCHW) input is a scalar loop that branches on each comparison, several times slower than Catch's branch-free 2x2
// kernel on the digits CNN's pooling input (64x32x8x8) at 1 and 2 threads.
template <const char* Name>
void catch_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  run_device_kernel(op, stack, [](const c10::OperatorHandle&, Stack* s) {
    static auto kernel = c10::Dispatcher::singleton().findSchemaOrThrow(Name, "");
    kernel.callBoxed(s);
  });
}
constexpr char kCatchMaxPool[] = "torch_mlu::max_pool2d_with_indices";
constexpr char kCatchMaxPoolBackward[] = "torch_mlu::max_pool2d_with_indices_backward";

// ---- empty / copy ----------------------------------------------------------------------
// The device an empty_* call allocates on (the current device when unindexed), after the checks CUDA makes:
// strided layout only, no pin_memory for a device tensor, an existing device index.
c10::Device empty_target_device(std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                std::optional<bool> pin_memory) {
  auto dev = c10::device_or_default(device);
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided, "mlu tensors support only the strided layout");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), "Only dense CPU tensors can be pinned");
  c10::DeviceIndex idx = dev.has_index() ? dev.index() : current_device();
  check_device_index(idx);
  return c10::Device(kMLU, idx);
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  c10::DeviceGuard g(empty_target_device(layout, device, pin_memory));
  return at::detail::empty_generic(size, device_allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  c10::DeviceGuard g(empty_target_device(layout, device, pin_memory));
  return at::detail::empty_strided_generic(size, stride, device_allocator(),
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

bool plain_copy(const at::Tensor& dst, const at::Tensor& src) {
  return dst.dtype() == src.dtype() && dst.sizes() == src.sizes() && dst.is_contiguous() && src.is_contiguous() &&
         !dst.is_conj() && !src.is_conj() && !dst.is_neg() && !src.is_neg();
}

void* data_of(const at::Tensor& t) {
  return static_cast<char*>(t.storage().unsafeGetStorageImpl()->data_ptr().get()) +
         t.storage_offset() * static_cast<int64_t>(t.itemsize());
}

// A synchronous runtime memcpy; a large one (4 MiB and more) moves its bytes with ATen's CPU copy kernel, as a host
// clone() does: parallel over the intra-op threads and vectorized with plain stores. glibc's memmove (rep movsb /
// non-temporal stores) took about twice the copy kernel's time on the fresh pages of a d.cpu() result (perf, 256 MiB,
// 1 thread).
void copy_bytes(void* dst, const void* src, size_t bytes, catch_rt::MemcpyKind kind) {
  constexpr size_t kKernelFrom = size_t{4} << 20;
  if (bytes < kKernelFrom || at::in_parallel_region()) {
    MLU_CHECK(catch_rt::memcpy(dst, src, bytes, kind));
    return;
  }
  MLU_CHECK(catch_rt::memcpyWith(dst, src, bytes, kind, [](void* hd, const void* hs, size_t n) {
    c10::impl::ExcludeDispatchKeyGuard plain(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
    const auto bytes_on_cpu = at::TensorOptions().dtype(at::kByte).device(at::kCPU);
    at::Tensor to = at::from_blob(hd, {static_cast<int64_t>(n)}, bytes_on_cpu);
    to.copy_(at::from_blob(const_cast<void*>(hs), {static_cast<int64_t>(n)}, bytes_on_cpu));
  }));
}

// copy_ for every pair involving mlu (mlu<->mlu, cpu->mlu, mlu->cpu). Plain
// contiguous copies are runtime memcpys (asynchronous on the current queue when
// non_blocking and the host side is pinned); others run the CPU copy kernel on
// the host views.
const at::Tensor& copy_impl(const at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  TORCH_CHECK(self.defined() && src.defined(), "copy_: both tensors must be defined");
  if (self.numel() == 0) return self;
  const bool dst_mlu = self.device().type() == kMLU;
  const bool src_mlu = src.device().type() == kMLU;
  TORCH_CHECK((dst_mlu || self.is_cpu()) && (src_mlu || src.is_cpu()), "copy_ between ", self.device(), " and ",
              src.device(), " is not supported");
  c10::DeviceIndex dev = dst_mlu ? self.device().index() : src.device().index();
  catch_rt::Queue* q = current_queue(dev);
  if (plain_copy(self, src)) {
    size_t bytes = self.nbytes();
    auto kind = dst_mlu && src_mlu ? catch_rt::MemcpyKind::DeviceToDevice
                : dst_mlu          ? catch_rt::MemcpyKind::HostToDevice
                                   : catch_rt::MemcpyKind::DeviceToHost;
    const at::Tensor& host_side = dst_mlu ? src : self;
    if (non_blocking && (kind == catch_rt::MemcpyKind::DeviceToDevice || catch_rt::isPinned(data_of(host_side)))) {
      MLU_CHECK(catch_rt::memcpyAsync(data_of(self), data_of(src), bytes, kind, q));
      if (kind != catch_rt::MemcpyKind::DeviceToDevice) record_host_use(data_of(host_side), q);
    } else {
      if (src_mlu && src.device().index() != dev) catch_rt::queueSync(current_queue(src.device().index()));
      catch_rt::runInline(q, [&] { copy_bytes(data_of(self), data_of(src), bytes, kind); });
    }
    return self;
  }
  HostCall hc;
  hc.device = dev;
  at::Tensor hdst = dst_mlu ? hc.host_view(self) : self;
  at::Tensor hsrc = src_mlu ? hc.host_view(src) : src;
  if (src_mlu && dst_mlu && src.device().index() != dev) catch_rt::queueSync(current_queue(src.device().index()));
  catch_rt::runInline(q, [&] {
    c10::DeviceGuard guard(c10::Device(kMLU, dev));
    HostKernelScope scope;
    c10::impl::ExcludeDispatchKeyGuard below(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
    hdst.copy_(hsrc);
  });
  return self;
}

at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  copy_impl(self, src, non_blocking);
  return self;
}

at::Tensor _copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  copy_impl(dst, self, non_blocking);
  return dst;
}

at::Tensor _copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  copy_impl(dst, self, false);
  return dst;
}

// aten::record_stream(Tensor(a!) self, Stream s) -> (): the storage's block is
// not reused before `s` passed the work queued so far (CUDA's record_stream_cuda;
// the caching allocator waits for every recorded queue when the block is freed).
void record_stream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == kMLU, "record_stream: expected an mlu stream, got ", stream);
  c10::impl::getDeviceGuardImpl(kMLU)->recordDataPtrOnStream(self.storage().data_ptr(), stream);
}

// ---- CPU fallback -----------------------------------------------------------------------
struct FallbackStats {
  std::mutex mu;
  std::map<std::string, int64_t> counts;
};
FallbackStats& fstats() {
  static FallbackStats* s = new FallbackStats();
  return *s;
}

void mlu_cpu_fallback(const c10::OperatorHandle& op, Stack* stack) {
  const auto& name = op.schema().operator_name();
  std::string full = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
  TORCH_CHECK_NOT_IMPLEMENTED(!fallback_strict(), "The operator '", full,
                              "' has no mlu device kernel and CATCH_FALLBACK_STRICT=1 forbids the CPU fallback.");
  const size_t n = op.schema().arguments().size();
  op_device(op, *stack, stack->size() - n, n);
  bool first = false;
  {
    auto& s = fstats();
    std::lock_guard<std::mutex> lk(s.mu);
    first = s.counts[full]++ == 0;
  }
  if (first) {
    TORCH_WARN("The operator '", full,
               "' has no mlu device kernel; it falls back to the CPU (copies in and out). "
               "This warning is shown once per operator; set CATCH_FALLBACK_STRICT=1 to make it an error.");
  }
  at::native::cpu_fallback(op, stack);
}

void fallback_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) { mlu_cpu_fallback(op, stack); }

// ---- the device-kernel list ---------------------------------------------------------
// Base names; every overload of a name that has a CPU kernel and no composite
// kernel (composites already reach these through decomposition) is registered.
const char* const kDeviceOps[] = {
    // memory, views, metadata
    "as_strided", "view", "_reshape_alias", "unfold", "view_as_real", "view_as_complex", "resize_", "set_",
    "_local_scalar_dense", "fill_", "zero_", "clone", "contiguous", "_unsafe_view", "masked_fill_", "where",
    "index", "index_put_", "_index_put_impl_", "index_select", "index_add_", "index_fill_", "index_copy_",
    "gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "masked_select",
    "masked_scatter_", "nonzero", "cat", "stack", "flip", "roll", "tril", "triu", "repeat", "repeat_interleave",
    "constant_pad_nd", "take", "put_", "_unique2", "sort", "topk", "argsort", "kthvalue", "cumsum", "cumprod",
    "arange", "linspace", "logspace", "eye", "_to_copy", "equal", "median", "nanmedian", "_cummax_helper",
    "_cummin_helper", "isin", "complex", "polar", "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
    "replication_pad2d", "_cdist_forward", "_cdist_backward", "_pdist_forward", "renorm", "diag_embed",
    "unique_consecutive", "_unique", "unique_dim", "bincount",
    // elementwise arithmetic and math
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "remainder", "fmod", "pow", "pow_", "neg", "neg_",
    "abs", "abs_", "sign", "sgn", "reciprocal", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "tanh_", "asinh",
    "acosh", "atanh", "floor", "ceil", "round", "trunc", "frac", "clamp", "clamp_", "clamp_min", "clamp_max",
    "clamp_min_", "clamp_max_", "minimum", "maximum", "fmin", "fmax", "lerp", "lerp_", "addcmul", "addcmul_",
    "addcdiv", "addcdiv_", "erf", "erfc", "erfinv", "lgamma", "digamma", "sigmoid", "sigmoid_", "logit",
    "hypot", "copysign", "nan_to_num", "xlogy", "logaddexp", "logaddexp2", "heaviside", "square",
    "floor_divide", "frexp", "i0", "ldexp", "nextafter", "sinc", "deg2rad", "rad2deg", "exp2", "float_power",
    "true_divide", "mvlgamma", "polygamma", "special_entr", "rsub", "linalg_cross",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite", "signbit",
    "_conj_physical", "conj_physical", "_neg_view",
    // reductions
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "aminmax", "std", "var",
    "std_mean", "var_mean", "norm", "linalg_vector_norm", "all", "any", "logsumexp", "count_nonzero",
    "_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
    // linear algebra
    "mm", "addmm", "bmm", "baddbmm", "addmv", "mv", "dot", "vdot", "addbmm", "addr", "_addmm_activation",
    // convolution and pooling
    "max_pool2d_with_indices", "max_pool2d_with_indices_backward", "avg_pool2d", "avg_pool2d_backward",
    "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d",
    "adaptive_max_pool2d_backward", "max_pool3d_with_indices", "avg_pool3d", "_adaptive_avg_pool3d",
    "upsample_nearest2d", "upsample_nearest2d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
    "im2col", "col2im",
    // activations
    "relu", "relu_", "threshold", "threshold_backward", "gelu", "gelu_backward", "silu", "silu_",
    "silu_backward", "elu", "elu_backward", "leaky_relu", "leaky_relu_backward", "hardtanh", "hardtanh_",
    "hardtanh_backward", "hardsigmoid", "hardsigmoid_backward", "hardswish", "hardswish_backward", "softplus",
    "softplus_backward", "mish", "mish_backward", "sigmoid_backward", "tanh_backward", "logit_backward",
    "_prelu_kernel", "_prelu_kernel_backward", "glu", "glu_backward", "log_sigmoid_forward",
    "log_sigmoid_backward",
    // losses
    "nll_loss_forward", "nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward", "mse_loss",
    "mse_loss_backward", "smooth_l1_loss", "smooth_l1_loss_backward", "huber_loss", "huber_loss_backward",
    "binary_cross_entropy", "binary_cross_entropy_backward", "binary_cross_entropy_with_logits",
    // embedding and normalization
    "embedding_dense_backward", "_embedding_bag", "_embedding_bag_backward", "native_layer_norm",
    "native_layer_norm_backward", "native_batch_norm", "native_batch_norm_backward", "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training", "native_group_norm", "native_group_norm_backward",
    "_batch_norm_with_update", "batch_norm_backward", "_fused_rms_norm", "_fused_rms_norm_backward",
    // dropout and random
    "native_dropout", "native_dropout_backward", "bernoulli", "bernoulli_", "uniform_", "normal_", "normal",
    "random_", "exponential_", "geometric_", "log_normal_", "cauchy_", "multinomial", "randperm",
    // optimizers (torch.optim foreach paths) and AMP
    "_foreach_add", "_foreach_add_", "_foreach_sub", "_foreach_sub_", "_foreach_mul", "_foreach_mul_",
    "_foreach_div", "_foreach_div_", "_foreach_addcmul", "_foreach_addcmul_", "_foreach_addcdiv",
    "_foreach_addcdiv_", "_foreach_sqrt", "_foreach_sqrt_", "_foreach_lerp", "_foreach_lerp_", "_foreach_neg",
    "_foreach_neg_", "_foreach_norm", "_foreach_maximum", "_foreach_maximum_", "_foreach_copy_", "_foreach_zero_",
    "_foreach_pow", "_foreach_reciprocal_", "_foreach_sign", "_foreach_abs", "_foreach_exp", "_foreach_clamp_min_",
    "_foreach_clamp_max_", "_fused_sgd_", "_fused_adam_", "_fused_adamw_", "_amp_foreach_non_finite_check_and_unscale_",
    "_amp_update_scale_",
    // more reductions, pooling/upsampling and losses
    "nansum", "trace", "angle", "isposinf", "isneginf", "mode", "_logcumsumexp", "softshrink", "hardshrink",
    "softshrink_backward", "hardshrink_backward", "upsample_nearest1d", "upsample_nearest1d_backward",
    "upsample_nearest3d", "upsample_nearest3d_backward", "_upsample_nearest_exact1d",
    "_upsample_nearest_exact1d_backward", "_upsample_nearest_exact2d", "_upsample_nearest_exact2d_backward",
    "_upsample_nearest_exact3d", "_upsample_nearest_exact3d_backward", "upsample_linear1d",
    "upsample_linear1d_backward", "upsample_bicubic2d", "upsample_bicubic2d_backward", "upsample_trilinear3d",
    "upsample_trilinear3d_backward", "_upsample_bilinear2d_aa", "_upsample_bilinear2d_aa_backward",
    "grid_sampler_2d", "grid_sampler_2d_backward", "grid_sampler_3d", "grid_sampler_3d_backward", "max_unpool2d",
    "max_unpool3d", "embedding_renorm_", "multi_margin_loss", "multi_margin_loss_backward",
    "multilabel_margin_loss_forward", "multilabel_margin_loss_backward", "rrelu_with_noise",
    "fractional_max_pool2d", "fractional_max_pool2d_backward", "fractional_max_pool3d",
    "fractional_max_pool3d_backward", "channel_shuffle", "reflection_pad3d", "replication_pad3d",
    "reflection_pad1d_backward", "reflection_pad2d_backward", "reflection_pad3d_backward",
    "replication_pad1d_backward", "replication_pad2d_backward", "replication_pad3d_backward", "adaptive_max_pool3d",
    "adaptive_max_pool3d_backward", "avg_pool3d_backward", "max_pool3d_with_indices_backward",
    "_adaptive_avg_pool3d_backward", "_ctc_loss", "_ctc_loss_backward", "nonzero_static",
    "_embedding_bag_forward_only", "igamma", "igammac", "index_reduce",
    // linear algebra (LAPACK on the host side of the emulated device) and FFT
    "_linalg_svd", "linalg_qr", "linalg_cholesky_ex", "_linalg_eigh", "linalg_inv_ex", "_linalg_solve_ex",
    "linalg_lu_factor_ex", "linalg_lu_solve", "linalg_lu", "_linalg_det", "_linalg_slogdet", "lu_unpack",
    "linalg_ldl_factor_ex", "linalg_ldl_solve", "cholesky", "cholesky_inverse", "_cholesky_solve_helper",
    "triangular_solve", "linalg_solve_triangular", "geqrf", "ormqr", "linalg_householder_product", "linalg_lstsq",
    "linalg_eig", "_linalg_eigvals", "linalg_matrix_exp", "_fft_r2c", "_fft_c2c", "_fft_c2r",
    // fused attention: CPU's flash kernels (chosen by mlu_fused_sdp_choice below)
    "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention_for_cpu_backward",
};

bool fallback_strict_env() {
  const char* v = std::getenv("CATCH_FALLBACK_STRICT");
  return v != nullptr && std::string(v) == "1";
}
std::atomic<bool> g_strict{fallback_strict_env()};

std::vector<std::string>& registered_ops() {
  static std::vector<std::string> v;
  return v;
}

void register_device_ops(torch::Library& lib) {
  std::set<std::string> wanted(std::begin(kDeviceOps), std::end(kDeviceOps));
  const std::set<std::string> typed = register_typed_kernels(lib);
  const std::set<std::string> manual = {"copy_", "_copy_from", "_copy_from_and_resize", "empty",
                                        "empty_strided", "convolution_overrideable",
                                        "convolution_backward_overrideable"};
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    std::string base = name.name.substr(6);
    if (!wanted.count(base) || manual.count(base)) continue;
    auto op = c10::Dispatcher::singleton().findOp(name);
    if (!op.has_value() || !op->hasSchema()) continue;
    if (!op->hasKernelForDispatchKey(c10::DispatchKey::CPU)) continue;
    // Composite-implicit ops decompose above the backend; a backend kernel
    // would bypass their autograd formula.
    if (op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) continue;
    std::string full = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    if (typed.count(full)) {
      // registered above
    } else if (full == "aten::max_pool2d_with_indices") {
      lib.impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&catch_kernel<kCatchMaxPool>>());
    } else if (full == "aten::max_pool2d_with_indices_backward") {
      lib.impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&catch_kernel<kCatchMaxPoolBackward>>());
    } else if (base == "native_dropout") {
      lib.impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&implicit_rng_kernel>());
    } else {
      lib.impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&device_kernel>());
    }
    registered_ops().push_back(full);
  }
}

}  // namespace

std::map<std::string, int64_t> fallback_report() {
  auto& s = fstats();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.counts;
}

void reset_fallback_report() {
  auto& s = fstats();
  std::lock_guard<std::mutex> lk(s.mu);
  s.counts.clear();
}

bool fallback_strict() { return g_strict.load(); }

void set_fallback_strict(bool on) { g_strict.store(on); }

const std::vector<std::string>& device_op_names() { return registered_ops(); }

int64_t typed_kernel_calls() { return tls_typed_calls; }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("copy_", copy_);
  m.impl("_copy_from", _copy_from);
  m.impl("_copy_from_and_resize", _copy_from_and_resize);
  m.impl("record_stream", record_stream);
  m.impl("convolution_overrideable", torch::CppFunction::makeFromBoxedFunction<&convolution_kernel>());
  m.impl("convolution_backward_overrideable",
         torch::CppFunction::makeFromBoxedFunction<&convolution_backward_kernel>());
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback_kernel>()); }

// Catch's attention kernels (attention_kernels.cpp), which compiled training graphs call outside Inductor too: a
// fusion group's debug modes (FUSE_GROUP_DEBUG_MODE=eager, layerwise) run its graph as eager mlu kernels. Like
// ATen's ops above: the CPU kernel on host views, in order on the current queue, without the fallback's copies.
TORCH_LIBRARY_IMPL(torch_mlu, PrivateUse1, m) {
  for (const char* name :
       {"attention", "attention_backward", "attention_with_probs", "attention_backward_with_probs"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&device_kernel>());
  }
}

// scaled_dot_product_attention asks _fused_sdp_choice_stub which kernel to use for the query's device type
// (aten/src/ATen/native/transformers/attention.cpp); without a PrivateUse1 entry mlu takes the unfused math path.
// mlu answers with CPU's rules (_fused_sdp_choice_cpp: flash unless dropout, dtype or shapes rule it out), so a
// flash choice runs _scaled_dot_product_flash_attention_for_cpu -- a device kernel above -- exactly as CPU does.
int64_t mlu_fused_sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                             const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                             std::optional<double> scale, bool enable_gqa) {
  return at::native::_fused_sdp_choice_cpp(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
}

// The generic list is registered once the whole aten library is loaded (from
// torch_mlu._C's init), so every overload name is known.
void register_device_kernels() {
  static std::unique_ptr<torch::Library> lib;
  if (lib) return;
  lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                                         __LINE__);
  register_device_ops(*lib);
}

}  // namespace torch_mlu

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_mlu::mlu_fused_sdp_choice)
}  // namespace at::native
