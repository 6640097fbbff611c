# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pass over Dynamo's graph: attention written out by hand becomes ``F.scaled_dot_product_attention``.

Inductor turns ``softmax(q @ kᵀ * scale) @ v`` into its fused attention op with pattern passes over the ATen graph
(``torch/_inductor/fx_passes/fuse_attention.py``). Those patterns are traced on contiguous example inputs, and heads
split as ``x.view(b, t, heads, d).transpose(1, 2)`` reach the matrix products through extra ``clone`` nodes
whenever the batch has more than one sample: in training graphs the patterns then miss, and the attention runs as
two batched products and a softmax, forward and backward. On the transformer block of
``benchmarks/bench_compile.py`` (4 x 256 tokens, 2 threads) the compiled training step takes about a fifth less
time written with ``scaled_dot_product_attention`` than written out.

This pass matches the same computation one level up, on the Torch functions of Dynamo's graph, before AOTAutograd
traces it, where views and clones do not appear yet:

  p = softmax(matmul(q, kᵀ) [* c | c * · | / c], dim=-1);  out = matmul(p, v)

with ``kᵀ`` as ``k.transpose(-2, -1)`` (any spelling of the last two dims) or ``k.mT``, ``c`` a positive Python
number, each intermediate used only by the next step, and q (B, H, L, D), k (B, H, S, D), v (B, H, S, Dv) float32
mlu tensors. It becomes ``F.scaled_dot_product_attention(q, k, v, scale=c)`` (``1 / c`` for a division), which the
mlu device runs as CPU's flash kernels, forward and backward, in compiled groups too. Dropout or a mask between the
steps, a softmax that is also returned, and broadcast batch dimensions are left as written. A softmax over another dim
between two products is shielded from Inductor's patterns, which would fuse it as if it were over the last
(:func:`shield_softmax_over_other_dims`).
"""

from __future__ import annotations

import operator
from numbers import Real
from typing import Any

import torch
import torch.nn.functional as F
from torch.fx import GraphModule, Node

_MATMULS = {operator.matmul, torch.matmul}
_SOFTMAXES = {torch.softmax, F.softmax, torch.Tensor.softmax}
_MULS = {operator.mul, torch.mul}
_DIVS = {operator.truediv, torch.div}


def _is_call(node: Any, functions: set[Any], method: str) -> bool:
    if not isinstance(node, Node):
        return False
    if node.op == "call_function":
        return node.target in functions
    return node.op == "call_method" and node.target == method


def _example(node: Any) -> torch.Tensor | None:
    value = node.meta.get("example_value") if isinstance(node, Node) else None
    return value if isinstance(value, torch.Tensor) else None


def _arg(node: Node, index: int, name: str, default: Any = None) -> Any:
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def _softmax_dtype(node: Node) -> Any:
    """The ``dtype`` argument of softmax node ``node``: third for ``torch.softmax`` and the method (after ``dim``),
    fourth for ``F.softmax`` (after ``_stacklevel``)."""
    return _arg(node, 3 if node.target is F.softmax else 2, "dtype")


def _positive_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and value > 0


def _transposed_key(node: Any) -> Node | None:
    """k when ``node`` is k with its last two dims swapped (``transpose(-2, -1)`` in any spelling, or ``.mT``)."""
    if not isinstance(node, Node):
        return None
    key = node.args[0] if node.args else None
    value = _example(key)
    if value is None or value.dim() != 4:
        return None
    if node.op == "call_function" and node.target is getattr and node.args[1:] == ("mT",):
        return key if isinstance(key, Node) else None
    if not _is_call(node, {torch.transpose}, "transpose") or len(node.args) != 3:
        return None
    dims = {d % 4 for d in node.args[1:] if isinstance(d, int)}
    return key if dims == {2, 3} and isinstance(key, Node) else None


def _scaled_scores(node: Any) -> tuple[Node, float] | None:
    """(the q @ kᵀ node, scale) for ``node`` = that product times, or divided by, a positive number, or the product
    itself (scale 1)."""
    if _is_call(node, _MATMULS, "matmul"):
        return node, 1.0
    if _is_call(node, _MULS, "mul") and len(node.args) == 2:
        a, b = node.args
        product, factor = (a, b) if isinstance(a, Node) else (b, a)
    elif _is_call(node, _DIVS, "div") and len(node.args) == 2 and not node.kwargs:
        product, divisor = node.args
        factor = 1.0 / divisor if _positive_number(divisor) else None
    else:
        return None
    if not _positive_number(factor):
        return None
    if not _is_call(product, _MATMULS, "matmul") or len(product.users) != 1:
        return None
    return product, float(factor)


def _attention_inputs(out: Node) -> tuple[Node, Node, Node, float, list[Node]] | None:
    """(q, k, v, scale, the nodes the match replaces) when ``out`` is ``softmax(scaled q @ kᵀ) @ v`` as the
    module docstring describes it."""
    if not _is_call(out, _MATMULS, "matmul") or len(out.args) != 2 or out.kwargs:
        return None
    probs, v = out.args
    if not _is_call(probs, _SOFTMAXES, "softmax") or len(probs.users) != 1 or not isinstance(v, Node):
        return None
    if _arg(probs, 1, "dim") not in (-1, 3) or _softmax_dtype(probs) is not None:
        return None
    scores = probs.args[0] if probs.args else None
    found = _scaled_scores(scores)
    if found is None or len(scores.users) != 1:
        return None
    product, scale = found
    q, key_t = product.args if len(product.args) == 2 else (None, None)
    k = _transposed_key(key_t)
    if k is None or not isinstance(q, Node):
        return None
    values = [_example(n) for n in (q, k, v)]
    if any(t is None for t in values):
        return None
    qv, kv, vv = values
    assert qv is not None and kv is not None and vv is not None
    if any(t.dim() != 4 or t.dtype != torch.float32 or t.device.type != "mlu" for t in (qv, kv, vv)):
        return None
    if kv.shape[:2] != qv.shape[:2] or vv.shape[:3] != kv.shape[:3] or kv.shape[3] != qv.shape[3]:
        return None
    if any(_example(n) is None or _example(n).dtype != torch.float32 for n in (product, out)):  # e.g. autocast
        return None
    replaced = [out, probs] + ([scores] if scores is not product else []) + [product]
    return q, k, v, scale, replaced


def _softmax_dim(node: Node) -> int | None:
    """The dim, made non-negative, of softmax node ``node`` over a tensor of known rank; else ``None``."""
    value = _example(node)
    dim = _arg(node, 1, "dim")
    if value is None or not isinstance(dim, int) or not -value.dim() <= dim < value.dim():
        return None
    return dim % value.dim()


def shield_softmax_over_other_dims(gm: GraphModule) -> int:
    """Rewrites each ``softmax(s, dim=d)`` of Dynamo's graph ``gm`` over a dim ``d`` other than the last, whose input
    is a matrix product (scaled or not) and whose result goes into one, as ``softmax(s.transpose(d, -1),
    dim=-1).transpose(d, -1)`` (the same values); returns how many (``gm`` is recompiled when any).

    Why: Inductor's attention patterns (``torch/_inductor/fx_passes/fuse_attention.py``, torch 2.13) do not check
    softmax's dim. ``softmax(q @ kᵀ * c, dim=-2) @ v`` compiled with ``backend="inductor"`` on CPU, or with ``mlu``,
    became flash attention, which normalizes over the last dim: outputs off by up to 1.16 against eager, silently.
    The transposes put views between the product and the softmax, where no pattern matches.
    """
    rewritten = 0
    for node in list(gm.graph.nodes):
        if not _is_call(node, _SOFTMAXES, "softmax") or not node.args:
            continue
        dim, value = _softmax_dim(node), _example(node)
        if dim is None or value is None or dim == value.dim() - 1:
            continue
        if _scaled_scores(node.args[0]) is None:  # a product, or a product times a number
            continue
        if not any(_is_call(user, _MATMULS, "matmul") for user in node.users):
            continue
        dtype = _softmax_dtype(node)
        with gm.graph.inserting_before(node):
            moved = gm.graph.call_method("transpose", (node.args[0], dim, -1))
            normalized = gm.graph.call_function(torch.softmax, (moved, -1), {"dtype": dtype})
            back = gm.graph.call_method("transpose", (normalized, dim, -1))
        back.meta = {**node.meta}
        node.replace_all_uses_with(back)
        gm.graph.erase_node(node)
        rewritten += 1
    if rewritten:
        gm.graph.lint()
        gm.recompile()
    return rewritten


def fuse_attention(gm: GraphModule) -> int:
    """Rewrites each hand-written attention of Dynamo's graph ``gm`` (module docstring) into
    ``F.scaled_dot_product_attention`` in place; returns how many it rewrote (``gm`` is recompiled when any)."""
    rewritten = 0
    for node in list(gm.graph.nodes):
        match = _attention_inputs(node)
        if match is None:
            continue
        q, k, v, scale, replaced = match
        with gm.graph.inserting_before(node):
            fused = gm.graph.call_function(F.scaled_dot_product_attention, (q, k, v), {"scale": scale})
        fused.meta = {**node.meta}
        node.replace_all_uses_with(fused)
        key_t = replaced[-1].args[1]
        for old in replaced:
            gm.graph.erase_node(old)
        if isinstance(key_t, Node) and not key_t.users:
            gm.graph.erase_node(key_t)
        rewritten += 1
    if rewritten:
        gm.graph.lint()
        gm.recompile()
    return rewritten
