// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "memory.h"

#include <torch/csrc/profiler/combined_traceback.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../core/allocator_controls.h"
#include "../core/current_allocator.h"
#include "../core/host_allocator.h"
#include "../core/host_kernel.h"
#include "../core/pluggable_allocator.h"
#include "../runtime/copy.h"
#include "../runtime/device.h"
#include "utils.h"

namespace py = pybind11;

// From torch/csrc/profiler/python/combined_traceback.h (libtorch_python), declared here because that header pulls
// in nlohmann/json, which the wheel does not ship.
namespace torch {
TORCH_API std::vector<pybind11::object> py_symbolize(std::vector<CapturedTraceback*>& to_symbolize);
TORCH_PYTHON_API void installCapturedTracebackPython();
}  // namespace torch

namespace torch_mlu::python {
namespace {

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

void init_memory(py::module& m) {
  // torch.mlu.memory's allocator handles (torch._C._cuda_CUDAAllocator, _cuda_customAllocator,
  // _cuda_changeCurrentAllocator, _cuda_getAllocator); function addresses come from ctypes.
  py::class_<DeviceBlockAllocator, std::shared_ptr<DeviceBlockAllocator>>(m, "MLUAllocator");
  m.def("custom_allocator", [](uintptr_t alloc_fn, uintptr_t free_fn) -> std::shared_ptr<DeviceBlockAllocator> {
    return std::make_shared<MLUPluggableAllocator>(reinterpret_cast<MLUPluggableAllocator::AllocFn>(alloc_fn),
                                                   reinterpret_cast<MLUPluggableAllocator::FreeFn>(free_fn));
  });
  m.def("change_current_allocator", [](std::shared_ptr<DeviceBlockAllocator> a) {
    change_current_allocator(std::move(a));
  });
  m.def("current_allocator", [] { return current_allocator(); });
  m.def("allocator_backend", [] { return std::string(device_allocator()->name()); });
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
  m.def(
      "create_mem_pool",
      [](bool use_on_oom, std::shared_ptr<DeviceBlockAllocator> segments) {
        return create_mem_pool(use_on_oom, std::move(segments));
      },
      py::arg("use_on_oom"), py::arg("allocator") = nullptr);
  m.def("release_mem_pool", [](int64_t id) { release_mem_pool(id); });
  m.def("exchange_thread_pool", [](int64_t id, int64_t d) {
    auto prev = exchange_thread_pool(id, d < 0 ? -1 : static_cast<int>(resolve(d)));
    return py::make_tuple(prev.first, prev.second);
  });
  m.def("device_busy_ns", [](int64_t d) { return device_busy_ns(resolve(d)); });
  m.def("copy_busy_ns", [](int64_t d) { return static_cast<int64_t>(catch_rt::copyBusyNs(resolve(d))); });
  m.def("host_memory_stats", [] { return host_stats(); });
  m.def("reset_host_memory_stats", [](bool peaks_only) { reset_host_stats(peaks_only); });
  m.def("mem_get_info", [](int64_t d) {
    size_t free_b = 0;
    size_t total = 0;
    check_status(catch_rt::memGetInfo(resolve(d), &free_b, &total), "mem_get_info");
    return py::make_tuple(free_b, total);
  });
}

}  // namespace torch_mlu::python
