// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Device timing for PyTorch's profiler on mlu: torch::profiler::impl::registerPrivateUse1Methods.
//
// The profiler's PrivateUse1 fallback (ProfilerState::KINETO_PRIVATEUSE1_FALLBACK, used by
// torch.autograd.profiler.profile(use_device="mlu", use_kineto=False)) brackets every op with two device events from
// these stubs and reports their elapsed time as the op's device time (privateuse1_elapsed_us). Without them
// PyTorch's default stubs print "PrivateUse1 used in profiler but not enabled" and report no device time. As
// CUDA's stubs (torch/csrc/profiler/stubs/cuda.cpp) do with CUDA events, each event here is a timing notifier
// placed on the current queue; elapsed() waits for both and returns microseconds. Notifiers complete in queue
// order, so the end of a bracket never precedes its start: device times are >= 0.
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/stubs/base.h>

#include <functional>
#include <memory>

#include "../core/device.h"
#include "../core/stream.h"
#include "../runtime/notifier.h"
#include "../runtime/queue.h"

namespace torch_mlu {
namespace {

using torch::profiler::impl::ProfilerVoidEventStub;

struct MLUProfilerStubs final : public torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, ProfilerVoidEventStub* event, int64_t* cpu_ns) const override {
    c10::DeviceIndex d = current_device();
    if (device != nullptr) *device = d;
    catch_rt::Notifier* n = nullptr;
    MLU_CHECK(catch_rt::notifierCreate(&n, /*timing=*/true));
    *event = std::shared_ptr<catch_rt::Notifier>(n, [](catch_rt::Notifier* p) { catch_rt::notifierDestroy(p); });
    if (cpu_ns != nullptr) *cpu_ns = c10::getTime();
    MLU_CHECK(catch_rt::notifierPlace(n, current_queue(d)));
  }

  float elapsed(const ProfilerVoidEventStub* start, const ProfilerVoidEventStub* end) const override {
    auto* a = static_cast<catch_rt::Notifier*>(start->get());
    auto* b = static_cast<catch_rt::Notifier*>(end->get());
    MLU_CHECK(catch_rt::notifierSync(a));
    MLU_CHECK(catch_rt::notifierSync(b));
    float ms = 0;
    MLU_CHECK(catch_rt::notifierElapsedTime(a, b, &ms));
    return ms < 0 ? 0.0f : ms * 1000.0f;  // microseconds
  }

  void mark(const char* /*name*/) const override {}
  void rangePush(const char* /*name*/) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }

  void onEachDevice(std::function<void(int)> op) const override {
    c10::DeviceIndex prev = current_device();
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      set_device(d);
      op(d);
    }
    set_device(prev);
  }

  void synchronize() const override {
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) MLU_CHECK(catch_rt::deviceSynchronize(d));
  }
};

struct RegisterStubs {
  RegisterStubs() {
    static MLUProfilerStubs stubs;
    torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  }
};
RegisterStubs g_register_stubs;

}  // namespace
}  // namespace torch_mlu
