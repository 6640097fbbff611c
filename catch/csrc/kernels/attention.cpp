// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "attention.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attention_rows.h"
#include "attention_tiled.h"
#include "onednn_gemm.h"
#include "tiled_product.h"

namespace torch_mlu {
namespace {

// Largest L * S handled here (16 MiB of float32 per score matrix; two per head in the backward). Beyond it the
// flash kernels' tiling wins anyway.
constexpr int64_t kMaxScoreElems = int64_t{1} << 22;
// Smallest work per head, L * S * head_dim multiply-adds of one product, worth the whole-matrix GEMMs: below it the
// fixed cost per oneDNN call and per head outweighs their speed, and the flash kernels are faster.
// benchmarks/bench_attention.py measures both per shape: on one AVX-512 core the forward breaks even near 2^20
// (e.g. 2 x 4 heads x 256 tokens x 16) and the backward, with five GEMMs per head, near 2^21. The register-tiled
// path has no such fixed cost and takes heads of any size (measured down to 32 x 4 heads x 64 tokens x 16: forward
// 0.42x, backward 0.39x flash's time at 2 threads).
constexpr int64_t kMinHeadMacsForward = int64_t{1} << 20;
constexpr int64_t kMinHeadMacsBackward = int64_t{1} << 21;

}  // namespace

bool fast_path(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale, int64_t min_head_macs) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  for (const auto* t : {&q, &k, &v}) {
    if (t->scalar_type() != at::kFloat || t->device().type() != c10::DeviceType::CPU) return false;
  }
  const int64_t b = q.size(0), h = q.size(1), l = q.size(2), s = k.size(2);
  if (k.size(0) != b || v.size(0) != b || k.size(1) != h || v.size(1) != h || v.size(2) != s) return false;
  if (k.size(3) != q.size(3) || b * h == 0 || l == 0 || s == 0 || q.size(3) == 0 || v.size(3) == 0) return false;
  return scale > 0 && l * s <= kMaxScoreElems && l * s * std::max(q.size(3), v.size(3)) >= min_head_macs;
}

// t with rows (its last dimension) contiguous: the tiled path reads them as vectors, and the flash kernels read them
// as contiguous whatever their stride (torch 2.13: a key matrix transposed in place gives wrong outputs, silently);
// this op is tagged flexible_layout, so what it hands them gets contiguous rows first.
at::Tensor rows_contiguous(const at::Tensor& t) {
  return t.dim() == 0 || t.stride(-1) == 1 || t.size(-1) <= 1 ? t : t.contiguous();
}

double resolve_scale(const at::Tensor& q, std::optional<double> scale) {
  // ATen's sdp::calculate_scale: 1 / sqrt(head dim) unless given.
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
}

// The forward's (B, H, L, Dv) output laid out as ATen's flash kernel lays out its own (alloc_with_matching_layout in
// ATen/native/transformers/sdp_utils.h, torch 2.13): like q when the shapes agree (q contiguous gives a contiguous
// output, q a view of a (B, L, H * D) projection a (B, L, H, Dv) one), else dense in the order of q's strides. The
// op's fake kernel is the flash op's, so compiled code expects exactly this layout.
at::Tensor output_like_query(const at::Tensor& q, int64_t dv) {
  const std::vector<int64_t> shape = {q.size(0), q.size(1), q.size(2), dv};
  if (q.sizes().vec() == shape) return at::empty_like(q);
  std::vector<int> order = {0, 1, 2, 3};
  const auto st = q.strides();
  std::stable_sort(order.begin(), order.end(), [&st](int a, int b) {
    return (st[a] ? st[a] : INT64_MAX) < (st[b] ? st[b] : INT64_MAX);
  });
  std::vector<int64_t> strides(4);
  int64_t next = 1;
  for (const int dim : order) {
    strides[dim] = next;
    next *= shape[dim];
  }
  return at::empty_strided(shape, strides, q.options());
}

// (B, H, n, d) result laid out (B, n, H, d) in memory, as the flash kernels allocate theirs.
at::Tensor flash_layout(const at::Tensor& like, int64_t n, int64_t d) {
  return at::empty({like.size(0), n, like.size(1), d}, like.options()).transpose(1, 2);
}

bool tiled_path(const at::Tensor& q, const at::Tensor& v) {
  return q.dim() == 4 && v.dim() == 4 && q.size(3) % kLanes == 0 && v.size(3) % kLanes == 0;
}

