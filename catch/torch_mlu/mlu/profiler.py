# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.mlu.profiler``: start/stop a profiling session around a region (``torch.cuda.profiler`` analogue).

The emulated device has no external profiler to signal (CUDA's ``cudaProfilerStart``), so the session is a
``torch.profiler.profile`` over CPU and mlu (PrivateUse1) activity; :func:`stop` returns it for inspection or export.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["init", "profile", "start", "stop"]

_session: Any = None


def init(output_file: str | None = None, flags: Any = None, output_mode: str = "key_value") -> None:
    """Accepted for compatibility with ``torch.cuda.profiler.init`` (no external profiler to configure)."""


def start() -> None:
    """Start a profiling session (``RuntimeError`` if one is running)."""
    global _session
    if _session is not None:
        raise RuntimeError("torch.mlu.profiler.start(): a session is already running")
    acts = [torch.profiler.ProfilerActivity.CPU]
    if hasattr(torch.profiler.ProfilerActivity, "PrivateUse1"):
        acts.append(torch.profiler.ProfilerActivity.PrivateUse1)
    _session = torch.profiler.profile(activities=acts)
    _session.__enter__()


def stop() -> Any:
    """Stop the session and return its ``torch.profiler.profile`` (None when none was running)."""
    global _session
    s, _session = _session, None
    if s is not None:
        s.__exit__(None, None, None)
    return s


@contextlib.contextmanager
def profile() -> Iterator[None]:
    """``with torch.mlu.profiler.profile():`` profiles the block."""
    start()
    try:
        yield
    finally:
        stop()
