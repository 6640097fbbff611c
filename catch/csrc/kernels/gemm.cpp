// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// float32 matrix products for compiled fusion groups: torch_mlu::mm and torch_mlu::addmm take the arguments of
// aten::mm / aten::addmm and return the same (M, N) contiguous result. torch_mlu.compile (kernels.py) puts them in
// place of the ATen ops in the graphs Inductor compiles, where the ATen ops would be extern calls to MKL's SGEMM.
// torch_mlu::linear_gelu, a linear layer and GELU in one product (torch_mlu.compile.linear_gelu puts it in Dynamo's
// graph), is at the end of the file.
//
// Products whose right operand has contiguous rows or columns run in Catch's register-tiled loops (tiled_product.h;
// see worth_tiled), a column-major one (a linear layer's Wᵀ) packed into rows first and addmm's bias starting the
// accumulators. Other products of at least kMinMacs multiply-adds run on oneDNN (ATen's mkldnn::_linear_pointwise,
// y = x wᵀ + b), whose JIT-generated code uses AVX-512 wherever the CPU has it; MKL takes its AVX2 path on non-Intel
// CPUs, so on those oneDNN is up to twice as fast for these shapes (benchmarks/bench_compile.py measures the
// effect). Smaller products, other dtypes, and addmm with a bias that is not one value per output column or with
// beta/alpha other than 1 stay on ATen: oneDNN's fixed cost per call outweighs its speed there.
#include "gemm.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <tuple>

#include "isa_clones.h"
#include "onednn_gemm.h"
#include "tiled_product.h"
#include "vector_math.h"

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
// linear's forward, X Wᵀ: packed by pack_rows; below kMinMacs the packing costs more than it saves, the more so at
// 2 threads, where the packed copy also has to reach the other core), B (k x n padded to whole vectors) within
// kMaxPackedFloats (1 MiB, a core's L2 on the AMD EPYC it was measured on), which every row tile of A streams past.
// Measured against MKL's SGEMM at 2 threads, these loops take less time from 64 x 10 x 64 to 1024 x 1024 x 256, also
// for the transformer block's forward linears (Wᵀ packed) and with the bias against MKL's addmm (which copies the
// bias into its result first).
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

// C = gelu(A B + bias) as product_set_bias, and D = gelu'(A B + bias) laid out as C when d is not null (GeluStore).
CATCH_ISA_CLONES void product_set_bias_gelu(int64_t m, int64_t n, int64_t k, const float* a, int64_t ar, int64_t ac,
                                            const float* b, int64_t ldb, float* c, int64_t ldc, const float* bias,
                                            float* d) {
  product<false, false, GeluStore>(m, n, k, a, ar, ac, b, ldb, c, ldc, nullptr, bias, GeluStore{c, d});
}

// a (m, k) @ b (k, n) (+ bias (n)), (m, n) contiguous. a is read in place along its strides; b is used in place when
// its rows are contiguous whole vectors, else packed (pack_rows). The bias starts the accumulators. With `gelu` the
// result is gelu(a b + bias), and a non-null `gelu_derivative` is then set to gelu'(a b + bias), (m, n) contiguous.
at::Tensor tiled_mm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& bias, bool gelu = false,
                    at::Tensor* gelu_derivative = nullptr) {
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
  at::Tensor deriv = gelu && gelu_derivative != nullptr ? at::empty({m, np}, a.options()) : at::Tensor();
  float* dp = deriv.defined() ? deriv.data_ptr<float>() : nullptr;
  const float* ap = a.const_data_ptr<float>();
  const float* bp = packed.const_data_ptr<float>();
  const float* biasp = bias.has_value() ? padded_bias.const_data_ptr<float>() : nullptr;
  float* cp = out.data_ptr<float>();
  const int64_t ar = a.stride(0), ac = a.stride(1), ldb = packed.stride(0);
  // Rows split between threads in units of 8: whole 8-row tiles, or 6-row ones and a 4- or 2-row tile at the end.
  constexpr int64_t kRowTile = 8;
  at::parallel_for(0, (m + kRowTile - 1) / kRowTile, 1, [&](int64_t begin, int64_t end) {
    const int64_t i0 = begin * kRowTile, rows = std::min(end * kRowTile, m) - i0;
    if (gelu) {
      product_set_bias_gelu(rows, np, k, ap + i0 * ar, ar, ac, bp, ldb, cp + i0 * np, np, biasp,
                            dp != nullptr ? dp + i0 * np : nullptr);
    } else if (biasp != nullptr) {
      product_set_bias(rows, np, k, ap + i0 * ar, ar, ac, bp, ldb, cp + i0 * np, np, biasp);
    } else {
      product_set(rows, np, k, ap + i0 * ar, ar, ac, bp, ldb, cp + i0 * np, np);
    }
  });
  if (deriv.defined()) *gelu_derivative = np == n ? deriv : deriv.narrow(1, 0, n).contiguous();
  return np == n ? out : out.narrow(1, 0, n).contiguous();
}

}  // namespace

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

