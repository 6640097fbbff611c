// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// Per-thread partial sums for reductions inside at::parallel_for (the convolution kernels' weight and bias
// gradients, summed over images): each intra-op thread adds into its own zeroed slot, and the slots are summed once
// the threads have joined, so no two threads write the same memory.
#pragma once

#include <ATen/Parallel.h>

#include <cstdint>
#include <vector>

namespace torch_mlu {

class ThreadPartials {
 public:
  // `size` floats per intra-op thread (at::get_num_threads()), zeroed.
  explicit ThreadPartials(int64_t size)
      : size_(size), sums_(static_cast<size_t>(at::get_num_threads() * size), 0.0f) {}
  // The calling thread's slot (at::get_thread_num()); call inside the parallel region.
  float* mine() { return sums_.data() + at::get_thread_num() * size_; }
  // The slots summed, `size` floats; call after the parallel region.
  const float* total() {
    for (size_t slot = static_cast<size_t>(size_); slot < sums_.size(); slot += static_cast<size_t>(size_)) {
      for (int64_t k = 0; k < size_; ++k) sums_[static_cast<size_t>(k)] += sums_[slot + static_cast<size_t>(k)];
    }
    return sums_.data();
  }

 private:
  int64_t size_;
  std::vector<float> sums_;
};

}  // namespace torch_mlu
