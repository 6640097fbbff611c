# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Asynchronous copies against pinned host memory and ``Tensor.record_stream``, with CUDA's guarantees.

CUDA's pinned host allocator (``CachingHostAllocator``) records an event on the stream of every non-blocking copy that
reads or writes a pinned block and does not reuse or free the block before those events completed; its caching device
allocator does the same for the streams passed to ``Tensor.record_stream``. So dropping a tensor right after queueing
an asynchronous copy that uses it is safe on CUDA, and must be on mlu.

Each test first queues a large copy so that the copy under test is still pending when its tensor is dropped, then
reuses the freed memory and checks the copy still saw (or wrote) the right bytes. Whether the copy was still pending
is a matter of timing (a preempted test thread can find the queue drained), so each round checks it with
``Stream.query()`` and each test requires that most rounds were such real tests (:data:`_MIN_PENDING`); every round
must deliver the right bytes.
"""

from __future__ import annotations

import pytest
import torch

_BIG = 16 << 20  # float32 elements: a 64 MiB copy keeps the queue busy for a few milliseconds at least
_ROUNDS = 20
_MIN_PENDING = _ROUNDS // 2  # rounds in which the copy under test must really have been pending


def _occupy(stream: torch.Stream) -> tuple[torch.Tensor, torch.Tensor]:
    """Queues a large pinned host-to-mlu copy on ``stream``; returns (host, device) to keep alive."""
    host = torch.empty(_BIG).pin_memory()
    with torch.mlu.stream(stream):
        dev = host.to("mlu", non_blocking=True)
    return host, dev


def test_h2d_from_dropped_pinned_source_copies_the_source_bytes():
    stream = torch.mlu.current_stream()
    results = []
    pending = 0
    for i in range(_ROUNDS):
        keep = _occupy(stream)
        src = torch.randn(1000 + i).pin_memory()
        ref = src.clone()
        # A view with an offset: the pinned block is found from an interior pointer.
        dst = src[7:].to("mlu", non_blocking=True)
        del src
        pending += not stream.query()  # the copy under test is still queued
        # These allocations reuse the freed host memory unless the allocator holds it back.
        junk = [torch.full((1000 + i,), -1.0).pin_memory() for _ in range(4)]
        stream.synchronize()
        results.append((dst.cpu(), ref[7:]))
        del keep, junk, dst  # (freeing a device block waits for its queue: keep that out of the next round)
    bad = sum(not torch.equal(got, want) for got, want in results)
    assert bad == 0, f"{bad} of {len(results)} non_blocking copies read a freed pinned buffer"
    assert pending >= _MIN_PENDING, f"only {pending} of {_ROUNDS} copies were still pending: the test proved little"


def test_d2h_into_dropped_pinned_destination_does_not_write_reused_memory():
    stream = torch.mlu.current_stream()
    bad = pending = 0
    for i in range(_ROUNDS):
        dev = torch.full((4096 + i,), 3.0, device="mlu")  # (kernels run once the queue drained: fill first)
        keep = _occupy(stream)
        out = dev.to("cpu", non_blocking=True)
        assert out.is_pinned(), "CUDA semantics: a non_blocking device-to-cpu copy lands in pinned memory"
        del out
        pending += not stream.query()  # the copy under test is still queued
        fresh = [torch.full((4096 + i,), -2.0).pin_memory() for _ in range(4)]
        stream.synchronize()
        bad += sum(not bool((f == -2.0).all()) for f in fresh)
        del keep, fresh, dev
    assert bad == 0, f"{bad} pinned buffers were overwritten by a copy into a freed destination"
    assert pending >= _MIN_PENDING, f"only {pending} of {_ROUNDS} copies were still pending: the test proved little"


def test_d2h_into_pinned_destination_delivers_the_data_after_sync():
    dev = torch.arange(100000, dtype=torch.float32, device="mlu")
    out = torch.empty(100000).pin_memory()
    out.copy_(dev, non_blocking=True)
    torch.mlu.synchronize()
    assert torch.equal(out, torch.arange(100000, dtype=torch.float32))


def test_record_stream_keeps_block_until_the_recorded_stream_used_it():
    side = torch.mlu.Stream()
    bad = pending = 0
    for _ in range(_ROUNDS):
        t = torch.full((1 << 16,), 5.0, device="mlu")  # allocated on the default queue
        keep = _occupy(side)
        side.wait_stream(torch.mlu.current_stream())
        with torch.mlu.stream(side):
            copied = torch.empty_like(t)
            copied.copy_(t, non_blocking=True)  # reads t on the side queue, after the large copy
        pending += not side.query()  # the side queue is still busy with it
        t.record_stream(side)
        del t
        # Same size on the default queue: reuses t's block unless the allocator honours record_stream.
        reuse = torch.full((1 << 16,), -5.0, device="mlu")
        side.synchronize()
        bad += int(not bool((copied == 5.0).all()))
        del keep, reuse, copied
    assert bad == 0, f"{bad} side-queue reads saw a block reused before the recorded stream finished"
    assert pending >= _MIN_PENDING, f"only {pending} of {_ROUNDS} reads were still pending: the test proved little"


def test_record_stream_rejects_a_non_mlu_stream():
    t = torch.ones(4, device="mlu")
    with pytest.raises(RuntimeError, match="expected an mlu stream"):
        t.record_stream(torch.Stream(device="cpu"))
