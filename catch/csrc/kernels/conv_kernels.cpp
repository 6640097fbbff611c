// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// 2-d convolution and its gradients for compiled fusion groups:
//
//   torch_mlu::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
//   torch_mlu::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
//                                   output_padding, groups, output_mask)
//
// the schemas and results of aten::convolution / aten::convolution_backward. torch_mlu.compile (kernels.py) swaps
// them in where they measure faster than ATen's. Three kernels:
// - direct, for layers with few input taps (at most kMaxTaps = Cin * kh * kw; for the backward only the weight and
//   bias gradients, as a first layer's input needs none). A first layer on one-channel images (9 taps) gives oneDNN
//   almost no reduction to block over, so it runs far below its peak there (the digits CNN's 1->16 3x3 convolution).
//   Here every output row is a few vector registers that take all taps before they are stored, from a zero-padded
//   copy of the image's planes.
// - Winograd F(2x2, 3x3) (conv_winograd.h) for the other 3x3 layers with padding up to 2, forward and all three
//   gradients: 16 multiplies per 2x2 outputs and channel pair instead of 36. oneDNN runs the digits CNN's 16->32
//   layer at SGEMM peak on one core (and splits it unevenly over two); Winograd needs fewer multiplies than that
//   peak allows, forward and backward. Inputs with an inf, a NaN or a value beyond 2^100 take the im2col products
//   instead (conv_winograd.h says why).
// - im2col products (the GEMM path below) for everything else handled: per image one register-tiled matrix product
//   (tiled_product.h) per result.
//
// Handled: float32, contiguous 4-d NCHW input and weight, groups 1, stride 1, dilation 1, not transposed. Everything
// else goes to ATen's kernels unchanged.
#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

#include "conv_winograd.h"
#include "isa_clones.h"
#include "thread_partials.h"
#include "tiled_product.h"

namespace torch_mlu {
namespace {

constexpr int64_t kMaxTaps = 32;
constexpr int64_t kRowLanes = 8;  // the direct kernels' vectors: 8 floats, a row of a small image
typedef float vf8 __attribute__((vector_size(kRowLanes * sizeof(float))));

struct Geometry {
  int64_t cin, h, w, cout, kh, kw, ph, pw, oh, ow;
  int64_t taps() const { return cin * kh * kw; }
  int64_t hp() const { return h + 2 * ph; }
  int64_t wp() const { return w + 2 * pw; }
  // the padded planes of one image, plus a vector of slack: the last chunk of a row may load past the row's end
  int64_t padded_size() const { return cin * hp() * wp() + kRowLanes; }
};

bool all_equal(at::IntArrayRef values, int64_t expected) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == expected; });
}

std::optional<Geometry> conv_geometry(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                                        at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                                        int64_t groups) {
  if (input.scalar_type() != at::kFloat || weight.scalar_type() != at::kFloat) return std::nullopt;
  if (input.device().type() != c10::DeviceType::CPU || weight.device() != input.device()) return std::nullopt;
  if (input.dim() != 4 || weight.dim() != 4 || !input.is_contiguous() || !weight.is_contiguous()) return std::nullopt;
  if (transposed || groups != 1 || stride.size() != 2 || padding.size() != 2 || dilation.size() != 2) {
    return std::nullopt;
  }
  if (!all_equal(stride, 1) || !all_equal(dilation, 1) || padding[0] < 0 || padding[1] < 0) return std::nullopt;
  Geometry g{input.size(1), input.size(2), input.size(3), weight.size(0), weight.size(2), weight.size(3),
             padding[0], padding[1], 0, 0};
  g.oh = g.hp() - g.kh + 1;
  g.ow = g.wp() - g.kw + 1;
  if (weight.size(1) != g.cin || g.taps() == 0 || g.oh <= 0 || g.ow <= 0) return std::nullopt;
  if (input.size(0) == 0 || g.cout == 0) return std::nullopt;
  return g;
}

// The image's planes (cin x h x w) into `padded` (cin x hp x wp, zero borders, zeroed slack).
void pad_image(const float* in, float* padded, const Geometry& g) {
  std::fill(padded, padded + g.padded_size(), 0.0f);
  for (int64_t c = 0; c < g.cin; ++c) {
    for (int64_t y = 0; y < g.h; ++y) {
      std::memcpy(padded + (c * g.hp() + y + g.ph) * g.wp() + g.pw, in + (c * g.h + y) * g.w, g.w * sizeof(float));
    }
  }
}

