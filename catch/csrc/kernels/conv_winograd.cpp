// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// Winograd F(2x2, 3x3) convolution (conv_winograd.h). With g a 3x3 filter, d a 4x4 input block and Y its 2x2 output
// block (Lavin and Gray 2016, eq. 8):
//
//   Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A
//   Bᵀ = | 1  0 -1  0 |    G = | 1    0    0   |    Aᵀ = | 1  1  1  0 |
//        | 0  1  1  0 |        | 1/2  1/2  1/2 |         | 0  1 -1 -1 |
//        | 0 -1  1  0 |        | 1/2 -1/2  1/2 |
//        | 0  1  0 -1 |        | 0    0    1   |
//
// Summed over input channels, each of the 16 positions ξ of the transformed blocks is one matrix product over a
// batch of blocks: M_ξ (blocks x cout) = V_ξ (blocks x cin) U_ξ (cin x cout), with V = Bᵀ d B and U = G g Gᵀ; these
// run on the register-tiled loops of tiled_product.h. The transforms work on 16 channels at a time (one vector), so
// each image is first laid out channels-last. The weight gradient follows from the same equation:
//
//   dL/dU_ξ = Σ_blocks (A dY Aᵀ)_ξ V_ξ  (cout x cin per ξ),   dL/dg = Gᵀ (dL/dU) G.
//
// The input gradient is a forward convolution (of grad_out, with the weights flipped and transposed), so
// conv.cpp calls forward() for it.
#include "conv_winograd.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "isa_clones.h"
#include "thread_partials.h"
#include "tiled_product.h"

namespace torch_mlu {
namespace {

using winograd::Shape;

constexpr int64_t kPositions = 16;  // ξ: the 4 x 4 positions of a transformed block
// Output blocks per matrix product: enough rows for the tiled loops, few enough that a task's transformed blocks
// stay in the core's L2 cache.
constexpr int64_t kBlocksPerTask = 64;

// The distance between two positions' planes of transformed blocks: their size plus a cache line, so that the 16
// lines a block's transform writes (or a product reads) do not all fall in one cache set (planes of 4 KiB did: the
// input transform ran 4x slower).
constexpr int64_t plane_stride(int64_t size) { return size + kLanes; }

// How the output splits into 2x2 blocks, and the padded channels-last layout they are read from.
struct Blocks {
  int64_t oh, ow, bh, bw, per_image, wp, cinp, coutp;
  explicit Blocks(const Shape& s)
      : oh(s.h + 2 * s.ph - 2),
        ow(s.w + 2 * s.pw - 2),
        bh((oh + 1) / 2),
        bw((ow + 1) / 2),
        per_image(bh * bw),
        wp(2 * bw + 2),  // a padded input row, plus a zero column where ow is odd
        cinp(whole_vectors(s.cin)),
        coutp(whole_vectors(s.cout)) {}
};

// One task's share of the blocks: the block rows [row0, row1) of `images` images from `first` (whole images where
// several make kBlocksPerTask blocks, else a band of one image's rows, so that large images stay in cache too).
struct Task {
  int64_t first, images, row0, row1;
  int64_t blocks(const Blocks& b) const { return images * (row1 - row0) * b.bw; }
};

std::vector<Task> split(int64_t n, const Blocks& b) {
  std::vector<Task> tasks;
  if (b.per_image <= kBlocksPerTask) {
    const int64_t per_task = kBlocksPerTask / b.per_image;
    for (int64_t i = 0; i < n; i += per_task) tasks.push_back({i, std::min(per_task, n - i), 0, b.bh});
    return tasks;
  }
  const int64_t rows = std::max<int64_t>(1, kBlocksPerTask / b.bw);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t r = 0; r < b.bh; r += rows) tasks.push_back({i, 1, r, std::min(b.bh, r + rows)});
  }
  return tasks;
}

// Rows [r0, r0 + rows) of planes (c x h x w) placed at (py, px) in a zero plane of width wp -> out (rows x wp x cp)
// channels-last; zero outside the planes and in channels c..cp. Written in order, read across the planes. Returns
// whether every value read is moderate (all_moderate).
bool to_channels_last(const float* planes, int64_t c, int64_t h, int64_t w, int64_t py, int64_t px, int64_t r0,
                      int64_t rows, int64_t wp, int64_t cp, float* out);

