// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The int8 math of torch_mlu's quantized kernels (ops/quantized_ops.cpp), on host pointers:
//
//   quantize:   float32 -> int8/uint8, q = clamp(round_half_even(x * (1/scale) + zero_point)), the product and sum
//               rounded once to float32 (as the FMA in ATen's CPU quantizer, fbgemm's Quantize), so the result equals
//               torch.quantize_per_tensor(...).int_repr(); from torch 2.14 on,
//               q = clamp(zero_point + round_half_even(float(x * (1/scale)))), as fbgemm there (see the loop)
//   gemm_s8:    int32 acc[m, n] = sum_k (a[m, k] - a_zp) * b[n, k]      (a int8/uint8, b int8)
//   conv_acc:   the int32 accumulator of a conv over (x - x_zp) and w, as im2col + that GEMM
//
// Products are accumulated exactly in int32, which bounds the reduction length: |a - a_zp| <= 255 and |b| <= 128,
// so K <= kMaxReduction = 65536 keeps every partial sum inside int32.
#pragma once

#include <ATen/Parallel.h>
#include <torch/headeronly/version.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace torch_mlu {
namespace {

constexpr int64_t kMaxReduction = 65536;

// ---- the int8 GEMM -------------------------------------------------------------------------
// Operands are widened to int16 with the activation zero point already subtracted (|a - za| <= 255,
// |b| <= 128): every product fits int16 x int16 -> int32 and pairs of them fit int32, the shape the
// compiler turns into pmaddwd. The dot product is built for AVX2 and for the baseline ISA and picked at
// load time (GCC function multiversioning); both give the same exact integer result.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CATCH_DOT_ATTRS __attribute__((target_clones("avx2", "default"), optimize("tree-vectorize")))
#else
#define CATCH_DOT_ATTRS
#endif

CATCH_DOT_ATTRS int32_t dot_s16(const int16_t* a, const int16_t* b, int64_t k) {
  int32_t s = 0;
  for (int64_t i = 0; i < k; ++i) s += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return s;
}

// dst[i] = src[i] - zp as int16.
template <typename T>
void widen(const T* src, int32_t zp, int16_t* dst, int64_t k) {
  for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<int16_t>(static_cast<int32_t>(src[i]) - zp);
}

// For rows m0..m1 of a (int16, row stride lda) and every row n of b (int16, N x K, stride ldb):
// emit(m, n, sum_k a[m, k] * b[n, k]), exact in int32.
template <typename Emit>
void gemm_rows(const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb, int64_t m0, int64_t m1, int64_t n,
               int64_t k, Emit&& emit) {
  for (int64_t m = m0; m < m1; ++m) {
    const int16_t* row = a + m * lda;
    for (int64_t j = 0; j < n; ++j) emit(m, j, dot_s16(row, b + j * ldb, k));
  }
}

std::vector<int16_t> widen_weights(const int8_t* w, int64_t count) {
  std::vector<int16_t> out(static_cast<size_t>(count));
  widen(w, 0, out.data(), count);
  return out;
}

// emit(m, n, acc) for acc = (a - za) @ b.T with a (M x K, uint8 when `u8`, else int8) and b (N x K) int8, rows in
// parallel.
template <typename Emit>
void gemm_s8(const void* pa, bool u8, int32_t za, const int8_t* b, int64_t M, int64_t N, int64_t K, Emit&& emit) {
  auto b16 = widen_weights(b, N * K);
  constexpr int64_t kRows = 8;
  at::parallel_for(0, (M + kRows - 1) / kRows, 1, [&](int64_t c0, int64_t c1) {
    std::vector<int16_t> rows(static_cast<size_t>(kRows * K));
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t m0 = c * kRows, m1 = std::min(M, m0 + kRows);
      for (int64_t m = m0; m < m1; ++m) {
        int16_t* dst = rows.data() + (m - m0) * K;
        if (u8) {
          widen(static_cast<const uint8_t*>(pa) + m * K, za, dst, K);
        } else {
          widen(static_cast<const int8_t*>(pa) + m * K, za, dst, K);
        }
      }
      gemm_rows(rows.data(), K, b16.data(), K, 0, m1 - m0, N, K,
                [&](int64_t m, int64_t n, int32_t acc) { emit(m0 + m, n, acc); });
    }
  });
}

