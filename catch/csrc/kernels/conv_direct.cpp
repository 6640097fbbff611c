// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "conv_direct.h"

#include <cstring>

#include "isa_clones.h"

namespace torch_mlu {
namespace {

constexpr int64_t kRows = 4;  // output rows accumulated together: each weight is broadcast once per block

inline float horizontal_sum(const vf8& v) {
  float sum = 0.0f;
  for (int l = 0; l < kRowLanes; ++l) sum += v[l];
  return sum;
}

}  // namespace

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

}  // namespace torch_mlu
