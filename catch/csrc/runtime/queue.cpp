// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "queue.h"

#include <mutex>
#include <vector>

#include "queue_worker.h"
#include "registry.h"

namespace catch_rt {

using detail::reg;

namespace {
struct QueueTable {
  std::mutex mu;
  std::vector<Queue*> defaults;
  std::vector<Queue*> all;
  QueueTable() {
    for (int d = 0; d < reg().count; ++d) {
      defaults.push_back(new Queue(d));
      all.push_back(defaults.back());
    }
  }
};
QueueTable& queues() {
  static QueueTable* t = new QueueTable();
  return *t;
}
}  // namespace

Status queueCreate(int device, Queue** q) {
  if (device < 0 || device >= reg().count) return Status::InvalidDevice;
  auto& t = queues();
  std::lock_guard<std::mutex> lk(t.mu);
  t.all.push_back(new Queue(device));
  *q = t.all.back();
  return Status::Success;
}

Queue* defaultQueue(int device) {
  auto& t = queues();
  if (device < 0 || device >= static_cast<int>(t.defaults.size())) return nullptr;
  return t.defaults[device];
}

int queueDevice(const Queue* q) { return q->device; }

bool queueIdle(const Queue* q) { return q->pending.load(std::memory_order_acquire) == 0; }

Status queueQuery(Queue* q) {
  if (q == nullptr) return Status::InvalidValue;
  if (!queueIdle(q)) {
    // The worker may still hold the lock for its last item, whose notifier already woke the caller (see
    // Queue::Item): wait for that step to end, so a caller woken by the notifier never sees the queue busy.
    std::lock_guard<std::mutex> lk(q->mu);
  }
  return queueIdle(q) ? Status::Success : Status::NotReady;
}

Status queueSync(Queue* q) {
  if (q == nullptr) return Status::InvalidValue;
  q->sync();
  return Status::Success;
}

Status launchHostFunc(Queue* q, std::function<void()> fn) {
  if (q == nullptr) return Status::InvalidValue;
  q->enqueue(std::move(fn));
  return Status::Success;
}

void runInline(Queue* q, const std::function<void()>& fn) {
  if (q != nullptr) q->sync();
  fn();
}

Status deviceSynchronize(int device) {
  if (device < 0 || device >= reg().count) return Status::InvalidDevice;
  std::vector<Queue*> qs;
  {
    auto& t = queues();
    std::lock_guard<std::mutex> lk(t.mu);
    for (Queue* q : t.all)
      if (q->device == device) qs.push_back(q);
  }
  for (Queue* q : qs) q->sync();
  return Status::Success;
}

}  // namespace catch_rt
