// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "random.h"

#include <torch/csrc/Generator.h>

#include "../core/device.h"
#include "../core/generator.h"

namespace py = pybind11;

namespace torch_mlu::python {

void init_random(py::module& m) {
  m.def("default_generators", [] {
    py::tuple t(device_count());
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      t[d] = py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(default_generator(d)));
    }
    return t;
  });
}

}  // namespace torch_mlu::python
