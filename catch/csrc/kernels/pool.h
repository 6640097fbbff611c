// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Catch's max-pooling kernels: torch_mlu::max_pool2d_with_indices and its backward (schemas: ops/catch_ops.cpp),
// the values and indices of ATen's kernels; cases outside their fast paths go to ATen's kernels (see pool.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>

namespace torch_mlu {


std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                           at::IntArrayRef stride, at::IntArrayRef padding,
                                                           at::IntArrayRef dilation, bool ceil_mode);


at::Tensor max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                            const at::Tensor& indices);

}  // namespace torch_mlu
