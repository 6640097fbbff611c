// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The device guard of PrivateUse1 ("mlu"), registered with C10_REGISTER_GUARD_IMPL: devices, runtime queues as
// c10::Stream and notifiers as c10 events.
#pragma once

#include <c10/core/DeviceCapability.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace torch_mlu {

struct MLUGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override;
  c10::Device exchangeDevice(c10::Device d) const override;
  c10::Device getDevice() const override;
  void setDevice(c10::Device d) const override;
  void uncheckedSetDevice(c10::Device d) const noexcept override;
  c10::Stream getStream(c10::Device d) const override;
  c10::Stream getDefaultStream(c10::Device d) const override;
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool isHighPriority) const override;
  c10::Stream getNewStream(c10::Device d, int priority) const override;
  c10::Stream exchangeStream(c10::Stream s) const override;
  c10::DeviceIndex deviceCount() const noexcept override;
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override;
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override;
  void block(void* event, const c10::Stream& stream) const override;
  bool queryEvent(void* event) const override;
  bool queryStream(const c10::Stream& s) const override;
  void synchronizeStream(const c10::Stream& s) const override;
  void synchronizeEvent(void* event) const override;
  void synchronizeDevice(const c10::DeviceIndex d) const override;
  void recordDataPtrOnStream(const c10::DataPtr& p, const c10::Stream& s) const override;
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override;
  // torch.accelerator.get_device_capability("mlu"): the dtypes mlu tensors can hold and ATen's CPU kernels (which
  // the emulated device runs) compute with -- the standard integer, floating and complex types, bool, the float8
  // types with CPU conversions (as XPU lists them) and the quantized types (torch_openreg claims every type of
  // c10::DeviceCapability; the fnuz/e8m0 float8, float4, bits and sub-byte integer types are left out).
  c10::DeviceCapability getDeviceCapability(c10::Device d) const override;
};

}  // namespace torch_mlu
