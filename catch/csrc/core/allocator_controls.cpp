// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "allocator_controls.h"

#include "current_allocator.h"
#include "device.h"

namespace torch_mlu {
namespace {

// The caching allocator, for a control that only it has; with a pluggable allocator in use, the error
// torch::cuda::CUDAPluggableAllocator raises for what it does not support.
MLUCachingAllocator* caching(const char* what) {
  DeviceBlockAllocator* a = device_allocator();
  TORCH_CHECK(a == caching_allocator(), "MLUPluggableAllocator does not yet support ", what,
              ". If you need it, please file an issue describing your use case.");
  return caching_allocator();
}

}  // namespace

void empty_cache() { device_allocator()->emptyCache({0, 0}); }

void set_memory_fraction(double fraction, c10::DeviceIndex device) {
  check_device_index(device);
  TORCH_CHECK(fraction >= 0 && fraction <= 1, "Invalid fraction value: ", fraction, ". Allowed range: 0~1");
  // A pluggable allocator has no fraction to set (CUDAPluggableAllocator without a memory_fraction_fn: no-op).
  if (device_allocator() == caching_allocator()) caching_allocator()->set_fraction(fraction, device);
}

double get_memory_fraction(c10::DeviceIndex device) {
  check_device_index(device);
  return caching("getMemoryFraction")->fraction(device);
}

void set_caching_enabled(bool on) { caching("caching_allocator_enable")->set_caching(on); }

bool caching_enabled() { return caching("caching_allocator_enable")->caching(); }

void record_history(bool enabled, ContextRecorder recorder, size_t max_entries, bool clear) {
  caching("recordHistory")->set_history(enabled, recorder, max_entries, clear);
}

std::vector<BlockInfo> snapshot_blocks() { return caching("snapshot")->blocks(); }

std::vector<std::vector<TraceEntry>> snapshot_traces() { return caching("snapshot")->traces(); }

int64_t create_mem_pool(bool use_on_oom, std::shared_ptr<DeviceBlockAllocator> segments) {
  TORCH_CHECK(segments == nullptr || segments.get() != caching_allocator(),
              "MemPool: the allocator of a pool must be a pluggable allocator (MLUPluggableAllocator), not the "
              "caching allocator");
  return caching("MemPool")->create_pool(use_on_oom, std::move(segments));
}

void release_mem_pool(int64_t id) {
  // A pool's id only exists while the caching allocator is in use (create_mem_pool).
  caching_allocator()->release_pool(id);
}

std::pair<int64_t, int> exchange_thread_pool(int64_t id, int device) {
  return MLUCachingAllocator::exchange_thread_pool(id, device);
}

}  // namespace torch_mlu
