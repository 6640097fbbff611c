// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "utils.h"

#include "../core/device.h"

namespace torch_mlu::python {

void check_status(catch_rt::Status st, const char* what) {
  if (st != catch_rt::Status::Success) {  // as MLU_CHECK: torch.AcceleratorError with the status as error_code
    throw c10::AcceleratorError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, static_cast<int32_t>(st),
                                c10::str("MLU runtime error in ", what, ": ", catch_rt::statusString(st)));
  }
}

c10::DeviceIndex resolve(int64_t d) {
  auto idx = static_cast<c10::DeviceIndex>(d < 0 ? current_device() : d);
  check_device_index(idx);
  return idx;
}

}  // namespace torch_mlu::python
