# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Catch's own kernels inside compiled fusion groups: which ATen nodes of a group's graph they replace.

Matrix products: ``aten.mm`` / ``aten.addmm`` become ``torch.ops.torch_mlu.mm`` / ``addmm``
(``catch/csrc/kernels/gemm_kernels.cpp``): same arguments and result; float32 products of at least 1 Mi
multiply-adds run on oneDNN, which uses AVX-512 where MKL's SGEMM (Inductor's extern call) takes its AVX2 path, the
rest on ATen.

Attention: Inductor's pattern passes (``torch/_inductor/fx_passes/fuse_attention.py``) turn attention written
out as ``softmax(q @ k.T * scale) @ v`` into ``aten._scaled_dot_product_flash_attention_for_cpu`` and its
backward. ATen's CPU flash kernels tile over keys for long sequences; for short ones,
``torch.ops.torch_mlu.attention`` / ``attention_backward`` (``catch/csrc/kernels/attention_kernels.cpp``) form the
whole score matrix per head and run five whole GEMMs on oneDNN instead. They take the same arguments and return
the same results in the same memory layouts, and fall back to the flash kernels themselves for what they do not
handle (not float32, not 4-d, scores over 4 Mi elements per head, heads too small to gain from whole GEMMs:
``benchmarks/bench_attention.py``). The report counts the nodes handed to the Catch ops, which make that choice
per call.

:class:`CatchKernelPass` applies :func:`use_catch_kernels` as Inductor's post-grad custom pass
(``torch._inductor.config.post_grad_custom_post_pass``) when a fusion group is compiled: after Inductor's own
pattern passes, so it also sees the attention that Inductor formed inside the group. Calls with dropout, an
attention mask or causal masking keep the flash ops. The ``eager``, ``cpu`` and ``layerwise`` debug modes run the
group's original graph, so they remain the reference for these kernels; ``CATCH_FUSE_KERNELS=aten`` compiles groups
with ATen's kernels only (read when a group compiles).
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files
from torch.fx import Graph, Node

import torch_mlu  # noqa: F401  (loads torch_mlu._C, which defines the torch_mlu ops)
from torch_mlu.compile.errors import FuseConfigError

KERNELS_ENV = "CATCH_FUSE_KERNELS"

_aten = torch.ops.aten
FLASH = _aten._scaled_dot_product_flash_attention_for_cpu.default
FLASH_BACKWARD = _aten._scaled_dot_product_flash_attention_for_cpu_backward.default
ATTENTION = torch.ops.torch_mlu.attention.default
ATTENTION_BACKWARD = torch.ops.torch_mlu.attention_backward.default

_REPLACEMENTS = {
    _aten.mm.default: torch.ops.torch_mlu.mm.default,
    _aten.addmm.default: torch.ops.torch_mlu.addmm.default,
    FLASH: ATTENTION,
    FLASH_BACKWARD: ATTENTION_BACKWARD,
}
# Leading positional arguments each replacement takes (the tensors); ``scale`` follows as a keyword.
_TENSOR_ARGS = {
    FLASH: ("query", "key", "value"),
    FLASH_BACKWARD: ("grad_out", "query", "key", "value", "out", "logsumexp"),
}


def catch_kernels_enabled() -> bool:
    """Whether compiled groups use Catch's kernels: ``CATCH_FUSE_KERNELS`` unset/``catch`` (yes) or ``aten`` (no).

    Raises :class:`FuseConfigError` for any other value.
    """
    value = os.environ.get(KERNELS_ENV, "").strip().lower()
    if value not in ("", "catch", "aten"):
        raise FuseConfigError(f"{KERNELS_ENV}={value!r}: expected catch or aten (or unset)")
    return value != "aten"


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


def replacement(node: Node) -> torch._ops.OpOverload | None:
    """The Catch op that replaces ``node``, or ``None`` when it keeps its ATen kernel.

    Replaced: ``aten.mm`` and ``aten.addmm`` (the Catch ops choose oneDNN or ATen per call), and the CPU
    flash-attention forward/backward called with ``dropout_p=0``, ``is_causal=False`` and no ``attn_mask``.
    """
    target = _REPLACEMENTS.get(node.target) if node.op == "call_function" else None  # type: ignore[call-overload]
    if target is None or node.target not in _TENSOR_ARGS:
        return target
    args = _arguments(node)
    if args.get("dropout_p", 0.0) != 0 or args.get("is_causal", False) or args.get("attn_mask") is not None:
        return None
    return target


def use_catch_kernels(graph: Graph) -> dict[str, int]:
    """Rewrites ``graph`` in place so that the nodes :func:`replacement` accepts call Catch's kernels.

    Returns how many nodes now call each Catch op (``{"torch_mlu.attention.default": 1}``). Each node keeps its
    metadata: the Catch ops return what the ATen ops return, in the same layout.
    """
    used: dict[str, int] = {}
    for node in graph.nodes:
        target = replacement(node)
        if target is None:
            continue
        if node.target in _TENSOR_ARGS:
            args = _arguments(node)
            node.args = tuple(args[name] for name in _TENSOR_ARGS[node.target])
            node.kwargs = {"scale": args.get("scale")}
        node.target = target
        used[str(target)] = used.get(str(target), 0) + 1
    return used


class CatchKernelPass(CustomGraphPass):
    """Inductor post-grad pass running :func:`use_catch_kernels`; ``used`` accumulates what it replaced.

    ``uuid`` hashes this file, so Inductor's FX graph cache keeps graphs compiled by another version of the pass
    apart (``torch._inductor.custom_graph_pass``).
    """

    def __init__(self) -> None:
        self.used: dict[str, int] = {}

    def __call__(self, graph: Graph) -> None:
        for op, count in use_catch_kernels(graph).items():
            self.used[op] = self.used.get(op, 0) + count

    def uuid(self) -> bytes:
        return get_hash_for_files((__file__,))


@torch.library.register_fake("torch_mlu::mm")
def _mm_fake(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    return _aten.mm.default(self, mat2)


@torch.library.register_fake("torch_mlu::addmm")
def _addmm_fake(bias: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor, *, beta: float = 1,
                alpha: float = 1) -> torch.Tensor:
    return _aten.addmm.default(bias, mat1, mat2, beta=beta, alpha=alpha)


@torch.library.register_fake("torch_mlu::attention")
def _attention_fake(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *,
                    scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    # Same shapes, dtypes and strides as the flash op (the kernel allocates its results that way).
    return FLASH(query, key, value, scale=scale)


@torch.library.register_fake("torch_mlu::attention_backward")
def _attention_backward_fake(grad_out: torch.Tensor, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                             out: torch.Tensor, logsumexp: torch.Tensor, *,
                             scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return FLASH_BACKWARD(grad_out, query, key, value, out, logsumexp, 0.0, False, scale=scale)
