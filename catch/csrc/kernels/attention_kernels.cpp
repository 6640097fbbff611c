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
// The row passes (softmax, exp, dS) and the tiled products are portable C++ on GCC vector extensions, built for
// x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and the baseline ISA and picked at load time (GCC target_clones); exp is
// computed as 2^x (vexp2: a degree-6 polynomial, under one ulp), flushing to 0 below 2^-126.5, and the tiled
// forward's log-sum-exp takes the log2 of 16 rows' sums at a time (vlog2: glibc's log2f is scalar, one call per
// row). The forward divides each row of O by its softmax sum instead of each row of P (dv values instead of S), and
// the backward forms P and dS in one pass.
#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include <xmmintrin.h>

#include "isa_clones.h"
#include "onednn_gemm.h"
#include "tiled_product.h"
#include "vector_math.h"

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

// ---- row passes -------------------------------------------------------------------------------------------------

constexpr float kLn2 = 0.693147180559945309417232121458f;

// max(x[0..n)), NaN skipped.
CATCH_ISA_CLONES float row_max(const float* x, int64_t n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t full = n - n % kLanes;
  vf vm = vsplat(ninf);
  for (int64_t j = 0; j < full; j += kLanes) {
    const vf v = vload(x + j);
    vm = v > vm ? v : vm;
  }
  if (full < n) {
    const vf v = vload_tail(x + full, n - full, ninf);
    vm = v > vm ? v : vm;
  }
  return hmax(vm);
}

// x[0..n) <- exp(scale * (x - mx)), not normalized, where mx = max(x) (row_max, or the tiled product's row maxima);
// returns their sum, so that the row's log-sum-exp is row_lse(sum, mx, scale). scale > 0. The argument is formed as
// (x - mx) log2(e) scale, a difference that is never positive, rather than as x c - mx c, which is off by the
// rounding of mx c: more than 127 once that passes 2^31, and exp then overflowed.
CATCH_ISA_CLONES float exp_row_shifted(float* x, int64_t n, float scale, float mx) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t full = n - n % kLanes;
  const float c = scale * kLog2e;
  vf vs = vsplat(0.f);
  for (int64_t j = 0; j < full; j += kLanes) {
    const vf e = vexp2<false>((vload(x + j) - mx) * c);
    vstore(x + j, e);
    vs += e;
  }
  if (full < n) {
    const vf e = vexp2<false>((vload_tail(x + full, n - full, ninf) - mx) * c);
    vstore_tail(x + full, e, n - full);
    vs += e;
  }
  return hsum(vs);
}

// The natural log-sum-exp of a row, scale * mx + ln(sum), from its maximum mx and exp_row_shifted's sum, in one
// rounding: where ln(sum) is below half an ulp of scale * mx it is exactly the backward's rounded scale * s for the
// row's maximum s, so P's largest value comes out as exp(0) = 1 however large the scores (as in ATen's flash kernels).
// In float: glibc's double log2 carries a GLIBC_2.29 symbol version, above the manylinux_2_28 baseline
// (test_fixes_symbols.py).
float row_lse(float sum, float mx, float scale) { return std::fma(mx, scale, kLn2 * std::log2(sum)); }

// log2(x) lane-wise for positive normal finite x: x = 2^e m with m in [1/sqrt 2, sqrt 2), and
// log2 m = (2 / ln 2) atanh(t), t = (m - 1) / (m + 1), |t| <= 0.1716, by its odd series up to t^9 (the next term is
// under 1.1e-9). Other lanes give garbage; callers take them to std::log2.
CATCH_INLINE vf vlog2(vf x) {
  const vi bits = __builtin_bit_cast(vi, x);
  vi e = (bits >> 23) - 127;
  vf m = __builtin_bit_cast(vf, (bits & 0x7FFFFF) | 0x3F800000);
  const auto big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1 : e;
  const vf t = (m - 1.f) / (m + 1.f), t2 = t * t;
  vf p = vsplat(0.32059889797547596f);  // 2 / (9 ln 2), then 2 / (7 ln 2), ... 2 / ln 2
  p = p * t2 + 0.41219858311113244f;
  p = p * t2 + 0.57707801635558537f;
  p = p * t2 + 0.96179669392597560f;
  p = p * t2 + 2.88539008177792681f;
  return __builtin_convertvector(e, vf) + t * p;
}

