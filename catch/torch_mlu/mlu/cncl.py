# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.mlu.cncl``: single-process collectives over tensors on several mlu devices (``torch.cuda.nccl``
analogue: ``all_reduce``, ``reduce``, ``broadcast``, ``all_gather``, ``reduce_scatter`` over a list with one tensor
per device). Multi-process collectives are the ``cncl`` c10d backend (``torch.distributed``).

On the emulated devices the data moves with device-to-device copies and the reduction runs on the root device, in
the order of each device's current queue.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["all_gather", "all_reduce", "broadcast", "is_available", "reduce", "reduce_scatter", "version"]

SUM, PROD, MAX, MIN = 0, 1, 2, 3  # torch.cuda.nccl's (ncclRedOp_t) numbering


def is_available(tensors: Sequence[torch.Tensor]) -> bool:
    """True when ``tensors`` are dense, contiguous mlu tensors on distinct devices."""
    devices = set()
    for t in tensors:
        if t.is_sparse or not t.is_contiguous() or t.device.type != "mlu" or t.device in devices:
            return False
        devices.add(t.device)
    return True


def version() -> tuple[int, int, int]:
    """Version of the collective implementation (Catch's emulated CNCL: the torch_mlu release)."""
    from torch_mlu._version import __version__

    parts = __version__.split("+")[0].split(".")
    return (int(parts[0]), int(parts[1]), int(parts[2]))


def _check(tensors: Sequence[torch.Tensor], what: str) -> None:
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise TypeError(f"cncl.{what}: expected a non-empty list of tensors, one per device")
    if not is_available(tensors):
        raise RuntimeError(f"cncl.{what}: tensors must be dense contiguous mlu tensors on distinct devices")
    if len({(t.dtype, t.shape) for t in tensors}) != 1:
        raise RuntimeError(f"cncl.{what}: tensors must have the same dtype and shape")


def _reduce(tensors: Sequence[torch.Tensor], op: int, device: torch.device) -> torch.Tensor:
    acc = tensors[0].to(device, copy=True)
    for t in tensors[1:]:
        x = t.to(device)
        if op == SUM:
            acc.add_(x)
        elif op == PROD:
            acc.mul_(x)
        elif op == MAX:
            torch.maximum(acc, x, out=acc)
        elif op == MIN:
            torch.minimum(acc, x, out=acc)
        else:
            raise ValueError(f"cncl: unknown reduction op {op} (SUM=0, PROD=1, MAX=2, MIN=3)")
    return acc


def all_reduce(inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor] | None = None, op: int = SUM,
               streams: object = None, comms: object = None) -> None:
    """Reduce ``inputs`` elementwise with ``op`` and write the result to every tensor of ``outputs`` (default:
    in place into ``inputs``)."""
    _check(inputs, "all_reduce")
    outs = inputs if outputs is None else outputs
    acc = _reduce(inputs, op, inputs[0].device)
    for o in outs:
        o.copy_(acc)


def reduce(inputs: Sequence[torch.Tensor], output: torch.Tensor | None = None, root: int = 0, op: int = SUM,
           streams: object = None, comms: object = None, *, outputs: Sequence[torch.Tensor] | None = None) -> None:
    """Reduce ``inputs`` into ``output`` (default: ``inputs[root]``)."""
    _check(inputs, "reduce")
    if outputs is not None:
        output = outputs[root]
    target = inputs[root] if output is None else output
    target.copy_(_reduce(inputs, op, inputs[root].device))


def broadcast(inputs: Sequence[torch.Tensor], root: int = 0, streams: object = None, comms: object = None) -> None:
    """Copy ``inputs[root]`` into every other tensor of ``inputs``."""
    _check(inputs, "broadcast")
    for i, t in enumerate(inputs):
        if i != root:
            t.copy_(inputs[root])


def all_gather(inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor], streams: object = None,
               comms: object = None) -> None:
    """Write the concatenation of ``inputs`` (flattened, in list order) into every tensor of ``outputs``."""
    _check(inputs, "all_gather")
    for o in outputs:
        flat = o.view(-1)
        n = inputs[0].numel()
        for i, t in enumerate(inputs):
            flat[i * n:(i + 1) * n].copy_(t.reshape(-1))


def reduce_scatter(inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor], op: int = SUM,
                   streams: object = None, comms: object = None) -> None:
    """Reduce ``inputs``, split the result into ``len(outputs)`` equal chunks and write chunk i to ``outputs[i]``."""
    _check(inputs, "reduce_scatter")
    acc = _reduce(inputs, op, inputs[0].device).reshape(-1)
    n = outputs[0].numel()
    for i, o in enumerate(outputs):
        o.copy_(acc[i * n:(i + 1) * n].view_as(o))
