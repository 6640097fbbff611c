# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark Inductor's C++ wrapper on mlu against its Python wrapper, measured in one run.

Usage: python benchmarks/bench_cpp_wrapper.py [--reps N] [--threads N]

Models (inference, ``torch.no_grad``): the digits CNN of examples/train_digits.py (batch 64) and an MLP
(784 -> 256 -> 256 -> 10, batch 64). Per model, ``torch.compile(model)`` (Inductor's default Python wrapper for
mlu, the baseline) and ``torch.compile(model, options={"cpp_wrapper": True})``. Calls take turns in rounds
(:func:`bench_compile.median_ms`); the numbers are medians of ``--reps`` calls, in milliseconds of wall time and of
process CPU time, and ratios are C++ wrapper / Python wrapper.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_compile import digits_cnn, median_ms  # noqa: E402


def mlp() -> nn.Module:
    """784 -> 256 -> 256 -> 10 with ReLU."""
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def workloads() -> dict[str, tuple[nn.Module, torch.Tensor]]:
    """name -> (model on mlu in eval mode, input batch on mlu), seeded."""
    torch.manual_seed(0)
    return {"digits CNN": (digits_cnn().to("mlu").eval(), torch.randn(64, 1, 8, 8).to("mlu")),
            "MLP": (mlp().to("mlu").eval(), torch.randn(64, 784).to("mlu"))}


def _infer(fn: Callable[[torch.Tensor], object], x: torch.Tensor) -> None:
    with torch.no_grad():
        fn(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    table = Table(title=f"C++ wrapper vs Python wrapper on mlu, inference ({args.threads} thread(s))")
    for column in ("model", "measure", "python wrapper", "cpp_wrapper", "ratio"):
        table.add_column(column)
    for name, (model, x) in workloads().items():
        python = torch.compile(model)
        cpp = torch.compile(model, options={"cpp_wrapper": True})
        times = median_ms({"python": partial(_infer, python, x), "cpp": partial(_infer, cpp, x)}, args.reps)
        for i, unit in enumerate(("wall", "CPU")):
            base, value = times["python"][i], times["cpp"][i]
            table.add_row(name, f"per call, {unit} ms", f"{base:.3f}", f"{value:.3f}", f"{value / base:.2f}x")
    Console().print(table)


if __name__ == "__main__":
    main()
