// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// DDP's runtime statistics for mlu: a c10d::Timer registered for PrivateUse1.
//
// DistributedDataParallel's reducer creates a timer per device type from c10d's TimerRegistry; PyTorch registers
// CPU and CUDA ones only, so DDP on mlu warned on every rank "Time stats are currently only collected for CPU and
// CUDA devices" and its logging data (DistributedDataParallel._get_ddp_logging_data()) carried no forward/backward
// times. Like CUDA's timer (torch/csrc/distributed/c10d/reducer_cuda.cpp), this one places a timing notifier on the
// current queue of the module's device at each event and measures between notifiers, so the times are those of
// the device work; an event that was not recorded this iteration gives no value.
#include <torch/csrc/distributed/c10d/reducer_timer.hpp>

#include <array>
#include <memory>
#include <optional>

#include "../core/device.h"
#include "../core/stream.h"
#include "../runtime/notifier.h"
#include "../runtime/queue.h"

namespace torch_mlu {
namespace {

class MLUTimer final : public c10d::Timer {
 public:
  explicit MLUTimer(c10::Device device) : device_(device) {}

  void record(Event event) override {
    Timer::record(event);  // host timestamp, as every timer keeps
    catch_rt::Notifier* n = nullptr;
    MLU_CHECK(catch_rt::notifierCreate(&n, /*timing=*/true));
    auto& slot = notifiers_[static_cast<size_t>(event)];
    slot.reset(n);
    c10::DeviceIndex d = device_.has_index() ? device_.index() : current_device();
    MLU_CHECK(catch_rt::notifierPlace(n, current_queue(d)));
  }

  std::optional<int64_t> measureDifference(Event start, Event end) override {
    catch_rt::Notifier* a = notifiers_[static_cast<size_t>(start)].get();
    catch_rt::Notifier* b = notifiers_[static_cast<size_t>(end)].get();
    if (a == nullptr || b == nullptr) return std::nullopt;
    MLU_CHECK(catch_rt::notifierSync(a));
    MLU_CHECK(catch_rt::notifierSync(b));
    float ms = 0;
    if (catch_rt::notifierElapsedTime(a, b, &ms) != catch_rt::Status::Success || ms < 0) return std::nullopt;
    return static_cast<int64_t>(static_cast<double>(ms) * 1e6);  // nanoseconds
  }

 private:
  struct Destroy {
    void operator()(catch_rt::Notifier* n) const { catch_rt::notifierDestroy(n); }
  };
  c10::Device device_;
  std::array<std::unique_ptr<catch_rt::Notifier, Destroy>, 5> notifiers_;
};

}  // namespace
}  // namespace torch_mlu

namespace c10d {
C10_REGISTER_TYPED_CLASS(TimerRegistry, c10::kPrivateUse1, torch_mlu::MLUTimer)
}  // namespace c10d
