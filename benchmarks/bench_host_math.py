# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark Catch's hand-written CPU math against ATen's CPU kernels for the same ops, on the demos' shapes.

Usage: python benchmarks/bench_host_math.py [--reps N] [--threads 1,2] [--kernels gemm,conv,...] [--out FILE]

The project's rule for hand-written kernels that re-implement an op ATen already runs on the CPU: such a kernel
stays only where it is at least 1.25x faster than ATen's kernel on the shapes the demos and benchmarks use, measured
in the same run, and passes a differential test against ATen on adversarial inputs. This script is the measuring
half. For each kernel it times Catch's op (``torch.ops.torch_mlu.<op>``, which serves CPU tensors: the host views
that compiled fusion groups and the eager device kernels hand it) and ATen's op on the same seeded CPU tensors,
laid out as the graphs lay them out, forward and backward:

* ``gemm``: ``torch_mlu.mm`` / ``addmm`` against ``aten.mm`` / ``addmm`` -- the linear layers of the digits CNN
  (``examples/train_digits.py``), the ResNet's head (``examples/resnet_digits.py``), the transformer LM's block
  (``examples/transformer_lm.py``) and the transformer block of ``bench_compile.py``; forward ``addmm(b, x, wᵀ)``,
  backward ``mm(g, w)`` and ``mm(gᵀ, x)``;
* ``linear_gelu``: ``torch_mlu.linear_gelu`` against ``aten.addmm`` + ``aten.gelu`` (+ ``aten.gelu_backward`` for
  the derivative the training graph asks for);
* ``conv``: ``torch_mlu.convolution`` / ``convolution_backward`` against ATen's -- the digits CNN's and the ResNet's
  stride-1 layers, ``run_all.py``'s 28x28 CNN and three larger layers (up to 64 channels at 56x56);
