// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// 2-d convolution and its gradients for compiled fusion groups:
//
//   torch_mlu::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
//   torch_mlu::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
//                                   output_padding, groups, output_mask)
//
// the schemas and results of aten::convolution / aten::convolution_backward. torch_mlu.compile (kernels.py) swaps
// them in where they measure faster than ATen's. Three kernels:
// - direct (conv_direct.h), for layers with few input taps (at most kMaxTaps = Cin * kh * kw; for the backward only
//   the weight and bias gradients, as a first layer's input needs none). A first layer on one-channel images (9 taps)
//   gives oneDNN almost no reduction to block over, so it runs far below its peak there (the digits CNN's 1->16 3x3
//   convolution).
//   Here every output row is a few vector registers that take all taps before they are stored, from a zero-padded
//   copy of the image's planes.
// - Winograd F(2x2, 3x3) (conv_winograd.h) for the other 3x3 layers with padding up to 2, forward and all three
//   gradients: 16 multiplies per 2x2 outputs and channel pair instead of 36. oneDNN runs the digits CNN's 16->32
//   layer at SGEMM peak on one core (and splits it unevenly over two); Winograd needs fewer multiplies than that
//   peak allows, forward and backward. Inputs with an inf, a NaN or a value beyond 2^100 take the im2col products
//   instead (conv_winograd.h says why).
// - im2col products (conv_gemm.h) for everything else handled: per image one register-tiled matrix product
//   (tiled_product.h) per result.
//
// Handled: float32, contiguous 4-d NCHW input and weight, groups 1, stride 1, dilation 1, not transposed. Everything
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>

namespace torch_mlu {

// The schemas and results of aten::convolution / aten::convolution_backward (schemas: ops/catch_ops.cpp).
at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups);
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::OptionalIntArrayRef bias_sizes, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
    bool transposed, at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask);

}  // namespace torch_mlu
