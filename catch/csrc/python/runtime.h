// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Raw runtime access for tests (pointer validation) and build facts (torch_mlu._C).
#pragma once

#include <torch/csrc/utils/pybind.h>

namespace torch_mlu::python {

void init_runtime(pybind11::module& m);

}  // namespace torch_mlu::python
