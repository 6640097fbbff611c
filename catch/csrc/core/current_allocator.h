// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The device allocator in use (c10::GetAllocator(PrivateUse1)): the caching allocator (device_allocator.h), unless
// torch.mlu.memory.change_current_allocator swapped in another one (pluggable_allocator.h) before the first
// allocation, the rule of torch::cuda::CUDAPluggableAllocator::changeCurrentAllocator. Every device DataPtr has the
// deleter below, which gives the block back to the allocator in use: as blocks can only come from one allocator per
// process, no block outlives a swap.
#pragma once

#include <c10/core/Allocator.h>

#include <memory>

#include "block_allocator.h"

namespace torch_mlu {

DeviceBlockAllocator* device_allocator();
std::shared_ptr<DeviceBlockAllocator> current_allocator();
// Makes `a` the allocator in use; raises "Can't swap an already initialized allocator" (cuda's message) once the
// allocator in use has handed out a block.
void change_current_allocator(std::shared_ptr<DeviceBlockAllocator> a);
// The deleter of the DataPtrs device allocators hand out (context: the device address).
void delete_device_ptr(void* ctx);
// True if `p` is a live block of the allocator in use (its deleter is delete_device_ptr): its host view needs no
// validation by the runtime.
bool is_allocator_block(const c10::DataPtr& p);

}  // namespace torch_mlu
