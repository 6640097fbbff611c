# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The ``mlu`` Dynamo backend: AOTAutograd to ATen graphs, fusion groups, eager mlu kernels for the rest.

Dynamo hands the backend a Torch-level FX graph with fake example inputs. ``aot_module_simplified``
(torch/_functorch/aot_autograd.py) traces it to functional ATen graphs -- one inference graph, or a forward and a
backward graph when inputs require grad -- with Inductor's decomposition table less the entries
:mod:`torch_mlu.compile.decompositions` leaves out, and Inductor's partition function
(its joint-graph passes, then the min-cut partitioner, or AOTAutograd's default one for graphs with relu's backward:
see :func:`_partition`), and calls the compilers below on each; every graph is partitioned
(:mod:`torch_mlu.compile.partition`) and run as an FX ``GraphModule`` whose fused submodules are fusion groups.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import torch
from torch._functorch.aot_autograd import aot_module_simplified, make_boxed_func
from torch._inductor.custom_graph_pass import CustomGraphPass
from torch.fx import GraphModule

from torch_mlu.compile.attention_pattern import fuse_attention, shield_softmax_over_other_dims
from torch_mlu.compile.decompositions import decompositions
from torch_mlu.compile.kernels import kernels_setting
from torch_mlu.compile.partition import partition_graph
from torch_mlu.compile.report import FuseReport, new_report, publish


def _compile_graph(report: FuseReport, kind: str, gm: GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    report.graphs.append(partition_graph(gm, kind))
    publish()
    return make_boxed_func(gm.forward)


class _SavedForBackwardPass(CustomGraphPass):
    """Inductor's ``joint_custom_post_pass`` for mlu graphs: what the forward saves for the backward. erf's output is
    saved (:func:`~torch_mlu.compile.saved_erf.save_erf`), unless ``CATCH_FUSE_KERNELS`` is ``aten`` (read when the
    pass is made). ``uuid`` hashes that module and the setting, for Inductor's and AOTAutograd's caches
    (``torch._inductor.custom_graph_pass``)."""

    def __init__(self) -> None:
        self.setting = kernels_setting()

    def __call__(self, graph: torch.fx.Graph) -> None:
        from torch_mlu.compile.saved_erf import save_erf

        if self.setting != "aten":
            save_erf(graph)

    def uuid(self) -> bytes:
        from torch._inductor.custom_graph_pass import get_hash_for_files

        from torch_mlu.compile import saved_erf

        return get_hash_for_files((saved_erf.__file__,)) + self.setting.encode()


def _partition(gm: GraphModule, joint_inputs: Sequence[Any], **kwargs: Any) -> tuple[GraphModule, GraphModule]:
    """Inductor's partition function (its joint-graph passes, which form the attention pattern, then the min-cut
    partitioner) with :class:`_SavedForBackwardPass` as the last joint-graph pass, except for joint graphs with relu's
    backward (``aten.threshold_backward``): those get AOTAutograd's default partitioner after the same passes.

    Why: to save memory the min-cut partitioner makes the forward kernel compute relu's ``out <= 0`` and saves it as a
    bool mask, and Inductor's CPU code stores such masks byte by byte (over a third of the digits training step). The
    default partitioner saves the forward's values as eager autograd does. Side by side, 1 thread: digits CNN training
    step 1.48x -> 1.18x eager; the transformer block (GELU, no mask) keeps min-cut, where the default partitioner was
    6 % slower.
    """
    from torch._functorch.partitioners import default_partition
    from torch._inductor import config
    from torch._inductor.compile_fx import partition_fn

    # decomposed by now (le + where), whose nodes keep it as "original_aten" (an OpOverload object of its own: by name)
    relu_backward = "aten.threshold_backward.default"
    if any(relu_backward in (str(node.target), str(node.meta.get("original_aten"))) for node in gm.graph.nodes):
        kwargs["partitioner_fn_override"] = default_partition
    # After Inductor's own joint-graph passes (which form the attention pattern): the backward takes erf's output from
    # the forward.
    with config.patch(joint_custom_post_pass=_SavedForBackwardPass()):
        return partition_fn(gm, joint_inputs, **kwargs)


def _has_symbolic_shapes(example_inputs: Sequence[Any]) -> bool:
    for value in example_inputs:
        if isinstance(value, torch.SymInt):
            return True
        if isinstance(value, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in value.shape):
            return True
    return False


def mlu_backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor], **kwargs: Any) -> Callable[..., Any]:
    """``torch.compile`` backend for mlu models (registered as ``mlu`` and ``catch``).

    ``gm``/``example_inputs``: Dynamo's graph and fake inputs (``torch._dynamo`` ``CompilerFn`` protocol). Returns
    the AOTAutograd-wrapped callable; training works through the backward graph. Attention written out by hand is
    first rewritten into ``F.scaled_dot_product_attention``, a softmax over another dim between two products is
    kept from Inductor's attention patterns (:mod:`torch_mlu.compile.attention_pattern`). Options are not accepted:
    ``torch.compile(..., options=...)`` raises ``TypeError`` naming them. A graph with symbolic shapes (Dynamo's
    automatic dynamic shapes, after an input's shape changed) gets a ``UserWarning``: none of its nodes can be
    fused.
    """
    if kwargs:
        raise TypeError(f"mlu backend: unexpected options {sorted(kwargs)}")
    # Inductor's decompositions call into its lowering module (max-pool: should_fallback_max_pool_with_indices) as
    # an attribute of torch._inductor, which only an import of compile_fx or lowering binds; our partition function
    # imports compile_fx too late for the forward's decompositions in a fresh process.
    import torch._inductor.lowering  # noqa: F401

    if not _has_symbolic_shapes(example_inputs):
        fuse_attention(gm)
        shield_softmax_over_other_dims(gm)
    else:
        warnings.warn(
            "mlu backend: this graph has dynamic shapes (Dynamo recompiles with symbolic sizes once an input's shape "
            "changes), and fusion groups need static ones, so it runs as eager mlu kernels; pass dynamic=False to "
            "torch.compile for one static graph per input shape",
            stacklevel=2,
        )
    report = new_report()
    return aot_module_simplified(
        gm,
        example_inputs,
        decompositions=decompositions(),
        partition_fn=_partition,
        fw_compiler=partial(_compile_graph, report, "forward"),
        bw_compiler=partial(_compile_graph, report, "backward"),
        inference_compiler=partial(_compile_graph, report, "inference"),
    )
