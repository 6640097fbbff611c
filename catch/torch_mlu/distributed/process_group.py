# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``ProcessGroupCNCL``: the ``cncl`` c10d process group for ``mlu`` tensors.

A Python subclass of c10d's ``torch.distributed.ProcessGroup`` (its pybind trampoline, ``PyProcessGroup``, routes the
C++ callers -- DDP's reducer, ``_broadcast_coalesced``, ``_verify_params_across_processes`` -- to these methods).
The transport is a c10d ``ProcessGroupGloo`` created on the same store (prefix ``gloo/``): on MLU hardware CNCL would
replace it; here every collective stages its ``mlu`` tensors through pinned host buffers (see ``_engine``).

Method names and signatures are the ones ``torch/distributed/distributed_c10d.py`` (PyTorch 2.13) calls on a
process group: ``allreduce``, ``broadcast``, ``reduce``, ``allgather``, ``all_gather_single``, ``reduce_scatter``,
``reduce_scatter_single``, ``gather``, ``scatter``, ``all_to_all_single``, ``alltoall``, ``barrier``, ``send``,
``recv``, ``recv_anysource``, and the coalesced ``allreduce_coalesced``, ``all_gather_single_coalesced``,
``reduce_scatter_single_coalesced`` with ``_start_coalescing``/``_end_coalescing`` (``_coalescing_manager``), plus
the older aliases (``_allgather_base``, ``_reduce_scatter_base``, ``alltoall_base``, ``*_tensor_coalesced``). Each
returns a :class:`~torch_mlu.distributed._work.CNCLWork` at once.

C++ callers reach only the methods the 2.13 trampoline forwards (allgather, all_gather_single_coalesced, allreduce,
allreduce_coalesced, all_to_all_single, barrier, broadcast, reduce_scatter, reduce_scatter_single_coalesced, send,
recv); reduce, gather and scatter called from C++ (no caller in DDP) land on the registered mlu backend object, the
Gloo transport, which refuses mlu tensors with its own error.
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

#: all_reduce of a contiguous mlu tensor of at least twice this many bytes is staged and reduced in chunks of this
#: size, the copies of one chunk overlapping the transfer of the others (as NCCL pipelines its own chunks)
PIPELINE_CHUNK_BYTES = 4 << 20


def _nothing() -> None:
    """The ``issue`` of a pipelined job (its chunks are issued by ``issue_chunk``)."""


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


