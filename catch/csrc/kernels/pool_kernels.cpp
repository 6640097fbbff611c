// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// 2-d max pooling with indices for compiled fusion groups:
//
//   torch_mlu::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) -> (values, indices)
//
// the schema and results of aten::max_pool2d_with_indices. torch_mlu.compile keeps that op out of Inductor's
// decompositions and swaps it for this one (kernels.py, ATEN_KERNELS). Why: Inductor lowers max pooling with indices
// to a window reduction into int8 offsets plus a pointwise conversion to int64 indices, and its C++ backend emits
// the latter as a scalar loop with a bounds check and an integer floor division per element: 197 us for the digits
// CNN's 64x32x8x8 input at 2 threads, the slowest kernel of its forward. ATen's own CPU kernel for contiguous
// (NCHW) input is slower still: 409 us on the same ReLU'd input (a scalar loop that branches on each comparison).
//
// The common case -- float32, contiguous NCHW (4-d or 3-d), no padding, dilation 1, ceil_mode false -- is one pass
// here (83 us there), parallel over planes: per output, the window's values in row-major order, keeping the first
// maximum and any NaN, exactly as ATen's cpu_max_pool (aten/src/ATen/native/cpu/MaxPoolKernel.cpp) does:
//   if (val > maxval || isnan(val)) { maxval = val; maxindex = index; }   with maxval = -inf, maxindex = the
// window's first element, so a window of -inf gives -inf at its first index and NaN wins (the last NaN's index).
// Everything else goes to ATen's kernel unchanged.
#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "isa_clones.h"

namespace torch_mlu {
namespace {

bool fast_path(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
               at::IntArrayRef dilation, bool ceil_mode) {
  if (self.scalar_type() != at::kFloat || self.device().type() != c10::DeviceType::CPU) return false;
  if ((self.dim() != 3 && self.dim() != 4) || !self.is_contiguous() || ceil_mode) return false;
  if (kernel.size() != 2 || (stride.size() != 0 && stride.size() != 2)) return false;
  for (auto p : padding) {
    if (p != 0) return false;
  }
  for (auto d : dilation) {
    if (d != 1) return false;
  }
  const int64_t h = self.size(-2), w = self.size(-1);
  const int64_t kh = kernel[0], kw = kernel[1];
  const int64_t sh = stride.empty() ? kh : stride[0], sw = stride.empty() ? kw : stride[1];
  // window offsets within a plane as int32
  return kh > 0 && kw > 0 && sh > 0 && sw > 0 && kh <= h && kw <= w && self.numel() > 0 &&
         h * w <= std::numeric_limits<int32_t>::max();
}

// Eight outputs at a time, as GCC vector extensions built for x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and the baseline
// ISA, picked at load time (CATCH_ISA_CLONES): for each window position (i, j) in
// row-major order, the eight outputs' values at that position are gathered into one vector, and the running maximum
// and its index are updated by selects. No branch depends on the data: a branch on `val > maxval` mispredicts on
// about half of the elements of real activations (after a ReLU, many windows tie at 0), which made a scalar version
// of this loop slower than ATen's kernel. `offsets[k]` is output k's first input element in its plane
// (y * sh * w + x * sw); a plane's indices are offsets within it, as ATen returns them.

constexpr int kLanes = 8;
typedef float vf8 __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t vi8 __attribute__((vector_size(kLanes * sizeof(int32_t))));

CATCH_ISA_CLONES void pool_plane(const float* in, float* out, int64_t* idx, const int32_t* offsets, int64_t count,
                                 int64_t w, int64_t kh, int64_t kw) {
  for (int64_t k0 = 0; k0 < count; k0 += kLanes) {
    const int64_t lanes = std::min<int64_t>(kLanes, count - k0);
    vi8 base;
    for (int l = 0; l < kLanes; ++l) base[l] = offsets[k0 + (l < lanes ? l : 0)];
    vf8 best = vf8{} - std::numeric_limits<float>::infinity();
    vi8 best_index = base;
    for (int64_t i = 0; i < kh; ++i) {
      for (int64_t j = 0; j < kw; ++j) {
        const int32_t d = static_cast<int32_t>(i * w + j);
        vf8 v;
        for (int l = 0; l < kLanes; ++l) v[l] = in[base[l] + d];
        const vi8 take = (v > best) | (v != v);
        best = take ? v : best;
        best_index = take ? base + d : best_index;
      }
    }
    for (int64_t l = 0; l < lanes; ++l) {
      out[k0 + l] = best[l];
      idx[k0 + l] = best_index[l];
    }
  }
}

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                           at::IntArrayRef stride, at::IntArrayRef padding,
                                                           at::IntArrayRef dilation, bool ceil_mode) {
  if (!fast_path(self, kernel_size, stride, padding, dilation, ceil_mode)) {
    return at::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode);
  }
  const int64_t h = self.size(-2), w = self.size(-1);
  const int64_t kh = kernel_size[0], kw = kernel_size[1];
  const int64_t sh = stride.empty() ? kh : stride[0], sw = stride.empty() ? kw : stride[1];
  const int64_t oh = (h - kh) / sh + 1, ow = (w - kw) / sw + 1;
  auto sizes = self.sizes().vec();
  sizes[sizes.size() - 2] = oh;
  sizes[sizes.size() - 1] = ow;
  auto values = at::empty(sizes, self.options());
  auto indices = at::empty(sizes, self.options().dtype(at::kLong));
  const int64_t planes = self.numel() / (h * w);
  const int64_t count = oh * ow;
  std::vector<int32_t> offsets(static_cast<size_t>(count));
  for (int64_t y = 0; y < oh; ++y) {
    for (int64_t x = 0; x < ow; ++x) offsets[y * ow + x] = static_cast<int32_t>(y * sh * w + x * sw);
  }
  const float* in = self.const_data_ptr<float>();
  float* out = values.data_ptr<float>();
  int64_t* idx = indices.data_ptr<int64_t>();
  // at least 16 Ki input elements per task (half of ATen's at::internal::GRAIN_SIZE, 32768)
  constexpr int64_t kGrainElems = 16384;
  const int64_t grain = std::max<int64_t>(1, kGrainElems / (h * w));
  at::parallel_for(0, planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      pool_plane(in + p * h * w, out + p * count, idx + p * count, offsets.data(), count, w, kh, kw);
    }
  });
  return {values, indices};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_mlu, m) {
  m.def(
      "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(torch_mlu, CPU, m) { m.impl("max_pool2d_with_indices", &max_pool2d_with_indices); }

}  // namespace torch_mlu
