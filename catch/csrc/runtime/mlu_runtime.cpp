// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "mlu_runtime.h"

#include <algorithm>
#include <cctype>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace catch_rt {
namespace {

constexpr int kMaxDevices = 16;
constexpr int kTagShift = 56;
constexpr std::uintptr_t kAddrMask = (std::uintptr_t{1} << kTagShift) - 1;
constexpr std::size_t kAlign = 64;

long long envInt(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0') ? x : fallback;
}

// Number of devices MLU_VISIBLE_DEVICES leaves visible out of `physical`, parsed as PyTorch parses
// CUDA_VISIBLE_DEVICES (torch.cuda._parse_visible_devices + _device_count_nvml): comma-separated ordinals, each
// read as a leading (optionally signed) integer; parsing stops at the first element that is not one or is negative;
// a repeated ordinal makes the list empty; the list is cut at the first ordinal >= physical. Unset: all devices.
}  // namespace

int visibleDeviceCount(const char* v, int physical) {
  if (v == nullptr) return physical;
  std::string all(v);
  std::vector<long long> ids;
  std::size_t pos = 0;
  while (true) {
    std::size_t comma = all.find(',', pos);
    std::string elem = all.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t b = elem.find_first_not_of(" \t\n\r\f\v");
    std::size_t e = elem.find_last_not_of(" \t\n\r\f\v");
    elem = b == std::string::npos ? std::string() : elem.substr(b, e - b + 1);
    std::size_t n = 0;
    while (n < elem.size() && (std::isdigit(static_cast<unsigned char>(elem[n])) != 0 ||
                               (n == 0 && (elem[n] == '+' || elem[n] == '-')))) {
      ++n;
    }
    long long x = -1;
    if (n > 0) {
      try {
        x = std::stoll(elem.substr(0, n));
      } catch (...) {  // a lone sign, or out of range
        x = -1;
      }
    }
    if (std::find(ids.begin(), ids.end(), x) != ids.end()) return 0;
    if (x < 0) break;
    ids.push_back(x);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= physical) return static_cast<int>(i);
  }
  return static_cast<int>(ids.size());
}

namespace {

int visibleCount(int physical) { return visibleDeviceCount(std::getenv("MLU_VISIBLE_DEVICES"), physical); }

struct Allocation {
  std::size_t size;
  int device;
};

struct DeviceState {
  std::size_t used = 0;
};

struct Registry {
  std::mutex mu;
  std::map<std::uintptr_t, Allocation> device_allocs;  // key: device address
  std::map<std::uintptr_t, std::size_t> pinned;        // key: host address
  DeviceState devices[kMaxDevices];
  int count;
  std::size_t capacity;
  Registry() {
    count = visibleCount(static_cast<int>(std::clamp<long long>(envInt("MLU_VISIBLE_DEVICE_COUNT", 2), 0, kMaxDevices)));
    long long cap = envInt("CATCH_MLU_MEMORY_BYTES", 8LL << 30);
    capacity = cap > 0 ? static_cast<std::size_t>(cap) : (8ULL << 30);
  }
};

Registry& reg() {
  static Registry* r = new Registry();  // leaked: outlives static destructors
  return *r;
}

thread_local int tls_device = 0;

std::uintptr_t tagOf(int device) { return static_cast<std::uintptr_t>(device + 1) << kTagShift; }

template <class Map>
typename Map::const_iterator findContaining(const Map& m, std::uintptr_t p) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return m.end();
  --it;
  return it;
}

}  // namespace

// ---- queues -------------------------------------------------------------------
struct Queue {
  int device;
  std::mutex mu;
  std::condition_variable cv_work;
  std::condition_variable cv_idle;
  std::atomic<long> pending{0};
  std::thread worker;
  bool started = false;

  explicit Queue(int d) : device(d) {}

