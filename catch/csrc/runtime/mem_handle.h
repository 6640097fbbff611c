// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Device memory shared between processes: the emulated runtime's cnrtAcquireMemHandle / cnrtMapMemHandle /
// cnrtUnMapMemHandle (cudaIpcGetMemHandle / cudaIpcOpenMemHandle / cudaIpcCloseMemHandle).
//
// Every device allocation is its own page-aligned mapping (memory.h). Acquiring a handle moves the allocation's pages,
// in place and with their contents, onto a memfd mapped MAP_SHARED (once per allocation): its device address does not
// change. Another process maps the same file and sees the same bytes. The pages live as long as any process maps them
// or holds the file, so a producer's free() (or exit) leaves a consumer's mapping valid, and a consumer's unmap
// releases only its own view. A real CNRT handle is an opaque byte string; here the allocation is named by a file
// descriptor, which the caller passes to the other process the way descriptors travel (SCM_RIGHTS, inheritance).
#pragma once

#include <cstddef>

#include "status.h"

namespace catch_rt {

struct MemHandle {
  int fd = -1;             // the allocation's memfd, owned by the acquiring process's runtime (closed at free())
  std::size_t offset = 0;  // of the pointer the handle was acquired for, within its allocation
  std::size_t size = 0;    // bytes of the allocation
  int device = -1;
};

// The handle of the allocation holding device pointer `dptr` (malloc'ed in this process, live). Work still queued on
// the allocation's device must be synchronized first: writes made while the pages move are lost. InvalidPointer for
// a pointer that is not inside such an allocation (e.g. memory mapped from another process's handle, or adopted
// from an external allocator).
Status acquireMemHandle(const void* dptr, MemHandle* handle);
// Maps the allocation `handle` names into this process: *dptr = the address of the pointer it was acquired for, on
// device handle.device. The descriptor is not consumed (the caller closes it; the mapping outlives it). The memory
// counts toward the capacity of the process that malloc'ed it, not this one's. InvalidValue for a descriptor that
// is not such an allocation's file (or is shorter than handle.size).
Status mapMemHandle(const MemHandle& handle, void** dptr);
// Unmaps the mapping holding `dptr` (made by mapMemHandle); InvalidPointer otherwise.
Status unmapMemHandle(void* dptr);

}  // namespace catch_rt
