# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""A fusion group at run time: one ATen sub-graph, executed as selected by ``FUSE_GROUP_DEBUG_MODE``.

Compiled mode hands the group to PyTorch Inductor for the CPU (``torch._inductor.compile_fx.compile_fx``: C++
kernels with fused loops, extern BLAS/oneDNN calls for matmul and convolution), after the post-grad pass of
:mod:`torch_mlu.compile.kernels`, and runs the result on host views of
the mlu inputs (``torch_mlu._C._host_args``, as :mod:`torch_mlu.host_view` makes them), so kernels read device
memory in place. The compiled code runs in the runtime's host-kernel mode (``torch_mlu._C._run_host_kernel``: the CPU
allocator hands out blocks of the mlu caching allocator on the group's device), so its buffers -- outputs included --
are device memory, and outputs become mlu tensors by adopting their blocks, without a copy. One compiled function is
kept per input signature (shapes, strides, dtypes).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch
from torch.fx import GraphModule, Interpreter, Node
from torch.utils._pytree import tree_map

from torch_mlu import _C, mlu
from torch_mlu.compile.debug_mode import debug_mode, tolerances
from torch_mlu.compile.decompositions import decompositions
from torch_mlu.compile.host_malloc import keep_host_buffers
from torch_mlu.compile.kernels import CatchKernelPass, kernels_setting
from torch_mlu.compile.report import GroupReport, publish

_CPU = torch.device("cpu")


def _device_to_cpu(value: Any) -> Any:
    if isinstance(value, torch.device) and value.type == "mlu":
        return _CPU
    return value


def cpu_graph(gm: GraphModule) -> GraphModule:
    """A copy of ``gm`` whose ``device=mlu`` arguments say ``cpu`` (factory ops inside a group)."""
    out = copy.deepcopy(gm)
    for node in out.graph.nodes:
        # Drop the outer trace's fake mlu tensors from the metadata: Inductor re-traces this graph on CPU inputs.
        node.meta = {k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack", "source_fn_stack")}
        node.args = tree_map(_device_to_cpu, node.args)
        node.kwargs = tree_map(_device_to_cpu, node.kwargs)
    out.recompile()
    return out


def _to_cpu(value: Any) -> Any:
    return value.cpu() if isinstance(value, torch.Tensor) else value


def _to_mlu(device: torch.device) -> Callable[[Any], Any]:
    def move(value: Any) -> Any:
        return value.to(device) if isinstance(value, torch.Tensor) else value

    return move


def _first_mismatch(name: str, mlu_out: Any, cpu_out: Any, rtol: float, atol: float) -> str | None:
    mlu_leaves = [t for t in torch.utils._pytree.tree_leaves(mlu_out) if isinstance(t, torch.Tensor)]
    cpu_leaves = [t for t in torch.utils._pytree.tree_leaves(cpu_out) if isinstance(t, torch.Tensor)]
    for i, (m, c) in enumerate(zip(mlu_leaves, cpu_leaves, strict=True)):
        got = m.cpu()
        if got.shape != c.shape or got.dtype != c.dtype:
            return f"{name}[{i}]: mlu gives {tuple(got.shape)} {got.dtype}, cpu {tuple(c.shape)} {c.dtype}"
        if got.is_floating_point():
            if not torch.allclose(got, c, rtol=rtol, atol=atol, equal_nan=True):
                diff = (got.double() - c.double()).abs().nan_to_num(float("inf")).max().item()
                return f"{name}[{i}]: max abs difference {diff:.3g} (rtol {rtol:g}, atol {atol:g})"
        elif not torch.equal(got, c):
            return f"{name}[{i}]: values differ"
    return None


class _LayerwiseChecker(Interpreter):
    """Runs a group node by node on mlu and each node again on CPU copies of its inputs; keeps the first mismatch."""

    def __init__(self, gm: GraphModule, rtol: float, atol: float) -> None:
        super().__init__(gm)
        self.rtol = rtol
        self.atol = atol
        self.mismatch: str | None = None

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        if self.mismatch is None and n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            cpu_args = tree_map(lambda v: _device_to_cpu(_to_cpu(v)), args)
            cpu_kwargs = tree_map(lambda v: _device_to_cpu(_to_cpu(v)), kwargs)
            expected = n.target(*cpu_args, **cpu_kwargs)
            self.mismatch = _first_mismatch(f"{n.name} ({n.target})", result, expected, self.rtol, self.atol)
        return result


def _group_device(gm: GraphModule) -> torch.device:
    for node in gm.graph.nodes:
        for value in torch.utils._pytree.tree_leaves(node.meta.get("val")):
            if isinstance(value, torch.Tensor):
                return value.device
    return torch.device("mlu", mlu.current_device())


class FusionGroup(torch.nn.Module):
    """Callable replacing a fused submodule: same inputs and outputs (a tuple) as the ATen sub-graph ``gm``."""

    def __init__(self, gm: GraphModule, report: GroupReport) -> None:
        super().__init__()
        self.gm = gm
        self.report = report
        self._cpu_gm: GraphModule | None = None
        self._compiled: dict[tuple[Any, ...], Callable[..., Any]] = {}
        self.device = _group_device(gm)

    @property
    def cpu_gm(self) -> GraphModule:
        """The group's graph with ``device=mlu`` arguments turned into ``cpu``."""
        if self._cpu_gm is None:
            self._cpu_gm = cpu_graph(self.gm)
        return self._cpu_gm

    def forward(self, *args: Any) -> Any:
        mode = debug_mode()
        if mode == "eager":
            return self.gm(*args)
        device = self.device
        if mode == "cpu":
            out = self.cpu_gm(*tree_map(_to_cpu, args))
            return tree_map(_to_mlu(device), out)
        if mode == "layerwise":
            return self._run_layerwise(args)
        return self._run_compiled(args, device)

    def _run_layerwise(self, args: Sequence[Any]) -> Any:
        rtol, atol = tolerances()
        checker = _LayerwiseChecker(self.gm, rtol, atol)
        out = checker.run(*args)
        if checker.mismatch is not None and checker.mismatch not in self.report.mismatches:
            self.report.mismatches.append(checker.mismatch)
            warnings.warn(f"FUSE_GROUP_DEBUG_MODE=layerwise: {self.report.name}: first mismatch: {checker.mismatch}",
                          stacklevel=2)
        return out

    def _run_compiled(self, args: Sequence[Any], device: torch.device) -> Any:
        # One C++ call each way (torch_mlu._C._host_args / _run_host_kernel, catch/csrc/python/host_kernel.cpp): the
        # queues' pending work, host views of the mlu inputs and the key of their geometry; then the compiled code
        # in host-kernel mode and its outputs adopted as mlu tensors (see adopt_outputs).
        host_args, key = _C._host_args(list(args))
        fn = self._compiled.get(key)
        if fn is None:
            keep_host_buffers()
            fn = self._compile(host_args)
            self._compiled[key] = fn
        outs, copies = _C._run_host_kernel(fn, host_args, list(args), _index(device))
        self.report.copied_outputs += copies
        return outs

    def _compile(self, host_args: list[Any]) -> Callable[..., Any]:
        # The first call happens inside AOTAutograd's runtime wrapper, whose dispatch modes and tracing state are
        # thread-local: compile on a fresh thread so Inductor's own AOTAutograd pass starts from a clean state, with
        # the caller's intra-op thread count (generated kernels size their work split by it).
        threads = torch.get_num_threads()
        kernel_pass = CatchKernelPass(kernels_setting())
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="catch-fuse-compile") as pool:
            compiled = pool.submit(_inductor_compile, self.cpu_gm, host_args, threads, kernel_pass).result()
        self.report.kernels = kernel_pass.used
        publish()
        return compiled


