// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "fallback.h"

#include "../ops/fallback.h"
#include "../ops/registration.h"
#include "../ops/typed_kernels.h"

namespace py = pybind11;

namespace torch_mlu::python {

void init_fallback(py::module& m) {
  m.def("fallback_report", [] {
    py::dict out;
    for (const auto& kv : fallback_report()) out[py::str(kv.first)] = kv.second;
    return out;
  });
  m.def("reset_fallback_report", [] { reset_fallback_report(); });
  m.def("set_fallback_strict", [](bool on) { set_fallback_strict(on); });
  m.def("fallback_strict", [] { return fallback_strict(); });
  m.def("device_op_names", [] { return device_op_names(); });
  m.def("_typed_kernel_calls", [] { return typed_kernel_calls(); });
}

}  // namespace torch_mlu::python
