// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "streams.h"

#include "../core/device.h"
#include "../core/stream.h"
#include "../runtime/notifier.h"
#include "utils.h"

namespace py = pybind11;

namespace torch_mlu::python {

void init_streams(py::module& m) {
  m.def("current_stream", [](int64_t d) {
    auto s = current_stream(resolve(d));
    return py::make_tuple(s.id(), static_cast<int>(s.device_index()), static_cast<int>(s.device_type()));
  });
  m.def("set_stream", [](int64_t id, int64_t d) {
    set_current_stream(c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, resolve(d)), id));
  });

  m.def("elapsed_time", [](uintptr_t start, uintptr_t end) {
    float ms = 0;
    auto st = catch_rt::notifierElapsedTime(reinterpret_cast<catch_rt::Notifier*>(start),
                                            reinterpret_cast<catch_rt::Notifier*>(end), &ms);
    TORCH_CHECK(st != catch_rt::Status::TimingDisabled,
                "Both events must be created with argument 'enable_timing=True'.");
    TORCH_CHECK(st != catch_rt::Status::NotReady, "Both events must be completed before calculating elapsed time.");
    check_status(st, "elapsed_time");
    return ms;
  });
}

}  // namespace torch_mlu::python
