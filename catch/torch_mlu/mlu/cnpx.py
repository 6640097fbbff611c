# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.mlu.cnpx``: annotation ranges (Cambricon's CNPX, the ``torch.cuda.nvtx`` analogue).

Ranges become ``torch.profiler`` user annotations (``record_function`` events), so they show in a profiler trace
around the device work they enclose. ``range_push``/``range_pop`` nest per thread; ``range_start``/``range_end``
may cross threads.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]

_tls = threading.local()
_ids = itertools.count(1)
_open: dict[int, Any] = {}


def _stack() -> list[Any]:
    if not hasattr(_tls, "stack"):
        _tls.stack = []
    return _tls.stack


def range_push(msg: str) -> int:
    """Open a nested range named ``msg`` on this thread; returns its depth (0-based), as nvtx does."""
    _stack().append(torch.ops.profiler._record_function_enter_new(msg, None))
    return len(_stack()) - 1


def range_pop() -> int:
    """Close the innermost range of this thread; returns the depth it had, or -1 when none is open."""
    st = _stack()
    if not st:
        return -1
    torch.ops.profiler._record_function_exit._RecordFunction(st.pop())
    return len(st)


def range_start(msg: str) -> int:
    """Open a range that :func:`range_end` closes (possibly on another thread); returns its id."""
    rid = next(_ids)
    _open[rid] = torch.ops.profiler._record_function_enter_new(msg, None)
    return rid


def range_end(range_id: int) -> None:
    """Close the range :func:`range_start` returned ``range_id`` for."""
    handle = _open.pop(range_id, None)
    if handle is None:
        raise ValueError(f"cnpx.range_end: no open range with id {range_id}")
    torch.ops.profiler._record_function_exit._RecordFunction(handle)


def mark(msg: str) -> None:
    """An instantaneous marker (a zero-length range)."""
    range_push(msg)
    range_pop()


@contextlib.contextmanager
def range(msg: str, *args: Any, **kwargs: Any) -> Iterator[None]:  # noqa: A001 (nvtx's name)
    """``with torch.mlu.cnpx.range("name {}", x):`` brackets the block in a range (``msg.format(*args)``)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
