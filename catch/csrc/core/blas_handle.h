// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The handle of torch.mlu.current_blas_handle(). torch.cuda.current_blas_handle returns the calling thread's cuBLAS
// handle for the current device, bound to the current stream; on MLU the matrix library's handle is a cnnlHandle_t
// bound to a queue. The emulator keeps one handle per thread and device, created at first use and bound to the
// current queue at each call, so its address is stable for a (thread, device) pair. Catch's matrix kernels run on
// the host (ATen, oneDNN) and do not go through it: it serves code that fetches the handle and passes it on.
#pragma once

#include <c10/core/Device.h>

#include "../runtime/queue.h"

namespace torch_mlu {

struct BlasHandle {
  c10::DeviceIndex device;
  catch_rt::Queue* queue;  // the queue work issued through the handle runs on
};

// The calling thread's handle for the current device, bound to its current queue.
BlasHandle* current_blas_handle();

}  // namespace torch_mlu
