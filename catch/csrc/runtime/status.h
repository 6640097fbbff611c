// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Status codes of the emulated runtime's calls.
#pragma once

namespace catch_rt {

enum class Status : int {
  Success = 0,
  InvalidDevice,
  InvalidValue,
  OutOfMemory,
  InvalidPointer,  // freed, foreign or out-of-range device/host pointer
  NotReady,
  TimingDisabled,
};

const char* statusString(Status s);

}  // namespace catch_rt
