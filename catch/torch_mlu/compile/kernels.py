# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Catch's own kernels inside compiled fusion groups: which ATen nodes of a group's graph they replace.

Matrix products: ``aten.mm`` / ``aten.addmm`` become ``torch.ops.torch_mlu.mm`` / ``addmm``
(``catch/csrc/kernels/gemm.cpp``): same arguments and result; float32 products whose right operand has
contiguous rows or columns (a linear layer's ``Wᵀ``, packed into rows first) run in Catch's register-tiled loops,
addmm's bias starting the accumulators; other float32 products of at least 1 Mi multiply-adds on oneDNN, which uses
AVX-512 where MKL's SGEMM (Inductor's extern call) takes its AVX2 path; the rest on ATen.

Attention: :mod:`torch_mlu.compile.attention_pattern` (on Dynamo's graph) and Inductor's pattern passes
(``torch/_inductor/fx_passes/fuse_attention.py``) turn attention written out as ``softmax(q @ k.T * scale) @ v``
into ``aten._scaled_dot_product_flash_attention_for_cpu`` and its backward, which
:mod:`torch_mlu.compile.saved_probs` may turn into Catch's ops that keep P. ATen's CPU flash kernels tile over
keys for long sequences; for short ones, ``torch.ops.torch_mlu.attention`` / ``attention_backward``
(``catch/csrc/kernels/attention.cpp``) form each query row's scores against all keys at once instead, in
register-tiled loops for head dims of whole 16-float vectors and as whole-matrix GEMMs on oneDNN otherwise. They
take the same arguments and return the same results in the same memory layouts (the forward's output laid out like
the query, as the flash op's), and fall back to the flash kernels themselves for what they do not handle (not
float32, not 4-d, scores over 4 Mi elements per head, heads too small to gain from whole GEMMs:
``benchmarks/bench_attention.py``). The report counts the nodes handed to the Catch ops, which make that choice per
call.

:class:`CatchKernelPass` applies :func:`use_catch_kernels` as Inductor's post-grad custom pass
(``torch._inductor.config.post_grad_custom_post_pass``) when a fusion group is compiled: after Inductor's own
pattern passes, so it also sees the attention that Inductor formed inside the group. Calls with dropout, an
attention mask or causal masking keep the flash ops. The ``eager``, ``cpu`` and ``layerwise`` debug modes run the
group's original graph, so they remain the reference for these kernels.

A linear layer followed by GELU reaches the groups already as one ``torch_mlu.linear_gelu`` node (put in on
Dynamo's graph by :mod:`torch_mlu.compile.linear_gelu`, except with ``CATCH_FUSE_KERNELS=aten``); it is counted
with the kernels a group uses, not timed.

Convolutions (float32, contiguous, stride and dilation 1, groups 1) become ``torch.ops.torch_mlu.convolution`` /
``convolution_backward`` (``catch/csrc/kernels/conv.cpp``). Layers with few input taps (a first layer:
``Cin * kh * kw`` at most 32) run on direct kernels that keep output rows in vector registers through all taps, where
oneDNN has almost no reduction to block over (the digits CNN's 1->16 3x3 layer: under half oneDNN's time, forward
and weight gradient, 2 threads); other 3x3 layers on Winograd's F(2x2, 3x3), with 16 multiplies per four outputs and
channel pair instead of 36 (faster than oneDNN on its 16->32 layer, forward and backward, 2 threads); the rest on
im2col products on the register-tiled loops.

The same pass keeps some ops as extern calls where Inductor's own code for the op is slower (:data:`ATEN_KERNELS`):
it swaps the node for a ``torch_mlu`` op of the same schema, which Inductor cannot look into.
``max_pool2d_with_indices``: Inductor's lowering ends in a scalar index loop, the slowest kernel of the digits CNN's
forward, several times the time of Catch's kernel (``catch/csrc/kernels/pool.cpp``), which the op runs where it
applies and ATen's otherwise. ``max_pool2d_with_indices_backward``: Inductor lowers it to a gather over each input's
pooling windows whose C++ loop it cannot vectorize (integer floor divisions in the index), several times slower than
ATen's kernel on the digits CNN's 64x32x8x8 input; the op runs ATen's kernel. This applies with every
``CATCH_FUSE_KERNELS`` setting.

Whether a Catch kernel pays depends on the CPU (MKL's and oneDNN's code paths differ by vendor and ISA) and on the
shapes, so by default each candidate node is measured when its group compiles (``CATCH_FUSE_KERNELS`` unset or
``auto``): the ATen and the Catch kernel run interleaved on random inputs of the node's sizes, strides and dtypes,
on the thread that calls the group (the compile thread hands the timing back to it) at the group's thread count,
and the Catch kernel is kept only where it is at least 5 % faster -- the way Inductor's
``max_autotune`` picks among GEMM implementations (``torch/_inductor/select_algorithm.py``), at a cost of a few
milliseconds per node, once per process per shape. ``CATCH_FUSE_KERNELS=catch`` uses every Catch kernel that
applies without measuring, ``aten`` none (read when a group compiles). The report lists each measurement.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.fx import Graph, Node
from torch.utils._pytree import tree_map

from torch_mlu import fake_kernels
from torch_mlu.compile.errors import FuseConfigError

KERNELS_ENV = "CATCH_FUSE_KERNELS"

_aten = torch.ops.aten
FLASH = _aten._scaled_dot_product_flash_attention_for_cpu.default
FLASH_BACKWARD = _aten._scaled_dot_product_flash_attention_for_cpu_backward.default
ATTENTION = torch.ops.torch_mlu.attention.default
ATTENTION_BACKWARD = torch.ops.torch_mlu.attention_backward.default
# Put in by the joint-graph pass (torch_mlu.compile.saved_probs); counted here with the kernels a group uses.
SAVED_PROBS_OPS = (torch.ops.torch_mlu.attention_with_probs.default,
                   torch.ops.torch_mlu.attention_backward_with_probs.default)
# Put in on Dynamo's graph (torch_mlu.compile.linear_gelu); counted the same way.
LINEAR_GELU = torch.ops.torch_mlu.linear_gelu.default

CONVOLUTION = torch.ops.torch_mlu.convolution.default
CONVOLUTION_BACKWARD = torch.ops.torch_mlu.convolution_backward.default

_REPLACEMENTS = {
    _aten.mm.default: torch.ops.torch_mlu.mm.default,
    _aten.addmm.default: torch.ops.torch_mlu.addmm.default,
    FLASH: ATTENTION,
    FLASH_BACKWARD: ATTENTION_BACKWARD,
    _aten.convolution.default: CONVOLUTION,
    _aten.convolution_backward.default: CONVOLUTION_BACKWARD,
}
# Leading positional arguments each replacement takes (the tensors); ``scale`` follows as a keyword.
_TENSOR_ARGS = {
    FLASH: ("query", "key", "value"),
    FLASH_BACKWARD: ("grad_out", "query", "key", "value", "out", "logsumexp"),
}


SETTINGS = ("auto", "catch", "aten")


def kernels_setting() -> str:
    """``CATCH_FUSE_KERNELS``: ``auto`` (also when unset: measure each node), ``catch`` (always) or ``aten`` (never).

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


def replacement(node: Node) -> torch._ops.OpOverload | None:
    """The Catch op that replaces ``node``, or ``None`` when it keeps its ATen kernel.

    Replaced: ``aten.mm`` and ``aten.addmm`` (the Catch ops choose oneDNN or ATen per call), the CPU
    flash-attention forward/backward called with ``dropout_p=0``, ``is_causal=False`` and no ``attn_mask``, and
    the convolutions that Catch's kernels handle (:func:`_catch_convolution`).
    """
    target = _REPLACEMENTS.get(node.target) if node.op == "call_function" else None  # type: ignore[call-overload]
    if target in (CONVOLUTION, CONVOLUTION_BACKWARD):
        return target if _catch_convolution(node) else None
    if target is None or node.target not in _TENSOR_ARGS:
        return target
    args = _arguments(node)
    if args.get("dropout_p", 0.0) != 0 or args.get("is_causal", False) or args.get("attn_mask") is not None:
        return None
    return target


def _catch_convolution(node: Node) -> bool:
    """Whether ``aten.convolution`` / ``aten.convolution_backward`` ``node`` is one that Catch's kernels compute
    (``catch/csrc/kernels/conv.cpp``): float32, contiguous 4-d input and weight, groups 1, stride 1,
    dilation 1, not transposed. The op picks its kernel per call: the direct one for at most 32 input taps
    (``Cin * kh * kw``: a first layer) and no input gradient, Winograd's for other 3x3 kernels with padding up to 2,
    the im2col products otherwise."""
    args = _arguments(node)
    values = [n.meta.get("val") if isinstance(n, Node) else None for n in (args.get("input"), args.get("weight"))]
    if not all(isinstance(v, torch.Tensor) and v.dtype == torch.float32 and v.dim() == 4 for v in values):
        return False
    inp, weight = values
    assert isinstance(inp, torch.Tensor) and isinstance(weight, torch.Tensor)
    if not (inp.is_contiguous() and weight.is_contiguous()):
        return False
    if args.get("transposed") or args.get("groups") != 1:
        return False
    return all(s == 1 for s in args.get("stride", ())) and all(d == 1 for d in args.get("dilation", ()))


def _catch_call(node: Node, target: torch._ops.OpOverload) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments ``node`` passes to the Catch op ``target`` (the attention ops take the tensors and ``scale``)."""
    if node.target in _TENSOR_ARGS:
        args = _arguments(node)
        return tuple(args[name] for name in _TENSOR_ARGS[node.target]), {"scale": args.get("scale")}
    return tuple(node.args), dict(node.kwargs)


@dataclass
class Measurement:
    """One node's kernels timed against each other: best of ``REPS`` interleaved calls, in microseconds."""

    op: str
    shapes: str
    aten_us: float
    catch_us: float

    @property
    def catch_pays(self) -> bool:
        """Whether the Catch kernel is at least 5 % faster (the margin keeps noise from flipping choices)."""
        return self.catch_us < 0.95 * self.aten_us

    def format(self) -> str:
        chosen = "catch" if self.catch_pays else "aten"
        return f"{self.op} {self.shapes}: aten {self.aten_us:.0f} us, catch {self.catch_us:.0f} us -> {chosen}"


REPS = 15
Timer = Callable[[Callable[[], object], Callable[[], object]], tuple[float, float]]


def best_times(first: Callable[[], object], second: Callable[[], object]) -> tuple[float, float]:
    """Best wall time in seconds of each function over ``REPS`` interleaved calls, after one warm-up call each."""
    first()
    second()
    best = [math.inf, math.inf]
    for _ in range(REPS):
        for i, fn in enumerate((first, second)):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best[0], best[1]


def _example(value: Any) -> Any:
    """A real CPU tensor with the sizes, strides and dtype of a node's example value (random for floats)."""
    if not isinstance(value, Node):
        return value
    val = value.meta.get("val")
    if not isinstance(val, torch.Tensor):
        return val
    t = torch.empty_strided(val.size(), val.stride(), dtype=val.dtype, device="cpu")
    return t.normal_() if t.is_floating_point() else t.zero_()


def _shapes(args: tuple[Any, ...]) -> str:
    return " ".join("x".join(map(str, a.shape)) for a in args if isinstance(a, torch.Tensor))


def measure(node: Node, target: torch._ops.OpOverload, timer: Timer = best_times) -> Measurement | None:
    """Times ``node``'s ATen op against the Catch op ``target`` on random inputs like the node's, or ``None`` when
    an input has no static example value (then the ATen kernel stays)."""
    catch_args, catch_kwargs = _catch_call(node, target)
    examples: dict[Node, Any] = {}

    def example(value: Any) -> Any:  # one tensor per input node, shared by both calls
        if isinstance(value, Node) and value not in examples:
            examples[value] = _example(value)
        return examples[value] if isinstance(value, Node) else value

    if not all(_has_static_example(n) for n in node.all_input_nodes):
        return None
    with unset_fake_temporarily(), torch.no_grad():
        args, kwargs = tree_map(example, (node.args, node.kwargs))
        new_args, new_kwargs = tree_map(example, (catch_args, catch_kwargs))
        aten_op = node.target
        assert callable(aten_op)
        aten_s, catch_s = timer(lambda: aten_op(*args, **kwargs), lambda: target(*new_args, **new_kwargs))
    return Measurement(op=str(node.target), shapes=_shapes(new_args), aten_us=aten_s * 1e6, catch_us=catch_s * 1e6)


def _has_static_example(node: Node) -> bool:
    """Whether ``node``'s example value is a tensor of static sizes and strides, or a plain number."""
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return all(isinstance(d, int) for d in (*val.shape, *val.stride()))
    return isinstance(val, (int, float, bool))


_measured: dict[tuple[Any, ...], Measurement | None] = {}


def _signature(node: Node) -> tuple[Any, ...]:
    def describe(value: Any) -> Any:
        val = value.meta.get("val") if isinstance(value, Node) else value
        if isinstance(val, torch.Tensor):
            return (val.dtype, tuple(val.shape), tuple(val.stride()))
        return repr(val)

    return (str(node.target), torch.get_num_threads(), tuple(tree_map(describe, (node.args, node.kwargs))))


def use_catch_kernels(graph: Graph, setting: str = "catch", timer: Timer = best_times,
                      measurements: list[Measurement] | None = None) -> dict[str, int]:
    """Rewrites ``graph`` in place so that the nodes :func:`replacement` accepts call Catch's kernels.

    ``setting`` ``catch`` rewrites every such node; ``auto`` only those whose Catch kernel :func:`measure` finds
    faster (one measurement per op, shapes, strides and thread count in a process; each is appended to
    ``measurements``). Returns how many nodes now call each Catch op (``{"torch_mlu.attention.default": 1}``).
    Each node keeps its metadata: the Catch ops return what the ATen ops return, in the same layout.
    """
    used: dict[str, int] = {}
    for node in graph.nodes:
        target = replacement(node)
        if target is None:
            continue
        if setting == "auto":
            key = _signature(node)
            if key not in _measured:
                _measured[key] = measure(node, target, timer)
            result = _measured[key]
            if result is not None and measurements is not None:
                measurements.append(result)
            if result is None or not result.catch_pays:
                continue
        node.args, node.kwargs = _catch_call(node, target)
        node.target = target
        used[str(target)] = used.get(str(target), 0) + 1
    return used


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
    """Inductor post-grad pass running :func:`unfuse_bias_add`, :func:`keep_aten_kernels` and, unless ``setting`` is
    ``aten``, :func:`use_catch_kernels` (timing with ``timer``); ``used`` accumulates what they replaced, with the
    ``*_with_probs`` attention ops that :mod:`torch_mlu.compile.saved_probs` put in, and ``measurements`` what was
    measured.

    ``uuid`` hashes this file and :mod:`torch_mlu.fake_kernels` (the layouts the Catch ops return), so Inductor's FX
    graph cache keeps graphs compiled by another version of the pass apart (``torch._inductor.custom_graph_pass``).
    """

    def __init__(self, setting: str = "auto", timer: Timer = best_times) -> None:
        self.setting = setting
        self.timer = timer
        self.used: dict[str, int] = {}
        self.measurements: list[Measurement] = []

    def __call__(self, graph: Graph) -> None:
        unfuse_bias_add(graph)
        used = keep_aten_kernels(graph)
        for op in (*SAVED_PROBS_OPS, LINEAR_GELU):
            if count := len(graph.find_nodes(op="call_function", target=op)):
                used[str(op)] = count
        if self.setting != "aten":
            used.update(use_catch_kernels(graph, self.setting, self.timer, measurements=self.measurements))
        for op, count in used.items():
            self.used[op] = self.used.get(op, 0) + count

    def uuid(self) -> bytes:
        return get_hash_for_files((__file__, fake_kernels.__file__)) + self.setting.encode()
