// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "conv_gemm.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "isa_clones.h"
#include "thread_partials.h"
#include "tiled_product.h"

namespace torch_mlu {
namespace {

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

}  // namespace

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

}  // namespace torch_mlu
