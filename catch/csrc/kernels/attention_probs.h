// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// torch_mlu.compile (saved_probs.py) rewrites a training graph's flash-attention forward and backward into these
// when the backward can use the forward's probabilities: the forward also returns P = softmax(scale Q Kᵀ), and the
// backward starts from it instead of forming the scores and their exp again (one product of five, and the exp pass).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <tuple>

namespace torch_mlu {

std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_with_probs(const at::Tensor& q, const at::Tensor& k,
                                                                    const at::Tensor& v, std::optional<double> scale);
std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_backward_with_probs(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& out,
    const at::Tensor& probs, std::optional<double> scale);

}  // namespace torch_mlu
