// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// int8 inference kernels for mlu (and the same code for CPU tensors): the native half of
// torch_mlu.quantization. Only conv and linear are quantized, as in the Cambricon cnml flow:
//
//   quantize_int8:   float32 -> int8/uint8, q = clamp(round_half_even(x * (1/scale) + zero_point)), the
//                    product and sum rounded once to float32 (as the FMA in ATen's CPU quantizer, fbgemm's
//                    Quantize), so the result equals torch.quantize_per_tensor(...).int_repr(); from torch 2.14 on,
//                    q = clamp(zero_point + round_half_even(float(x * (1/scale)))), as fbgemm there (see the kernel)
//   int8_mm:         int32 acc[m, n] = sum_k (a[m, k] - a_zp) * b[n, k]      (a int8/uint8, b int8)
//   int8_linear:     y[.., n] = float(acc) * (float(x_scale) * w_scale[n]) + bias[n]       (float32)
//   int8_conv2d_acc: the int32 accumulator of a conv over (x - x_zp) and w, as im2col + int8_mm
//   int8_conv2d:     that accumulator rescaled per output channel like int8_linear (NCHW float32)
//
// Weights are symmetric per output channel (zero point 0), activations per tensor with a zero point.
// Products are accumulated exactly in int32, which bounds the reduction length: |a - a_zp| <= 255 and
// |b| <= 128, so K <= 65536 keeps every partial sum inside int32.
//
// On mlu the kernels run on the runtime's host view of the device buffers (catch_rt::mapHost), in
// order on the current queue (catch_rt::runInline), like the generic device kernels; outputs are
// allocated as mlu tensors. The ops are declared in the `torch_mlu` op namespace
// (torch.ops.torch_mlu.*) with kernels for PrivateUse1 and CPU.
//
// The second half gives mlu kernels to the ATen fake_quantize_* ops that torch.ao's FakeQuantize
// modules call, so QAT runs on the device instead of through the CPU fallback: the CPU kernel runs
// on host aliases of the device buffers (in-place arguments are written in place) and fresh results
// are adopted as device memory (HostKernelScope + adopt_host_block, as the generic device kernels do).
#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/headeronly/version.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "../aten/mlu_aten.h"
#include "../core/mlu_core.h"

