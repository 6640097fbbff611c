// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "conv.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "conv_direct.h"
#include "conv_gemm.h"
#include "conv_geometry.h"
#include "conv_winograd.h"
#include "thread_partials.h"

namespace torch_mlu {
namespace {

constexpr int64_t kMaxTaps = 32;

// The input gradient of a stride-1 convolution is the convolution of grad_out, padded by (kh - 1 - ph, kw - 1 - pw),
// with W'[ci][co][i][j] = W[co][ci][kh - 1 - i][kw - 1 - j].
std::vector<float> flipped_transposed(const float* w, const Geometry& g) {
  std::vector<float> out(static_cast<size_t>(g.cout * g.taps()));
  const int64_t area = g.kh * g.kw;
  for (int64_t co = 0; co < g.cout; ++co) {
    for (int64_t ci = 0; ci < g.cin; ++ci) {
      const float* src = w + (co * g.cin + ci) * area;
      float* dst = out.data() + (ci * g.cout + co) * area;
      for (int64_t k = 0; k < area; ++k) dst[area - 1 - k] = src[k];
    }
  }
  return out;
}

// The three gradients on the Winograd kernels, or nullopt where a value is out of their range (winograd::forward).
std::optional<std::tuple<at::Tensor, at::Tensor, at::Tensor>> winograd_backward(const at::Tensor& grad_output,
                                                                                const at::Tensor& input,
                                                                                const at::Tensor& weight,
                                                                                const Geometry& g,
                                                                                std::array<bool, 3> output_mask) {
  const int64_t n = input.size(0);
  const auto go_contiguous = grad_output.contiguous();
  const float* go = go_contiguous.const_data_ptr<float>();
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    grad_input = at::empty(input.sizes(), input.options());
    const auto w_flipped = flipped_transposed(weight.const_data_ptr<float>(), g);
    if (!winograd::forward({n, g.cout, g.oh, g.ow, g.cin, g.kh - 1 - g.ph, g.kw - 1 - g.pw}, go, w_flipped.data(),
                           nullptr, grad_input.data_ptr<float>())) {
      return std::nullopt;
    }
  }
  if (output_mask[1]) grad_weight = at::empty(weight.sizes(), weight.options());
  if (output_mask[2]) grad_bias = at::empty({g.cout}, weight.options());
  if ((output_mask[1] || output_mask[2]) &&
      !winograd::weight_gradient({n, g.cin, g.h, g.w, g.cout, g.ph, g.pw}, input.const_data_ptr<float>(), go,
                                 output_mask[1] ? grad_weight.data_ptr<float>() : nullptr,
                                 output_mask[2] ? grad_bias.data_ptr<float>() : nullptr)) {
    return std::nullopt;
  }
  return std::make_tuple(grad_input, grad_weight, grad_bias);
}

}  // namespace

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  auto geometry = conv_geometry(input, weight, stride, padding, dilation, transposed, groups);
  const bool bias_ok = !bias.has_value() || !bias->defined() ||
                       (bias->scalar_type() == at::kFloat && bias->dim() == 1 && bias->is_contiguous() &&
                        bias->device() == input.device() && geometry && bias->size(0) == geometry->cout);
  if (!geometry || !bias_ok) {
    return at::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  }
  const Geometry g = *geometry;
  const int64_t n = input.size(0);
  auto out = at::empty({n, g.cout, g.oh, g.ow}, input.options());
  const float* in = input.const_data_ptr<float>();
  const float* w = weight.const_data_ptr<float>();
  const float* b = bias.has_value() && bias->defined() ? bias->const_data_ptr<float>() : nullptr;
  float* dst = out.data_ptr<float>();
  if (g.taps() > kMaxTaps && winograd::applies(g.kh, g.kw, g.ph, g.pw) &&
      winograd::forward({n, g.cin, g.h, g.w, g.cout, g.ph, g.pw}, in, w, b, dst)) {
    return out;
  }
  if (g.taps() > kMaxTaps) {
    gemm_conv(in, w, b, dst, n, g);
    return out;
  }
  const auto offsets = tap_offsets(g);
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> padded(static_cast<size_t>(g.padded_size()));
    for (int64_t image = begin; image < end; ++image) {
      pad_image(in + image * g.cin * g.h * g.w, padded.data(), g);
      conv_image(padded.data(), w, b, dst + image * g.cout * g.oh * g.ow, offsets.data(), g);
    }
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::OptionalIntArrayRef bias_sizes, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
    bool transposed, at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  auto geometry = conv_geometry(input, weight, stride, padding, dilation, transposed, groups);
  const bool grad_ok = geometry && grad_output.scalar_type() == at::kFloat &&
                       grad_output.device() == input.device() && grad_output.dim() == 4 &&
                       grad_output.size(0) == input.size(0) && grad_output.size(1) == geometry->cout &&
                       grad_output.size(2) == geometry->oh && grad_output.size(3) == geometry->ow;
  const bool direct = grad_ok && geometry->taps() <= kMaxTaps && !output_mask[0] && grad_output.is_contiguous();
  if (!grad_ok) {
    return at::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                    output_padding, groups, output_mask);
  }
  const Geometry g = *geometry;
  if (!direct && g.taps() > kMaxTaps && winograd::applies(g.kh, g.kw, g.ph, g.pw)) {
    if (auto grads = winograd_backward(grad_output, input, weight, g, output_mask)) return *grads;
  }
  if (!direct) return gemm_conv_backward(grad_output, input, weight, g, output_mask);
  const int64_t n = input.size(0);
  ThreadPartials partials(g.cout * g.taps() + g.cout);  // the weight then the bias gradient
  const float* in = input.const_data_ptr<float>();
  const float* go = grad_output.const_data_ptr<float>();
  const auto offsets = tap_offsets(g);
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> padded(static_cast<size_t>(g.padded_size()));
    float* mine = partials.mine();
    for (int64_t image = begin; image < end; ++image) {
      pad_image(in + image * g.cin * g.h * g.w, padded.data(), g);
      conv_weight_grad_image(padded.data(), go + image * g.cout * g.oh * g.ow, mine, mine + g.cout * g.taps(),
                             offsets.data(), g);
    }
  });
  auto grad_weight = at::empty(weight.sizes(), weight.options());
  auto grad_bias = at::empty({g.cout}, weight.options());
  const float* total = partials.total();
  std::copy_n(total, g.cout * g.taps(), grad_weight.data_ptr<float>());
  std::copy_n(total + g.cout * g.taps(), g.cout, grad_bias.data_ptr<float>());
  return {at::Tensor(), output_mask[1] ? grad_weight : at::Tensor(), output_mask[2] ? grad_bias : at::Tensor()};
}

}  // namespace torch_mlu
