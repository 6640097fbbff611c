// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Registration of the ATen ops' mlu kernels (PrivateUse1, QuantizedPrivateUse1, SparsePrivateUse1,
// SparseCsrPrivateUse1 and the fallback), apart from their implementations. What dispatch needs before any mlu
// tensor exists (empty, copies, the fallback, the quantized and sparse tensor kernels, ...) is registered statically
// at load time; the generic device kernel for the device-op list
// (device_ops.h: 739 overloads in torch 2.13) is registered at the device's initialization (core/hooks.h).
#pragma once

#include <string>
#include <vector>

namespace torch_mlu {

// Registers the device kernels of the device-op list (once; a DeviceInitStep of this file runs it).
void register_device_kernels();
// Full names ("aten::add.Tensor") of the overloads register_device_kernels registered (empty before).
const std::vector<std::string>& device_op_names();

}  // namespace torch_mlu
