// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "allocator_controls.h"

#include "device.h"

namespace torch_mlu {

void empty_cache() { device_allocator()->emptyCache({0, 0}); }

void set_memory_fraction(double fraction, c10::DeviceIndex device) {
  check_device_index(device);
  TORCH_CHECK(fraction >= 0 && fraction <= 1, "Invalid fraction value: ", fraction, ". Allowed range: 0~1");
  device_allocator()->set_fraction(fraction, device);
}

double get_memory_fraction(c10::DeviceIndex device) {
  check_device_index(device);
  return device_allocator()->fraction(device);
}

void set_caching_enabled(bool on) { device_allocator()->set_caching(on); }

bool caching_enabled() { return device_allocator()->caching(); }

void record_history(bool enabled, ContextRecorder recorder, size_t max_entries, bool clear) {
  device_allocator()->set_history(enabled, recorder, max_entries, clear);
}

std::vector<BlockInfo> snapshot_blocks() { return device_allocator()->blocks(); }

std::vector<std::vector<TraceEntry>> snapshot_traces() { return device_allocator()->traces(); }

int64_t create_mem_pool(bool use_on_oom) { return device_allocator()->create_pool(use_on_oom); }

void release_mem_pool(int64_t id) { device_allocator()->release_pool(id); }

std::pair<int64_t, int> exchange_thread_pool(int64_t id, int device) {
  return MLUCachingAllocator::exchange_thread_pool(id, device);
}

}  // namespace torch_mlu
