// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// 2-d max pooling with indices, for eager mlu tensors and compiled fusion groups:
//
//   torch_mlu::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) -> (values, indices)
//
// the schema and results of aten::max_pool2d_with_indices (its backward is ATen's kernel). Eager mlu calls of
// max_pool2d_with_indices run it as their device kernel (ops/redirects.h), and torch_mlu.compile keeps the op out of
// Inductor's decompositions and swaps it for this one (kernels.py, ATEN_KERNELS). Why: ATen's CPU kernel for
// contiguous (NCHW) input is a scalar loop that branches on each comparison, and Inductor lowers max pooling with
// indices to a window reduction into int8 offsets plus a pointwise conversion to int64 indices, which its C++ backend
// emits as a scalar loop with a bounds check and an integer floor division per element. benchmarks/bench_host_math.py
// measures this kernel against ATen's on the demos' pooling layers; tests/backend/test_host_math.py checks it against
// ATen's on adversarial inputs.
//
// The common case -- float32, contiguous NCHW (4-d or 3-d), no padding, dilation 1, ceil_mode false -- is one pass
// here, parallel over planes: per output, the window's values in row-major order, keeping the first
// maximum and any NaN, exactly as ATen's cpu_max_pool (aten/src/ATen/native/cpu/MaxPoolKernel.cpp) does:
//   if (val > maxval || isnan(val)) { maxval = val; maxindex = index; }   with maxval = -inf, maxindex = the
// window's first element, so a window of -inf gives -inf at its first index and NaN wins (the last NaN's index).
// 2x2 windows at stride 2 on even planes (nn.MaxPool2d(2)) load whole rows instead (pool_plane_2x2).
// Everything else goes to ATen's kernel unchanged.
#include "pool.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
typedef int64_t vl8 __attribute__((vector_size(kLanes * sizeof(int64_t))));

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

// The even / odd elements of the sixteen floats lo, hi (a deinterleave: one shuffle each). Macros, not functions:
// a function returning a vector type changes the ABI between the ISA clones.
#if defined(__clang__)
#define CATCH_EVENS(lo, hi) __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14)
#define CATCH_ODDS(lo, hi) __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15)
#else
#define CATCH_EVENS(lo, hi) __builtin_shuffle(lo, hi, vi8{0, 2, 4, 6, 8, 10, 12, 14})
#define CATCH_ODDS(lo, hi) __builtin_shuffle(lo, hi, vi8{1, 3, 5, 7, 9, 11, 13, 15})
#endif

// 2x2 windows at stride 2 on planes of even height and width (the CNN case: nn.MaxPool2d(2)), eight outputs at a
// time from contiguous loads: `row0` / `row1` hold the sixteen inputs of the eight windows' top / bottom rows, left
// and right elements interleaved; the candidates are compared in the windows' row-major order with the same rule as
// pool_plane, so values and indices are ATen's. `first` is each output's top-left input index within its plane.
inline void pool_2x2(const float* row0, const float* row1, const int32_t* first, int32_t w, float* out,
                     int64_t* idx) {
  vi8 base;
  std::memcpy(&base, first, sizeof(vi8));
  vf8 top_lo, top_hi, bottom_lo, bottom_hi;
  std::memcpy(&top_lo, row0, sizeof(vf8));
  std::memcpy(&top_hi, row0 + kLanes, sizeof(vf8));
  std::memcpy(&bottom_lo, row1, sizeof(vf8));
  std::memcpy(&bottom_hi, row1 + kLanes, sizeof(vf8));
  const vf8 top_left = CATCH_EVENS(top_lo, top_hi), top_right = CATCH_ODDS(top_lo, top_hi);
  const vf8 bottom_left = CATCH_EVENS(bottom_lo, bottom_hi), bottom_right = CATCH_ODDS(bottom_lo, bottom_hi);
  vf8 best = vf8{} - std::numeric_limits<float>::infinity();
  vi8 best_index = base;
  const vf8 candidates[4] = {top_left, top_right, bottom_left, bottom_right};
  const int32_t shifts[4] = {0, 1, w, w + 1};
  for (int c = 0; c < 4; ++c) {
    const vf8 v = candidates[c];
    const vi8 take = (v > best) | (v != v);
    best = take ? v : best;
    best_index = take ? base + shifts[c] : best_index;
  }
  const vl8 wide_index = __builtin_convertvector(best_index, vl8);
  std::memcpy(out, &best, sizeof(vf8));
  std::memcpy(idx, &wide_index, sizeof(vl8));
}

