// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// torch_mlu._C: the Python binding of the runtime and core.
#include <torch/csrc/Generator.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/device_lazy_init.h>
#include <torch/csrc/profiler/combined_traceback.h>
#include <torch/csrc/Export.h>
#include <torch/csrc/utils/pybind.h>

#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core/mlu_core.h"
#include "mlu_aten.h"

namespace py = pybind11;

// From torch/csrc/profiler/python/combined_traceback.h (libtorch_python), declared here because that header pulls
// in nlohmann/json, which the wheel does not ship.
namespace torch {
TORCH_API std::vector<pybind11::object> py_symbolize(std::vector<CapturedTraceback*>& to_symbolize);
TORCH_PYTHON_API void installCapturedTracebackPython();
}  // namespace torch
using namespace torch_mlu;

namespace {

void check_status(catch_rt::Status st, const char* what) {
  TORCH_CHECK(st == catch_rt::Status::Success, "MLU runtime error in ", what, ": ", catch_rt::statusString(st));
}

c10::DeviceIndex resolve(int64_t d) {
  auto idx = static_cast<c10::DeviceIndex>(d < 0 ? current_device() : d);
  check_device_index(idx);
  return idx;
}

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

// Host storage `hs`, if its block was allocated in host-kernel mode on `device`, as mlu storage owning that memory
// (`hs` is left empty); std::nullopt for any other storage.
std::optional<c10::Storage> adopt_storage(c10::StorageImpl* hs, c10::DeviceIndex device) {
  size_t nbytes = hs->nbytes();
  c10::DataPtr& hp = hs->_mutable_data_ptr_no_checks();
  if (!adopt_host_block(hp, device)) return std::nullopt;
  c10::Storage ds(c10::Storage::use_byte_size_t(), nbytes, std::move(hp), device_allocator(), true);
  hs->set_data_ptr_noswap(c10::DataPtr(nullptr, c10::Device(c10::kCPU)));
  hs->set_nbytes(0);
  return ds;
}

// An mlu tensor over `storage` with the dtype, sizes, strides and storage offset of `like`.
at::Tensor mlu_tensor_like(c10::Storage storage, const at::Tensor& like) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage),
                                                   c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), like.dtype());
  impl->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  return at::Tensor(std::move(impl));
}

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
      result.emplace_back(mlu_tensor_like(std::move(*ds), out));
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

std::shared_ptr<c10::GatheredContext> gather_python_stack() {
  return torch::CapturedTraceback::gather(/*python=*/true, /*script=*/false, /*cpp=*/false);
}

