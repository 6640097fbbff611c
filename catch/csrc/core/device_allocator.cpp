// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "device_allocator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "../runtime/copy.h"
#include "../runtime/device.h"
#include "../runtime/memory.h"
#include "../runtime/queue.h"
#include "current_allocator.h"
#include "device.h"
#include "stream.h"

namespace torch_mlu {
namespace {

using c10::CachingAllocator::StatArray;
using c10::CachingAllocator::StatType;
using c10::CachingDeviceAllocator::DeviceStats;

constexpr size_t kRound = 512;
constexpr size_t kSmallSize = 1 << 20;

// use_mem_pool: allocations of this thread on device tls_pool_device come from pool tls_pool_id.
thread_local int64_t tls_pool_id = 0;
thread_local int tls_pool_device = -1;

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string fmt_bytes(int64_t b) {
  char buf[64];
  if (b >= (1LL << 30)) {
    snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(b) / (1LL << 30));
  } else if (b >= (1LL << 20)) {
    snprintf(buf, sizeof(buf), "%.2f MiB", static_cast<double>(b) / (1LL << 20));
  } else if (b >= 1024) {
    snprintf(buf, sizeof(buf), "%.2f KiB", static_cast<double>(b) / 1024);
  } else {
    snprintf(buf, sizeof(buf), "%lld bytes", static_cast<long long>(b));
  }
  return buf;
}

inline void update(StatArray& a, size_t bytes, bool small, bool inc) {
  auto& total = a[static_cast<size_t>(StatType::AGGREGATE)];
  auto& pool = a[static_cast<size_t>(small ? StatType::SMALL_POOL : StatType::LARGE_POOL)];
  if (inc) {
    total.increase(bytes);
    pool.increase(bytes);
  } else {
    total.decrease(bytes);
    pool.decrease(bytes);
  }
}

}  // namespace

c10::DataPtr MLUCachingAllocator::allocate(size_t n) {
  int dev = current_device();
  void* p = alloc_block(dev, n);
  return {p, p, &delete_device_ptr, c10::Device(kMLU, static_cast<c10::DeviceIndex>(dev))};
}

c10::DeleterFnPtr MLUCachingAllocator::raw_deleter() const { return &delete_device_ptr; }

void MLUCachingAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  MLU_CHECK(catch_rt::memcpy(dest, src, count, catch_rt::MemcpyKind::DeviceToDevice));
}

bool MLUCachingAllocator::initialized() { return used_.load(std::memory_order_relaxed); }

void MLUCachingAllocator::emptyCache(c10::MempoolId_t /*unused*/) {
  for (int d = 0; d < catch_rt::deviceCount(); ++d) release_cached(d);
}

void MLUCachingAllocator::recordStream(const c10::DataPtr& ptr, c10::Stream stream) {
  if (ptr.get() == nullptr) return;
  std::lock_guard<std::mutex> lk(mu_);
  auto it = active_.find(ptr.get());
  if (it != active_.end()) it->second->used_on.push_back(stream);
}

DeviceStats MLUCachingAllocator::getDeviceStats(c10::DeviceIndex device) {
  check_device_index(device);
  std::lock_guard<std::mutex> lk(mu_);
  return stats_[device];
}

void MLUCachingAllocator::resetAccumulatedStats(c10::DeviceIndex device) {
  check_device_index(device);
  std::lock_guard<std::mutex> lk(mu_);
  auto& s = stats_[device];
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.allocated_bytes, &s.reserved_bytes,
                       &s.active_bytes, &s.requested_bytes}) {
    for (auto& st : *a) st.reset_accumulated();
  }
  s.num_alloc_retries = 0;
  s.num_ooms = 0;
  s.num_device_alloc = 0;
  s.num_device_free = 0;
}

void MLUCachingAllocator::resetPeakStats(c10::DeviceIndex device) {
  check_device_index(device);
  std::lock_guard<std::mutex> lk(mu_);
  auto& s = stats_[device];
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.allocated_bytes, &s.reserved_bytes,
                       &s.active_bytes, &s.requested_bytes}) {
    for (auto& st : *a) st.reset_peak();
  }
}

