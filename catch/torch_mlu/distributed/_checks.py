# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Argument checks of the ``cncl`` backend: device placement (local) and agreement across ranks.

Gloo does not always notice when ranks call a collective with different shapes: a ring all-reduce over buffers of
different lengths can hang until the timeout or fail with an internal length assertion. Before each collective,
``cncl`` exchanges a small descriptor (op, dtype, shape, root) of every rank's call and raises the same
``ValueError`` on every rank when they differ, naming each rank's call (Gloo itself aborts the process on a
length mismatch) -- the check c10d's ``ProcessGroupWrapper`` does only under ``TORCH_DISTRIBUTED_DEBUG=DETAIL``.
The descriptor is sent when the engine starts the collective, over direct connections between the ranks
(``_exchange``: one round trip, no thread hop), so its round trip overlaps the staging copies; the data operation is
issued once every rank's descriptor arrived and agreed -- or, for a synchronous all_reduce that repeats the call all
ranks just agreed on (a training loop), right away, the check being verified after the transfer (see
:class:`CallCheck` for why that is safe).
``CATCH_CNCL_CHECK=0`` turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import torch
import torch.distributed as dist

from torch_mlu.distributed._exchange import DescriptorExchange

OPS = (
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all_single",
    "barrier",
)
_DTYPES = (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16, torch.int32,
    torch.int64, torch.bool,
)
MAX_DIMS = 6
_FIXED = 5  # op, dtype, ndim, numel, root


def check_enabled() -> bool:
    """Whether the cross-rank check runs (env ``CATCH_CNCL_CHECK``, default on)."""
    return os.environ.get("CATCH_CNCL_CHECK", "1") not in ("0", "false", "False", "")


def require_mlu(op: str, tensors: Sequence[torch.Tensor]) -> torch.device:
    """Return the common ``mlu`` device of ``tensors``; raise ``ValueError`` naming the backend for other devices."""
    if not tensors:
        raise ValueError(f"cncl {op}: no tensors given")
    device = None
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"cncl {op}: expected tensors, got {type(t).__name__}")
        if t.device.type != "mlu":
            handler = dist.Backend.default_device_backend_map.get(t.device.type, "no registered backend")
            raise ValueError(
                f"cncl {op}: got a {t.device.type} tensor, but the cncl backend handles only mlu tensors; "
                f"{t.device.type} tensors are handled by the {handler!r} backend: create a group for them with "
                f"torch.distributed.new_group(backend={handler!r}), or initialize with "
                f"init_process_group('mlu:cncl,{t.device.type}:{handler}')"
            )
        if device is None:
            device = t.device
        elif t.device != device:
            raise ValueError(f"cncl {op}: tensors on different devices ({device} and {t.device}) in one call")
    assert device is not None
    return device


#: descriptors by (op, dtype, shape, root): a training loop calls the same few collectives every step
_DESCRIPTORS: dict[tuple[str, torch.dtype | None, tuple[int, ...] | None, int], tuple[int, ...]] = {}
_CACHE_LIMIT = 4096


def descriptor(op: str, tensor: torch.Tensor | None, root: int = -1, with_shape: bool = True) -> tuple[int, ...]:
    """The descriptor of one rank's call: ``(op, dtype, ndim, numel, root, dims...)`` as ints (-1 = not used)."""
    dtype = tensor.dtype if tensor is not None else None
    shape = tuple(tensor.shape) if tensor is not None and with_shape else None
    key = (op, dtype, shape, root)
    cached = _DESCRIPTORS.get(key)
    if cached is not None:
        return cached
    values = [OPS.index(op), -1, -1, -1, root] + [-1] * MAX_DIMS
    if dtype is not None:
        values[1] = _DTYPES.index(dtype) if dtype in _DTYPES else len(_DTYPES)
    if shape is not None:
        values[2] = len(shape)
        numel = 1
        for size in shape:
            numel *= size
        values[3] = numel
        for i, size in enumerate(shape[:MAX_DIMS]):
            values[_FIXED + i] = int(size)
    result = tuple(values)
    if len(_DESCRIPTORS) < _CACHE_LIMIT:
        _DESCRIPTORS[key] = result
    return result


