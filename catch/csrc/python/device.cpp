// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "device.h"

#include <torch/csrc/utils/device_lazy_init.h>

#include <cstdint>
#include <optional>
#include <string>

#include "../core/blas_handle.h"
#include "../core/device.h"
#include "../core/hooks.h"
#include "../runtime/device.h"
#include "../runtime/queue.h"
#include "utils.h"

namespace py = pybind11;

namespace torch_mlu::python {

void init_device(py::module& m) {
  // The device's initialization (core/hooks.h), once per process: torch.mlu._lazy_init calls it on first use.
  m.def("_init", [] { lazy_init_device(); });
  m.def("_is_initialized", [] { return device_initialized(); });
  // fork poisoning, as CUDA does it (torch/csrc/utils/device_lazy_init): once mlu is initialized in a process, a
  // child forked from it is "in bad fork" and torch.mlu._lazy_init raises there.
  m.def("_register_fork_handler", [] { torch::utils::register_fork_handler_for_device_init(kMLU); });
  m.def("_is_in_bad_fork", [] { return torch::utils::is_device_in_bad_fork(kMLU); });
  m.def("device_count", [] { return static_cast<int>(device_count()); });
  m.def("current_device", [] { return static_cast<int>(current_device()); });
  m.def("set_device", [](int64_t d) { set_device(static_cast<c10::DeviceIndex>(d)); });
  m.def("exchange_device", [](int64_t d) {
    auto old = current_device();
    if (d >= 0) set_device(static_cast<c10::DeviceIndex>(d));
    return static_cast<int>(old);
  });
  m.def("synchronize", [](int64_t d) {
    py::gil_scoped_release nogil;
    check_status(catch_rt::deviceSynchronize(resolve(d)), "synchronize");
  });
  m.def("status_string", [](int code) {
    TORCH_CHECK(code >= 0 && code <= static_cast<int>(catch_rt::Status::TimingDisabled), "unknown MLU status ", code);
    return std::string(catch_rt::statusString(static_cast<catch_rt::Status>(code)));
  });
  m.def("device_name", [] { return std::string(catch_rt::deviceName()); });
  m.def("capacity", [] { return static_cast<uint64_t>(catch_rt::deviceCapacity()); });
  m.def("current_blas_handle", [] { return reinterpret_cast<uintptr_t>(current_blas_handle()); });
  m.def("_visible_device_count", [](const std::optional<std::string>& value, int physical) {
    return catch_rt::visibleDeviceCount(value.has_value() ? value->c_str() : nullptr, physical);
  });
}

}  // namespace torch_mlu::python
