// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Device guard for PrivateUse1 ("mlu"): devices, queues as c10::Stream and
// notifiers as c10 events, all through the emulated runtime.
#include <c10/core/DeviceCapability.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <array>
#include <mutex>
#include <vector>

#include "mlu_core.h"

namespace torch_mlu {
namespace {

constexpr int kPoolSize = 8;
constexpr int kMaxDevices = 16;

// Stream ids: 0 = the device's default queue; k > 0 = entry k-1 of the table.
struct StreamTable {
  std::mutex mu;
  std::vector<catch_rt::Queue*> queues;
  std::array<std::vector<c10::StreamId>, kMaxDevices> pool;
  std::array<unsigned, kMaxDevices> next{};
};
StreamTable& table() {
  static StreamTable* t = new StreamTable();
  return *t;
}

thread_local std::array<c10::StreamId, kMaxDevices> tls_stream{};

c10::StreamId register_queue(catch_rt::Queue* q) {
  auto& t = table();
  std::lock_guard<std::mutex> lk(t.mu);
  t.queues.push_back(q);
  return static_cast<c10::StreamId>(t.queues.size());
}

}  // namespace

c10::DeviceIndex device_count() { return static_cast<c10::DeviceIndex>(catch_rt::deviceCount()); }

void check_device_index(c10::DeviceIndex d) {
  TORCH_CHECK(d >= 0 && d < device_count(), "MLU error: invalid device ordinal: device index ", static_cast<int>(d),
              " is out of range; ", static_cast<int>(device_count()), " MLU device(s) are visible",
              " (set MLU_VISIBLE_DEVICE_COUNT to change)");
}

c10::DeviceIndex current_device() {
  int d = 0;
  MLU_CHECK(catch_rt::getDevice(&d));
  return static_cast<c10::DeviceIndex>(d);
}

void set_device(c10::DeviceIndex d) {
  check_device_index(d);
  MLU_CHECK(catch_rt::setDevice(d));
}

catch_rt::Queue* queue_of(const c10::Stream& s) {
  if (s.id() == 0) return catch_rt::defaultQueue(s.device_index());
  auto& t = table();
  std::lock_guard<std::mutex> lk(t.mu);
  auto idx = static_cast<size_t>(s.id() - 1);
  TORCH_CHECK(idx < t.queues.size(), "MLU error: unknown stream id ", s.id());
  return t.queues[idx];
}

c10::Stream current_stream(c10::DeviceIndex d) {
  if (d < 0) d = current_device();
  check_device_index(d);
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, d), tls_stream[d]);
}

c10::StreamId current_stream_id(c10::DeviceIndex d) { return tls_stream[d]; }

catch_rt::Queue* current_queue(c10::DeviceIndex d) {
  if (d < 0) d = current_device();
  c10::StreamId id = tls_stream[d];
  return id == 0 ? catch_rt::defaultQueue(d) : queue_of(current_stream(d));
}

c10::Stream set_current_stream(const c10::Stream& s) {
  auto prev = current_stream(s.device_index());
  tls_stream[s.device_index()] = s.id();
  return prev;
}

c10::Stream new_stream(c10::DeviceIndex d) {
  check_device_index(d);
  catch_rt::Queue* q = nullptr;
  MLU_CHECK(catch_rt::queueCreate(d, &q));
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, d), register_queue(q));
}

namespace {

c10::Stream pooled_stream(c10::DeviceIndex d) {
  check_device_index(d);
  auto& t = table();
  {
    std::lock_guard<std::mutex> lk(t.mu);
    if (t.pool[d].size() == kPoolSize) {
      auto id = t.pool[d][t.next[d]++ % kPoolSize];
      return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, d), id);
    }
  }
  auto s = new_stream(d);
  std::lock_guard<std::mutex> lk(t.mu);
  t.pool[d].push_back(s.id());
  return s;
}

catch_rt::Notifier* as_notifier(void* e) { return static_cast<catch_rt::Notifier*>(e); }

