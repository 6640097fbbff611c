// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Catch's max-pooling kernel: torch_mlu::max_pool2d_with_indices (schema: ops/catch_ops.cpp), the values and indices
// of ATen's kernel; cases outside its fast path go to ATen's kernel (see pool.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>

namespace torch_mlu {

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                           at::IntArrayRef stride, at::IntArrayRef padding,
                                                           at::IntArrayRef dilation, bool ceil_mode);

}  // namespace torch_mlu
