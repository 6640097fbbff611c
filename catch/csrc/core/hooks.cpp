// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "hooks.h"

#include <ATen/Context.h>
#include <c10/core/Storage.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "../runtime/copy.h"
#include "../runtime/memory.h"
#include "device.h"
#include "current_allocator.h"
#include "generator.h"
#include "host_allocator.h"
#include "host_kernel.h"

namespace torch_mlu {
namespace {

std::vector<void (*)()>& init_steps() {
  static std::vector<void (*)()>* steps = new std::vector<void (*)()>();
  return *steps;
}

std::atomic<bool> g_initialized{false};

}  // namespace

DeviceInitStep::DeviceInitStep(void (*step)()) { init_steps().push_back(step); }

void MLUHooks::init() const {
  // Once (a function-local static, not std::call_once: that binds pthread_once at GLIBC_2.34, above the wheel's
  // manylinux_2_28 promise; test_fixes_symbols.py).
  static const bool done = [] {
    install_cpu_allocator_shim();
    for (auto* step : init_steps()) step();
    g_initialized.store(true, std::memory_order_release);
    return true;
  }();
  (void)done;
}

void lazy_init_device() {
  if (!g_initialized.load(std::memory_order_acquire)) at::globalContext().lazyInitDevice(kMLU);
}

bool device_initialized() { return g_initialized.load(std::memory_order_acquire); }

bool MLUHooks::isBuilt() const { return true; }

bool MLUHooks::isAvailable() const { return device_count() > 0; }

bool MLUHooks::hasPrimaryContext(c10::DeviceIndex d) const { return d >= 0 && d < device_count(); }

c10::DeviceIndex MLUHooks::deviceCount() const { return device_count(); }

void MLUHooks::setCurrentDevice(c10::DeviceIndex d) const { set_device(d); }

c10::DeviceIndex MLUHooks::getCurrentDevice() const { return current_device(); }

c10::DeviceIndex MLUHooks::exchangeDevice(c10::DeviceIndex d) const {
  auto old = current_device();
  set_device(d);
  return old;
}

c10::DeviceIndex MLUHooks::maybeExchangeDevice(c10::DeviceIndex d) const {
  if (d < 0 || d >= device_count()) return current_device();
  return exchangeDevice(d);
}

bool MLUHooks::isPinnedPtr(const void* data) const { return catch_rt::isPinned(data); }

at::Allocator* MLUHooks::getPinnedMemoryAllocator() const { return host_allocator(); }

at::Device MLUHooks::getDeviceFromPtr(void* data) const {
  catch_rt::PointerAttributes a;
  MLU_CHECK(catch_rt::pointerGetAttributes(data, &a));
  TORCH_CHECK(a.type == catch_rt::MemoryType::Device, "MLU error: pointer ", data, " is not mlu device memory");
  return {kMLU, static_cast<c10::DeviceIndex>(a.device)};
}

const at::Generator& MLUHooks::getDefaultGenerator(c10::DeviceIndex d) const { return default_generator(d); }

at::Generator MLUHooks::getNewGenerator(c10::DeviceIndex d) const {
  return at::make_generator<MLUGeneratorImpl>(d < 0 ? current_device() : d);
}

void MLUHooks::resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const {
  auto* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
  size_t old = impl->nbytes();
  c10::DataPtr fresh = device_allocator()->allocate(newsize);
  size_t keep = std::min(old, newsize);
  if (keep > 0) {
    MLU_CHECK(catch_rt::memcpy(fresh.get(), impl->data_ptr().get(), keep, catch_rt::MemcpyKind::DeviceToDevice));
  }
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(newsize);
}

namespace {
struct Registrar {
  Registrar() {
    static MLUHooks* hooks = new MLUHooks();
    at::RegisterPrivateUse1HooksInterface(hooks);
  }
};
Registrar g_registrar;
}  // namespace

}  // namespace torch_mlu