struct MLUGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kMLU; }

  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kMLU, "expected an mlu device, got ", d);
    auto old = current_device();
    if (d.index() != old) set_device(d.index());
    return c10::Device(kMLU, old);
  }
  c10::Device getDevice() const override { return c10::Device(kMLU, current_device()); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kMLU, "expected an mlu device, got ", d);
    set_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override { catch_rt::setDevice(d.index()); }

  c10::Stream getStream(c10::Device d) const override { return current_stream(d.index()); }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kMLU, d.index() < 0 ? current_device() : d.index()));
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*isHighPriority*/) const override {
    return pooled_stream(d.index() < 0 ? current_device() : d.index());
  }
  c10::Stream getNewStream(c10::Device d, int /*priority*/) const override {
    return new_stream(d.index() < 0 ? current_device() : d.index());
  }
  c10::Stream exchangeStream(c10::Stream s) const override { return set_current_stream(s); }

  c10::DeviceIndex deviceCount() const noexcept override { return device_count(); }

  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    if (event != nullptr) catch_rt::notifierDestroy(as_notifier(event));
  }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "Event device index ",
                static_cast<int>(device_index), " does not match recording stream's device index ",
                static_cast<int>(stream.device_index()), ".");
    if (*event == nullptr) {
      catch_rt::Notifier* n = nullptr;
      MLU_CHECK(catch_rt::notifierCreate(&n, flag == c10::EventFlag::BACKEND_DEFAULT));
      *event = n;
    }
    MLU_CHECK(catch_rt::notifierPlace(as_notifier(*event), queue_of(stream)));
  }

  void block(void* event, const c10::Stream& stream) const override {
    if (event == nullptr) return;
    MLU_CHECK(catch_rt::queueWaitNotifier(queue_of(stream), as_notifier(event)));
  }

  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    return catch_rt::notifierQuery(as_notifier(event)) == catch_rt::Status::Success;
  }

  bool queryStream(const c10::Stream& s) const override {
    return catch_rt::queueQuery(queue_of(s)) == catch_rt::Status::Success;
  }
  void synchronizeStream(const c10::Stream& s) const override { MLU_CHECK(catch_rt::queueSync(queue_of(s))); }
  void synchronizeEvent(void* event) const override {
    if (event != nullptr) MLU_CHECK(catch_rt::notifierSync(as_notifier(event)));
  }
  void synchronizeDevice(const c10::DeviceIndex d) const override {
    MLU_CHECK(catch_rt::deviceSynchronize(d < 0 ? current_device() : d));
  }
  void recordDataPtrOnStream(const c10::DataPtr& p, const c10::Stream& s) const override {
    device_allocator()->recordStream(p, s);
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start != nullptr && end != nullptr,
                "Both events must be recorded before calculating elapsed time.");
    float ms = 0;
    auto st = catch_rt::notifierElapsedTime(as_notifier(start), as_notifier(end), &ms);
    TORCH_CHECK(st != catch_rt::Status::TimingDisabled,
                "Both events must be created with argument 'enable_timing=True'.");
    TORCH_CHECK(st != catch_rt::Status::NotReady, "Both events must be completed before calculating elapsed time.");
    MLU_CHECK(st);
    return ms;
  }
  // torch.accelerator.get_device_capability("mlu"): the dtypes mlu tensors can hold and ATen's CPU kernels (which
  // the emulated device runs) compute with -- the standard integer, floating and complex types, bool, and the
  // float8 types with CPU conversions (as CUDA/XPU list them; sub-byte and bit types are left out).
  c10::DeviceCapability getDeviceCapability(c10::Device d) const override {
    check_device_index(d.has_index() ? d.index() : current_device());
    c10::DeviceCapability cap;
    cap.capability_data.capability_bits = 0;
    auto& has = cap.capability_data.supported_scalar_types;
    has.has_Byte = has.has_Char = has.has_Short = has.has_Int = has.has_Long = 1;
    has.has_Half = has.has_Float = has.has_Double = has.has_BFloat16 = 1;
    has.has_ComplexHalf = has.has_ComplexFloat = has.has_ComplexDouble = has.has_Bool = 1;
    has.has_Float8_e5m2 = has.has_Float8_e4m3fn = 1;
    has.has_UInt16 = has.has_UInt32 = has.has_UInt64 = 1;
    return cap;
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, MLUGuardImpl)

}  // namespace
}  // namespace torch_mlu
