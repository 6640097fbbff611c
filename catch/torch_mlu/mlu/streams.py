# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Queues and notifiers as ``torch.mlu.Stream`` / ``torch.mlu.Event`` (``torch.cuda.Stream``/``Event`` semantics).

Both are the generic ``torch.Stream``/``torch.Event`` over the backend's device guard, so ``torch.Stream`` APIs
(``query``, ``synchronize``, ``wait_event``, ``wait_stream``, ``record_event``) and ``Event.elapsed_time``
(milliseconds; needs ``enable_timing=True``) work as on CUDA.
"""

from __future__ import annotations

from typing import Any

import torch

from torch_mlu import _C
from torch_mlu.mlu._utils import _get_device_index


class Stream(torch.Stream):
    """An mlu queue. ``Stream(device=None, priority=0)`` creates a new queue on ``device`` (default: current)."""

    def __new__(cls, device: object = None, priority: int = 0, **kwargs: Any) -> Stream:
        if kwargs:
            return super().__new__(cls, **kwargs)
        idx = _get_device_index(device, optional=True)
        return super().__new__(cls, device=torch.device("mlu", idx), priority=priority)


class Event(torch.Event):
    """An mlu notifier. ``Event(enable_timing=False, blocking=False, interprocess=False)``."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> Event:
        return super().__new__(
            cls, device="mlu", enable_timing=enable_timing, blocking=blocking, interprocess=interprocess
        )

    def elapsed_time(self, end_event: torch.Event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded and completed, timing enabled).

        ``torch.Event.elapsed_time`` accepts only exact ``torch.Event`` objects; this compares the runtime notifiers
        directly, so any mix of ``torch.Event`` and ``torch.mlu.Event`` works.
        """
        if self.event_id == 0 or end_event.event_id == 0:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _C.elapsed_time(self.event_id, end_event.event_id)


def _wrap(sid: int, idx: int, dtype: int) -> Stream:
    return Stream(stream_id=sid, device_index=idx, device_type=dtype)


def current_stream(device: object = None) -> Stream:
    """The current queue of ``device`` for this thread (default queue unless changed)."""
    return _wrap(*_C.current_stream(_get_device_index(device, optional=True)))


def default_stream(device: object = None) -> Stream:
    """The default queue (stream id 0) of ``device``."""
    idx = _get_device_index(device, optional=True)
    sid, _, dtype = _C.current_stream(idx)
    return _wrap(0, idx, dtype)


def set_stream(s: torch.Stream) -> None:
    """Make ``s`` the current queue of its device."""
    if s is None:
        return
    _C.set_stream(s.stream_id, s.device_index)


class StreamContext:
    """Context manager selecting a queue (``torch.cuda.StreamContext`` analogue); ``None`` is a no-op."""

    def __init__(self, s: torch.Stream | None) -> None:
        self.stream = s
        self.prev: Stream | None = None

    def __enter__(self) -> torch.Stream | None:
        if self.stream is None:
            return None
        self.prev = current_stream(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc: object) -> None:
        if self.prev is not None:
            set_stream(self.prev)


def stream(s: torch.Stream | None) -> StreamContext:
    """``with torch.mlu.stream(s):`` runs the block's work on queue ``s``."""
    return StreamContext(s)


class ExternalStream(Stream):
    """A queue created elsewhere, wrapped by its handle (``torch.cuda.ExternalStream`` analogue). On the emulated
    runtime the handle is the queue's ``stream_id`` (what ``torch.mlu.Stream().stream_id`` gives); the caller keeps
    the queue alive."""

    def __new__(cls, stream_ptr: int, device: object = None, **kwargs: Any) -> ExternalStream:
        idx = _get_device_index(device, optional=True)
        return super().__new__(cls, stream_id=int(stream_ptr), device_index=idx, device_type=_mlu_type())


def _mlu_type() -> int:
    return int(_C.current_stream(_C.current_device())[2])


def get_stream_from_external(data_ptr: int, device: object = None) -> Stream:
    """The queue with handle ``data_ptr`` as a :class:`Stream` (``torch.cuda.get_stream_from_external``)."""
    return ExternalStream(data_ptr, device)
