// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "stream.h"

#include <array>
#include <mutex>
#include <vector>

#include "device.h"

namespace torch_mlu {
namespace {

constexpr int kPoolSize = 8;
constexpr int kMaxDevices = 16;

// Stream ids: 0 = the device's default queue; k > 0 = entry k-1 of the table.
struct StreamTable {
  std::mutex mu;
  std::vector<catch_rt::Queue*> queues;
  std::array<std::vector<c10::StreamId>, kMaxDevices> pool;
  std::array<unsigned, kMaxDevices> next{};
};
StreamTable& table() {
  static StreamTable* t = new StreamTable();
  return *t;
}

thread_local std::array<c10::StreamId, kMaxDevices> tls_stream{};

c10::StreamId register_queue(catch_rt::Queue* q) {
  auto& t = table();
  std::lock_guard<std::mutex> lk(t.mu);
  t.queues.push_back(q);
  return static_cast<c10::StreamId>(t.queues.size());
}

}  // namespace

catch_rt::Queue* queue_of(const c10::Stream& s) {
  if (s.id() == 0) return catch_rt::defaultQueue(s.device_index());
  auto& t = table();
  std::lock_guard<std::mutex> lk(t.mu);
  auto idx = static_cast<size_t>(s.id() - 1);
  TORCH_CHECK(idx < t.queues.size(), "MLU error: unknown stream id ", s.id());
  return t.queues[idx];
}

c10::Stream current_stream(c10::DeviceIndex d) {
  if (d < 0) d = current_device();
  check_device_index(d);
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, d), tls_stream[d]);
}

c10::StreamId current_stream_id(c10::DeviceIndex d) { return tls_stream[d]; }

catch_rt::Queue* current_queue(c10::DeviceIndex d) {
  if (d < 0) d = current_device();
  c10::StreamId id = tls_stream[d];
  return id == 0 ? catch_rt::defaultQueue(d) : queue_of(current_stream(d));
}

c10::Stream set_current_stream(const c10::Stream& s) {
  auto prev = current_stream(s.device_index());
  tls_stream[s.device_index()] = s.id();
  return prev;
}

c10::Stream new_stream(c10::DeviceIndex d) {
  check_device_index(d);
  catch_rt::Queue* q = nullptr;
  MLU_CHECK(catch_rt::queueCreate(d, &q));
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, d), register_queue(q));
}

c10::Stream pooled_stream(c10::DeviceIndex d) {
  check_device_index(d);
  auto& t = table();
  {
    std::lock_guard<std::mutex> lk(t.mu);
    if (t.pool[d].size() == kPoolSize) {
      auto id = t.pool[d][t.next[d]++ % kPoolSize];
      return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, d), id);
    }
  }
  auto s = new_stream(d);
  std::lock_guard<std::mutex> lk(t.mu);
  t.pool[d].push_back(s.id());
  return s;
}

}  // namespace torch_mlu
