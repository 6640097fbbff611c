// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Copies between host and device memory of the emulated runtime (validated, timed per device).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "queue.h"
#include "status.h"

namespace catch_rt {

enum class MemcpyKind { HostToDevice, DeviceToHost, DeviceToDevice };

Status memcpy(void* dst, const void* src, std::size_t bytes, MemcpyKind kind);
// Enqueued on `q`: the bytes move on the queue's worker thread, after the queue's earlier work.
Status memcpyAsync(void* dst, const void* src, std::size_t bytes, MemcpyKind kind, Queue* q);
// As memcpy (validated, timed), but move(host_dst, host_src, bytes) moves the bytes: e.g. the CPU copy kernel,
// parallel and vectorized, for large copies.
Status memcpyWith(void* dst, const void* src, std::size_t bytes, MemcpyKind kind,
                  const std::function<void(void*, const void*, std::size_t)>& move);
// Nanoseconds spent in copies to or from `device`'s memory (sync and async).
std::int64_t copyBusyNs(int device);

}  // namespace catch_rt
