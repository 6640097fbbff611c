// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Runtime queues as c10::Stream: stream id 0 is a device's default queue, id k > 0 the k-th queue created; each
// thread has a current stream per device.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include "../runtime/queue.h"

namespace torch_mlu {

catch_rt::Queue* queue_of(const c10::Stream& s);
c10::Stream current_stream(c10::DeviceIndex d);
c10::StreamId current_stream_id(c10::DeviceIndex d);  // no checks; d must be valid
catch_rt::Queue* current_queue(c10::DeviceIndex d);
c10::Stream set_current_stream(const c10::Stream& s);  // returns the previous one
c10::Stream new_stream(c10::DeviceIndex d);
// A stream of device `d`'s pool (getStreamFromGlobalPool): the first 8 requests create queues, later ones reuse
// them in turn.
c10::Stream pooled_stream(c10::DeviceIndex d);

}  // namespace torch_mlu