// linear_gelu on ATen's ops: the mlu kernel (eager mlu and the debug modes' reference), and the CPU one for inputs
// that are not float32 or a bias that is not one float per output feature.
std::tuple<at::Tensor, at::Tensor> linear_gelu_reference(const at::Tensor& input, const at::Tensor& weight,
                                                         const std::optional<at::Tensor>& bias, bool derivative) {
  const auto h = at::linear(input, weight, bias);
  auto out = at::gelu(h);
  if (!derivative) return {out, at::empty({0}, input.options())};
  const auto half_one_plus_erf = at::mul(at::add(at::erf(at::mul(h, M_SQRT1_2)), 1), 0.5);
  const auto pdf = at::mul(at::exp(at::mul(at::mul(h, h), -0.5)), kInvSqrt2Pi);
  return {out, at::add(half_one_plus_erf, at::mul(h, pdf))};
}

namespace {

// out[0..n) = gelu(h[0..n)) and, when derivative is not null, derivative[0..n) = gelu'(h[0..n)) (GeluStore).
CATCH_ISA_CLONES void gelu_pass(int64_t n, const float* h, float* out, float* derivative) {
  const GeluStore store{out, derivative};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(out + i, vload(h + i));
  if (i < n) {
    float o[kLanes], d[kLanes];
    const GeluStore tail{o, derivative != nullptr ? d : nullptr};
    tail(o, vload_tail(h + i, n - i, 0.f));
    std::copy(o, o + (n - i), out + i);
    if (derivative != nullptr) std::copy(d, d + (n - i), derivative + i);
  }
}

// linear_gelu's float32 CPU path for products the tiled loops do not take: ATen's linear, then GELU (and its
// derivative) in one pass instead of ATen's elementwise ops one by one, each of which is a pass over the result.
std::tuple<at::Tensor, at::Tensor> linear_then_gelu(const at::Tensor& input, const at::Tensor& weight,
                                                    const std::optional<at::Tensor>& bias, bool derivative) {
  const auto h = at::linear(input, weight, bias).contiguous();
  auto out = at::empty_like(h);
  auto d = derivative ? at::empty_like(h) : at::empty({0}, input.options());
  const float* hp = h.const_data_ptr<float>();
  float* op = out.data_ptr<float>();
  float* dp = derivative ? d.data_ptr<float>() : nullptr;
  constexpr int64_t kGrain = 1 << 14;  // floats per task: a few microseconds of GELU
  at::parallel_for(0, h.numel(), kGrain, [&](int64_t begin, int64_t end) {
    gelu_pass(end - begin, hp + begin, op + begin, dp != nullptr ? dp + begin : nullptr);
  });
  return {out, d};
}

}  // namespace

