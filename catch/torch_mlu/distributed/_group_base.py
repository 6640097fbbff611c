# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""What every collective of :class:`~torch_mlu.distributed.process_group.ProcessGroupCNCL` stands on: the group's
setup (the Gloo transport on the group's store, the argument-check channel, the staging engine, the registration of
the transport as the group's mlu backend object), its identity, how a call becomes a staged job (:meth:`_run`,
:meth:`_submit`), its life cycle, and the local argument checks.

:class:`CNCLGroupBase` holds no collective; :mod:`torch_mlu.distributed.process_group` defines them on it.
"""

# The stubs of torch 2.13 type ProcessGroup's methods by their user-facing overloads; c10d (distributed_c10d.py and
# the C++ trampoline) calls a Python process group with the (tensors, opts) signatures implemented here.
# mypy: disable-error-code="override, assignment"

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch._C import _distributed_c10d as c10d

from torch_mlu.distributed import _checks
from torch_mlu.distributed._engine import Engine, Job
from torch_mlu.distributed._exchange import DescriptorExchange
from torch_mlu.distributed._work import CNCLWork

#: one rank's argument descriptor of a call (see ``_checks``)
Descriptor = tuple[int, ...]

@dataclass
class CNCLOptions:
    """Options of a ``cncl`` group: ``init_process_group("cncl", pg_options=ProcessGroupCNCL.Options(...))`` or
    ``new_group(backend="cncl", pg_options=...)`` (as ``ProcessGroupNCCL.Options`` for ``nccl``).

    Attributes:
        check_arguments: run the cross-rank argument check before each collective (see ``_checks``); default from
            the environment variable ``CATCH_CNCL_CHECK`` (on unless it is ``0``). Off saves one small message
            exchange per collective (and the group's check connections); a shape mismatch then makes Gloo abort the
            process instead of raising.
    """

    check_arguments: bool = field(default_factory=_checks.check_enabled)


class CNCLGroupBase(dist.ProcessGroup):
    """A ``cncl`` group without its collectives: setup, identity, job submission, life cycle, argument checks.

    The constructor's arguments are :class:`~torch_mlu.distributed.process_group.ProcessGroupCNCL`'s.
    """

    Options = CNCLOptions

    def __init__(self, store: dist.Store, rank: int, size: int, timeout: timedelta,
                 options: CNCLOptions | None = None) -> None:
        self._cncl_options = options or CNCLOptions()
        # In 2.13 only the (rank, size) constructor builds the Python trampoline (the (store, rank, size) one fails
        # with "not an alias instance"; the stubs list only that one). The store goes to the Gloo transport.
        super().__init__(rank, size)  # type: ignore[call-arg]
        self._rank = rank
        self._size = size
        self._timeout = timeout
        # Any: the stubs of ProcessGroupGloo omit its (c10d Backend) collective methods.
        self._gloo: Any = dist.ProcessGroupGloo(dist.PrefixStore("gloo/", store), rank, size, timeout)
        # The cross-rank argument check has a channel of its own: direct connections between the ranks (see
        # ``_checks`` and ``_exchange``).
        self._exchange: DescriptorExchange | None = (
            DescriptorExchange(dist.PrefixStore("check/", store), rank, size, _checks.descriptor_length(size), timeout)
            if self._cncl_options.check_arguments
            else None
        )
        # c10d asks the process group for its per-device backend object (``_get_backend``, e.g. for
        # ``init_process_group(device_id=...)``) and derives the device of object collectives from the registered
        # device types (``_get_object_coll_device``): the Gloo transport stands for the mlu backend object. Calls
        # from Python reach the methods below whatever the device.
        self._register_backend(torch.device("mlu"), dist.ProcessGroup.BackendType.CUSTOM, self._gloo)
        # The default backend type too: torch 2.15's init_process_group attaches a FlightRecorderHook to every new
        # group (distributed_c10d._maybe_attach_flight_recorder, new in 2.15), which asks the group for its default
        # backend; without one it fails with "Could not find the default backend type 0 for Process Group with name
        # cncl". Harmless on 2.13 (the method exists there and nothing asks).
        self._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)
        self._submit_lock = threading.Lock()
        self._coalesced: list[CNCLWork] | None = None  # works since _start_coalescing
        self._engine = Engine(lambda: f"rank {self._rank} of {self._size}", timeout)

    # ---- identity ---------------------------------------------------------------------------------------------
    def getBackendName(self) -> str:  # noqa: N802  (c10d's virtual method name)
        return "cncl"

    def getRank(self) -> int:  # noqa: N802
        return self._rank

    def getSize(self) -> int:  # noqa: N802
        return self._size

    @property
    def cncl_options(self) -> CNCLOptions:
        """The :class:`CNCLOptions` this group was created with."""
        return self._cncl_options

    @property
    def options(self) -> c10d.Backend.Options:
        """The transport's options (``timeout`` is the process group timeout)."""
        return self._gloo.options

    def __repr__(self) -> str:
        return f"ProcessGroupCNCL(rank={self._rank}, size={self._size}, timeout={self._timeout})"

    # ---- helpers ----------------------------------------------------------------------------------------------
    def _cpu_routed_to_gloo(self) -> bool:
        """True when the group was created as ``'mlu:cncl,cpu:gloo'``: cpu tensors then go to the Gloo transport."""
        try:
            config = dist.get_backend_config(self)
        except (ValueError, RuntimeError, KeyError):
            return False
        return "cpu:gloo" in config.replace(" ", "")

    def _device_of(self, op: str, tensors: Sequence[torch.Tensor]) -> torch.device | None:
        """``mlu`` device of the call, or ``None`` for cpu tensors in a mixed group; raises for other devices."""
        if tensors and all(t.device.type == "cpu" for t in tensors) and self._cpu_routed_to_gloo():
            return None
        return _checks.require_mlu(op, tensors)

    def _check(self, desc: Descriptor | list[Descriptor], speculable: bool = False
               ) -> _checks.CallCheck | _checks.CheckList | None:
        """The cross-rank check of one descriptor, or of each of a coalesced call's descriptors (None: check off).

        ``speculable``: the call is a single small all_reduce, which may be issued before its check finished (see
        ``_checks.CallCheck``).
        """
        if self._exchange is None:
            return None
        if not isinstance(desc, list):
            return _checks.CallCheck(self._exchange, desc, self._rank, speculable, self._complete_speculation)
        return _checks.CheckList([_checks.CallCheck(self._exchange, d, self._rank) for d in desc])

    def _complete_speculation(self, numel: int, dtype: torch.dtype) -> None:
        """Take part in the all_reduce other ranks issued before the check that failed (see ``_checks``): same
        length and dtype, result dropped."""
        self._gloo.allreduce([torch.zeros(numel, dtype=dtype)]).wait()

    def _host(self, job: Job, like: torch.Tensor) -> torch.Tensor:
        """A pooled pinned buffer shaped like ``like``, owned by ``job``."""
        raw, view = self._engine.pool.take(like.shape, like.dtype)
        job.buffers.append((raw, view))
        return view

    def _run(
        self,
        op: str,
        device: torch.device | None,
        outputs: list[torch.Tensor],
        issue: Callable[[Job], Callable[[], dist.Work | list[dist.Work] | None]],
        stage_in: Sequence[torch.Tensor] = (),
        desc: Descriptor | list[Descriptor] | None = None,
        copy_out: Sequence[tuple[torch.Tensor, int]] = (),
        opts: object = None,
        speculable: bool = False,
    ) -> CNCLWork:
        """Build and submit a job.

        ``stage_in`` are the mlu inputs to copy to host buffers (available to ``issue`` as ``job.hosts``);
        ``copy_out`` lists ``(mlu output, index into job.hosts)`` pairs copied back after the transport finished.
        ``issue(job)`` returns the closure run on the issue thread. On cpu tensors of a mixed group
        (``device is None``) the tensors are used directly.
        """
        work = CNCLWork(op, device, outputs)
        job = Job(work=work, device=device, issue=lambda: None)
        if device is None:
            job.hosts = list(stage_in)
            job.issue = issue(job)
            return self._submit(job, desc, [], [], opts)
        hosts = [self._host(job, t) for t in stage_in]
        job.hosts = hosts
        job.copy_back = [(dst, hosts[i]) for dst, i in copy_out]
        job.issue = issue(job)
        job.keep_alive.extend(outputs)
        return self._submit(job, desc, list(stage_in), hosts, opts, speculable)

    def _submit(self, job: Job, desc: Descriptor | list[Descriptor] | None, inputs: list[torch.Tensor],
                hosts: list[torch.Tensor], opts: object = None, speculable: bool = False) -> CNCLWork:
        """Attach the cross-rank check and submit the job, atomically: the engine starts jobs (and their checks)
        in submission order, which is then the call order of all threads.

        ``opts.asyncOp`` false (``dist.*`` with ``async_op=False``: the caller waits at once) allows the engine to
        run the job on this thread.
        """
        wait = not getattr(opts, "asyncOp", True)
        with self._submit_lock:
            job.check = self._check(desc, speculable) if desc is not None else None
            work = self._engine.stage(job, inputs, hosts, wait=wait)
            if self._coalesced is not None:
                self._coalesced.append(work)
        self._engine.complete_inline(job)
        return work

    def _extra_host(self, job: Job, like: torch.Tensor) -> torch.Tensor:
        """A host buffer for an output that is not staged in (or ``like`` itself on cpu in a mixed group)."""
        if job.device is None:
            return like
        return self._host(job, like)

    # ---- life cycle -------------------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the staging threads after the submitted collectives; the transport closes with the object."""
        self._engine.shutdown()

    def abort(self) -> None:
        """Stop accepting collectives (c10d's ``_abort_process_group``); close the argument-check channel."""
        self._engine.shutdown()
        if self._exchange is not None:
            self._exchange.close()

    # ---- argument checks --------------------------------------------------------------------------------------
    @staticmethod
    def _single(op: str, tensors: list[torch.Tensor]) -> None:
        if len(tensors) != 1:
            raise ValueError(f"cncl {op}: expected exactly one tensor per call, got {len(tensors)}")

    def _peer(self, op: str, peer: int) -> None:
        if not 0 <= peer < self._size or peer == self._rank:
            raise ValueError(f"cncl {op}: peer rank {peer} is invalid for rank {self._rank} of {self._size}")

    def _gather_sizes(self, output: torch.Tensor, input: torch.Tensor) -> None:
        if output.numel() != input.numel() * self._size or output.dtype != input.dtype:
            raise ValueError(
                f"cncl all_gather_into_tensor: output must have {self._size} x {input.numel()} elements of "
                f"{input.dtype}, got {output.numel()} of {output.dtype}"
            )

    def _scatter_sizes(self, output: torch.Tensor, input: torch.Tensor) -> None:
        if input.numel() != output.numel() * self._size or output.dtype != input.dtype:
            raise ValueError(
                f"cncl reduce_scatter_tensor: input must have {self._size} x {output.numel()} elements of "
                f"{output.dtype}, got {input.numel()} of {input.dtype}"
            )

    @staticmethod
    def _same_shape(op: str, a: torch.Tensor, b: torch.Tensor) -> None:
        if a.shape != b.shape or a.dtype != b.dtype:
            raise ValueError(
                f"cncl {op}: every tensor must match the input ({tuple(b.shape)} {b.dtype}), got "
                f"{tuple(a.shape)} {a.dtype}"
            )
