# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Keeps freed host buffers in the process heap for reuse while fusion groups run compiled.

Compiled groups run in host-kernel mode, so the buffers their generated code allocates are blocks of the mlu
caching allocator (see :mod:`torch_mlu.compile.group`); CPU allocations made outside that mode -- ``cpu`` debug
mode, eager CPU fallbacks, Inductor's own host-side tensors -- still come from ``malloc``. With glibc's defaults,
buffers of 128 KiB and more are ``mmap``-ed and unmapped again on free, so each call page-faults its buffers in
afresh. PyTorch's CPU performance guidance for Inductor is a caching ``malloc`` (jemalloc/tcmalloc);
:func:`keep_host_buffers` gets the same effect from glibc through ``mallopt`` (glibc ``malloc.h``):
``M_MMAP_THRESHOLD`` at its 64-bit maximum (32 MiB) serves such buffers from the heap, and ``M_TRIM_THRESHOLD``
(1 GiB) keeps freed heap memory mapped.

Applied once, when the first fusion group runs compiled. ``CATCH_FUSE_KEEP_HOST_BUFFERS=0`` leaves malloc alone
(then the resident set shrinks after frees, at the cost of page faults per call).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

KEEP_ENV = "CATCH_FUSE_KEEP_HOST_BUFFERS"
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit glibc
_TRIM_THRESHOLD = 1 << 30

_applied: bool | None = None


def keep_host_buffers() -> bool:
    """Raises glibc's mmap and trim thresholds once per process; returns whether they are in effect.

    Returns ``False`` (and changes nothing) off Linux/glibc or when ``CATCH_FUSE_KEEP_HOST_BUFFERS=0``.
    """
    global _applied
    if _applied is None:
        _applied = False
        if os.environ.get(KEEP_ENV, "1") != "0" and sys.platform.startswith("linux"):
            libc_name = ctypes.util.find_library("c")
            libc = ctypes.CDLL(libc_name) if libc_name else None
            if libc is not None and hasattr(libc, "mallopt"):
                _applied = bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(
                    libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
                )
    return _applied
