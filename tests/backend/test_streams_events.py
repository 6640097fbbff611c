# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Queues (streams) and notifiers (events) with torch.cuda.Stream / torch.cuda.Event semantics."""

from __future__ import annotations

import pytest
import torch


def test_default_and_new_streams():
    s0 = torch.mlu.current_stream()
    assert s0.stream_id == 0 and s0 == torch.mlu.default_stream()
    s = torch.mlu.Stream()
    assert s != s0 and s.device == torch.device("mlu:0")
    with torch.mlu.stream(s):
        assert torch.mlu.current_stream() == s
    assert torch.mlu.current_stream() == s0
    s1 = torch.mlu.Stream(device="mlu:1")
    assert s1.device_index == 1


def test_async_copy_orders_on_queue_and_event_sync():
    host = torch.arange(1 << 20, dtype=torch.float32).pin_memory()
    side = torch.mlu.Stream()
    done = torch.mlu.Event()
    with torch.mlu.stream(side):
        dev = host.to("mlu", non_blocking=True)
        done.record()
    torch.mlu.current_stream().wait_event(done)
    # The default queue waited for the side queue's copy, so the sum sees the copied data.
    assert dev.sum().item() == host.sum().item()
    done.synchronize()
    assert done.query() and side.query()


def test_wait_stream_and_synchronize():
    side = torch.mlu.Stream()
    a = torch.ones(1000, device="mlu")
    side.wait_stream(torch.mlu.current_stream())
    with torch.mlu.stream(side):
        b = a * 3
    torch.mlu.current_stream().wait_stream(side)
    torch.mlu.synchronize()
    assert b.sum().item() == 3000


def test_elapsed_time():
    start, end = torch.mlu.Event(enable_timing=True), torch.mlu.Event(enable_timing=True)
    start.record()
    x = torch.randn(300, 300, device="mlu")
    for _ in range(5):
        x = x @ x.t() / 300
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0
    generic = torch.Event("mlu", enable_timing=True)
    generic.record()
    generic.synchronize()
    assert generic.elapsed_time(generic) == 0  # the generic torch.Event path works too


def test_elapsed_time_requires_timing():
    a, b = torch.mlu.Event(), torch.mlu.Event()
    a.record()
    b.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        a.elapsed_time(b)


def test_unrecorded_event_query_is_true_like_cuda():
    e = torch.mlu.Event()
    assert e.query()
    e.synchronize()


def test_notifier_and_queue_completion_agree():
    # A notifier placed last on a queue completes together with the queue: after Event.synchronize the queue
    # is idle, and after Stream.synchronize the notifier is complete (CUDA's cudaEventSynchronize/cudaStreamQuery).
    # Repeated because a gap between the two would only show now and then.
    side = torch.mlu.Stream()
    host = torch.ones(1 << 10).pin_memory()
    busy_after_event_sync = pending_after_queue_sync = 0
    for i in range(500):
        done = torch.mlu.Event()
        with torch.mlu.stream(side):
            host.to("mlu", non_blocking=True)
            done.record()
        if i % 2:
            done.synchronize()
            busy_after_event_sync += not side.query()
        else:
            side.synchronize()
            pending_after_queue_sync += not done.query()
    assert (busy_after_event_sync, pending_after_queue_sync) == (0, 0)
