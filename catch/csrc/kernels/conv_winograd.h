// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// 3x3 convolutions (stride 1, dilation 1) by Winograd's minimal filtering F(2x2, 3x3) (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2016): each 2x2 block of outputs from a 4x4 block of the padded
// input in 16 multiplies per channel pair instead of 36. For conv.cpp, which calls it for float32,
// contiguous NCHW tensors.
//
// Work is split into tasks of about 64 output blocks: whole small images, or bands of block rows of a large one, so
// that a task's transformed blocks stay in a core's L2 cache. (Split by whole images, 2 x 64 x 56 x 56 ran 2x slower
// than oneDNN at 2 threads; by bands, 0.55x its time: benchmarks/bench_conv.py.)
#pragma once

#include <cstdint>

namespace torch_mlu::winograd {

// A batch of images and a 3x3 convolution over them: input (n, cin, h, w), weight (cout, cin, 3, 3), padding
// (ph, pw), each at most 2; output (n, cout, h + 2 ph - 2, w + 2 pw - 2).
struct Shape {
  int64_t n, cin, h, w, cout, ph, pw;
};

// Whether a kernel of kh x kw with padding (ph, pw) is one these functions take: 3 x 3, padding 0 to 2.
bool applies(int64_t kh, int64_t kw, int64_t ph, int64_t pw);

// out (n, cout, oh, ow) <- the convolution of input with weight, plus bias (cout floats) unless null. In parallel
// over blocks of images (at::parallel_for). Returns false, with `out` undefined, when a value of input or weight is
// inf, NaN or beyond 2^100 in magnitude: the transforms add and subtract the values of a block, so an inf there would
// become NaN (inf - inf) in outputs whose windows do not hold it, where a direct convolution gives inf only in those
// whose windows do. The caller then takes another kernel. (Each image is checked as its blocks are transformed, so
// the check reads it from cache.)
bool forward(const Shape& s, const float* input, const float* weight, const float* bias, float* out);

// grad_weight (cout, cin, 3, 3) and grad_bias (cout) <- the gradients of a loss whose gradient with respect to the
// output is grad_out (n, cout, oh, ow); either may be null (not computed). Returns false, the results undefined, when
// a value of input or grad_out is out of range as for forward().
bool weight_gradient(const Shape& s, const float* input, const float* grad_out, float* grad_weight,
                     float* grad_bias);

}  // namespace torch_mlu::winograd