// Each tap's offset in the padded planes: tap t = (c, i, j) reads padded[c][y + i][x + j] for output (y, x).
std::vector<int64_t> tap_offsets(const Geometry& g) {
  std::vector<int64_t> offsets;
  for (int64_t c = 0; c < g.cin; ++c) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) offsets.push_back((c * g.hp() + i) * g.wp() + j);
    }
  }
  return offsets;
}

constexpr int64_t kRows = 4;  // output rows accumulated together: each weight is broadcast once per block

// One image's output (cout x oh x ow): blocks of kRows rows x eight outputs accumulate all taps in four vector
// registers before they are stored (named accumulators: an array of them stays in memory at -O2); the rows left
// over go one at a time. Geometry is copied to locals: the stores through `out` could alias it.
CATCH_ISA_CLONES void conv_image(const float* padded, const float* weight, const float* bias, float* out,
                                 const int64_t* offsets, const Geometry& geometry) {
  const int64_t taps = geometry.taps(), wp = geometry.wp(), oh = geometry.oh, ow = geometry.ow;
  const int64_t cout = geometry.cout;
  auto store = [&](float* dst, const vf8& acc, int64_t lanes) {
    if (lanes == kRowLanes) {
      std::memcpy(dst, &acc, sizeof(vf8));
    } else {
      for (int64_t l = 0; l < lanes; ++l) dst[l] = acc[l];
    }
  };
  for (int64_t o = 0; o < cout; ++o) {
    const float* wo = weight + o * taps;
    const float b = bias != nullptr ? bias[o] : 0.0f;
    float* plane = out + o * oh * ow;
    for (int64_t x0 = 0; x0 < ow; x0 += kRowLanes) {
      const int64_t lanes = std::min(kRowLanes, ow - x0);
      int64_t y = 0;
      for (; y + kRows <= oh; y += kRows) {
        vf8 a0 = vf8{} + b, a1 = a0, a2 = a0, a3 = a0;
        const float* base = padded + y * wp + x0;
        for (int64_t t = 0; t < taps; ++t) {
          const float wt = wo[t];
          const float* src = base + offsets[t];
          vf8 v0, v1, v2, v3;
          std::memcpy(&v0, src, sizeof(vf8));
          std::memcpy(&v1, src + wp, sizeof(vf8));
          std::memcpy(&v2, src + 2 * wp, sizeof(vf8));
          std::memcpy(&v3, src + 3 * wp, sizeof(vf8));
          a0 += wt * v0;
          a1 += wt * v1;
          a2 += wt * v2;
          a3 += wt * v3;
        }
        store(plane + y * ow + x0, a0, lanes);
        store(plane + (y + 1) * ow + x0, a1, lanes);
        store(plane + (y + 2) * ow + x0, a2, lanes);
        store(plane + (y + 3) * ow + x0, a3, lanes);
      }
      for (; y < oh; ++y) {
        vf8 a0 = vf8{} + b;
        const float* base = padded + y * wp + x0;
        for (int64_t t = 0; t < taps; ++t) {
          vf8 v0;
          std::memcpy(&v0, base + offsets[t], sizeof(vf8));
          a0 += wo[t] * v0;
        }
        store(plane + y * ow + x0, a0, lanes);
      }
    }
  }
}

inline float horizontal_sum(const vf8& v) {
  float sum = 0.0f;
  for (int l = 0; l < kRowLanes; ++l) sum += v[l];
  return sum;
}

