// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "copy.h"

#include <ATen/EmptyTensor.h>
#include <ATen/Parallel.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "../core/device.h"
#include "../core/current_allocator.h"
#include "../core/hooks.h"
#include "../core/host_allocator.h"
#include "../core/stream.h"
#include "../runtime/copy.h"
#include "../runtime/memory.h"
#include "../runtime/queue.h"
#include "host_call.h"

namespace torch_mlu {
namespace {

// The device an empty_* call allocates on, after CUDA's checks; initializes the device first.
c10::Device empty_target_device(std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                std::optional<bool> pin_memory) {
  lazy_init_device();
  auto dev = c10::device_or_default(device);
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided, "mlu tensors support only the strided layout");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), "Only dense CPU tensors can be pinned");
  c10::DeviceIndex idx = dev.has_index() ? dev.index() : current_device();
  check_device_index(idx);
  return c10::Device(kMLU, idx);
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

// copy_ from `src` into `self` (copy.h).
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
  HostCall hc(dev);
  at::Tensor hdst = dst_mlu ? hc.host_view(self) : self;
  at::Tensor hsrc = src_mlu ? hc.host_view(src) : src;
  if (src_mlu && dst_mlu && src.device().index() != dev) catch_rt::queueSync(current_queue(src.device().index()));
  hc.run([&] { hdst.copy_(hsrc); });
  return self;
}

}  // namespace

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

void record_stream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == kMLU, "record_stream: expected an mlu stream, got ", stream);
  c10::impl::getDeviceGuardImpl(kMLU)->recordDataPtrOnStream(self.storage().data_ptr(), stream);
}

}  // namespace torch_mlu
