// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "attention_tiled.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include <xmmintrin.h>

#include "attention.h"
#include "attention_rows.h"
#include "tiled_product.h"

namespace torch_mlu {
namespace {

// A (B, H, n, d) float32 tensor's heads: rows of d contiguous floats, any batch, head and row strides.
struct Heads {
  float* data;
  int64_t sb, sh, row;
  explicit Heads(const at::Tensor& t)
      : data(t.data_ptr<float>()), sb(t.stride(0)), sh(t.stride(1)), row(t.stride(2)) {}
  float* head(int64_t b, int64_t h) const { return data + b * sb + h * sh; }
};

// Query rows per block: the block's (rows x padded keys) score matrix within 128 KiB, at least 8 rows.
int64_t rows_per_block(int64_t l, int64_t sp) { return std::min(l, std::max<int64_t>(8, (int64_t{1} << 15) / sp)); }

// head's (S, d) rows -> (d, sp) transposed into dst, columns from S to sp zero.
void transpose_head(const float* src, int64_t row, int64_t s, int64_t d, int64_t sp, float* dst) {
  std::fill(dst, dst + d * sp, 0.f);
  for (int64_t j = 0; j < s; ++j)
    for (int64_t c = 0; c < d; ++c) dst[c * sp + j] = src[j * row + c];
}

}  // namespace

void attention_tiled(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, float scale, const at::Tensor& out,
                     const at::Tensor& lse, float* probs) {
  const int64_t heads = q.size(1), l = q.size(2), s = k.size(2), d = q.size(3), dv = v.size(3);
  const int64_t sp = whole_vectors(s);
  const auto qr = rows_contiguous(q), kr = rows_contiguous(k), vr = rows_contiguous(v);
  const Heads qs(qr), ks(kr), vs(vr), os(out);
  auto kt = at::empty({q.size(0) * heads, d, sp}, q.options());  // each head's keys transposed, (d, sp)
  float* ktp = kt.data_ptr<float>();
  at::parallel_for(0, q.size(0) * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      transpose_head(ks.head(i / heads, i % heads), ks.row, s, d, sp, ktp + i * d * sp);
    }
  });
  const int64_t block = rows_per_block(l, sp), blocks = (l + block - 1) / block;
  float* lp = lse.data_ptr<float>();
  at::parallel_for(0, q.size(0) * heads * blocks, 1, [&](int64_t begin, int64_t end) {
    auto scores_buffer = std::make_unique_for_overwrite<float[]>(block * sp);
    auto inv_sums = std::make_unique_for_overwrite<float[]>(block);
    auto maxes = std::make_unique<float[]>(whole_vectors(block));
    // each row's sum of exp (exp_row_shifted), in whole vectors of rows for block_lse, as the maxima
    auto sums = std::make_unique<float[]>(whole_vectors(block));
    auto vmax = std::make_unique_for_overwrite<float[]>(block * kLanes);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t bh = t / blocks, b = bh / heads, h = bh % heads;
      const int64_t i0 = t % blocks * block, m = std::min(block, l - i0);
      const float* qp = qs.head(b, h) + i0 * qs.row;
      float* scores = scores_buffer.get();
      if (s == sp) {  // scores and row maxima in one pass, unless there are padding columns (their scores are 0)
        product_set_row_max(m, sp, d, qp, qs.row, 1, ktp + bh * d * sp, sp, scores, sp, vmax.get(), maxes.get());
      } else {
        product_set(m, sp, d, qp, qs.row, 1, ktp + bh * d * sp, sp, scores, sp);
        for (int64_t r = 0; r < m; ++r) maxes[r] = row_max(scores + r * sp, s);
      }
      float* lse_block = lp + b * lse.stride(0) + h * lse.stride(1) + i0 * lse.stride(2);
      float* o = os.head(b, h) + i0 * os.row;
      for (int64_t r = 0; r < m; ++r) {
        sums[r] = exp_row_shifted(scores + r * sp, s, scale, maxes[r]);
        inv_sums[r] = 1.f / sums[r];
      }
      block_lse(m, sums.get(), maxes.get(), scale, lse_block, lse.stride(2));
      // O = P V with P not yet normalized; each row of O is divided by its sum instead, dv values against s.
      product_set(m, dv, s, scores, sp, 1, vs.head(b, h), vs.row, o, os.row);
      scale_rows(m, dv, inv_sums.get(), o, os.row);
      if (probs) stream_rows(m, sp, inv_sums.get(), scores, probs + (bh * l + i0) * sp);  // P, for the backward
    }
    if (probs) _mm_sfence();  // the streamed stores before the threads join
  });
}