// Per-channel multipliers float(x_scale) * w_scale[n], in float32 (the documented rescale).
std::vector<float> multipliers(double x_scale, const float* ws, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  const float xs = static_cast<float>(x_scale);
  for (int64_t j = 0; j < n; ++j) out[static_cast<size_t>(j)] = xs * ws[j];
  return out;
}

struct ConvGeom {
  int64_t n, c, h, w, oc, kh, kw, groups, sh, sw, ph, pw, dh, dw, oh, ow;
  int64_t cg() const { return c / groups; }
  int64_t ocg() const { return oc / groups; }
  int64_t kdim() const { return cg() * kh * kw; }
  int64_t pixels() const { return oh * ow; }
};

// im2col of one image and one group, widened to int16 with the zero point subtracted:
// cols[p, (c, i, j)] = x - zp, and 0 for taps outside the image (zero padding of the float input).
template <typename TA>
void im2col(const TA* img, const ConvGeom& g, int64_t group, int32_t zp, int16_t* cols) {
  const int64_t kdim = g.kdim();
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      int16_t* row = cols + (oy * g.ow + ox) * kdim;
      int64_t idx = 0;
      for (int64_t c = group * g.cg(); c < (group + 1) * g.cg(); ++c) {
        const TA* plane = img + c * g.h * g.w;
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t y = oy * g.sh - g.ph + i * g.dh;
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t x = ox * g.sw - g.pw + j * g.dw;
            const bool inside = y >= 0 && y < g.h && x >= 0 && x < g.w;
            row[idx++] = inside ? static_cast<int16_t>(static_cast<int32_t>(plane[y * g.w + x]) - zp) : 0;
          }
        }
      }
    }
  }
}

// Calls emit(image, out_channel, pixel, acc) for the whole convolution, images in parallel.
template <typename TA, typename Emit>
void conv_acc(const TA* x, int32_t zp, const int8_t* w, const ConvGeom& g, Emit&& emit) {
  const int64_t kdim = g.kdim(), P = g.pixels(), ocg = g.ocg();
  auto w16 = widen_weights(w, g.oc * kdim);
  at::parallel_for(0, g.n, 1, [&](int64_t n0, int64_t n1) {
    std::vector<int16_t> cols(static_cast<size_t>(P * kdim));
    for (int64_t n = n0; n < n1; ++n) {
      const TA* img = x + n * g.c * g.h * g.w;
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        im2col(img, g, gr, zp, cols.data());
        gemm_rows(cols.data(), kdim, w16.data() + gr * ocg * kdim, kdim, 0, P, ocg, kdim,
                  [&](int64_t p, int64_t oc, int32_t acc) { emit(n, gr * ocg + oc, p, acc); });
      }
    }
  });
}

// Quantizes src[0, n) into dst (int8 or uint8), with 1/scale `inv`, zero point `zp` and range [lo, hi], in parallel.
template <typename T>
void quantize(const float* src, T* dst, int64_t n, double inv, double zp, float lo, float hi) {
  at::parallel_for(0, n, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 14)
      // torch >= 2.14: the fbgemm it ships adds zero_point after rounding (fbgemm/QuantUtils.h: Quantize<T> lost
      // its LEGACY parameter, "Adding zero_point after rounding matches PyTorch behavior"), so an odd zero_point
      // no longer moves the ties: q = zp + round_half_even(float(x * (1/scale))).
      float q = static_cast<float>(zp) + std::nearbyint(src[i] * static_cast<float>(inv));
#else
      // torch 2.13: zero_point added before rounding (fbgemm's LEGACY Quantize, vectorized as a fused
      // multiply-add): float * float is exact in double; one rounding to float then matches the FMA.
      float q = std::nearbyint(static_cast<float>(static_cast<double>(src[i]) * inv + zp));
#endif
      q = std::fmin(std::fmax(q, lo), hi);  // fmax(NaN, lo) = lo: a NaN input becomes qmin, not UB
      dst[i] = static_cast<std::remove_pointer_t<decltype(dst)>>(q);
    }
  });
}

}  // namespace
}  // namespace torch_mlu
