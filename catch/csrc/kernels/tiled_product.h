// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// 16-float vectors on GCC vector extensions, and the register-tiled matrix product built on them, shared by Catch's
// attention and GEMM kernels (attention_tiled.cpp, gemm.cpp, conv_gemm.cpp). Everything here is inlined into functions
// built per ISA with CATCH_ISA_CLONES (isa_clones.h), so the same source runs as AVX-512, AVX2 or baseline code.
#pragma once

#include <cstdint>
#include <cstring>

#include "isa_clones.h"

namespace torch_mlu {
namespace {

#define CATCH_INLINE inline __attribute__((always_inline))

constexpr int64_t kLanes = 16;

// n rounded up to whole vectors: the padded width of a row that product_tile's loops read and write.
constexpr int64_t whole_vectors(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }
typedef float vf __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t vi __attribute__((vector_size(kLanes * sizeof(int32_t))));

// The helpers below pass 64-byte vectors by value; they are always inlined into the cloned row functions, so no
// call crosses an ABI boundary (GCC reports -Wpsabi for them at the end of the file, hence file-wide).
#pragma GCC diagnostic ignored "-Wpsabi"

CATCH_INLINE vf vload(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
CATCH_INLINE void vstore(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
// Every lane x (a broadcast; `vf{} + x` would add 0 first, to turn -0 into +0).
CATCH_INLINE vf vsplat(float x) {
  vf v;
  for (int64_t i = 0; i < kLanes; ++i) v[i] = x;
  return v;
}
// Loads the last n < kLanes elements of a row, the other lanes set to `fill`.
CATCH_INLINE vf vload_tail(const float* p, int64_t n, float fill) {
  float buf[kLanes];
  for (int64_t i = 0; i < kLanes; ++i) buf[i] = i < n ? p[i] : fill;
  return vload(buf);
}
CATCH_INLINE void vstore_tail(float* p, vf v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = v[i];
}
// The largest lane and the sum of the lanes.
CATCH_INLINE float hmax(vf v) {
  float m = v[0];
  for (int64_t i = 1; i < kLanes; ++i) m = v[i] > m ? v[i] : m;
  return m;
}
CATCH_INLINE float hsum(vf v) {
  float s = 0.f;
  for (int64_t i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

// ---- register-tiled products --------------------------------------------------------------------------------------
// C (+)= A B for the small products of attention heads and of linear layers: a tile of the result stays in vector
// registers for the whole reduction; each step loads one vector of B per column vector and broadcasts one element of
// A per row (A may be read along either of its strides, so Aᵀ B needs no copy). Tiles are 8 rows x 2 vectors, or,
// with AVX-512's 32 registers and A's rows contiguous, 6 rows x 4 vectors: 24 multiply-adds per 10 loads instead of
// 16, which took the attention's Q Kᵀ (reductions of 16) from 85 to 100 GFLOP/s on one core. No blocking over k:
// the callers keep each operand within a core's L2 cache.

// Stores a vector of the result as it is; an epilogue (vector_math.h's GeluStore) is another type with the same call.
struct PlainStore {
  CATCH_INLINE void operator()(float* p, vf x) const { vstore(p, x); }
};

// c[MR x NV*kLanes] (+)= A[MR x k] B[k x NV*kLanes]; A(r, p) = a[r * ar + p * ac], B(p, j) = b[p * ldb + j],
// C(r, j) = c[r * ldc + j].
// With MAX, also vmax[r * kLanes ..] <- lane-wise max(vmax row r, the tile's row r), r < MR: the caller's running
// row maxima, so that softmax needs no pass of its own to find them. Without ACC, a non-null `bias` (NV * kLanes
// floats) starts every row of the tile instead of 0: C = A B + bias. Each vector of C goes through store(address,
// value), which may apply a function on the way (an activation: C = f(A B + bias)).
template <int MR, int NV, bool ACC, bool MAX = false, class Store = PlainStore>
CATCH_INLINE void product_tile(const float* a, int64_t ar, int64_t ac, const float* b, int64_t ldb, int64_t k, float* c,
                               int64_t ldc, float* vmax = nullptr, const float* bias = nullptr,
                               const Store& store = Store{}) {
  vf acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      acc[r][v] = ACC ? vload(c + r * ldc + v * kLanes) : bias ? vload(bias + v * kLanes) : vsplat(0.f);
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    vf bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = vload(b + p * ldb + v * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const vf x = vsplat(a[r * ar + p * ac]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] += x * bv[v];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) store(c + r * ldc + v * kLanes, acc[r][v]);
  }
  if constexpr (MAX) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      vf m = vload(vmax + r * kLanes);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) m = acc[r][v] > m ? acc[r][v] : m;
      vstore(vmax + r * kLanes, m);
    }
  }
}

// One column panel of NV vectors, its rows in tiles: 6 rows x 4 vectors (24 accumulators), else 8 rows.
template <int NV, bool ACC, bool MAX, class Store>
CATCH_INLINE void product_columns(int64_t m, int64_t k, const float* a, int64_t ar, int64_t ac, const float* b,
                                  int64_t ldb, float* c, int64_t ldc, float* vmax, const float* bias,
                                  const Store& store) {
  constexpr int kRows = NV == 4 ? 6 : 8;
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows) {
    product_tile<kRows, NV, ACC, MAX, Store>(a + i * ar, ar, ac, b, ldb, k, c + i * ldc, ldc, vmax + i * kLanes,
                                             bias, store);
  }
  if constexpr (NV == 4) {
    if (i + 4 <= m) {
      product_tile<4, NV, ACC, MAX, Store>(a + i * ar, ar, ac, b, ldb, k, c + i * ldc, ldc, vmax + i * kLanes,
                                           bias, store);
      i += 4;
    }
    if (i + 2 <= m) {
      product_tile<2, NV, ACC, MAX, Store>(a + i * ar, ar, ac, b, ldb, k, c + i * ldc, ldc, vmax + i * kLanes,
                                           bias, store);
      i += 2;
    }
  }
  for (; i < m; ++i) {
    product_tile<1, NV, ACC, MAX, Store>(a + i * ar, ar, ac, b, ldb, k, c + i * ldc, ldc, vmax + i * kLanes,
                                         bias, store);
  }
}

// Whether the CPU has AVX-512's 32 vector registers, which hold a 6 x 4 tile: 24 accumulators, 4 vectors of B and a
// broadcast. With 16 registers (AVX2, where each 16-float vector takes two) tiles stay 8 rows x 2 vectors.
CATCH_INLINE bool wide_tiles() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

// C[m x n] (+)= A[m x k] B[k x n], addressed as in product_tile; n a multiple of kLanes. With MAX, vmax (m x kLanes)
// accumulates the lane-wise maxima of C's rows.
template <bool ACC, bool MAX = false, class Store = PlainStore>
CATCH_INLINE void product(int64_t m, int64_t n, int64_t k, const float* a, int64_t ar, int64_t ac, const float* b,
                          int64_t ldb, float* c, int64_t ldc, float* vmax = nullptr, const float* bias = nullptr,
                          const Store& store = Store{}) {
  int64_t j = 0;
  // Wide tiles only where A's rows are contiguous: read down the columns of a transposed A (ac > 1, a weight
  // gradient's dYᵀ), 6-row tiles measured slower than 8-row ones (64 x 512 x 256).
  const bool wide = ac == 1 && wide_tiles();
  for (; wide && j + 4 * kLanes <= n; j += 4 * kLanes) {
    product_columns<4, ACC, MAX>(m, k, a, ar, ac, b + j, ldb, c + j, ldc, vmax, bias ? bias + j : nullptr,
                                 store);
  }
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    product_columns<2, ACC, MAX>(m, k, a, ar, ac, b + j, ldb, c + j, ldc, vmax, bias ? bias + j : nullptr,
                                 store);
  }
  for (; j < n; j += kLanes) {
    product_columns<1, ACC, MAX>(m, k, a, ar, ac, b + j, ldb, c + j, ldc, vmax, bias ? bias + j : nullptr,
                                 store);
  }
}

