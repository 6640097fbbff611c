# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Graph capture and replay for mlu: ``torch.mlu.MLUGraph``, ``torch.mlu.graph``, ``make_graphed_callables``
(``torch.cuda.graphs`` semantics).

Capture records the device work issued on the capturing thread: every ATen operation that reads or writes an mlu
tensor, with its arguments (the static input, intermediate and output tensors the graph keeps alive, as a CUDA
graph's private memory pool does). :meth:`MLUGraph.replay` issues the same operations again, in order, on the current
queue, and writes each result into the tensor captured for it, so the static outputs hold the new values and
intermediates are reused, as on CUDA. Random operations draw new numbers on each replay (CUDA graphs advance the
Philox offset per replay for the same effect).

As on CUDA, capturing does not change memory that existed before the capture: tensors written by captured work
(e.g. parameters updated by a captured optimizer step) are restored when the capture ends, so only replays apply
the work. Synchronizing operations (``.item()``, device-to-host copies of captured results) are not allowed while
capturing (``RuntimeError``, as ``cudaErrorStreamCaptureUnsupported``).

Limits: operations on CPU tensors only (Python scalars, CPU-side bookkeeping) run once, at capture time, and are not
replayed (CUDA graphs do not capture host work either); a captured operation whose output shape depends on data
(``nonzero``) replays with the shape it had at capture and raises if that changes.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from torch_mlu.mlu.streams import Stream, StreamContext, current_stream

__all__ = ["MLUGraph", "export_dot", "export_graph_data", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]

_state = threading.local()
_pool_ids = iter(range(1, 2**62))


def _is_mlu(x: object) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == "mlu"


def _tensors(tree: object) -> list[torch.Tensor]:
    return [x for x in tree_flatten(tree)[0] if isinstance(x, torch.Tensor)]


_SYNC_OPS = {torch.ops.aten._local_scalar_dense.default, torch.ops.aten.equal.default,
             torch.ops.aten.is_nonzero.default}


class _Recorder(TorchDispatchMode):
    """Records the mlu operations of one capture (see the module docstring)."""

    def __init__(self, graph: MLUGraph) -> None:
        super().__init__()
        self.graph = graph
        self.born: set[int] = set()  # storages created during the capture (data_ptr)
        self.saved: list[tuple[torch.Tensor, torch.Tensor]] = []  # (pre-existing tensor, its value before)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        ins = _tensors((args, kwargs))
        if func in _SYNC_OPS and any(_is_mlu(t) for t in ins):
            raise RuntimeError(f"MLU graph capture: {func} synchronizes with the host, which is not permitted while "
                               "the queue is capturing (operation not permitted when stream is capturing)")
        # Keep the values of pre-existing tensors this op writes: captures leave memory as it was.
        for i, a in enumerate(func._schema.arguments):
            if a.alias_info is None or not a.alias_info.is_write:
                continue
            v = args[i] if i < len(args) else kwargs.get(a.name)
            for t in _tensors(v):
                if _is_mlu(t) and t.untyped_storage().data_ptr() not in self.born:
                    self.saved.append((t, t.clone()))
        out = func(*args, **kwargs)
        outs = _tensors(out)
        if any(_is_mlu(t) for t in ins) or any(_is_mlu(t) for t in outs):
            in_storages = {t.untyped_storage().data_ptr() for t in ins}
            for t in outs:
                p = t.untyped_storage().data_ptr()
                if p not in in_storages:
                    self.born.add(p)
            self.graph._ops.append((func, args, kwargs, out))
        return out

    def restore(self) -> None:
        with torch.no_grad():
            for t, before in reversed(self.saved):
                t.copy_(before)
        self.saved.clear()


class MLUGraph:
    """A captured sequence of mlu work (``torch.cuda.CUDAGraph`` analogue).

    ``capture_begin()``/``capture_end()`` (or the :class:`graph` context manager) record; :meth:`replay` re-issues
    the work on the current queue. ``keep_graph`` is accepted for compatibility (the record is always kept).
    """

    def __init__(self, keep_graph: bool = False) -> None:
        self._ops: list[tuple[Any, tuple, dict, Any]] = []
        self._recorder: _Recorder | None = None
        self._pool: tuple[int, int] | None = None
        self._capture_stream: torch.Stream | None = None
        self._captured = False
        # OrderedDict: RemovableHandle keeps a weak reference to the dict (a plain dict cannot have one)
        self._capture_end_hooks: OrderedDict[int, Callable[[MLUGraph], None]] = OrderedDict()
        self._post_instantiate_hooks: OrderedDict[int, Callable[[MLUGraph], None]] = OrderedDict()

    def capture_begin(self, pool: tuple[int, int] | None = None, capture_error_mode: str = "global") -> None:
        """Start recording on this thread. ``pool`` (from :func:`graph_pool_handle` or another graph's
        :meth:`pool`) is the memory pool id this graph reports; every graph keeps its own tensors alive."""
        if getattr(_state, "graph", None) is not None:
            raise RuntimeError("MLU graph capture already in progress on this thread")
        if capture_error_mode not in ("global", "thread_local", "relaxed"):
            raise ValueError(f"capture_error_mode must be 'global', 'thread_local' or 'relaxed', got "
                             f"{capture_error_mode!r}")
        self.reset()
        self._pool = pool if pool is not None else graph_pool_handle()
        self._capture_stream = current_stream()
        self._recorder = _Recorder(self)
        self._recorder.__enter__()
        _state.graph = self

    def capture_end(self) -> None:
        """Stop recording; pre-existing tensors written during the capture get their values back."""
        if self._recorder is None:
            raise RuntimeError("MLUGraph.capture_end() without capture_begin()")
        rec, self._recorder = self._recorder, None
        rec.__exit__(None, None, None)
        _state.graph = None
        rec.restore()
        self._captured = True
        # A recording is ready to replay when the capture ends: capture-end hooks, then post-instantiate hooks (torch
        # 2.14's CUDAGraph hooks, the ones torch.cuda.graphs.export_dot/export_graph_data return).
        for hook in [*self._capture_end_hooks.values(), *self._post_instantiate_hooks.values()]:
            hook(self)

    def replay(self) -> None:
        """Issue the captured work again on the current queue; results land in the captured tensors."""
        if not self._captured:
            raise RuntimeError("MLUGraph.replay() called before the graph was captured")
        with torch.no_grad():
            for func, args, kwargs, out in self._ops:
                new = func(*args, **kwargs)
                for old_t, new_t in zip(_tensors(out), _tensors(new)):
                    if old_t.data_ptr() == new_t.data_ptr() and old_t.device == new_t.device:
                        continue  # in-place, out= or a view: already written
                    if old_t.shape != new_t.shape:
                        raise RuntimeError(f"MLUGraph.replay: {func} produced shape {tuple(new_t.shape)}, captured "
                                           f"{tuple(old_t.shape)} (data-dependent shapes cannot be replayed)")
                    old_t.copy_(new_t)

    def reset(self) -> None:
        """Drop the recording and the tensors it keeps alive."""
        self._ops = []
        self._captured = False

    def pool(self) -> tuple[int, int]:
        """Id of this graph's memory pool (pass it to another capture to share, as on CUDA)."""
        if self._pool is None:
            raise RuntimeError("MLUGraph.pool() called before capture")
        return self._pool

    def instantiate(self) -> None:
        """No-op: a recording is ready to replay when the capture ends."""

    def register_capture_end_hook(self, fn: Callable[[MLUGraph], None]) -> Any:
        """Run ``fn(graph)`` when a capture of this graph ends; returns a handle whose ``remove()`` unregisters it."""
        from torch.utils.hooks import RemovableHandle

        handle = RemovableHandle(self._capture_end_hooks)
        self._capture_end_hooks[handle.id] = fn
        return handle

    def register_post_instantiate_hook(self, fn: Callable[[MLUGraph], None]) -> Any:
        """Run ``fn(graph)`` once the graph is ready to replay (at the end of each capture: a recording needs no
        separate instantiation); returns a handle whose ``remove()`` unregisters it."""
        from torch.utils.hooks import RemovableHandle

        handle = RemovableHandle(self._post_instantiate_hooks)
        self._post_instantiate_hooks[handle.id] = fn
        return handle

    def get_graph_data(self) -> dict[str, Any]:
        """The captured work as data: ``{"nodes": [{"id", "op", "shapes"}], "edges": [(i, i + 1)]}``; the ops run in
        capture order on one queue, so each depends on the one before."""
        nodes = [{"id": i, "op": str(func), "shapes": [tuple(t.shape) for t in _tensors(args)]}
                 for i, (func, args, _kwargs, _out) in enumerate(self._ops)]
        return {"nodes": nodes, "edges": [(i, i + 1) for i in range(len(nodes) - 1)]}

    def enable_debug_mode(self) -> None:
        """Accepted for compatibility; :meth:`debug_dump` always works."""

    def debug_dump(self, debug_path: str) -> None:
        """Write the captured operations, one per line, to ``debug_path``."""
        with open(debug_path, "w", encoding="utf-8") as f:
            for func, args, _kwargs, _out in self._ops:
                shapes = [tuple(t.shape) for t in _tensors(args)]
                f.write(f"{func} {shapes}\n")

    def __len__(self) -> int:
        return len(self._ops)


def graph_pool_handle() -> tuple[int, int]:
    """An opaque memory pool id for :class:`graph` / :meth:`MLUGraph.capture_begin` (``torch.cuda`` analogue)."""
    return (0, next(_pool_ids))


def is_current_stream_capturing() -> bool:
    """True while a graph capture is recording on this thread's current queue."""
    g = getattr(_state, "graph", None)
    return g is not None and g._capture_stream == current_stream()


class graph:
    """``with torch.mlu.graph(g, pool=None, stream=None):`` captures the block into ``g`` on a side queue
    (``stream``, default: one side queue per process), after synchronizing the device and emptying the cache, as
    ``torch.cuda.graph`` does."""

    default_capture_stream: Stream | None = None

    def __init__(self, mlu_graph: MLUGraph, pool: tuple[int, int] | None = None, stream: torch.Stream | None = None,
                 capture_error_mode: str = "global") -> None:
        if self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.pool = pool
        self.capture_stream = stream if stream is not None else self.__class__.default_capture_stream
        self.stream_ctx = StreamContext(self.capture_stream)
        self.mlu_graph = mlu_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self) -> None:
        torch.mlu.synchronize()
        gc.collect()
        torch.mlu.empty_cache()
        self.stream_ctx.__enter__()
        self.mlu_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)

    def __exit__(self, *exc: object) -> None:
        self.mlu_graph.capture_end()
        self.stream_ctx.__exit__(*exc)


