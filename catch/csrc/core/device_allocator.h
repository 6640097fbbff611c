// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The caching device allocator of mlu (the c10::DeviceAllocator of PrivateUse1, set at load time).
//
// Caching: freed blocks stay reserved in a per-device pool keyed by size and are reused for requests of up to the
// same size (a block is reused only if it is at most twice the rounded request). Sizes round up to 512 bytes, like
// CUDA's allocator. On a runtime OutOfMemory the cache is released and the allocation retried once; if it still
// fails, torch.OutOfMemoryError is raised with the allocator's numbers (as c10::cuda::CUDACachingAllocator does).
// Statistics follow torch.cuda.memory's; the per-process fraction, memory history and private pools are the
// controls of allocator_controls.h.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Stream.h>
#include <c10/util/flat_hash_map.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "../runtime/status.h"
#include "block_allocator.h"

namespace torch_mlu {

// Memory history (torch.cuda.memory._record_memory_history): `recorder` (may be null) captures the context of each
// event (Python stack).
using ContextRecorder = std::shared_ptr<c10::GatheredContext> (*)();

struct BlockInfo {
  int device;
  uintptr_t addr;
  size_t size;       // reserved bytes (one block per segment: the allocator does not split)
  size_t requested;  // bytes asked for (0 when cached)
  bool allocated;
  int64_t stream;
  std::shared_ptr<c10::GatheredContext> context;
  int64_t pool;  // 0: default pool; else the MemPool id
};

struct TraceEntry {
  const char* action;  // alloc, free_requested, free_completed, segment_alloc, segment_free, oom
  uintptr_t addr;
  size_t size;
  int64_t stream;
  int64_t time_us;
  std::shared_ptr<c10::GatheredContext> context;
};

class MLUCachingAllocator final : public DeviceBlockAllocator {
 public:
  static constexpr int kMaxDevices = 16;

  c10::DataPtr allocate(size_t n) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;
  // True once a block was handed out (the allocator can then no longer be swapped: current_allocator.h).
  bool initialized() override;
  void emptyCache(c10::MempoolId_t /*unused*/) override;
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override;
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;

  // A block of at least `n` bytes on device `dev` (nullptr for 0), from the cache or the runtime.
  void* alloc_block(int dev, size_t n) override;
  // Takes back a block alloc_block handed out; false if `dptr` is not a live block of ours.
  bool free_block(void* dptr) override;
  // Frees pool `pool_id`'s cached blocks of device `dev` (0: the default pool).
  void release_cached(int dev, int64_t pool_id = 0);
  // True if `dptr` is a live block handed out by this allocator.
  bool owns(const void* dptr) override;
  const char* name() const override { return "native"; }
  // Marks live block `dptr` as shared with other processes (storage_sharing.h): when freed it goes back to the
  // runtime instead of the cache, so this process never hands its memory out again while another one may map it.
  // False if `dptr` is not a live block of ours.
  bool mark_shared(void* dptr);

  // ---- controls and introspection (allocator_controls.h) ----
  void set_fraction(double f, int dev);
  double fraction(int dev);
  void set_caching(bool on);
  bool caching() const;
  void set_history(bool enabled, ContextRecorder recorder, size_t max_entries, bool clear);
  std::vector<BlockInfo> blocks();
  std::vector<std::vector<TraceEntry>> traces();
  // A new private pool. Its segments come from `segments` (a pluggable allocator: torch.cuda.MemPool(allocator=...))
  // when given, else from the runtime.
  int64_t create_pool(bool use_on_oom, std::shared_ptr<DeviceBlockAllocator> segments = nullptr);
  // The pool's cached blocks go back to the runtime; its blocks still in use follow when freed.
  void release_pool(int64_t id);
  // Makes pool `id` (0: default) serve this thread's allocations on `device`; returns the previous (id, device).
  static std::pair<int64_t, int> exchange_thread_pool(int64_t id, int device);

 private:
  struct Block {
    void* dptr;
    size_t size;       // reserved bytes
    size_t requested;  // bytes asked for
    int device;
    c10::StreamId stream;
    std::vector<c10::Stream> used_on;  // recordStream
    std::shared_ptr<c10::GatheredContext> context;  // where it was allocated (memory history on)
    int64_t pool;  // 0: the device's default pool; else a MemPool id
    bool shared = false;  // mark_shared
    std::shared_ptr<DeviceBlockAllocator> segments;  // where the segment came from (nullptr: the runtime)
  };
  struct PoolInfo {
    bool use_on_oom;
    std::shared_ptr<DeviceBlockAllocator> segments;  // nullptr: the runtime
  };
  // Free blocks of one device by reserved size; a size's vector stays in the map when it empties, so the steady
  // state of a training loop (the same sizes freed and taken again) allocates no map or list nodes.
  using Pool = std::map<size_t, std::vector<Block*>>;

  // Runtime malloc within the per-process fraction (caller holds mu_): a request above the allowed reserved
  // bytes fails like a runtime OutOfMemory.
  catch_rt::Status malloc_within_fraction(int dev, size_t size, void** p);
  // Caller holds mu_.
  void trace(int dev, const char* action, uintptr_t addr, size_t size, int64_t stream,
             std::shared_ptr<c10::GatheredContext> ctx);
  // The smallest cached block of at least `size` and at most twice it, taken out of `pool`; nullptr if none.
  static Block* take_cached(Pool& pool, size_t size);

  std::mutex mu_;
  ska::flat_hash_map<void*, Block*> active_;  // open addressing: no node allocation per block handed out
  std::map<int64_t, Pool> pools_[kMaxDevices];  // pool id (0: default, else a MemPool id) -> cached blocks
  // A block for a new segment `p` of `size` bytes in pool `pool`, counted and traced (caller holds mu_).
  Block* new_segment(int dev, void* p, size_t size, int64_t pool, std::shared_ptr<DeviceBlockAllocator> segments,
                     const std::shared_ptr<c10::GatheredContext>& ctx);
  // The segment of a block going back to where it came from (caller holds mu_).
  static void free_segment(const Block& b);

  std::map<int64_t, PoolInfo> live_pools_;  // MemPool id -> its options
  int64_t next_pool_ = 1;
  c10::CachingDeviceAllocator::DeviceStats stats_[kMaxDevices];
  double fraction_[kMaxDevices] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
  std::atomic<bool> caching_{true};
  std::atomic<bool> used_{false};  // a block was handed out
  bool history_ = false;
  ContextRecorder recorder_ = nullptr;
  size_t max_entries_ = SIZE_MAX;
  std::deque<TraceEntry> traces_[kMaxDevices];
};

// The one caching allocator (the allocator in use unless another was swapped in: current_allocator.h).
MLUCachingAllocator* caching_allocator();

}  // namespace torch_mlu
