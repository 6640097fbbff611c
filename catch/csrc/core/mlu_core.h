// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Core of the Catch backend over the emulated runtime: error checks, the
// caching allocator, queues as c10 streams, and the host-kernel allocation
// mode. c10-level only (no ATen includes) so it stays cheap to include.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../runtime/mlu_runtime.h"

#define MLU_CHECK(expr)                                                                       \
  do {                                                                                        \
    ::catch_rt::Status _st = (expr);                                                          \
    TORCH_CHECK(_st == ::catch_rt::Status::Success, "MLU runtime error: ",                    \
                ::catch_rt::statusString(_st), " (", #expr, ")");                             \
  } while (0)

namespace torch_mlu {

constexpr c10::DeviceType kMLU = c10::DeviceType::PrivateUse1;

// ---- devices and queues (guard.cpp) ---------------------------------------------
c10::DeviceIndex device_count();
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex d);
// Raises like CUDA ("invalid device ordinal") for an index outside [0, count).
void check_device_index(c10::DeviceIndex d);
catch_rt::Queue* queue_of(const c10::Stream& s);
c10::Stream current_stream(c10::DeviceIndex d);
c10::StreamId current_stream_id(c10::DeviceIndex d);  // no checks; d must be valid
catch_rt::Queue* current_queue(c10::DeviceIndex d);
c10::Stream set_current_stream(const c10::Stream& s);  // returns the previous one
c10::Stream new_stream(c10::DeviceIndex d);

// ---- caching allocator (allocator.cpp) -------------------------------------------
c10::DeviceAllocator* device_allocator();
// True if `p` is a live block handed out by the caching allocator (its deleter is the allocator's): its host view
// needs no validation by the runtime.
bool is_allocator_block(const c10::DataPtr& p);
void empty_cache();
// Pinned host memory (hooks: getPinnedMemoryAllocator).
c10::Allocator* host_allocator();
// Records that work queued on `q` reads or writes the pinned block holding
// `host` (no-op for other memory): freeing that block is deferred until `q`
// passed that work (CUDA: CachingHostAllocator_recordEvent).
void record_host_use(const void* host, catch_rt::Queue* q);

// While a HostKernelScope is alive on a thread, the process CPU allocator hands
// out device memory of the current device (as host views); kernels then adopt
// those buffers as device tensors without a copy.
struct HostKernelScope {
  HostKernelScope();
  ~HostKernelScope();
  HostKernelScope(const HostKernelScope&) = delete;
  HostKernelScope& operator=(const HostKernelScope&) = delete;
 private:
  bool prev_;
};
// Called (when set) as each outermost HostKernelScope ends: the device and the kernel's duration in nanoseconds
// (aten/kineto_profiler.cpp records these as mlu kernel activity while a Kineto session runs).
using KernelObserver = void (*)(c10::DeviceIndex device, int64_t ns);
void set_kernel_observer(KernelObserver observer);
// Converts a DataPtr produced under HostKernelScope into a device DataPtr.
// Returns false (leaving `p` untouched) if `p` is not such a buffer.
bool adopt_host_block(c10::DataPtr& p, c10::DeviceIndex device);
void install_cpu_allocator_shim();

// ---- allocator controls and introspection (allocator.cpp; torch.mlu.memory) ----------
// Per-process fraction of a device's capacity the allocator may reserve (torch.cuda semantics: a request that would
// take reserved memory above fraction * capacity frees the cache, then raises OutOfMemoryError).
void set_memory_fraction(double fraction, c10::DeviceIndex device);
double get_memory_fraction(c10::DeviceIndex device);
// false: freed blocks go back to the runtime at once (torch.cuda.caching_allocator_enable).
void set_caching_enabled(bool on);
bool caching_enabled();
// Memory history (torch.cuda.memory._record_memory_history): `recorder` (may be null) captures the context of each
// event (Python stack); entries beyond `max_entries` per device drop the oldest.
using ContextRecorder = std::shared_ptr<c10::GatheredContext> (*)();
void record_history(bool enabled, ContextRecorder recorder, size_t max_entries, bool clear);
struct BlockInfo {
  int device;
  uintptr_t addr;
  size_t size;       // reserved bytes (one block per segment: the allocator does not split)
  size_t requested;  // bytes asked for (0 when cached)
  bool allocated;
  int64_t stream;
  std::shared_ptr<c10::GatheredContext> context;
  int64_t pool;  // 0: default pool; else the MemPool id
};
struct TraceEntry {
  const char* action;  // alloc, free_requested, free_completed, segment_alloc, segment_free, oom
  uintptr_t addr;
  size_t size;
  int64_t stream;
  int64_t time_us;
  std::shared_ptr<c10::GatheredContext> context;
};
std::vector<BlockInfo> snapshot_blocks();
std::vector<std::vector<TraceEntry>> snapshot_traces();  // one list per device
// Pinned host allocator statistics (torch.cuda.host_memory_stats keys, without the timing counters).
std::map<std::string, int64_t> host_stats();
void reset_host_stats(bool peaks_only);
// Private pools (torch.mlu.MemPool): blocks allocated while a thread uses pool `id` on a device are cached in that
// pool and reused only by its users; releasing the pool frees its cached blocks. use_on_oom pools lend cached
// blocks to the default pool when the device is out of memory.
int64_t create_mem_pool(bool use_on_oom);
void release_mem_pool(int64_t id);
// Makes pool `id` (0: default) serve this thread's allocations on `device`; returns the previous (id, device).
std::pair<int64_t, int> exchange_thread_pool(int64_t id, int device);
// Nanoseconds device kernels of `device` have run (outermost HostKernelScopes), for torch.mlu.utilization.
int64_t device_busy_ns(c10::DeviceIndex device);

// ---- device kernels and fallback accounting (kernels/device_kernels.cpp) -------------
// Registers the generic device kernel for every overload of the kDeviceOps list (once).
void register_device_kernels();
const std::vector<std::string>& device_op_names();
// Calls made on this thread that took a typed device kernel's common path (add/sub/mul/div.Tensor and in-place
// forms), for tests: the rest of those calls ran the generic kernel.
int64_t typed_kernel_calls();
std::map<std::string, int64_t> fallback_report();  // "aten::op.overload" -> calls
void reset_fallback_report();
bool fallback_strict();  // CATCH_FALLBACK_STRICT=1 or set_fallback_strict(true)
void set_fallback_strict(bool on);

}  // namespace torch_mlu
