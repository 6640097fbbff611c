// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The mlu device type (PrivateUse1), runtime error checks, and the devices of this process: how many are visible
// and the current one of each thread. c10-level only (no ATen includes) so it stays cheap to include.
#pragma once

#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include "../runtime/status.h"

// A failed runtime call raises c10::AcceleratorError (torch.AcceleratorError, alias torch.mlu.AcceleratorError) with
// the runtime status as error_code, as C10_CUDA_CHECK does with the cudaError_t.
#define MLU_CHECK(expr)                                                                                \
  do {                                                                                                 \
    ::catch_rt::Status _st = (expr);                                                                   \
    if (C10_UNLIKELY(_st != ::catch_rt::Status::Success)) {                                            \
      throw ::c10::AcceleratorError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},             \
                                    static_cast<int32_t>(_st),                                         \
                                    ::c10::str("MLU runtime error: ", ::catch_rt::statusString(_st),  \
                                               " (", #expr, ")"));                                     \
    }                                                                                                  \
  } while (0)

namespace torch_mlu {

constexpr c10::DeviceType kMLU = c10::DeviceType::PrivateUse1;

c10::DeviceIndex device_count();
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex d);
// Raises like CUDA ("invalid device ordinal") for an index outside [0, count).
void check_device_index(c10::DeviceIndex d);

}  // namespace torch_mlu
