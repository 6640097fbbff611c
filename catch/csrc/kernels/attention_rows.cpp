// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "attention_rows.h"

#include <cmath>
#include <cstdint>

#include <xmmintrin.h>

#include "isa_clones.h"
#include "tiled_product.h"
#include "vector_math.h"

namespace torch_mlu {
namespace {

constexpr float kLn2 = 0.693147180559945309417232121458f;

// The natural log-sum-exp of a row, scale * mx + ln(sum), from its maximum mx and exp_row_shifted's sum, in one
// rounding: where ln(sum) is below half an ulp of scale * mx it is exactly the backward's rounded scale * s for the
// row's maximum s, so P's largest value comes out as exp(0) = 1 however large the scores (as in ATen's flash kernels).
// In float: glibc's double log2 carries a GLIBC_2.29 symbol version, above the manylinux_2_28 baseline
// (test_fixes_symbols.py).
float row_lse(float sum, float mx, float scale) { return std::fma(mx, scale, kLn2 * std::log2(sum)); }

// log2(x) lane-wise for positive normal finite x: x = 2^e m with m in [1/sqrt 2, sqrt 2), and
// log2 m = (2 / ln 2) atanh(t), t = (m - 1) / (m + 1), |t| <= 0.1716, by its odd series up to t^9 (the next term is
// under 1.1e-9). Other lanes give garbage; callers take them to std::log2.
CATCH_INLINE vf vlog2(vf x) {
  const vi bits = __builtin_bit_cast(vi, x);
  vi e = (bits >> 23) - 127;
  vf m = __builtin_bit_cast(vf, (bits & 0x7FFFFF) | 0x3F800000);
  const auto big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1 : e;
  const vf t = (m - 1.f) / (m + 1.f), t2 = t * t;
  vf p = vsplat(0.32059889797547596f);  // 2 / (9 ln 2), then 2 / (7 ln 2), ... 2 / ln 2
  p = p * t2 + 0.41219858311113244f;
  p = p * t2 + 0.57707801635558537f;
  p = p * t2 + 0.96179669392597560f;
  p = p * t2 + 2.88539008177792681f;
  return __builtin_convertvector(e, vf) + t * p;
}


}  // namespace

// max(x[0..n)), NaN skipped.
CATCH_ISA_CLONES float row_max(const float* x, int64_t n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t full = n - n % kLanes;
  vf vm = vsplat(ninf);
  for (int64_t j = 0; j < full; j += kLanes) {
    const vf v = vload(x + j);
    vm = v > vm ? v : vm;
  }
  if (full < n) {
    const vf v = vload_tail(x + full, n - full, ninf);
    vm = v > vm ? v : vm;
  }
  return hmax(vm);
}

// x[0..n) <- exp(scale * (x - mx)), not normalized, where mx = max(x) (row_max, or the tiled product's row maxima);
// returns their sum, so that the row's log-sum-exp is row_lse(sum, mx, scale). scale > 0. The argument is formed as
// (x - mx) log2(e) scale, a difference that is never positive, rather than as x c - mx c, which is off by the
// rounding of mx c: more than 127 once that passes 2^31, and exp then overflowed.
CATCH_ISA_CLONES float exp_row_shifted(float* x, int64_t n, float scale, float mx) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t full = n - n % kLanes;
  const float c = scale * kLog2e;
  vf vs = vsplat(0.f);
  for (int64_t j = 0; j < full; j += kLanes) {
    const vf e = vexp2<false>((vload(x + j) - mx) * c);
    vstore(x + j, e);
    vs += e;
  }
  if (full < n) {
    const vf e = vexp2<false>((vload_tail(x + full, n - full, ninf) - mx) * c);
    vstore_tail(x + full, e, n - full);
    vs += e;
  }
  return hsum(vs);
}

