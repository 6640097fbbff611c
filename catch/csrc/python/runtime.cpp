// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "runtime.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "../runtime/copy.h"
#include "../runtime/memory.h"
#include "utils.h"

namespace py = pybind11;

namespace torch_mlu::python {

void init_runtime(py::module& m) {
  // How many intra-op threads at::parallel_for runs Catch's kernels on (1 when the extension was built without
  // OpenMP: CMakeLists.txt); the test of the build compares it with torch.set_num_threads.
  m.def("_parallel_threads", [] {
    std::atomic<int> most{0};
    at::parallel_for(0, at::get_num_threads(), 1, [&](int64_t, int64_t) {
      const int mine = at::get_thread_num() + 1;
      int seen = most.load();
      while (seen < mine && !most.compare_exchange_weak(seen, mine)) {
      }
    });
    return most.load();
  });

  // raw runtime access (used by tests for pointer validation)
  m.def("_rt_malloc", [](int64_t d, uint64_t n) {
    void* p = nullptr;
    check_status(catch_rt::malloc(resolve(d), n, &p), "malloc");
    return reinterpret_cast<uintptr_t>(p);
  });
  m.def("_rt_free", [](uintptr_t p) { check_status(catch_rt::free(reinterpret_cast<void*>(p)), "free"); });
  m.def("_rt_memcpy_d2h", [](uintptr_t p, uint64_t n) {
    std::string buf(n, '\0');
    check_status(catch_rt::memcpy(buf.data(), reinterpret_cast<void*>(p), n, catch_rt::MemcpyKind::DeviceToHost),
                 "memcpy");
    return py::bytes(buf);
  });
  m.def("_rt_pointer_type", [](uintptr_t p) {
    catch_rt::PointerAttributes a;
    check_status(catch_rt::pointerGetAttributes(reinterpret_cast<void*>(p), &a), "pointerGetAttributes");
    switch (a.type) {
      case catch_rt::MemoryType::Device: return std::string("device");
      case catch_rt::MemoryType::PinnedHost: return std::string("pinned_host");
      default: return std::string("unregistered");
    }
  });
}

}  // namespace torch_mlu::python
