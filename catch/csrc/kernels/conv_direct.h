// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The direct convolution kernels, for layers with few input taps (Cin * kh * kw): every output row is a few vector
// registers that take all taps before they are stored, from a zero-padded copy of the image's planes
// (conv_geometry.h: pad_image, tap_offsets).
#pragma once

#include <cstdint>

#include "conv_geometry.h"

namespace torch_mlu {

// One image's output (cout x oh x ow): blocks of kRows rows x eight outputs accumulate all taps in four vector
// registers before they are stored (named accumulators: an array of them stays in memory at -O2); the rows left
// over go one at a time. Geometry is copied to locals: the stores through `out` could alias it.
void conv_image(const float* padded, const float* weight, const float* bias, float* out,
                const int64_t* offsets, const Geometry& geometry);

// One image's contribution to the weight gradient (cout x taps, accumulated into grad_weight) and the bias gradient
// (cout, into grad_bias): per output channel, four taps at a time, each with a vector accumulator over the
// channel's output plane (outputs past the last whole vector of a row one by one). Geometry is copied to locals.
void conv_weight_grad_image(const float* padded, const float* grad_out, float* grad_weight,
                            float* grad_bias, const int64_t* offsets, const Geometry& geometry);

}  // namespace torch_mlu
