// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "host_kernel.h"

#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <ATen/Functions.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "../core/device.h"
#include "../core/host_kernel.h"
#include "../core/stream.h"
#include "../ops/copy.h"
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

// Host aliases of mlu tensors for one kernel call: each device's current queue is waited for once (its queued work
// must finish before a host kernel touches the memory), and arguments on one device storage share one host storage.
class HostArgs {
 public:
  // `a` itself when it is not an mlu tensor, else its host alias (a new reference either way).
  py::object view(py::handle a) {
    if (!THPVariable_Check(a.ptr())) return py::reinterpret_borrow<py::object>(a);
    const at::Tensor& t = THPVariable_Unpack(a.ptr());
    if (!t.defined() || t.device().type() != kMLU) return py::reinterpret_borrow<py::object>(a);
    c10::DeviceIndex d = t.device().index();
    if (std::find(synced_.begin(), synced_.end(), d) == synced_.end()) {
      catch_rt::Queue* q = current_queue(d);
      if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
      synced_.push_back(d);
    }
    c10::StorageImpl* ds = t.storage().unsafeGetStorageImpl();
    c10::Storage hs;
    for (const auto& s : storages_) {
      if (s.first == ds) hs = s.second;
    }
    if (!hs) storages_.emplace_back(ds, hs = map_storage(*ds));
    return py::reinterpret_steal<py::object>(THPVariable_Wrap(host_alias(t, hs)));
  }

 private:
  std::vector<std::pair<c10::StorageImpl*, c10::Storage>> storages_;
  std::vector<c10::DeviceIndex> synced_;
};

// (host args, key): host aliases of the mlu tensors in `args` (other values as they are, HostArgs); key: per
// argument (dtype, sizes, strides, offset) or the value itself.
py::tuple host_args(const py::list& args) {
  HostArgs host;
  py::list views(args.size());
  py::tuple key(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    py::handle a = args[i];
    views[i] = host.view(a);
    if (!THPVariable_Check(a.ptr())) {
      key[i] = a;
      continue;
    }
    const at::Tensor& t = THPVariable_Unpack(a.ptr());
    key[i] = py::make_tuple(static_cast<int>(t.scalar_type()), py::tuple(py::cast(t.sizes().vec())),
                            py::tuple(py::cast(t.strides().vec())), t.storage_offset());
  }
  return py::make_tuple(views, key);
}

// _call_host(kernel, *args): kernel(*host args), HostArgs over `args`. Inductor's generated wrapper calls each CPU
// kernel of an mlu graph through it (torch_mlu.inductor.runtime), so it is a vectorcall function without pybind11's
// argument conversion.
PyObject* call_host(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(nargs >= 1, "_call_host(kernel, *args): expected the kernel");
  HostArgs host;
  c10::SmallVector<py::object, 16> views;
  c10::SmallVector<PyObject*, 16> raw;
  for (Py_ssize_t i = 1; i < nargs; ++i) {
    views.push_back(host.view(args[i]));
    raw.push_back(views.back().ptr());
  }
  return PyObject_Vectorcall(args[0], raw.data(), static_cast<size_t>(nargs - 1), nullptr);
  END_HANDLE_TH_ERRORS
}

void int_tuple(PyObject* obj, const char* what, c10::SmallVector<int64_t, 8>& out) {
  TORCH_CHECK_TYPE(PyTuple_Check(obj), "_empty_strided_mlu: ", what, " must be a tuple of ints, not ",
                   Py_TYPE(obj)->tp_name);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i) {
    int64_t v = PyLong_AsLongLong(PyTuple_GET_ITEM(obj, i));
    if (v == -1 && PyErr_Occurred()) throw python_error();
    out.push_back(v);
  }
}

// _empty_strided_mlu(size, stride, dtype): an uninitialized mlu tensor on the current device, as
// torch.empty_strided(size, stride, dtype=dtype, device="mlu") gives (the same kernel, ops/copy.h) without the
// argument parser and the dispatcher: what Inductor's generated wrapper allocates mlu buffers with, as it uses
// torch._C._dynamo.guards._empty_strided_cpu / _empty_strided_cuda for cpu / cuda (torch/csrc/dynamo/guards.cpp).
PyObject* empty_strided_mlu(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(nargs == 3, "_empty_strided_mlu(size, stride, dtype): expected 3 arguments, got ", nargs);
  c10::SmallVector<int64_t, 8> size;
  c10::SmallVector<int64_t, 8> stride;
  int_tuple(args[0], "size", size);
  int_tuple(args[1], "stride", stride);
  TORCH_CHECK_TYPE(THPDtype_Check(args[2]), "_empty_strided_mlu: dtype must be a torch.dtype, not ",
                   Py_TYPE(args[2])->tp_name);
  auto dtype = reinterpret_cast<THPDtype*>(args[2])->scalar_type;
  return THPVariable_Wrap(empty_strided(size, stride, dtype, std::nullopt, std::nullopt, std::nullopt));
  END_HANDLE_TH_ERRORS
}

PyMethodDef fast_methods[] = {
    {"_call_host", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call_host)), METH_FASTCALL,
     "_call_host(kernel, *args): kernel(*args) with host views of the mlu tensors in args"},
    {"_empty_strided_mlu", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(empty_strided_mlu)),
     METH_FASTCALL, "_empty_strided_mlu(size, stride, dtype): an uninitialized mlu tensor on the current device"},
    {nullptr, nullptr, 0, nullptr}};

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
  for (PyMethodDef* def = fast_methods; def->ml_name != nullptr; ++def) {
    m.add_object(def->ml_name,
                 py::reinterpret_steal<py::object>(PyCFunction_NewEx(def, nullptr, m.attr("__name__").ptr())));
  }
  m.def("_adopt_outputs", [](const py::sequence& outs, const py::dict& inputs_by_storage, int64_t d) {
    return adopt_outputs(outs, inputs_by_storage, resolve(d));
  });
  m.def("_run_host_kernel", [](const py::object& fn, const py::list& host, const py::list& args, int64_t d) {
    return run_host_kernel(fn, host, args, resolve(d));
  });
}

}  // namespace torch_mlu::python
