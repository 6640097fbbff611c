# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.cuda.nvtx`` on mlu: NVTX annotates Nsight profiles of CUDA; on mlu each call is ignored (warns once).

Return values follow ``torch.cuda.nvtx``: ``range_push`` returns the zero-based depth of the range started (here
the depth of this module's own stack), ``range_pop`` the depth of the range ended, ``range_start`` a range handle.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]

_depth = 0
_handles = itertools.count(1)


def _warn(name: str) -> None:
    from torch_mlu.contrib.cuda_compat import warn_once

    warn_once(f"torch.cuda.nvtx.{name}", stacklevel=4)


def range_push(msg: str) -> int:
    """``torch.cuda.nvtx.range_push``: returns the depth of the range started."""
    global _depth
    _warn("range_push")
    _depth += 1
    return _depth - 1


def range_pop() -> int:
    """``torch.cuda.nvtx.range_pop``: returns the depth of the range ended (-1 when none is open)."""
    global _depth
    _warn("range_pop")
    if _depth == 0:
        return -1
    _depth -= 1
    return _depth


def range_start(msg: str) -> int:
    """``torch.cuda.nvtx.range_start``: returns a handle for :func:`range_end`."""
    _warn("range_start")
    return next(_handles)


def range_end(range_id: int) -> None:
    """``torch.cuda.nvtx.range_end``."""
    _warn("range_end")


def mark(msg: str) -> None:
    """``torch.cuda.nvtx.mark``."""
    _warn("mark")


@contextlib.contextmanager
def range(msg: str, *args: Any, **kwargs: Any) -> Iterator[None]:  # noqa: A001  (mirrors torch.cuda.nvtx.range)
    """``torch.cuda.nvtx.range`` context manager (and decorator, as contextlib makes it)."""
    _warn("range")
    yield
