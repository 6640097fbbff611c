// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// int8 inference kernels for mlu (and the same code for CPU tensors): the native half of torch_mlu.quantization.
// Only conv and linear are quantized, as in the Cambricon cnml flow:
//
//   quantize_int8:   float32 -> int8/uint8 (kernels/int8_math.h: quantize)
//   int8_mm:         int32 acc[m, n] = sum_k (a[m, k] - a_zp) * b[n, k]      (a int8/uint8, b int8)
//   int8_linear:     y[.., n] = float(acc) * (float(x_scale) * w_scale[n]) + bias[n]       (float32)
//   int8_conv2d_acc: the int32 accumulator of a conv over (x - x_zp) and w, as im2col + int8_mm
//   int8_conv2d:     that accumulator rescaled per output channel like int8_linear (NCHW float32)
//
// Weights are symmetric per output channel (zero point 0), activations per tensor with a zero point.
//
// On mlu the kernels run on the runtime's host view of the device buffers (catch_rt::mapHost), in order on the
// current queue (catch_rt::runInline), like the generic device kernels; outputs are allocated as mlu tensors. The
// ops are declared in the `torch_mlu` op namespace (torch.ops.torch_mlu.*, catch_ops.cpp) with kernels for
// PrivateUse1 and CPU.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <optional>

namespace torch_mlu {

at::Tensor quantize_int8(const at::Tensor& self, double scale, int64_t zero_point, at::ScalarType dtype);
// a: (M, K) uint8/int8, b: (N, K) int8 -> int32 (M, N).
at::Tensor int8_mm(const at::Tensor& qa, int64_t a_zero_point, const at::Tensor& qb);
// qx: (..., K), qw: (N, K) -> float32 (..., N).
at::Tensor int8_linear(const at::Tensor& qx, double x_scale, int64_t x_zero_point, const at::Tensor& qw,
                       const at::Tensor& w_scale, const std::optional<at::Tensor>& bias);
at::Tensor int8_conv2d_acc(const at::Tensor& qx, int64_t x_zero_point, const at::Tensor& qw, c10::IntArrayRef stride,
                           c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups);
at::Tensor int8_conv2d(const at::Tensor& qx, double x_scale, int64_t x_zero_point, const at::Tensor& qw,
                       const at::Tensor& w_scale, const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                       c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups);

}  // namespace torch_mlu
