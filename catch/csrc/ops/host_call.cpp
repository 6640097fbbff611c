// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "host_call.h"

#include <ATen/quantized/QTensorImpl.h>
#include <ATen/quantized/Quantizer.h>
#include <c10/core/CPUAllocator.h>

#include "../core/device.h"
#include "../core/current_allocator.h"
#include "../core/stream.h"
#include "../runtime/copy.h"
#include "../runtime/memory.h"
#include "../runtime/queue.h"

namespace torch_mlu {
namespace {

constexpr auto kQuantizedMLU = c10::DispatchKey::QuantizedPrivateUse1;

}  // namespace

void* host_address(const c10::StorageImpl& ds) {
  const c10::DataPtr& dp = ds.data_ptr();
  if (is_allocator_block(dp)) return catch_rt::mapHostUnchecked(dp.get());  // a live block of ours: no lookup
  void* host = nullptr;
  MLU_CHECK(catch_rt::mapHost(dp.get(), ds.nbytes(), &host));
  return host;
}

c10::Storage map_storage(const c10::StorageImpl& ds) {
  return c10::Storage(c10::Storage::use_byte_size_t(), ds.nbytes(),
                      c10::DataPtr(host_address(ds), c10::Device(c10::kCPU)), c10::GetCPUAllocator(),
                      ds.resizable());
}

at::Tensor host_alias(const at::Tensor& t, c10::Storage hs) {
  c10::intrusive_ptr<c10::TensorImpl> impl;
  if (t.is_quantized()) {
    auto q = rehome_quantizer(at::get_qtensorimpl(t)->quantizer(), [](const at::Tensor& x) {
      return x.defined() && x.device().type() == kMLU ? host_alias(x, map_storage(*x.storage().unsafeGetStorageImpl()))
                                                      : x;
    });
    impl = c10::make_intrusive<at::QTensorImpl>(std::move(hs), c10::DispatchKeySet(c10::DispatchKey::QuantizedCPU),
                                                t.dtype(), std::move(q));
  } else {
    impl = c10::make_intrusive<c10::TensorImpl>(std::move(hs), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  }
  impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  impl->_set_conj(t.is_conj());
  impl->_set_neg(t.is_neg());
  return at::Tensor(std::move(impl));
}

c10::DataPtr to_device_block(c10::DataPtr hp, size_t nbytes, c10::DeviceIndex device) {
  if (adopt_host_block(hp, device)) return hp;
  // Not device memory (e.g. a CPU tensor argument handed back): copy, leave the host buffer alone.
  c10::DataPtr dp = device_allocator()->allocate(nbytes);
  if (nbytes > 0) MLU_CHECK(catch_rt::memcpy(dp.get(), hp.get(), nbytes, catch_rt::MemcpyKind::HostToDevice));
  return dp;
}

std::optional<c10::Storage> adopt_storage(c10::StorageImpl* hs, c10::DeviceIndex device) {
  size_t nbytes = hs->nbytes();
  c10::DataPtr& hp = hs->_mutable_data_ptr_no_checks();
  if (!adopt_host_block(hp, device)) return std::nullopt;
  c10::Storage ds(c10::Storage::use_byte_size_t(), nbytes, std::move(hp), device_allocator(), true);
  hs->set_data_ptr_noswap(c10::DataPtr(nullptr, c10::Device(c10::kCPU)));
  hs->set_nbytes(0);
  return ds;
}

at::Tensor device_alias(const at::Tensor& t, c10::Storage ds) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(ds), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                   t.dtype());
  impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  impl->_set_conj(t.is_conj());
  impl->_set_neg(t.is_neg());
  return at::Tensor(std::move(impl));
}

HostKernelRun::QueueOrder::QueueOrder(c10::DeviceIndex device) {
  catch_rt::Queue* q = current_queue(device);
  if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
}