// One image's contribution to the weight gradient (cout x taps, accumulated into grad_weight) and the bias gradient
// (cout, into grad_bias): per output channel, four taps at a time, each with a vector accumulator over the
// channel's output plane (outputs past the last whole vector of a row one by one). Geometry is copied to locals.
CATCH_ISA_CLONES void conv_weight_grad_image(const float* padded, const float* grad_out, float* grad_weight,
                                             float* grad_bias, const int64_t* offsets, const Geometry& geometry) {
  const int64_t taps = geometry.taps(), wp = geometry.wp(), oh = geometry.oh, ow = geometry.ow;
  const int64_t cout = geometry.cout;
  const int64_t full = ow / kRowLanes * kRowLanes;
  for (int64_t o = 0; o < cout; ++o) {
    const float* go_plane = grad_out + o * oh * ow;
    vf8 bias_acc = {};
    float bias_tail = 0.0f;
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x0 = 0; x0 < full; x0 += kRowLanes) {
        vf8 go;
        std::memcpy(&go, go_plane + y * ow + x0, sizeof(vf8));
        bias_acc += go;
      }
      for (int64_t x = full; x < ow; ++x) bias_tail += go_plane[y * ow + x];
    }
    grad_bias[o] += horizontal_sum(bias_acc) + bias_tail;
    int64_t t = 0;
    for (; t + 4 <= taps; t += 4) {
      const float *s0 = padded + offsets[t], *s1 = padded + offsets[t + 1], *s2 = padded + offsets[t + 2],
                  *s3 = padded + offsets[t + 3];
      vf8 a0 = {}, a1 = {}, a2 = {}, a3 = {};
      float tails[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int64_t y = 0; y < oh; ++y) {
        const float* go_row = go_plane + y * ow;
        const int64_t row = y * wp;
        for (int64_t x0 = 0; x0 < full; x0 += kRowLanes) {
          vf8 go, v0, v1, v2, v3;
          std::memcpy(&go, go_row + x0, sizeof(vf8));
          std::memcpy(&v0, s0 + row + x0, sizeof(vf8));
          std::memcpy(&v1, s1 + row + x0, sizeof(vf8));
          std::memcpy(&v2, s2 + row + x0, sizeof(vf8));
          std::memcpy(&v3, s3 + row + x0, sizeof(vf8));
          a0 += go * v0;
          a1 += go * v1;
          a2 += go * v2;
          a3 += go * v3;
        }
        for (int64_t x = full; x < ow; ++x) {
          tails[0] += go_row[x] * s0[row + x];
          tails[1] += go_row[x] * s1[row + x];
          tails[2] += go_row[x] * s2[row + x];
          tails[3] += go_row[x] * s3[row + x];
        }
      }
      float* gw = grad_weight + o * taps + t;
      gw[0] += horizontal_sum(a0) + tails[0];
      gw[1] += horizontal_sum(a1) + tails[1];
      gw[2] += horizontal_sum(a2) + tails[2];
      gw[3] += horizontal_sum(a3) + tails[3];
    }
    for (; t < taps; ++t) {
      const float* s0 = padded + offsets[t];
      vf8 a0 = {};
      float tail = 0.0f;
      for (int64_t y = 0; y < oh; ++y) {
        const float* go_row = go_plane + y * ow;
        for (int64_t x0 = 0; x0 < full; x0 += kRowLanes) {
          vf8 go, v0;
          std::memcpy(&go, go_row + x0, sizeof(vf8));
          std::memcpy(&v0, s0 + y * wp + x0, sizeof(vf8));
          a0 += go * v0;
        }
        for (int64_t x = full; x < ow; ++x) tail += go_row[x] * s0[y * wp + x];
      }
      grad_weight[o * taps + t] += horizontal_sum(a0) + tail;
    }
  }
}

// ---- the GEMM path: layers with more taps -------------------------------------------------------------------------
// Each image's convolution as one matrix product on the register-tiled loops of tiled_product.h (im2col), with P =
// oh * ow outputs and T = cin * kh * kw taps, rows padded to whole 16-float vectors:
//   forward:         out (cout x P) = W (cout x T) col (T x P), where col[t][y * ow + x] is tap t's padded input
//                    for output (y, x)
//   input gradient:  dcol (T x P) = Wᵀ (T x cout) grad_out (cout x P), then col2im
//   weight gradient: dWᵀ (T x cout) += col (T x P) grad_outᵀ (P x cout), summed over the images
// (gemm_conv_backward).
// The products run at the machine's SGEMM peak; im2col, col2im and the transposes are the cost on top of them.