std::tuple<at::Tensor, at::Tensor> attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                             std::optional<double> scale) {
  const double sc = resolve_scale(q, scale);
  if (!fast_path(q, k, v, sc, tiled_path(q, v) ? 0 : kMinHeadMacsForward)) {
    const auto qr = rows_contiguous(q);
    auto [out, lse] = at::_scaled_dot_product_flash_attention_for_cpu(qr, rows_contiguous(k), rows_contiguous(v), 0.0,
                                                                      false, std::nullopt, scale);
    // The flash kernel laid its output out like what it was given: a copy of q when q's rows were not contiguous.
    if (!qr.is_same(q)) out = output_like_query(q, out.size(3)).copy_(out);
    return {out, lse};
  }
  const int64_t heads = q.size(1), l = q.size(2), s = k.size(2);
  auto out = output_like_query(q, v.size(3));
  auto lse = at::empty({q.size(0), l, heads}, q.options()).transpose(1, 2);
  const float scale_f = static_cast<float>(sc);
  if (tiled_path(q, v)) {
    // The tiled loops write whole rows: into `out` when its rows are contiguous, else into a buffer copied over.
    auto rows = out.stride(3) == 1 ? out : flash_layout(q, l, v.size(3));
    attention_tiled(q, k, v, scale_f, rows, lse);
    if (!rows.is_same(out)) out.copy_(rows);
    return {out, lse};
  }
  // Head-major copies (one strided copy per tensor, none when already contiguous): each head's rows are then a
  // row-major matrix, and its transpose a column-major one, both of which oneDNN reads in place.
  const auto qh = q.contiguous(), kh = k.contiguous(), vh = v.contiguous();
  at::parallel_for(0, q.size(0) * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / heads, h = i % heads;
      auto p = gemm_nt(qh[b][h], kh[b][h]);  // (L, S) scores, then probabilities
      float* pp = p.data_ptr<float>();
      auto lse_bh = lse[b][h];
      float* lp = lse_bh.data_ptr<float>();
      const int64_t lstride = lse_bh.stride(0);
      for (int64_t row = 0; row < l; ++row) lp[row * lstride] = softmax_row(pp + row * s, s, scale_f);
      out[b][h].copy_(gemm_nt(p, vh[b][h].t()));  // P V
    }
  });
  return {out, lse};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_backward(const at::Tensor& grad_out, const at::Tensor& q,
                                                                  const at::Tensor& k, const at::Tensor& v,
                                                                  const at::Tensor& out, const at::Tensor& lse,
                                                                  std::optional<double> scale) {
  const double sc = resolve_scale(q, scale);
  const bool same = grad_out.sizes() == out.sizes() && out.dim() == 4 && out.size(2) == q.size(2) &&
                    out.size(3) == v.size(3) && grad_out.scalar_type() == at::kFloat &&
                    out.scalar_type() == at::kFloat && lse.scalar_type() == at::kFloat && lse.dim() == 3;
  if (!same || !fast_path(q, k, v, sc, tiled_path(q, v) ? 0 : kMinHeadMacsBackward)) {
    return at::_scaled_dot_product_flash_attention_for_cpu_backward(rows_contiguous(grad_out), rows_contiguous(q),
                                                                    rows_contiguous(k), rows_contiguous(v),
                                                                    rows_contiguous(out),
                                                                    lse, 0.0, false, std::nullopt, scale);
  }
  const int64_t heads = q.size(1), l = q.size(2), s = k.size(2);
  auto grad_q = flash_layout(q, l, q.size(3));
  auto grad_k = flash_layout(k, s, k.size(3));
  auto grad_v = flash_layout(v, s, v.size(3));
  const float scale_f = static_cast<float>(sc);
  if (tiled_path(q, v)) {
    grad_k.zero_();
    grad_v.zero_();
    attention_backward_tiled(grad_out, q, k, v, out, lse, nullptr, scale_f, grad_q, grad_k, grad_v);
    return {grad_q, grad_k, grad_v};
  }
  const auto qh = q.contiguous(), kh = k.contiguous(), vh = v.contiguous();  // head-major, as in the forward
  const auto doh = grad_out.contiguous(), oh = out.contiguous();
  at::parallel_for(0, q.size(0) * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / heads, h = i % heads;
      const auto qi = qh[b][h], ki = kh[b][h], doi = doh[b][h], oi = oh[b][h];
      auto p = gemm_nt(qi, ki);           // (L, S) scores, then probabilities
      auto dp = gemm_nt(doi, vh[b][h]);  // (L, S) dP, then dS
      float* pp = p.data_ptr<float>();
      float* dpp = dp.data_ptr<float>();
      const auto lse_bh = lse[b][h];
      const float* lp = lse_bh.data_ptr<float>();
      const int64_t lstride = lse_bh.stride(0);
      const float* dop = doi.data_ptr<float>();
      const float* op = oi.data_ptr<float>();
      const int64_t dv = oi.size(1);
      for (int64_t row = 0; row < l; ++row) {
        float d = 0.f;
        for (int64_t j = 0; j < dv; ++j) d += dop[row * dv + j] * op[row * dv + j];
        probs_and_grad_scores_row(pp + row * s, dpp + row * s, s, scale_f, lp[row * lstride], d);
      }
      grad_v[b][h].copy_(gemm_nt(doi.t(), p.t()).t());  // (dOᵀ P)ᵀ = Pᵀ dO
      grad_k[b][h].copy_(gemm_nt(qi.t(), dp.t()).t());   // (Qᵀ dS)ᵀ = dSᵀ Q
      grad_q[b][h].copy_(gemm_nt(dp, ki.t()));           // dS K
    }
  });
  return {grad_q, grad_k, grad_v};
}

}  // namespace torch_mlu