[[maybe_unused]] CATCH_ISA_CLONES void product_set(int64_t m, int64_t n, int64_t k, const float* a, int64_t ar,
                                                   int64_t ac, const float* b, int64_t ldb, float* c, int64_t ldc) {
  product<false>(m, n, k, a, ar, ac, b, ldb, c, ldc);
}
// C = A B as product_set, and row_max[r] = max of C's row r over its n columns, r < m. vmax: scratch of m * kLanes
// floats.
[[maybe_unused]] CATCH_ISA_CLONES void product_set_row_max(int64_t m, int64_t n, int64_t k, const float* a, int64_t ar,
                                                           int64_t ac, const float* b, int64_t ldb, float* c,
                                                           int64_t ldc, float* vmax, float* row_max) {
  const vf lowest = vsplat(-__builtin_inff());
  for (int64_t r = 0; r < m; ++r) vstore(vmax + r * kLanes, lowest);
  product<false, true>(m, n, k, a, ar, ac, b, ldb, c, ldc, vmax);
  for (int64_t r = 0; r < m; ++r) row_max[r] = hmax(vload(vmax + r * kLanes));
}
// C = A B + bias, bias: n floats (n a multiple of kLanes), one per column.
[[maybe_unused]] CATCH_ISA_CLONES void product_set_bias(int64_t m, int64_t n, int64_t k, const float* a, int64_t ar,
                                                        int64_t ac, const float* b, int64_t ldb, float* c, int64_t ldc,
                                                        const float* bias) {
  product<false>(m, n, k, a, ar, ac, b, ldb, c, ldc, nullptr, bias);
}
[[maybe_unused]] CATCH_ISA_CLONES void product_add(int64_t m, int64_t n, int64_t k, const float* a, int64_t ar,
                                                   int64_t ac, const float* b, int64_t ldb, float* c, int64_t ldc) {
  product<true>(m, n, k, a, ar, ac, b, ldb, c, ldc);
}

}  // namespace
}  // namespace torch_mlu
