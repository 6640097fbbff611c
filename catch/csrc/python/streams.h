// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// torch.mlu.streams' functions (torch_mlu._C): queues as torch.Stream, notifier timing.
#pragma once

#include <torch/csrc/utils/pybind.h>

namespace torch_mlu::python {

void init_streams(pybind11::module& m);

}  // namespace torch_mlu::python