// col[t * ldc + y * ow + x] <- padded[offsets[t] + y * wp + x] for every tap t and output (y, x); the columns from P
// to ldc are not written. Rows of at least 8 outputs are copied as 8-float vectors, the last one overlapping the one
// before where ow is not a multiple of 8; shorter rows element by element (a memcpy call per row cost more than the
// copy).
CATCH_ISA_CLONES void im2col(const float* padded, const int64_t* offsets, const Geometry& geometry, float* col,
                             int64_t ldc) {
  const int64_t taps = geometry.taps(), wp = geometry.wp(), oh = geometry.oh, ow = geometry.ow;
  const int64_t last = ow - kRowLanes;  // where the last vector of a row starts
  for (int64_t t = 0; t < taps; ++t) {
    const float* src = padded + offsets[t];
    float* dst = col + t * ldc;
    for (int64_t y = 0; y < oh; ++y, src += wp, dst += ow) {
      if (ow < kRowLanes) {
        for (int64_t x = 0; x < ow; ++x) dst[x] = src[x];
        continue;
      }
      vf8 v;
      for (int64_t x = 0; x < last; x += kRowLanes) {
        std::memcpy(&v, src + x, sizeof v);
        std::memcpy(dst + x, &v, sizeof v);
      }
      std::memcpy(&v, src + last, sizeof v);
      std::memcpy(dst + last, &v, sizeof v);
    }
  }
}

// One image's forward into out (cout rows of ldo >= whole_vectors(P) floats). col: (T + 1) x ldo scratch whose
// columns past P are zero and whose last row is ones; weight: cout x (T + 1), each row's last element the bias (0
// without), so the product adds the bias.
void gemm_conv_image(const float* padded, const int64_t* offsets, const Geometry& g, const float* weight, float* col,
                     float* out, int64_t ldo) {
  im2col(padded, offsets, g, col, ldo);
  product_set(g.cout, ldo, g.taps() + 1, weight, g.taps() + 1, 1, col, ldo, out, ldo);
}

// Per-thread scratch of the GEMM path: zeroed when allocated, so the padding columns of col stay zero.
struct GemmScratch {
  std::vector<float> padded, col, out;
  GemmScratch(const Geometry& g, int64_t ldo)
      : padded(static_cast<size_t>(g.padded_size())),
        col(static_cast<size_t>((g.taps() + 1) * ldo), 0.0f),
        out(g.oh * g.ow == ldo ? 0 : static_cast<size_t>(g.cout * ldo)) {
    std::fill(col.end() - ldo, col.end(), 1.0f);  // the row that multiplies the bias
  }
};

// The forward of `images` images of input `in` into `dst` (n x cout x oh x ow), in parallel over the images; bias
// may be null.
void gemm_conv(const float* in, const float* w, const float* bias, float* dst, int64_t images, const Geometry& g) {
  const int64_t outputs = g.oh * g.ow, ldo = whole_vectors(outputs), taps = g.taps();
  const auto offsets = tap_offsets(g);
  std::vector<float> weight(static_cast<size_t>(g.cout * (taps + 1)));  // W with the bias as a last column
  for (int64_t o = 0; o < g.cout; ++o) {
    std::copy(w + o * taps, w + (o + 1) * taps, weight.begin() + o * (taps + 1));
    weight[o * (taps + 1) + taps] = bias != nullptr ? bias[o] : 0.0f;
  }
  at::parallel_for(0, images, 1, [&](int64_t begin, int64_t end) {
    GemmScratch scratch(g, ldo);
    for (int64_t image = begin; image < end; ++image) {
      pad_image(in + image * g.cin * g.h * g.w, scratch.padded.data(), g);
      float* out = dst + image * g.cout * outputs;
      if (scratch.out.empty()) {  // rows of whole vectors: straight into the result
        gemm_conv_image(scratch.padded.data(), offsets.data(), g, weight.data(), scratch.col.data(), out, ldo);
        continue;
      }
      gemm_conv_image(scratch.padded.data(), offsets.data(), g, weight.data(), scratch.col.data(),
                      scratch.out.data(), ldo);
      for (int64_t o = 0; o < g.cout; ++o) {
        std::memcpy(out + o * outputs, scratch.out.data() + o * ldo, outputs * sizeof(float));
      }
    }
  });
}