std::pair<size_t, size_t> MLUCachingAllocator::getMemoryInfo(c10::DeviceIndex device) {
  check_device_index(device);
  size_t free_b = 0;
  size_t total = 0;
  MLU_CHECK(catch_rt::memGetInfo(device, &free_b, &total));
  return {free_b, total};
}

catch_rt::Status MLUCachingAllocator::malloc_within_fraction(int dev, size_t size, void** p) {
  if (fraction_[dev] < 1.0) {
    auto allowed = static_cast<int64_t>(fraction_[dev] * static_cast<double>(catch_rt::deviceCapacity()));
    if (stats_[dev].reserved_bytes[0].current + static_cast<int64_t>(size) > allowed) {
      return catch_rt::Status::OutOfMemory;
    }
  }
  return catch_rt::malloc(dev, size, p);
}

MLUCachingAllocator::Block* MLUCachingAllocator::new_segment(int dev, void* p, size_t size, int64_t pool,
                                                             std::shared_ptr<DeviceBlockAllocator> segments,
                                                             const std::shared_ptr<c10::GatheredContext>& ctx) {
  auto* b = new Block{p, size, size, dev, 0, {}, nullptr, pool, false, std::move(segments)};
  auto& s = stats_[dev];
  bool small = size <= kSmallSize;
  update(s.reserved_bytes, size, small, true);
  update(s.segment, 1, small, true);
  s.num_device_alloc++;
  trace(dev, "segment_alloc", reinterpret_cast<uintptr_t>(p), size,
        current_stream_id(static_cast<c10::DeviceIndex>(dev)), ctx);
  return b;
}

void* MLUCachingAllocator::alloc_block(int dev, size_t n) {
  if (n == 0) return nullptr;
  if (!used_.load(std::memory_order_relaxed)) used_.store(true, std::memory_order_relaxed);
  size_t size = (n + kRound - 1) / kRound * kRound;
  std::shared_ptr<c10::GatheredContext> ctx = recorder_ != nullptr ? recorder_() : nullptr;
  int64_t pid = tls_pool_device == dev ? tls_pool_id : 0;
  std::unique_lock<std::mutex> lk(mu_);
  Block* b = take_cached(pools_[dev][pid], size);
  std::shared_ptr<DeviceBlockAllocator> segments;
  if (pid != 0) {
    auto it = live_pools_.find(pid);
    if (it != live_pools_.end()) segments = it->second.segments;
  }
  if (b == nullptr && segments != nullptr) {
    // A pool with its own allocator: that allocator's errors (out of memory included) are the allocation's.
    b = new_segment(dev, segments->alloc_block(dev, size), size, pid, segments, ctx);
  }
  if (b == nullptr) {
    void* p = nullptr;
    auto st = malloc_within_fraction(dev, size, &p);
    if (st == catch_rt::Status::OutOfMemory) {
      stats_[dev].num_alloc_retries++;
      lk.unlock();
      release_cached(dev);
      lk.lock();
      st = malloc_within_fraction(dev, size, &p);
    }
    if (st == catch_rt::Status::OutOfMemory && pid == 0) {
      // MemPool(use_on_oom=True): a cached block of such a pool is the last resort.
      for (auto& kv : live_pools_) {
        if (kv.second.use_on_oom && (b = take_cached(pools_[dev][kv.first], size)) != nullptr) break;
      }
    }
    if (b == nullptr && st == catch_rt::Status::OutOfMemory) {
      auto& s = stats_[dev];
      s.num_ooms++;
      size_t free_b = 0;
      size_t total = 0;
      catch_rt::memGetInfo(dev, &free_b, &total);
      int64_t allocated = s.allocated_bytes[0].current;
      int64_t reserved = s.reserved_bytes[0].current;
      std::string allowed_info;
      if (fraction_[dev] < 1.0) {
        allowed_info =
            fmt_bytes(static_cast<int64_t>(fraction_[dev] * static_cast<double>(total))) + " allowed; ";
      }
      trace(dev, "oom", 0, size, 0, ctx);
      lk.unlock();
      // The shape of c10::cuda::CUDACachingAllocator's message.
      TORCH_CHECK_WITH(OutOfMemoryError, false, "MLU out of memory. Tried to allocate ", fmt_bytes(size),
                       ". MLU ", dev, " has a total capacity of ", fmt_bytes(total), " of which ",
                       fmt_bytes(free_b), " is free. Including non-PyTorch memory, this process has ",
                       fmt_bytes(total - free_b), " memory in use. ", allowed_info, "Of the allocated memory ",
                       fmt_bytes(allocated), " is allocated by PyTorch, and ", fmt_bytes(reserved - allocated),
                       " is reserved by PyTorch but unallocated. (Capacity is set by CATCH_MLU_MEMORY_BYTES.)");
    }
    if (b == nullptr) {
      MLU_CHECK(st);
      b = new_segment(dev, p, size, pid, nullptr, ctx);
    }
  }
  b->requested = n;
  b->stream = current_stream_id(static_cast<c10::DeviceIndex>(dev));
  b->used_on.clear();
  b->context = ctx;
  trace(dev, "alloc", reinterpret_cast<uintptr_t>(b->dptr), b->size, b->stream, ctx);
  active_.emplace(b->dptr, b);
  auto& s = stats_[dev];
  bool bsmall = b->size <= kSmallSize;
  update(s.allocated_bytes, b->size, bsmall, true);
  update(s.active_bytes, b->size, bsmall, true);
  update(s.requested_bytes, n, bsmall, true);
  update(s.allocation, 1, bsmall, true);
  update(s.active, 1, bsmall, true);
  return b->dptr;
}

