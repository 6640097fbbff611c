// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Emulated MLU runtime: the boundary a real CNRT binding would fill.
//
// Plain C++ (no ATen). Everything above this layer talks to "device memory"
// only through this API. Device addresses are tagged, non-canonical values
// (host address + a per-device tag in the top byte), so any code that
// dereferences a device pointer directly faults instead of silently working;
// kernels reach the bytes through mapHost().
//
// Environment (read once, at first use):
//   MLU_VISIBLE_DEVICE_COUNT  number of emulated devices (default 2, 0..16)
//   CATCH_MLU_MEMORY_BYTES    capacity of each device in bytes (default 8 GiB)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace catch_rt {

enum class Status : int {
  Success = 0,
  InvalidDevice,
  InvalidValue,
  OutOfMemory,
  InvalidPointer,  // freed, foreign or out-of-range device/host pointer
  NotReady,
  TimingDisabled,
};

const char* statusString(Status s);

enum class MemcpyKind { HostToDevice, DeviceToHost, DeviceToDevice };

enum class MemoryType { Unregistered, Device, PinnedHost };

struct PointerAttributes {
  MemoryType type = MemoryType::Unregistered;
  int device = -1;
  std::uintptr_t base = 0;  // start of the allocation holding the pointer
  std::size_t size = 0;     // size of that allocation in bytes
};

// ---- devices --------------------------------------------------------------
int deviceCount();
// Devices `value` (an MLU_VISIBLE_DEVICES string, null: unset) leaves visible out of `physical`, parsed as PyTorch
// parses CUDA_VISIBLE_DEVICES.
int visibleDeviceCount(const char* value, int physical);
Status getDevice(int* device);  // per host thread, default 0
Status setDevice(int device);
std::size_t deviceCapacity();   // bytes per device
Status memGetInfo(int device, std::size_t* free_bytes, std::size_t* total_bytes);
const char* deviceName();

// ---- device memory --------------------------------------------------------
// malloc of 0 bytes yields nullptr. Exceeding the capacity returns OutOfMemory.
Status malloc(int device, std::size_t bytes, void** dptr);
// Only pointers returned by malloc (not yet freed) are accepted.
Status free(void* dptr);
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

// ---- queues (streams) and notifiers (events) --------------------------------
// A queue runs its work in submission order. Asynchronous work (memcpyAsync,
// launchHostFunc, notifier waits) runs on the queue's worker thread;
// kernels run on the submitting thread after the queue drained (runInline),
// which keeps the order without a thread hop for every small kernel.
struct Queue;
struct Notifier;

Status queueCreate(int device, Queue** q);  // queues live until process exit
Queue* defaultQueue(int device);
int queueDevice(const Queue* q);
Status queueQuery(Queue* q);  // Success when idle, NotReady otherwise
Status queueSync(Queue* q);
Status launchHostFunc(Queue* q, std::function<void()> fn);
// Waits until all earlier work on q finished, then runs fn on this thread.
void runInline(Queue* q, const std::function<void()>& fn);
bool queueIdle(const Queue* q);

Status memcpy(void* dst, const void* src, std::size_t bytes, MemcpyKind kind);
Status memcpyAsync(void* dst, const void* src, std::size_t bytes, MemcpyKind kind, Queue* q);
// As memcpy (validated, timed), but move(host_dst, host_src, bytes) moves the bytes: e.g. the CPU copy kernel,
// parallel and vectorized, for large copies.
Status memcpyWith(void* dst, const void* src, std::size_t bytes, MemcpyKind kind,
                  const std::function<void(void*, const void*, std::size_t)>& move);
// Nanoseconds spent in copies to or from `device`'s memory (sync and async).
std::int64_t copyBusyNs(int device);

Status notifierCreate(Notifier** n, bool timing);
Status notifierDestroy(Notifier* n);
Status notifierPlace(Notifier* n, Queue* q);  // "record"
Status notifierQuery(Notifier* n);            // Success when complete or never placed
Status notifierSync(Notifier* n);
Status queueWaitNotifier(Queue* q, Notifier* n);
Status notifierElapsedTime(Notifier* start, Notifier* end, float* ms);

Status deviceSynchronize(int device);

}  // namespace catch_rt
