# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``Work`` objects returned by the ``cncl`` backend (c10d's ``torch.distributed.Work`` contract).

A :class:`CNCLWork` completes when the collective's results are back in the ``mlu`` output tensors. Its
``get_future()`` is a ``torch.futures.Future`` created for the output device, completed on the backend's
communication queue, so a consumer that waits on the future (DDP's reducer does) orders its current queue after the
copy-back, as with CUDA futures. ``wait()`` blocks the calling host thread until completion (stronger than NCCL's
queue-only wait) and raises the collective's error, if any.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import torch
from torch._C._distributed_c10d import Work


class CNCLWork(Work):
    """One ``cncl`` collective in flight.

    Args:
        op: collective name used in messages (``"all_reduce"``...).
        device: the ``mlu`` device of the output tensors (``None`` for barrier).
        outputs: the tensors that hold the result once the work completes (``result()``, the future's value).
    """

    def __init__(self, op: str, device: torch.device | None, outputs: list[torch.Tensor]) -> None:
        super().__init__()
        self.op = op
        self._outputs = outputs
        self._device = device
        # Created on the first get_future() (DDP asks for it, plain dist.* calls do not): a device future records
        # notifiers on set_result, work that synchronous calls need not pay for.
        self._future: torch.futures.Future[Any] | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._finished = False  # completed or failed (under ``_lock``); ``_done`` follows once the future is settled
        self._error: BaseException | None = None
        self._source_rank_value = -1

    # ---- completion (called by the backend's completion thread) -------------------------------------------------
    # The future is settled before ``_done`` is set: once ``wait()`` returns, ``get_future().value()`` is ready.
    def _complete(self, source_rank: int = -1) -> None:
        with self._lock:
            self._source_rank_value = source_rank
            self._finished = True  # from here on, get_future() settles the future it creates itself
            future = self._future
        if future is not None:
            future.set_result(self._outputs)
        self._done.set()

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            if self._finished:
                return  # already completed: a late error (e.g. while releasing buffers) changes nothing
            self._error = error
            self._finished = True
            future = self._future
        if future is not None:
            future.set_exception(error)
        self._done.set()

    # ---- torch.distributed.Work API ---------------------------------------------------------------------------
    def wait(self, timeout: timedelta | float | None = None) -> bool:
        """Block until the collective finished; raise its error.

        ``timeout`` (``timedelta`` or seconds; zero or ``None`` = no extra limit, the process group's timeout
        applies in the transport) raises ``torch.distributed.DistBackendError`` if the work is still running then.
        """
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else timeout
        if not self._done.wait(seconds if seconds else None):
            raise torch.distributed.DistBackendError(
                f"cncl {self.op}: Work.wait timed out after {seconds} s; the collective is still in flight"
            )
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self) -> bool:
        """True once the collective finished (successfully or not); never blocks."""
        return self._done.is_set()

    def is_success(self) -> bool:
        """True if the collective finished without error."""
        return self._done.is_set() and self._error is None

    def exception(self) -> BaseException | None:
        """The collective's error, or ``None``."""
        return self._error

    def get_future(self) -> torch.futures.Future[Any]:
        """A future completed with the output tensors (a list), or with the collective's error."""
        with self._lock:
            if self._future is not None:
                return self._future
            future: torch.futures.Future[Any] = torch.futures.Future(devices=[self._device] if self._device else None)
            self._future = future
            done, error = self._finished, self._error
        if done:
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(self._outputs)
        return future

    def result(self) -> list[torch.Tensor]:
        """The output tensors (valid once the work completed)."""
        return self._outputs

    def synchronize(self) -> None:
        """Same as :meth:`wait` (the copy-back is finished on the device when the work completes)."""
        self.wait()

    def _source_rank(self) -> int:
        """For ``recv`` from any source: the rank the message came from."""
        return self._source_rank_value

    def source_rank(self) -> int:
        """For ``recv`` from any source: the rank the message came from."""
        return self._source_rank_value
