// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// float32 matrix products for compiled fusion groups: torch_mlu::mm and torch_mlu::addmm take the arguments of
// aten::mm / aten::addmm and return the same (M, N) contiguous result. torch_mlu.compile (kernels.py) puts them in
// place of the ATen ops in the graphs Inductor compiles, where the ATen ops would be extern calls to MKL's SGEMM.
//
// Products whose right operand has contiguous rows or columns run in Catch's register-tiled loops (tiled_product.h;
// see worth_tiled), a column-major one (a linear layer's Wᵀ) packed into rows first and addmm's bias starting the
// accumulators. Other products of at least kMinMacs multiply-adds run on oneDNN (ATen's mkldnn::_linear_pointwise,
// y = x wᵀ + b), whose JIT-generated code uses AVX-512 wherever the CPU has it; MKL takes its AVX2 path on non-Intel
// CPUs, so on those oneDNN is up to twice as fast for these shapes (benchmarks/bench_compile.py measures the
// effect). Smaller products, other dtypes, and addmm with a bias that is not one value per output column or with
// beta/alpha other than 1 stay on ATen: oneDNN's fixed cost per call (about 10 us) outweighs its speed there.
#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "isa_clones.h"
#include "onednn_gemm.h"
#include "tiled_product.h"

namespace torch_mlu {
namespace {

constexpr int64_t kMinMacs = int64_t{1} << 20;

using LinearPointwise = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                   c10::string_view, c10::List<std::optional<at::Scalar>>,
                                   std::optional<c10::string_view>);

const c10::TypedOperatorHandle<LinearPointwise>* onednn_linear() {
  static const std::optional<c10::TypedOperatorHandle<LinearPointwise>> op =
      []() -> std::optional<c10::TypedOperatorHandle<LinearPointwise>> {
    auto handle = c10::Dispatcher::singleton().findSchema({"mkldnn::_linear_pointwise", ""});
    if (!handle.has_value() || !handle->hasKernelForDispatchKey(c10::DispatchKey::CPU)) return std::nullopt;
    return handle->typed<LinearPointwise>();
  }();
  return op.has_value() ? &*op : nullptr;
}

bool is_float_matrix(const at::Tensor& t) {
  return t.dim() == 2 && t.scalar_type() == at::kFloat && t.device().type() == c10::DeviceType::CPU;
}

bool worth_onednn(const at::Tensor& a, const at::Tensor& b) {
  if (!is_float_matrix(a) || !is_float_matrix(b) || !onednn_available()) return false;
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  return m > 0 && k > 0 && n > 0 && b.size(0) == k && m * k * n >= kMinMacs;
}

// oneDNN reads row-major and column-major operands (a weight gradient's Xᵀ, a linear's Wᵀ) in place at full speed;
// other layouts (slices with padded rows, broadcast strides) are copied first: oneDNN runs them far slower.
at::Tensor row_or_column_major(const at::Tensor& t) {
  return t.is_contiguous() || t.t().is_contiguous() ? t : t.contiguous();
}

bool is_one(const at::Scalar& s) { return !s.isComplex() && s.toDouble() == 1.0; }

// Products for Catch's register-tiled loops (tiled_product.h): B's rows contiguous (a layer's weight or input as it
// is: the backward's dX = dY W and dW = dYᵀ X) or, in products of at least kMinMacs multiply-adds, its columns (a
// linear's forward, X Wᵀ: packed by pack_rows, 3 us for 64 x 256 on one thread; at 2 threads the packed copy also
// has to reach the other core, and 64 x 64 x 10 took 14 us against ATen's 8), B (k x n padded to whole vectors)
// within kMaxPackedFloats (1 MiB, a core's L2 on the AMD EPYC it was measured on), which every row tile of A streams
// past. Measured against MKL's SGEMM at 2 threads: 0.6-0.8x its time from 64 x 10 x 64 to 512 x 512 x 256,
// 0.86-0.89x at 1024 x 1024 x 256; the transformer block's forward
// linears (512 x 64 x 64 to 512 x 256 x 64, Wᵀ packed) 0.86-0.93x, with the bias 0.86-0.94x of MKL's addmm
// (which copies the bias into its result first; benchmarks/README.md, issue 21, session 15).
constexpr int64_t kMaxPackedFloats = int64_t{1} << 18;

bool worth_tiled(const at::Tensor& a, const at::Tensor& b) {
  if (!is_float_matrix(a) || !is_float_matrix(b)) return false;
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  const int64_t np = whole_vectors(n);
  const bool packed_columns = b.stride(0) == 1 && m * k * n >= kMinMacs;  // packing B pays only on larger products
  return m > 0 && k > 0 && n > 0 && b.size(0) == k && (b.stride(1) == 1 || n == 1 || packed_columns) &&
         k * np <= kMaxPackedFloats;
}

// The 16 x 16 block of floats at src (row stride lds) transposed into dst (row stride ldd), in registers: four
// butterfly stages, each pairing rows b apart (b = 8, 4, 2, 1) and swapping their off-diagonal b x b blocks.
CATCH_ISA_CLONES void transpose_block(const float* src, int64_t lds, float* dst, int64_t ldd) {
  vf r[kLanes];
#pragma GCC unroll 16
  for (int i = 0; i < kLanes; ++i) r[i] = vload(src + i * lds);
#pragma GCC unroll 4
  for (int b = 8; b >= 1; b /= 2) {
    vi lo, hi;  // lane l of the lower row: its own l, or lane l - b of the upper row; the upper row's mirror
    for (int l = 0; l < kLanes; ++l) {
      lo[l] = (l & b) == 0 ? l : kLanes + l - b;
      hi[l] = (l & b) == 0 ? l + b : kLanes + l;
    }
#pragma GCC unroll 16
    for (int i = 0; i < kLanes; ++i) {
      if ((i & b) != 0) continue;
      const vf x = r[i], y = r[i + b];
      r[i] = __builtin_shuffle(x, y, lo);
      r[i + b] = __builtin_shuffle(x, y, hi);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kLanes; ++i) vstore(dst + i * ldd, r[i]);
}

// b (k, n) float32 with rows or columns contiguous -> dst (k, np) row-major, columns n..np zero. A column-major b
// (a linear layer's weight W (n, k) as Wᵀ) is transposed in 16 x 16 blocks (transpose_block), the edges element by
// element.
void pack_rows(const at::Tensor& b, int64_t np, float* dst) {
  const int64_t k = b.size(0), n = b.size(1), s0 = b.stride(0), s1 = b.stride(1);
  const float* src = b.const_data_ptr<float>();
  if (np != n) {
    for (int64_t p = 0; p < k; ++p) std::fill(dst + p * np + n, dst + (p + 1) * np, 0.f);
  }
  if (s1 == 1 || n == 1) {
    for (int64_t p = 0; p < k; ++p) std::copy(src + p * s0, src + p * s0 + n, dst + p * np);
    return;
  }
  // column-major: b(p, j) = src[p + j * s1]
  const int64_t kf = k - k % kLanes, nf = n - n % kLanes;
  for (int64_t j0 = 0; j0 < nf; j0 += kLanes) {
    for (int64_t p0 = 0; p0 < kf; p0 += kLanes) transpose_block(src + j0 * s1 + p0, s1, dst + p0 * np + j0, np);
  }
  for (int64_t p = 0; p < k; ++p) {
    const int64_t j_start = p < kf ? nf : 0;
    for (int64_t j = j_start; j < n; ++j) dst[p * np + j] = src[p + j * s1];
  }
}

// a (m, k) @ b (k, n) (+ bias (n)), (m, n) contiguous. a is read in place along its strides; b is used in place when
// its rows are contiguous whole vectors, else packed (pack_rows). The bias starts the accumulators.
at::Tensor tiled_mm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& bias) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  const int64_t np = whole_vectors(n);
  at::Tensor packed = b;
  if (np != n || b.stride(1) != 1) {
    packed = at::empty({k, np}, b.options());
    pack_rows(b, np, packed.data_ptr<float>());
  }
  at::Tensor padded_bias;  // the bias as np contiguous floats (in place when it is)
  if (bias.has_value()) {
    if (np == n && bias->is_contiguous()) {
      padded_bias = *bias;
    } else {
      padded_bias = at::zeros({np}, a.options());
      padded_bias.narrow(0, 0, n).copy_(*bias);
    }
  }
  auto out = at::empty({m, np}, a.options());
  const float* ap = a.const_data_ptr<float>();
  const float* bp = packed.const_data_ptr<float>();
  const float* biasp = bias.has_value() ? padded_bias.const_data_ptr<float>() : nullptr;
  float* cp = out.data_ptr<float>();
  const int64_t ar = a.stride(0), ac = a.stride(1), ldb = packed.stride(0);
  // Rows split between threads in units of 8: whole 8-row tiles, or 6-row ones and a 4- or 2-row tile at the end.
  constexpr int64_t kRowTile = 8;
  at::parallel_for(0, (m + kRowTile - 1) / kRowTile, 1, [&](int64_t begin, int64_t end) {
    const int64_t i0 = begin * kRowTile, rows = std::min(end * kRowTile, m) - i0;
    if (biasp != nullptr) {
      product_set_bias(rows, np, k, ap + i0 * ar, ar, ac, bp, ldb, cp + i0 * np, np, biasp);
    } else {
      product_set(rows, np, k, ap + i0 * ar, ar, ac, bp, ldb, cp + i0 * np, np);
    }
  });
  return np == n ? out : out.narrow(1, 0, n).contiguous();
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  if (worth_tiled(self, mat2)) return tiled_mm(self, mat2, std::nullopt);
  if (!worth_onednn(self, mat2)) return at::mm(self, mat2);
  return gemm_nt(row_or_column_major(self), row_or_column_major(mat2.t()));
}