// grad_padded[offsets[t] + y * wp + x] += dcol[t * ldc + y * ow + x] for every tap t and output (y, x) (col2im, the
// adjoint of im2col): whole 8-float vectors of each row, then the rest element by element.
CATCH_ISA_CLONES void col2im(const float* dcol, const int64_t* offsets, const Geometry& geometry, float* grad_padded,
                             int64_t ldc) {
  const int64_t taps = geometry.taps(), wp = geometry.wp(), oh = geometry.oh, ow = geometry.ow;
  const int64_t full = ow - ow % kRowLanes;
  for (int64_t t = 0; t < taps; ++t) {
    const float* src = dcol + t * ldc;
    float* dst = grad_padded + offsets[t];
    for (int64_t y = 0; y < oh; ++y, src += ow, dst += wp) {
      for (int64_t x = 0; x < full; x += kRowLanes) {
        vf8 v, d;
        std::memcpy(&v, src + x, sizeof v);
        std::memcpy(&d, dst + x, sizeof d);
        d += v;
        std::memcpy(dst + x, &d, sizeof d);
      }
      for (int64_t x = full; x < ow; ++x) dst[x] += src[x];
    }
  }
}

// The three gradients, per image (in parallel over the images):
//   input:  dcol (T x P) = Wᵀ (T x cout) grad_out (cout x P), then col2im into the padded planes, cropped
//   weight: dWᵀ (T x cout) += col (T x P) grad_outᵀ (P x cout), a partial sum per thread, summed at the end
//   bias:   likewise, as one more row of that product: col's last row is ones
std::tuple<at::Tensor, at::Tensor, at::Tensor> gemm_conv_backward(const at::Tensor& grad_output,
                                                                  const at::Tensor& input, const at::Tensor& weight,
                                                                  const Geometry& g, std::array<bool, 3> output_mask) {
  const int64_t n = input.size(0), outputs = g.oh * g.ow, ldo = whole_vectors(outputs);
  const int64_t coutp = whole_vectors(g.cout), taps = g.taps();
  const auto go_contiguous = grad_output.contiguous();
  const float* go = go_contiguous.const_data_ptr<float>();
  const float* in = input.const_data_ptr<float>();
  const float* w = weight.const_data_ptr<float>();
  at::Tensor grad_input = output_mask[0] ? at::empty(input.sizes(), input.options()) : at::Tensor();
  float* gin = output_mask[0] ? grad_input.data_ptr<float>() : nullptr;
  const bool params = output_mask[1] || output_mask[2];
  // per thread: dWᵀ (T x coutp) then the bias gradient (coutp)
  ThreadPartials partials(params ? (taps + 1) * coutp : 0);
  const auto offsets = tap_offsets(g);
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    GemmScratch scratch(g, ldo);  // padded: the input's planes, then the input gradient's; col: col, then dcol
    std::vector<float> go_t(params ? static_cast<size_t>(outputs * coutp) : 0, 0.0f);  // grad_outᵀ, P x coutp
    // grad_out's planes as rows of whole vectors, when P is not (the product reads whole vectors)
    std::vector<float> go_rows(outputs == ldo ? 0 : static_cast<size_t>(g.cout * ldo), 0.0f);
    float* mine = partials.mine();
    for (int64_t image = begin; image < end; ++image) {
      const float* go_image = go + image * g.cout * outputs;
      if (params) {
        // grad_outᵀ in blocks of 8 x 8, so that both sides stay in few cache lines
        for (int64_t p0 = 0; p0 < outputs; p0 += 8) {
          for (int64_t o0 = 0; o0 < g.cout; o0 += 8) {
            for (int64_t p = p0; p < std::min(p0 + 8, outputs); ++p) {
              for (int64_t o = o0; o < std::min(o0 + 8, g.cout); ++o) go_t[p * coutp + o] = go_image[o * outputs + p];
            }
          }
        }
        // dWᵀ and, from col's row of ones, the bias gradient (row T); without the weight gradient col holds only
        // that row
        const int64_t rows = output_mask[1] ? taps + 1 : 1;
        const float* col = scratch.col.data() + (taps + 1 - rows) * ldo;
        if (output_mask[1]) {
          pad_image(in + image * g.cin * g.h * g.w, scratch.padded.data(), g);
          im2col(scratch.padded.data(), offsets.data(), g, scratch.col.data(), ldo);
        }
        product_add(rows, coutp, outputs, col, ldo, 1, go_t.data(), coutp, mine + (taps + 1 - rows) * coutp, coutp);
      }
      if (output_mask[0]) {
        const float* b = go_image;
        if (!go_rows.empty()) {
          for (int64_t o = 0; o < g.cout; ++o) std::copy(go_image + o * outputs, go_image + (o + 1) * outputs,
                                                         go_rows.begin() + o * ldo);
          b = go_rows.data();
        }
        product_set(taps, ldo, g.cout, w, 1, taps, b, ldo, scratch.col.data(), ldo);
        float* grad_padded = scratch.padded.data();
        std::fill(grad_padded, grad_padded + g.cin * g.hp() * g.wp(), 0.0f);
        col2im(scratch.col.data(), offsets.data(), g, grad_padded, ldo);
        float* dst = gin + image * g.cin * g.h * g.w;
        for (int64_t c = 0; c < g.cin; ++c) {
          for (int64_t y = 0; y < g.h; ++y) {
            std::copy_n(grad_padded + (c * g.hp() + y + g.ph) * g.wp() + g.pw, g.w, dst + (c * g.h + y) * g.w);
          }
        }
      }
    }
  });
  at::Tensor grad_weight, grad_bias;
  if (!params) return {grad_input, grad_weight, grad_bias};
  grad_weight = at::empty(weight.sizes(), weight.options());
  grad_bias = at::empty({g.cout}, weight.options());
  float* gw = grad_weight.data_ptr<float>();
  float* gb = grad_bias.data_ptr<float>();
  const float* total = partials.total();
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t o = 0; o < g.cout; ++o) gw[o * taps + t] = total[t * coutp + o];
  }
  for (int64_t o = 0; o < g.cout; ++o) gb[o] = total[taps * coutp + o];
  return {grad_input, output_mask[1] ? grad_weight : at::Tensor(), output_mask[2] ? grad_bias : at::Tensor()};
}

