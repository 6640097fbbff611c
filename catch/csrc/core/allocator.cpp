// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Caching device allocator for mlu (REGISTER_ALLOCATOR(PrivateUse1)), the
// pinned host allocator, and the CPU-allocator shim used by host kernels.
//
// Caching: freed blocks stay reserved in a per-device pool keyed by size and
// are reused for requests of up to the same size (a block is reused only if it
// is at most twice the rounded request). Sizes round up to 512 bytes, like
// CUDA's allocator. On a runtime OutOfMemory the cache is released and the
// allocation retried once; if it still fails, torch.OutOfMemoryError is raised
// with the allocator's numbers (as c10::cuda::CUDACachingAllocator does).
#include <c10/core/CPUAllocator.h>
#include <c10/util/flat_hash_map.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mlu_core.h"

namespace torch_mlu {
namespace {

using c10::CachingAllocator::Stat;
using c10::CachingAllocator::StatArray;
using c10::CachingAllocator::StatType;
using c10::CachingDeviceAllocator::DeviceStats;

constexpr size_t kRound = 512;
constexpr size_t kSmallSize = 1 << 20;
constexpr int kMaxDevices = 16;

struct Block {
  void* dptr;
  size_t size;       // reserved bytes
  size_t requested;  // bytes asked for
  int device;
  c10::StreamId stream;
  std::vector<c10::Stream> used_on;  // recordStream
  std::shared_ptr<c10::GatheredContext> context;  // where it was allocated (memory history on)
  int64_t pool;  // 0: the device's default pool; else a MemPool id
};

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

void delete_device_ptr(void* ctx);

class MLUCachingAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    int dev = current_device();
    void* p = alloc_block(dev, n);
    return {p, p, &delete_device_ptr, c10::Device(kMLU, static_cast<c10::DeviceIndex>(dev))};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &delete_device_ptr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    MLU_CHECK(catch_rt::memcpy(dest, src, count, catch_rt::MemcpyKind::DeviceToDevice));
  }

  bool initialized() override { return true; }

