// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Host call: the one place that runs an ATen CPU kernel on device memory.
//
// Every mlu tensor argument becomes a CPU tensor over the runtime's host view of its storage (no copy; a quantized
// tensor a QuantizedCPU tensor with its quantizer), the CPU kernel runs in order on the current queue (after the
// queue's earlier asynchronous work), on the op's device, under HostKernelScope (so buffers the kernel allocates are
// device memory) and below autograd; afterwards resizes and set_ done on written arguments are mirrored onto the
// mlu tensors, and results become mlu tensors: the argument itself for in-place/out ops, a view of the argument's
// storage for view ops, the adopted device buffer for new tensors.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/quantized/Quantizer.h>
#include <c10/core/Device.h>
#include <c10/core/Storage.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/SmallVector.h>

#include <optional>
#include <utility>

#include "../core/host_kernel.h"

namespace torch_mlu {

// ---- host views of device memory ----
// The host address of device storage `ds`'s bytes (validated by the runtime unless `ds` holds a live block of the
// caching allocator).
void* host_address(const c10::StorageImpl& ds);
// A CPU storage over the host view of device storage `ds` (same bytes, no copy, not owning).
c10::Storage map_storage(const c10::StorageImpl& ds);
// A CPU tensor over host storage `hs` with the sizes, strides, offset, dtype and conj/neg bits of `t`; for a
// quantized `t` a QuantizedCPU tensor whose quantizer's per-channel scales and zero points, when on mlu, are host
// views too. The caller keeps the device storage alive while it uses the result.
at::Tensor host_alias(const at::Tensor& t, c10::Storage hs);

// ---- quantizers of quantized tensors ----
inline bool per_channel(c10::QScheme s) {
  return s == c10::kPerChannelAffine || s == c10::kPerChannelSymmetric || s == c10::kPerChannelAffineFloatQParams;
}
// The quantizer `q` with its per-channel scales and zero points moved by `move` (to host views, or to a device);
// any other quantizer as it is.
template <typename Move>
at::QuantizerPtr rehome_quantizer(const at::QuantizerPtr& q, Move&& move) {
  if (!q || !per_channel(q->qscheme())) return q;
  auto* pc = static_cast<at::PerChannelAffineQuantizer*>(q.get());
  return at::make_per_channel_affine_quantizer(move(pc->scales()), move(pc->zero_points()), pc->axis(),
                                               q->scalar_type());
}

// ---- host results as device memory ----
// Host storage `hs`, if its block was allocated in host-kernel mode on `device`, as mlu storage owning that memory
// (`hs` is left empty); std::nullopt for any other storage.
std::optional<c10::Storage> adopt_storage(c10::StorageImpl* hs, c10::DeviceIndex device);
// An mlu tensor over device storage `ds` with the sizes, strides, offset, dtype and conj/neg bits of `t` (the
// mirror of host_alias for plain tensors).
at::Tensor device_alias(const at::Tensor& t, c10::Storage ds);
// A host block a CPU kernel allocated (under HostKernelScope) as a device DataPtr of `device`: adopted without a
// copy when it is one of ours, else copied into a fresh device block of `nbytes` bytes.
c10::DataPtr to_device_block(c10::DataPtr hp, size_t nbytes, c10::DeviceIndex device);

// The state of one call of a CPU kernel on device memory.
class HostCall {
 public:
  explicit HostCall(c10::DeviceIndex device) : device_(device) {}

  c10::DeviceIndex device() const { return device_; }
  // The host view of mlu tensor `t`: the same tensor twice (x * x, a.add_(a)) gets one host view, as CPU sees one
  // tensor, and views of one storage share one host storage (the CPU kernel's alias and overlap checks see what
  // they see on CPU tensors).
  at::Tensor host_view(const at::Tensor& t);
  // The host storage of mlu storage `ds` (one per device storage).
  c10::Storage host_storage(const c10::Storage& ds);
  // Marks host view `h` of mlu tensor `t` as written by the kernel (write_back mirrors resizes and set_).
  void note_written(const at::Tensor& t, const at::Tensor& h);
  // Runs `kernel` in order on the current queue of the call's device, on that device, under HostKernelScope, below
  // autograd; then write_back().
  template <class Kernel>
  void run(Kernel&& kernel);
  // A CPU result of the kernel as an mlu tensor (see the file comment); other devices and undefined tensors are
  // returned as they are. A quantized result's CPU qparams move to the device.
  at::Tensor to_device(const at::Tensor& r);

 private:
  struct StorageMap {
    c10::StorageImpl* host;
    c10::Storage device;
  };
  struct Written {
    at::Tensor original;  // the mlu tensor
    at::Tensor host;      // its host view handed to the CPU kernel
    void* host_ptr;       // host view's data pointer before the kernel ran
  };
  void write_back();
  c10::Storage device_storage_for(c10::StorageImpl* hs);

  c10::DeviceIndex device_;
  c10::SmallVector<StorageMap, 4> storages_;
  c10::SmallVector<std::pair<c10::TensorImpl*, at::Tensor>, 4> wrapped_;  // host view impl -> original
  c10::SmallVector<Written, 2> written_;
};

// The scope a CPU kernel runs in on device memory, also for callers that make their own host views (the typed fast
// paths, copies): the current queue of `device` drained (earlier queued work finishes first), `device` current,
// HostKernelScope, autograd excluded.
class HostKernelRun {
 public:
  explicit HostKernelRun(c10::DeviceIndex device);
  HostKernelRun(const HostKernelRun&) = delete;
  HostKernelRun& operator=(const HostKernelRun&) = delete;

 private:
  struct QueueOrder {
    explicit QueueOrder(c10::DeviceIndex device);
  };
  QueueOrder order_;
  c10::OptionalDeviceGuard guard_;  // most calls are on the current device already
  HostKernelScope scope_;
  c10::impl::ExcludeDispatchKeyGuard below_;
};

template <class Kernel>
void HostCall::run(Kernel&& kernel) {
  HostKernelRun scope(device_);
  kernel();
  write_back();
}

}  // namespace torch_mlu
