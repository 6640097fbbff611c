// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// float32 GEMM on oneDNN for Catch's compiled-group kernels (attention.cpp, gemm.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_mlu {

// Whether ATen's oneDNN linear (mkldnn::_linear_pointwise) has a CPU kernel in this torch build.
bool onednn_available();

// y = x wᵀ (+ bias): x (M, K) and w (N, K) float32, each contiguous or the transpose of a contiguous matrix, bias (N) or none; y (M, N) contiguous. On oneDNN when available, else at::mm / at::addmm.
at::Tensor gemm_nt(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias = std::nullopt);

}  // namespace torch_mlu