// torch_mlu::linear_gelu(input (..., k), weight (n, k), bias (n) or None, derivative) -> (gelu(input weightᵀ + bias)
// (..., n), gelu'(input weightᵀ + bias) (..., n) with `derivative`, else an empty tensor): a linear layer followed by
// GELU (approximate="none"), as one product whose tiles go through GELU on their way out of the registers
// (GeluStore) instead of a second pass over the result, and with the derivative the backward multiplies the
// output gradient by (torch_mlu.compile.linear_gelu). Where the tiled loops do not apply (worth_tiled), ATen's
// linear and one GELU pass (linear_then_gelu); other dtypes, ATen's ops.
std::tuple<at::Tensor, at::Tensor> linear_gelu(const at::Tensor& input, const at::Tensor& weight,
                                               const std::optional<at::Tensor>& bias, bool derivative) {
  TORCH_CHECK(input.dim() >= 1 && weight.dim() == 2 && input.size(-1) == weight.size(1),
              "torch_mlu::linear_gelu: input (..., k) and weight (n, k) expected, got ", input.sizes(), " and ",
              weight.sizes());
  const int64_t n = weight.size(0);
  const bool plain_bias = !bias.has_value() || (bias->dim() == 1 && bias->scalar_type() == at::kFloat &&
                                                bias->size(0) == n && bias->device() == input.device());
  const bool float32 = input.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat;
  if (!plain_bias || !float32) return linear_gelu_reference(input, weight, bias, derivative);
  const auto x = input.reshape({-1, input.size(-1)});
  const auto wt = weight.t();
  if (!worth_tiled(x, wt)) return linear_then_gelu(input, weight, bias, derivative);
  auto shape = input.sizes().vec();
  shape.back() = n;
  at::Tensor d;
  auto out = tiled_mm(x, wt, bias, /*gelu=*/true, derivative ? &d : nullptr);
  return {out.view(shape), derivative ? d.view(shape) : at::empty({0}, input.options())};
}

namespace {

// linear_gelu's autograd: the linear layer's backward with the output gradient times the op's second result, GELU's
// derivative (not differentiable itself). Traced by AOTAutograd like any C++ autograd function, so compiled training
// graphs get these ops in their backward; in C++ so that calls inside compiled code, under no_grad, cost no Python.
class LinearGeluFunction : public torch::autograd::Function<LinearGeluFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input,
                                                const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                                                bool derivative) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("torch_mlu::linear_gelu", "")
                               .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                         const std::optional<at::Tensor>&, bool)>();
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    auto [out, d] = op.call(input, weight, bias, derivative);
    ctx->save_for_backward({input, weight, d});
    ctx->saved_data["has_bias"] = bias.has_value();
    ctx->saved_data["derivative"] = derivative;
    ctx->mark_non_differentiable({d});
    return {out, d};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    TORCH_CHECK(ctx->saved_data["derivative"].toBool(),
                "torch_mlu::linear_gelu was called with derivative=False (its result did not require grad when the "
                "graph was compiled), so it has no backward");
    // The derivative is saved as a constant, so a second derivative would miss its dependence on the input.
    TORCH_CHECK(!at::GradMode::is_enabled(),
                "torch_mlu::linear_gelu has no double backward (create_graph=True); use F.gelu(F.linear(...))");
    const auto saved = ctx->get_saved_variables();
    const auto& input = saved[0];
    const auto& weight = saved[1];
    const auto grad_h = at::mul(grads[0], saved[2]);
    const auto flat = grad_h.reshape({-1, grad_h.size(-1)});
    at::Tensor grad_input, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_input = at::matmul(grad_h, weight);
    if (ctx->needs_input_grad(1)) grad_weight = flat.t().mm(input.reshape({-1, input.size(-1)}));
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) grad_bias = flat.sum(0);
    return {grad_input, grad_weight, grad_bias, at::Tensor()};
  }
};

}  // namespace

std::tuple<at::Tensor, at::Tensor> linear_gelu_autograd(const at::Tensor& input, const at::Tensor& weight,
                                                        const std::optional<at::Tensor>& bias, bool derivative) {
  auto outs = LinearGeluFunction::apply(input, weight, bias, derivative);
  return {outs[0], outs[1]};
}

bool onednn_available() { return onednn_linear() != nullptr; }

at::Tensor gemm_nt(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias) {
  if (const auto* op = onednn_linear()) {
    return op->call(x, w, bias, "none", c10::List<std::optional<at::Scalar>>(), std::nullopt);
  }
  return bias.has_value() ? at::addmm(*bias, x, w.t()) : at::mm(x, w.t());
}

}  // namespace torch_mlu