  // One queued item: `fn` runs in order on the worker; `on_done` (optional) runs under the queue's lock together
  // with the item's leaving the pending count, so completing a notifier and the queue's becoming idle are one step:
  // after notifierSync, queueQuery is Success when nothing was queued behind the notifier, and after queueSync
  // every notifier placed on the queue is complete (cudaEventSynchronize / cudaStreamQuery semantics).
  struct Item {
    std::function<void()> fn;
    std::function<void()> on_done;
  };
  std::deque<Item> items;

  void enqueue(std::function<void()> fn, std::function<void()> on_done = {}) {
    std::unique_lock<std::mutex> lk(mu);
    if (!started) {
      started = true;
      worker = std::thread([this] { loop(); });
      worker.detach();
    }
    pending.fetch_add(1, std::memory_order_acq_rel);
    items.push_back(Item{std::move(fn), std::move(on_done)});
    cv_work.notify_one();
  }

  void loop() {
    for (;;) {
      Item item;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv_work.wait(lk, [this] { return !items.empty(); });
        item = std::move(items.front());
        items.pop_front();
      }
      if (item.fn) item.fn();
      std::unique_lock<std::mutex> lk(mu);
      if (item.on_done) item.on_done();
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) cv_idle.notify_all();
    }
  }

  void sync() {
    if (pending.load(std::memory_order_acquire) == 0) return;
    std::unique_lock<std::mutex> lk(mu);
    cv_idle.wait(lk, [this] { return pending.load(std::memory_order_acquire) == 0; });
  }
};

namespace {
struct QueueTable {
  std::mutex mu;
  std::vector<Queue*> defaults;
  std::vector<Queue*> all;
  QueueTable() {
    for (int d = 0; d < reg().count; ++d) {
      defaults.push_back(new Queue(d));
      all.push_back(defaults.back());
    }
  }
};
QueueTable& queues() {
  static QueueTable* t = new QueueTable();
  return *t;
}

using Clock = std::chrono::steady_clock;

struct Mark {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Clock::time_point when;
  void complete() {
    std::lock_guard<std::mutex> lk(mu);
    when = Clock::now();
    done = true;
    cv.notify_all();
  }
  bool isDone() {
    std::lock_guard<std::mutex> lk(mu);
    return done;
  }
  void wait() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [this] { return done; });
  }
};
}  // namespace

struct Notifier {
  bool timing;
  std::mutex mu;
  std::shared_ptr<Mark> mark;  // latest placement; null if never placed
};

const char* statusString(Status s) {
  switch (s) {
    case Status::Success: return "success";
    case Status::InvalidDevice: return "invalid device ordinal";
    case Status::InvalidValue: return "invalid argument";
    case Status::OutOfMemory: return "out of memory";
    case Status::InvalidPointer: return "invalid pointer (freed, foreign or out of range)";
    case Status::NotReady: return "not ready";
    case Status::TimingDisabled: return "notifier created without timing";
  }
  return "unknown status";
}

int deviceCount() { return reg().count; }

Status getDevice(int* device) {
  if (device == nullptr) return Status::InvalidValue;
  *device = tls_device;
  return Status::Success;
}

Status setDevice(int device) {
  if (device < 0 || device >= reg().count) return Status::InvalidDevice;
  tls_device = device;
  return Status::Success;
}

std::size_t deviceCapacity() { return reg().capacity; }

const char* deviceName() { return "Emulated MLU (Catch)"; }

Status memGetInfo(int device, std::size_t* free_bytes, std::size_t* total_bytes) {
  auto& r = reg();
  if (device < 0 || device >= r.count) return Status::InvalidDevice;
  std::lock_guard<std::mutex> lk(r.mu);
  *total_bytes = r.capacity;
  *free_bytes = r.capacity - r.devices[device].used;
  return Status::Success;
}

