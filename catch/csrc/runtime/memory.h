// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Device memory of the emulated runtime, with a capacity per device and validated pointers, and pinned host memory.
//
// Everything above the runtime talks to device memory only through this API. Device addresses are tagged,
// non-canonical values (host address + a per-device tag in the top byte), so any code that dereferences a device
// pointer directly faults instead of silently working; kernels reach the bytes through mapHost().
#pragma once

#include <cstddef>
#include <cstdint>

#include "status.h"

namespace catch_rt {

enum class MemoryType { Unregistered, Device, PinnedHost };

struct PointerAttributes {
  MemoryType type = MemoryType::Unregistered;
  int device = -1;
  std::uintptr_t base = 0;  // start of the allocation holding the pointer
  std::size_t size = 0;     // size of that allocation in bytes
};

// ---- device memory --------------------------------------------------------
// malloc of 0 bytes yields nullptr. Exceeding the capacity returns OutOfMemory. Each allocation is its own
// page-aligned mapping, which mem_handle.h can share with other processes.
Status malloc(int device, std::size_t bytes, void** dptr);
// Only pointers returned by malloc (not yet freed) are accepted, not memory mapped by mapMemHandle.
Status free(void* dptr);
// Device memory from an external allocator (torch.mlu.memory.MLUPluggableAllocator): the emulated device's memory
// is host memory, so [host, host + bytes) becomes memory of `device` (counted against its capacity: OutOfMemory
// beyond it) until releaseDeviceMemory; *dptr is its device address. The runtime never frees it itself.
Status adoptDeviceMemory(int device, void* host, std::size_t bytes, void** dptr);
// Ends an adoption (only device addresses from adoptDeviceMemory); *host is the memory to give back to its owner.
Status releaseDeviceMemory(void* dptr, void** host);
Status pointerGetAttributes(const void* ptr, PointerAttributes* attrs);
// Host view of a live device range [dptr, dptr + bytes): validated.
Status mapHost(const void* dptr, std::size_t bytes, void** host);
// Host view without validation: for hot paths that already hold a live block.
void* mapHostUnchecked(const void* dptr);
// Inverse of mapHostUnchecked for a host address inside device `device`'s memory.
void* deviceAddress(const void* host, int device);

// ---- pinned host memory -----------------------------------------------------
Status hostMalloc(std::size_t bytes, void** ptr);
Status hostFree(void* ptr);
bool isPinned(const void* ptr);

}  // namespace catch_rt
