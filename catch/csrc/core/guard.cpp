// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "guard.h"

#include "../runtime/device.h"
#include "../runtime/notifier.h"
#include "../runtime/queue.h"
#include "device.h"
#include "current_allocator.h"
#include "stream.h"

namespace torch_mlu {
namespace {

catch_rt::Notifier* as_notifier(void* e) { return static_cast<catch_rt::Notifier*>(e); }

}  // namespace

c10::DeviceType MLUGuardImpl::type() const { return kMLU; }

c10::Device MLUGuardImpl::exchangeDevice(c10::Device d) const {
  TORCH_CHECK(d.type() == kMLU, "expected an mlu device, got ", d);
  auto old = current_device();
  if (d.index() != old) set_device(d.index());
  return c10::Device(kMLU, old);
}

c10::Device MLUGuardImpl::getDevice() const { return c10::Device(kMLU, current_device()); }

void MLUGuardImpl::setDevice(c10::Device d) const {
  TORCH_CHECK(d.type() == kMLU, "expected an mlu device, got ", d);
  set_device(d.index());
}

void MLUGuardImpl::uncheckedSetDevice(c10::Device d) const noexcept { catch_rt::setDevice(d.index()); }

c10::Stream MLUGuardImpl::getStream(c10::Device d) const { return current_stream(d.index()); }

c10::Stream MLUGuardImpl::getDefaultStream(c10::Device d) const {
  return c10::Stream(c10::Stream::DEFAULT, c10::Device(kMLU, d.index() < 0 ? current_device() : d.index()));
}

c10::Stream MLUGuardImpl::getStreamFromGlobalPool(c10::Device d, bool /*isHighPriority*/) const {
  return pooled_stream(d.index() < 0 ? current_device() : d.index());
}

c10::Stream MLUGuardImpl::getNewStream(c10::Device d, int /*priority*/) const {
  return new_stream(d.index() < 0 ? current_device() : d.index());
}

c10::Stream MLUGuardImpl::exchangeStream(c10::Stream s) const { return set_current_stream(s); }

c10::DeviceIndex MLUGuardImpl::deviceCount() const noexcept { return device_count(); }

void MLUGuardImpl::destroyEvent(void* event, const c10::DeviceIndex) const noexcept {
  if (event != nullptr) catch_rt::notifierDestroy(as_notifier(event));
}

void MLUGuardImpl::record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
                          const c10::EventFlag flag) const {
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

void MLUGuardImpl::block(void* event, const c10::Stream& stream) const {
  if (event == nullptr) return;
  MLU_CHECK(catch_rt::queueWaitNotifier(queue_of(stream), as_notifier(event)));
}

bool MLUGuardImpl::queryEvent(void* event) const {
  if (event == nullptr) return true;
  return catch_rt::notifierQuery(as_notifier(event)) == catch_rt::Status::Success;
}

bool MLUGuardImpl::queryStream(const c10::Stream& s) const {
  return catch_rt::queueQuery(queue_of(s)) == catch_rt::Status::Success;
}

void MLUGuardImpl::synchronizeStream(const c10::Stream& s) const { MLU_CHECK(catch_rt::queueSync(queue_of(s))); }

void MLUGuardImpl::synchronizeEvent(void* event) const {
  if (event != nullptr) MLU_CHECK(catch_rt::notifierSync(as_notifier(event)));
}

void MLUGuardImpl::synchronizeDevice(const c10::DeviceIndex d) const {
  MLU_CHECK(catch_rt::deviceSynchronize(d < 0 ? current_device() : d));
}

void MLUGuardImpl::recordDataPtrOnStream(const c10::DataPtr& p, const c10::Stream& s) const {
  device_allocator()->recordStream(p, s);
}

double MLUGuardImpl::elapsedTime(void* start, void* end, const c10::DeviceIndex) const {
  TORCH_CHECK(start != nullptr && end != nullptr, "Both events must be recorded before calculating elapsed time.");
  float ms = 0;
  auto st = catch_rt::notifierElapsedTime(as_notifier(start), as_notifier(end), &ms);
  TORCH_CHECK(st != catch_rt::Status::TimingDisabled,
              "Both events must be created with argument 'enable_timing=True'.");
  TORCH_CHECK(st != catch_rt::Status::NotReady, "Both events must be completed before calculating elapsed time.");
  MLU_CHECK(st);
  return ms;
}

c10::DeviceCapability MLUGuardImpl::getDeviceCapability(c10::Device d) const {
  check_device_index(d.has_index() ? d.index() : current_device());
  c10::DeviceCapability cap;
  cap.capability_data.capability_bits = 0;
  auto& has = cap.capability_data.supported_scalar_types;
  has.has_Byte = has.has_Char = has.has_Short = has.has_Int = has.has_Long = 1;
  has.has_Half = has.has_Float = has.has_Double = has.has_BFloat16 = 1;
  has.has_ComplexHalf = has.has_ComplexFloat = has.has_ComplexDouble = has.has_Bool = 1;
  has.has_Float8_e5m2 = has.has_Float8_e4m3fn = 1;
  has.has_UInt16 = has.has_UInt32 = has.has_UInt64 = 1;
  // quantized tensors live on mlu (QuantizedPrivateUse1, ops/quantized_tensor.cpp), all five qint types
  has.has_QInt8 = has.has_QUInt8 = has.has_QInt32 = has.has_QUInt4x2 = has.has_QUInt2x4 = 1;
  return cap;
}

C10_REGISTER_GUARD_IMPL(PrivateUse1, MLUGuardImpl)

}  // namespace torch_mlu
