# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The ATen ops that Inductor calls as mlu kernels (fallbacks) in mlu graphs, instead of generating C++ for them.

- ``max_pool2d_with_indices``: Inductor decomposes it into a window reduction to int8 offsets plus their conversion
  to int64 indices (``torch/_inductor/decomposition.py``), emitted as a scalar loop with a bounds check and a floor
  division per element. mlu's kernel is Catch's branch-free pooling kernel (``catch/csrc/kernels/pool.cpp``), which
  hands the cases outside its fast path to ATen's CPU kernel.
- ``max_pool2d_with_indices_backward``: Inductor lowers it to a gather over each input's pooling windows whose C++
  loop it cannot vectorize (integer floor divisions in the index). mlu's kernel is ATen's CPU kernel.

Both were the slowest kernels of the digits CNN's compiled training step; ``benchmarks/run_all.py`` measures that step
against ``torch.compile`` on CPU. The fusion backend (:mod:`torch_mlu.compile`) keeps the same ops (:data:`OPS`) out
of its decompositions and calls the same kernels.

Inductor's decomposition and lowering tables are global, not per device. :func:`register_decompositions` and
:func:`register_lowerings` wrap the entries of these ops so that only graphs on mlu change:

- the decomposition returns ``NotImplemented`` for mlu inputs, so the op stays in the graph, as upstream's own
  decomposition does for windows over 25 elements (``should_fallback_max_pool_with_indices``);
- the lowering emits a call of the op (Inductor's ``fallback_handler``, as for any op without a lowering) when an
  input is on mlu. The call dispatches to mlu's kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from torch_mlu.inductor.cpu_choices import on_mlu

_aten = torch.ops.aten

#: the ops Inductor calls as mlu kernels
OPS = (_aten.max_pool2d_with_indices.default, _aten.max_pool2d_with_indices_backward.default)

_MARK = "_catch_mlu_fallback"


def _wrap(upstream: Callable[..., Any], mlu_call: Callable[..., Any], tensor_args: int) -> Callable[..., Any]:
    """``upstream``, except that a call with one of its first ``tensor_args`` arguments on mlu goes to
    ``mlu_call``."""

    def dispatch(*args: Any, **kwargs: Any) -> Any:
        if any(on_mlu(a) for a in args[:tensor_args]):
            return mlu_call(*args, **kwargs)
        return upstream(*args, **kwargs)

    setattr(dispatch, _MARK, True)
    return dispatch


def _not_implemented(*args: Any, **kwargs: Any) -> Any:
    return NotImplemented


def register_decompositions() -> None:
    """Makes the entries of :data:`OPS` in Inductor's decomposition table (``torch._inductor.decomposition``) leave
    mlu inputs undecomposed (idempotent). Runs when that module is imported
    (:mod:`torch_mlu.inductor.lazy_registration`), before Inductor traces a graph with the table."""
    from torch._inductor import decomposition

    for op in OPS:
        upstream = decomposition.decompositions.get(op)
        if upstream is not None and not getattr(upstream, _MARK, False):
            decomposition.decompositions[op] = _wrap(upstream, _not_implemented, 1)
    decomposition.fast_random_decomps.cache_clear()  # a copy of the table, made on first use


def _with_explicit_arguments(call_op: Callable[..., Any]) -> Callable[..., Any]:
    """``call_op`` for ``max_pool2d_with_indices`` with every argument given, normalized as Inductor's lowering does
    (``max_pool_checks``: the stride defaults to the kernel size). AOTInductor's proxy executor serializes a call
    by the op's schema and fails on an omitted ``int[]`` argument (``Expected IntList but got None``)."""
    from torch._inductor import lowering

    def call(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
             ceil_mode: bool = False) -> Any:
        kernel_size, stride, padding, dilation, _ = lowering.max_pool_checks(x, kernel_size, stride, padding,
                                                                             dilation, n_dim=2)
        return call_op(x, kernel_size, stride, padding, dilation, ceil_mode)

    return call


def register_lowerings() -> None:
    """Makes Inductor's lowerings of :data:`OPS` (``torch._inductor.lowering.lowerings``) emit a call of the op when a
    tensor input is on mlu (idempotent); part of :func:`torch_mlu.inductor.codegen.register`."""
    from torch._inductor import lowering

    for op in OPS:
        upstream = lowering.lowerings.get(op)
        if upstream is None or getattr(upstream, _MARK, False):
            continue
        call_op = lowering.fallback_handler(op, add_to_fallback_set=False)
        if op is _aten.max_pool2d_with_indices.default:
            call_op = _with_explicit_arguments(call_op)
        lowering.lowerings[op] = _wrap(upstream, call_op, 2)
