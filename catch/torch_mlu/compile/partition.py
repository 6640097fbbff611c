# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Splits an ATen FX graph into fusion groups with PyTorch's capability-based partitioner.

``CapabilityBasedPartitioner`` (torch/fx/passes/infra/partitioner.py) grows maximal acyclic partitions of the nodes
that :class:`~torch_mlu.compile.support.MluFusionSupport` accepts; ``fuse_by_partitions`` moves each partition into a
submodule ``fused_<n>`` that returns a tuple, and each submodule is replaced by a
:class:`~torch_mlu.compile.group.FusionGroup`. Partitions with a single compute node are not fused (launching one
eager kernel is as fast) and are reported as left out.
"""

from __future__ import annotations

import operator

from torch.fx import GraphModule
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.utils.fuser_utils import fuse_by_partitions

from torch_mlu.compile.group import FusionGroup
from torch_mlu.compile.report import GraphReport, GroupReport, LeftOut, op_counts
from torch_mlu.compile.support import MluFusionSupport

GROUP_PREFIX = "fused_"


def _op_name(target: object) -> str:
    if target is operator.getitem:
        return "getitem"
    return str(target)


def partition_graph(gm: GraphModule, kind: str) -> GraphReport:
    """Fuses ``gm`` in place into fusion groups; returns what was formed and what was left out.

    ``kind`` names the graph in the report (``forward``, ``backward`` or ``inference``).
    """
    compute = [n for n in gm.graph.nodes if n.op == "call_function"]
    report = GraphReport(kind=kind, num_nodes=len(compute))
    support = MluFusionSupport()
    partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=False)
    order = {node: index for index, node in enumerate(gm.graph.nodes)}
    # Number groups in graph order (the partitioner proposes them in reverse topological order).
    partitions = sorted(partitioner.propose_partitions(), key=lambda p: min(order[n] for n in p.nodes))
    grouped = {node for p in partitions for node in p.nodes}
    for node in compute:
        if node in grouped or node.target is operator.getitem:
            continue
        reason = support.reasons.get(node.name, "single-op group: runs as one eager mlu kernel")
        report.left_out.append(LeftOut(node=node.name, op=_op_name(node.target), reason=reason))
    if not partitions:
        return report
    ops_per_group = [[_op_name(n.target) for n in p.nodes if n.target is not operator.getitem] for p in partitions]
    fuse_by_partitions(gm, [dict.fromkeys(p.nodes) for p in partitions], prefix=GROUP_PREFIX,
                       always_return_tuple=True)
    for index, ops in enumerate(ops_per_group):
        name = f"{GROUP_PREFIX}{index}"
        sub = getattr(gm, name)
        group_report = GroupReport(name=f"{kind}.{name}", num_nodes=len(ops), ops=op_counts(ops))
        setattr(gm, name, FusionGroup(sub, group_report))
        report.groups.append(group_report)
    gm.recompile()
    return report
