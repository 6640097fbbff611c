// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// mlu device activity for PyTorch's Kineto profiler:
// torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]).
//
// torch 2.13's wheel ships the PrivateUse1 hook (torch/csrc/profiler/standalone/privateuse1_profiler.h:
// PrivateUse1ProfilerRegistry, REGISTER_PRIVATEUSE1_PROFILER; exported from libtorch_cpu) and Kineto's plugin
// interface (include/kineto/IActivityProfiler.h). A registered libkineto::IActivityProfiler is a Kineto "child
// profiler": Kineto configures a session from it when the trace asks for device activity (PyTorch maps
// ProfilerActivity.PrivateUse1 to CONCURRENT_KERNEL, GPU_MEMCPY, ... in kineto_shim.cpp), starts and stops it with
// the trace, forwards the correlation id of every profiled op (pushCorrelationId / popCorrelationId, on the op's
// thread), and finally asks it for its activities with a callback mapping a correlation id to the op's CPU activity.
//
// What we report: every device kernel, i.e. each outermost HostKernelScope (the kernels run on the submitting
// thread after the queue drained, catch_rt::runInline), as a CONCURRENT_KERNEL activity on its device, timed by the
// same steady clock as torch.mlu.utilization and placed on the wall clock (c10::getTime, the clock of the profiler's
// CPU events). It is linked to the innermost profiled op on that thread, so PyTorch counts its duration as that op's
// device time (FunctionEvent.device_time, key_averages' "Self MLU"). Durations are >= 0 by construction.
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <GenericTraceActivity.h>
#include <IActivityProfiler.h>
#include <TraceSpan.h>
#include <libkineto.h>
#include <output_base.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "../core/host_kernel.h"

namespace torch_mlu {
namespace {

struct KernelRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint64_t correlation;
  int32_t device;
  int32_t thread;
};

std::atomic<bool> g_recording{false};
std::mutex g_mu;
std::vector<KernelRecord> g_records;  // guarded by g_mu
thread_local std::vector<uint64_t> tls_correlation;

void on_kernel(c10::DeviceIndex device, int64_t ns) {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  const int64_t end = c10::getTime();
  KernelRecord r{end - std::max<int64_t>(ns, 0), end, tls_correlation.empty() ? 0 : tls_correlation.back(),
                 static_cast<int32_t>(device), static_cast<int32_t>(libkineto::systemThreadId())};
  std::lock_guard<std::mutex> lk(g_mu);
  g_records.push_back(r);
}

class MluSession final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    {
      std::lock_guard<std::mutex> lk(g_mu);
      g_records.clear();
    }
    set_kernel_observer(&on_kernel);
    g_recording.store(true, std::memory_order_relaxed);
    status_ = libkineto::TraceStatus::RECORDING;
  }
  void stop() override {
    g_recording.store(false, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lk(g_mu);
    records_.swap(g_records);
    g_records.clear();
    status_ = libkineto::TraceStatus::READY;
  }
  std::vector<std::string> errors() override { return {}; }
  void processTrace(libkineto::ActivityLogger& logger) override { emit(logger, nullptr, 0, INT64_MAX); }
  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked, int64_t start,
                    int64_t end) override {
    emit(logger, linked, start, end);
  }
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override { return nullptr; }
  std::vector<libkineto::ResourceInfo> getResourceInfos() override { return {}; }
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return nullptr; }
  void pushCorrelationId(uint64_t id) override { tls_correlation.push_back(id); }
  void popCorrelationId() override {
    if (!tls_correlation.empty()) tls_correlation.pop_back();
  }

 private:
  void emit(libkineto::ActivityLogger& logger, const libkineto::getLinkedActivityCallback& linked, int64_t start,
            int64_t end) {
    for (const KernelRecord& r : records_) {
      if (r.end_ns < start || r.start_ns > end) continue;
      const libkineto::ITraceActivity* op =
          (linked && r.correlation != 0) ? linked(static_cast<int32_t>(r.correlation)) : nullptr;
      libkineto::GenericTraceActivity a(span_, libkineto::ActivityType::CONCURRENT_KERNEL,
                                        op != nullptr ? "mlu_kernel: " + op->name() : std::string("mlu_kernel"));
      a.startTime = r.start_ns;
      a.endTime = r.end_ns;
      a.id = static_cast<int32_t>(r.correlation);
      a.device = r.device;
      a.resource = r.thread;
      a.threadId = r.thread;
      a.linked = op;
      logger.handleGenericActivity(a);
    }
  }

  libkineto::TraceSpan span_{0, 0, "mlu"};
  std::vector<KernelRecord> records_;
};

class MluActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<libkineto::ActivityType>& availableActivities() const override { return activities_; }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<libkineto::ActivityType>& types,
                                                                 const libkineto::Config&) override {
    if (types.count(libkineto::ActivityType::CONCURRENT_KERNEL) == 0) return nullptr;
    return std::make_unique<MluSession>();
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                 const std::set<libkineto::ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_{"mlu"};
  std::set<libkineto::ActivityType> activities_{libkineto::ActivityType::CONCURRENT_KERNEL};
};

REGISTER_PRIVATEUSE1_PROFILER(MluActivityProfiler);

}  // namespace
}  // namespace torch_mlu
