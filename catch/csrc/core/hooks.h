// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The PrivateUse1 hooks (at::PrivateUse1HooksInterface: pinned memory, generators, resizePrivateUse1Bytes),
// registered at load time, and the device's lazy initialization.
//
// Initialization is lazy, as CUDA's: at::globalContext().lazyInitDevice(PrivateUse1) runs MLUHooks::init() once, at
// the first use of the device (torch.mlu._lazy_init through torch_mlu._C._init, the mlu empty kernels, the default
// generators through at::Context). init() installs the CPU-allocator shim of host-kernel mode and runs the steps the
// layers above core registered with DeviceInitStep (ops/: the registration of the generic device kernels). What
// dispatch needs before any mlu tensor exists is registered statically, at load time.
#pragma once

#include <ATen/detail/PrivateUse1HooksInterface.h>

namespace torch_mlu {

struct MLUHooks final : public at::PrivateUse1HooksInterface {
  void init() const override;
  bool isBuilt() const override;
  bool isAvailable() const override;
  bool hasPrimaryContext(c10::DeviceIndex d) const override;
  c10::DeviceIndex deviceCount() const override;
  void setCurrentDevice(c10::DeviceIndex d) const override;
  c10::DeviceIndex getCurrentDevice() const override;
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override;
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override;
  bool isPinnedPtr(const void* data) const override;
  at::Allocator* getPinnedMemoryAllocator() const override;
  at::Device getDeviceFromPtr(void* data) const override;
  const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override;
  at::Generator getNewGenerator(c10::DeviceIndex d) const override;
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override;
};

// A step of the device's initialization: constructed at load time (a static object), `step` runs once in
// MLUHooks::init(), in construction order.
struct DeviceInitStep {
  explicit DeviceInitStep(void (*step)());
};

// Initializes the device if it was not yet (at::globalContext().lazyInitDevice(PrivateUse1)).
void lazy_init_device();
// True once MLUHooks::init() ran in this process.
bool device_initialized();

}  // namespace torch_mlu
