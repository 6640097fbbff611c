// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Helpers of the Python bindings.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

#include "../runtime/status.h"

namespace torch_mlu::python {

// Raises "MLU runtime error in <what>: <status>" unless `st` is Success.
void check_status(catch_rt::Status st, const char* what);
// A device index from Python (-1: the current device), checked like CUDA's.
c10::DeviceIndex resolve(int64_t d);

}  // namespace torch_mlu::python
