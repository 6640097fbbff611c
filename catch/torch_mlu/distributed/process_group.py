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
returns a :class:`~torch_mlu.distributed._work.CNCLWork` at once. What they stand on -- the group's setup, job
submission, life cycle and argument checks -- is :class:`~torch_mlu.distributed._group_base.CNCLGroupBase`.

C++ callers reach only the methods the 2.13 trampoline forwards (allgather, all_gather_single_coalesced, allreduce,
allreduce_coalesced, all_to_all_single, barrier, broadcast, reduce_scatter, reduce_scatter_single_coalesced, send,
recv); reduce, gather and scatter called from C++ (no caller in DDP) land on the registered mlu backend object, the
Gloo transport, which refuses mlu tensors with its own error.
"""

# The stubs of torch 2.13 type ProcessGroup's methods by their user-facing overloads; c10d (distributed_c10d.py and
# the C++ trampoline) calls a Python process group with the (tensors, opts) signatures implemented here.
# mypy: disable-error-code="override, assignment"

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.distributed as dist
from torch._C import _distributed_c10d as c10d

from torch_mlu.distributed import _checks
from torch_mlu.distributed._engine import Job
from torch_mlu.distributed._group_base import CNCLGroupBase, CNCLOptions, Descriptor
from torch_mlu.distributed._work import CNCLWork

__all__ = ["PIPELINE_CHUNK_BYTES", "CNCLOptions", "ProcessGroupCNCL"]

#: all_reduce of a contiguous mlu tensor of at least twice this many bytes is staged and reduced in chunks of this
#: size, the copies of one chunk overlapping the transfer of the others (as NCCL pipelines its own chunks)
PIPELINE_CHUNK_BYTES = 4 << 20


def _nothing() -> None:
    """The ``issue`` of a pipelined job (its chunks are issued by ``issue_chunk``)."""

class ProcessGroupCNCL(CNCLGroupBase):
    """The ``cncl`` backend: collectives on ``mlu`` tensors over c10d's Gloo transport.

    Args:
        store: the c10d store of this group (already prefixed by c10d for the group and device).
        rank: this process's rank in the group, ``0 <= rank < size``.
        size: number of ranks.
        timeout: the process group timeout: a collective whose peers do not answer within it fails with
            ``torch.distributed.DistBackendError`` (a peer that exits fails it at once, when its connection closes).
        options: :class:`CNCLOptions` (default: ``CNCLOptions()``).
    """

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