void attention_backward_tiled(const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k,
                              const at::Tensor& v, const at::Tensor& out, const at::Tensor& lse, const float* probs,
                              float scale, const at::Tensor& grad_q, const at::Tensor& grad_k,
                              const at::Tensor& grad_v) {
  const int64_t heads = q.size(1), l = q.size(2), s = k.size(2), d = q.size(3), dv = v.size(3);
  const int64_t sp = whole_vectors(s);
  const auto qr = rows_contiguous(q), kr = rows_contiguous(k), vr = rows_contiguous(v);
  const auto dor = rows_contiguous(grad_out), outr = rows_contiguous(out);
  const Heads qs(qr), ks(kr), vs(vr), dos(dor), os(outr), gqs(grad_q), gks(grad_k), gvs(grad_v);
  const float* lp = probs ? nullptr : lse.data_ptr<float>();
  const int64_t block = rows_per_block(l, sp);
  at::parallel_for(0, q.size(0) * heads, 1, [&](int64_t begin, int64_t end) {
    auto kt = probs ? nullptr : std::make_unique_for_overwrite<float[]>(d * sp);
    auto vt = std::make_unique_for_overwrite<float[]>(dv * sp);
    auto p_buffer = probs ? nullptr : std::make_unique_for_overwrite<float[]>(block * sp);
    auto ds = std::make_unique_for_overwrite<float[]>(block * sp);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / heads, h = bh % heads;
      const float* kp = ks.head(b, h);
      if (!probs) transpose_head(kp, ks.row, s, d, sp, kt.get());
      transpose_head(vs.head(b, h), vs.row, s, dv, sp, vt.get());
      for (int64_t i0 = 0; i0 < l; i0 += block) {
        const int64_t m = std::min(block, l - i0);
        const float* qp = qs.head(b, h) + i0 * qs.row;
        const float* dop = dos.head(b, h) + i0 * dos.row;
        const float* op = os.head(b, h) + i0 * os.row;
        if (!probs) product_set(m, sp, d, qp, qs.row, 1, kt.get(), sp, p_buffer.get(), sp);  // scores
        const float* p = probs ? probs + (bh * l + i0) * sp : p_buffer.get();
        product_set(m, sp, dv, dop, dos.row, 1, vt.get(), sp, ds.get(), sp);  // dP = dO Vᵀ
        for (int64_t r = 0; r < m; ++r) {
          float dot = 0.f;
          for (int64_t c = 0; c < dv; ++c) dot += dop[r * dos.row + c] * op[r * os.row + c];
          if (probs) {
            grad_scores_row(p + r * sp, ds.get() + r * sp, s, scale, dot);  // dS
          } else {
            const float lse_r = lp[b * lse.stride(0) + h * lse.stride(1) + (i0 + r) * lse.stride(2)];
            probs_and_grad_scores_row(p_buffer.get() + r * sp, ds.get() + r * sp, s, scale, lse_r, dot);  // P, dS
          }
        }
        product_set(m, d, s, ds.get(), sp, 1, kp, ks.row, gqs.head(b, h) + i0 * gqs.row, gqs.row);  // dQ = dS K
        product_add(s, dv, m, p, 1, sp, dop, dos.row, gvs.head(b, h), gvs.row);                     // dV += Pᵀ dO
        product_add(s, d, m, ds.get(), 1, sp, qp, qs.row, gks.head(b, h), gks.row);                 // dK += dSᵀ Q
      }
    }
  });
}

}  // namespace torch_mlu
