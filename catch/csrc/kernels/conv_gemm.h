// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Each image's convolution as one matrix product on the register-tiled loops of tiled_product.h (im2col), with P =
// oh * ow outputs and T = cin * kh * kw taps, rows padded to whole 16-float vectors:
//   forward:         out (cout x P) = W (cout x T) col (T x P), where col[t][y * ow + x] is tap t's padded input
//                    for output (y, x)
//   input gradient:  dcol (T x P) = Wᵀ (T x cout) grad_out (cout x P), then col2im
//   weight gradient: dWᵀ (T x cout) += col (T x P) grad_outᵀ (P x cout), summed over the images
// (gemm_conv_backward).
// The products run at the machine's SGEMM peak; im2col, col2im and the transposes are the cost on top of them.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <tuple>

#include "conv_geometry.h"

namespace torch_mlu {

// The forward of `images` images of input `in` into `dst` (n x cout x oh x ow), in parallel over the images; bias
// may be null.
void gemm_conv(const float* in, const float* w, const float* bias, float* dst, int64_t images, const Geometry& g);

// The three gradients, per image (in parallel over the images):
//   input:  dcol (T x P) = Wᵀ (T x cout) grad_out (cout x P), then col2im into the padded planes, cropped
//   weight: dWᵀ (T x cout) += col (T x P) grad_outᵀ (P x cout), a partial sum per thread, summed at the end
//   bias:   likewise, as one more row of that product: col's last row is ones
std::tuple<at::Tensor, at::Tensor, at::Tensor> gemm_conv_backward(const at::Tensor& grad_output,
                                                                  const at::Tensor& input, const at::Tensor& weight,
                                                                  const Geometry& g, std::array<bool, 3> output_mask);

}  // namespace torch_mlu