// lse[r * stride] = row_lse(sums[r], maxes[r], scale) for r < m, the log2 of 16 rows at a time (vlog2; std::log2 for
// sums that are not positive normal finite floats: 0, inf or NaN rows). sums and maxes hold whole vectors of rows
// (m rounded up to kLanes).
CATCH_ISA_CLONES void block_lse(int64_t m, const float* sums, const float* maxes, float scale, float* lse,
                                int64_t stride) {
  for (int64_t r0 = 0; r0 < m; r0 += kLanes) {
    const vf ln_sums = vlog2(vload(sums + r0)) * kLn2;
    for (int64_t i = 0; i < kLanes && r0 + i < m; ++i) {
      const float sum = sums[r0 + i];
      const bool normal = sum >= std::numeric_limits<float>::min() && sum <= std::numeric_limits<float>::max();
      lse[(r0 + i) * stride] = normal ? std::fma(maxes[r0 + i], scale, ln_sums[i]) : row_lse(sum, maxes[r0 + i], scale);
    }
  }
}

// x[0..n) <- softmax(scale * x); returns the log-sum-exp of scale * x. scale > 0.
CATCH_ISA_CLONES float softmax_row(float* x, int64_t n, float scale) {
  const float mx = row_max(x, n);
  const float sum = exp_row_shifted(x, n, scale, mx);
  const float inv = 1.f / sum;
  const int64_t full = n - n % kLanes;
  for (int64_t j = 0; j < full; j += kLanes) vstore(x + j, vload(x + j) * inv);
  for (int64_t j = full; j < n; ++j) x[j] *= inv;
  return row_lse(sum, mx, scale);
}

// One row of the backward's row pass, from the scores s and dP: p <- P = exp(scale * s - lse), the argument formed
// as (scale * s - lse) log2(e), scale * s rounded first as in row_lse, and
// dp <- dS = P * (dP - d) * scale, where d = rowsum(dO * O).
CATCH_ISA_CLONES void probs_and_grad_scores_row(float* p, float* dp, int64_t n, float scale, float lse, float d) {
  const int64_t full = n - n % kLanes;
  for (int64_t j = 0; j < full; j += kLanes) {
    const vf e = vexp2<true>((vload(p + j) * scale - lse) * kLog2e);
    vstore(p + j, e);
    vstore(dp + j, e * (vload(dp + j) - d) * scale);
  }
  if (full < n) {
    const int64_t rest = n - full;
    const vf e = vexp2<true>((vload_tail(p + full, rest, 0.f) * scale - lse) * kLog2e);
    vstore_tail(p + full, e, rest);
    vstore_tail(dp + full, e * (vload_tail(dp + full, rest, 0.f) - d) * scale, rest);
  }
}

// One row of the backward's row pass from the saved P: dp <- dS = P * (dP - d) * scale, where d = rowsum(dO * O).
CATCH_ISA_CLONES void grad_scores_row(const float* p, float* dp, int64_t n, float scale, float d) {
  const int64_t full = n - n % kLanes;
  for (int64_t j = 0; j < full; j += kLanes) vstore(dp + j, vload(p + j) * (vload(dp + j) - d) * scale);
  for (int64_t j = full; j < n; ++j) dp[j] = p[j] * (dp[j] - d) * scale;
}

// dst[r * n + 0..n) <- src[r * n + 0..n) * f[r] for r < m, with non-temporal stores (SSE's movntps, in every
// x86-64 baseline): dst is written past the caches, without reading its lines in first; n a multiple of 4, dst
// 16-byte aligned. The caller issues _mm_sfence before another thread reads dst.
void stream_rows(int64_t m, int64_t n, const float* f, const float* src, float* dst) {
  for (int64_t r = 0; r < m; ++r) {
    const __m128 fr = _mm_set1_ps(f[r]);
    for (int64_t j = 0; j < n; j += 4) _mm_stream_ps(dst + r * n + j, _mm_mul_ps(_mm_loadu_ps(src + r * n + j), fr));
  }
}

