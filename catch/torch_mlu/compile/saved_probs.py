# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Joint-graph pass: attention keeps its probabilities P for the backward, as eager autograd keeps softmax's output.

ATen's flash attention saves only the log-sum-exp of each score row, so its backward forms the scores Q Kᵀ again
and takes their exp before its four products: at short sequences that is a fifth of the backward's products and
all of its exp. When a training graph's attention runs on Catch's register-tiled kernels, this pass rewrites the
flash forward / backward pair of the joint graph (after Inductor's joint-graph passes have formed it from the
unfused ``softmax(q @ kᵀ) @ v``, before the partitioner splits forward from backward) into

  torch_mlu::attention_with_probs(q, k, v, *, scale)  -> (out, logsumexp, probs)
  torch_mlu::attention_backward_with_probs(grad_out, q, k, v, out, probs, *, scale) -> (grad_q, grad_k, grad_v)

``probs`` is ``softmax(scale * q @ kᵀ)``, (B, H, L, S) in rows padded to whole 16-float vectors; the partitioner
saves it for the backward (AOTAutograd never recomputes an op outside its allowlist). The forward streams each
block of P out from where it formed the scores anyway. In the compiled transformer block of
``benchmarks/bench_compile.py`` (1 x 4 heads x 512 x 16, 2 threads) the backward graph saves about twice the time the
forward graph adds.

P takes B * H * L * S floats, what the unfused attention's softmax saves in eager mode, against the flash kernels'
B * H * L: the pass applies only up to :data:`MAX_PROBS_BYTES` (16 MiB) per attention call, only where the tiled
kernels run (float32, 4-d, head and value dims multiples of 16, no dropout, causal mask or ``attn_mask``), and not
with ``CATCH_FUSE_KERNELS=aten``. Elsewhere the flash ops stay, and fusion groups pick their kernels as before
(:mod:`torch_mlu.compile.kernels`).
"""

from __future__ import annotations

import operator

import torch
from torch.fx import Graph, Node

from torch_mlu.compile.kernels import FLASH, FLASH_BACKWARD, _arguments, replacement
from torch_mlu.fake_kernels import ATTENTION_LANES, padded_to_lanes

ATTENTION_WITH_PROBS = torch.ops.torch_mlu.attention_with_probs.default
ATTENTION_BACKWARD_WITH_PROBS = torch.ops.torch_mlu.attention_backward_with_probs.default

# Largest P kept per attention call. Beyond it the memory of P (eager's cost too) outweighs a backward product.
MAX_PROBS_BYTES = 16 << 20
# The tiled kernels' limit on L * S (catch/csrc/kernels/attention.cpp).
_MAX_SCORE_ELEMS = 1 << 22


def _val(node: object) -> torch.Tensor | None:
    val = node.meta.get("val") if isinstance(node, Node) else None
    return val if isinstance(val, torch.Tensor) else None


def keeps_probs(forward: Node) -> bool:
    """Whether the flash forward ``forward`` runs on the tiled kernels with a P small enough to keep (module
    docstring)."""
    if forward.target is not FLASH or replacement(forward) is None:
        return False
    args = _arguments(forward)
    q, k, v = (_val(args[name]) for name in ("query", "key", "value"))
    if q is None or k is None or v is None:
        return False
    if any(t.dtype != torch.float32 or t.dim() != 4 for t in (q, k, v)):
        return False
    if not all(isinstance(size, int) for t in (q, k, v) for size in t.shape):  # symbolic sizes
        return False
    b, h, lq, d = q.shape
    s, dv = k.shape[2], v.shape[3]
    if tuple(k.shape) != (b, h, s, d) or tuple(v.shape[:3]) != (b, h, s):  # e.g. grouped-query heads
        return False
    scale = args.get("scale")
    if scale is not None and scale <= 0:
        return False
    if d % ATTENTION_LANES or dv % ATTENTION_LANES or lq * s > _MAX_SCORE_ELEMS or 0 in (b, h, lq, s, d, dv):
        return False
    return b * h * lq * padded_to_lanes(s) * 4 <= MAX_PROBS_BYTES


def _getitems(node: Node) -> dict[int, Node]:
    return {user.args[1]: user for user in node.users if user.target is operator.getitem}


def keep_probs(graph: Graph) -> int:
    """Rewrites each flash-attention forward of the joint graph ``graph`` that :func:`keeps_probs` accepts, with the
    backward calls that use its output and log-sum-exp, into the ``*_with_probs`` ops; returns how many forwards it
    rewrote. A forward whose log-sum-exp has another user, or whose backward is called on other tensors, keeps the
    flash ops. Each new node takes over the old node's metadata (the partitioner's backward tag among it), with its
    own fake value."""
    from torch._guards import detect_fake_mode

    rewritten = 0
    for forward in list(graph.nodes):
        if forward.op != "call_function" or not keeps_probs(forward):
            continue
        outs = _getitems(forward)
        if set(outs) - {0, 1} or 1 not in outs or 0 not in outs:
            continue
        out, lse = outs[0], outs[1]
        args = _arguments(forward)
        q, k, v = args["query"], args["key"], args["value"]
        backwards = list(lse.users)
        if not backwards or any(b.target is not FLASH_BACKWARD for b in backwards):
            continue
        bargs = [_arguments(b) for b in backwards]
        scale = args.get("scale")
        expected = (q, k, v, out, lse, scale)
        if any(tuple(a.get(name) for name in ("query", "key", "value", "out", "logsumexp", "scale")) != expected
               or replacement(b) is None for a, b in zip(bargs, backwards, strict=True)):
            continue
        fake_mode = detect_fake_mode([_val(q), _val(k), _val(v)])
        if fake_mode is None:
            continue
        with graph.inserting_before(forward):
            new_forward = graph.call_function(ATTENTION_WITH_PROBS, (q, k, v), {"scale": scale})
            new_outs = [graph.call_function(operator.getitem, (new_forward, i)) for i in range(3)]
        new_forward.meta = {**forward.meta}
        with fake_mode:
            new_forward.meta["val"] = ATTENTION_WITH_PROBS(_val(q), _val(k), _val(v), scale=scale)
        for i, node in enumerate(new_outs):
            node.meta = {**(outs[i].meta if i < 2 else forward.meta), "val": new_forward.meta["val"][i]}
            node.meta.pop("tensor_meta", None)
        new_forward.meta.pop("tensor_meta", None)
        out.replace_all_uses_with(new_outs[0])
        for backward, a in zip(backwards, bargs, strict=True):
            with graph.inserting_before(backward):
                new_backward = graph.call_function(
                    ATTENTION_BACKWARD_WITH_PROBS, (a["grad_out"], q, k, v, new_outs[0], new_outs[2]),
                    {"scale": scale})
            new_backward.meta = {**backward.meta}
            new_backward.meta.pop("tensor_meta", None)
            with fake_mode:
                new_backward.meta["val"] = ATTENTION_BACKWARD_WITH_PROBS(
                    *(_val(n) for n in (a["grad_out"], q, k, v, new_outs[0], new_outs[2])), scale=scale)
            backward.replace_all_uses_with(new_backward)
            graph.erase_node(backward)
        graph.erase_node(lse)
        graph.erase_node(out)
        graph.erase_node(forward)
        rewritten += 1
    return rewritten