HostKernelRun::HostKernelRun(c10::DeviceIndex device)
    : order_(device),
      guard_(current_device() != device ? std::optional<c10::Device>(c10::Device(kMLU, device)) : std::nullopt),
      below_(c10::autograd_dispatch_keyset_with_ADInplaceOrView) {}

c10::Storage HostCall::host_storage(const c10::Storage& ds) {
  for (auto& s : storages_) {
    if (s.device.unsafeGetStorageImpl() == ds.unsafeGetStorageImpl()) {
      return c10::Storage(c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(s.host));
    }
  }
  c10::Storage hs = map_storage(*ds.unsafeGetStorageImpl());
  storages_.push_back({hs.unsafeGetStorageImpl(), ds});
  return hs;
}

at::Tensor HostCall::host_view(const at::Tensor& t) {
  for (auto& w : wrapped_) {
    if (w.second.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
      return at::Tensor(c10::intrusive_ptr<c10::TensorImpl>::reclaim_copy(w.first));
    }
  }
  at::Tensor h = host_alias(t, host_storage(t.storage()));
  wrapped_.emplace_back(h.unsafeGetTensorImpl(), t);
  return h;
}

void HostCall::note_written(const at::Tensor& t, const at::Tensor& h) {
  written_.push_back({t, h, h.storage().unsafeGetStorageImpl()->data_ptr().get()});
}

c10::Storage HostCall::device_storage_for(c10::StorageImpl* hs) {
  for (auto& s : storages_) {
    if (s.host == hs) return s.device;
  }
  // A buffer the kernel allocated: adopt it (no copy) or, if it was not allocated in host-kernel mode, copy it to
  // the device.
  size_t nbytes = hs->nbytes();
  c10::DataPtr& hp = hs->_mutable_data_ptr_no_checks();
  c10::Storage ds;
  if (adopt_host_block(hp, device_)) {
    // hp (the storage's own DataPtr) is now the device DataPtr: the kernel's fresh storage becomes the mlu storage
    // itself, without a second StorageImpl.
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
  storages_.push_back({hs, ds});
  return ds;
}

at::Tensor HostCall::to_device(const at::Tensor& r) {
  if (!r.defined() || r.device().type() != c10::kCPU) return r;
  for (auto& w : wrapped_) {
    if (w.first == r.unsafeGetTensorImpl()) return w.second;
  }
  c10::Storage ds = device_storage_for(r.storage().unsafeGetStorageImpl());
  if (!r.is_quantized()) return device_alias(r, std::move(ds));
  const c10::Device dev(kMLU, device_);
  auto q = rehome_quantizer(at::get_qtensorimpl(r)->quantizer(), [&](const at::Tensor& x) { return x.to(dev); });
  auto impl = c10::make_intrusive<at::QTensorImpl>(std::move(ds), c10::DispatchKeySet(kQuantizedMLU), r.dtype(),
                                                   std::move(q));
  impl->set_sizes_and_strides(r.sizes(), r.strides(), r.storage_offset());
  return at::Tensor(std::move(impl));
}

void HostCall::write_back() {
  for (auto& w : written_) {
    auto* himpl = w.host.unsafeGetTensorImpl();
    auto* oimpl = w.original.unsafeGetTensorImpl();
    c10::StorageImpl* hs = himpl->storage().unsafeGetStorageImpl();
    bool same_storage = false;
    for (auto& s : storages_) {
      if (s.host == hs && s.device.unsafeGetStorageImpl() == oimpl->storage().unsafeGetStorageImpl()) {
        same_storage = true;
      }
    }
    if (same_storage && hs->data_ptr().get() != w.host_ptr) {
      // The kernel resized the storage: move the new buffer into the device storage.
      size_t nbytes = hs->nbytes();
      c10::DataPtr p = to_device_block(hs->set_data_ptr(c10::DataPtr(w.host_ptr, c10::Device(c10::kCPU))), nbytes,
                                       device_);
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

}  // namespace torch_mlu
