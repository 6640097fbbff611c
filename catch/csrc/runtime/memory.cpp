// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "registry.h"

namespace catch_rt {

using detail::Allocation;
using detail::findContaining;
using detail::kAddrMask;
using detail::kAlign;
using detail::pageRounded;
using detail::reg;
using detail::tagOf;

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
  // Its own anonymous mapping (page-aligned, zeroed), so that acquireMemHandle can move it onto a shared file in
  // place.
  void* host = mmap(nullptr, pageRounded(rounded), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  std::lock_guard<std::mutex> lk(r.mu);
  if (host == MAP_FAILED) {
    r.devices[device].used -= rounded;
    return Status::OutOfMemory;
  }
  auto addr = reinterpret_cast<std::uintptr_t>(host);
  if ((addr & ~kAddrMask) != 0) {  // host address does not fit the tag scheme
    munmap(host, pageRounded(rounded));
    r.devices[device].used -= rounded;
    return Status::OutOfMemory;
  }
  std::uintptr_t dev_addr = addr | tagOf(device);
  r.device_allocs.emplace(dev_addr, Allocation{rounded, device, false, -1, false});
  *dptr = reinterpret_cast<void*>(dev_addr);
  return Status::Success;
}

Status free(void* dptr) {
  if (dptr == nullptr) return Status::Success;
  auto& r = reg();
  auto key = reinterpret_cast<std::uintptr_t>(dptr);
  Allocation a{};
  {
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.device_allocs.find(key);
    if (it == r.device_allocs.end() || it->second.adopted || it->second.imported) return Status::InvalidPointer;
    a = it->second;
    r.device_allocs.erase(it);
    r.devices[a.device].used -= a.size;
  }
  // Pages on a shared file (a mem handle was acquired) stay alive while another process maps them.
  munmap(reinterpret_cast<void*>(key & kAddrMask), pageRounded(a.size));
  if (a.fd >= 0) close(a.fd);
  return Status::Success;
}

Status adoptDeviceMemory(int device, void* host, std::size_t bytes, void** dptr) {
  auto& r = reg();
  if (dptr == nullptr || host == nullptr || bytes == 0) return Status::InvalidValue;
  if (device < 0 || device >= r.count) return Status::InvalidDevice;
  auto addr = reinterpret_cast<std::uintptr_t>(host);
  if ((addr & ~kAddrMask) != 0) return Status::InvalidValue;  // host address does not fit the tag scheme
  std::uintptr_t dev_addr = addr | tagOf(device);
  std::lock_guard<std::mutex> lk(r.mu);
  if (r.devices[device].used + bytes > r.capacity) return Status::OutOfMemory;
  auto next = r.device_allocs.lower_bound(dev_addr);
  auto prev = findContaining(r.device_allocs, dev_addr);
  bool overlaps = (next != r.device_allocs.end() && next->first < dev_addr + bytes) ||
                  (prev != r.device_allocs.end() && dev_addr < prev->first + prev->second.size);
  if (overlaps) return Status::InvalidValue;  // already device memory
  r.devices[device].used += bytes;
  r.device_allocs.emplace(dev_addr, Allocation{bytes, device, true, -1, false});
  *dptr = reinterpret_cast<void*>(dev_addr);
  return Status::Success;
}

Status releaseDeviceMemory(void* dptr, void** host) {
  auto& r = reg();
  if (host == nullptr) return Status::InvalidValue;
  auto key = reinterpret_cast<std::uintptr_t>(dptr);
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.device_allocs.find(key);
  if (it == r.device_allocs.end() || !it->second.adopted) return Status::InvalidPointer;
  r.devices[it->second.device].used -= it->second.size;
  r.device_allocs.erase(it);
  *host = reinterpret_cast<void*>(key & kAddrMask);
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

}  // namespace catch_rt
