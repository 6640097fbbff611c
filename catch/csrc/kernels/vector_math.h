// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// Lane-wise float32 functions on the 16-float vectors of tiled_product.h: 2^x for softmax (attention_rows.cpp)
// and GELU for the epilogue of a linear layer's product (gemm.cpp). Always inlined into functions built per
// ISA with CATCH_ISA_CLONES.
#pragma once

#include "tiled_product.h"

namespace torch_mlu {
namespace {

constexpr float kLog2e = 1.44269504088896341f;

// 2^x lane-wise, for the arguments of softmax (x <= 0, up to rounding): x = n + r with n = round(x), |r| <= 1/2,
// 2^r by a degree-6 polynomial (Chebyshev interpolation on [-1/2, 1/2], relative error under 1.1e-7, below one
// float32 ulp), times 2^n built in the exponent bits. x is clamped below at -127: below -126.5 the result is 0 (the
// subnormal range flushed). With CLAMP_HIGH it is clamped above at 127 too, so that it stays 2^127; without, the
// caller guarantees x <= 0 (the forward's (x - max(x)) c: a difference that is never positive). NaN stays NaN.
// The callers fold the softmax scale and log2(e) into one multiply-add, and the reduction by whole powers of 2 needs
// neither expf's two-step ln 2 reduction nor its underflow select, so the attention forward and backward take less
// time than with expf.
template <bool CLAMP_HIGH>
CATCH_INLINE vf vexp2(vf x) {
  x = x < -127.f ? vsplat(-127.f) : x;
  if constexpr (CLAMP_HIGH) x = x > 127.f ? vsplat(127.f) : x;
  // round(x) + 127 in the low mantissa bits: 1.5 * 2^23 + 127 rounds every sum to an integer.
  constexpr float kShifter = 12582912.0f + 127.0f;
  const vf t = x + kShifter;
  const vf r = x - (t - kShifter);
  vf p = vsplat(1.5461444854736328e-4f);
  p = p * r + 1.3400427997112274e-3f;
  p = p * r + 9.618056938052177e-3f;
  p = p * r + 5.550327152013779e-2f;
  p = p * r + 2.4022650718688965e-1f;
  p = p * r + 6.931471824645996e-1f;
  p = p * r + 1.0f;
  // n + 127 into the exponent field: t's bits are 0x4B400000 + n + 127, and shifting by 23 drops the 0x4B400000
  // (its low 9 bits are zero). n = -127 gives the bits of +0.
  return p * __builtin_bit_cast(vf, __builtin_bit_cast(vi, t) << 23);
}

constexpr float kSqrtHalf = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

// GELU with erf (PyTorch's approximate="none"), gelu(h) = h / 2 (1 + erf(h / sqrt 2)), and its derivative
// gelu'(h) = (1 + erf(h / sqrt 2)) / 2 + h exp(-h^2 / 2) / sqrt(2 pi), the factor the backward multiplies the
// output gradient by (torch/_decomp/decompositions.py, gelu_backward). erf is ATen's own vectorized formula
// (ATen/cpu/vec/vec512/vec512_float.h, Vectorized<float>::erf: Abramowitz and Stegun 7.1.26, absolute error under
// 1.5e-7) with exp from vexp2, so gelu follows eager CPU's GELU to about an ulp; its exp(-z^2) is the derivative's
// exp(-h^2 / 2), so both come from one exp.
CATCH_INLINE void gelu_and_derivative(vf h, vf& gelu, vf& derivative) {
  constexpr float kP = 0.3275911f, kP1 = 0.254829592f, kP2 = -0.284496736f, kP3 = 1.421413741f, kP4 = -1.453152027f,
                  kP5 = 1.061405429f;
  const vf z = h * kSqrtHalf;
  const vf az = z < 0.f ? -z : z;
  const vf t = vsplat(1.f) / (az * kP + 1.f);
  vf r = t * kP5 + kP4;
  r = r * t + kP3;
  r = r * t + kP2;
  r = r * t + kP1;
  const vf e = vexp2<false>(z * z * -kLog2e);
  const vf erf_abs = 1.f - r * t * e;
  const vf erf = z < 0.f ? -erf_abs : erf_abs;
  const vf half_one_plus_erf = (erf + 1.f) * 0.5f;
  gelu = h * half_one_plus_erf;
  derivative = half_one_plus_erf + h * e * kInvSqrt2Pi;
}

// gelu(h) alone, where no derivative is needed, without exp: erf(z) = z P(z^2) / Q(z^2) for |z| <= 3.925 (erf is 1
// in float32 beyond), P and Q of degree 5, a rational fit by least squares to erf(z) / z on [0, 3.925], weighted by z
// and re-weighted towards the largest errors; evaluated in float32 its error is under 3.8e-7 (ATen's formula: 1.4e-7,
// and eager GELU's result 1.2e-6 from h = -8.5 to 8.5, both float64 references), in about half the instructions.
// Here P is halved: the function forms (1 + erf) / 2 directly.
CATCH_INLINE vf gelu_rational(vf h) {
  constexpr float kClamp = 3.925f;
  vf z = h * kSqrtHalf;
  z = z < -kClamp ? vsplat(-kClamp) : z;
  z = z > kClamp ? vsplat(kClamp) : z;
  const vf t = z * z;
  vf p = vsplat(1.034752647428e-06f);
  p = p * t + 1.433327846170e-04f;
  p = p * t + 1.887838786007e-03f;
  p = p * t + 2.638987953234e-02f;
  p = p * t + 9.521711554501e-02f;
  p = p * t + 5.641895306756e-01f;
  vf q = vsplat(3.838779112432e-05f);
  q = q * t + 1.167992966835e-03f;
  q = q * t + 1.498610323922e-02f;
  q = q * t + 1.141462921028e-01f;
  q = q * t + 5.021000248617e-01f;
  q = q * t + 1.0f;
  return h * (z * p / q + 0.5f);
}

// product_tile's epilogue: stores gelu(acc) at p (gelu_rational) or, when `derivative` is not null, gelu(acc) at p
// and gelu'(acc) at the same offset from `derivative` as p from `out` (gelu_and_derivative).
struct GeluStore {
  float* out;
  float* derivative;
  CATCH_INLINE void operator()(float* p, vf h) const {
    if (derivative == nullptr) {
      vstore(p, gelu_rational(h));
      return;
    }
    vf gelu, d;
    gelu_and_derivative(h, gelu, d);
    vstore(p, gelu);
    vstore(derivative + (p - out), d);
  }
};

}  // namespace
}  // namespace torch_mlu