// o[r * ldo + 0..n) *= f[r] for r < m.
CATCH_ISA_CLONES void scale_rows(int64_t m, int64_t n, const float* f, float* o, int64_t ldo) {
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < n; ++j) o[r * ldo + j] *= f[r];
  }
}

// ---- the ops ------------------------------------------------------------------------------------------------------
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

// ---- the register-tiled path -------------------------------------------------------------------------------------
// A (B, H, n, d) float32 tensor's heads: rows of d contiguous floats, any batch, head and row strides.
struct Heads {
  float* data;
  int64_t sb, sh, row;
  explicit Heads(const at::Tensor& t)
      : data(t.data_ptr<float>()), sb(t.stride(0)), sh(t.stride(1)), row(t.stride(2)) {}
  float* head(int64_t b, int64_t h) const { return data + b * sb + h * sh; }
};

bool tiled_path(const at::Tensor& q, const at::Tensor& v) {
  return q.dim() == 4 && v.dim() == 4 && q.size(3) % kLanes == 0 && v.size(3) % kLanes == 0;
}

// Query rows per block: the block's (rows x padded keys) score matrix within 128 KiB, at least 8 rows.
int64_t rows_per_block(int64_t l, int64_t sp) { return std::min(l, std::max<int64_t>(8, (int64_t{1} << 15) / sp)); }

// head's (S, d) rows -> (d, sp) transposed into dst, columns from S to sp zero.
void transpose_head(const float* src, int64_t row, int64_t s, int64_t d, int64_t sp, float* dst) {
  std::fill(dst, dst + d * sp, 0.f);
  for (int64_t j = 0; j < s; ++j)
    for (int64_t c = 0; c < d; ++c) dst[c * sp + j] = src[j * row + c];
}

// With `probs` (B * H heads of (L, sp) rows, contiguous, 16-byte aligned), each block's P is also streamed out there
// for the backward, its rows divided by their sums after O = P V has used them (O is divided by the sums as without
// probs, which rounds less than a product of rounded probabilities). Streamed, not stored: a store to a line that is
// not in cache reads it in first, so plain stores would read all of P (megabytes) from memory only to overwrite it
// (benchmarks/bench_attention.py times the forward); the backward reads P once, in order.
void attention_tiled(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, float scale, const at::Tensor& out,
                     const at::Tensor& lse, float* probs = nullptr) {
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

// The backward of one head per task, its row blocks in turn (dK and dV sum over all of the head's query rows). With
// `probs` (the forward's P: B * H heads of (L, sp) rows, row stride sp) it starts from P: no scores to form again and
// no exp, four products per row block instead of five. Without, P comes from the scores and `lse`.
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

// ---- the ops that keep P for the backward --------------------------------------------------------------------------
// torch_mlu.compile (saved_probs.py) rewrites a training graph's flash-attention forward and backward into these
// when the backward can use the forward's probabilities: the forward also returns P = softmax(scale Q Kᵀ), and the
// backward starts from it instead of forming the scores and their exp again (one product of five, and the exp pass).

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

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_mlu, m) {
  // flexible_layout: the kernels take inputs of any strides, so Inductor need not convert its buffers' layouts.
  m.def("attention(Tensor query, Tensor key, Tensor value, *, float? scale=None) -> (Tensor output, Tensor logsumexp)",
        {at::Tag::flexible_layout});
  m.def(
      "attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, *, "
      "float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)",
      {at::Tag::flexible_layout});
  m.def(
      "attention_with_probs(Tensor query, Tensor key, Tensor value, *, float? scale=None) -> (Tensor output, "
      "Tensor logsumexp, Tensor probs)",
      {at::Tag::flexible_layout});
  m.def(
      "attention_backward_with_probs(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, "
      "Tensor probs, *, float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)",
      {at::Tag::flexible_layout});
}

TORCH_LIBRARY_IMPL(torch_mlu, CPU, m) {
  m.impl("attention", &attention);
  m.impl("attention_backward", &attention_backward);
  m.impl("attention_with_probs", &attention_with_probs);
  m.impl("attention_backward_with_probs", &attention_backward_with_probs);
}

}  // namespace torch_mlu