def _graphed(func: Callable[..., Any], sample_args: tuple, params: tuple[torch.Tensor, ...], num_warmup_iters: int,
             allow_unused_input: bool, pool: tuple[int, int] | None) -> Callable[..., Any]:
    static_in = tuple(sample_args) + params
    needs_grad = tuple(t for t in static_in if isinstance(t, torch.Tensor) and t.requires_grad)
    side = Stream()
    side.wait_stream(current_stream())
    with StreamContext(side):
        for _ in range(num_warmup_iters):
            outs = _tensors(func(*sample_args))
            outs_g = tuple(o for o in outs if o.requires_grad)
            if outs_g and needs_grad:
                torch.autograd.grad(outs_g, needs_grad, grad_outputs=tuple(torch.empty_like(o) for o in outs_g),
                                    allow_unused=allow_unused_input)
    current_stream().wait_stream(side)
    fwd_graph, bwd_graph = MLUGraph(), MLUGraph()
    with graph(fwd_graph, pool=pool):
        raw_out = func(*sample_args)
    flat_out, spec = tree_flatten(raw_out)
    static_out = tuple(o for o in flat_out if isinstance(o, torch.Tensor))
    static_grad_out = tuple(torch.empty_like(o) if o.requires_grad else None for o in static_out)
    outs_g = tuple(o for o in static_out if o.requires_grad)
    with graph(bwd_graph, pool=fwd_graph.pool()):
        grads = torch.autograd.grad(outs_g, needs_grad, grad_outputs=tuple(g for g in static_grad_out if g is not None),
                                    allow_unused=allow_unused_input) if outs_g and needs_grad else ()
    static_grad_in: list[torch.Tensor | None] = []
    it = iter(grads)
    for t in static_in:
        static_grad_in.append(next(it) if isinstance(t, torch.Tensor) and t.requires_grad else None)

    class Graphed(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
            for s, x in zip(static_in, inputs):
                if isinstance(s, torch.Tensor) and s.data_ptr() != x.data_ptr():
                    s.copy_(x)
            fwd_graph.replay()
            return tuple(o.detach() for o in static_out)

        @staticmethod
        def backward(ctx: Any, *grad_outs: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
            for s, g in zip(static_grad_out, grad_outs):
                if s is not None and g is not None and s.data_ptr() != g.data_ptr():
                    s.copy_(g)
            bwd_graph.replay()
            return tuple(g.detach() if g is not None else None for g in static_grad_in)

    def run(*user_args: Any) -> Any:
        out = Graphed.apply(*(tuple(user_args) + params))
        it_out = iter(out)
        return spec.unflatten([next(it_out) if isinstance(o, torch.Tensor) else o for o in flat_out])

    return run


def make_graphed_callables(callables: Any, sample_args: Any, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool: tuple[int, int] | None = None) -> Any:
    """Graphed versions of ``callables`` (functions or ``nn.Module``s), as ``torch.cuda.make_graphed_callables``:
    forward and backward are each captured once with ``sample_args`` (after ``num_warmup_iters`` eager runs on a
    side queue) and replayed on every call; a module's graphed forward is used in the training state it was
    graphed in, its own forward otherwise. Inputs must keep the sample shapes and dtypes."""
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    result = []
    for func, args in zip(callables, sample_args):
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        if isinstance(func, torch.nn.Module):
            if func._backward_hooks or func._forward_hooks or func._forward_pre_hooks:
                raise RuntimeError("Modules must not have hooks registered at the time they are passed. However, "
                                   "registering hooks on modules after passing them through make_graphed_callables "
                                   "is allowed.")
            params = tuple(p for p in func.parameters() if p.requires_grad)
            graphed = _graphed(func, args, params, num_warmup_iters, allow_unused_input, pool)
            training, orig = func.training, func.forward

            def forward(*user_args: Any, _g: Any = graphed, _t: bool = training, _m: Any = func,
                        _o: Any = orig) -> Any:
                return _g(*user_args) if _m.training == _t else _o(*user_args)

            func.forward = forward  # type: ignore[method-assign]
            result.append(func)
        else:
            result.append(_graphed(func, args, (), num_warmup_iters, allow_unused_input, pool))
    return result[0] if just_one else tuple(result)


def export_dot(path: str, *, verbose: bool = True) -> Callable[[MLUGraph], None]:
    """A capture-end hook (:meth:`MLUGraph.register_capture_end_hook`) that writes the captured graph to ``path`` in
    Graphviz DOT: one node per captured op (with its input shapes when ``verbose``), edges in queue order
    (``torch.cuda.graphs.export_dot``, new in torch 2.14)."""

    def _hook(g: MLUGraph) -> None:
        data = g.get_graph_data()
        lines = ["digraph MLUGraph {"]
        for node in data["nodes"]:
            label = node["op"] + (f"\\n{node['shapes']}" if verbose else "")
            lines.append(f'  n{node["id"]} [label="{label}"];')
        lines += [f"  n{a} -> n{b};" for a, b in data["edges"]]
        lines.append("}")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    return _hook


def export_graph_data(path: str) -> Callable[[MLUGraph], None]:
    """A post-instantiate hook (:meth:`MLUGraph.register_post_instantiate_hook`) that pickles
    :meth:`MLUGraph.get_graph_data` to ``path`` (``torch.cuda.graphs.export_graph_data``, new in torch 2.14)."""

    def _hook(g: MLUGraph) -> None:
        import pickle

        with open(path, "wb") as f:
            pickle.dump(g.get_graph_data(), f)

    return _hook