bool MLUCachingAllocator::free_block(void* dptr) {
  std::unique_lock<std::mutex> lk(mu_);
  auto it = active_.find(dptr);
  if (it == active_.end()) return false;
  Block* b = it->second;
  active_.erase(it);
  // Work still queued on the allocating queue (or a recorded one) may touch the block: wait for it before the
  // block can be handed out again. The common case (kernels run inline, so the queue is idle and nothing was
  // recorded) returns the block under this one lock.
  catch_rt::Queue* q = b->stream == 0
                           ? catch_rt::defaultQueue(b->device)
                           : queue_of(c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, b->device), b->stream));
  if (!b->used_on.empty() || !catch_rt::queueIdle(q)) {
    std::vector<c10::Stream> streams = std::move(b->used_on);
    b->used_on.clear();
    lk.unlock();
    if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
    for (auto& s : streams) catch_rt::queueSync(queue_of(s));
    lk.lock();
  }
  auto& s = stats_[b->device];
  bool small = b->size <= kSmallSize;
  update(s.allocated_bytes, b->size, small, false);
  update(s.active_bytes, b->size, small, false);
  update(s.requested_bytes, b->requested, small, false);
  update(s.allocation, 1, small, false);
  update(s.active, 1, small, false);
  if (recorder_ != nullptr || history_) {
    auto ctx = b->context;
    trace(b->device, "free_requested", reinterpret_cast<uintptr_t>(b->dptr), b->size, b->stream, ctx);
    trace(b->device, "free_completed", reinterpret_cast<uintptr_t>(b->dptr), b->size, b->stream, ctx);
  }
  b->context = nullptr;
  if (!caching_ || b->shared || (b->pool != 0 && live_pools_.count(b->pool) == 0)) {
    free_segment(*b);
    update(s.reserved_bytes, b->size, small, false);
    update(s.segment, 1, small, false);
    s.num_device_free++;
    trace(b->device, "segment_free", reinterpret_cast<uintptr_t>(b->dptr), b->size, b->stream, nullptr);
    delete b;
    return true;
  }
  pools_[b->device][b->pool][b->size].push_back(b);
  return true;
}

void MLUCachingAllocator::release_cached(int dev, int64_t pool_id) {
  std::lock_guard<std::mutex> lk(mu_);
  auto& pool = pools_[dev][pool_id];
  auto& s = stats_[dev];
  for (auto& kv : pool) {
    for (Block* b : kv.second) {
      free_segment(*b);
      bool small = b->size <= kSmallSize;
      update(s.reserved_bytes, b->size, small, false);
      update(s.segment, 1, small, false);
      s.num_device_free++;
      trace(dev, "segment_free", reinterpret_cast<uintptr_t>(b->dptr), b->size, b->stream, nullptr);
      delete b;
    }
  }
  pool.clear();
}

