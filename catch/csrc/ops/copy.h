// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Allocation and copies of mlu tensors: empty / empty_strided on the caching allocator, copy_ between mlu and cpu
// in both directions, record_stream.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Stream.h>

#include <optional>

namespace torch_mlu {

// empty.memory_format / empty_strided for mlu: after CUDA's checks (strided layout only, no pin_memory for a device
// tensor, an existing device index), on the device given (the current one when unindexed). The first one in a
// process initializes the device (hooks.h), as CUDA's empty kernels do.
at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format);
at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory);

// copy_ for every pair involving mlu (mlu<->mlu, cpu->mlu, mlu->cpu). Plain contiguous copies are runtime memcpys
// (asynchronous on the current queue when non_blocking and the host side is pinned); others run the CPU copy kernel
// on the host views.
at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking);
at::Tensor _copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);
at::Tensor _copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst);

// aten::record_stream(Tensor(a!) self, Stream s) -> (): the storage's block is not reused before `s` passed the work
// queued so far (CUDA's record_stream_cuda; the caching allocator waits for every recorded queue when the block is
// freed).
void record_stream(at::Tensor& self, c10::Stream stream);

}  // namespace torch_mlu
