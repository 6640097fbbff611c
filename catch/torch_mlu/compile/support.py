# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Which FX nodes of an ATen graph may join a fusion group (an ``OperatorSupport`` for PyTorch's partitioner).

A node is fusible when it is a functional ATen operator whose tensor inputs and outputs all live on ``mlu``, with
static shapes and a real (non-complex) dtype. Left out, with the reason recorded for the report:

- operators that mutate an argument (in-place / ``out=``): the mlu tensor itself must change, so they run eagerly;
- random operators (``torch.Tag.nondeterministic_seeded``): eagerly, so they draw from the mlu generator in order
  (except attention kernels called with ``dropout_p=0``, tagged only for their dropout: they draw nothing);
- device moves and anything touching a non-mlu tensor (``.cpu()``, ``.to("mlu")``): copies between devices;
- Python scalars out of tensors (``aten._local_scalar_dense``, ``item()``) and symbolic (dynamic) shapes.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

import torch
from torch.fx import Node
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.utils._pytree import tree_flatten


def _tensors(value: Any) -> list[torch.Tensor]:
    leaves, _ = tree_flatten(value)
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]


def _devices_in(value: Any) -> list[torch.device]:
    leaves, _ = tree_flatten(value)
    return [leaf for leaf in leaves if isinstance(leaf, torch.device)]


def _is_static(t: torch.Tensor) -> bool:
    return all(isinstance(s, int) for s in (*t.shape, *t.stride(), t.storage_offset()))


def draws_random(node: Node, target: torch._ops.OpOverload) -> bool:
    """Whether ``node`` draws random numbers: its op is tagged ``nondeterministic_seeded``, unless the op has a
    ``dropout_p`` argument (the fused attention kernels) and it is 0 in this call."""
    if torch.Tag.nondeterministic_seeded not in target.tags:
        return False
    arguments = target._schema.arguments
    names = [a.name for a in arguments]
    if "dropout_p" not in names:
        return True
    index = names.index("dropout_p")
    if "dropout_p" in node.kwargs:
        p = node.kwargs["dropout_p"]
    elif index < len(node.args):
        p = node.args[index]
    else:
        p = arguments[index].default_value
    return not (isinstance(p, (int, float)) and p == 0)


def unsupported_reason(node: Node) -> str | None:
    """Why ``node`` cannot join a fusion group, or ``None`` when it can (rules in the module docstring)."""
    if node.op != "call_function":
        return f"{node.op} node"
    if node.target is operator.getitem:
        return None
    target = node.target
    if not isinstance(target, torch._ops.OpOverload):
        return f"not an ATen operator ({getattr(target, '__name__', target)})"
    if target._schema.is_mutable:
        return "mutates an argument (in-place or out=): runs eagerly on the mlu tensor"
    if draws_random(node, target):
        return "random operator: runs eagerly to draw from the mlu generator"
    if "val" not in node.meta:
        return "no fake-tensor metadata"
    outputs = node.meta["val"]
    out_tensors = _tensors(outputs)
    leaves, _ = tree_flatten(outputs)
    if not out_tensors or len(out_tensors) != len([leaf for leaf in leaves if leaf is not None]):
        return "produces a Python scalar, not a tensor"
    in_tensors = [t for arg in node.all_input_nodes for t in _tensors(arg.meta.get("val"))]
    for t in (*in_tensors, *out_tensors):
        if t.device.type != "mlu":
            return f"touches a {t.device.type} tensor (copy between devices)"
        if t.is_complex():
            return f"complex dtype {t.dtype}"
        if not _is_static(t):
            return "symbolic shape (dynamic shapes are not fused)"
    for dev in _devices_in((node.args, node.kwargs)):
        if dev.type != "mlu":
            return f"creates a tensor on {dev.type}"
    return None


class MluFusionSupport(OperatorSupportBase):
    """``OperatorSupport`` for ``CapabilityBasedPartitioner``: records why each rejected node was rejected."""

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}

    def is_node_supported(self, submodules: Mapping[str, torch.nn.Module], node: Node) -> bool:
        reason = unsupported_reason(node)
        if reason is not None:
            self.reasons[node.name] = reason
        return reason is None
