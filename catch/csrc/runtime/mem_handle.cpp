// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "mem_handle.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <mutex>

#include "registry.h"

namespace catch_rt {

using detail::Allocation;
using detail::findContaining;
using detail::kAddrMask;
using detail::pageRounded;
using detail::reg;
using detail::tagOf;

namespace {

// Moves the pages of allocation `a` (at host address `host`) onto a new memfd mapped shared at the same address.
Status moveOntoFile(void* host, Allocation& a) {
  const std::size_t bytes = pageRounded(a.size);
  int fd = memfd_create("catch-mlu", MFD_CLOEXEC);
  if (fd < 0) return Status::OutOfMemory;
  std::size_t done = 0;
  bool ok = ftruncate(fd, static_cast<off_t>(bytes)) == 0;
  while (ok && done < bytes) {
    ssize_t n = pwrite(fd, static_cast<const char*>(host) + done, bytes - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  if (!ok || mmap(host, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    close(fd);
    return Status::OutOfMemory;
  }
  a.fd = fd;
  return Status::Success;
}

}  // namespace

Status acquireMemHandle(const void* dptr, MemHandle* handle) {
  if (handle == nullptr) return Status::InvalidValue;
  auto& r = reg();
  auto p = reinterpret_cast<std::uintptr_t>(dptr);
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = findContaining(r.device_allocs, p);
  if (dptr == nullptr || it == r.device_allocs.end() || p >= it->first + it->second.size || it->second.imported ||
      it->second.adopted) {
    return Status::InvalidPointer;
  }
  Allocation& a = it->second;
  if (a.fd < 0) {
    Status st = moveOntoFile(reinterpret_cast<void*>(it->first & kAddrMask), a);
    if (st != Status::Success) return st;
  }
  *handle = MemHandle{a.fd, p - it->first, a.size, a.device};
  return Status::Success;
}

Status mapMemHandle(const MemHandle& handle, void** dptr) {
  auto& r = reg();
  if (dptr == nullptr || handle.size == 0 || handle.offset >= handle.size) return Status::InvalidValue;
  if (handle.device < 0 || handle.device >= r.count) return Status::InvalidDevice;
  const std::size_t bytes = pageRounded(handle.size);
  // The file's size by seeking to its end: fstat would bind glibc 2.33's symbol, above the wheel's manylinux_2_28.
  off_t end = lseek(handle.fd, 0, SEEK_END);
  if (end < 0 || static_cast<std::size_t>(end) < bytes) return Status::InvalidValue;
  void* host = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, handle.fd, 0);
  if (host == MAP_FAILED) return errno == ENOMEM ? Status::OutOfMemory : Status::InvalidValue;
  auto addr = reinterpret_cast<std::uintptr_t>(host);
  if ((addr & ~kAddrMask) != 0) {  // host address does not fit the tag scheme
    munmap(host, bytes);
    return Status::OutOfMemory;
  }
  std::uintptr_t dev_addr = addr | tagOf(handle.device);
  std::lock_guard<std::mutex> lk(r.mu);
  r.device_allocs.emplace(dev_addr, Allocation{handle.size, handle.device, false, -1, true});
  *dptr = reinterpret_cast<void*>(dev_addr + handle.offset);
  return Status::Success;
}

Status unmapMemHandle(void* dptr) {
  auto& r = reg();
  auto p = reinterpret_cast<std::uintptr_t>(dptr);
  std::uintptr_t base = 0;
  std::size_t size = 0;
  {
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = findContaining(r.device_allocs, p);
    if (dptr == nullptr || it == r.device_allocs.end() || p >= it->first + it->second.size ||
        !it->second.imported) {
      return Status::InvalidPointer;
    }
    base = it->first;
    size = it->second.size;
    r.device_allocs.erase(it);
  }
  munmap(reinterpret_cast<void*>(base & kAddrMask), pageRounded(size));
  return Status::Success;
}

}  // namespace catch_rt