def _explain(v: Sequence[int]) -> str:
    op = OPS[v[0]] if 0 <= v[0] < len(OPS) else f"op#{v[0]}"
    text = op
    if v[1] >= 0:
        dtype = str(_DTYPES[v[1]]).removeprefix("torch.") if v[1] < len(_DTYPES) else "other dtype"
        shape = "" if v[2] < 0 else str(list(v[_FIXED : _FIXED + min(v[2], MAX_DIMS)]))
        text += f" {dtype}{shape}"
    if v[4] >= 0:
        text += f" root={v[4]}"
    return text


def all_to_all_descriptor(output: torch.Tensor, input: torch.Tensor, out_splits: list[int], in_splits: list[int],
                          world: int) -> tuple[int, ...]:
    """Descriptor of an ``all_to_all_single`` call: ``(op, dtype, bytes sent to 0..n-1, bytes expected from 0..n-1)``.

    Empty split lists mean equal splits of dim 0 (c10d's rule); ranks agree when what rank r sends to rank j is
    what rank j expects from rank r.
    """
    def sizes(t: torch.Tensor, splits: list[int]) -> list[int]:
        rows = t.shape[0] if t.dim() else 1
        row_bytes = (t.numel() // rows if rows else 0) * t.element_size()
        counts = splits if splits else [rows // world] * world
        return [int(c) * row_bytes for c in counts]

    dtype = _DTYPES.index(input.dtype) if input.dtype in _DTYPES else len(_DTYPES)
    return (OPS.index("all_to_all_single"), dtype, *sizes(input, in_splits), *sizes(output, out_splits))


def all_to_all_list_descriptor(outputs: Sequence[torch.Tensor], inputs: Sequence[torch.Tensor]) -> tuple[int, ...]:
    """Descriptor of an ``all_to_all`` (lists) call, in the layout of :func:`all_to_all_descriptor`."""
    dtype = _DTYPES.index(inputs[0].dtype) if inputs[0].dtype in _DTYPES else len(_DTYPES)
    return (OPS.index("all_to_all_single"), dtype, *(t.nbytes for t in inputs), *(t.nbytes for t in outputs))


def _all_to_all_mismatch(gathered: list[tuple[int, ...]]) -> str | None:
    world = len(gathered)
    if any(g[:2] != gathered[0][:2] for g in gathered):
        return "; ".join(f"rank {r}: {_explain_short(g)}" for r, g in enumerate(gathered))
    for r, g in enumerate(gathered):
        for j in range(world):
            sent, expected = g[2 + j], gathered[j][2 + world + r]
            if sent != expected:
                return f"rank {r} sends {sent} bytes to rank {j}, which expects {expected} bytes from it"
    return None


def _explain_short(v: Sequence[int]) -> str:
    op = OPS[v[0]] if 0 <= v[0] < len(OPS) else f"op#{v[0]}"
    dtype = str(_DTYPES[v[1]]).removeprefix("torch.") if 0 <= v[1] < len(_DTYPES) else "other dtype"
    return f"{op} {dtype}"


def descriptor_length(world: int) -> int:
    """Number of ints every rank sends per collective: the longest descriptor (all_to_all's) for ``world`` ranks,
    and the speculation flag (see :class:`CallCheck`)."""
    return max(_FIXED + MAX_DIMS, 2 + 2 * world) + 1


class CallCheck:
    """The cross-rank check of one call, over ``exchange``: :meth:`start` sends this rank's descriptor,
    :meth:`finish` receives every rank's and compares.

    Every descriptor is padded to one length (ranks calling different ops are reported, not confused) and carries
    one more value, whether this rank *speculated*: a small all_reduce called on the caller's thread
    (``async_op=False``) whose descriptor equals the one every rank agreed on in the group's previous call issues
    its data operation before :meth:`finish`, so that the check's round trip costs nothing in a loop that repeats
    its collectives. All speculating ranks then issue the same operation (the previous call's), so Gloo never sees
    different lengths; when the check then fails, every rank that did not speculate completes the speculators'
    operation with a dummy one (``complete_speculation``) and all raise the same ``ValueError``; the speculators
    drop their (garbage) results.

    Args:
        exchange: the group's descriptor channel.
        desc: this rank's descriptor (:func:`descriptor`, :func:`all_to_all_descriptor`...).
        rank: this rank, named in the error.
        speculable: the caller can issue the data operation before the check (a single small all_reduce).
        complete_speculation: issues and waits for a dummy all_reduce of the descriptor's numel and dtype.
    """

    def __init__(self, exchange: DescriptorExchange, desc: tuple[int, ...], rank: int, speculable: bool = False,
                 complete_speculation: Callable[[int, torch.dtype], None] | None = None) -> None:
        self._exchange = exchange
        self._padded = desc + (-1,) * (exchange.length - 1 - len(desc))
        self._rank = rank
        self._speculable = speculable and complete_speculation is not None and 0 <= desc[1] < len(_DTYPES)
        self._complete_speculation = complete_speculation
        self._ticket = -1
        #: this call issued its data operation before :meth:`finish` (set by :meth:`start`)
        self.speculative = False

    def start(self, on_caller_thread: bool) -> bool:
        """Send the descriptor (in call order); return whether the caller may issue the data operation now."""
        ex = self._exchange
        self.speculative = (on_caller_thread and self._speculable
                            and ex.agreed_before_next() == self._padded)
        self._ticket = ex.post((*self._padded, int(self.speculative)))
        return self.speculative

    def abandon(self, reason: str) -> None:
        """The call failed after :meth:`start` and will not :meth:`finish` (see ``DescriptorExchange.abandon``)."""
        self._exchange.abandon(reason)

    def finish(self) -> None:
        """Receive and compare every rank's descriptor; raise ``ValueError`` (the same on every rank) on mismatch,
        ``ExchangeError`` when a peer is gone."""
        ex = self._exchange
        gathered = ex.collect(self._ticket, (*self._padded, int(self.speculative)))
        descs = [g[:-1] for g in gathered]
        if self._padded[0] == _A2A:
            ex.record(None)
            problem = _all_to_all_mismatch(descs)
            if problem is None:
                return
        elif all(d == self._padded for d in descs):
            ex.record(self._padded)
            return
        else:
            ex.record(None)
            problem = "; ".join(f"rank {r}: {_explain(d)}" for r, d in enumerate(descs))
        speculated = [d for d, g in zip(descs, gathered, strict=True) if g[-1]]
        if speculated and not self.speculative and self._complete_speculation is not None:
            d = speculated[0]  # every speculator issued this operation (the previous call's, agreed by all)
            self._complete_speculation(d[3], _DTYPES[d[1]])
        raise ValueError(
            f"cncl {OPS[self._padded[0]]}: ranks called collectives with different arguments (seen on rank "
            f"{self._rank}): {problem}"
        )


class CheckList:
    """The checks of a coalesced call (one descriptor per collective in it), run as one; never speculative."""

    def __init__(self, checks: list[CallCheck]) -> None:
        self._checks = checks
        self.speculative = False

    def start(self, on_caller_thread: bool) -> bool:
        """Send every descriptor (see :meth:`CallCheck.start`)."""
        for check in self._checks:
            check.start(False)
        return False

    def finish(self) -> None:
        """Receive and compare every descriptor; the first mismatch raises, after all were received."""
        errors: list[BaseException] = []
        for check in self._checks:
            try:
                check.finish()
            except ValueError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def abandon(self, reason: str) -> None:
        """See :meth:`CallCheck.abandon`."""
        for check in self._checks:
            check.abandon(reason)


_A2A = OPS.index("all_to_all_single")
