// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Sharing mlu storages between processes (torch_mlu._C, used by torch_mlu.reductions): _share_mlu_ and
// _new_shared_mlu, the counterparts of UntypedStorage._share_cuda_ and _new_shared_cuda.
#pragma once

#include <torch/csrc/utils/pybind.h>

namespace torch_mlu::python {

void init_storage_sharing(pybind11::module& m);

}  // namespace torch_mlu::python
