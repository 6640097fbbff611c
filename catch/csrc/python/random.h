// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// torch.mlu.random's functions (torch_mlu._C): the default generators.
#pragma once

#include <torch/csrc/utils/pybind.h>

namespace torch_mlu::python {

void init_random(pybind11::module& m);

}  // namespace torch_mlu::python
