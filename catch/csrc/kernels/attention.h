// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// Scaled dot-product attention for short sequences: the kernels that compiled fusion groups call in place of
// ATen's CPU flash attention. torch_mlu.compile (kernels.py) rewrites aten._scaled_dot_product_flash_attention_for_cpu
// and its backward, when they run without dropout, mask or causal masking, into
//
//   torch_mlu::attention(q, k, v, *, scale)                             -> (out, logsumexp)
//   torch_mlu::attention_backward(grad_out, q, k, v, out, logsumexp, *, scale) -> (grad_q, grad_k, grad_v)
//
// with the same arguments, results and memory layouts as the flash ops (q: (B, H, L, D), k: (B, H, S, D),
// v: (B, H, S, Dv); out laid out like q (output_like_query), the grads (B, L, H, *) in memory, logsumexp (B, L, H),
// all viewed as (B, H, ...)), so the graph around them is unchanged.
//
// The equations are flash attention's (Dao et al. 2022, as ATen's FlashAttentionKernel.cpp implements them) without
// the online softmax over key blocks: each query row's scores against all keys are formed at once, which for short
// sequences fits in cache:
//   forward:  P = softmax(scale * Q Kᵀ) row-wise, lse = log-sum-exp of each row, O = P V
//   backward: P = exp(scale * Q Kᵀ - lse), dV = Pᵀ dO, dP = dO Vᵀ, dS = P ∘ (dP - rowsum(dO ∘ O)) * scale,
//             dQ = dS K, dK = dSᵀ Q
// Two ways to run the products:
// - register-tiled (head and value dims multiples of 16 floats, as 16, 32, 64, 128): the scores of a block of query
//   rows at a time (at most 128 KiB, so they stay in the core's L2 cache), every product in Catch's own loops, which
//   keep a tile of the result in vector registers for the whole reduction. The forward splits the work by (batch,
//   head, row block), the backward by (batch, head), accumulating dK and dV over the head's row blocks.
// - otherwise whole-matrix GEMMs per (batch, head), the L x S scores at once, on oneDNN through ATen's
//   mkldnn::_linear_pointwise (y = x wᵀ), whose JIT-generated code uses AVX-512 on every CPU that has it (MKL's
//   SGEMM takes its AVX2 path on non-Intel CPUs); without oneDNN, at::mm.
// Inputs that are not float32 or 4-d, score matrices over kMaxScoreElems elements, and, on the GEMM path, heads too
// small to gain (kMinHeadMacs*) go to ATen's flash kernels (which tile and so need no L x S buffer).
//
// The row passes (softmax, exp, dS: attention_rows.h) and the tiled products (attention_tiled.h) are portable C++
// on GCC vector extensions. The forward divides each row of O by its softmax sum instead of each row of P (dv values
// instead of S), and the backward forms P and dS in one pass.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <tuple>

namespace torch_mlu {

// ---- the ops (schemas: ops/catch_ops.cpp) ----
std::tuple<at::Tensor, at::Tensor> attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                             std::optional<double> scale);
std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_backward(const at::Tensor& grad_out, const at::Tensor& q,
                                                                  const at::Tensor& k, const at::Tensor& v,
                                                                  const at::Tensor& out, const at::Tensor& lse,
                                                                  std::optional<double> scale);

// ---- shapes and layouts shared by the attention kernels ----
// Whether q, k, v (float32, 4-d, on the CPU, consistent shapes, L * S within the score limit) take Catch's kernels
// with `scale`, for heads of at least `min_head_macs` multiply-adds.
bool fast_path(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale, int64_t min_head_macs);
// Whether the head and value dims are multiples of the tiled products' vector width (attention_tiled.h).
bool tiled_path(const at::Tensor& q, const at::Tensor& v);
// t with rows (its last dimension) contiguous.
at::Tensor rows_contiguous(const at::Tensor& t);
// ATen's sdp::calculate_scale: 1 / sqrt(head dim) unless given.
double resolve_scale(const at::Tensor& q, std::optional<double> scale);
// The forward's (B, H, L, Dv) output laid out as ATen's flash kernel lays out its own.
at::Tensor output_like_query(const at::Tensor& q, int64_t dv);
// (B, H, n, d) result laid out (B, n, H, d) in memory, as the flash kernels allocate theirs.
at::Tensor flash_layout(const at::Tensor& like, int64_t n, int64_t d);

}  // namespace torch_mlu