Status malloc(int device, std::size_t bytes, void** dptr) {
  auto& r = reg();
  if (dptr == nullptr) return Status::InvalidValue;
  if (device < 0 || device >= r.count) return Status::InvalidDevice;
  *dptr = nullptr;
  if (bytes == 0) return Status::Success;
  std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  {
    std::lock_guard<std::mutex> lk(r.mu);
    if (r.devices[device].used + rounded > r.capacity) return Status::OutOfMemory;
    r.devices[device].used += rounded;
  }
  void* host = std::aligned_alloc(kAlign, rounded);
  std::lock_guard<std::mutex> lk(r.mu);
  if (host == nullptr) {
    r.devices[device].used -= rounded;
    return Status::OutOfMemory;
  }
  auto addr = reinterpret_cast<std::uintptr_t>(host);
  if ((addr & ~kAddrMask) != 0) {  // host address does not fit the tag scheme
    std::free(host);
    r.devices[device].used -= rounded;
    return Status::OutOfMemory;
  }
  std::uintptr_t dev_addr = addr | tagOf(device);
  r.device_allocs.emplace(dev_addr, Allocation{rounded, device});
  *dptr = reinterpret_cast<void*>(dev_addr);
  return Status::Success;
}

Status free(void* dptr) {
  if (dptr == nullptr) return Status::Success;
  auto& r = reg();
  auto key = reinterpret_cast<std::uintptr_t>(dptr);
  std::size_t size;
  int device;
  {
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.device_allocs.find(key);
    if (it == r.device_allocs.end()) return Status::InvalidPointer;
    size = it->second.size;
    device = it->second.device;
    r.device_allocs.erase(it);
    r.devices[device].used -= size;
  }
  std::free(reinterpret_cast<void*>(key & kAddrMask));
  return Status::Success;
}

Status pointerGetAttributes(const void* ptr, PointerAttributes* attrs) {
  if (attrs == nullptr) return Status::InvalidValue;
  *attrs = PointerAttributes{};
  auto& r = reg();
  auto p = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = findContaining(r.device_allocs, p);
  if (it != r.device_allocs.end() && p < it->first + it->second.size) {
    *attrs = PointerAttributes{MemoryType::Device, it->second.device, it->first, it->second.size};
    return Status::Success;
  }
  auto hit = findContaining(r.pinned, p);
  if (hit != r.pinned.end() && p < hit->first + std::max<std::size_t>(hit->second, 1)) {
    *attrs = PointerAttributes{MemoryType::PinnedHost, -1, hit->first, hit->second};
  }
  return Status::Success;
}

Status mapHost(const void* dptr, std::size_t bytes, void** host) {
  auto& r = reg();
  auto p = reinterpret_cast<std::uintptr_t>(dptr);
  if (dptr == nullptr) {
    *host = nullptr;
    return bytes == 0 ? Status::Success : Status::InvalidPointer;
  }
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = findContaining(r.device_allocs, p);
  if (it == r.device_allocs.end() || p + bytes > it->first + it->second.size) return Status::InvalidPointer;
  *host = reinterpret_cast<void*>(p & kAddrMask);
  return Status::Success;
}

void* mapHostUnchecked(const void* dptr) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(dptr) & kAddrMask);
}

void* deviceAddress(const void* host, int device) {
  if (host == nullptr) return nullptr;
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(host) | tagOf(device));
}

Status hostMalloc(std::size_t bytes, void** ptr) {
  if (ptr == nullptr) return Status::InvalidValue;
  std::size_t rounded = std::max<std::size_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign);
  void* p = std::aligned_alloc(kAlign, rounded);
  if (p == nullptr) return Status::OutOfMemory;
  auto& r = reg();
  std::lock_guard<std::mutex> lk(r.mu);
  r.pinned.emplace(reinterpret_cast<std::uintptr_t>(p), bytes);
  *ptr = p;
  return Status::Success;
}

Status hostFree(void* ptr) {
  if (ptr == nullptr) return Status::Success;
  auto& r = reg();
  {
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.pinned.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == r.pinned.end()) return Status::InvalidPointer;
    r.pinned.erase(it);
  }
  std::free(ptr);
  return Status::Success;
}