void MLUCachingAllocator::set_fraction(double f, int dev) {
  std::lock_guard<std::mutex> lk(mu_);
  fraction_[dev] = f;
}
double MLUCachingAllocator::fraction(int dev) {
  std::lock_guard<std::mutex> lk(mu_);
  return fraction_[dev];
}
void MLUCachingAllocator::set_caching(bool on) {
  caching_ = on;
  if (!on) emptyCache({0, 0});
}
bool MLUCachingAllocator::caching() const { return caching_; }

void MLUCachingAllocator::set_history(bool enabled, ContextRecorder recorder, size_t max_entries, bool clear) {
  std::lock_guard<std::mutex> lk(mu_);
  history_ = enabled;
  recorder_ = enabled ? recorder : nullptr;
  max_entries_ = std::max<size_t>(max_entries, 1);
  if (clear || !enabled) {
    for (auto& t : traces_) t.clear();
  }
}

std::vector<BlockInfo> MLUCachingAllocator::blocks() {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<BlockInfo> out;
  for (auto& kv : active_) {
    Block* b = kv.second;
    out.push_back({b->device, reinterpret_cast<uintptr_t>(b->dptr), b->size, b->requested, true, b->stream,
                   b->context, b->pool});
  }
  for (int d = 0; d < kMaxDevices; ++d) {
    for (auto& pool : pools_[d]) {
      for (auto& kv : pool.second) {
        for (Block* b : kv.second) {
          out.push_back({b->device, reinterpret_cast<uintptr_t>(b->dptr), b->size, 0, false, b->stream, nullptr,
                         pool.first});
        }
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const BlockInfo& a, const BlockInfo& b) { return a.addr < b.addr; });
  return out;
}

void MLUCachingAllocator::free_segment(const Block& b) {
  if (b.segments == nullptr) {
    catch_rt::free(b.dptr);
  } else if (!b.segments->free_block(b.dptr)) {
    TORCH_WARN("MLU error: a MemPool's allocator did not own the segment ", b.dptr, " it handed out");
  }
}

int64_t MLUCachingAllocator::create_pool(bool use_on_oom, std::shared_ptr<DeviceBlockAllocator> segments) {
  std::lock_guard<std::mutex> lk(mu_);
  int64_t id = next_pool_++;
  live_pools_[id] = PoolInfo{use_on_oom, std::move(segments)};
  return id;
}

void MLUCachingAllocator::release_pool(int64_t id) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    live_pools_.erase(id);
  }
  for (int d = 0; d < catch_rt::deviceCount(); ++d) release_cached(d, id);
}

std::vector<std::vector<TraceEntry>> MLUCachingAllocator::traces() {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<std::vector<TraceEntry>> out;
  for (int d = 0; d < catch_rt::deviceCount(); ++d) out.emplace_back(traces_[d].begin(), traces_[d].end());
  return out;
}

void MLUCachingAllocator::trace(int dev, const char* action, uintptr_t addr, size_t size, int64_t stream,
                                std::shared_ptr<c10::GatheredContext> ctx) {
  if (!history_) return;
  auto& t = traces_[dev];
  t.push_back({action, addr, size, stream, now_us(), std::move(ctx)});
  while (t.size() > max_entries_) t.pop_front();
}

bool MLUCachingAllocator::owns(const void* dptr) {
  std::lock_guard<std::mutex> lk(mu_);
  return active_.count(const_cast<void*>(dptr)) != 0;
}

bool MLUCachingAllocator::mark_shared(void* dptr) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = active_.find(dptr);
  if (it == active_.end()) return false;
  it->second->shared = true;
  return true;
}

MLUCachingAllocator::Block* MLUCachingAllocator::take_cached(Pool& pool, size_t size) {
  for (auto it = pool.lower_bound(size); it != pool.end() && it->first <= 2 * size; ++it) {
    if (!it->second.empty()) {
      Block* b = it->second.back();
      it->second.pop_back();
      return b;
    }
  }
  return nullptr;
}
std::pair<int64_t, int> MLUCachingAllocator::exchange_thread_pool(int64_t id, int device) {
  std::pair<int64_t, int> prev{tls_pool_id, tls_pool_device};
  tls_pool_id = id;
  tls_pool_device = device;
  return prev;
}

MLUCachingAllocator* caching_allocator() {
  static MLUCachingAllocator* a = new MLUCachingAllocator();
  return a;
}

}  // namespace torch_mlu
