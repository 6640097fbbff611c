// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// aten::_scaled_dot_product_fused_attention_overrideable and its backward for mlu, computed for real.
//
// The overrideable pair is ATen's slot for a PrivateUse1 backend's own fused attention (SDPBackend.OVERRIDEABLE);
// its autograd formula calls the backward below. torch_openreg's kernels only allocate their outputs. mlu's
// _fused_sdp_choice answers with CPU's rules (ops/redirects.cpp), so scaled_dot_product_attention itself runs CPU's
// flash kernel; this pair serves direct calls and graphs that name it (torch.nn.attention.sdpa_kernel with
// SDPBackend.OVERRIDEABLE, exported programs). Math, in float32 for reduced-precision inputs:
//   S = scale * Q K^T (+ bias; a bool bias masks with -inf; is_causal masks above the diagonal)
//   lse = logsumexp(S, -1);  P = exp(S - lse);  O = P V
//   backward: dV = P^T dO;  dP = dO V^T;  dS = P * (dP - rowsum(dO * O));  dQ = scale dS K;  dK = scale dS^T Q;
//   dbias = dS summed to the bias's shape.
// Grouped-query attention (fewer key/value heads than query heads) repeats K and V per group and sums their
// gradients back. Dropout is refused (mlu's SDPA choice never selects this pair with dropout).
#include "sdpa.h"

#include <ATen/ATen.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

namespace torch_mlu {
namespace {

at::ScalarType opmath(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

double scale_of(const at::Tensor& q, std::optional<double> scale) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
}

// K or V with its heads repeated to the query's head count (grouped-query attention).
at::Tensor expand_heads(const at::Tensor& t, int64_t q_heads) {
  const int64_t heads = t.size(-3);
  if (heads == q_heads) return t;
  TORCH_CHECK(q_heads % heads == 0, "scaled_dot_product_attention: ", q_heads,
              " query heads are not a multiple of ", heads, " key/value heads");
  return t.repeat_interleave(q_heads / heads, -3);
}

// A gradient w.r.t. expanded heads, summed back to `heads` heads.
at::Tensor reduce_heads(const at::Tensor& g, int64_t heads) {
  const int64_t q_heads = g.size(-3);
  if (heads == q_heads) return g;
  auto sizes = g.sizes().vec();
  sizes[sizes.size() - 3] = heads;
  sizes.insert(sizes.end() - 2, q_heads / heads);
  return g.reshape(sizes).sum(-3);
}

// scale * Q K^T with the bias and causal mask applied, in `dt`.
at::Tensor scores(const at::Tensor& q, const at::Tensor& k, const std::optional<at::Tensor>& bias, bool is_causal,
                  double scale, at::ScalarType dt) {
  at::Tensor s = at::matmul(q.to(dt), k.to(dt).transpose(-2, -1)) * scale;
  if (bias.has_value() && bias->defined()) {
    if (bias->scalar_type() == at::kBool) {
      s = s.masked_fill(bias->logical_not(), -std::numeric_limits<double>::infinity());
    } else {
      s = s + bias->to(dt);
    }
  }
  if (is_causal) {
    const int64_t L = s.size(-2);
    const int64_t S = s.size(-1);
    at::Tensor keep = at::ones({L, S}, s.options().dtype(at::kBool)).tril();
    s = s.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  }
  return s;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor,
           at::Tensor>
fused_attention_overrideable(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                             const std::optional<at::Tensor>& attn_bias, double dropout_p, bool is_causal,
                             bool return_debug_mask, std::optional<double> scale) {
  TORCH_CHECK(dropout_p == 0.0, "mlu: _scaled_dot_product_fused_attention_overrideable does not support dropout "
              "(scaled_dot_product_attention with dropout_p > 0 takes the math path)");
  TORCH_CHECK(query.dim() == 4 && key.dim() == 4 && value.dim() == 4,
              "_scaled_dot_product_fused_attention_overrideable: expected 4-d (batch, heads, seq, dim) inputs");
  const at::ScalarType dt = opmath(query.scalar_type());
  const int64_t heads = query.size(1);
  at::Tensor k = expand_heads(key, heads);
  at::Tensor v = expand_heads(value, heads);
  at::Tensor s = scores(query, k, attn_bias, is_causal, scale_of(query, scale), dt);
  at::Tensor lse = s.logsumexp(-1);
  at::Tensor p = (s - lse.unsqueeze(-1)).exp();
  at::Tensor out = at::matmul(p, v.to(dt)).to(query.scalar_type());
  auto empty = at::empty({0}, query.options().dtype(at::kLong));
  at::Tensor debug = return_debug_mask ? p.to(query.scalar_type()) : at::empty({0}, query.options());
  return {out, lse.to(at::kFloat), empty, empty, c10::SymInt(query.size(2)), c10::SymInt(key.size(2)), empty, empty,
          debug};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_attention_overrideable_backward(
    const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& /*cum_seq_q*/, const at::Tensor& /*cum_seq_k*/,
    int64_t /*max_q*/, int64_t /*max_k*/, double dropout_p, bool is_causal, const at::Tensor& /*philox_seed*/,
    const at::Tensor& /*philox_offset*/, std::optional<double> scale) {
  TORCH_CHECK(dropout_p == 0.0, "mlu: _scaled_dot_product_fused_attention_overrideable_backward does not support "
              "dropout");
  const at::ScalarType dt = opmath(query.scalar_type());
  const double sc = scale_of(query, scale);
  const int64_t heads = query.size(1);
  at::Tensor k = expand_heads(key, heads).to(dt);
  at::Tensor v = expand_heads(value, heads).to(dt);
  at::Tensor q = query.to(dt);
  std::optional<at::Tensor> bias;
  if (attn_bias.defined()) bias = attn_bias;
  at::Tensor s = scores(query, k, bias, is_causal, sc, dt);
  at::Tensor p = (s - logsumexp.to(dt).unsqueeze(-1)).exp();
  at::Tensor go = grad_out.to(dt);
  at::Tensor dv = at::matmul(p.transpose(-2, -1), go);
  at::Tensor dp = at::matmul(go, v.transpose(-2, -1));
  at::Tensor delta = (go * out.to(dt)).sum(-1, /*keepdim=*/true);
  at::Tensor ds = p * (dp - delta);
  at::Tensor dq, dk, dbias;
  if (grad_input_mask[0]) dq = (at::matmul(ds, k) * sc).to(query.scalar_type());
  if (grad_input_mask[1]) dk = reduce_heads(at::matmul(ds.transpose(-2, -1), q) * sc, key.size(1)).to(key.scalar_type());
  if (grad_input_mask[2]) dv = reduce_heads(dv, value.size(1)).to(value.scalar_type());
  else dv = at::Tensor();
  if (grad_input_mask[3] && attn_bias.defined() && attn_bias.is_floating_point()) {
    dbias = ds.sum_to_size(attn_bias.sizes()).to(attn_bias.scalar_type());
  }
  return {dq, dk, dv, dbias};
}

}  // namespace torch_mlu