// v[ξ * ldv + (slot + k) * cinp + c] <- (Bᵀ d B)_ξ for the blocks of rows [row0, row1), k counting them in order; d
// the 4x4 input block, from hwc holding the padded rows from 2 row0 on.
CATCH_ISA_CLONES void input_transform(const float* hwc, const Blocks& b, int64_t row0, int64_t row1, float* v,
                                      int64_t ldv, int64_t slot) {
  const int64_t cp = b.cinp;
  for (int64_t by = row0; by < row1; ++by) {
    for (int64_t bx = 0; bx < b.bw; ++bx) {
      float* dst = v + (slot + (by - row0) * b.bw + bx) * cp;
      for (int64_t c = 0; c < cp; c += kLanes) {
        vf r[4][4];
        for (int j = 0; j < 4; ++j) {  // Bᵀ d, a column of the input block at a time
          const float* col = hwc + ((2 * (by - row0)) * b.wp + 2 * bx + j) * cp + c;
          const vf d0 = vload(col), d1 = vload(col + b.wp * cp), d2 = vload(col + 2 * b.wp * cp);
          const vf d3 = vload(col + 3 * b.wp * cp);
          r[0][j] = d0 - d2;
          r[1][j] = d1 + d2;
          r[2][j] = d2 - d1;
          r[3][j] = d1 - d3;
        }
        for (int i = 0; i < 4; ++i) {  // (Bᵀ d) B
          vstore(dst + (i * 4 + 0) * ldv + c, r[i][0] - r[i][2]);
          vstore(dst + (i * 4 + 1) * ldv + c, r[i][1] + r[i][2]);
          vstore(dst + (i * 4 + 2) * ldv + c, r[i][2] - r[i][1]);
          vstore(dst + (i * 4 + 3) * ldv + c, r[i][1] - r[i][3]);
        }
      }
    }
  }
}

// The output blocks of rows [row0, row1) from m[ξ * ldm + (slot + k) * coutp + co]: Aᵀ m A plus the bias, into hwc
// (2 (row1 - row0) x 2 bw x coutp, channels-last).
CATCH_ISA_CLONES void output_transform(const float* m, int64_t ldm, int64_t slot, const Blocks& b, int64_t row0,
                                       int64_t row1, const float* bias, float* hwc) {
  const int64_t cp = b.coutp, w2 = 2 * b.bw;
  for (int64_t by = row0; by < row1; ++by) {
    for (int64_t bx = 0; bx < b.bw; ++bx) {
      const float* src = m + (slot + (by - row0) * b.bw + bx) * cp;
      float* dst = hwc + (2 * (by - row0) * w2 + 2 * bx) * cp;
      for (int64_t c = 0; c < cp; c += kLanes) {
        vf s[2][4];
        for (int j = 0; j < 4; ++j) {  // Aᵀ m
          const vf m0 = vload(src + (0 * 4 + j) * ldm + c), m1 = vload(src + (1 * 4 + j) * ldm + c);
          const vf m2 = vload(src + (2 * 4 + j) * ldm + c), m3 = vload(src + (3 * 4 + j) * ldm + c);
          s[0][j] = m0 + m1 + m2;
          s[1][j] = m1 - m2 - m3;
        }
        const vf bv = vload(bias + c);
        for (int a = 0; a < 2; ++a) {  // (Aᵀ m) A
          vstore(dst + a * w2 * cp + c, s[a][0] + s[a][1] + s[a][2] + bv);
          vstore(dst + (a * w2 + 1) * cp + c, s[a][1] - s[a][2] - s[a][3] + bv);
        }
      }
    }
  }
}

// hwc (output rows from 2 row0 on, 2 bw x coutp each, channels-last) -> those rows of out (cout x oh x ow), up to
// row 2 row1 and the rows and columns past oh and ow dropped.
void to_planes(const float* hwc, const Blocks& b, int64_t row0, int64_t row1, int64_t cout, float* out) {
  const int64_t w2 = 2 * b.bw, plane = b.oh * b.ow;
  for (int64_t y = 2 * row0; y < std::min(2 * row1, b.oh); ++y) {
    for (int64_t x = 0; x < b.ow; ++x) {
      const float* src = hwc + ((y - 2 * row0) * w2 + x) * b.coutp;
      float* dst = out + y * b.ow + x;
      for (int64_t c = 0; c < cout; ++c) dst[c * plane] = src[c];
    }
  }
}