bool isPinned(const void* ptr) {
  PointerAttributes a;
  pointerGetAttributes(ptr, &a);
  return a.type == MemoryType::PinnedHost;
}

// ---- queues --------------------------------------------------------------------
Status queueCreate(int device, Queue** q) {
  if (device < 0 || device >= reg().count) return Status::InvalidDevice;
  auto& t = queues();
  std::lock_guard<std::mutex> lk(t.mu);
  t.all.push_back(new Queue(device));
  *q = t.all.back();
  return Status::Success;
}

Queue* defaultQueue(int device) {
  auto& t = queues();
  if (device < 0 || device >= static_cast<int>(t.defaults.size())) return nullptr;
  return t.defaults[device];
}

int queueDevice(const Queue* q) { return q->device; }

bool queueIdle(const Queue* q) { return q->pending.load(std::memory_order_acquire) == 0; }

Status queueQuery(Queue* q) {
  if (q == nullptr) return Status::InvalidValue;
  if (!queueIdle(q)) {
    // The worker may still hold the lock for its last item, whose notifier already woke the caller (see
    // Queue::Item): wait for that step to end, so a caller woken by the notifier never sees the queue busy.
    std::lock_guard<std::mutex> lk(q->mu);
  }
  return queueIdle(q) ? Status::Success : Status::NotReady;
}

Status queueSync(Queue* q) {
  if (q == nullptr) return Status::InvalidValue;
  q->sync();
  return Status::Success;
}

Status launchHostFunc(Queue* q, std::function<void()> fn) {
  if (q == nullptr) return Status::InvalidValue;
  q->enqueue(std::move(fn));
  return Status::Success;
}

void runInline(Queue* q, const std::function<void()>& fn) {
  if (q != nullptr) q->sync();
  fn();
}

namespace {
Status resolve(void* dst, const void* src, std::size_t bytes, MemcpyKind kind, void** hdst, const void** hsrc) {
  void* hs = nullptr;
  Status st = Status::Success;
  switch (kind) {
    case MemcpyKind::HostToDevice:
      st = mapHost(dst, bytes, hdst);
      *hsrc = src;
      break;
    case MemcpyKind::DeviceToHost:
      st = mapHost(src, bytes, &hs);
      *hsrc = hs;
      *hdst = dst;
      break;
    case MemcpyKind::DeviceToDevice:
      st = mapHost(dst, bytes, hdst);
      if (st == Status::Success) st = mapHost(src, bytes, &hs);
      *hsrc = hs;
      break;
  }
  if (st == Status::Success && bytes > 0 && (*hdst == nullptr || *hsrc == nullptr)) st = Status::InvalidPointer;
  return st;
}

// Time spent copying to or from each device's memory (copyBusyNs: torch.mlu.memory_usage).
std::atomic<std::int64_t> g_copy_ns[kMaxDevices];

int copyDevice(void* dst, const void* src, MemcpyKind kind) {
  auto p = reinterpret_cast<std::uintptr_t>(kind == MemcpyKind::DeviceToHost ? src : dst);
  return static_cast<int>(p >> kTagShift) - 1;
}

// Adds the time `move` takes to `device`'s copy-busy counter (copyBusyNs); device -1: not counted.
template <typename Move>
void timed(int device, Move&& move) {
  auto t0 = std::chrono::steady_clock::now();
  move();
  if (device >= 0 && device < kMaxDevices) {
    g_copy_ns[device].fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
        std::memory_order_relaxed);
  }
}

void timedMove(void* hd, const void* hs, std::size_t bytes, int device) {
  timed(device, [&] { std::memmove(hd, hs, bytes); });
}
}  // namespace

std::int64_t copyBusyNs(int device) {
  return device >= 0 && device < kMaxDevices ? g_copy_ns[device].load(std::memory_order_relaxed) : 0;
}

