# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Joint-graph pass: the forward saves erf's output for the backward, instead of the backward computing it again.

Inductor's min-cut partitioner (``torch._functorch.partitioners.min_cut_rematerialization_partition``) treats
pointwise ops as free to recompute, so a GELU's backward (``erf(x / sqrt 2)`` in its derivative) recomputes the erf
that the forward already computed. On the CPU erf is not free: ATen's vectorized erf (what Inductor's C++ calls)
takes a division and a Sleef exp per vector, over the 512 x 256 hidden values of the compiled transformer block of
``benchmarks/bench_compile.py``.

:func:`save_erf` marks each ``aten.erf`` node of the joint graph with the partitioner's ``MUST_SAVE`` checkpoint
policy (``torch.utils.checkpoint.CheckpointPolicy``, the hook selective activation checkpointing uses), so the
partitioner saves its output where the backward needs it. That costs one activation of the erf's size, which eager
autograd does not keep (``GeluBackward`` computes erf again): the pass applies only up to :data:`MAX_ERF_BYTES` per
erf, and not with ``CATCH_FUSE_KERNELS=aten``, which stays Inductor's own partitioning.
"""

from __future__ import annotations

import torch
from torch.fx import Graph
from torch.utils.checkpoint import CheckpointPolicy

ERF = torch.ops.aten.erf.default
# Largest erf output saved per node: beyond it the activation memory outweighs the recompute.
MAX_ERF_BYTES = 16 << 20


def save_erf(graph: Graph) -> int:
    """Marks each ``aten.erf`` node of the joint graph ``graph`` whose output (its fake value) takes at most
    :data:`MAX_ERF_BYTES` as ``MUST_SAVE``; returns how many it marked. A node that already has a policy (inside the
    user's activation checkpointing, ``torch.utils.checkpoint``) keeps it, and a node without a fake value of static
    size is left to the partitioner."""
    marked = 0
    for node in graph.nodes:
        if node.op != "call_function" or node.target is not ERF or "recompute" in node.meta:
            continue
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or not all(isinstance(size, int) for size in val.shape):
            continue
        if val.numel() * val.element_size() > MAX_ERF_BYTES:
            continue
        node.meta["recompute"] = CheckpointPolicy.MUST_SAVE
        marked += 1
    return marked
