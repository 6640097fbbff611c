// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "pluggable_allocator.h"

#include "../runtime/copy.h"
#include "../runtime/device.h"
#include "../runtime/memory.h"
#include "../runtime/queue.h"
#include "current_allocator.h"
#include "device.h"
#include "stream.h"

namespace torch_mlu {
namespace {

[[noreturn]] void unsupported(const char* what) {
  TORCH_CHECK(false, "MLUPluggableAllocator does not yet support ", what,
              ". If you need it, please file an issue describing your use case.");
}

}  // namespace

MLUPluggableAllocator::MLUPluggableAllocator(AllocFn alloc_fn, FreeFn free_fn)
    : alloc_fn_(alloc_fn), free_fn_(free_fn) {}

c10::DataPtr MLUPluggableAllocator::allocate(std::size_t n) {
  int dev = current_device();
  void* p = alloc_block(dev, n);
  return {p, p, &delete_device_ptr, c10::Device(kMLU, static_cast<c10::DeviceIndex>(dev))};
}

c10::DeleterFnPtr MLUPluggableAllocator::raw_deleter() const { return &delete_device_ptr; }

void MLUPluggableAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  MLU_CHECK(catch_rt::memcpy(dest, src, count, catch_rt::MemcpyKind::DeviceToDevice));
}

// CUDAPluggableAllocator is initialized when created (createCustomAllocator calls init).
bool MLUPluggableAllocator::initialized() { return true; }

// No cache to empty (CUDAPluggableAllocator without a reset_fn).
void MLUPluggableAllocator::emptyCache(c10::MempoolId_t /*unused*/) {}

// Nothing to record (CUDAPluggableAllocator without a record_stream_fn); free_block waits for the block's queue.
void MLUPluggableAllocator::recordStream(const c10::DataPtr& /*ptr*/, c10::Stream /*stream*/) {}

c10::CachingDeviceAllocator::DeviceStats MLUPluggableAllocator::getDeviceStats(c10::DeviceIndex /*device*/) {
  unsupported("getDeviceStats");
}

void MLUPluggableAllocator::resetAccumulatedStats(c10::DeviceIndex /*device*/) {
  unsupported("resetAccumulatedStats");
}

void MLUPluggableAllocator::resetPeakStats(c10::DeviceIndex /*device*/) { unsupported("resetPeakStats"); }

std::pair<std::size_t, std::size_t> MLUPluggableAllocator::getMemoryInfo(c10::DeviceIndex device) {
  check_device_index(device);
  std::size_t free_b = 0;
  std::size_t total = 0;
  MLU_CHECK(catch_rt::memGetInfo(device, &free_b, &total));
  return {free_b, total};
}

void* MLUPluggableAllocator::alloc_block(int dev, std::size_t n) {
  if (n == 0) return nullptr;
  void* queue = current_queue(static_cast<c10::DeviceIndex>(dev));
  void* host = alloc_fn_(n, dev, queue);
  TORCH_CHECK_WITH(OutOfMemoryError, host != nullptr, "MLU out of memory. Tried to allocate ", n,
                   " bytes on MLU ", dev, ": the pluggable allocator's alloc function returned NULL.");
  void* dptr = nullptr;
  catch_rt::Status st = catch_rt::adoptDeviceMemory(dev, host, n, &dptr);
  if (st != catch_rt::Status::Success) {
    free_fn_(host, n, dev, queue);
    TORCH_CHECK_WITH(OutOfMemoryError, st != catch_rt::Status::OutOfMemory, "MLU out of memory. Tried to allocate ",
                     n, " bytes on MLU ", dev, ": above the device's capacity (CATCH_MLU_MEMORY_BYTES).");
    TORCH_CHECK(false, "MLU runtime error: ", catch_rt::statusString(st), " (the pluggable allocator's alloc "
                "function returned ", host, ", which cannot become device memory of MLU ", dev, ")");
  }
  std::lock_guard<std::mutex> lk(mu_);
  live_.emplace(dptr, Block{host, n, dev, queue});
  return dptr;
}

bool MLUPluggableAllocator::free_block(void* dptr) {
  Block b{};
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = live_.find(dptr);
    if (it == live_.end()) return false;
    b = it->second;
    live_.erase(it);
  }
  auto* q = static_cast<catch_rt::Queue*>(b.queue);
  if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
  void* host = nullptr;
  if (catch_rt::releaseDeviceMemory(dptr, &host) != catch_rt::Status::Success) return false;
  free_fn_(b.host, b.size, b.device, b.queue);
  return true;
}

bool MLUPluggableAllocator::owns(const void* dptr) {
  std::lock_guard<std::mutex> lk(mu_);
  return live_.count(const_cast<void*>(dptr)) != 0;
}

}  // namespace torch_mlu