// lse[r * stride] = row_lse(sums[r], maxes[r], scale) for r < m, the log2 of 16 rows at a time (vlog2; std::log2 for
// sums that are not positive normal finite floats: 0, inf or NaN rows). sums and maxes hold whole vectors of rows
// (m rounded up to kLanes).
CATCH_ISA_CLONES void block_lse(int64_t m, const float* sums, const float* maxes, float scale, float* lse,
                                int64_t stride) {
  for (int64_t r0 = 0; r0 < m; r0 += kLanes) {
    const vf ln_sums = vlog2(vload(sums + r0)) * kLn2;
    for (int64_t i = 0; i < kLanes && r0 + i < m; ++i) {
      const float sum = sums[r0 + i];
      const bool normal = sum >= std::numeric_limits<float>::min() && sum <= std::numeric_limits<float>::max();
      lse[(r0 + i) * stride] = normal ? std::fma(maxes[r0 + i], scale, ln_sums[i]) : row_lse(sum, maxes[r0 + i], scale);
    }
  }
}

// x[0..n) <- softmax(scale * x); returns the log-sum-exp of scale * x. scale > 0.
CATCH_ISA_CLONES float softmax_row(float* x, int64_t n, float scale) {
  const float mx = row_max(x, n);
  const float sum = exp_row_shifted(x, n, scale, mx);
  const float inv = 1.f / sum;
  const int64_t full = n - n % kLanes;
  for (int64_t j = 0; j < full; j += kLanes) vstore(x + j, vload(x + j) * inv);
  for (int64_t j = full; j < n; ++j) x[j] *= inv;
  return row_lse(sum, mx, scale);
}

// One row of the backward's row pass, from the scores s and dP: p <- P = exp(scale * s - lse), the argument formed
// as (scale * s - lse) log2(e), scale * s rounded first as in row_lse, and
// dp <- dS = P * (dP - d) * scale, where d = rowsum(dO * O).
CATCH_ISA_CLONES void probs_and_grad_scores_row(float* p, float* dp, int64_t n, float scale, float lse, float d) {
  const int64_t full = n - n % kLanes;
  for (int64_t j = 0; j < full; j += kLanes) {
    const vf e = vexp2<true>((vload(p + j) * scale - lse) * kLog2e);
    vstore(p + j, e);
    vstore(dp + j, e * (vload(dp + j) - d) * scale);
  }
  if (full < n) {
    const int64_t rest = n - full;
    const vf e = vexp2<true>((vload_tail(p + full, rest, 0.f) * scale - lse) * kLog2e);
    vstore_tail(p + full, e, rest);
    vstore_tail(dp + full, e * (vload_tail(dp + full, rest, 0.f) - d) * scale, rest);
  }
}

// One row of the backward's row pass from the saved P: dp <- dS = P * (dP - d) * scale, where d = rowsum(dO * O).
CATCH_ISA_CLONES void grad_scores_row(const float* p, float* dp, int64_t n, float scale, float d) {
  const int64_t full = n - n % kLanes;
  for (int64_t j = 0; j < full; j += kLanes) vstore(dp + j, vload(p + j) * (vload(dp + j) - d) * scale);
  for (int64_t j = full; j < n; ++j) dp[j] = p[j] * (dp[j] - d) * scale;
}

// dst[r * n + 0..n) <- src[r * n + 0..n) * f[r] for r < m, with non-temporal stores (SSE's movntps, in every
// x86-64 baseline): dst is written past the caches, without reading its lines in first; n a multiple of 4, dst
// 16-byte aligned. The caller issues _mm_sfence before another thread reads dst.
void stream_rows(int64_t m, int64_t n, const float* f, const float* src, float* dst) {
  for (int64_t r = 0; r < m; ++r) {
    const __m128 fr = _mm_set1_ps(f[r]);
    for (int64_t j = 0; j < n; j += 4) _mm_stream_ps(dst + r * n + j, _mm_mul_ps(_mm_loadu_ps(src + r * n + j), fr));
  }
}

// o[r * ldo + 0..n) *= f[r] for r < m.
CATCH_ISA_CLONES void scale_rows(int64_t m, int64_t n, const float* f, float* o, int64_t ldo) {
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < n; ++j) o[r * ldo + j] *= f[r];
  }
}

}  // namespace torch_mlu
