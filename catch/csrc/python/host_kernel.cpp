// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "host_kernel.h"

#include <torch/csrc/autograd/python_variable.h>

#include <ATen/Functions.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "../core/device.h"
#include "../core/host_kernel.h"
#include "../core/stream.h"
#include "../ops/host_call.h"
#include "../runtime/queue.h"
#include "utils.h"

namespace py = pybind11;

namespace torch_mlu::python {
namespace {

// Host-kernel mode for Python callers (torch_mlu.compile runs Inductor's CPU code on device memory): while entered
// on a thread, the CPU allocator hands out device memory of `device` there (HostKernelScope), which
// _wrap_host_outputs then turns into mlu storage without a copy.
class PyHostKernelScope {
 public:
  explicit PyHostKernelScope(c10::DeviceIndex device) : device_(device) {}
  void enter() {
    TORCH_CHECK(!scope_.has_value(), "host kernel scope entered twice");
    guard_.emplace(c10::Device(kMLU, device_));
    scope_.emplace();
  }
  void exit() {
    scope_.reset();
    guard_.reset();
  }

 private:
  c10::DeviceIndex device_;
  std::optional<c10::DeviceGuard> guard_;
  std::optional<HostKernelScope> scope_;
};

// The CPU outputs `outs` of compiled code as mlu tensors of the same geometry over their own storage, adopted
// (allocated in host-kernel mode on `device`; outputs sharing a storage share the adopted one); std::nullopt for
// an output whose storage is not such a block.
std::vector<std::optional<at::Tensor>> wrap_host_outputs(const std::vector<at::Tensor>& outs,
                                                         c10::DeviceIndex device) {
  std::vector<std::pair<c10::StorageImpl*, c10::Storage>> adopted;
  std::vector<std::optional<at::Tensor>> result;
  result.reserve(outs.size());
  for (const at::Tensor& out : outs) {
    TORCH_CHECK(out.device().is_cpu(), "_wrap_host_outputs: expected CPU tensors, got one on ", out.device());
    c10::StorageImpl* hs = out.storage().unsafeGetStorageImpl();
    std::optional<c10::Storage> ds;
    for (const auto& a : adopted) {
      if (a.first == hs) ds = a.second;
    }
    if (!ds.has_value()) {
      ds = adopt_storage(hs, device);
      if (ds.has_value()) adopted.emplace_back(hs, *ds);
    }
    if (ds.has_value()) {
      result.emplace_back(device_alias(out, std::move(*ds)));
    } else {
      result.emplace_back(std::nullopt);
    }
  }
  return result;
}

// ---- compiled fusion groups (torch_mlu.compile.group): one call each way per group run ----
// The per-call work of running Inductor's CPU code on device memory: queue sync, host views, the compiled
// function's key, host-kernel scope, adopting outputs. It is C++ because it runs on every group call: in Python the
// same steps cost more per call.

// (host args, key): host aliases of the mlu tensors in `args` (other values as they are), after the queued work of
// their devices' current queues finished; key: per argument (dtype, sizes, strides, offset) or the value itself.
py::tuple host_args(const py::list& args) {
  std::vector<std::pair<c10::StorageImpl*, c10::Storage>> storages;
  std::vector<c10::DeviceIndex> synced;
  py::list views(args.size());
  py::tuple key(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    py::handle a = args[i];
    if (!THPVariable_Check(a.ptr())) {
      views[i] = a;
      key[i] = a;
      continue;
    }
    const at::Tensor& t = THPVariable_Unpack(a.ptr());
    if (t.defined() && t.device().type() == kMLU) {
      c10::DeviceIndex d = t.device().index();
      if (std::find(synced.begin(), synced.end(), d) == synced.end()) {
        catch_rt::Queue* q = current_queue(d);
        if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
        synced.push_back(d);
      }
      c10::StorageImpl* ds = t.storage().unsafeGetStorageImpl();
      c10::Storage hs;
      for (const auto& s : storages) {
        if (s.first == ds) hs = s.second;
      }
      if (!hs) storages.emplace_back(ds, hs = map_storage(*ds));  // one host storage per device storage
      views[i] = py::reinterpret_steal<py::object>(THPVariable_Wrap(host_alias(t, hs)));
    } else {
      views[i] = a;
    }
    key[i] = py::make_tuple(static_cast<int>(t.scalar_type()), py::tuple(py::cast(t.sizes().vec())),
                            py::tuple(py::cast(t.strides().vec())), t.storage_offset());
  }
  return py::make_tuple(views, key);
}

// (mlu outputs, copies): `outs` (compiled code's CPU results) as mlu tensors of the same geometry. An output viewing
// an input (host storage address in `inputs_by_storage`, same dtype) becomes that view of the mlu input (as_strided:
// an autograd view sharing its version counter); one whose storage was allocated in host-kernel mode on `device` is
// adopted (wrap_host_outputs); any other storage is copied once to the device (`copies` counts those).
py::tuple adopt_outputs(const py::sequence& outs, const py::dict& inputs_by_storage, c10::DeviceIndex device) {
  const size_t n = outs.size();
  py::list result(n);
  std::vector<size_t> pending_pos;
  std::vector<at::Tensor> pending;
  std::vector<uintptr_t> ptrs;  // pending outputs' host storage addresses, read before adopting empties them
  for (size_t i = 0; i < n; ++i) {
    py::object o = outs[i];
    result[i] = o;
    if (!THPVariable_Check(o.ptr())) continue;
    const at::Tensor& out = THPVariable_Unpack(o.ptr());
    auto ptr = reinterpret_cast<uintptr_t>(out.storage().data_ptr().get());
    py::object key = py::int_(ptr);
    if (inputs_by_storage.contains(key)) {
      py::object base_obj = inputs_by_storage[key];
      const at::Tensor& base = THPVariable_Unpack(base_obj.ptr());
      if (base.dtype() == out.dtype()) {
        result[i] = py::reinterpret_steal<py::object>(
            THPVariable_Wrap(base.as_strided(out.sizes(), out.strides(), out.storage_offset())));
        continue;
      }
    }
    pending_pos.push_back(i);
    pending.push_back(out);
    ptrs.push_back(ptr);
  }
  std::vector<std::pair<uintptr_t, at::Tensor>> copied;  // host storage address -> flat uint8 mlu copy
  int64_t copies = 0;
  auto wrapped = wrap_host_outputs(pending, device);
  for (size_t j = 0; j < pending.size(); ++j) {
    const at::Tensor& out = pending[j];
    at::Tensor got;
    if (wrapped[j].has_value()) {
      got = *wrapped[j];
    } else if (ptrs[j] == 0) {
      got = at::empty_strided(out.sizes(), out.strides(), out.options().device(c10::Device(kMLU, device)));
    } else {
      at::Tensor flat;
      for (const auto& c : copied) {
        if (c.first == ptrs[j]) flat = c.second;
      }
      if (!flat.defined()) {
        flat = at::empty({0}, at::TensorOptions().dtype(at::kByte))
                   .set_(out.storage())
                   .to(c10::Device(kMLU, device));
        copied.emplace_back(ptrs[j], flat);
        ++copies;
      }
      got = flat.view(out.scalar_type()).as_strided(out.sizes(), out.strides(), out.storage_offset());
    }
    result[pending_pos[j]] = py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(got)));
  }
  return py::make_tuple(py::tuple(result), copies);
}

