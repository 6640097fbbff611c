// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The geometry of the convolutions Catch's conv kernels handle (conv.h): float32, contiguous 4-d NCHW input and
// weight, groups 1, stride 1, dilation 1, not transposed; and the zero-padded image planes the kernels read.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace torch_mlu {

constexpr int64_t kRowLanes = 8;  // the direct kernels' vectors: 8 floats, a row of a small image
typedef float vf8 __attribute__((vector_size(kRowLanes * sizeof(float))));

struct Geometry {
  int64_t cin, h, w, cout, kh, kw, ph, pw, oh, ow;
  int64_t taps() const { return cin * kh * kw; }
  int64_t hp() const { return h + 2 * ph; }
  int64_t wp() const { return w + 2 * pw; }
  // the padded planes of one image, plus a vector of slack: the last chunk of a row may load past the row's end
  int64_t padded_size() const { return cin * hp() * wp() + kRowLanes; }
};

// The layer's geometry, or nullopt for a convolution outside what the kernels handle.
std::optional<Geometry> conv_geometry(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                                      at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                                      int64_t groups);
// The image's planes (cin x h x w) into `padded` (cin x hp x wp, zero borders, zeroed slack).
void pad_image(const float* in, float* padded, const Geometry& g);
// Each tap's offset in the padded planes: tap t = (c, i, j) reads padded[c][y + i][x + j] for output (y, x).
std::vector<int64_t> tap_offsets(const Geometry& g);

}  // namespace torch_mlu
