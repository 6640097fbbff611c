// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The CPU fallback's accounting and the device-op list (torch_mlu._C; torch.mlu.fallback_report, device_kernel_ops).
#pragma once

#include <torch/csrc/utils/pybind.h>

namespace torch_mlu::python {

void init_fallback(pybind11::module& m);

}  // namespace torch_mlu::python
