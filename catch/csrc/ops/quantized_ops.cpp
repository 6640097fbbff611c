// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "quantized_ops.h"

#include <ATen/Functions.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/device.h"
#include "../core/stream.h"
#include "../kernels/int8_math.h"
#include "../runtime/memory.h"
#include "../runtime/queue.h"

namespace torch_mlu {
namespace {

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

// The activation's host address, for gemm_s8 / conv_acc.
const void* act_ptr(const at::Tensor& a) {
  return a.scalar_type() == at::kByte ? static_cast<const void*>(host_ptr<const uint8_t>(a))
                                      : static_cast<const void*>(host_ptr<const int8_t>(a));
}

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

}  // namespace

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
    if (dtype == at::kByte) {
      quantize(src, host_ptr<uint8_t>(out), x.numel(), inv, zp, lo, hi);
    } else {
      quantize(src, host_ptr<int8_t>(out), x.numel(), inv, zp, lo, hi);
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
    gemm_s8(act_ptr(a), a.scalar_type() == at::kByte, static_cast<int32_t>(a_zero_point), host_ptr<const int8_t>(b),
            M, N, K,
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
    gemm_s8(act_ptr(a), a.scalar_type() == at::kByte, static_cast<int32_t>(x_zero_point), host_ptr<const int8_t>(b),
            M, N, K,
            [&](int64_t m, int64_t n, int32_t acc) {
              float v = static_cast<float>(acc) * mult[static_cast<size_t>(n)];
              po[m * N + n] = pbias != nullptr ? v + pbias[n] : v;
            });
  });
  return out;
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

}  // namespace torch_mlu
