// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "device.h"

#include "../runtime/device.h"

namespace torch_mlu {

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

}  // namespace torch_mlu
