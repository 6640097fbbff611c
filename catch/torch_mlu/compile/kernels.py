# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The post-grad pass of compiled fusion groups: which ATen nodes of a group's graph Inductor gets in another form.

:class:`CatchKernelPass` runs as Inductor's post-grad custom pass
(``torch._inductor.config.post_grad_custom_post_pass``) when a fusion group is compiled. Matrix products,
convolutions and attention are ATen's kernels (Inductor's extern calls) or Inductor's own code.

The pass keeps some ops as extern calls where Inductor's own code for the op is slower (:data:`ATEN_KERNELS`):
it swaps the node for a ``torch_mlu`` op of the same schema, which Inductor cannot look into: max pooling and its
backward (:data:`torch_mlu.inductor.fallbacks.OPS`, where the reasons are), the ops plain ``torch.compile`` on mlu
calls as mlu kernels. And an ``aten.addmm`` whose users are all pointwise becomes ``aten.mm`` + ``aten.add``
(:func:`unfuse_bias_add`). Both apply with every ``CATCH_FUSE_KERNELS`` setting.

``CATCH_FUSE_KERNELS=aten`` leaves the partitioning of training graphs to Inductor alone (no saved erf:
:mod:`torch_mlu.compile.saved_erf`); ``auto`` (the default) and ``catch`` apply it.
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files
from torch.fx import Graph, Node

from torch_mlu import fake_kernels
from torch_mlu.compile.errors import FuseConfigError

KERNELS_ENV = "CATCH_FUSE_KERNELS"

_aten = torch.ops.aten

SETTINGS = ("auto", "catch", "aten")


def kernels_setting() -> str:
    """``CATCH_FUSE_KERNELS``: ``auto`` (also when unset) or ``catch`` (Catch's graph passes) or ``aten`` (Inductor's
    partitioning alone).

    Raises :class:`FuseConfigError` for any other value.
    """
    value = os.environ.get(KERNELS_ENV, "").strip().lower() or "auto"
    if value not in SETTINGS:
        raise FuseConfigError(f"{KERNELS_ENV}={value!r}: expected auto, catch or aten (or unset)")
    return value


def _arguments(node: Node) -> dict[str, Any]:
    """``node``'s arguments by schema name, defaults filled in (the call binding of the op's schema)."""
    assert isinstance(node.target, torch._ops.OpOverload)
    bound: dict[str, Any] = {}
    for index, arg in enumerate(node.target._schema.arguments):
        if index < len(node.args) and not arg.kwarg_only:
            bound[arg.name] = node.args[index]
        elif arg.name in node.kwargs:
            bound[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
    return bound


# ATen op -> the torch_mlu op that compiled code calls instead (same arguments and result): for the forward Catch's
# kernel where it applies and ATen's otherwise (catch/csrc/kernels/pool.cpp), for the backward ATen's kernel.
ATEN_KERNELS = {
    _aten.max_pool2d_with_indices.default: torch.ops.torch_mlu.max_pool2d_with_indices.default,
    _aten.max_pool2d_with_indices_backward.default: torch.ops.torch_mlu.max_pool2d_with_indices_backward.default,
}


def keep_aten_kernels(graph: Graph) -> dict[str, int]:
    """Rewrites the nodes of ``graph`` whose op is in :data:`ATEN_KERNELS` to call the ATen kernel through the
    ``torch_mlu`` op; returns how many nodes now call each one."""
    kept: dict[str, int] = {}
    for node in graph.nodes:
        target = ATEN_KERNELS.get(node.target) if node.op == "call_function" else None  # type: ignore[call-overload]
        if target is not None:
            node.target = target
            kept[str(target)] = kept.get(str(target), 0) + 1
    return kept


def unfuse_bias_add(graph: Graph) -> int:
    """Rewrites each ``aten.addmm(bias, a, b)`` (beta = alpha = 1) whose users are all pointwise ops (through views)
    into ``aten.add(aten.mm(a, b), bias)``, so Inductor computes the bias add inside the consumer's fused loop;
    returns how many it rewrote.

    ATen's CPU ``addmm`` first copies the broadcast bias into its result and then runs SGEMM with beta = 1 (an extra
    pass over each linear's result in the transformer block); Inductor's own pass for this
    (``unfuse_bias_add_to_pointwise`` in ``torch/_inductor/fx_passes/post_grad.py``) is GPU-only. Side by side,
    compiled / eager on the transformer block inference, 2 threads: 0.70 -> 0.65 and 0.74 -> 0.69 in two runs.
    """
    from torch._guards import detect_fake_mode
    from torch._inductor.utils import is_pointwise_use

    rewritten = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not _aten.addmm.default:
            continue
        args = _arguments(node)
        bias, mat1, mat2 = args["self"], args["mat1"], args["mat2"]
        if args["beta"] != 1 or args["alpha"] != 1 or not isinstance(bias, Node) or not node.users:
            continue
        if not all(is_pointwise_use(user) for user in node.users):
            continue
        vals = [n.meta.get("val") for n in (bias, mat1, mat2)]
        fake_mode = detect_fake_mode(vals)
        if fake_mode is None or not all(isinstance(v, torch.Tensor) for v in vals):
            continue
        with graph.inserting_before(node):
            product = graph.call_function(_aten.mm.default, (mat1, mat2))
            total = graph.call_function(_aten.add.Tensor, (product, bias))
        with fake_mode:
            product.meta["val"] = _aten.mm.default(vals[1], vals[2])
            total.meta["val"] = _aten.add.Tensor(product.meta["val"], vals[0])
        node.replace_all_uses_with(total)
        graph.erase_node(node)
        rewritten += 1
    return rewritten


class CatchKernelPass(CustomGraphPass):
    """Inductor post-grad pass running :func:`unfuse_bias_add` and :func:`keep_aten_kernels`; ``used`` accumulates
    what the latter replaced.

    ``uuid`` hashes this file and :mod:`torch_mlu.fake_kernels` (the layouts the ``torch_mlu`` ops return), so
    Inductor's FX graph cache keeps graphs compiled by another version of the pass apart
    (``torch._inductor.custom_graph_pass``).
    """

    def __init__(self, setting: str = "auto") -> None:
        self.setting = setting
        self.used: dict[str, int] = {}

    def __call__(self, graph: Graph) -> None:
        unfuse_bias_add(graph)
        for op, count in keep_aten_kernels(graph).items():
            self.used[op] = self.used.get(op, 0) + count

    def uuid(self) -> bytes:
        return get_hash_for_files((__file__, fake_kernels.__file__)) + self.setting.encode()
