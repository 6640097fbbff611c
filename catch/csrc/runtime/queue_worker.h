// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// A queue's state and its worker thread, internal to runtime/ (queues, copies and notifiers enqueue work on it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace catch_rt {

struct Queue {
  int device;
  std::mutex mu;
  std::condition_variable cv_work;
  std::condition_variable cv_idle;
  std::atomic<long> pending{0};
  std::thread worker;
  bool started = false;

  explicit Queue(int d) : device(d) {}

  // One queued item: `fn` runs in order on the worker; `on_done` (optional) runs under the queue's lock together
  // with the item's leaving the pending count, so completing a notifier and the queue's becoming idle are one step:
  // after notifierSync, queueQuery is Success when nothing was queued behind the notifier, and after queueSync
  // every notifier placed on the queue is complete (cudaEventSynchronize / cudaStreamQuery semantics).
  struct Item {
    std::function<void()> fn;
    std::function<void()> on_done;
  };
  std::deque<Item> items;

  void enqueue(std::function<void()> fn, std::function<void()> on_done = {}) {
    std::unique_lock<std::mutex> lk(mu);
    if (!started) {
      started = true;
      worker = std::thread([this] { loop(); });
      worker.detach();
    }
    pending.fetch_add(1, std::memory_order_acq_rel);
    items.push_back(Item{std::move(fn), std::move(on_done)});
    cv_work.notify_one();
  }

  void loop() {
    for (;;) {
      Item item;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv_work.wait(lk, [this] { return !items.empty(); });
        item = std::move(items.front());
        items.pop_front();
      }
      if (item.fn) item.fn();
      std::unique_lock<std::mutex> lk(mu);
      if (item.on_done) item.on_done();
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) cv_idle.notify_all();
    }
  }

  void sync() {
    if (pending.load(std::memory_order_acquire) == 0) return;
    std::unique_lock<std::mutex> lk(mu);
    cv_idle.wait(lk, [this] { return pending.load(std::memory_order_acquire) == 0; });
  }
};

}  // namespace catch_rt