class ProcessGroupCNCL(dist.ProcessGroup):
    """The ``cncl`` backend: collectives on ``mlu`` tensors over c10d's Gloo transport.

    Args:
        store: the c10d store of this group (already prefixed by c10d for the group and device).
        rank: this process's rank in the group, ``0 <= rank < size``.
        size: number of ranks.
        timeout: the process group timeout: a collective whose peers do not answer within it fails with
            ``torch.distributed.DistBackendError`` (a peer that exits fails it at once, when its connection closes).
        options: :class:`CNCLOptions` (default: ``CNCLOptions()``).
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

    # ---- collectives ------------------------------------------------------------------------------------------
    def allreduce(self, tensors: list[torch.Tensor], opts: c10d.AllreduceOptions | None = None) -> CNCLWork:
        """In-place all-reduce of ``tensors[0]`` (``ReduceOp`` SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR)."""
        opts = opts or c10d.AllreduceOptions()
        self._single("all_reduce", tensors)
        t = tensors[0]
        device = self._device_of("all_reduce", tensors)
        gopts = c10d.AllreduceOptions()
        gopts.reduceOp = opts.reduceOp

        desc = _checks.descriptor("all_reduce", t)
        # By size alone (the descriptor's numel and dtype), never by layout: every rank must split alike.
        if device is not None and t.numel() * t.element_size() >= 2 * PIPELINE_CHUNK_BYTES:
            return self._allreduce_pipelined(t, device, gopts, desc, opts)

        def issue(job: Job) -> Callable[[], dist.Work]:
            return lambda: self._gloo.allreduce([job.hosts[0]], gopts)

        return self._run("all_reduce", device, [t], issue, [t], desc, [(t, 0)], opts, speculable=device is not None)

    def _allreduce_pipelined(self, t: torch.Tensor, device: torch.device, gopts: c10d.AllreduceOptions,
                             desc: Descriptor, opts: c10d.AllreduceOptions) -> CNCLWork:
        """All-reduce of a large ``t`` as one job of ``PIPELINE_CHUNK_BYTES`` chunks, each staged and reduced on its
        own, so that the copies overlap the transfer (see ``Engine._start_pipelined``). A non-contiguous ``t`` is
        reduced in a contiguous copy (taken now, in order on the current queue) and copied back at the end."""
        work = CNCLWork("all_reduce", device, [t])
        job = Job(work=work, device=device, issue=_nothing)
        dense = t if t.is_contiguous() else t.contiguous()
        host = self._host(job, dense).view(-1)
        flat = dense.view(-1)
        step = max(1, PIPELINE_CHUNK_BYTES // t.element_size())
        ins = [flat[i : i + step] for i in range(0, flat.numel(), step)]
        hosts = [host[i : i + step] for i in range(0, flat.numel(), step)]
        job.copy_back = list(zip(ins, hosts, strict=True))
        if dense is not t:
            job.copy_back.append((t, dense))  # after every chunk is back (see ``Engine._wait_chunks``)
        job.keep_alive.extend((t, dense))
        gloo = self._gloo
        job.issue_chunk = lambda h: gloo.allreduce([h], gopts)
        return self._submit(job, desc, ins, hosts, opts)

    def broadcast(self, tensors: list[torch.Tensor], opts: c10d.BroadcastOptions | None = None) -> CNCLWork:
        """Broadcast ``tensors[0]`` from ``opts.rootRank`` to every rank (in place)."""
        opts = opts or c10d.BroadcastOptions()
        self._single("broadcast", tensors)
        t = tensors[0]
        root = opts.rootRank
        device = self._device_of("broadcast", tensors)
        gopts = c10d.BroadcastOptions()
        gopts.rootRank = root

        def issue(job: Job) -> Callable[[], dist.Work]:
            return lambda: self._gloo.broadcast([job.hosts[0]], gopts)

        is_root = self._rank == root
        return self._run("broadcast", device, [t], issue, [t], _checks.descriptor("broadcast", t, root),
                         [] if is_root else [(t, 0)], opts)

    def reduce(self, tensors: list[torch.Tensor], opts: c10d.ReduceOptions | None = None) -> CNCLWork:
        """Reduce ``tensors[0]`` of every rank into the one of ``opts.rootRank`` (others keep their input)."""
        opts = opts or c10d.ReduceOptions()
        self._single("reduce", tensors)
        t = tensors[0]
        root = opts.rootRank
        device = self._device_of("reduce", tensors)
        gopts = c10d.ReduceOptions()
        gopts.rootRank = root
        gopts.reduceOp = opts.reduceOp

        def issue(job: Job) -> Callable[[], dist.Work]:
            return lambda: self._gloo.reduce([job.hosts[0]], gopts)

        return self._run("reduce", device, [t], issue, [t], _checks.descriptor("reduce", t, root),
                         [(t, 0)] if self._rank == root else [], opts)

    def allgather(
        self, output_lists: list[list[torch.Tensor]], inputs: list[torch.Tensor],
        opts: c10d.AllgatherOptions | None = None,
    ) -> CNCLWork:
        """``output_lists[0][r]`` receives rank r's ``inputs[0]``."""
        self._single("all_gather", inputs)
        if len(output_lists) != 1 or len(output_lists[0]) != self._size:
            raise ValueError(f"cncl all_gather: expected one output list of {self._size} tensors")
        outs = output_lists[0]
        for o in outs:
            self._same_shape("all_gather", o, inputs[0])
        device = self._device_of("all_gather", [*inputs, *outs])

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            outs_h = [self._extra_host(job, o) for o in outs]
            if job.device is not None:
                job.copy_back = list(zip(outs, outs_h, strict=True))
            return lambda: self._gloo.allgather([outs_h], [hosts[0]])

        return self._run("all_gather", device, list(outs), issue, inputs,
                         _checks.descriptor("all_gather", inputs[0]), opts=opts)

    def all_gather_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: c10d.AllgatherOptions | None = None
    ) -> CNCLWork:
        """``all_gather_into_tensor``: ``output`` (size * input numel, ranks along dim 0) gets every rank's input."""
        self._gather_sizes(output, input)
        device = self._device_of("all_gather_into_tensor", [output, input])

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            out_h = self._extra_host(job, output)
            if job.device is not None:
                job.copy_back = [(output, out_h)]
            return lambda: self._gloo._allgather_base(out_h, hosts[0], c10d.AllgatherOptions())

        return self._run("all_gather_into_tensor", device, [output], issue, [input],
                         _checks.descriptor("all_gather_into_tensor", input), opts=opts)

    _allgather_base = all_gather_single

    def reduce_scatter(
        self, outputs: list[torch.Tensor], input_lists: list[list[torch.Tensor]],
        opts: c10d.ReduceScatterOptions | None = None,
    ) -> CNCLWork:
        """``outputs[0]`` gets the reduction over ranks of their ``input_lists[0][rank]``."""
        opts = opts or c10d.ReduceScatterOptions()
        self._single("reduce_scatter", outputs)
        if len(input_lists) != 1 or len(input_lists[0]) != self._size:
            raise ValueError(f"cncl reduce_scatter: expected one input list of {self._size} tensors")
        ins = input_lists[0]
        for i in ins:
            self._same_shape("reduce_scatter", i, outputs[0])
        out = outputs[0]
        device = self._device_of("reduce_scatter", [out, *ins])
        gopts = c10d.ReduceScatterOptions()
        gopts.reduceOp = opts.reduceOp

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            out_h = self._extra_host(job, out)
            if job.device is not None:
                job.copy_back = [(out, out_h)]
            return lambda: self._gloo.reduce_scatter([out_h], [hosts], gopts)

        return self._run("reduce_scatter", device, [out], issue, ins, _checks.descriptor("reduce_scatter", out),
                         opts=opts)

    def reduce_scatter_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: c10d.ReduceScatterOptions | None = None
    ) -> CNCLWork:
        """``reduce_scatter_tensor``: rank r's ``output`` gets the reduction of every rank's r-th chunk of ``input``."""
        opts = opts or c10d.ReduceScatterOptions()
        self._scatter_sizes(output, input)
        device = self._device_of("reduce_scatter_tensor", [output, input])
        gopts = c10d.ReduceScatterOptions()
        gopts.reduceOp = opts.reduceOp

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            out_h = self._extra_host(job, output)
            if job.device is not None:
                job.copy_back = [(output, out_h)]
            return lambda: self._gloo._reduce_scatter_base(out_h, hosts[0], gopts)

        return self._run("reduce_scatter_tensor", device, [output], issue, [input],
                         _checks.descriptor("reduce_scatter_tensor", input), opts=opts)

    _reduce_scatter_base = reduce_scatter_single

    def gather(
        self, output_lists: list[list[torch.Tensor]], inputs: list[torch.Tensor],
        opts: c10d.GatherOptions | None = None,
    ) -> CNCLWork:
        """On ``opts.rootRank``, ``output_lists[0][r]`` gets rank r's ``inputs[0]``; other ranks pass no outputs."""
        opts = opts or c10d.GatherOptions()
        self._single("gather", inputs)
        root = opts.rootRank
        outs = output_lists[0] if output_lists else []
        if self._rank == root and len(outs) != self._size:
            raise ValueError(f"cncl gather: the root needs one output list of {self._size} tensors")
        for o in outs:
            self._same_shape("gather", o, inputs[0])
        device = self._device_of("gather", [*inputs, *outs])
        gopts = c10d.GatherOptions()
        gopts.rootRank = root

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            outs_h = [self._extra_host(job, o) for o in outs]
            if job.device is not None:
                job.copy_back = list(zip(outs, outs_h, strict=True))
            return lambda: self._gloo.gather([outs_h] if outs_h else [], [hosts[0]], gopts)

        return self._run("gather", device, list(outs), issue, inputs, _checks.descriptor("gather", inputs[0], root),
                         opts=opts)

    def scatter(
        self, outputs: list[torch.Tensor], input_lists: list[list[torch.Tensor]],
        opts: c10d.ScatterOptions | None = None,
    ) -> CNCLWork:
        """Rank r's ``outputs[0]`` gets ``input_lists[0][r]`` of ``opts.rootRank``; other ranks pass no inputs."""
        opts = opts or c10d.ScatterOptions()
        self._single("scatter", outputs)
        root = opts.rootRank
        ins = input_lists[0] if input_lists else []
        if self._rank == root and len(ins) != self._size:
            raise ValueError(f"cncl scatter: the root needs one input list of {self._size} tensors")
        for i in ins:
            self._same_shape("scatter", i, outputs[0])
        out = outputs[0]
        device = self._device_of("scatter", [out, *ins])
        gopts = c10d.ScatterOptions()
        gopts.rootRank = root

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            out_h = self._extra_host(job, out)
            if job.device is not None:
                job.copy_back = [(out, out_h)]
            return lambda: self._gloo.scatter([out_h], [hosts] if hosts else [], gopts)

        return self._run("scatter", device, [out], issue, ins, _checks.descriptor("scatter", out, root), opts=opts)

    def all_to_all_single(
        self, output: torch.Tensor, input: torch.Tensor, output_split_sizes: list[int],
        input_split_sizes: list[int], opts: c10d.AllToAllOptions | None = None,
    ) -> CNCLWork:
        """Rank r sends the r-th split of ``input`` (dim 0) to every rank and receives theirs into ``output``."""
        device = self._device_of("all_to_all_single", [output, input])
        out_splits, in_splits = list(output_split_sizes), list(input_split_sizes)

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            out_h = self._extra_host(job, output)
            if job.device is not None:
                job.copy_back = [(output, out_h)]
            return lambda: self._gloo.alltoall_base(out_h, hosts[0], out_splits, in_splits, c10d.AllToAllOptions())

        desc = _checks.all_to_all_descriptor(output, input, out_splits, in_splits, self._size)
        return self._run("all_to_all_single", device, [output], issue, [input], desc, opts=opts)

    alltoall_base = all_to_all_single

    def alltoall(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: c10d.AllToAllOptions | None = None
    ) -> CNCLWork:
        """``all_to_all`` with lists: ``inputs[j]`` goes to rank j, ``outputs[j]`` receives rank j's tensor."""
        if len(outputs) != self._size or len(inputs) != self._size:
            raise ValueError(f"cncl all_to_all: expected {self._size} output and {self._size} input tensors")
        device = self._device_of("all_to_all_single", [*outputs, *inputs])

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            outs_h = [self._extra_host(job, o) for o in outputs]
            if job.device is not None:
                job.copy_back = list(zip(outputs, outs_h, strict=True))
            return lambda: self._gloo.alltoall(outs_h, hosts, c10d.AllToAllOptions())

        return self._run("all_to_all", device, list(outputs), issue, inputs,
                         _checks.all_to_all_list_descriptor(outputs, inputs), opts=opts)

    # ---- coalesced collectives (c10d's _coalescing_manager, FSDP) ------------------------------------------------
    def allreduce_coalesced(
        self, tensors: list[torch.Tensor], opts: c10d.AllreduceCoalescedOptions | None = None
    ) -> CNCLWork:
        """All-reduce of every tensor in ``tensors`` (one job, one transport operation per tensor)."""
        opts = opts or c10d.AllreduceCoalescedOptions()
        device = self._device_of("all_reduce", tensors)
        gopts = c10d.AllreduceOptions()
        gopts.reduceOp = opts.reduceOp

        def issue(job: Job) -> Callable[[], list[dist.Work]]:
            hosts = job.hosts
            return lambda: [self._gloo.allreduce([h], gopts) for h in hosts]

        return self._run("all_reduce", device, list(tensors), issue, tensors,
                         [_checks.descriptor("all_reduce", t) for t in tensors],
                         [(t, i) for i, t in enumerate(tensors)], opts)

    def all_gather_single_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: c10d.AllgatherOptions | None = None
    ) -> CNCLWork:
        """``all_gather_into_tensor`` for each ``(outputs[i], inputs[i])`` pair, as one job."""
        for o, i in zip(outputs, inputs, strict=True):
            self._gather_sizes(o, i)
        device = self._device_of("all_gather_into_tensor", [*outputs, *inputs])

        def issue(job: Job) -> Callable[[], list[dist.Work]]:
            hosts = job.hosts
            outs_h = [self._extra_host(job, o) for o in outputs]
            if job.device is not None:
                job.copy_back = list(zip(outputs, outs_h, strict=True))
            return lambda: [self._gloo._allgather_base(oh, ih, c10d.AllgatherOptions())
                            for oh, ih in zip(outs_h, hosts, strict=True)]

        return self._run("all_gather_into_tensor", device, list(outputs), issue, inputs,
                         [_checks.descriptor("all_gather_into_tensor", i) for i in inputs], opts=opts)

    allgather_into_tensor_coalesced = all_gather_single_coalesced

    def reduce_scatter_single_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: c10d.ReduceScatterOptions | None = None
    ) -> CNCLWork:
        """``reduce_scatter_tensor`` for each ``(outputs[i], inputs[i])`` pair, as one job."""
        opts = opts or c10d.ReduceScatterOptions()
        for o, i in zip(outputs, inputs, strict=True):
            self._scatter_sizes(o, i)
        device = self._device_of("reduce_scatter_tensor", [*outputs, *inputs])
        gopts = c10d.ReduceScatterOptions()
        gopts.reduceOp = opts.reduceOp

        def issue(job: Job) -> Callable[[], list[dist.Work]]:
            hosts = job.hosts
            outs_h = [self._extra_host(job, o) for o in outputs]
            if job.device is not None:
                job.copy_back = list(zip(outputs, outs_h, strict=True))
            return lambda: [self._gloo._reduce_scatter_base(oh, ih, gopts)
                            for oh, ih in zip(outs_h, hosts, strict=True)]

        return self._run("reduce_scatter_tensor", device, list(outputs), issue, inputs,
                         [_checks.descriptor("reduce_scatter_tensor", i) for i in inputs], opts=opts)

    reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

    def _start_coalescing(self, device: torch.device) -> None:
        """Start collecting the works of the following calls (``_coalescing_manager(group, device)``)."""
        with self._submit_lock:
            self._coalesced = []

    def _end_coalescing(self, device: torch.device) -> CNCLWork:
        """One work that completes when every call since :meth:`_start_coalescing` completed (or fails with one)."""
        with self._submit_lock:
            works, self._coalesced = self._coalesced or [], None
        combined = CNCLWork("coalesced", None, [])
        if not works:
            combined._complete()
            return combined

        def settle(_: object) -> None:
            for w in works:
                if w.exception() is not None:
                    combined._fail(w.exception())  # type: ignore[arg-type]
                    return
            combined._complete()

        torch.futures.collect_all([w.get_future() for w in works]).add_done_callback(settle)
        return combined

    def barrier(self, opts: c10d.BarrierOptions | None = None) -> CNCLWork:
        """Every rank waits for the others (Gloo barrier). This group's earlier collectives were issued before it;
        wait on their own works for their results (as with NCCL, a barrier is not a substitute for ``wait()``)."""
        work = CNCLWork("barrier", None, [])
        job = Job(work=work, device=None, issue=lambda: self._gloo.barrier())
        return self._submit(job, _checks.descriptor("barrier", None), [], [], opts)

    def send(self, tensors: list[torch.Tensor], dst: int, tag: int = 0) -> CNCLWork:
        """Send ``tensors[0]`` to rank ``dst`` (the matching ``recv`` must use the same ``tag``)."""
        self._single("send", tensors)
        self._peer("send", dst)
        device = self._device_of("send", tensors)

        def issue(job: Job) -> Callable[[], dist.Work]:
            hosts = job.hosts
            return lambda: self._gloo.send([hosts[0]], dst, tag)

        return self._run("send", device, [], issue, tensors)

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int = 0) -> CNCLWork:
        """Receive into ``tensors[0]`` from rank ``src``."""
        self._single("recv", tensors)
        self._peer("recv", src)
        return self._recv(tensors, tag, src)

    def recv_anysource(self, tensors: list[torch.Tensor], tag: int = 0) -> CNCLWork:
        """Receive into ``tensors[0]`` from whichever rank sends first; ``work._source_rank()`` tells which."""
        self._single("recv", tensors)
        return self._recv(tensors, tag, None)

    def _recv(self, tensors: list[torch.Tensor], tag: int, src: int | None) -> CNCLWork:
        t = tensors[0]
        device = self._device_of("recv", tensors)

        def issue(job: Job) -> Callable[[], dist.Work]:
            h = self._extra_host(job, t)
            if job.device is not None:
                job.copy_back = [(t, h)]

            def start() -> dist.Work:
                w = self._gloo.recv([h], src, tag) if src is not None else self._gloo.recv_anysource([h], tag)
                job.source_rank = w._source_rank if src is None else (lambda: src)
                return w

            return start

        return self._run("recv", device, [t], issue)

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
