# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark the mlu backend against the CPU, measured in one run.

Usage: python benchmarks/bench_backend.py [--quick]

Prints mlu/cpu time ratios for: a small elementwise op (64 elements), a large elementwise op (16M elements), a
1024x1024 matmul, a conv2d forward, one full training step of the digits CNN (examples/train_digits.py), and the
time of ``import torch`` with the mlu autoload vs ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` (best of alternating fresh
processes). Targets: training step
<= 1.10x, small op <= 1.5x, autoload import <= +15%. Each number is the best of several repeats (seconds per call).

The cpu baseline runs in this process, where torch_mlu is loaded (its CPU-allocator shim costs one thread-local
check per CPU allocation); the small op is also timed in a process without the backend, printed as
"cpu (no backend)", so that cost is visible.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]


def best_time(fn: Callable[[], object], number: int, repeat: int, sync: bool) -> float:
    """Best mean seconds per call of ``fn`` over ``repeat`` runs of ``number`` calls (mlu: synchronized)."""
    fn()
    if sync:
        torch.mlu.synchronize()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if sync:
            torch.mlu.synchronize()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def pair(make: Callable[[str], Callable[[], object]], number: int, repeat: int) -> tuple[float, float]:
    """(cpu seconds, mlu seconds) for the workload ``make(device)``; runs interleaved to share machine noise."""
    cpu_fn, mlu_fn = make("cpu"), make("mlu")
    cpu_times, mlu_times = [], []
    for _ in range(3):
        cpu_times.append(best_time(cpu_fn, number, repeat, sync=False))
        mlu_times.append(best_time(mlu_fn, number, repeat, sync=True))
    return min(cpu_times), min(mlu_times)


def elementwise(n: int) -> Callable[[str], Callable[[], object]]:
    def make(device: str) -> Callable[[], object]:
        a = torch.randn(n, generator=torch.Generator().manual_seed(0)).to(device)
        return lambda: a + a
    return make


def matmul(device: str) -> Callable[[], object]:
    a = torch.randn(1024, 1024, generator=torch.Generator().manual_seed(0)).to(device)
    return lambda: a @ a


def conv2d(device: str) -> Callable[[], object]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 32, 32, 32, generator=g).to(device)
    w = torch.randn(64, 32, 3, 3, generator=g).to(device)
    return lambda: torch.nn.functional.conv2d(x, w, padding=1)


def train_step(device: str) -> Callable[[], object]:
    sys.path.insert(0, str(REPO / "examples"))
    from train_digits import DigitsCNN, load_data

    torch.manual_seed(0)
    x, y, _, _ = load_data(0)
    model = DigitsCNN().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    xb, yb = x[:64].to(device), y[:64].to(device)

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def import_times(repeat: int) -> tuple[float, float]:
    """Best wall seconds of ``python -c "import torch"`` in fresh processes, (autoload off, autoload on); the two
    variants alternate so machine noise hits both alike."""
    best = {False: float("inf"), True: float("inf")}
    for _ in range(repeat):
        for autoload in (False, True):
            env = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "1" if autoload else "0", "PATH": "/usr/bin:/bin"}
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import torch"], check=True, env=env)
            best[autoload] = min(best[autoload], time.perf_counter() - start)
    return best[False], best[True]


def small_op_without_backend() -> float:
    code = ("import time, torch\na = torch.randn(64)\nbest = 1e9\nfor _ in range(15):\n"
            "    t = time.perf_counter()\n    for _ in range(20000):\n        a + a\n"
            "    best = min(best, (time.perf_counter() - t) / 20000)\nprint(best)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "PATH": "/usr/bin:/bin"})
    return float(out.stdout.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    args = parser.parse_args(argv)
    r = 2 if args.quick else 5
    torch.set_num_threads(torch.get_num_threads())

    rows: list[tuple[str, float, float, str]] = []
    cpu, mlu = pair(elementwise(64), 20000, r)
    rows.append(("add, 64 elements", cpu, mlu, "<= 1.5x"))
    rows.append(("add, 64 elements; cpu (no backend)", small_op_without_backend(), mlu, "<= 1.5x"))
    cpu, mlu = pair(elementwise(16 * 2**20), 5, r)
    rows.append(("add, 16M elements", cpu, mlu, ""))
    cpu, mlu = pair(matmul, 5, r)
    rows.append(("matmul 1024x1024", cpu, mlu, ""))
    cpu, mlu = pair(conv2d, 5, r)
    rows.append(("conv2d 8x32x32x32, 64 3x3", cpu, mlu, ""))
    cpu, mlu = pair(train_step, 20, r)
    rows.append(("digits CNN training step", cpu, mlu, "<= 1.10x"))
    without, with_ = import_times(r + 2)
    rows.append(("import torch (autoload vs off)", without, with_, "<= 1.15x"))

    table = Table(title="Catch backend: mlu / cpu (best of repeats, one run)")
    for col in ("workload", "cpu / baseline", "mlu", "ratio", "target"):
        table.add_column(col)
    for name, base, dev, target in rows:
        table.add_row(name, f"{base * 1e3:.4f} ms", f"{dev * 1e3:.4f} ms", f"{dev / base:.2f}x", target)
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