Status memcpy(void* dst, const void* src, std::size_t bytes, MemcpyKind kind) {
  if (bytes == 0) return Status::Success;
  void* hd = nullptr;
  const void* hs = nullptr;
  Status st = resolve(dst, src, bytes, kind, &hd, &hs);
  if (st != Status::Success) return st;
  timedMove(hd, hs, bytes, copyDevice(dst, src, kind));
  return Status::Success;
}

Status memcpyWith(void* dst, const void* src, std::size_t bytes, MemcpyKind kind,
                  const std::function<void(void*, const void*, std::size_t)>& move) {
  if (bytes == 0) return Status::Success;
  void* hd = nullptr;
  const void* hs = nullptr;
  Status st = resolve(dst, src, bytes, kind, &hd, &hs);
  if (st != Status::Success) return st;
  timed(copyDevice(dst, src, kind), [&] { move(hd, hs, bytes); });
  return Status::Success;
}

Status memcpyAsync(void* dst, const void* src, std::size_t bytes, MemcpyKind kind, Queue* q) {
  if (q == nullptr) return Status::InvalidValue;
  if (bytes == 0) return Status::Success;
  void* hd = nullptr;
  const void* hs = nullptr;
  Status st = resolve(dst, src, bytes, kind, &hd, &hs);
  if (st != Status::Success) return st;
  int device = copyDevice(dst, src, kind);
  q->enqueue([hd, hs, bytes, device] { timedMove(hd, hs, bytes, device); });
  return Status::Success;
}

// ---- notifiers -------------------------------------------------------------------
Status notifierCreate(Notifier** n, bool timing) {
  if (n == nullptr) return Status::InvalidValue;
  *n = new Notifier();
  (*n)->timing = timing;
  return Status::Success;
}

Status notifierDestroy(Notifier* n) {
  delete n;
  return Status::Success;
}

Status notifierPlace(Notifier* n, Queue* q) {
  if (n == nullptr || q == nullptr) return Status::InvalidValue;
  auto mark = std::make_shared<Mark>();
  {
    std::lock_guard<std::mutex> lk(n->mu);
    n->mark = mark;
  }
  if (queueIdle(q)) {
    mark->complete();
  } else {
    q->enqueue({}, [mark] { mark->complete(); });
  }
  return Status::Success;
}

namespace {
std::shared_ptr<Mark> latest(Notifier* n) {
  std::lock_guard<std::mutex> lk(n->mu);
  return n->mark;
}
}  // namespace

Status notifierQuery(Notifier* n) {
  if (n == nullptr) return Status::InvalidValue;
  auto m = latest(n);
  return (m == nullptr || m->isDone()) ? Status::Success : Status::NotReady;
}

Status notifierSync(Notifier* n) {
  if (n == nullptr) return Status::InvalidValue;
  auto m = latest(n);
  if (m != nullptr) m->wait();
  return Status::Success;
}

Status queueWaitNotifier(Queue* q, Notifier* n) {
  if (q == nullptr || n == nullptr) return Status::InvalidValue;
  auto m = latest(n);
  if (m == nullptr || m->isDone()) return Status::Success;
  q->enqueue([m] { m->wait(); });
  return Status::Success;
}

Status notifierElapsedTime(Notifier* start, Notifier* end, float* ms) {
  if (start == nullptr || end == nullptr || ms == nullptr) return Status::InvalidValue;
  if (!start->timing || !end->timing) return Status::TimingDisabled;
  auto a = latest(start);
  auto b = latest(end);
  if (a == nullptr || b == nullptr) return Status::InvalidValue;
  if (!a->isDone() || !b->isDone()) return Status::NotReady;
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return Status::Success;
}

Status deviceSynchronize(int device) {
  if (device < 0 || device >= reg().count) return Status::InvalidDevice;
  std::vector<Queue*> qs;
  {
    auto& t = queues();
    std::lock_guard<std::mutex> lk(t.mu);
    for (Queue* q : t.all)
      if (q->device == device) qs.push_back(q);
  }
  for (Queue* q : qs) q->sync();
  return Status::Success;
}

}  // namespace catch_rt
