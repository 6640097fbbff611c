// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "registry.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "device.h"

namespace catch_rt::detail {
namespace {

long long envInt(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0') ? x : fallback;
}

}  // namespace

Registry::Registry() {
  const int physical = static_cast<int>(std::clamp<long long>(envInt("MLU_VISIBLE_DEVICE_COUNT", 2), 0, kMaxDevices));
  count = visibleDeviceCount(std::getenv("MLU_VISIBLE_DEVICES"), physical);
  long long cap = envInt("CATCH_MLU_MEMORY_BYTES", 8LL << 30);
  capacity = cap > 0 ? static_cast<std::size_t>(cap) : (8ULL << 30);
}

std::size_t pageRounded(std::size_t bytes) {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

Registry& reg() {
  static Registry* r = new Registry();  // leaked: outlives static destructors
  return *r;
}

}  // namespace catch_rt::detail
