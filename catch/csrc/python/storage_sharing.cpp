// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "storage_sharing.h"

#include <cstddef>
#include <cstdint>

#include "../core/storage_sharing.h"

namespace py = pybind11;

namespace torch_mlu::python {

void init_storage_sharing(py::module& m) {
  // (device, fd, allocation bytes, offset of the storage in the allocation); the fd stays owned by this process.
  m.def("_share_mlu_", [](const at::Storage& storage) {
    catch_rt::MemHandle h = share_storage(storage);
    return py::make_tuple(h.device, h.fd, h.size, h.offset);
  });
  m.def("_new_shared_mlu", [](int64_t device, int fd, std::size_t size, std::size_t offset, std::size_t nbytes) {
    return open_shared_storage(catch_rt::MemHandle{fd, offset, size, static_cast<int>(device)}, nbytes);
  });
}

}  // namespace torch_mlu::python
