// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "host_allocator.h"

#include <c10/core/CachingDeviceAllocator.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "../runtime/memory.h"
#include "device.h"

namespace torch_mlu {
namespace {

using c10::CachingAllocator::Stat;

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

}  // namespace torch_mlu
