# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The staging engine of the ``cncl`` backend: mlu tensors -> pinned host buffers -> Gloo -> mlu tensors.

Life of a collective (all of it asynchronous with respect to the caller's current mlu queue):

1. caller thread (:meth:`Engine.stage`): records a notifier on its current queue and hands the job to the issue
   thread; the caller gets its :class:`~torch_mlu.distributed._work.CNCLWork` back at once and neither the thread nor
   the queue waits for anything.
2. issue thread: waits for that notifier (the inputs are then final), copies the inputs device-to-host into pooled
   pinned buffers (on the device's communication queue, which is otherwise idle), runs the cross-rank argument
   check (see ``_checks``), then issues the Gloo operation on the host buffers. One thread issues every job of a
   process group in call order, so all ranks issue Gloo operations in the same order (c10d's requirement).
3. completion, on the group's waiter thread, which waits for the Gloo works in issue order (never a callback on a
   Gloo thread: Python on a foreign C++ thread aborts the process when it runs during interpreter exit): raises
   the transport's error (after the process group's timeout, or at once when a peer's connection closes), or
   copies the results host-to-device, returns the buffers to the pool and completes the work and its future (on
   the communication queue, so consumers of the future order after the copy).

The copies run on those threads themselves (blocking ``copy_`` on the communication queue): no extra thread hop per
collective, which matters for small messages. A call whose caller waits at once (``async_op=False``) runs steps 2
and 3 on the caller's thread when no earlier job is still queued, with its copies on the caller's current queue (in
order with the caller's own work, as a blocking copy is): the caller would block anyway, and two thread hops per
call less keep small synchronous collectives close to plain Gloo.

Large all-reduces are pipelined (:meth:`Engine._start_pipelined`): staged and reduced in chunks, so the copies of one
chunk overlap the transfer of the others. Jobs hold no reference cycles once finished (:meth:`Engine._release`
drops their closures): they are freed by reference counting, and a steady stream of collectives never triggers the
garbage collector's full collections.
"""

from __future__ import annotations

import atexit
import gc
import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Protocol

import torch
import torch.distributed as dist

from torch_mlu.distributed._exchange import ExchangeError
from torch_mlu.distributed._staging import HostBufferPool
from torch_mlu.distributed._work import CNCLWork


class Check(Protocol):
    """The cross-rank argument check of a job (``_checks.CallCheck``, ``_checks.CheckList``)."""

    #: the job's transport operation was issued before :meth:`finish` (set by :meth:`start`)
    speculative: bool

    def start(self, on_caller_thread: bool) -> bool: ...

    def finish(self) -> None: ...

    def abandon(self, reason: str) -> None: ...


@dataclass(slots=True)
class Job:
    """One collective: what to stage, what to run on the host buffers, what to copy back."""

    work: CNCLWork
    device: torch.device | None
    #: runs on the issue thread after staging and returns the Gloo work, a list of them (coalesced ops), or None
    issue: Callable[[], dist.Work | list[dist.Work] | None]
    #: cross-rank argument check (``_checks.CallCheck`` or ``CheckList``), started and finished around ``issue``
    #: (see :meth:`Engine._start`); None = no check
    check: Check | None = None
    #: (mlu destination, host source) pairs copied back after the Gloo work finished
    copy_back: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    #: pooled buffers (raw buffer, its view) to return when the job ends
    buffers: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    #: tensors kept alive until the job ends (the caller may drop its references right after the call)
    keep_alive: list[torch.Tensor] = field(default_factory=list)
    #: (mlu input, pinned host buffer) pairs copied device-to-host (issue thread, or the caller's when inline)
    stage_in: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    #: pinned host buffers of the staged inputs (or the cpu tensors themselves in a mixed group)
    hosts: list[torch.Tensor] = field(default_factory=list)
    #: notifier recorded on the caller's current queue: the inputs are ready when it completed
    staged: torch.Event | None = None
    #: for recv from any source: returns the sender's rank after completion
    source_rank: Callable[[], int] | None = None
    #: set when the job was started on the caller's thread: (its transport work,)
    inline: tuple[dist.Work | list[dist.Work] | None] | None = None
    #: pipelined job: issues the transport operation of one staged chunk (``stage_in[i]``'s host side, whose
    #: result is ``copy_back[i]``'s source) and returns its work; ``issue`` is then unused. See :meth:`Engine._start`.
    issue_chunk: Callable[[torch.Tensor], dist.Work] | None = None


_STOP = object()
_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()
#: whether this process ever made an :class:`Engine` (a ``cncl`` process group); only then is there anything for
#: the exit's drain and collection to do
_STARTED = False
#: seconds the interpreter's exit waits for collectives still in flight
EXIT_DRAIN_S = 10.0


@atexit.register
def _drain_at_exit() -> None:
    """Let in-flight collectives finish, and Gloo's threads settle, before the interpreter finalizes.

    A thread that needs the interpreter once finalization has begun makes the process abort ("terminate called
    without an active exception"): CPython ends it with ``pthread_exit`` in ``take_gil``, inside a ``noexcept``
    destructor. Completion callbacks are one such case. Gloo's worker threads are another. gdb showed
    ``pt_gloo_runloop`` -> ``~AsyncAllreduceWork`` -> ``TensorImpl::decref_pyobject`` -> ``take_gil`` ->
    ``pthread_exit``: a work freed on Gloo's thread while the main thread was already finalizing. A full garbage
    collection after the drain removes it in practice: ``examples/train_digits_ddp.py`` under torchrun aborted in
    4 of 42 two-rank runs without it and in 0 of 60 with it. The collection also keeps the Gloo threads off the
    interpreter until it is done, but the threads outlive it, so this is a measured mitigation, not a proof
    (catch/README.md, "Known issues").

    A process that never made a ``cncl`` process group skips both: the collection alone is a full pass over the
    ~165,000 objects alive after ``import torch``, which ``benchmarks/run_all.py``'s ``import torch`` row measured as
    most of the autoload's cost.
    """
    if not _STARTED:
        return
    for engine in list(_ENGINES):
        engine.shutdown(drain_s=EXIT_DRAIN_S)
    gc.collect()


def _nothing() -> None:
    """The ``issue`` of a finished job."""


def _works(issued: object) -> list[dist.Work]:
    """The transport works a job's ``issue`` returned: none, one, or a list (coalesced collectives)."""
    if issued is None:
        return []
    return list(issued) if isinstance(issued, list | tuple) else [issued]  # type: ignore[list-item]


class Engine:
    """Staging queue and issue thread of one ``cncl`` process group.

    Args:
        describe: a callable giving ``"rank r of n"`` for messages.
        timeout: the process group timeout, named in transport errors.
    """

    def __init__(self, describe: Callable[[], str], timeout: timedelta) -> None:
        self._timeout = timeout
        self.pool = HostBufferPool()
        self._describe = describe
        self._streams: dict[int, torch.Stream] = {}
        self._streams_lock = threading.Lock()
        self._issue_q: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._wait_q: queue.SimpleQueue[object] | None = None
        self._waiter_thread: threading.Thread | None = None
        self._pending = 0  # jobs queued for the issue thread and not issued yet
        self._outstanding = 0  # jobs submitted and not completed yet
        self._outstanding_cv = threading.Condition()
        self._pending_lock = threading.Lock()
        self._issuer = threading.Thread(target=self._issue_loop, name="cncl-issue", daemon=True)
        self._issuer.start()
        self._closed = False
        global _STARTED
        _STARTED = True
        _ENGINES.add(self)

    # ---- caller side ------------------------------------------------------------------------------------------
    def comm_stream(self, device: torch.device) -> torch.Stream:
        """The communication queue of ``device`` (created on first use, one per device and process group)."""
        idx = int(device.index or 0)
        with self._streams_lock:
            s = self._streams.get(idx)
            if s is None:
                s = torch.mlu.Stream(device=idx)
                self._streams[idx] = s
            return s

    def stage(self, job: Job, inputs: list[torch.Tensor], hosts: list[torch.Tensor], wait: bool = False) -> CNCLWork:
        """Submit ``job``; its inputs are copied ``inputs[i] -> hosts[i]`` once the caller's queue reached this point.

        Asynchronous path (default): only a notifier is recorded on the caller's current queue, the job goes to the
        issue thread and the caller's thread and queue go on at once. ``wait=True`` is for calls whose caller waits
        for the result anyway (``async_op=False``): when no earlier job is still queued, the job runs on the calling
        thread, which saves two thread hops per call. The caller must hold the group's submit lock (issue order).
        ``hosts`` are pinned views of the same shapes and dtypes as ``inputs``.
        """
        if self._closed:
            raise dist.DistBackendError(f"cncl {job.work.op}: the process group was shut down")
        with self._outstanding_cv:
            self._outstanding += 1
        with self._pending_lock:
            inline = wait and self._pending == 0
            if not inline:
                self._pending += 1
        if job.device is not None:
            job.stage_in = list(zip(inputs, hosts, strict=True))
            job.keep_alive.extend(inputs)
            if not inline:  # the issue thread copies once the caller's queue reached this point
                ready = torch.Event(device=job.device)
                ready.record(torch.mlu.current_stream(job.device.index))
                job.staged = ready
        if not inline:
            self._issue_q.put(job)
            return job.work
        started, gloo_work = self._start(job, inline=True)
        if started:
            job.inline = (gloo_work,)
        return job.work

    def complete_inline(self, job: Job) -> None:
        """Finish a job that :meth:`stage` started on this thread (call it after releasing the submit lock)."""
        if job.inline is None:
            return
        (gloo_work,) = job.inline
        job.inline = None
        if job.issue_chunk is not None:
            self._wait_chunks(job, _works(gloo_work), inline=True)
            return
        check = job.check
        try:
            for w in _works(gloo_work):
                w.wait()
        except BaseException as exc:
            if check is not None and check.speculative:
                check.abandon(f"a speculated {job.work.op} failed in the transport")
            self._finish_failed(job, exc)
            return
        if check is not None and check.speculative:
            try:  # the data operation ran before the check: verify before the results are used
                check.finish()
            except BaseException as exc:
                self._finish_failed(job, exc)
                return
        self._finish(job, inline=True)

    def shutdown(self, drain_s: float = 0.0) -> None:
        """Stop the issue thread after the jobs already submitted (idempotent).

        ``drain_s`` > 0 also waits up to that many seconds for submitted jobs to complete.
        """
        if not self._closed:
            self._closed = True
            self._issue_q.put(_STOP)
        if drain_s > 0:
            with self._outstanding_cv:
                self._outstanding_cv.wait_for(lambda: self._outstanding == 0, timeout=drain_s)
            # The issue thread forwards the stop to the waiter thread; both end once their queues are empty.
            for thread in (self._issuer, self._waiter_thread):
                if thread is not None and thread is not threading.current_thread():
                    thread.join(timeout=drain_s)

    # ---- issue thread and completion callbacks -----------------------------------------------------------------
    def _start(self, job: Job, inline: bool = False) -> tuple[bool, dist.Work | list[dist.Work] | None]:
        """Send the argument check's descriptor, stage the inputs, finish the check and issue the transport
        operation; False if the job failed.

        The check's round trip overlaps the staging copies. A speculative check (``CallCheck``: a small
        synchronous all_reduce repeating the previous call) issues first and is finished by
        :meth:`complete_inline` once the transfer is done.
        """
        if job.issue_chunk is not None:
            return self._start_pipelined(job, job.issue_chunk)
        check = job.check
        pending_check = False  # started and not finished: must be abandoned if the job fails
        try:
            speculative = False
            if check is not None:
                speculative = check.start(inline)
                pending_check = True
            if job.staged is not None:
                job.staged.synchronize()
                self._copy(job.device, job.stage_in)
            else:  # inline: a blocking copy on the caller's current queue first waits for that queue's work
                for src, dst in job.stage_in:
                    dst.copy_(src)
            if check is not None and not speculative:
                pending_check = False
                check.finish()
            return True, job.issue()
        except BaseException as exc:  # the job fails, the group keeps working
            if check is not None and pending_check:
                check.abandon(f"{job.work.op} failed before its argument check finished: {exc}")
            self._finish_failed(job, exc)
            return False, None

    def _start_pipelined(self, job: Job, issue_chunk: Callable[[torch.Tensor], dist.Work]
                         ) -> tuple[bool, list[dist.Work] | None]:
        """Stage chunk by chunk, issuing each chunk's transport operation as soon as it is on the host.

        The transport (Gloo's worker threads) moves chunk i while this thread copies chunk i + 1, and the
        completion copies chunk i back while later chunks are still in flight (:meth:`_wait_chunks`): for large
        messages the staging copies hide behind the transfer instead of adding to it. Every rank splits the same
        (checked) shape the same way, so the chunks' operations match across ranks.
        """
        works: list[dist.Work] = []
        try:
            if job.staged is not None:
                job.staged.synchronize()
                assert job.device is not None
                with torch.mlu.device(job.device.index), torch.mlu.stream(self.comm_stream(job.device)):
                    self._stage_chunks(job, issue_chunk, works)
            else:  # inline: blocking copies on the caller's current queue, in order with its work
                self._stage_chunks(job, issue_chunk, works)
            return True, works
        except BaseException as exc:  # chunks already issued may still write into the (dropped) buffers
            self._finish_failed(job, exc)
            return False, None

    @staticmethod
    def _stage_chunks(job: Job, issue_chunk: Callable[[torch.Tensor], dist.Work], works: list[dist.Work]) -> None:
        check = job.check
        if check is not None:
            check.start(False)  # never speculative: the check is finished before the first chunk is issued
        try:
            for i, (src, dst) in enumerate(job.stage_in):
                dst.copy_(src)
                if i == 0 and check is not None:
                    finishing, check = check, None
                    finishing.finish()  # before the first transport operation: a mismatch must never reach Gloo
                works.append(issue_chunk(dst))
        except BaseException as exc:
            if check is not None:
                check.abandon(f"{job.work.op} failed before its argument check finished: {exc}")
            raise

    def _wait_chunks(self, job: Job, works: list[dist.Work], inline: bool) -> None:
        """Wait for each chunk's transfer in order and copy its result back at once (``copy_back[i]`` belongs to
        ``works[i]``; pairs after those are copied once all are back); then complete the job."""
        try:
            if inline:
                self._copy_chunks_back(job, works)
            else:
                assert job.device is not None
                with torch.mlu.device(job.device.index), torch.mlu.stream(self.comm_stream(job.device)):
                    self._copy_chunks_back(job, works)
        except BaseException as exc:
            self._finish_failed(job, exc)
            return
        job.copy_back = []
        self._finish(job, inline=inline)

    @staticmethod
    def _copy_chunks_back(job: Job, works: list[dist.Work]) -> None:
        for w, (dst, src) in zip(works, job.copy_back, strict=False):
            w.wait()
            dst.copy_(src)
        for dst, src in job.copy_back[len(works):]:
            dst.copy_(src)

    def _issue_loop(self) -> None:
        while True:
            item = self._issue_q.get()
            if item is _STOP:
                if self._wait_q is not None:
                    self._wait_q.put(_STOP)
                return
            assert isinstance(item, Job)
            job = item
            started, gloo_work = self._start(job, inline=False)
            with self._pending_lock:
                self._pending -= 1
            if not started:
                continue
            works = _works(gloo_work)
            if not works:
                self._finish(job)
                continue
            # Completion runs on our own waiter thread, never as a future callback on a Gloo thread: Python code on a
            # foreign C++ thread during interpreter finalization is ended with pthread_exit, whose forced unwind through
            # C++ frames aborts the process ("terminate called without an active exception").
            self._waiter().put((job, gloo_work))

    def _waiter(self) -> queue.SimpleQueue[object]:
        with self._streams_lock:
            if self._wait_q is None:
                self._wait_q = queue.SimpleQueue()
                self._waiter_thread = threading.Thread(target=self._wait_loop, args=(self._wait_q,),
                                                       name="cncl-wait", daemon=True)
                self._waiter_thread.start()
            return self._wait_q

    def _wait_loop(self, q: queue.SimpleQueue[object]) -> None:
        while True:
            item = q.get()
            if item is _STOP:
                return
            assert isinstance(item, tuple)
            job, gloo_work = item
            if job.issue_chunk is not None:
                self._wait_chunks(job, _works(gloo_work), inline=False)
                continue
            try:
                for w in _works(gloo_work):
                    w.wait()
            except BaseException as exc:
                self._finish_failed(job, exc)
                continue
            self._finish(job)

    def _finish(self, job: Job, inline: bool = False) -> None:
        """Copy the results back and complete the job's work (its transport works have finished without error).

        ``inline``: the job ran on the caller's thread, which copies on its current queue (in order with its own
        work, as the stage-in copy did) and gets the work back completed.
        """
        try:
            src_rank = job.source_rank() if job.source_rank is not None else -1
            if job.device is None:
                self._release(job)
                job.work._complete(src_rank)
                return
            if inline:
                for dst, src in job.copy_back:
                    dst.copy_(src)
                self._release(job)
                job.work._complete(src_rank)
                return
            self._copy(job.device, [(src, dst) for dst, src in job.copy_back])
            self._release(job)
            with torch.mlu.device(job.device.index), torch.mlu.stream(self.comm_stream(job.device)):
                job.work._complete(src_rank)
        except BaseException as exc:
            self._fail_job(job, exc)
        finally:
            self._done()

    def _copy(self, device: torch.device | None, pairs: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Copy ``src -> dst`` for each ``(src, dst)`` on this thread, in the order of the communication queue.

        A blocking ``copy_`` between mlu and host runs on the calling thread once the (otherwise idle)
        communication queue drained, so the staging needs no extra thread hop and never waits on user work.
        """
        assert device is not None
        with torch.mlu.device(device.index), torch.mlu.stream(self.comm_stream(device)):
            for src, dst in pairs:
                dst.copy_(src)

    def _finish_failed(self, job: Job, exc: BaseException) -> None:
        self._fail_job(job, exc)
        self._done()

    def _fail_job(self, job: Job, exc: BaseException) -> None:
        # The buffers of a failed job are dropped, not pooled: a timed-out transport may still write into them.
        self._release(job, reuse=False)
        job.work._fail(self._wrap(job.work.op, exc))

    def _done(self) -> None:
        with self._outstanding_cv:
            self._outstanding -= 1
            self._outstanding_cv.notify_all()

    def _release(self, job: Job, reuse: bool = True) -> None:
        if reuse:
            for raw, view in job.buffers:
                self.pool.give(raw, view)
        job.buffers.clear()
        job.keep_alive.clear()
        job.copy_back.clear()
        job.stage_in.clear()
        # The closures refer to the job: dropping them breaks the reference cycle, so the job is freed at once by
        # reference counting instead of piling up for the garbage collector (whose full collections, over the
        # objects of torch, take tens of milliseconds and more in the middle of a training step).
        job.issue = _nothing
        job.issue_chunk = None
        job.check = None
        job.source_rank = None

    def _wrap(self, op: str, exc: BaseException) -> BaseException:
        """Errors from our own checks pass unchanged; transport errors get the op, the rank and a hint."""
        if isinstance(exc, ValueError | TypeError | dist.DistBackendError) and str(exc).startswith("cncl "):
            return exc
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        lost_peer = any(w in text.lower() for w in ("timed out", "timeout", "connection", "closed", "reset", "pipe"))
        hint = (
            f" (a peer process exited, or did not answer within the process group timeout of {self._timeout})"
            if lost_peer
            else ""
        )
        where = "the argument check" if isinstance(exc, ExchangeError) else "the Gloo transport"
        return dist.DistBackendError(f"cncl {op} failed on {self._describe()} in {where}: {text}{hint}")
