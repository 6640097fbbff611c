// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Devices of the emulated runtime: how many are visible, the current one of each host thread, their capacity.
//
// Environment (read once, at first use):
//   MLU_VISIBLE_DEVICE_COUNT  number of emulated devices (default 2, 0..16)
//   MLU_VISIBLE_DEVICES       which of them are visible, parsed as PyTorch parses CUDA_VISIBLE_DEVICES
//   CATCH_MLU_MEMORY_BYTES    capacity of each device in bytes (default 8 GiB)
#pragma once

#include <cstddef>

#include "status.h"

namespace catch_rt {

int deviceCount();
// Devices `value` (an MLU_VISIBLE_DEVICES string, null: unset) leaves visible out of `physical`, parsed as PyTorch
// parses CUDA_VISIBLE_DEVICES.
int visibleDeviceCount(const char* value, int physical);
Status getDevice(int* device);  // per host thread, default 0
Status setDevice(int device);
std::size_t deviceCapacity();   // bytes per device
Status memGetInfo(int device, std::size_t* free_bytes, std::size_t* total_bytes);
const char* deviceName();

}  // namespace catch_rt
