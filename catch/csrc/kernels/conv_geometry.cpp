// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "conv_geometry.h"

#include <algorithm>

namespace torch_mlu {
namespace {

bool all_equal(at::IntArrayRef values, int64_t expected) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == expected; });
}

}  // namespace

std::optional<Geometry> conv_geometry(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                                      at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                                      int64_t groups) {
  if (input.scalar_type() != at::kFloat || weight.scalar_type() != at::kFloat) return std::nullopt;
  if (input.device().type() != c10::DeviceType::CPU || weight.device() != input.device()) return std::nullopt;
  if (input.dim() != 4 || weight.dim() != 4 || !input.is_contiguous() || !weight.is_contiguous()) return std::nullopt;
  if (transposed || groups != 1 || stride.size() != 2 || padding.size() != 2 || dilation.size() != 2) {
    return std::nullopt;
  }
  if (!all_equal(stride, 1) || !all_equal(dilation, 1) || padding[0] < 0 || padding[1] < 0) return std::nullopt;
  Geometry g{input.size(1), input.size(2), input.size(3), weight.size(0), weight.size(2), weight.size(3),
             padding[0], padding[1], 0, 0};
  g.oh = g.hp() - g.kh + 1;
  g.ow = g.wp() - g.kw + 1;
  if (weight.size(1) != g.cin || g.taps() == 0 || g.oh <= 0 || g.ow <= 0) return std::nullopt;
  if (input.size(0) == 0 || g.cout == 0) return std::nullopt;
  return g;
}

void pad_image(const float* in, float* padded, const Geometry& g) {
  std::fill(padded, padded + g.padded_size(), 0.0f);
  for (int64_t c = 0; c < g.cin; ++c) {
    for (int64_t y = 0; y < g.h; ++y) {
      std::memcpy(padded + (c * g.hp() + y + g.ph) * g.wp() + g.pw, in + (c * g.h + y) * g.w, g.w * sizeof(float));
    }
  }
}

std::vector<int64_t> tap_offsets(const Geometry& g) {
  std::vector<int64_t> offsets;
  for (int64_t c = 0; c < g.cin; ++c) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) offsets.push_back((c * g.hp() + i) * g.wp() + j);
    }
  }
  return offsets;
}

}  // namespace torch_mlu
