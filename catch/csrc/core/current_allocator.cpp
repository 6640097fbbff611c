// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "current_allocator.h"

#include <atomic>
#include <mutex>
#include <utility>

#include "device.h"
#include "device_allocator.h"

namespace torch_mlu {
namespace {

std::mutex g_mu;
// Owner of the allocator in use (the caching allocator is never destroyed: its shared_ptr has a no-op deleter).
std::shared_ptr<DeviceBlockAllocator>& owner() {
  static auto* a = new std::shared_ptr<DeviceBlockAllocator>(caching_allocator(), [](DeviceBlockAllocator*) {});
  return *a;
}
std::atomic<DeviceBlockAllocator*> g_current{nullptr};

}  // namespace

DeviceBlockAllocator* device_allocator() {
  DeviceBlockAllocator* a = g_current.load(std::memory_order_acquire);
  return a != nullptr ? a : caching_allocator();
}

std::shared_ptr<DeviceBlockAllocator> current_allocator() {
  std::lock_guard<std::mutex> lk(g_mu);
  return owner();
}

void change_current_allocator(std::shared_ptr<DeviceBlockAllocator> a) {
  TORCH_CHECK(a != nullptr, "change_current_allocator: allocator is None");
  std::lock_guard<std::mutex> lk(g_mu);
  // torch::cuda::CUDAPluggableAllocator::changeCurrentAllocator's condition and message.
  TORCH_CHECK(!device_allocator()->initialized(), "Can't swap an already initialized allocator");
  c10::SetAllocator(kMLU, a.get());
  g_current.store(a.get(), std::memory_order_release);
  owner() = std::move(a);
}

void delete_device_ptr(void* ctx) {
  if (ctx == nullptr) return;
  // A pointer the allocator never handed out (or already took back) is a bug above us; report it (deleters cannot
  // throw) instead of corrupting the allocator's state.
  if (!device_allocator()->free_block(ctx)) {
    TORCH_WARN("MLU error: free of an unknown or already freed device pointer ", ctx, " ignored");
  }
}

bool is_allocator_block(const c10::DataPtr& p) { return p.get_deleter() == &delete_device_ptr; }

// REGISTER_ALLOCATOR(PrivateUse1) equivalent, done at load time.
namespace {
struct Registrar {
  Registrar() { c10::SetAllocator(kMLU, caching_allocator()); }
};
Registrar g_registrar;
}  // namespace

}  // namespace torch_mlu