// The allocator's state in torch.cuda.memory._snapshot()'s format (segments with blocks, device_traces), frames
// symbolized by PyTorch's own traceback code.
py::dict memory_snapshot() {
  auto blocks = snapshot_blocks();
  auto traces = snapshot_traces();
  std::vector<torch::CapturedTraceback*> to_symbolize;
  auto add = [&](const std::shared_ptr<c10::GatheredContext>& c) -> int64_t {
    auto* tb = dynamic_cast<torch::CapturedTraceback*>(c.get());
    if (tb == nullptr) return -1;
    to_symbolize.push_back(tb);
    return static_cast<int64_t>(to_symbolize.size()) - 1;
  };
  std::vector<int64_t> block_frames;
  for (const auto& b : blocks) block_frames.push_back(add(b.context));
  std::vector<std::vector<int64_t>> trace_frames;
  for (const auto& t : traces) {
    trace_frames.emplace_back();
    for (const auto& e : t) trace_frames.back().push_back(add(e.context));
  }
  std::vector<py::object> frames = torch::py_symbolize(to_symbolize);
  auto frames_of = [&](int64_t i) -> py::object { return i < 0 ? py::list() : frames[i]; };
  py::list segments;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto& b = blocks[i];
    py::dict block;
    block["address"] = b.addr;
    block["size"] = b.size;
    block["requested_size"] = b.requested;
    block["state"] = b.allocated ? "active_allocated" : "inactive";
    block["frames"] = frames_of(block_frames[i]);
    py::dict seg;
    seg["device"] = b.device;
    seg["address"] = b.addr;
    seg["total_size"] = b.size;
    seg["allocated_size"] = b.allocated ? b.size : 0;
    seg["active_size"] = b.allocated ? b.size : 0;
    seg["requested_size"] = b.requested;
    seg["stream"] = b.stream;
    seg["segment_type"] = b.size <= (1 << 20) ? "small" : "large";
    seg["segment_pool_id"] = py::make_tuple(0, b.pool);
    seg["is_expandable"] = false;
    seg["frames"] = frames_of(block_frames[i]);
    py::list bl;
    bl.append(block);
    seg["blocks"] = bl;
    segments.append(seg);
  }
  py::list device_traces;
  for (size_t d = 0; d < traces.size(); ++d) {
    py::list dt;
    for (size_t j = 0; j < traces[d].size(); ++j) {
      const auto& e = traces[d][j];
      py::dict entry;
      entry["action"] = e.action;
      entry["addr"] = e.addr;
      entry["size"] = e.size;
      entry["stream"] = e.stream;
      entry["time_us"] = e.time_us;
      entry["frames"] = frames_of(trace_frames[d][j]);
      dt.append(entry);
    }
    device_traces.append(dt);
  }
  py::dict out;
  out["segments"] = segments;
  out["device_traces"] = device_traces;
  return out;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "Catch MLU backend: emulated runtime and PrivateUse1 core";

  m.def("_init", [] {
    install_cpu_allocator_shim();
    register_device_kernels();
  });
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
  m.def("mem_get_info", [](int64_t d) {
    size_t free_b = 0;
    size_t total = 0;
    check_status(catch_rt::memGetInfo(resolve(d), &free_b, &total), "mem_get_info");
    return py::make_tuple(free_b, total);
  });

  // queues as torch.Stream(stream_id, device_index, device_type)
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

  // caching allocator
  m.def("empty_cache", [] { empty_cache(); });
  m.def("set_memory_fraction", [](double f, int64_t d) { set_memory_fraction(f, resolve(d)); });
  m.def("get_memory_fraction", [](int64_t d) { return get_memory_fraction(resolve(d)); });
  m.def("set_caching_enabled", [](bool on) { set_caching_enabled(on); });
  m.def("caching_enabled", [] { return caching_enabled(); });
  m.def("record_memory_history", [](bool enabled, bool stacks, uint64_t max_entries, bool clear) {
    if (enabled && stacks) torch::installCapturedTracebackPython();
    record_history(enabled, stacks ? &gather_python_stack : nullptr, max_entries, clear);
  });
  m.def("memory_snapshot", [] { return memory_snapshot(); });
  m.def("create_mem_pool", [](bool use_on_oom) { return create_mem_pool(use_on_oom); });
  m.def("release_mem_pool", [](int64_t id) { release_mem_pool(id); });
  m.def("exchange_thread_pool", [](int64_t id, int64_t d) {
    auto prev = exchange_thread_pool(id, d < 0 ? -1 : static_cast<int>(resolve(d)));
    return py::make_tuple(prev.first, prev.second);
  });
  m.def("device_busy_ns", [](int64_t d) { return device_busy_ns(resolve(d)); });
  m.def("copy_busy_ns", [](int64_t d) { return static_cast<int64_t>(catch_rt::copyBusyNs(resolve(d))); });
  m.def("_visible_device_count", [](const std::optional<std::string>& value, int physical) {
    return catch_rt::visibleDeviceCount(value.has_value() ? value->c_str() : nullptr, physical);
  });
  m.def("host_memory_stats", [] { return host_stats(); });
  m.def("reset_host_memory_stats", [](bool peaks_only) { reset_host_stats(peaks_only); });

  // host-kernel mode (torch_mlu.compile: compiled CPU code writing device memory)
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

  // RNG
  m.def("default_generators", [] {
    py::tuple t(device_count());
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      t[d] = py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(default_generator(d)));
    }
    return t;
  });

  // fallback accounting
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
