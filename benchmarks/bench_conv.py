# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark Catch's convolution kernels against ATen's (oneDNN), per layer, measured in one run.

Usage: python benchmarks/bench_conv.py [--reps N] [--threads N]

For each layer (batch, in channels, height, width, out channels, kernel, padding; stride 1) it times
``torch.ops.torch_mlu.convolution`` / ``convolution_backward`` (all three gradients) against ``aten.convolution`` /
``convolution_backward`` on the same seeded float32 CPU tensors, interleaved, and prints the median milliseconds and
the ratios Catch / ATen. The op picks its kernel by the layer (``catch/csrc/kernels/conv.cpp``), named in the
table: Winograd F(2x2, 3x3) for 3x3 kernels with padding up to 2 and more than 32 input taps, im2col products for
the others; the direct kernel (a first layer's forward) is the one in the first row.
"""

from __future__ import annotations

import argparse
import sys

import torch
from rich.console import Console
from rich.table import Table

import torch_mlu  # noqa: F401  (the torch_mlu ops)
from bench_attention import medians  # the same interleaved medians

# (batch, cin, h, w, cout, kernel, padding): the digits CNN's two layers (examples/train_digits.py), a 3x3 layer
# without padding, a 5x5 layer (im2col), and a ResNet-like 3x3 layer.
LAYERS = [(64, 1, 8, 8, 16, 3, 1), (64, 16, 8, 8, 32, 3, 1), (64, 16, 8, 8, 32, 3, 0), (4, 16, 28, 28, 32, 5, 2),
          (2, 64, 56, 56, 64, 3, 1)]


def kernel_name(cin: int, k: int, padding: int) -> str:
    """Which of Catch's kernels the layer's forward runs on (the rule of conv.cpp)."""
    if cin * k * k <= 32:
        return "direct"
    return "winograd" if k == 3 and padding <= 2 else "im2col"


def time_layer(layer: tuple[int, ...], reps: int) -> dict[str, float]:
    """Medians in ms of ATen's and Catch's forward and backward for one layer."""
    n, cin, h, w, cout, k, p = layer
    torch.manual_seed(0)
    x, weight, bias = torch.randn(n, cin, h, w), torch.randn(cout, cin, k, k), torch.randn(cout)
    args = ([1, 1], [p, p], [1, 1], False, [0, 0], 1)
    grad = torch.randn(torch.ops.aten.convolution(x, weight, bias, *args).shape)
    aten, catch = torch.ops.aten, torch.ops.torch_mlu
    mask = [True, True, True]
    return medians({
        "aten forward": lambda: aten.convolution(x, weight, bias, *args),
        "catch forward": lambda: catch.convolution(x, weight, bias, *args),
        "aten backward": lambda: aten.convolution_backward(grad, x, weight, [cout], *args, mask),
        "catch backward": lambda: catch.convolution_backward(grad, x, weight, [cout], *args, mask),
    }, reps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=50, help="timed repetitions per case (default 50)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    table = Table(title=f"convolution: Catch vs ATen (median of {args.reps}, ms; {torch.get_num_threads()} threads)")
    for col in ("layer", "kernel", "ATen fwd", "Catch fwd", "ratio", "ATen bwd", "Catch bwd", "ratio"):
        table.add_column(col, justify="left" if col in ("layer", "kernel") else "right")
    for layer in LAYERS:
        n, cin, h, w, cout, k, p = layer
        t = time_layer(layer, args.reps)
        table.add_row(f"{n}x{cin}x{h}x{w} -> {cout}, {k}x{k} pad {p}", kernel_name(cin, k, p),
                      f"{t['aten forward']:.3f}", f"{t['catch forward']:.3f}",
                      f"{t['catch forward'] / t['aten forward']:.2f}", f"{t['aten backward']:.3f}",
                      f"{t['catch backward']:.3f}", f"{t['catch backward'] / t['aten backward']:.2f}")
    Console(width=140).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
