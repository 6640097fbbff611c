# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Pinned host staging buffers for the ``cncl`` backend.

``cncl`` moves ``mlu`` tensors through host memory because its transport (c10d's Gloo over TCP) reads and writes host
buffers. The buffers are pinned (``pin_memory=True``, the backend's page-locked host allocator) so that the
device-to-host and host-to-device copies are asynchronous on an mlu queue (``copy_(..., non_blocking=True)``), and they
are kept in a small pool keyed by size in bytes, each with the typed view last made of it: DDP reduces the same
bucket sizes every step, so after the first step no allocation (and no first-touch page fault) happens on the hot
path.
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict

import torch

#: Bytes of idle staging buffers the pool keeps (env ``CATCH_CNCL_POOL_BYTES``, default 1 GiB); beyond it, released
#: buffers are freed instead of kept.
DEFAULT_POOL_BYTES = 1 << 30


def _pool_limit() -> int:
    raw = os.environ.get("CATCH_CNCL_POOL_BYTES")
    if raw is None:
        return DEFAULT_POOL_BYTES
    try:
        return max(0, int(raw))
    except ValueError:
        raise ValueError(f"CATCH_CNCL_POOL_BYTES must be an integer number of bytes, got {raw!r}") from None


class HostBufferPool:
    """A thread-safe pool of pinned ``uint8`` host buffers, reused by exact size in bytes."""

    def __init__(self, limit_bytes: int | None = None) -> None:
        self._limit = _pool_limit() if limit_bytes is None else limit_bytes
        self._free: dict[int, list[tuple[torch.Tensor, torch.Tensor | None]]] = defaultdict(list)
        self._idle_bytes = 0
        self._lock = threading.Lock()

    def take(self, shape: torch.Size | tuple[int, ...], dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(raw, view)``: a pinned buffer and its contiguous view of ``shape``/``dtype``.

        ``raw`` must be handed back to :meth:`give` once no queue uses it any more.
        """
        numel = 1
        for d in shape:
            numel *= int(d)
        nbytes = numel * dtype.itemsize
        with self._lock:
            bucket = self._free.get(nbytes)
            entry = bucket.pop() if bucket else None
            if entry is not None:
                self._idle_bytes -= nbytes
        if entry is None:
            raw, view = torch.empty(max(nbytes, 1), dtype=torch.uint8, pin_memory=True), None
        else:
            raw, view = entry
        if not nbytes:
            return raw, torch.empty(shape, dtype=dtype)
        # The view last made of a buffer is pooled with it: the same bucket is staged again and again.
        if view is None or view.dtype != dtype or view.shape != shape:
            view = raw[:nbytes].view(dtype).view(shape)
        return raw, view

    def give(self, raw: torch.Tensor, view: torch.Tensor | None = None) -> None:
        """Return a buffer obtained from :meth:`take` (with its view, to reuse it); it is kept for reuse while the
        pool is under its limit."""
        nbytes = raw.numel()
        with self._lock:
            if self._idle_bytes + nbytes <= self._limit:
                self._free[nbytes].append((raw, view))
                self._idle_bytes += nbytes

    def idle_bytes(self) -> int:
        """Bytes currently held idle in the pool."""
        with self._lock:
            return self._idle_bytes
