# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pass over Dynamo's graph: a linear layer followed by GELU becomes one ``torch.ops.torch_mlu.linear_gelu``.

``F.gelu(F.linear(x, w, b))`` (``nn.Linear`` then ``nn.GELU()``, the MLP of most transformers) compiles to a matrix
product and then a pass of Inductor's C++ over its result: the bias add, erf (ATen's vectorized formula: a division
and Sleef's exp per vector) and, in training graphs, also GELU's derivative for the backward, with a second exp.
``torch_mlu::linear_gelu(input, weight, bias, derivative)`` (``catch/csrc/kernels/gemm.cpp``) computes
GELU on each register tile of the product as it leaves the registers, and the derivative from the same exp.
On the transformer block of ``benchmarks/bench_compile.py`` (512 x 64 -> 256, 2 threads) the GELU adds less to the
product, with or without the derivative, than a separate pass takes, and compiled inference and training step each
run about 1 % faster.

Matched: ``gelu(linear(x, w, b))`` with ``approximate="none"``, the linear used only by the GELU, and x, w, b
(b may be absent) float32 ``mlu`` tensors with w 2-d and b 1-d, and float32 results (not under autocast). The op
returns ``(gelu(x wᵀ + b), gelu'(x wᵀ + b))``; the derivative is computed only where the linear's result requires
grad (``derivative=True``), and the op's backward (a C++ autograd function, so calls inside compiled code cost no
Python) is the linear's, with the output gradient multiplied by it. ``CATCH_FUSE_KERNELS=aten`` leaves the graph as
written.
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F
from torch.fx import GraphModule, Node

import torch_mlu  # noqa: F401  (loads torch_mlu._C, which defines the op)

# the Dynamo-graph helpers of the attention pass: a node's example value, a call argument by position or name
from torch_mlu.compile.attention_pattern import _arg, _example

LINEAR_GELU = torch.ops.torch_mlu.linear_gelu.default

_LINEARS = {torch._C._nn.linear, F.linear}
_GELUS = {torch._C._nn.gelu, F.gelu}


def _float32_on_mlu(value: torch.Tensor | None, dim: int | None = None) -> bool:
    if value is None or value.dtype != torch.float32 or value.device.type != "mlu":
        return False
    return dim is None or value.dim() == dim


def _linear_of(gelu: Node) -> tuple[Node, Node, Node, Node | None] | None:
    """(the linear node, x, w, b or ``None``) when ``gelu`` is ``gelu(linear(x, w, b))`` as the module docstring
    describes it."""
    if gelu.op != "call_function" or gelu.target not in _GELUS or _arg(gelu, 1, "approximate", "none") != "none":
        return None
    linear = _arg(gelu, 0, "input")
    if not isinstance(linear, Node) or linear.op != "call_function" or linear.target not in _LINEARS:
        return None
    if len(linear.users) != 1:
        return None
    x, w, b = _arg(linear, 0, "input"), _arg(linear, 1, "weight"), _arg(linear, 2, "bias")
    if not isinstance(x, Node) or not isinstance(w, Node) or not (b is None or isinstance(b, Node)):
        return None
    xv = _example(x)
    if not _float32_on_mlu(xv) or xv is None or xv.dim() < 1 or not _float32_on_mlu(_example(w), 2):
        return None
    if b is not None and not _float32_on_mlu(_example(b), 1):
        return None
    if not _float32_on_mlu(_example(linear)) or not _float32_on_mlu(_example(gelu)):  # e.g. autocast
        return None
    return linear, x, w, b


def fuse_linear_gelu(gm: GraphModule) -> int:
    """Rewrites each ``gelu(linear(x, w, b))`` of Dynamo's graph ``gm`` (module docstring) into
    ``torch_mlu.linear_gelu(x, w, b, derivative)[0]`` in place, ``derivative`` true where the linear's example
    result requires grad; returns how many it rewrote (``gm`` is recompiled when any)."""
    rewritten = 0
    for node in list(gm.graph.nodes):
        match = _linear_of(node)
        if match is None:
            continue
        linear, x, w, b = match
        result = _example(linear)
        derivative = bool(result is not None and result.requires_grad)
        with gm.graph.inserting_before(node):
            fused = gm.graph.call_function(LINEAR_GELU, (x, w, b, derivative))
            out = gm.graph.call_function(operator.getitem, (fused, 0))
        out.meta = {**node.meta}
        node.replace_all_uses_with(out)
        gm.graph.erase_node(node)
        gm.graph.erase_node(linear)
        rewritten += 1
    if rewritten:
        gm.graph.lint()
        gm.recompile()
    return rewritten
