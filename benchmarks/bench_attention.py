# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark Catch's attention kernels against ATen's CPU flash attention, per shape, measured in one run.

Usage: python benchmarks/bench_attention.py [--reps N] [--threads N]

For each (batch, heads, tokens, head_dim) it times ``torch.ops.torch_mlu.attention`` / ``attention_backward``,
``attention_with_probs`` / ``attention_backward_with_probs`` (the pair compiled training graphs use, which keeps P
for the backward: ``torch_mlu.compile.saved_probs``) and ``aten._scaled_dot_product_flash_attention_for_cpu`` /
``_backward`` on the same float32 CPU tensors (the host views compiled fusion groups run them on), interleaved, and
prints the median milliseconds and the ratios Catch / flash.
Heads whose dims are whole 16-float vectors (all of the shapes below) run on Catch's register-tiled path at any
size. Other heads below the GEMM path's thresholds (``kMinHeadMacsForward`` / ``kMinHeadMacsBackward`` in
``catch/csrc/kernels/attention.cpp``) are routed to flash by the kernel itself, so their ratio is about 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import torch
from rich.console import Console
from rich.table import Table

import torch_mlu  # noqa: F401  (the torch_mlu ops)
from torch_mlu.compile.host_malloc import keep_host_buffers

SHAPES = [(32, 4, 64, 16), (8, 4, 128, 16), (2, 4, 256, 16), (1, 8, 128, 64), (1, 4, 512, 16), (1, 4, 1024, 16)]


def medians(fns: dict[str, Callable[[], object]], reps: int) -> dict[str, float]:
    """name -> median ms per call, the functions interleaved ``reps`` times after two warm-up calls each."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
        fn()
    for _ in range(reps):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(t) for name, t in times.items()}


def time_shape(b: int, h: int, t: int, d: int, reps: int) -> tuple[dict[str, float], dict[str, float]]:
    """(forward, backward) medians in ms of flash and Catch for seeded (b, h, t, d) float32 q, k, v."""
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    flash_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    catch, catch_backward = torch.ops.torch_mlu.attention.default, torch.ops.torch_mlu.attention_backward.default
    with_probs = torch.ops.torch_mlu.attention_with_probs.default
    backward_with_probs = torch.ops.torch_mlu.attention_backward_with_probs.default
    torch.manual_seed(0)
    q, k, v = (torch.randn(b, h, t, d) for _ in range(3))
    out, lse = flash(q, k, v)
    probs = with_probs(q, k, v)[2]
    grad = torch.randn_like(out)
    fwd = medians({"flash": lambda: flash(q, k, v), "catch": lambda: catch(q, k, v),
                   "catch, P kept": lambda: with_probs(q, k, v)}, reps)
    bwd = medians({"flash": lambda: flash_backward(grad, q, k, v, out, lse, 0.0, False),
                   "catch": lambda: catch_backward(grad, q, k, v, out, lse),
                   "catch, P kept": lambda: backward_with_probs(grad, q, k, v, out, probs)}, reps)
    return fwd, bwd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=30, help="timed repetitions per case (default 30)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    keep_host_buffers()  # as in compiled groups: score buffers are reused, not page-faulted in per call
    table = Table(title=f"attention: Catch vs ATen flash (median of {args.reps}, ms; {args.threads} threads)")
    for col in ("batch x heads x tokens x dim", "macs/head", "flash fwd", "catch fwd", "ratio", "P kept", "ratio ",
                "flash bwd", "catch bwd", "ratio  ", "from P", "ratio   "):
        table.add_column(col, justify="left" if col.startswith("batch") else "right")
    for b, h, t, d in SHAPES:
        fwd, bwd = time_shape(b, h, t, d, args.reps)
        cells = [f"{b} x {h} x {t} x {d}", f"{t * t * d:,}"]
        for times in (fwd, bwd):
            cells.append(f"{times['flash']:.3f}")
            for name in ("catch", "catch, P kept"):
                cells += [f"{times[name]:.3f}", f"{times[name] / times['flash']:.2f}"]
        table.add_row(*cells)
    Console(width=160).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