def _index(device: torch.device) -> int:
    return -1 if device.index is None else device.index


def adopt_outputs(
    outs: Sequence[Any],
    inputs_by_storage: dict[int, torch.Tensor],
    device: torch.device,
    report: GroupReport | None = None,
) -> tuple[Any, ...]:
    """Turns the CPU outputs of a compiled group into mlu tensors, keeping every output's storage layout and aliasing.

    An output that is a view of an input (same host storage and dtype) becomes the same view of the mlu input (an
    autograd view, sharing its version counter). An output whose storage was allocated in host-kernel mode on
    ``device`` gets that memory adopted as mlu memory (``torch_mlu._C._wrap_host_outputs``: no copy; the CPU output
    is left with an empty storage); any other storage is copied once, counted in ``report.copied_outputs``. Every
    output keeps its dtype, sizes, strides and storage offset, so outputs that alias each other still do
    (AOTAutograd regenerates aliased outputs from that metadata). Implemented in C++ (``_C._adopt_outputs``), which
    compiled runs call directly.
    """
    result, copies = _C._adopt_outputs(list(outs), inputs_by_storage, _index(device))
    if report is not None:
        report.copied_outputs += copies
    return tuple(result)


def _inductor_compile(gm: GraphModule, example_inputs: list[Any], threads: int,
                      kernel_pass: CatchKernelPass) -> Callable[..., Any]:
    from torch._inductor.compile_fx import compile_fx

    torch.set_num_threads(threads)
    # No FX graph cache: a cached graph would skip the post-grad passes, and with them the record of which torch_mlu
    # ops it calls (the generated C++ is still cached by source).
    patches = {"post_grad_custom_post_pass": kernel_pass, "fx_graph_cache": False}
    with torch.no_grad():
        compiled = compile_fx(copy.deepcopy(gm), example_inputs, config_patches=patches,
                              decompositions=decompositions())
    if not callable(compiled):
        raise TypeError(f"Inductor returned {type(compiled).__name__}, not a callable, for a fusion group")
    return compiled
