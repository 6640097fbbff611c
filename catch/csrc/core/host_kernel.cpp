// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "host_kernel.h"

#include <c10/core/CPUAllocator.h>

#include <array>
#include <atomic>
#include <chrono>
#include <utility>

#include "../runtime/device.h"
#include "../runtime/memory.h"
#include "current_allocator.h"
#include "device.h"
#include "device_allocator.h"

namespace torch_mlu {
namespace {

constexpr int kMaxDevices = MLUCachingAllocator::kMaxDevices;

// ---- host-kernel allocation mode --------------------------------------------------
thread_local bool tls_host_kernel = false;
c10::Allocator* g_cpu_original = nullptr;

// Raw deleter of the shim (raw_allocate/raw_deallocate pairs): a host address,
// either a host view of a device block or memory of the original CPU allocator.
void delete_host_view(void* host) {
  if (host == nullptr) return;
  for (int d = 0; d < catch_rt::deviceCount(); ++d) {
    void* dptr = catch_rt::deviceAddress(host, d);
    if (device_allocator()->free_block(dptr)) return;
  }
  g_cpu_original->raw_deleter()(host);
}

// The deleter of the DataPtrs the shim hands out in host-kernel mode on device D: it names the device, so
// adopt_host_block recognizes a block of its device without a lookup, and freeing needs no search over devices.
template <int D>
void delete_host_view_on(void* host) {
  if (host == nullptr) return;
  if (!device_allocator()->free_block(catch_rt::deviceAddress(host, D))) delete_host_view(host);
}

template <int... D>
constexpr std::array<c10::DeleterFnPtr, sizeof...(D)> host_view_deleters(std::integer_sequence<int, D...>) {
  return {&delete_host_view_on<D>...};
}
constexpr auto kHostViewDeleters = host_view_deleters(std::make_integer_sequence<int, kMaxDevices>{});

class CPUShim final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    if (!tls_host_kernel) return g_cpu_original->allocate(n);
    int dev = current_device();
    void* dptr = device_allocator()->alloc_block(dev, n);
    void* host = dptr == nullptr ? nullptr : catch_rt::mapHostUnchecked(dptr);
    // context == data: CPU code may pair raw_allocate with raw_deleter.
    return {host, host, kHostViewDeleters[dev], c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &delete_host_view; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    g_cpu_original->copy_data(dest, src, count);
  }
};

// Device busy time (torch.mlu.utilization): nanoseconds spent in outermost host-kernel scopes, per device.
std::atomic<int64_t> g_busy_ns[kMaxDevices];
thread_local std::chrono::steady_clock::time_point tls_kernel_start;

std::atomic<KernelObserver> g_kernel_observer{nullptr};

}  // namespace

void set_kernel_observer(KernelObserver observer) { g_kernel_observer.store(observer, std::memory_order_release); }

HostKernelScope::HostKernelScope() : prev_(tls_host_kernel) {
  tls_host_kernel = true;
  if (!prev_) tls_kernel_start = std::chrono::steady_clock::now();
}
HostKernelScope::~HostKernelScope() {
  tls_host_kernel = prev_;
  if (!prev_) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                   tls_kernel_start).count();
    const c10::DeviceIndex d = current_device();
    g_busy_ns[d].fetch_add(ns, std::memory_order_relaxed);
    if (KernelObserver obs = g_kernel_observer.load(std::memory_order_acquire)) obs(d, ns);
  }
}

int64_t device_busy_ns(c10::DeviceIndex device) {
  check_device_index(device);
  return g_busy_ns[device].load(std::memory_order_relaxed);
}

bool adopt_host_block(c10::DataPtr& p, c10::DeviceIndex device) {
  if (p.get() == nullptr || device < 0 || device >= kMaxDevices) return false;
  c10::DeleterFnPtr deleter = p.get_deleter();
  void* dptr = catch_rt::deviceAddress(p.get(), device);
  if (deleter != kHostViewDeleters[device]) {
    // A raw_allocate'd block wrapped again with the shim's raw deleter: ask the allocator.
    if (deleter != &delete_host_view || !device_allocator()->owns(dptr)) return false;  // not ours / another device
  }
  bool released = p.compare_exchange_deleter(deleter, &c10::detail::deleteNothing);
  TORCH_INTERNAL_ASSERT(released);
  p = c10::DataPtr(dptr, dptr, &delete_device_ptr, c10::Device(kMLU, device));
  return true;
}

void install_cpu_allocator_shim() {
  static bool done = false;
  if (done) return;
  done = true;
  g_cpu_original = c10::GetCPUAllocator();
  static CPUShim* shim = new CPUShim();
  c10::SetCPUAllocator(shim, /*priority=*/100);
}

}  // namespace torch_mlu
