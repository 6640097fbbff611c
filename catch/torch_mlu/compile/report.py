# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The fusion report: groups formed per compiled graph, their ops, and the nodes left out with the reason.

``torch_mlu.compile.last_report()`` returns the report of the latest ``torch.compile`` graph (its forward,
backward or inference ATen graphs); ``CATCH_FUSE_REPORT=<path>`` also writes every report of the process to
``<path>`` as JSON after each graph is compiled.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

REPORT_ENV = "CATCH_FUSE_REPORT"


@dataclass
class GroupReport:
    """One fusion group: its submodule name, node count and ATen op counts (``{"aten.mm.default": 2}``).

    ``copied_outputs`` counts output storages that compiled runs had to copy into mlu memory (normally 0: outputs
    are written to device memory directly and adopted). ``kernels`` counts the nodes that compiled runs hand to
    ``torch_mlu`` ops instead of Inductor's code (:mod:`torch_mlu.compile.kernels`), filled in when the group is first
    compiled, at its first call in compiled mode.
    """

    name: str
    num_nodes: int
    ops: dict[str, int]
    mismatches: list[str] = field(default_factory=list)
    copied_outputs: int = 0
    kernels: dict[str, int] = field(default_factory=dict)


@dataclass
class LeftOut:
    """An ATen node that runs eagerly on mlu, and why."""

    node: str
    op: str
    reason: str


@dataclass
class GraphReport:
    """One ATen graph (``kind``: forward, backward or inference) after partitioning."""

    kind: str
    num_nodes: int
    groups: list[GroupReport] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)


@dataclass
class FuseReport:
    """All ATen graphs that AOTAutograd produced for one Dynamo graph."""

    graph_id: int
    graphs: list[GraphReport] = field(default_factory=list)

    @property
    def groups(self) -> list[GroupReport]:
        """Fusion groups of every graph, in compile order."""
        return [g for graph in self.graphs for g in graph.groups]

    @property
    def left_out(self) -> list[LeftOut]:
        """Nodes left out of every graph, in compile order."""
        return [n for graph in self.graphs for n in graph.left_out]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    def format(self) -> str:
        """Human-readable multi-line summary (one line per group and per node left out)."""
        lines = [f"graph {self.graph_id}:"]
        for graph in self.graphs:
            lines.append(f"  {graph.kind}: {graph.num_nodes} nodes, {len(graph.groups)} fusion group(s)")
            for group in graph.groups:
                ops = ", ".join(f"{op} x{n}" for op, n in sorted(group.ops.items()))
                lines.append(f"    {group.name}: {group.num_nodes} nodes: {ops}")
                if group.kernels:
                    kernels = ", ".join(f"{op} x{n}" for op, n in sorted(group.kernels.items()))
                    lines.append(f"      compiled with torch_mlu ops: {kernels}")
            for node in graph.left_out:
                lines.append(f"    left out {node.node} ({node.op}): {node.reason}")
        return "\n".join(lines)


def op_counts(names: list[str]) -> dict[str, int]:
    """Counts of op names, most frequent first."""
    return dict(Counter(names).most_common())


_reports: list[FuseReport] = []


def new_report() -> FuseReport:
    """Starts the report of a new Dynamo graph and makes it the latest."""
    report = FuseReport(graph_id=len(_reports))
    _reports.append(report)
    return report


def last_report() -> FuseReport | None:
    """The report of the latest graph compiled by the mlu backend, or ``None`` before the first compile."""
    return _reports[-1] if _reports else None


def all_reports() -> list[FuseReport]:
    """Every report of this process, oldest first."""
    return list(_reports)


def publish() -> None:
    """Writes all reports to ``$CATCH_FUSE_REPORT`` as a JSON list, when that variable is set."""
    path = os.environ.get(REPORT_ENV)
    if not path:
        return
    with open(path, "w", encoding="utf-8") as fh:
        json.dump([r.to_dict() for r in _reports], fh, indent=1)
        fh.write("\n")
