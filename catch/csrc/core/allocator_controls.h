// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Controls and introspection of the caching device allocator (torch.mlu.memory): the cache, the per-process
// fraction, memory history and snapshots, private pools. With a pluggable allocator in use (current_allocator.h),
// empty_cache and set_memory_fraction do nothing and the others raise, as with torch.cuda's CUDAPluggableAllocator.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "device_allocator.h"

namespace torch_mlu {

// Frees every cached block of every device.
void empty_cache();
// Per-process fraction of a device's capacity the allocator may reserve (torch.cuda semantics: a request that would
// take reserved memory above fraction * capacity frees the cache, then raises OutOfMemoryError).
void set_memory_fraction(double fraction, c10::DeviceIndex device);
double get_memory_fraction(c10::DeviceIndex device);
// false: freed blocks go back to the runtime at once (torch.cuda.caching_allocator_enable).
void set_caching_enabled(bool on);
bool caching_enabled();
// Memory history (torch.cuda.memory._record_memory_history): `recorder` (may be null) captures the context of each
// event (Python stack); entries beyond `max_entries` per device drop the oldest.
void record_history(bool enabled, ContextRecorder recorder, size_t max_entries, bool clear);
std::vector<BlockInfo> snapshot_blocks();
std::vector<std::vector<TraceEntry>> snapshot_traces();  // one list per device
// Private pools (torch.mlu.MemPool): blocks allocated while a thread uses pool `id` on a device are cached in that
// pool and reused only by its users; releasing the pool frees its cached blocks. use_on_oom pools lend cached
// blocks to the default pool when the device is out of memory. A pool with `segments` (a pluggable allocator, as
// torch.cuda.MemPool(allocator=...)) takes its segments from it and gives them back to it.
int64_t create_mem_pool(bool use_on_oom, std::shared_ptr<DeviceBlockAllocator> segments = nullptr);
void release_mem_pool(int64_t id);
// Makes pool `id` (0: default) serve this thread's allocations on `device`; returns the previous (id, device).
std::pair<int64_t, int> exchange_thread_pool(int64_t id, int device);

}  // namespace torch_mlu
