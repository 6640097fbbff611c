// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "device.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>
#include <vector>

#include "registry.h"

namespace catch_rt {

using detail::reg;

// Number of devices MLU_VISIBLE_DEVICES leaves visible out of `physical`, parsed as PyTorch parses
// CUDA_VISIBLE_DEVICES (torch.cuda._parse_visible_devices + _device_count_nvml): comma-separated ordinals, each
// read as a leading (optionally signed) integer; parsing stops at the first element that is not one or is negative;
// a repeated ordinal makes the list empty; the list is cut at the first ordinal >= physical. Unset: all devices.
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
thread_local int tls_device = 0;
}  // namespace

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

}  // namespace catch_rt
