// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Notifiers (events) of the emulated runtime: placed on a queue, complete when the queue passed them, optionally
// timed.
#pragma once

#include "queue.h"
#include "status.h"

namespace catch_rt {

struct Notifier;

Status notifierCreate(Notifier** n, bool timing);
Status notifierDestroy(Notifier* n);
Status notifierPlace(Notifier* n, Queue* q);  // "record"
Status notifierQuery(Notifier* n);            // Success when complete or never placed
Status notifierSync(Notifier* n);
Status queueWaitNotifier(Queue* q, Notifier* n);
Status notifierElapsedTime(Notifier* start, Notifier* end, float* ms);

}  // namespace catch_rt
