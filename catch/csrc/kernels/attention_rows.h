// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The row passes of Catch's attention kernels (attention.h): softmax, exp, log-sum-exp and dS over rows of scores,
// built for x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and the baseline ISA and picked at load time (isa_clones.h). exp is
// computed as 2^x (vexp2: a degree-6 polynomial, under one ulp), flushing to 0 below 2^-126.5, and the tiled
// forward's log-sum-exp takes the log2 of 16 rows' sums at a time (vlog2: glibc's log2f is scalar, one call per
// row).
#pragma once

#include <cstdint>

namespace torch_mlu {

// max(x[0..n)), NaN skipped.
float row_max(const float* x, int64_t n);
// x[j] <- exp(scale * (x[j] - mx)) for j < n; returns their sum.
float exp_row_shifted(float* x, int64_t n, float scale, float mx);
// lse[r * stride] <- the log-sum-exp of row r from its sum of exp (exp_row_shifted) and maximum, r < m.
void block_lse(int64_t m, const float* sums, const float* maxes, float scale, float* lse, int64_t stride);
// x <- softmax(scale * x) over n values; returns the row's log-sum-exp.
float softmax_row(float* x, int64_t n, float scale);
// One row of the backward's row pass from the scores: p <- P = exp(scale * p - lse), dp <- dS = P * (dP - d) * scale.
void probs_and_grad_scores_row(float* p, float* dp, int64_t n, float scale, float lse, float d);
// One row of the backward's row pass from the saved P: dp <- dS = P * (dP - d) * scale, where d = rowsum(dO * O).
void grad_scores_row(const float* p, float* dp, int64_t n, float scale, float d);
// dst[r * n + 0..n) <- src[r * n + 0..n) * f[r] for r < m, with non-temporal stores (see the definition); n a
// multiple of 4, dst 16-byte aligned. The caller issues _mm_sfence before another thread reads dst.
void stream_rows(int64_t m, int64_t n, const float* f, const float* src, float* dst);
// o[r * ldo + 0..n) *= f[r] for r < m.
void scale_rows(int64_t m, int64_t n, const float* f, float* o, int64_t ldo);

}  // namespace torch_mlu
