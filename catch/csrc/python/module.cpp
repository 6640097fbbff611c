// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// torch_mlu._C: the Python binding of the runtime, core and ops, one init function per torch.mlu submodule.
#include <torch/csrc/utils/pybind.h>

#include "device.h"
#include "fallback.h"
#include "host_kernel.h"
#include "memory.h"
#include "random.h"
#include "runtime.h"
#include "storage_sharing.h"
#include "streams.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "Catch MLU backend: emulated runtime and PrivateUse1 core";
  torch_mlu::python::init_device(m);
  torch_mlu::python::init_memory(m);
  torch_mlu::python::init_streams(m);
  torch_mlu::python::init_random(m);
  torch_mlu::python::init_host_kernel(m);
  torch_mlu::python::init_fallback(m);
  torch_mlu::python::init_runtime(m);
  torch_mlu::python::init_storage_sharing(m);
}
