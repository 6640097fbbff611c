// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The runtime's process-wide state, internal to runtime/: the visible devices, their capacity and memory in use,
// and the live device and pinned allocations. Device addresses are host addresses with a per-device tag in the top
// byte (non-canonical, so a direct dereference faults).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace catch_rt::detail {

constexpr int kMaxDevices = 16;
constexpr int kTagShift = 56;
constexpr std::uintptr_t kAddrMask = (std::uintptr_t{1} << kTagShift) - 1;
constexpr std::size_t kAlign = 64;

// The tag of device `device`'s addresses.
inline std::uintptr_t tagOf(int device) { return static_cast<std::uintptr_t>(device + 1) << kTagShift; }

struct Allocation {
  std::size_t size;  // bytes; of malloc and mapMemHandle: a multiple of kAlign in a mapping of pageRounded(size)
  int device;
  bool adopted = false;  // host memory of an external allocator (adoptDeviceMemory), not the runtime's own
  int fd = -1;            // the memfd its pages live on once a mem handle was acquired for it (mem_handle.h)
  bool imported = false;  // mapped from another process's mem handle (mapMemHandle), not malloc'ed here
};

// Bytes of the page-aligned mapping that holds an allocation of `bytes` (every device allocation is its own mapping,
// so that it can be moved onto a shareable file in place).
std::size_t pageRounded(std::size_t bytes);

// The entry of `m` (keyed by start address) whose range may hold `p`: the last one starting at or below it, or end().
template <class Map>
auto findContaining(Map& m, std::uintptr_t p) -> decltype(m.begin()) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return m.end();
  return --it;
}

struct DeviceState {
  std::size_t used = 0;
};

// Read from the environment once, at first use: MLU_VISIBLE_DEVICE_COUNT (default 2, clamped to 0..16) narrowed by
// MLU_VISIBLE_DEVICES, and CATCH_MLU_MEMORY_BYTES (default 8 GiB).
struct Registry {
  std::mutex mu;
  std::map<std::uintptr_t, Allocation> device_allocs;  // key: device address
  std::map<std::uintptr_t, std::size_t> pinned;        // key: host address
  DeviceState devices[kMaxDevices];
  int count;
  std::size_t capacity;
  Registry();
};

// The one registry (leaked: it outlives static destructors).
Registry& reg();

}  // namespace catch_rt::detail
