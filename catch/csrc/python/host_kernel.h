// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Host-kernel mode for Python callers (torch_mlu._C): torch_mlu.compile runs Inductor's CPU code on device memory;
// the calls Inductor's generated wrapper makes for mlu graphs (_call_host, _empty_strided_mlu).
#pragma once

#include <torch/csrc/utils/pybind.h>

namespace torch_mlu::python {

void init_host_kernel(pybind11::module& m);

}  // namespace torch_mlu::python