// u[ξ * cin * coutp + ci * coutp + co] <- (G g Gᵀ)_ξ for each filter g = weight[co][ci] (3x3); columns cout..coutp
// zero.
std::vector<float> weight_transform(const float* weight, int64_t cin, int64_t cout, int64_t coutp) {
  std::vector<float> u(static_cast<size_t>(kPositions * cin * coutp), 0.0f);
  for (int64_t co = 0; co < cout; ++co) {
    for (int64_t ci = 0; ci < cin; ++ci) {
      const float* g = weight + (co * cin + ci) * 9;
      float a[4][3];
      for (int j = 0; j < 3; ++j) {  // G g
        a[0][j] = g[j];
        a[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
        a[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
        a[3][j] = g[6 + j];
      }
      for (int i = 0; i < 4; ++i) {  // (G g) Gᵀ
        const float row[4] = {a[i][0], 0.5f * (a[i][0] + a[i][1] + a[i][2]), 0.5f * (a[i][0] - a[i][1] + a[i][2]),
                              a[i][2]};
        for (int j = 0; j < 4; ++j) u[((i * 4 + j) * cin + ci) * coutp + co] = row[j];
      }
    }
  }
  return u;
}

// m[ξ * ldm + (slot + k) * coutp + co] <- (A dY Aᵀ)_ξ for the 2x2 output blocks dY of rows [row0, row1), from the
// output gradient's rows from 2 row0 on, channels-last (2 bw x coutp each, zero past oh and ow).
CATCH_ISA_CLONES void grad_output_transform(const float* hwc, const Blocks& b, int64_t row0, int64_t row1, float* m,
                                            int64_t ldm, int64_t slot) {
  const int64_t cp = b.coutp, w2 = 2 * b.bw;
  for (int64_t by = row0; by < row1; ++by) {
    for (int64_t bx = 0; bx < b.bw; ++bx) {
      float* dst = m + (slot + (by - row0) * b.bw + bx) * cp;
      for (int64_t c = 0; c < cp; c += kLanes) {
        const float* src = hwc + ((2 * (by - row0)) * w2 + 2 * bx) * cp + c;
        const vf y00 = vload(src), y01 = vload(src + cp), y10 = vload(src + w2 * cp), y11 = vload(src + (w2 + 1) * cp);
        const vf r[4][2] = {{y00, y01}, {y00 + y10, y01 + y11}, {y00 - y10, y01 - y11}, {-y10, -y11}};  // A dY
        for (int i = 0; i < 4; ++i) {  // (A dY) Aᵀ
          vstore(dst + (i * 4 + 0) * ldm + c, r[i][0]);
          vstore(dst + (i * 4 + 1) * ldm + c, r[i][0] + r[i][1]);
          vstore(dst + (i * 4 + 2) * ldm + c, r[i][0] - r[i][1]);
          vstore(dst + (i * 4 + 3) * ldm + c, -r[i][1]);
        }
      }
    }
  }
}

CATCH_INLINE vi vsplat_int(int32_t x) {
  vi v;
  for (int64_t i = 0; i < kLanes; ++i) v[i] = x;
  return v;
}

// sum[0..n) += the rows of x (rows x n, n a multiple of kLanes).
CATCH_ISA_CLONES void add_rows(const float* x, int64_t rows, int64_t n, float* sum) {
  for (int64_t c = 0; c < n; c += kLanes) {
    vf acc = vload(sum + c);
    for (int64_t r = 0; r < rows; ++r) acc += vload(x + r * n + c);
    vstore(sum + c, acc);
  }
}

// Plain vector arithmetic (compares would go through mask registers): x * 0 is NaN exactly for inf and NaN, and the
// largest magnitude bounds the rest.
CATCH_ISA_CLONES bool all_moderate(const float* x, int64_t n) {
  constexpr float kLimit = 0x1p100f;
  const int64_t full = n - n % kLanes;
  vf zeros = {}, largest = {};
  const vi magnitude = vsplat_int(0x7fffffff);
  for (int64_t i = 0; i < full; i += kLanes) {
    const vf v = vload(x + i);
    zeros += v * 0.0f;
    const vf a = __builtin_bit_cast(vf, __builtin_bit_cast(vi, v) & magnitude);
    largest = a > largest ? a : largest;
  }
  bool ok = hsum(zeros) == 0.0f && hmax(largest) < kLimit;
  for (int64_t i = full; i < n; ++i) ok = ok && x[i] < kLimit && x[i] > -kLimit;
  return ok;
}

bool to_channels_last(const float* planes, int64_t c, int64_t h, int64_t w, int64_t py, int64_t px, int64_t r0,
                      int64_t rows, int64_t wp, int64_t cp, float* out) {
  const int64_t plane = h * w;
  const int64_t y0 = std::clamp<int64_t>(r0 - py, 0, h), y1 = std::clamp<int64_t>(r0 + rows - py, 0, h);
  bool moderate = true;
  for (int64_t ch = 0; ch < c && y0 < y1; ++ch) {
    moderate = moderate && all_moderate(planes + ch * plane + y0 * w, (y1 - y0) * w);
  }
  for (int64_t k = 0; k < rows; ++k) {
    float* row = out + k * wp * cp;
    const int64_t y = r0 + k - py;
    if (y < 0 || y >= h) {
      std::fill(row, row + wp * cp, 0.0f);
      continue;
    }
    std::fill(row, row + px * cp, 0.0f);
    std::fill(row + (px + w) * cp, row + wp * cp, 0.0f);
    for (int64_t x = 0; x < w; ++x) {
      float* dst = row + (x + px) * cp;
      const float* src = planes + y * w + x;
      for (int64_t ch = 0; ch < c; ++ch) dst[ch] = src[ch * plane];
      for (int64_t ch = c; ch < cp; ++ch) dst[ch] = 0.0f;
    }
  }
  return moderate;
}

}  // namespace

namespace winograd {

bool applies(int64_t kh, int64_t kw, int64_t ph, int64_t pw) {
  return kh == 3 && kw == 3 && ph >= 0 && ph <= 2 && pw >= 0 && pw <= 2;
}

bool forward(const Shape& s, const float* input, const float* weight, const float* bias, float* out) {
  if (!all_moderate(weight, s.cout * s.cin * 9)) return false;
  std::atomic<bool> moderate{true};
  const Blocks b(s);
  const auto u = weight_transform(weight, s.cin, s.cout, b.coutp);
  std::vector<float> bias_padded(static_cast<size_t>(b.coutp), 0.0f);
  if (bias != nullptr) std::copy(bias, bias + s.cout, bias_padded.begin());
  const auto tasks = split(s.n, b);
  int64_t rows = 0, band = 0;  // the most blocks and block rows of a task
  for (const Task& t : tasks) rows = std::max(rows, t.blocks(b)), band = std::max(band, t.row1 - t.row0);
  at::parallel_for(0, static_cast<int64_t>(tasks.size()), 1, [&](int64_t begin, int64_t end) {
    const int64_t ldv = plane_stride(rows * b.cinp), ldm = plane_stride(rows * b.coutp);
    std::vector<float> hwc(static_cast<size_t>((2 * band + 2) * b.wp * b.cinp));
    std::vector<float> v(static_cast<size_t>(kPositions * ldv)), m(static_cast<size_t>(kPositions * ldm));
    std::vector<float> out_hwc(static_cast<size_t>(2 * band * 2 * b.bw * b.coutp));
    for (int64_t index = begin; index < end; ++index) {
      const Task& t = tasks[index];
      const int64_t per_image = (t.row1 - t.row0) * b.bw;
      for (int64_t i = 0; i < t.images; ++i) {
        const float* image = input + (t.first + i) * s.cin * s.h * s.w;
        if (!to_channels_last(image, s.cin, s.h, s.w, s.ph, s.pw, 2 * t.row0, 2 * (t.row1 - t.row0) + 2, b.wp,
                              b.cinp, hwc.data())) {
          moderate.store(false, std::memory_order_relaxed);
        }
        input_transform(hwc.data(), b, t.row0, t.row1, v.data(), ldv, i * per_image);
      }
      for (int64_t xi = 0; xi < kPositions; ++xi) {
        product_set(t.blocks(b), b.coutp, s.cin, v.data() + xi * ldv, b.cinp, 1, u.data() + xi * s.cin * b.coutp,
                    b.coutp, m.data() + xi * ldm, b.coutp);
      }
      for (int64_t i = 0; i < t.images; ++i) {
        output_transform(m.data(), ldm, i * per_image, b, t.row0, t.row1, bias_padded.data(), out_hwc.data());
        to_planes(out_hwc.data(), b, t.row0, t.row1, s.cout, out + (t.first + i) * s.cout * b.oh * b.ow);
      }
    }
  });
  return moderate.load();
}

bool weight_gradient(const Shape& s, const float* input, const float* grad_out, float* grad_weight,
                     float* grad_bias) {
  std::atomic<bool> moderate{true};
  const Blocks b(s);
  const auto tasks = split(s.n, b);
  int64_t rows = 0, band = 0;
  for (const Task& t : tasks) rows = std::max(rows, t.blocks(b)), band = std::max(band, t.row1 - t.row0);
  ThreadPartials partials(kPositions * s.cout * b.cinp + b.coutp);  // dL/dU, then the bias gradient
  at::parallel_for(0, static_cast<int64_t>(tasks.size()), 1, [&](int64_t begin, int64_t end) {
    const int64_t ldv = plane_stride(rows * b.cinp), ldm = plane_stride(rows * b.coutp);
    const int64_t input_rows = (2 * band + 2) * b.wp * b.cinp, grad_rows = 2 * band * 2 * b.bw * b.coutp;
    std::vector<float> hwc(static_cast<size_t>(std::max(input_rows, grad_rows)));
    std::vector<float> v(static_cast<size_t>(kPositions * ldv)), m(static_cast<size_t>(kPositions * ldm));
    float* du = partials.mine();
    float* db = du + kPositions * s.cout * b.cinp;
    for (int64_t index = begin; index < end; ++index) {
      const Task& t = tasks[index];
      const int64_t per_image = (t.row1 - t.row0) * b.bw;
      for (int64_t i = 0; i < t.images; ++i) {
        const float* image = input + (t.first + i) * s.cin * s.h * s.w;
        const float* dy = grad_out + (t.first + i) * s.cout * b.oh * b.ow;
        const bool image_ok = to_channels_last(image, s.cin, s.h, s.w, s.ph, s.pw, 2 * t.row0,
                                               2 * (t.row1 - t.row0) + 2, b.wp, b.cinp, hwc.data());
        input_transform(hwc.data(), b, t.row0, t.row1, v.data(), ldv, i * per_image);
        const bool dy_ok = to_channels_last(dy, s.cout, b.oh, b.ow, 0, 0, 2 * t.row0, 2 * (t.row1 - t.row0),
                                            2 * b.bw, b.coutp, hwc.data());
        if (!image_ok || !dy_ok) moderate.store(false, std::memory_order_relaxed);
        grad_output_transform(hwc.data(), b, t.row0, t.row1, m.data(), ldm, i * per_image);
      }
      add_rows(m.data() + 5 * ldm, t.blocks(b), b.coutp, db);  // (A dY Aᵀ) at ξ = (1, 1) is the sum of the block
      for (int64_t xi = 0; xi < kPositions; ++xi) {  // dL/dU_ξ (cout x cinp) += M_ξᵀ V_ξ
        product_add(s.cout, b.cinp, t.blocks(b), m.data() + xi * ldm, 1, b.coutp, v.data() + xi * ldv, b.cinp,
                    du + xi * s.cout * b.cinp, b.cinp);
      }
    }
  });
  if (!moderate.load()) return false;
  const float* total = partials.total();
  if (grad_bias != nullptr) std::copy_n(total + kPositions * s.cout * b.cinp, s.cout, grad_bias);
  if (grad_weight == nullptr) return true;
  for (int64_t co = 0; co < s.cout; ++co) {
    for (int64_t ci = 0; ci < s.cin; ++ci) {
      float x[4][4], a[3][4];
      for (int64_t xi = 0; xi < kPositions; ++xi) x[xi / 4][xi % 4] = total[(xi * s.cout + co) * b.cinp + ci];
      for (int j = 0; j < 4; ++j) {  // Gᵀ X
        a[0][j] = x[0][j] + 0.5f * (x[1][j] + x[2][j]);
        a[1][j] = 0.5f * (x[1][j] - x[2][j]);
        a[2][j] = 0.5f * (x[1][j] + x[2][j]) + x[3][j];
      }
      float* g = grad_weight + (co * s.cin + ci) * 9;
      for (int i = 0; i < 3; ++i) {  // (Gᵀ X) G
        g[i * 3 + 0] = a[i][0] + 0.5f * (a[i][1] + a[i][2]);
        g[i * 3 + 1] = 0.5f * (a[i][1] - a[i][2]);
        g[i * 3 + 2] = 0.5f * (a[i][1] + a[i][2]) + a[i][3];
      }
    }
  }
  return true;
}

}  // namespace winograd
}  // namespace torch_mlu