* ``pool``: ``torch_mlu.max_pool2d_with_indices`` against ATen's (the digits CNN's and the 28x28 CNN's
  ``MaxPool2d(2)``; the backward op now runs ATen's kernel, so its rows say removed); also eager ``F.max_pool2d`` on
  mlu (Catch's kernel through the device kernel) against the same call on CPU;
* ``attention``, ``attention_probs``: ``torch_mlu.attention`` / ``attention_backward`` and the ``*_with_probs``
  pair against ATen's CPU flash attention -- the transformer block of ``bench_compile.py`` and
  longer sequences (the transformer LM's causal attention never took these kernels).

Timing: the two calls alternate (ATen, Catch, Catch, ATen, ... so neither always runs right after the other), each
sample a run of calls of at least ~2 ms, at each ``--threads`` count; each side's median per call is kept, in wall
time and in the calling thread's CPU time (steadier on a loaded machine; at 1 thread all the work is on that
thread). ``speedup`` is ATen / Catch (>= 1.25 is the rule's bar); ``ratio`` is Catch / ATen, as in the other
benchmarks. A kernel whose op is no longer built is reported as removed. The JSON goes to
``benchmarks/results/host_math/<UTC time>.json`` (with the load averages before and after each thread count).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from rich.console import Console
from rich.table import Table

import torch_mlu  # noqa: F401  (the torch_mlu ops, the mlu device)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BAR = 1.25  # the rule: at least this much faster than ATen
KERNELS = ("gemm", "linear_gelu", "conv", "pool", "attention", "attention_probs")

aten = torch.ops.aten
Fn = Callable[[], object]


def catch_op(name: str) -> object | None:
    """``torch.ops.torch_mlu.<name>.default``, or None when this build has no such op (the kernel was removed)."""
    try:
        return getattr(torch.ops.torch_mlu, name).default
    except (AttributeError, RuntimeError):
        return None


@dataclass
class Case:
    """One comparison: ``make()`` returns (ATen's call, Catch's call) on shared inputs, or None when Catch's op
    is not built."""

    kernel: str
    workload: str
    shape: str
    direction: str  # "forward" | "backward"
    make: Callable[[], tuple[Fn, Fn] | None]


@dataclass
class Result:
    kernel: str
    workload: str
    shape: str
    direction: str
    threads: int
    aten_ms: float | None = None
    catch_ms: float | None = None
    aten_cpu_ms: float | None = None
    catch_cpu_ms: float | None = None
    samples: int = 0
    note: str = ""

    @property
    def speedup(self) -> float | None:
        return None if not self.aten_ms or not self.catch_ms else self.aten_ms / self.catch_ms

    @property
    def cpu_speedup(self) -> float | None:
        return None if not self.aten_cpu_ms or not self.catch_cpu_ms else self.aten_cpu_ms / self.catch_cpu_ms


# ---- the cases -----------------------------------------------------------------------------------------------------
def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def _randn(*shape: int, g: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=g)


# (workload, layer, M, K, N): y (M, N) = x (M, K) wᵀ + b
LINEARS = [
    ("digits CNN", "fc1", 64, 512, 64), ("digits CNN", "fc2", 64, 64, 10),
    ("ResNet digits", "head", 64, 64, 10),
    ("transformer LM (32x64 tokens, d 96)", "qkv", 2048, 96, 288),
    ("transformer LM (32x64 tokens, d 96)", "proj", 2048, 96, 96),
    ("transformer LM (32x64 tokens, d 96)", "mlp1", 2048, 96, 384),
    ("transformer LM (32x64 tokens, d 96)", "mlp2", 2048, 384, 96),
    ("transformer LM (32x64 tokens, d 96)", "head", 2048, 96, 103),
    ("bench_compile transformer block", "qkv", 512, 64, 192),
    ("bench_compile transformer block", "proj", 512, 64, 64),
    ("bench_compile transformer block", "fc1", 512, 64, 256),
    ("bench_compile transformer block", "fc2", 512, 256, 64),
]


def gemm_cases() -> list[Case]:
    cases = []
    for workload, layer, m, k, n in LINEARS:
        def forward(m: int = m, k: int = k, n: int = n) -> tuple[Fn, Fn] | None:
            op = catch_op("addmm")
            if op is None:
                return None
            g = _gen()
            x, w, b = _randn(m, k, g=g), _randn(n, k, g=g), _randn(n, g=g)
            wt = w.t()  # as the graph passes it: a transposed view
            return (lambda: aten.addmm.default(b, x, wt)), (lambda: op(b, x, wt))

        def grad_input(m: int = m, k: int = k, n: int = n) -> tuple[Fn, Fn] | None:
            op = catch_op("mm")
            if op is None:
                return None
            g = _gen()
            grad, w = _randn(m, n, g=g), _randn(n, k, g=g)
            return (lambda: aten.mm.default(grad, w)), (lambda: op(grad, w))

        def grad_weight(m: int = m, k: int = k, n: int = n) -> tuple[Fn, Fn] | None:
            op = catch_op("mm")
            if op is None:
                return None
            g = _gen()
            grad, x = _randn(m, n, g=g), _randn(m, k, g=g)
            gt = grad.t()
            return (lambda: aten.mm.default(gt, x)), (lambda: op(gt, x))

        label = f"{layer} {m}x{k} -> {n}"
        cases += [Case("gemm", workload, f"{label}: addmm(b, x, wT)", "forward", forward),
                  Case("gemm", workload, f"{label}: mm(g, w)", "backward", grad_input),
                  Case("gemm", workload, f"{label}: mm(gT, x)", "backward", grad_weight)]
    return cases


def linear_gelu_cases() -> list[Case]:
    cases = []
    for workload, m, k, n in [("bench_compile transformer block", 512, 64, 256),
                              ("transformer LM (32x64 tokens, d 96)", 2048, 96, 384)]:
        for derivative in (False, True):
            def make(m: int = m, k: int = k, n: int = n, derivative: bool = derivative) -> tuple[Fn, Fn] | None:
                op = catch_op("linear_gelu")
                if op is None:
                    return None
                g = _gen()
                x, w, b = _randn(m, k, g=g), _randn(n, k, g=g), _randn(n, g=g)
                ones = torch.ones(m, n)
                wt = w.t()

                def ref() -> object:
                    z = aten.addmm.default(b, x, wt)
                    y = aten.gelu.default(z)
                    return (y, aten.gelu_backward.default(ones, z)) if derivative else y

                return ref, (lambda: op(x, w, b, derivative))

            what = "training (with gelu')" if derivative else "inference"
            cases.append(Case("linear_gelu", workload, f"mlp1 {m}x{k} -> {n}, {what}", "forward", make))
    return cases


# (workload, batch, cin, h, w, cout, kernel, padding, bias, input needs grad)
CONVS = [
    ("digits CNN", 64, 1, 8, 8, 16, 3, 1, True, False),
    ("digits CNN", 64, 16, 8, 8, 32, 3, 1, True, True),
    ("ResNet digits", 64, 1, 16, 16, 16, 3, 1, False, False),
    ("ResNet digits", 64, 16, 16, 16, 16, 3, 1, False, True),
    ("ResNet digits", 64, 32, 8, 8, 32, 3, 1, False, True),
    ("ResNet digits", 64, 64, 4, 4, 64, 3, 1, False, True),
    ("run_all 28x28 CNN", 64, 1, 28, 28, 16, 3, 1, True, False),
    ("run_all 28x28 CNN", 64, 16, 28, 28, 32, 3, 1, True, True),
    ("conv-layers", 64, 16, 8, 8, 32, 3, 0, True, True),
    ("conv-layers", 4, 16, 28, 28, 32, 5, 2, True, True),
    ("conv-layers", 2, 64, 56, 56, 64, 3, 1, True, True),
]


def conv_cases() -> list[Case]:
    cases = []
    for workload, n, cin, h, w, cout, k, p, has_bias, input_grad in CONVS:
        def tensors(n: int = n, cin: int = cin, h: int = h, w: int = w, cout: int = cout, k: int = k,
                    has_bias: bool = has_bias) -> tuple[torch.Tensor, ...]:
            g = _gen()
            x, weight = _randn(n, cin, h, w, g=g), _randn(cout, cin, k, k, g=g)
            bias = _randn(cout, g=g) if has_bias else None
            return x, weight, bias

        def forward(p: int = p, tensors: Callable[[], tuple[torch.Tensor, ...]] = tensors) -> tuple[Fn, Fn] | None:
            op = catch_op("convolution")
            if op is None:
                return None
            x, weight, bias = tensors()
            args = ([1, 1], [p, p], [1, 1], False, [0, 0], 1)
            return (lambda: aten.convolution.default(x, weight, bias, *args)), (lambda: op(x, weight, bias, *args))

        def backward(p: int = p, tensors: Callable[[], tuple[torch.Tensor, ...]] = tensors, cout: int = cout,
                     has_bias: bool = has_bias, input_grad: bool = input_grad) -> tuple[Fn, Fn] | None:
            op = catch_op("convolution_backward")
            if op is None:
                return None
            x, weight, bias = tensors()
            args = ([1, 1], [p, p], [1, 1], False, [0, 0], 1)
            grad = torch.randn(aten.convolution.default(x, weight, bias, *args).shape, generator=_gen())
            mask = [input_grad, True, has_bias]
            bias_sizes = [cout] if has_bias else None
            return ((lambda: aten.convolution_backward.default(grad, x, weight, bias_sizes, *args, mask)),
                    (lambda: op(grad, x, weight, bias_sizes, *args, mask)))

        label = f"{n}x{cin}x{h}x{w} -> {cout}, {k}x{k} pad {p}"
        grads = "+".join(name for name, on in (("input", input_grad), ("weight", True), ("bias", has_bias)) if on)
        cases += [Case("conv", workload, label, "forward", forward),
                  Case("conv", workload, f"{label} ({grads} grads)", "backward", backward)]
    return cases


POOLS = [("digits CNN", 64, 32, 8, 8), ("run_all 28x28 CNN", 64, 32, 28, 28)]


def pool_cases() -> list[Case]:
    cases = []
    for workload, n, c, h, w in POOLS:
        def inputs(n: int = n, c: int = c, h: int = h, w: int = w) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            x = torch.relu(_randn(n, c, h, w, g=_gen()))  # after a ReLU, as in the models: many ties at 0
            values, indices = aten.max_pool2d_with_indices.default(x, [2, 2], [2, 2])
            return x, torch.randn(values.shape, generator=_gen()), indices

        def forward(inputs: Callable[[], tuple[torch.Tensor, ...]] = inputs) -> tuple[Fn, Fn] | None:
            op = catch_op("max_pool2d_with_indices")
            if op is None:
                return None
            x, _, _ = inputs()
            return ((lambda: aten.max_pool2d_with_indices.default(x, [2, 2], [2, 2])),
                    (lambda: op(x, [2, 2], [2, 2])))

        def backward() -> tuple[Fn, Fn] | None:
            return None  # torch_mlu::max_pool2d_with_indices_backward runs ATen's kernel: Catch's was removed

        def eager(inputs: Callable[[], tuple[torch.Tensor, ...]] = inputs) -> tuple[Fn, Fn] | None:
            if catch_op("max_pool2d_with_indices") is None:
                return None
            x, _, _ = inputs()
            d = x.to("mlu")

            def on_mlu() -> object:
                out = F.max_pool2d(d, 2, return_indices=True)
                torch.mlu.synchronize()
                return out

            return (lambda: F.max_pool2d(x, 2, return_indices=True)), on_mlu

        label = f"{n}x{c}x{h}x{w}, 2x2"
        cases += [Case("pool", workload, label, "forward", forward),
                  Case("pool", workload, label, "backward", backward),
                  Case("pool", workload, f"{label}, eager F.max_pool2d: mlu vs cpu", "forward", eager)]
    return cases


ATTENTION_SHAPES = [("bench_compile transformer block", 1, 4, 512, 16)] + [
    ("attention-sequences", b, h, t, d) for b, h, t, d in
    [(32, 4, 64, 16), (8, 4, 128, 16), (2, 4, 256, 16), (1, 8, 128, 64), (1, 4, 1024, 16)]]


def attention_cases() -> list[Case]:
    flash = aten._scaled_dot_product_flash_attention_for_cpu.default
    flash_backward = aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    cases = []
    for workload, b, h, t, d in ATTENTION_SHAPES:
        def qkv(b: int = b, h: int = h, t: int = t, d: int = d) -> tuple[torch.Tensor, ...]:
            g = _gen()
            return tuple(_randn(b, h, t, d, g=g) for _ in range(3))

        def forward(qkv: Callable[[], tuple[torch.Tensor, ...]] = qkv) -> tuple[Fn, Fn] | None:
            op = catch_op("attention")
            if op is None:
                return None
            q, k, v = qkv()
            return (lambda: flash(q, k, v)), (lambda: op(q, k, v))

        def backward(qkv: Callable[[], tuple[torch.Tensor, ...]] = qkv) -> tuple[Fn, Fn] | None:
            op = catch_op("attention_backward")
            if op is None:
                return None
            q, k, v = qkv()
            out, lse = flash(q, k, v)
            grad = torch.randn(out.shape, generator=_gen())
            return ((lambda: flash_backward(grad, q, k, v, out, lse, 0.0, False)),
                    (lambda: op(grad, q, k, v, out, lse)))

        def forward_probs(qkv: Callable[[], tuple[torch.Tensor, ...]] = qkv) -> tuple[Fn, Fn] | None:
            op = catch_op("attention_with_probs")
            if op is None:
                return None
            q, k, v = qkv()
            return (lambda: flash(q, k, v)), (lambda: op(q, k, v))

        def backward_probs(qkv: Callable[[], tuple[torch.Tensor, ...]] = qkv) -> tuple[Fn, Fn] | None:
            op, probs_op = catch_op("attention_backward_with_probs"), catch_op("attention_with_probs")
            if op is None or probs_op is None:
                return None
            q, k, v = qkv()
            out, lse = flash(q, k, v)
            probs = probs_op(q, k, v)[2]  # type: ignore[operator]
            grad = torch.randn(out.shape, generator=_gen())
            return ((lambda: flash_backward(grad, q, k, v, out, lse, 0.0, False)),
                    (lambda: op(grad, q, k, v, out, probs)))

        label = f"{b}x{h}x{t}x{d}"
        cases += [Case("attention", workload, label, "forward", forward),
                  Case("attention", workload, label, "backward", backward),
                  Case("attention_probs", workload, label, "forward", forward_probs),
                  Case("attention_probs", workload, label, "backward", backward_probs)]
    return cases


def all_cases() -> list[Case]:
    return gemm_cases() + linear_gelu_cases() + conv_cases() + pool_cases() + attention_cases()


# ---- timing --------------------------------------------------------------------------------------------------------
MIN_SAMPLE_S = 2e-3


def calls_per_sample(fn: Fn) -> int:
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, min(1000, math.ceil(MIN_SAMPLE_S / once)))


def interleaved(aten_fn: Fn, catch_fn: Fn, reps: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """Per-call seconds, (ATen wall, Catch wall, ATen thread CPU, Catch thread CPU), ``reps`` samples each, the
    sides alternating A B B A A B ... after two warm-up calls each."""
    for fn in (aten_fn, catch_fn, aten_fn, catch_fn):
        fn()
    number = min(calls_per_sample(aten_fn), calls_per_sample(catch_fn))
    wall: list[list[float]] = [[], []]
    cpu: list[list[float]] = [[], []]
    fns = (aten_fn, catch_fn)
    for rep in range(reps):
        for side in ((0, 1) if rep % 2 == 0 else (1, 0)):
            fn = fns[side]
            start, start_cpu = time.perf_counter(), time.thread_time()
            for _ in range(number):
                fn()
            wall[side].append((time.perf_counter() - start) / number)
            cpu[side].append((time.thread_time() - start_cpu) / number)
    return wall[0], wall[1], cpu[0], cpu[1]


def run_case(case: Case, reps: int, threads: int) -> Result:
    result = Result(case.kernel, case.workload, case.shape, case.direction, threads)
    made = case.make()
    if made is None:
        result.note = "removed: Catch's op is not built"
        return result
    aten_fn, catch_fn = made
    aw, cw, ac, cc = interleaved(aten_fn, catch_fn, reps)
    result.aten_ms, result.catch_ms = statistics.median(aw) * 1e3, statistics.median(cw) * 1e3
    result.aten_cpu_ms, result.catch_cpu_ms = statistics.median(ac) * 1e3, statistics.median(cc) * 1e3
    result.samples = reps
    return result


# ---- report --------------------------------------------------------------------------------------------------------
@dataclass
class Verdict:
    """One op of a kernel (its forward or its backward) at one thread count, over the shapes measured."""

    kernel: str
    direction: str
    threads: int
    lowest: float | None
    geomean: float | None
    lowest_cpu: float | None
    meets_bar: bool | None
    cases: int = 0
    removed: bool = False


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def verdicts(results: list[Result]) -> list[Verdict]:
    """Per kernel, direction and thread count: the lowest and the geometric-mean speedup over the shapes, and
    whether every shape reaches :data:`BAR` (the rule's condition (a)). The eager rows (mlu against CPU, host-call
    overhead included) are reported but not judged: the kernel rows are."""
    out = []
    for threads in sorted({r.threads for r in results}):
        for kernel in KERNELS:
            for direction in ("forward", "backward"):
                rows = [r for r in results if (r.kernel, r.direction, r.threads) == (kernel, direction, threads)
                        and "eager" not in r.shape]
                if not rows:
                    continue
                speedups = [r.speedup for r in rows if r.speedup is not None]
                cpu = [r.cpu_speedup for r in rows if r.cpu_speedup is not None]
                out.append(Verdict(kernel, direction, threads, min(speedups) if speedups else None,
                                   _geomean(speedups), min(cpu) if cpu else None,
                                   (min(speedups) >= BAR) if speedups else None, cases=len(speedups),
                                   removed=not speedups))
    return out


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def print_tables(results: list[Result], summary: list[Verdict]) -> None:
    console = Console(width=170)
    for threads in sorted({r.threads for r in results}):
        table = Table(title=f"Catch's host math vs ATen's CPU kernels, {threads} thread(s): median ms per call, "
                            f"speedup = ATen / Catch (bar {BAR})")
        for col in ("kernel", "workload", "shape", "dir", "ATen ms", "Catch ms", "speedup", "CPU-time speedup"):
            table.add_column(col, justify="left" if col in ("kernel", "workload", "shape", "dir") else "right")
        for r in results:
            if r.threads != threads:
                continue
            table.add_row(r.kernel, r.workload, r.shape, r.direction[:3], _fmt(r.aten_ms, ".3f"),
                          _fmt(r.catch_ms, ".3f"), _fmt(r.speedup), _fmt(r.cpu_speedup) if not r.note else r.note)
        console.print(table)
    table = Table(title=f"per kernel and direction: lowest / geometric-mean speedup over the shapes "
                        f"(bar: every shape >= {BAR})")
    for col in ("kernel", "dir", "threads", "shapes", "lowest", "geomean", "lowest (CPU time)", "meets the bar"):
        table.add_column(col, justify="left" if col in ("kernel", "dir") else "right")
    for v in summary:
        table.add_row(v.kernel, v.direction[:3], str(v.threads), str(v.cases), _fmt(v.lowest), _fmt(v.geomean),
                      _fmt(v.lowest_cpu), "removed" if v.removed else ("yes" if v.meets_bar else "no"))
    console.print(table)


def git_commit() -> str:
    out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=21, help="samples per side and case (default 21)")
    parser.add_argument("--threads", default="1,2", help="comma-separated torch.set_num_threads values (default 1,2)")
    parser.add_argument("--kernels", default=",".join(KERNELS), help=f"subset of {','.join(KERNELS)}")
    parser.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/host_math/<time>.json)")
    args = parser.parse_args(argv)
    wanted = {k.strip() for k in args.kernels.split(",") if k.strip()}
    unknown = wanted - set(KERNELS)
    if unknown:
        parser.error(f"--kernels: unknown {sorted(unknown)}; expected some of {', '.join(KERNELS)}")
    threads_list = [int(t) for t in args.threads.split(",") if t.strip()]

    # as in compiled groups (torch_mlu.compile.host_malloc): freed buffers stay in the heap, for both sides alike
    from torch_mlu.compile.host_malloc import keep_host_buffers
    keep_host_buffers()

    cases = [c for c in all_cases() if c.kernel in wanted]
    results: list[Result] = []
    loads = {}
    started = time.perf_counter()
    for threads in threads_list:
        torch.set_num_threads(threads)
        before = os.getloadavg()
        for case in cases:
            results.append(run_case(case, args.reps, threads))
        loads[str(threads)] = {"before": before, "after": os.getloadavg()}
    summary = verdicts(results)
    print_tables(results, summary)

    stamp = datetime.datetime.now(datetime.UTC)
    out = args.out or HERE / "results" / "host_math" / (stamp.strftime("%Y%m%dT%H%M%SZ") + ".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "benchmark": "bench_host_math",
        "commit": git_commit(),
        "time_utc": stamp.isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "reps": args.reps,
        "bar": BAR,
        "load_average": loads,
        "seconds": time.perf_counter() - started,
        "results": [asdict(r) | {"speedup": r.speedup, "cpu_speedup": r.cpu_speedup} for r in results],
        "verdicts": [asdict(v) for v in summary],
    }
    out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
