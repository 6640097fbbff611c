// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// mlu storages shared between processes (torch.multiprocessing) on the runtime's memory handles: what
// torch/csrc/StorageSharing.cpp's _share_cuda_ and _new_shared_cuda do for cuda storages on CUDA IPC handles.
#pragma once

#include <c10/core/Storage.h>

#include <cstddef>

#include "../runtime/mem_handle.h"

namespace torch_mlu {

// The handle of mlu storage `storage`'s memory (offset: of the storage's data in its allocation). Waits for the
// device's queued work first (the receiver then sees the finished bytes: cuda sends an event for this) and marks the
// caching allocator's block so that it is never reused in this process. Raises cuda's error for a storage received
// from another process (torch/csrc/StorageSharing.cpp) and a runtime error for an empty storage.
catch_rt::MemHandle share_storage(const c10::Storage& storage);
// A storage of `nbytes` bytes on the memory `handle` names, mapped into this process until the storage dies; not
// resizable (as cuda's received storages). Raises for a device index out of range or a range past the allocation.
c10::Storage open_shared_storage(const catch_rt::MemHandle& handle, std::size_t nbytes);

}  // namespace torch_mlu
