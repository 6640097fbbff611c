// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// What every mlu device allocator offers beyond c10::DeviceAllocator: blocks handed out and taken back by device
// address, so the host-kernel shim (host_kernel.h) and the DataPtr deleter (current_allocator.h) work with whichever
// allocator is in use (the caching allocator or a pluggable one).
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

#include <cstddef>

namespace torch_mlu {

class DeviceBlockAllocator : public c10::DeviceAllocator {
 public:
  // A block of at least `n` bytes on device `dev` (nullptr for 0).
  virtual void* alloc_block(int dev, std::size_t n) = 0;
  // Takes back a block alloc_block handed out; false if `dptr` is not a live block of this allocator.
  virtual bool free_block(void* dptr) = 0;
  // True if `dptr` is a live block handed out by this allocator.
  virtual bool owns(const void* dptr) = 0;
  // torch.cuda.get_allocator_backend's answer for this allocator: "native" (caching) or "pluggable".
  virtual const char* name() const = 0;
};

}  // namespace torch_mlu
