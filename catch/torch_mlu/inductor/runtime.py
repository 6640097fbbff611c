# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""What Inductor's generated wrapper code for ``mlu`` calls at run time (:mod:`torch_mlu.inductor.codegen` emits the
imports): :func:`call_host` runs a generated CPU kernel on device memory, :func:`get_raw_stream` names a queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch_mlu import host_view as _host_view
from torch_mlu import mlu

_host_views_checked = False


def get_raw_stream(device_index: int) -> int:
    """The id of the current queue of mlu device ``device_index`` (``torch.Stream.stream_id``: what
    ``get_raw_stream`` means for cuda); also the device interface's ``get_raw_stream``."""
    return int(mlu.current_stream(device_index).stream_id)


def call_host(kernel: Callable[..., Any], *args: Any) -> Any:
    """Calls a generated CPU kernel with host views of its mlu tensor arguments (other arguments unchanged).

    Waits for the asynchronous work queued on the current queue of the arguments' device first (non-blocking copies).
    The first call in a process runs :func:`torch_mlu.host_view.check_host_view` before any kernel gets a host view,
    and raises its ``RuntimeError`` when host views do not alias device memory.
    """
    global _host_views_checked
    if not _host_views_checked:
        _host_view.check_host_view()
        _host_views_checked = True
    return kernel(*_host_view.host_args(args))
