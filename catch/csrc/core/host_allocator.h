// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Pinned host memory (PrivateUse1HooksInterface::getPinnedMemoryAllocator), like CUDA's caching host allocator: a
// pinned block is not given back while an asynchronous copy that reads or writes it may still be pending.
#pragma once

#include <c10/core/Allocator.h>

#include <cstdint>
#include <map>
#include <string>

#include "../runtime/queue.h"

namespace torch_mlu {

c10::Allocator* host_allocator();
// Records that work queued on `q` reads or writes the pinned block holding `host` (no-op for other memory): freeing
// that block is deferred until `q` passed that work (CUDA: CachingHostAllocator_recordEvent).
void record_host_use(const void* host, catch_rt::Queue* q);
// Pinned host allocator statistics (torch.cuda.host_memory_stats keys, without the timing counters).
std::map<std::string, int64_t> host_stats();
void reset_host_stats(bool peaks_only);

}  // namespace torch_mlu
