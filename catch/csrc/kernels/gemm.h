// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Catch's matrix products for compiled fusion groups: torch_mlu::mm, addmm and linear_gelu (schemas:
// ops/catch_ops.cpp), the register-tiled product or oneDNN where they measure faster than ATen's (see gemm.cpp).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/Scalar.h>

#include <optional>
#include <tuple>

namespace torch_mlu {


at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2);


at::Tensor addmm(const at::Tensor& bias, const at::Tensor& self, const at::Tensor& mat2, const at::Scalar& beta,
                 const at::Scalar& alpha);

// that are not float32 or a bias that is not one float per output feature.
std::tuple<at::Tensor, at::Tensor> linear_gelu_reference(const at::Tensor& input, const at::Tensor& weight,
                                                         const std::optional<at::Tensor>& bias, bool derivative);

// linear and one GELU pass (linear_then_gelu); other dtypes, ATen's ops.
std::tuple<at::Tensor, at::Tensor> linear_gelu(const at::Tensor& input, const at::Tensor& weight,
                                               const std::optional<at::Tensor>& bias, bool derivative);


std::tuple<at::Tensor, at::Tensor> linear_gelu_autograd(const at::Tensor& input, const at::Tensor& weight,
                                                        const std::optional<at::Tensor>& bias, bool derivative);

}  // namespace torch_mlu