// ---- the Winograd path: 3x3 layers (conv_winograd.h) -------------------------------------------------------------
// The input gradient of a stride-1 convolution is the convolution of grad_out, padded by (kh - 1 - ph, kw - 1 - pw),
// with W'[ci][co][i][j] = W[co][ci][kh - 1 - i][kw - 1 - j].
std::vector<float> flipped_transposed(const float* w, const Geometry& g) {
  std::vector<float> out(static_cast<size_t>(g.cout * g.taps()));
  const int64_t area = g.kh * g.kw;
  for (int64_t co = 0; co < g.cout; ++co) {
    for (int64_t ci = 0; ci < g.cin; ++ci) {
      const float* src = w + (co * g.cin + ci) * area;
      float* dst = out.data() + (ci * g.cout + co) * area;
      for (int64_t k = 0; k < area; ++k) dst[area - 1 - k] = src[k];
    }
  }
  return out;
}

// The three gradients on the Winograd kernels, or nullopt where a value is out of their range (winograd::forward).
std::optional<std::tuple<at::Tensor, at::Tensor, at::Tensor>> winograd_backward(const at::Tensor& grad_output,
                                                                                const at::Tensor& input,
                                                                                const at::Tensor& weight,
                                                                                const Geometry& g,
                                                                                std::array<bool, 3> output_mask) {
  const int64_t n = input.size(0);
  const auto go_contiguous = grad_output.contiguous();
  const float* go = go_contiguous.const_data_ptr<float>();
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    grad_input = at::empty(input.sizes(), input.options());
    const auto w_flipped = flipped_transposed(weight.const_data_ptr<float>(), g);
    if (!winograd::forward({n, g.cout, g.oh, g.ow, g.cin, g.kh - 1 - g.ph, g.kw - 1 - g.pw}, go, w_flipped.data(),
                           nullptr, grad_input.data_ptr<float>())) {
      return std::nullopt;
    }
  }
  if (output_mask[1]) grad_weight = at::empty(weight.sizes(), weight.options());
  if (output_mask[2]) grad_bias = at::empty({g.cout}, weight.options());
  if ((output_mask[1] || output_mask[2]) &&
      !winograd::weight_gradient({n, g.cin, g.h, g.w, g.cout, g.ph, g.pw}, input.const_data_ptr<float>(), go,
                                 output_mask[1] ? grad_weight.data_ptr<float>() : nullptr,
                                 output_mask[2] ? grad_bias.data_ptr<float>() : nullptr)) {
    return std::nullopt;
  }
  return std::make_tuple(grad_input, grad_weight, grad_bias);
}