// Eight outputs of 2x2 pooling on planes of width W = 2 * OW (OW = 1, 2 or 4): rows y .. y + 8 / OW - 1 of the output,
// the top rows of their windows copied to row0, the bottom rows to row1 (sizes known at compile time).
template <int64_t OW>
inline void pool_2x2_narrow(const float* in, float* out, int64_t* idx, int64_t y) {
  constexpr int64_t w = 2 * OW, pairs = kLanes / OW;
  float row0[2 * kLanes], row1[2 * kLanes];
  int32_t first[kLanes];
  for (int64_t p = 0; p < pairs; ++p) {
    std::memcpy(row0 + p * w, in + 2 * (y + p) * w, w * sizeof(float));
    std::memcpy(row1 + p * w, in + (2 * (y + p) + 1) * w, w * sizeof(float));
  }
  for (int l = 0; l < kLanes; ++l) first[l] = static_cast<int32_t>(2 * (y + l / OW) * w + 2 * (l % OW));
  pool_2x2(row0, row1, first, static_cast<int32_t>(w), out + y * OW, idx + y * OW);
}

// One plane of 2x2 / stride-2 pooling, h and w even. Output rows of at least eight (w % 16 == 0) go eight outputs
// at a time along the row; narrower planes (w = 2, 4 or 8, with a multiple of eight outputs per plane) take the
// eight outputs from 8 / (w / 2) consecutive row pairs.
CATCH_ISA_CLONES void pool_plane_2x2(const float* in, float* out, int64_t* idx, int64_t h, int64_t w) {
  const int64_t oh = h / 2, ow = w / 2;
  if (ow % kLanes == 0) {
    float row0[2 * kLanes], row1[2 * kLanes];
    int32_t first[kLanes];
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; x += kLanes) {
        const float* top = in + 2 * y * w + 2 * x;
        std::memcpy(row0, top, sizeof(row0));
        std::memcpy(row1, top + w, sizeof(row1));
        for (int l = 0; l < kLanes; ++l) first[l] = static_cast<int32_t>(2 * y * w + 2 * x + 2 * l);
        pool_2x2(row0, row1, first, static_cast<int32_t>(w), out + y * ow + x, idx + y * ow + x);
      }
    }
    return;
  }
  const int64_t pairs = kLanes / ow;  // output rows per eight outputs
  for (int64_t y = 0; y < oh; y += pairs) {
    if (ow == 4) {
      pool_2x2_narrow<4>(in, out, idx, y);
    } else if (ow == 2) {
      pool_2x2_narrow<2>(in, out, idx, y);
    } else {
      pool_2x2_narrow<1>(in, out, idx, y);
    }
  }
}

// Planes per parallel task: at least 16 Ki input elements (half of ATen's at::internal::GRAIN_SIZE, 32768).
int64_t plane_grain(int64_t plane_elems) {
  constexpr int64_t kGrainElems = 16384;
  return std::max<int64_t>(1, kGrainElems / plane_elems);
}

bool two_by_two(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw) {
  if (kh != 2 || kw != 2 || sh != 2 || sw != 2 || h % 2 != 0 || w % 2 != 0) return false;
  const int64_t oh = h / 2, ow = w / 2;
  return ow % kLanes == 0 || ((ow == 1 || ow == 2 || ow == 4) && (oh * ow) % kLanes == 0);
}

}  // namespace

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
  const bool fast_2x2 = two_by_two(h, w, kh, kw, sh, sw);
  std::vector<int32_t> offsets(fast_2x2 ? 0 : static_cast<size_t>(count));  // the general loop's window starts
  if (!fast_2x2) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) offsets[y * ow + x] = static_cast<int32_t>(y * sh * w + x * sw);
    }
  }
  const float* in = self.const_data_ptr<float>();
  float* out = values.data_ptr<float>();
  int64_t* idx = indices.data_ptr<int64_t>();
  at::parallel_for(0, planes, plane_grain(h * w), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      if (fast_2x2) {
        pool_plane_2x2(in + p * h * w, out + p * count, idx + p * count, h, w);
      } else {
        pool_plane(in + p * h * w, out + p * count, idx + p * count, offsets.data(), count, w, kh, kw);
      }
    }
  });
  return {values, indices};
}

}  // namespace torch_mlu
