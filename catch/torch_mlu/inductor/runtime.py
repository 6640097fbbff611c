# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""What Inductor's generated wrapper code for ``mlu`` calls at run time (:mod:`torch_mlu.inductor.codegen` emits the
imports): :func:`host_caller` gives the function that runs a generated CPU kernel on device memory
(:func:`call_host`), :data:`empty_strided_mlu` allocates buffers, :func:`after_queued_work` wraps the entry point of a
C++ wrapper (``cpp_wrapper=True``; AOTInductor's model runner in ``catch/csrc/inductor`` waits the same way),
:func:`get_raw_stream` names a queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from torch_mlu import _C, mlu
from torch_mlu import host_view as _host_view

#: ``empty_strided_mlu(size, stride, dtype)``: an uninitialized mlu tensor on the current device, as
#: ``torch.empty_strided(size, stride, dtype=dtype, device="mlu")`` without the argument parser and the dispatcher (C++,
#: ``catch/csrc/python/host_kernel.cpp``); the wrapper's buffers, as ``_empty_strided_cpu`` is for cpu graphs.
empty_strided_mlu = _C._empty_strided_mlu

_host_views_checked = False


def get_raw_stream(device_index: int) -> int:
    """The id of the current queue of mlu device ``device_index`` (``torch.Stream.stream_id``: what
    ``get_raw_stream`` means for cuda); also the device interface's ``get_raw_stream``."""
    return int(mlu.current_stream(device_index).stream_id)


def _check_host_views() -> None:
    """Runs :func:`torch_mlu.host_view.check_host_view` once per process."""
    global _host_views_checked
    if not _host_views_checked:
        _host_view.check_host_view()
        _host_views_checked = True


def after_queued_work(call: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """Wraps the boxed entry point ``call(args)`` of a C++ wrapper compiled for mlu graphs.

    The wrapper runs its CPU kernels on the host addresses of mlu memory, on the calling thread; the returned function
    first waits for the asynchronous work queued on the current queue of the first mlu tensor in ``args``
    (non-blocking copies), as :func:`call_host` does before each kernel, and runs
    :func:`torch_mlu.host_view.check_host_view` once per process (its ``RuntimeError`` when host addresses do not
    alias device memory).
    """

    def run(args: list[Any]) -> Any:
        _check_host_views()
        for a in args:
            if isinstance(a, torch.Tensor) and a.device.type == "mlu":
                mlu.current_stream(a.device).synchronize()
                break
        return call(args)

    return run


def call_host(kernel: Callable[..., Any], *args: Any) -> Any:
    """Calls a generated CPU kernel with host views of its mlu tensor arguments (other arguments unchanged).

    Waits for the asynchronous work queued on the current queue of the arguments' device first (non-blocking copies).
    The first call in a process runs :func:`torch_mlu.host_view.check_host_view` before any kernel gets a host view,
    and raises its ``RuntimeError`` when host views do not alias device memory.
    """
    return host_caller()(kernel, *args)


def host_caller() -> Callable[..., Any]:
    """The function behind :func:`call_host` without a Python frame (``torch_mlu._C._call_host``: the same host views
    as :func:`torch_mlu.host_view.host_args`, in one C++ call), after :func:`torch_mlu.host_view.check_host_view` ran
    once in this process (its ``RuntimeError`` when host views do not alias device memory). The generated wrapper
    binds it once, when its module is loaded."""
    _check_host_views()
    return _C._call_host
