// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Queues (streams) of the emulated runtime.
//
// A queue runs its work in submission order. Asynchronous work (memcpyAsync, launchHostFunc, notifier waits) runs
// on the queue's worker thread; kernels run on the submitting thread after the queue drained (runInline), which
// keeps the order without a thread hop for every small kernel.
#pragma once

#include <functional>

#include "status.h"

namespace catch_rt {

struct Queue;

Status queueCreate(int device, Queue** q);  // queues live until process exit
Queue* defaultQueue(int device);
int queueDevice(const Queue* q);
Status queueQuery(Queue* q);  // Success when idle, NotReady otherwise
Status queueSync(Queue* q);
Status launchHostFunc(Queue* q, std::function<void()> fn);
// Waits until all earlier work on q finished, then runs fn on this thread.
void runInline(Queue* q, const std::function<void()>& fn);
bool queueIdle(const Queue* q);
// Waits for every queue of `device`.
Status deviceSynchronize(int device);

}  // namespace catch_rt
