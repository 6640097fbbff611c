// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "copy.h"

#include <atomic>
#include <chrono>
#include <cstring>

#include "memory.h"
#include "queue_worker.h"
#include "registry.h"

namespace catch_rt {

using detail::kMaxDevices;
using detail::kTagShift;

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

}  // namespace catch_rt
