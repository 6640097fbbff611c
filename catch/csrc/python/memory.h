// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// torch.mlu.memory's functions (torch_mlu._C): the allocator in use and pluggable allocators, the caching
// allocator's controls, statistics, history and snapshots, private pools, pinned host memory statistics, busy times.
#pragma once

#include <torch/csrc/utils/pybind.h>

namespace torch_mlu::python {

void init_memory(pybind11::module& m);

}  // namespace torch_mlu::python
