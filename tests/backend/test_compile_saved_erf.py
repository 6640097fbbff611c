# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The joint-graph pass that has the forward save erf's output for the backward (torch_mlu.compile.saved_erf).

Oracles: eager autograd on CPU for the outputs and gradients; Inductor's own partitioning (CATCH_FUSE_KERNELS=aten)
for what the backward computes without the pass.
"""

from __future__ import annotations

import pytest
import torch
from mlu_helpers import trains_like_cpu
from torch.fx import Graph
from torch.utils.checkpoint import CheckpointPolicy

import torch_mlu.compile as mlu_compile
from torch_mlu.compile import kernels, saved_erf


def _mlp() -> torch.nn.Module:
    # a LayerNorm between the linear and GELU (the GELU of a plain MLP computes the same erf)
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.LayerNorm(64), torch.nn.GELU(),
                               torch.nn.Linear(64, 16))


def _train_once(x: torch.Tensor) -> tuple[dict[str, int], dict[str, int]]:
    """Trains the MLP once compiled (checked against eager CPU) and returns the ops of its forward and of its
    backward fusion group."""
    trains_like_cpu(_mlp, x)
    forward, backward = mlu_compile.last_report().graphs
    (forward_group,) = forward.groups
    (backward_group,) = backward.groups
    return forward_group.ops, backward_group.ops


def test_gelu_backward_takes_erf_from_the_forward_and_trains_like_cpu(monkeypatch):
    monkeypatch.delenv(kernels.KERNELS_ENV, raising=False)
    forward_ops, backward_ops = _train_once(torch.randn(32, 16))
    assert forward_ops.get("aten.erf.default") == 1
    assert "aten.erf.default" not in backward_ops


def test_inductors_own_partitioning_computes_erf_again(monkeypatch):
    # The contrast: with Inductor's partitioning alone (CATCH_FUSE_KERNELS=aten), the partitioner recomputes the erf
    # in the backward, as it does for pointwise ops it deems free.
    monkeypatch.setenv(kernels.KERNELS_ENV, "aten")
    forward_ops, backward_ops = _train_once(torch.randn(32, 16))
    assert forward_ops.get("aten.erf.default") == 1
    assert backward_ops.get("aten.erf.default") == 1


@pytest.mark.parametrize(("numel", "marked"), [(1024, True), (saved_erf.MAX_ERF_BYTES // 4 + 1, False)])
def test_save_erf_marks_erf_nodes_up_to_the_size_limit(numel, marked):
    graph = Graph()
    x = graph.placeholder("x")
    erf = graph.call_function(saved_erf.ERF, (x,))
    other = graph.call_function(torch.ops.aten.exp.default, (x,))
    graph.output((erf, other))
    for node in (erf, other):
        node.meta["val"] = torch.empty(numel, device="meta")
    assert saved_erf.save_erf(graph) == int(marked)
    assert (erf.meta.get("recompute") == CheckpointPolicy.MUST_SAVE) is marked
    assert "recompute" not in other.meta


def test_save_erf_keeps_a_policy_the_user_set():
    # Inside torch.utils.checkpoint regions the partitioner gets the user's policy (e.g. PREFER_RECOMPUTE): kept.
    graph = Graph()
    erf = graph.call_function(saved_erf.ERF, (graph.placeholder("x"),))
    graph.output(erf)
    erf.meta["val"] = torch.empty(16, device="meta")
    erf.meta["recompute"] = CheckpointPolicy.PREFER_RECOMPUTE
    assert saved_erf.save_erf(graph) == 0
    assert erf.meta["recompute"] == CheckpointPolicy.PREFER_RECOMPUTE