// ---- the ops ------------------------------------------------------------------------------------------------------
at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  auto geometry = conv_geometry(input, weight, stride, padding, dilation, transposed, groups);
  const bool bias_ok = !bias.has_value() || !bias->defined() ||
                       (bias->scalar_type() == at::kFloat && bias->dim() == 1 && bias->is_contiguous() &&
                        bias->device() == input.device() && geometry && bias->size(0) == geometry->cout);
  if (!geometry || !bias_ok) {
    return at::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  }
  const Geometry g = *geometry;
  const int64_t n = input.size(0);
  auto out = at::empty({n, g.cout, g.oh, g.ow}, input.options());
  const float* in = input.const_data_ptr<float>();
  const float* w = weight.const_data_ptr<float>();
  const float* b = bias.has_value() && bias->defined() ? bias->const_data_ptr<float>() : nullptr;
  float* dst = out.data_ptr<float>();
  if (g.taps() > kMaxTaps && winograd::applies(g.kh, g.kw, g.ph, g.pw) &&
      winograd::forward({n, g.cin, g.h, g.w, g.cout, g.ph, g.pw}, in, w, b, dst)) {
    return out;
  }
  if (g.taps() > kMaxTaps) {
    gemm_conv(in, w, b, dst, n, g);
    return out;
  }
  const auto offsets = tap_offsets(g);
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> padded(static_cast<size_t>(g.padded_size()));
    for (int64_t image = begin; image < end; ++image) {
      pad_image(in + image * g.cin * g.h * g.w, padded.data(), g);
      conv_image(padded.data(), w, b, dst + image * g.cout * g.oh * g.ow, offsets.data(), g);
    }
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::OptionalIntArrayRef bias_sizes, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
    bool transposed, at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  auto geometry = conv_geometry(input, weight, stride, padding, dilation, transposed, groups);
  const bool grad_ok = geometry && grad_output.scalar_type() == at::kFloat &&
                       grad_output.device() == input.device() && grad_output.dim() == 4 &&
                       grad_output.size(0) == input.size(0) && grad_output.size(1) == geometry->cout &&
                       grad_output.size(2) == geometry->oh && grad_output.size(3) == geometry->ow;
  const bool direct = grad_ok && geometry->taps() <= kMaxTaps && !output_mask[0] && grad_output.is_contiguous();
  if (!grad_ok) {
    return at::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                    output_padding, groups, output_mask);
  }
  const Geometry g = *geometry;
  if (!direct && g.taps() > kMaxTaps && winograd::applies(g.kh, g.kw, g.ph, g.pw)) {
    if (auto grads = winograd_backward(grad_output, input, weight, g, output_mask)) return *grads;
  }
  if (!direct) return gemm_conv_backward(grad_output, input, weight, g, output_mask);
  const int64_t n = input.size(0);
  ThreadPartials partials(g.cout * g.taps() + g.cout);  // the weight then the bias gradient
  const float* in = input.const_data_ptr<float>();
  const float* go = grad_output.const_data_ptr<float>();
  const auto offsets = tap_offsets(g);
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> padded(static_cast<size_t>(g.padded_size()));
    float* mine = partials.mine();
    for (int64_t image = begin; image < end; ++image) {
      pad_image(in + image * g.cin * g.h * g.w, padded.data(), g);
      conv_weight_grad_image(padded.data(), go + image * g.cout * g.oh * g.ow, mine, mine + g.cout * g.taps(),
                             offsets.data(), g);
    }
  });
  auto grad_weight = at::empty(weight.sizes(), weight.options());
  auto grad_bias = at::empty({g.cout}, weight.options());
  const float* total = partials.total();
  std::copy_n(total, g.cout * g.taps(), grad_weight.data_ptr<float>());
  std::copy_n(total + g.cout * g.taps(), g.cout, grad_bias.data_ptr<float>());
  return {at::Tensor(), output_mask[1] ? grad_weight : at::Tensor(), output_mask[2] ? grad_bias : at::Tensor()};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_mlu, m) {
  m.def(
      "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
      "bool transposed, int[] output_padding, int groups) -> Tensor");
  m.def(
      "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, int[]? bias_sizes, int[] stride, "
      "int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool[3] output_mask) "
      "-> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(torch_mlu, CPU, m) {
  m.impl("convolution", &convolution);
  m.impl("convolution_backward", &convolution_backward);
}

}  // namespace torch_mlu
