// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "attention_probs.h"

#include <ATen/Functions.h>

#include <cstdint>

#include "attention.h"
#include "attention_tiled.h"
#include "tiled_product.h"

namespace torch_mlu {
namespace {

// P's layout: (B, H, L, S) in rows of whole vectors, (B, H, L, sp) contiguous narrowed to S columns; the fake kernel
// (torch_mlu/fake_kernels.py) allocates the same.
at::Tensor probs_like(const at::Tensor& q, int64_t s) {
  return at::empty({q.size(0), q.size(1), q.size(2), whole_vectors(s)}, q.options()).narrow(3, 0, s);
}

bool has_probs_layout(const at::Tensor& probs, const at::Tensor& q, int64_t s) {
  const int64_t sp = whole_vectors(s);
  return probs.scalar_type() == at::kFloat && probs.dim() == 4 && probs.size(0) == q.size(0) &&
         probs.size(1) == q.size(1) && probs.size(2) == q.size(2) && probs.size(3) == s && probs.stride(3) == 1 &&
         probs.stride(2) == sp && probs.stride(1) == q.size(2) * sp && probs.stride(0) == q.size(1) * q.size(2) * sp;
}

void check_4d(const char* op, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "torch_mlu::", op,
              ": expected 4-d query, key and value (batch, heads, tokens, features), got ", q.dim(), "-d, ", k.dim(),
              "-d and ", v.dim(), "-d");
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_with_probs(const at::Tensor& q, const at::Tensor& k,
                                                                    const at::Tensor& v, std::optional<double> scale) {
  check_4d("attention_with_probs", q, k, v);
  const double sc = resolve_scale(q, scale);
  const int64_t heads = q.size(1), l = q.size(2), s = k.size(2);
  auto probs = probs_like(q, s);
  auto out = output_like_query(q, v.size(3));
  auto lse = at::empty({q.size(0), l, heads}, q.options()).transpose(1, 2);
  if (!fast_path(q, k, v, sc, 0) || !tiled_path(q, v)) {  // ATen's ops, as the unfused attention computes it
    const auto scores = at::matmul(q, k.transpose(-2, -1)).mul_(sc);
    lse.copy_(scores.logsumexp(-1));
    probs.copy_(at::softmax(scores, -1));
    out.copy_(at::matmul(probs, v));
    return {out, lse, probs};
  }
  auto rows = out.stride(3) == 1 ? out : flash_layout(q, l, v.size(3));
  attention_tiled(q, k, v, static_cast<float>(sc), rows, lse, probs.data_ptr<float>());
  if (!rows.is_same(out)) out.copy_(rows);
  return {out, lse, probs};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_backward_with_probs(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& out,
    const at::Tensor& probs, std::optional<double> scale) {
  check_4d("attention_backward_with_probs", q, k, v);
  const double sc = resolve_scale(q, scale);
  const int64_t l = q.size(2), s = k.size(2);
  TORCH_CHECK(probs.dim() == 4 && probs.size(2) == l && probs.size(3) == s,
              "torch_mlu::attention_backward_with_probs: expected probs of ", l, " x ", s, " per head, got sizes ",
              probs.sizes());
  auto grad_q = flash_layout(q, l, q.size(3));
  auto grad_k = flash_layout(k, s, k.size(3));
  auto grad_v = flash_layout(v, s, v.size(3));
  const bool same = grad_out.sizes() == out.sizes() && out.dim() == 4 && out.size(2) == l &&
                    out.size(3) == v.size(3) && grad_out.scalar_type() == at::kFloat && out.scalar_type() == at::kFloat;
  if (!same || !fast_path(q, k, v, sc, 0) || !tiled_path(q, v)) {  // ATen's ops
    const auto dp = at::matmul(grad_out, v.transpose(-2, -1)).sub_(grad_out.mul(out).sum(-1, true));
    const auto ds = dp.mul_(probs).mul_(sc);
    grad_v.copy_(at::matmul(probs.transpose(-2, -1), grad_out));
    grad_q.copy_(at::matmul(ds, k));
    grad_k.copy_(at::matmul(ds.transpose(-2, -1), q));
    return {grad_q, grad_k, grad_v};
  }
  const auto p = has_probs_layout(probs, q, s) ? probs : probs_like(q, s).copy_(probs);
  grad_k.zero_();
  grad_v.zero_();
  attention_backward_tiled(grad_out, q, k, v, out, at::Tensor(), p.data_ptr<float>(), static_cast<float>(sc), grad_q,
                           grad_k, grad_v);
  return {grad_q, grad_k, grad_v};
}

}  // namespace torch_mlu