namespace torch_mlu {
namespace {

constexpr int64_t kMaxReduction = 65536;

// ---- device plumbing ---------------------------------------------------------------------
bool on_mlu(const at::Tensor& t) { return t.device().type() == kMLU; }

void check_same_device(const char* op, const at::Tensor& ref, const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.device() == ref.device(), op, ": expected ", name, " on ", ref.device(), " (like the input), got ",
              t.device());
}

// Host address of a contiguous tensor's first element (the runtime's host view on mlu).
template <typename T>
T* host_ptr(const at::Tensor& t) {
  if (t.numel() == 0) return nullptr;
  void* p = static_cast<char*>(t.storage().unsafeGetStorageImpl()->data_ptr().get()) +
            t.storage_offset() * static_cast<int64_t>(t.itemsize());
  if (!on_mlu(t)) return static_cast<T*>(p);
  void* host = nullptr;
  MLU_CHECK(catch_rt::mapHost(p, t.nbytes(), &host));
  return static_cast<T*>(host);
}

// Runs `fn` in order on the current queue of `ref`'s device (directly for CPU tensors).
template <typename F>
void run_on(const at::Tensor& ref, F&& fn) {
  if (!on_mlu(ref)) {
    fn();
    return;
  }
  c10::DeviceGuard guard(ref.device());
  catch_rt::runInline(current_queue(ref.device().index()), [&] { fn(); });
}

void check_act_dtype(const char* op, const at::Tensor& q, int64_t zero_point) {
  auto dt = q.scalar_type();
  TORCH_CHECK(dt == at::kByte || dt == at::kChar, op, ": expected a uint8 or int8 quantized activation, got ", dt,
              " (quantize float inputs with torch.ops.torch_mlu.quantize_int8 first)");
  int64_t lo = dt == at::kByte ? 0 : -128;
  int64_t hi = dt == at::kByte ? 255 : 127;
  TORCH_CHECK(zero_point >= lo && zero_point <= hi, op, ": zero_point ", zero_point, " is outside the ", dt,
              " range [", lo, ", ", hi, "]");
}

void check_weight(const char* op, const at::Tensor& x, const at::Tensor& w, int64_t dim) {
  TORCH_CHECK(w.scalar_type() == at::kChar, op, ": expected int8 weights (symmetric, zero point 0), got ",
              w.scalar_type());
  TORCH_CHECK(w.dim() == dim, op, ": expected a ", dim, "-d weight, got shape ", w.sizes());
  check_same_device(op, x, w, "the weight");
}

// w_scale: float32 (N,) per output channel; bias: float32 (N,) or undefined.
void check_epilogue(const char* op, const at::Tensor& x, const at::Tensor& w_scale,
                    const std::optional<at::Tensor>& bias, int64_t n) {
  TORCH_CHECK(w_scale.scalar_type() == at::kFloat && w_scale.dim() == 1 && w_scale.numel() == n, op,
              ": expected float32 weight scales of shape (", n, "), got ", w_scale.scalar_type(), " ",
              w_scale.sizes());
  check_same_device(op, x, w_scale, "the weight scales");
  if (bias.has_value() && bias->defined()) {
    TORCH_CHECK(bias->scalar_type() == at::kFloat && bias->dim() == 1 && bias->numel() == n, op,
                ": expected a float32 bias of shape (", n, "), got ", bias->scalar_type(), " ", bias->sizes());
    check_same_device(op, x, *bias, "the bias");
  }
}

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

// emit(m, n, acc) for acc = (a - za) @ b.T with a (M x K) uint8/int8 and b (N x K) int8, rows in parallel.
template <typename Emit>
void gemm_s8(const at::Tensor& a, int32_t za, const int8_t* b, int64_t M, int64_t N, int64_t K, Emit&& emit) {
  auto b16 = widen_weights(b, N * K);
  const bool u8 = a.scalar_type() == at::kByte;
  const void* pa = u8 ? static_cast<const void*>(host_ptr<const uint8_t>(a))
                      : static_cast<const void*>(host_ptr<const int8_t>(a));
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

// ---- ops ---------------------------------------------------------------------------------
at::Tensor quantize_int8(const at::Tensor& self, double scale, int64_t zero_point, at::ScalarType dtype) {
  const char* op = "torch_mlu::quantize_int8";
  TORCH_CHECK(self.scalar_type() == at::kFloat, op, ": expected a float32 tensor, got ", self.scalar_type());
  TORCH_CHECK(dtype == at::kByte || dtype == at::kChar, op, ": dtype must be torch.uint8 or torch.int8, got ", dtype);
  TORCH_CHECK(std::isfinite(scale) && scale > 0, op, ": scale must be a positive finite number, got ", scale);
  const int64_t qmin = dtype == at::kByte ? 0 : -128;
  const int64_t qmax = dtype == at::kByte ? 255 : 127;
  TORCH_CHECK(zero_point >= qmin && zero_point <= qmax, op, ": zero_point ", zero_point, " is outside the ", dtype,
              " range [", qmin, ", ", qmax, "]");
  at::Tensor x = self.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options().dtype(dtype));
  run_on(x, [&] {
    const float* src = host_ptr<const float>(x);
    const double inv = static_cast<double>(1.0f / static_cast<float>(scale));
    const double zp = static_cast<double>(zero_point);
    const float lo = static_cast<float>(qmin);
    const float hi = static_cast<float>(qmax);
    auto quant = [&](auto* dst) {
      at::parallel_for(0, x.numel(), 4096, [&](int64_t b, int64_t e) {
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
    };
    if (dtype == at::kByte) {
      quant(host_ptr<uint8_t>(out));
    } else {
      quant(host_ptr<int8_t>(out));
    }
  });
  return out;
}

// a: (M, K) uint8/int8, b: (N, K) int8 -> int32 (M, N).
at::Tensor int8_mm(const at::Tensor& qa, int64_t a_zero_point, const at::Tensor& qb) {
  const char* op = "torch_mlu::int8_mm";
  check_act_dtype(op, qa, a_zero_point);
  TORCH_CHECK(qa.dim() == 2, op, ": expected a 2-d activation, got shape ", qa.sizes());
  check_weight(op, qa, qb, 2);
  TORCH_CHECK(qa.size(1) == qb.size(1), op, ": reduction sizes differ: ", qa.sizes(), " and ", qb.sizes());
  const int64_t M = qa.size(0), N = qb.size(0), K = qa.size(1);
  TORCH_CHECK(K <= kMaxReduction, op, ": reduction length ", K, " exceeds ", kMaxReduction,
              " (int32 accumulation could overflow)");
  at::Tensor a = qa.contiguous(), b = qb.contiguous();
  at::Tensor out = at::empty({M, N}, a.options().dtype(at::kInt));
  run_on(a, [&] {
    int32_t* po = host_ptr<int32_t>(out);
    gemm_s8(a, static_cast<int32_t>(a_zero_point), host_ptr<const int8_t>(b), M, N, K,
            [&](int64_t m, int64_t n, int32_t acc) { po[m * N + n] = acc; });
  });
  return out;
}

// qx: (..., K), qw: (N, K) -> float32 (..., N).
at::Tensor int8_linear(const at::Tensor& qx, double x_scale, int64_t x_zero_point, const at::Tensor& qw,
                       const at::Tensor& w_scale, const std::optional<at::Tensor>& bias) {
  const char* op = "torch_mlu::int8_linear";
  check_act_dtype(op, qx, x_zero_point);
  TORCH_CHECK(qx.dim() >= 1, op, ": expected an input with at least one dimension");
  check_weight(op, qx, qw, 2);
  const int64_t K = qx.size(-1), N = qw.size(0);
  TORCH_CHECK(qw.size(1) == K, op, ": input features ", K, " do not match the weight's ", qw.size(1));
  TORCH_CHECK(K <= kMaxReduction, op, ": reduction length ", K, " exceeds ", kMaxReduction,
              " (int32 accumulation could overflow)");
  check_epilogue(op, qx, w_scale, bias, N);
  at::Tensor a = qx.contiguous(), b = qw.contiguous(), ws = w_scale.contiguous();
  const bool has_bias = bias.has_value() && bias->defined();
  at::Tensor bb = has_bias ? bias->contiguous() : at::Tensor();
  const int64_t M = K == 0 ? 0 : a.numel() / K;
  std::vector<int64_t> out_sizes(a.sizes().begin(), a.sizes().end());
  out_sizes.back() = N;
  at::Tensor out = at::empty(out_sizes, a.options().dtype(at::kFloat));
  run_on(a, [&] {
    float* po = host_ptr<float>(out);
    const float* pbias = has_bias ? host_ptr<const float>(bb) : nullptr;
    auto mult = multipliers(x_scale, host_ptr<const float>(ws), N);
    gemm_s8(a, static_cast<int32_t>(x_zero_point), host_ptr<const int8_t>(b), M, N, K,
            [&](int64_t m, int64_t n, int32_t acc) {
              float v = static_cast<float>(acc) * mult[static_cast<size_t>(n)];
              po[m * N + n] = pbias != nullptr ? v + pbias[n] : v;
            });
  });
  return out;
}

struct ConvGeom {
  int64_t n, c, h, w, oc, kh, kw, groups, sh, sw, ph, pw, dh, dw, oh, ow;
  int64_t cg() const { return c / groups; }
  int64_t ocg() const { return oc / groups; }
  int64_t kdim() const { return cg() * kh * kw; }
  int64_t pixels() const { return oh * ow; }
};

ConvGeom conv_geometry(const char* op, const at::Tensor& qx, int64_t x_zero_point, const at::Tensor& qw,
                       c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups) {
  check_act_dtype(op, qx, x_zero_point);
  TORCH_CHECK(qx.dim() == 4, op, ": expected an NCHW input, got shape ", qx.sizes());
  check_weight(op, qx, qw, 4);
  TORCH_CHECK(stride.size() == 2 && padding.size() == 2 && dilation.size() == 2, op,
              ": stride, padding and dilation must have two entries each");
  TORCH_CHECK(groups >= 1 && qx.size(1) % groups == 0 && qw.size(0) % groups == 0, op, ": groups=", groups,
              " must divide the input channels ", qx.size(1), " and output channels ", qw.size(0));
  ConvGeom g{qx.size(0), qx.size(1), qx.size(2), qx.size(3), qw.size(0), qw.size(2), qw.size(3), groups,
             stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1], 0, 0};
  TORCH_CHECK(qw.size(1) == g.cg(), op, ": weight expects ", qw.size(1) * groups, " input channels, the input has ",
              g.c);
  TORCH_CHECK(g.sh > 0 && g.sw > 0 && g.dh > 0 && g.dw > 0 && g.ph >= 0 && g.pw >= 0, op,
              ": stride and dilation must be positive and padding non-negative");
  g.oh = (g.h + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  TORCH_CHECK(g.oh > 0 && g.ow > 0, op, ": the kernel does not fit the padded input ", qx.sizes());
  TORCH_CHECK(g.kdim() <= kMaxReduction, op, ": reduction length ", g.kdim(), " exceeds ", kMaxReduction,
              " (int32 accumulation could overflow)");
  return g;
}

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

template <typename Emit>
void conv_dispatch(const at::Tensor& a, int64_t zp, const at::Tensor& b, const ConvGeom& g, Emit&& emit) {
  const int8_t* pw = host_ptr<const int8_t>(b);
  auto z = static_cast<int32_t>(zp);
  if (a.scalar_type() == at::kByte) {
    conv_acc(host_ptr<const uint8_t>(a), z, pw, g, emit);
  } else {
    conv_acc(host_ptr<const int8_t>(a), z, pw, g, emit);
  }
}

at::Tensor int8_conv2d_acc(const at::Tensor& qx, int64_t x_zero_point, const at::Tensor& qw, c10::IntArrayRef stride,
                           c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups) {
  ConvGeom g = conv_geometry("torch_mlu::int8_conv2d_acc", qx, x_zero_point, qw, stride, padding, dilation, groups);
  at::Tensor a = qx.contiguous(), b = qw.contiguous();
  at::Tensor out = at::empty({g.n, g.oc, g.oh, g.ow}, a.options().dtype(at::kInt));
  if (out.numel() == 0) return out;
  run_on(a, [&] {
    int32_t* po = host_ptr<int32_t>(out);
    const int64_t P = g.pixels();
    conv_dispatch(a, x_zero_point, b, g,
                  [&](int64_t n, int64_t oc, int64_t p, int32_t acc) { po[(n * g.oc + oc) * P + p] = acc; });
  });
  return out;
}

at::Tensor int8_conv2d(const at::Tensor& qx, double x_scale, int64_t x_zero_point, const at::Tensor& qw,
                       const at::Tensor& w_scale, const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                       c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups) {
  const char* op = "torch_mlu::int8_conv2d";
  ConvGeom g = conv_geometry(op, qx, x_zero_point, qw, stride, padding, dilation, groups);
  check_epilogue(op, qx, w_scale, bias, g.oc);
  at::Tensor a = qx.contiguous(), b = qw.contiguous(), ws = w_scale.contiguous();
  const bool has_bias = bias.has_value() && bias->defined();
  at::Tensor bb = has_bias ? bias->contiguous() : at::Tensor();
  at::Tensor out = at::empty({g.n, g.oc, g.oh, g.ow}, a.options().dtype(at::kFloat));
  if (out.numel() == 0) return out;
  run_on(a, [&] {
    float* po = host_ptr<float>(out);
    const float* pbias = has_bias ? host_ptr<const float>(bb) : nullptr;
    auto mult = multipliers(x_scale, host_ptr<const float>(ws), g.oc);
    const int64_t P = g.pixels();
    conv_dispatch(a, x_zero_point, b, g, [&](int64_t n, int64_t oc, int64_t p, int32_t acc) {
      float v = static_cast<float>(acc) * mult[static_cast<size_t>(oc)];
      po[(n * g.oc + oc) * P + p] = pbias != nullptr ? v + pbias[oc] : v;
    });
  });
  return out;
}

// ---- observer / fake-quantize ops on host aliases --------------------------------------------
// A CPU tensor over the host view of mlu tensor `t`'s storage (no copy). Its storage is resizable
// through the CPU allocator, which hands out device memory under HostKernelScope, so a kernel may
// resize an in-place argument (the fused per-channel observer sizes its empty running_min/max on the
// first call); write_back() then moves the new block into `t`.
at::Tensor host_alias(const at::Tensor& t) {
  auto* impl = t.storage().unsafeGetStorageImpl();
  const size_t nbytes = impl->nbytes();
  void* host = nbytes > 0 ? catch_rt::mapHostUnchecked(impl->data_ptr().get()) : nullptr;
  c10::Storage hs(c10::Storage::use_byte_size_t(), nbytes, c10::DataPtr(host, c10::Device(c10::kCPU)),
                  c10::GetCPUAllocator(), /*resizable=*/true);
  auto alias = c10::make_intrusive<c10::TensorImpl>(std::move(hs), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                    t.dtype());
  alias->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  return at::Tensor(std::move(alias));
}

struct WrittenArg {
  at::Tensor original;  // the mlu argument
  at::Tensor alias;     // its host alias given to the CPU kernel
  void* before;         // the alias's data pointer before the kernel
};

// After the kernel: a resized in-place argument gets the new buffer and geometry.
void write_back(const WrittenArg& w, c10::DeviceIndex device) {
  auto* hs = w.alias.storage().unsafeGetStorageImpl();
  if (hs->data_ptr().get() != w.before) {
    const size_t nbytes = hs->nbytes();
    c10::DataPtr dp = to_device_block(hs->set_data_ptr(c10::DataPtr(w.before, c10::Device(c10::kCPU))), nbytes,
                                      device);
    auto* ods = w.original.storage().unsafeGetStorageImpl();
    ods->set_data_ptr_noswap(std::move(dp));
    ods->set_nbytes(nbytes);
  }
  auto* oimpl = w.original.unsafeGetTensorImpl();
  const auto* himpl = w.alias.unsafeGetTensorImpl();
  if (oimpl->sizes() != himpl->sizes() || oimpl->strides() != himpl->strides() ||
      oimpl->storage_offset() != himpl->storage_offset()) {
    oimpl->set_sizes_and_strides(himpl->sizes(), himpl->strides(), himpl->storage_offset());
  }
}

// Boxed kernel for ops whose tensor arguments are plain tensors (no lists) and whose returns are fresh
// tensors; in-place (Tensor(a!)) arguments are updated in place.
void host_alias_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const auto& args = op.schema().arguments();
  const size_t n = args.size();
  const size_t begin = stack->size() - n;
  c10::DeviceIndex device = -1;
  std::vector<at::Tensor> keep;  // the mlu arguments stay alive while their aliases are used
  std::vector<WrittenArg> written;
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& iv = (*stack)[begin + i];
    if (!iv.isTensor() || !iv.toTensor().defined()) continue;
    const at::Tensor& t = iv.toTensor();
    if (t.device().type() == kMLU) {
      TORCH_CHECK(device == -1 || device == t.device().index(),
                  "Expected all tensors to be on the same device, but found at least two devices, mlu:", device,
                  " and ", t.device(), "! (when checking arguments for ", op.schema().name(), ")");
      device = t.device().index();
      at::Tensor alias = host_alias(t);
      const auto* info = args[i].alias_info();
      if (info != nullptr && info->isWrite()) {
        written.push_back({t, alias, alias.storage().unsafeGetStorageImpl()->data_ptr().get()});
      }
      keep.push_back(t);
      iv = c10::IValue(std::move(alias));
    } else {
      TORCH_CHECK(t.dim() == 0, "Expected all tensors to be on the same device, but found at least two devices, mlu",
                  " and ", t.device(), "! (when checking arguments for ", op.schema().name(), ")");
    }
  }
  if (device == -1) device = current_device();
  {
    catch_rt::Queue* q = current_queue(device);
    if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
    c10::DeviceGuard guard(c10::Device(kMLU, device));
    HostKernelScope scope;
    c10::impl::ExcludeDispatchKeyGuard below(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
    for (const auto& w : written) write_back(w, device);
  }
  const size_t nret = op.schema().returns().size();
  for (size_t i = stack->size() - nret; i < stack->size(); ++i) {
    c10::IValue& iv = (*stack)[i];
    if (iv.isTensor()) iv = c10::IValue(adopt_host_result(iv.toTensor(), device));
  }
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_mlu, m) {
  m.def("quantize_int8(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor");
  m.def("int8_mm(Tensor qa, int a_zero_point, Tensor qb) -> Tensor");
  m.def(
      "int8_linear(Tensor qx, float x_scale, int x_zero_point, Tensor qw, Tensor w_scale, Tensor? bias) -> Tensor");
  m.def(
      "int8_conv2d_acc(Tensor qx, int x_zero_point, Tensor qw, int[2] stride, int[2] padding, int[2] dilation, "
      "int groups) -> Tensor");
  m.def(
      "int8_conv2d(Tensor qx, float x_scale, int x_zero_point, Tensor qw, Tensor w_scale, Tensor? bias, "
      "int[2] stride, int[2] padding, int[2] dilation, int groups) -> Tensor");
}

#define CATCH_QUANT_IMPLS(m)                       \
  m.impl("quantize_int8", &quantize_int8);         \
  m.impl("int8_mm", &int8_mm);                     \
  m.impl("int8_linear", &int8_linear);             \
  m.impl("int8_conv2d_acc", &int8_conv2d_acc);     \
  m.impl("int8_conv2d", &int8_conv2d)

TORCH_LIBRARY_IMPL(torch_mlu, PrivateUse1, m) { CATCH_QUANT_IMPLS(m); }
TORCH_LIBRARY_IMPL(torch_mlu, CPU, m) { CATCH_QUANT_IMPLS(m); }

// The ops torch.ao fake-quantize modules (FakeQuantize, FusedMovingAvgObsFakeQuantize) call, which have
// only CPU kernels in ATen and are not in the generic device-kernel list. (HistogramObserver's histc and
// bucketize stay on the CPU fallback: the fallback tests use them as their example ops.)
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : {"fake_quantize_per_tensor_affine_cachemask",
                           "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams",
                           "fake_quantize_per_channel_affine_cachemask", "_fused_moving_avg_obs_fq_helper"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&host_alias_kernel>());
  }
}

}  // namespace torch_mlu