// Runs compiled CPU code `fn(*host_args)` in host-kernel mode on `device` and adopts its outputs (adopt_outputs,
// with the host storages of `host_args` standing for the mlu tensors of `args`).
py::tuple run_host_kernel(const py::object& fn, const py::list& host, const py::list& args, c10::DeviceIndex device) {
  py::object outs;
  {
    c10::DeviceGuard guard(c10::Device(kMLU, device));
    HostKernelScope scope;
    outs = fn(*host);
  }
  py::dict inputs_by_storage;
  for (size_t i = 0; i < args.size(); ++i) {
    py::handle a = args[i];
    if (!THPVariable_Check(a.ptr())) continue;
    const at::Tensor& h = THPVariable_Unpack(py::handle(host[i]).ptr());
    inputs_by_storage[py::int_(reinterpret_cast<uintptr_t>(h.storage().data_ptr().get()))] = a;
  }
  return adopt_outputs(py::reinterpret_borrow<py::sequence>(outs), inputs_by_storage, device);
}

}  // namespace

void init_host_kernel(py::module& m) {
  py::class_<PyHostKernelScope>(m, "_HostKernelScope")
      .def(py::init([](int64_t d) { return new PyHostKernelScope(resolve(d)); }))
      .def("__enter__", [](PyHostKernelScope& s) { s.enter(); })
      .def("__exit__", [](PyHostKernelScope& s, const py::args&) { s.exit(); });
  m.def("_wrap_host_outputs",
        [](const std::vector<at::Tensor>& outs, int64_t d) { return wrap_host_outputs(outs, resolve(d)); });
  m.def("_host_args", &host_args);
  m.def("_adopt_outputs", [](const py::sequence& outs, const py::dict& inputs_by_storage, int64_t d) {
    return adopt_outputs(outs, inputs_by_storage, resolve(d));
  });
  m.def("_run_host_kernel", [](const py::object& fn, const py::list& host, const py::list& args, int64_t d) {
    return run_host_kernel(fn, host, args, resolve(d));
  });
}

}  // namespace torch_mlu::python
