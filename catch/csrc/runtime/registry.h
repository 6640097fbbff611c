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
  std::size_t size;
  int device;
  bool adopted = false;  // host memory of an external allocator (adoptDeviceMemory), not the runtime's own
};

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
