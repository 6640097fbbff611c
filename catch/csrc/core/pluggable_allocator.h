// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// A device allocator made of two user functions (torch.mlu.memory.MLUPluggableAllocator), after
// torch::cuda::CUDAPluggableAllocator:
//   void* alloc(size_t size, int device, void* queue);            // queue: the current cnrtQueue_t of `device`
//   void  free(void* ptr, size_t size, int device, void* queue);  // size, device, queue: those of the alloc
// The emulated device's memory is host memory, so alloc returns host memory (e.g. malloc's), which the runtime
// adopts as device memory of `device` while the block lives (catch_rt::adoptDeviceMemory: tensors see its tagged
// device address; the bytes count against the device's capacity). Before free, work still queued on the block's
// queue is waited for (host memory cannot be freed in queue order). There is no cache and no statistics: what
// CUDAPluggableAllocator does not support raises its error, with MLU in the name.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "block_allocator.h"

namespace torch_mlu {

class MLUPluggableAllocator final : public DeviceBlockAllocator {
 public:
  using AllocFn = void* (*)(std::size_t size, int device, void* queue);
  using FreeFn = void (*)(void* ptr, std::size_t size, int device, void* queue);

  MLUPluggableAllocator(AllocFn alloc_fn, FreeFn free_fn);

  c10::DataPtr allocate(std::size_t n) override;
  c10::DeleterFnPtr raw_deleter() const override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;
  bool initialized() override;
  void emptyCache(c10::MempoolId_t /*unused*/) override;
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override;
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  std::pair<std::size_t, std::size_t> getMemoryInfo(c10::DeviceIndex device) override;

  // alloc_fn's memory as device memory of `dev` (nullptr for 0 bytes, without calling alloc_fn); raises
  // torch.OutOfMemoryError if alloc_fn returns NULL or the device's capacity is exceeded.
  void* alloc_block(int dev, std::size_t n) override;
  bool free_block(void* dptr) override;
  bool owns(const void* dptr) override;
  const char* name() const override { return "pluggable"; }

 private:
  struct Block {
    void* host;  // what alloc_fn returned
    std::size_t size;
    int device;
    void* queue;
  };
  AllocFn alloc_fn_;
  FreeFn free_fn_;
  std::mutex mu_;
  std::unordered_map<void*, Block> live_;  // by device address
};

}  // namespace torch_mlu
