// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Device kernels that run another host computation than the op's own CPU kernel: the device's random engine for
// ops drawing from the default CPU generator, aten::convolution for the Overrideable convolution pair, Catch's
// max-pooling kernel, and the fused-SDPA choice.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <optional>

namespace torch_mlu {

// Ops whose CPU kernel draws from the default CPU generator (no Generator argument), e.g. native_dropout.
void implicit_rng_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);

// convolution_overrideable(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
// runs aten::convolution (same arguments) on the host views.
void convolution_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);

// convolution_backward_overrideable(grad_output, input, weight, stride, padding, dilation, transposed,
// output_padding, groups, output_mask) -> aten::convolution_backward, which also takes bias_sizes.
void convolution_backward_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);

// max_pool2d_with_indices (the functional overload) runs Catch's kernel (torch_mlu::max_pool2d_with_indices, same
// schema, ATen's values and indices) on the host views.
void max_pool2d_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);

// mlu's entry of _fused_sdp_choice_stub: CPU's rules (_fused_sdp_choice_cpp).
int64_t mlu_fused_sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                             const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                             std::optional<double> scale, bool enable_gqa);

}  // namespace torch_mlu
