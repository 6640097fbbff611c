// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The generic device kernel: a boxed kernel that runs an op's ATen CPU kernel on the device buffers (host_call.h),
// for every overload of the device-op list (device_ops.h) and the redirects (redirects.h).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/Device.h>

#include <cstddef>

namespace torch_mlu {

// Finds the op's mlu device among the `n` arguments at stack[begin..) and refuses CUDA-incompatible device mixes:
// tensors on two mlu devices, or an mlu tensor with a non-scalar CPU tensor. CPU tensors inside index lists
// (Tensor?[]) are allowed, as on CUDA. Without mlu arguments: a Device argument's index, else the current device.
c10::DeviceIndex op_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack, size_t begin, size_t n);

// The host computation of a device kernel, run on the stack of host views.
using HostFn = void (*)(const c10::OperatorHandle&, torch::jit::Stack*);

// The op's CPU kernel (redispatch to the CPU key).
void redispatch_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Runs `call` on the op's arguments turned into host views (mlu tensors, tensor lists, Tensor?[] lists, storages;
// mlu Device arguments become cpu, Generator? arguments the mlu generator's CPU engine), then turns the results
// into mlu tensors.
void run_device_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack, HostFn call);

// The boxed kernel registered for the device ops: run_device_kernel with the op's CPU kernel.
void device_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);

}  // namespace torch_mlu
