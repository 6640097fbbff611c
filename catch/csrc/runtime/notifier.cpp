// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "notifier.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "queue_worker.h"

namespace catch_rt {
namespace {

using Clock = std::chrono::steady_clock;

struct Mark {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Clock::time_point when;
  void complete() {
    std::lock_guard<std::mutex> lk(mu);
    when = Clock::now();
    done = true;
    cv.notify_all();
  }
  bool isDone() {
    std::lock_guard<std::mutex> lk(mu);
    return done;
  }
  void wait() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [this] { return done; });
  }
};
}  // namespace

struct Notifier {
  bool timing;
  std::mutex mu;
  std::shared_ptr<Mark> mark;  // latest placement; null if never placed
};

Status notifierCreate(Notifier** n, bool timing) {
  if (n == nullptr) return Status::InvalidValue;
  *n = new Notifier();
  (*n)->timing = timing;
  return Status::Success;
}

Status notifierDestroy(Notifier* n) {
  delete n;
  return Status::Success;
}

Status notifierPlace(Notifier* n, Queue* q) {
  if (n == nullptr || q == nullptr) return Status::InvalidValue;
  auto mark = std::make_shared<Mark>();
  {
    std::lock_guard<std::mutex> lk(n->mu);
    n->mark = mark;
  }
  if (queueIdle(q)) {
    mark->complete();
  } else {
    q->enqueue({}, [mark] { mark->complete(); });
  }
  return Status::Success;
}

namespace {
std::shared_ptr<Mark> latest(Notifier* n) {
  std::lock_guard<std::mutex> lk(n->mu);
  return n->mark;
}
}  // namespace

Status notifierQuery(Notifier* n) {
  if (n == nullptr) return Status::InvalidValue;
  auto m = latest(n);
  return (m == nullptr || m->isDone()) ? Status::Success : Status::NotReady;
}

Status notifierSync(Notifier* n) {
  if (n == nullptr) return Status::InvalidValue;
  auto m = latest(n);
  if (m != nullptr) m->wait();
  return Status::Success;
}

Status queueWaitNotifier(Queue* q, Notifier* n) {
  if (q == nullptr || n == nullptr) return Status::InvalidValue;
  auto m = latest(n);
  if (m == nullptr || m->isDone()) return Status::Success;
  q->enqueue([m] { m->wait(); });
  return Status::Success;
}

Status notifierElapsedTime(Notifier* start, Notifier* end, float* ms) {
  if (start == nullptr || end == nullptr || ms == nullptr) return Status::InvalidValue;
  if (!start->timing || !end->timing) return Status::TimingDisabled;
  auto a = latest(start);
  auto b = latest(end);
  if (a == nullptr || b == nullptr) return Status::InvalidValue;
  if (!a->isDone() || !b->isDone()) return Status::NotReady;
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return Status::Success;
}

}  // namespace catch_rt
