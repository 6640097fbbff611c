# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark AOTInductor and Inductor's C++ wrapper on mlu against the Python wrapper, measured in one run.

Usage: python benchmarks/bench_cpp_wrapper.py [--reps N] [--threads N]

Models (inference, ``torch.no_grad``): the digits CNN of examples/train_digits.py (batch 64) and an MLP
(784 -> 256 -> 256 -> 10, batch 64). Per model, three forms of the same compiled graph:

- ``python wrapper`` (baseline): ``torch.compile(model)``, Inductor's default Python wrapper for mlu;
- ``cpp_wrapper``: ``torch.compile(model, options={"cpp_wrapper": True})``;
- ``AOTI package``: ``aoti_load_package`` of ``aoti_compile_and_package(torch.export.export(model, ...))``.

Calls take turns in rounds (:func:`bench_compile.median_ms`); the numbers are medians of ``--reps`` calls, in
milliseconds of wall time and of process CPU time, and ratios are ours / the Python wrapper. The package's load
time (``aoti_load_package``, median of 5 loads) is compared with a first call of ``torch.compile(model)`` in this
process after the FX graph cache was filled (what a warm start of the Python wrapper costs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
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


def package(model: nn.Module, x: torch.Tensor, directory: str) -> str:
    """The path of the AOTInductor package of ``model`` for inputs like ``x``."""
    path = str(Path(directory) / "model.pt2")
    return torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)), package_path=path)


def load_ms(path: str, loads: int = 5) -> float:
    """Median milliseconds of ``aoti_load_package(path)``."""
    times = []
    for _ in range(loads):
        start = time.perf_counter()
        torch._inductor.aoti_load_package(path)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def warm_compile_ms(model: nn.Module, x: torch.Tensor) -> float:
    """Milliseconds of the first call of a fresh ``torch.compile(model)`` with the FX graph cache warm."""
    torch._dynamo.reset()
    start = time.perf_counter()
    with torch.no_grad():
        torch.compile(model)(x)
    torch.mlu.synchronize()
    return (time.perf_counter() - start) * 1e3


def _infer(fn: Callable[[torch.Tensor], object], x: torch.Tensor) -> None:
    with torch.no_grad():
        fn(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    table = Table(title=f"AOTInductor / C++ wrapper vs Python wrapper on mlu ({args.threads} thread(s))")
    for column in ("model", "measure", "python wrapper", "ours", "ratio"):
        table.add_column(column)
    with tempfile.TemporaryDirectory() as directory:
        for name, (model, x) in workloads().items():
            python = torch.compile(model)
            cpp = torch.compile(model, options={"cpp_wrapper": True})
            packaged = torch._inductor.aoti_load_package(package(model, x, directory))

            times = median_ms({"python": partial(_infer, python, x), "cpp": partial(_infer, cpp, x),
                               "aoti": partial(_infer, packaged, x)}, args.reps)
            for ours in ("cpp", "aoti"):
                label = "cpp_wrapper" if ours == "cpp" else "AOTI package"
                for i, unit in enumerate(("wall", "CPU")):
                    base, value = times["python"][i], times[ours][i]
                    table.add_row(name, f"{label} per call, {unit} ms", f"{base:.3f}", f"{value:.3f}",
                                  f"{value / base:.2f}x")
            loaded = load_ms(str(Path(directory) / "model.pt2"))
            warm = warm_compile_ms(model, x)
            table.add_row(name, "package load / warm torch.compile first call, ms", f"{warm:.1f}", f"{loaded:.1f}",
                          f"{loaded / warm:.2f}x")
    Console().print(table)


if __name__ == "__main__":
    main()
