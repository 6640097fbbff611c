// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// torch.mlu's device functions (torch_mlu._C): count, current device, synchronize, names and capacity, the fork
// handler, the device's lazy initialization, the current matrix-library handle.
#pragma once

#include <torch/csrc/utils/pybind.h>

namespace torch_mlu::python {

void init_device(pybind11::module& m);

}  // namespace torch_mlu::python
