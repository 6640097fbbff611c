// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The register-tiled attention kernels (head and value dims multiples of 16 floats, as 16, 32, 64, 128): the scores
// of a block of query rows at a time (at most 128 KiB, so they stay in the core's L2 cache), every product in
// Catch's own loops (tiled_product.h), which keep a tile of the result in vector registers for the whole reduction.
// The forward splits the work by (batch, head, row block), the backward by (batch, head), accumulating dK and dV over
// the head's row blocks. Shapes: attention.h.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_mlu {

// With `probs` (B * H heads of (L, sp) rows, contiguous, 16-byte aligned), each block's P is also streamed out there
// for the backward, its rows divided by their sums after O = P V has used them (O is divided by the sums as without
// probs, which rounds less than a product of rounded probabilities). Streamed, not stored: a store to a line that is
// not in cache reads it in first, so plain stores would read all of P (megabytes) from memory only to overwrite it
// (benchmarks/bench_attention.py times the forward); the backward reads P once, in order.
void attention_tiled(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, float scale, const at::Tensor& out,
                     const at::Tensor& lse, float* probs = nullptr);

// The backward of one head per task, its row blocks in turn (dK and dV sum over all of the head's query rows). With
// `probs` (the forward's P: B * H heads of (L, sp) rows, row stride sp) it starts from P: no scores to form again and
// no exp, four products per row block instead of five. Without, P comes from the scores and `lse`.
void attention_backward_tiled(const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k,
                              const at::Tensor& v, const at::Tensor& out, const at::Tensor& lse, const float* probs,
                              float scale, const at::Tensor& grad_q, const at::Tensor& grad_k,
                              const at::Tensor& grad_v);

}  // namespace torch_mlu
