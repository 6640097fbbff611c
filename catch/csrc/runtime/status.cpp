// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "status.h"

namespace catch_rt {

const char* statusString(Status s) {
  switch (s) {
    case Status::Success: return "success";
    case Status::InvalidDevice: return "invalid device ordinal";
    case Status::InvalidValue: return "invalid argument";
    case Status::OutOfMemory: return "out of memory";
    case Status::InvalidPointer: return "invalid pointer (freed, foreign or out of range)";
    case Status::NotReady: return "not ready";
    case Status::TimingDisabled: return "notifier created without timing";
  }
  return "unknown status";
}

}  // namespace catch_rt
