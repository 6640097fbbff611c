// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// ATen-level glue shared by the kernels and the Python module.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

#include <functional>
#include <optional>

namespace torch_mlu {

// The default generator of mlu device `device` (torch.mlu.default_generators[i]).
const at::Generator& default_generator(c10::DeviceIndex device);

// The engine a host kernel draws random numbers from for an mlu op: the CPU
// engine inside `gen` if given (it must be an mlu generator), otherwise the one
// inside the default generator of `device`. Same seed => same numbers as CPU.
at::Generator host_engine(const std::optional<at::Generator>& gen, c10::DeviceIndex device);

// Runs `fn` (a host kernel of an op without a Generator argument, e.g.
// native_dropout, whose CPU kernel draws from the default CPU generator) with
// the CPU default generator temporarily holding the state of mlu `device`'s
// default generator; the advanced state is moved back afterwards.
void with_device_rng(c10::DeviceIndex device, const std::function<void()>& fn);

// A host block a CPU kernel allocated (under HostKernelScope) as a device DataPtr of `device`: adopted without
// a copy when it is one of ours, else copied into a fresh device block of `nbytes` bytes (kernels/quantized_tensor.cpp).
c10::DataPtr to_device_block(c10::DataPtr hp, size_t nbytes, c10::DeviceIndex device);

// A fresh CPU result of a host kernel (plain or quantized; other devices and undefined tensors are returned as
// they are) as an mlu tensor of `device` owning the (adopted) buffer; a quantizer's CPU qparams move to `device`.
at::Tensor adopt_host_result(const at::Tensor& r, c10::DeviceIndex device);

// Host views of device memory (kernels/device_kernels.cpp): the host address of device storage `ds`'s bytes; a CPU
// storage over them (same bytes, no copy, not owning); a CPU tensor over host storage `hs` with the sizes, strides,
// offset, dtype and conj/neg bits of `t`. The caller keeps the device storage alive while it uses them.
void* host_address(const c10::StorageImpl& ds);
c10::Storage map_storage(const c10::StorageImpl& ds);
at::Tensor host_alias(const at::Tensor& t, c10::Storage hs);

}  // namespace torch_mlu