  void emptyCache(c10::MempoolId_t /*unused*/) override {
    for (int d = 0; d < catch_rt::deviceCount(); ++d) release_cached(d);
  }

  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    if (ptr.get() == nullptr) return;
    std::lock_guard<std::mutex> lk(mu_);
    auto it = active_.find(ptr.get());
    if (it != active_.end()) it->second->used_on.push_back(stream);
  }

  DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    check_device_index(device);
    std::lock_guard<std::mutex> lk(mu_);
    return stats_[device];
  }

  void resetAccumulatedStats(c10::DeviceIndex device) override {
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

  void resetPeakStats(c10::DeviceIndex device) override {
    check_device_index(device);
    std::lock_guard<std::mutex> lk(mu_);
    auto& s = stats_[device];
    for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.allocated_bytes, &s.reserved_bytes,
                         &s.active_bytes, &s.requested_bytes}) {
      for (auto& st : *a) st.reset_peak();
    }
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    check_device_index(device);
    size_t free_b = 0;
    size_t total = 0;
    MLU_CHECK(catch_rt::memGetInfo(device, &free_b, &total));
    return {free_b, total};
  }

  // Runtime malloc within the per-process fraction (caller holds mu_): a request above the allowed reserved
  // bytes fails like a runtime OutOfMemory.
  catch_rt::Status malloc_within_fraction(int dev, size_t size, void** p) {
    if (fraction_[dev] < 1.0) {
      auto allowed = static_cast<int64_t>(fraction_[dev] * static_cast<double>(catch_rt::deviceCapacity()));
      if (stats_[dev].reserved_bytes[0].current + static_cast<int64_t>(size) > allowed) {
        return catch_rt::Status::OutOfMemory;
      }
    }
    return catch_rt::malloc(dev, size, p);
  }

  void* alloc_block(int dev, size_t n) {
    if (n == 0) return nullptr;
    size_t size = (n + kRound - 1) / kRound * kRound;
    bool small = size <= kSmallSize;
    std::shared_ptr<c10::GatheredContext> ctx = recorder_ != nullptr ? recorder_() : nullptr;
    int64_t pid = tls_pool_device == dev ? tls_pool_id : 0;
    std::unique_lock<std::mutex> lk(mu_);
    Block* b = take_cached(pools_[dev][pid], size);
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
          if (kv.second && (b = take_cached(pools_[dev][kv.first], size)) != nullptr) break;
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
        b = new Block{p, size, n, dev, 0, {}, nullptr, pid};
        auto& s = stats_[dev];
        update(s.reserved_bytes, size, small, true);
        update(s.segment, 1, small, true);
        s.num_device_alloc++;
        trace(dev, "segment_alloc", reinterpret_cast<uintptr_t>(p), size,
              current_stream_id(static_cast<c10::DeviceIndex>(dev)), ctx);
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

  bool free_block(void* dptr) {
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
    if (!caching_ || (b->pool != 0 && live_pools_.count(b->pool) == 0)) {
      catch_rt::free(b->dptr);
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

  void release_cached(int dev, int64_t pool_id = 0) {
    std::lock_guard<std::mutex> lk(mu_);
    auto& pool = pools_[dev][pool_id];
    auto& s = stats_[dev];
    for (auto& kv : pool) {
      for (Block* b : kv.second) {
        catch_rt::free(b->dptr);
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

  // ---- controls and introspection ----
  void set_fraction(double f, int dev) {
    std::lock_guard<std::mutex> lk(mu_);
    fraction_[dev] = f;
  }
  double fraction(int dev) {
    std::lock_guard<std::mutex> lk(mu_);
    return fraction_[dev];
  }
  void set_caching(bool on) {
    caching_ = on;
    if (!on) emptyCache({0, 0});
  }
  bool caching() const { return caching_; }

  void set_history(bool enabled, ContextRecorder recorder, size_t max_entries, bool clear) {
    std::lock_guard<std::mutex> lk(mu_);
    history_ = enabled;
    recorder_ = enabled ? recorder : nullptr;
    max_entries_ = std::max<size_t>(max_entries, 1);
    if (clear || !enabled) {
      for (auto& t : traces_) t.clear();
    }
  }

  std::vector<BlockInfo> blocks() {
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

  int64_t create_pool(bool use_on_oom) {
    std::lock_guard<std::mutex> lk(mu_);
    int64_t id = next_pool_++;
    live_pools_[id] = use_on_oom;
    return id;
  }

  // The pool's cached blocks go back to the runtime; its blocks still in use follow when freed.
  void release_pool(int64_t id) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      live_pools_.erase(id);
    }
    for (int d = 0; d < catch_rt::deviceCount(); ++d) release_cached(d, id);
  }

  std::vector<std::vector<TraceEntry>> traces() {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<std::vector<TraceEntry>> out;
    for (int d = 0; d < catch_rt::deviceCount(); ++d) out.emplace_back(traces_[d].begin(), traces_[d].end());
    return out;
  }

 private:
  // Caller holds mu_.
  void trace(int dev, const char* action, uintptr_t addr, size_t size, int64_t stream,
             std::shared_ptr<c10::GatheredContext> ctx) {
    if (!history_) return;
    auto& t = traces_[dev];
    t.push_back({action, addr, size, stream, now_us(), std::move(ctx)});
    while (t.size() > max_entries_) t.pop_front();
  }

 public:

  bool owns(const void* dptr) {
    std::lock_guard<std::mutex> lk(mu_);
    return active_.count(const_cast<void*>(dptr)) != 0;
  }

 private:
  // Free blocks of one device by reserved size; a size's vector stays in the map when it empties, so the steady
  // state of a training loop (the same sizes freed and taken again) allocates no map or list nodes.
  using Pool = std::map<size_t, std::vector<Block*>>;

  // The smallest cached block of at least `size` and at most twice it, taken out of `pool`; nullptr if none.
  static Block* take_cached(Pool& pool, size_t size) {
    for (auto it = pool.lower_bound(size); it != pool.end() && it->first <= 2 * size; ++it) {
      if (!it->second.empty()) {
        Block* b = it->second.back();
        it->second.pop_back();
        return b;
      }
    }
    return nullptr;
  }

  std::mutex mu_;
  ska::flat_hash_map<void*, Block*> active_;  // open addressing: no node allocation per block handed out
  std::map<int64_t, Pool> pools_[kMaxDevices];  // pool id (0: default, else a MemPool id) -> cached blocks
  std::map<int64_t, bool> live_pools_;  // MemPool id -> use_on_oom
  int64_t next_pool_ = 1;
  DeviceStats stats_[kMaxDevices];
  double fraction_[kMaxDevices] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
  std::atomic<bool> caching_{true};
  bool history_ = false;
  ContextRecorder recorder_ = nullptr;
  size_t max_entries_ = SIZE_MAX;
  std::deque<TraceEntry> traces_[kMaxDevices];
};

MLUCachingAllocator* the_allocator() {
  static MLUCachingAllocator* a = new MLUCachingAllocator();
  return a;
}

void delete_device_ptr(void* ctx) {
  if (ctx == nullptr) return;
  // A pointer the allocator never handed out (or already took back) is a bug
  // above us; report it (deleters cannot throw) instead of corrupting the cache.
  if (!the_allocator()->free_block(ctx)) {
    TORCH_WARN("MLU error: free of an unknown or already freed device pointer ", ctx, " ignored");
  }
}

// ---- host-kernel allocation mode --------------------------------------------------
thread_local bool tls_host_kernel = false;
c10::Allocator* g_cpu_original = nullptr;

// Raw deleter of the shim (raw_allocate/raw_deallocate pairs): a host address,
// either a host view of a device block or memory of the original CPU allocator.
void delete_host_view(void* host) {
  if (host == nullptr) return;
  for (int d = 0; d < catch_rt::deviceCount(); ++d) {
    void* dptr = catch_rt::deviceAddress(host, d);
    if (the_allocator()->free_block(dptr)) return;
  }
  g_cpu_original->raw_deleter()(host);
}

// The deleter of the DataPtrs the shim hands out in host-kernel mode on device D: it names the device, so
// adopt_host_block recognizes a block of its device without a lookup, and freeing needs no search over devices.
template <int D>
void delete_host_view_on(void* host) {
  if (host == nullptr) return;
  if (!the_allocator()->free_block(catch_rt::deviceAddress(host, D))) delete_host_view(host);
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
    void* dptr = the_allocator()->alloc_block(dev, n);
    void* host = dptr == nullptr ? nullptr : catch_rt::mapHostUnchecked(dptr);
    // context == data: CPU code may pair raw_allocate with raw_deleter.
    return {host, host, kHostViewDeleters[dev], c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &delete_host_view; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    g_cpu_original->copy_data(dest, src, count);
  }
};

// ---- pinned host memory -------------------------------------------------------------
// Like CUDA's CachingHostAllocator, a pinned block is not given back while an
// asynchronous copy that reads or writes it may still be pending: each copy
// records its queue on the block (record_host_use), and freeing a block whose
// queues are busy defers the free to a host function placed on each of those
// queues, so the memory returns to the heap only once they passed the copies.
struct PinnedUses {
  std::mutex mu;
  std::unordered_map<void*, std::vector<catch_rt::Queue*>> queues;  // block base -> queues that copied it
};
PinnedUses& pinned_uses() {
  static PinnedUses* u = new PinnedUses();  // leaked: deleters may run during static destruction
  return *u;
}

// Pinned blocks are not cached (each allocation is one runtime hostMalloc), so the active counters equal the
// allocation counters; the caching host allocator's keys are kept so torch.cuda.host_memory_stats readers work.
struct HostStats {
  std::mutex mu;
  Stat allocations;
  Stat allocated_bytes;
  int64_t num_host_alloc = 0;
  int64_t num_host_free = 0;
  std::unordered_map<void*, size_t> sizes;
};
HostStats& host_stats_state() {
  static HostStats* h = new HostStats();  // leaked: deleters may run during static destruction
  return *h;
}

void free_pinned_now(void* p) {
  {
    auto& h = host_stats_state();
    std::lock_guard<std::mutex> lk(h.mu);
    auto it = h.sizes.find(p);
    if (it != h.sizes.end()) {
      h.allocations.decrease(1);
      h.allocated_bytes.decrease(static_cast<int64_t>(it->second));
      h.num_host_free++;
      h.sizes.erase(it);
    }
  }
  auto st = catch_rt::hostFree(p);
  if (st != catch_rt::Status::Success) {
    TORCH_WARN("MLU error: free of pinned host pointer ", p, " failed: ", catch_rt::statusString(st));
  }
}

void delete_pinned(void* p) {
  if (p == nullptr) return;
  std::vector<catch_rt::Queue*> used;
  {
    auto& u = pinned_uses();
    std::lock_guard<std::mutex> lk(u.mu);
    auto it = u.queues.find(p);
    if (it != u.queues.end()) {
      used = std::move(it->second);
      u.queues.erase(it);
    }
  }
  std::vector<catch_rt::Queue*> busy;
  for (catch_rt::Queue* q : used) {
    if (!catch_rt::queueIdle(q)) busy.push_back(q);
  }
  if (busy.empty()) {
    free_pinned_now(p);
    return;
  }
  auto remaining = std::make_shared<std::atomic<size_t>>(busy.size());
  for (catch_rt::Queue* q : busy) {
    auto st = catch_rt::launchHostFunc(q, [p, remaining] {
      if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) free_pinned_now(p);
    });
    if (st != catch_rt::Status::Success) {  // cannot defer on this queue: wait for it here instead
      catch_rt::queueSync(q);
      if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) free_pinned_now(p);
    }
  }
}

class PinnedAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    void* p = nullptr;
    if (n > 0) {
      MLU_CHECK(catch_rt::hostMalloc(n, &p));
      auto& h = host_stats_state();
      std::lock_guard<std::mutex> lk(h.mu);
      h.allocations.increase(1);
      h.allocated_bytes.increase(static_cast<int64_t>(n));
      h.num_host_alloc++;
      h.sizes[p] = n;
    }
    return {p, p, &delete_pinned, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &delete_pinned; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
};

}  // namespace

c10::DeviceAllocator* device_allocator() { return the_allocator(); }

bool is_allocator_block(const c10::DataPtr& p) { return p.get_deleter() == &delete_device_ptr; }

void empty_cache() { the_allocator()->emptyCache({0, 0}); }

void set_memory_fraction(double fraction, c10::DeviceIndex device) {
  check_device_index(device);
  TORCH_CHECK(fraction >= 0 && fraction <= 1, "Invalid fraction value: ", fraction, ". Allowed range: 0~1");
  the_allocator()->set_fraction(fraction, device);
}
double get_memory_fraction(c10::DeviceIndex device) {
  check_device_index(device);
  return the_allocator()->fraction(device);
}
void set_caching_enabled(bool on) { the_allocator()->set_caching(on); }
bool caching_enabled() { return the_allocator()->caching(); }
void record_history(bool enabled, ContextRecorder recorder, size_t max_entries, bool clear) {
  the_allocator()->set_history(enabled, recorder, max_entries, clear);
}
std::vector<BlockInfo> snapshot_blocks() { return the_allocator()->blocks(); }
std::vector<std::vector<TraceEntry>> snapshot_traces() { return the_allocator()->traces(); }

std::map<std::string, int64_t> host_stats() {
  auto& h = host_stats_state();
  std::lock_guard<std::mutex> lk(h.mu);
  std::map<std::string, int64_t> out;
  for (const char* prefix : {"allocations", "active_requests"}) {
    out[std::string(prefix) + ".current"] = h.allocations.current;
    out[std::string(prefix) + ".peak"] = h.allocations.peak;
    out[std::string(prefix) + ".allocated"] = h.allocations.allocated;
    out[std::string(prefix) + ".freed"] = h.allocations.freed;
  }
  for (const char* prefix : {"allocated_bytes", "active_bytes"}) {
    out[std::string(prefix) + ".current"] = h.allocated_bytes.current;
    out[std::string(prefix) + ".peak"] = h.allocated_bytes.peak;
    out[std::string(prefix) + ".allocated"] = h.allocated_bytes.allocated;
    out[std::string(prefix) + ".freed"] = h.allocated_bytes.freed;
  }
  out["num_host_alloc"] = h.num_host_alloc;
  out["num_host_free"] = h.num_host_free;
  return out;
}
void reset_host_stats(bool peaks_only) {
  auto& h = host_stats_state();
  std::lock_guard<std::mutex> lk(h.mu);
  if (peaks_only) {
    h.allocations.reset_peak();
    h.allocated_bytes.reset_peak();
  } else {
    h.allocations.reset_accumulated();
    h.allocated_bytes.reset_accumulated();
    h.num_host_alloc = 0;
    h.num_host_free = 0;
  }
}

c10::Allocator* host_allocator() {
  static PinnedAllocator* a = new PinnedAllocator();
  return a;
}

void record_host_use(const void* host, catch_rt::Queue* q) {
  catch_rt::PointerAttributes a;
  if (host == nullptr || q == nullptr || catch_rt::pointerGetAttributes(host, &a) != catch_rt::Status::Success ||
      a.type != catch_rt::MemoryType::PinnedHost) {
    return;
  }
  auto& u = pinned_uses();
  std::lock_guard<std::mutex> lk(u.mu);
  auto& qs = u.queues[reinterpret_cast<void*>(a.base)];
  if (std::find(qs.begin(), qs.end(), q) == qs.end()) qs.push_back(q);
}

// Device busy time (torch.mlu.utilization): nanoseconds spent in outermost host-kernel scopes, per device.
std::atomic<int64_t> g_busy_ns[kMaxDevices];
thread_local std::chrono::steady_clock::time_point tls_kernel_start;

std::atomic<KernelObserver> g_kernel_observer{nullptr};
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

int64_t create_mem_pool(bool use_on_oom) { return the_allocator()->create_pool(use_on_oom); }
void release_mem_pool(int64_t id) { the_allocator()->release_pool(id); }
std::pair<int64_t, int> exchange_thread_pool(int64_t id, int device) {
  std::pair<int64_t, int> prev{tls_pool_id, tls_pool_device};
  tls_pool_id = id;
  tls_pool_device = device;
  return prev;
}

bool adopt_host_block(c10::DataPtr& p, c10::DeviceIndex device) {
  if (p.get() == nullptr || device < 0 || device >= kMaxDevices) return false;
  c10::DeleterFnPtr deleter = p.get_deleter();
  void* dptr = catch_rt::deviceAddress(p.get(), device);
  if (deleter != kHostViewDeleters[device]) {
    // A raw_allocate'd block wrapped again with the shim's raw deleter: ask the allocator.
    if (deleter != &delete_host_view || !the_allocator()->owns(dptr)) return false;  // not ours / another device
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

// REGISTER_ALLOCATOR(PrivateUse1) equivalent, done at load time.
namespace {
struct Registrar {
  Registrar() { c10::SetAllocator(kMLU, the_allocator()); }
};
Registrar g_registrar;
}  // namespace

}  // namespace torch_mlu
