// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "blas_handle.h"

#include <memory>
#include <vector>

#include "device.h"
#include "stream.h"

namespace torch_mlu {

BlasHandle* current_blas_handle() {
  thread_local std::vector<std::unique_ptr<BlasHandle>> handles;
  c10::DeviceIndex d = current_device();
  if (handles.size() <= static_cast<size_t>(d)) handles.resize(d + 1);
  auto& h = handles[d];
  if (h == nullptr) h = std::make_unique<BlasHandle>(BlasHandle{d, nullptr});
  h->queue = current_queue(d);
  return h.get();
}

}  // namespace torch_mlu