at::Tensor addmm(const at::Tensor& bias, const at::Tensor& self, const at::Tensor& mat2, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  const bool plain_bias = bias.dim() == 1 && bias.scalar_type() == at::kFloat && mat2.dim() == 2 &&
                          bias.size(0) == mat2.size(1) && bias.device() == self.device();
  if (plain_bias && is_one(beta) && is_one(alpha) && worth_tiled(self, mat2)) return tiled_mm(self, mat2, bias);
  if (!plain_bias || !is_one(beta) || !is_one(alpha) || !worth_onednn(self, mat2)) {
    return at::addmm(bias, self, mat2, beta, alpha);
  }
  return gemm_nt(row_or_column_major(self), row_or_column_major(mat2.t()), bias.contiguous());
}

}  // namespace

bool onednn_available() { return onednn_linear() != nullptr; }

at::Tensor gemm_nt(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias) {
  if (const auto* op = onednn_linear()) {
    return op->call(x, w, bias, "none", c10::List<std::optional<at::Scalar>>(), std::nullopt);
  }
  return bias.has_value() ? at::addmm(*bias, x, w.t()) : at::mm(x, w.t());
}

TORCH_LIBRARY_FRAGMENT(torch_mlu, m) {
  // flexible_layout: the kernels take operands of any strides, so Inductor need not convert its buffers' layouts.
  m.def("mm(Tensor self, Tensor mat2) -> Tensor", {at::Tag::flexible_layout});
  m.def("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        {at::Tag::flexible_layout});
}

TORCH_LIBRARY_IMPL(torch_mlu, CPU, m) {
  m.impl("mm", &mm);
  m.impl("addmm", &addmm);
}

}  // namespace torch_mlu
