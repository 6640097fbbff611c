"""Argument checks of the ``cncl`` backend: device placement (local) and agreement across ranks.

Gloo does not always notice when ranks call a collective with different shapes: a ring all-reduce over buffers of
different lengths can hang until the timeout or fail with an internal length assertion. Before each collective,
``cncl`` all-gathers a small descriptor (op, dtype, shape, root) of every rank's call on the host and raises the same
``ValueError`` on every rank when they differ, naming each rank's call (Gloo itself aborts the process on a
length mismatch) -- the check c10d's ``ProcessGroupWrapper``
does only under ``TORCH_DISTRIBUTED_DEBUG=DETAIL``. The exchange starts on the caller's thread, on a Gloo group of
its own, so its round trip overlaps the staging; the data operation is issued once it agreed.
``CATCH_CNCL_CHECK=0`` turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist

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


def descriptor(op: str, tensor: torch.Tensor | None, root: int = -1, with_shape: bool = True) -> torch.Tensor:
    """The int64 CPU descriptor of one rank's call: ``[op, dtype, ndim, numel, root, dims...]`` (-1 = not used)."""
    values = [OPS.index(op), -1, -1, -1, root] + [-1] * MAX_DIMS
    if tensor is not None:
        values[1] = _DTYPES.index(tensor.dtype) if tensor.dtype in _DTYPES else len(_DTYPES)
        if with_shape:
            values[2] = tensor.dim()
            values[3] = tensor.numel()
            for i, size in enumerate(tensor.shape[:MAX_DIMS]):
                values[_FIXED + i] = int(size)
    return torch.tensor(values, dtype=torch.int64)


def _explain(d: torch.Tensor) -> str:
    v = d.tolist()
    op = OPS[v[0]] if 0 <= v[0] < len(OPS) else f"op#{v[0]}"
    text = op
    if v[1] >= 0:
        dtype = str(_DTYPES[v[1]]).removeprefix("torch.") if v[1] < len(_DTYPES) else "other dtype"
        shape = "" if v[2] < 0 else str(v[_FIXED : _FIXED + min(v[2], MAX_DIMS)])
        text += f" {dtype}{shape}"
    if v[4] >= 0:
        text += f" root={v[4]}"
    return text


def all_to_all_descriptor(output: torch.Tensor, input: torch.Tensor, out_splits: list[int], in_splits: list[int],
                          world: int) -> torch.Tensor:
    """Descriptor of an ``all_to_all_single`` call: ``[op, dtype, bytes sent to 0..n-1, bytes expected from 0..n-1]``.

    Empty split lists mean equal splits of dim 0 (c10d's rule); ranks agree when what rank r sends to rank j is
    what rank j expects from rank r.
    """
    def sizes(t: torch.Tensor, splits: list[int]) -> list[int]:
        rows = t.shape[0] if t.dim() else 1
        row_bytes = (t.numel() // rows if rows else 0) * t.element_size()
        counts = splits if splits else [rows // world] * world
        return [int(c) * row_bytes for c in counts]

    dtype = _DTYPES.index(input.dtype) if input.dtype in _DTYPES else len(_DTYPES)
    return torch.tensor(
        [OPS.index("all_to_all_single"), dtype, *sizes(input, in_splits), *sizes(output, out_splits)],
        dtype=torch.int64,
    )


def all_to_all_list_descriptor(outputs: Sequence[torch.Tensor], inputs: Sequence[torch.Tensor]) -> torch.Tensor:
    """Descriptor of an ``all_to_all`` (lists) call, in the layout of :func:`all_to_all_descriptor`."""
    dtype = _DTYPES.index(inputs[0].dtype) if inputs[0].dtype in _DTYPES else len(_DTYPES)
    return torch.tensor(
        [OPS.index("all_to_all_single"), dtype, *(t.nbytes for t in inputs), *(t.nbytes for t in outputs)],
        dtype=torch.int64,
    )


def _all_to_all_mismatch(gathered: list[torch.Tensor]) -> str | None:
    world = len(gathered)
    if any(not torch.equal(g[:2], gathered[0][:2]) for g in gathered):
        return "; ".join(f"rank {r}: {_explain_short(g)}" for r, g in enumerate(gathered))
    for r, g in enumerate(gathered):
        for j in range(world):
            sent, expected = int(g[2 + j]), int(gathered[j][2 + world + r])
            if sent != expected:
                return f"rank {r} sends {sent} bytes to rank {j}, which expects {expected} bytes from it"
    return None


def _explain_short(d: torch.Tensor) -> str:
    v = d.tolist()
    op = OPS[v[0]] if 0 <= v[0] < len(OPS) else f"op#{v[0]}"
    dtype = str(_DTYPES[v[1]]).removeprefix("torch.") if 0 <= v[1] < len(_DTYPES) else "other dtype"
    return f"{op} {dtype}"


def start_check(gloo: Any, desc: torch.Tensor, rank: int) -> Callable[[], None]:
    """Start all-gathering every rank's descriptor over ``gloo`` (a ``ProcessGroupGloo``); return the step that
    waits and compares.

    The step raises the same ``ValueError`` on every rank when the calls disagree. ``gloo`` must be used for checks
    only and always under the caller's submit lock, so that its operations are issued in call order on every rank.
    Every descriptor is padded to one length, so ranks calling different ops are reported, not aborted.
    """
    size = gloo.size()
    # One length for every op (Gloo aborts the process on a length mismatch, even in the check).
    desc = torch.cat([desc, desc.new_full((_FIXED + MAX_DIMS + 2 * size - desc.numel(),), -1)])
    gathered = [torch.empty_like(desc) for _ in range(size)]
    work = gloo.allgather([gathered], [desc])
    a2a = int(desc[0]) == OPS.index("all_to_all_single")

    def finish() -> None:
        work.wait()
        if a2a:
            problem = _all_to_all_mismatch(gathered)
        elif all(torch.equal(g, gathered[0]) for g in gathered[1:]):
            problem = None
        else:
            problem = "; ".join(f"rank {r}: {_explain(g)}" for r, g in enumerate(gathered))
        if problem is not None:
            op = OPS[int(desc[0])]
            raise ValueError(
                f"cncl {op}: ranks called collectives with different arguments (seen on rank {rank}): {problem}"
            )

    return finish
