# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Profiler on mlu: top ops by device time for one digits training step, and the profiling overhead.

Usage: python benchmarks/bench_profiler.py [--steps N]

Runs the digits CNN (examples/train_digits.py, real scikit-learn digits) on mlu; prints the profiler table of one
step under ``torch.autograd.profiler.profile(use_device="mlu", use_kineto=False)`` (PyTorch's PrivateUse1 device-time
path, served by catch/csrc/aten/profiler_stubs.cpp), checks every device time is >= 0, and prints the ratio of the
profiled to the unprofiled step time, both measured in this run (best of ``--steps`` steps each). Target: <= 2x.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from train_digits import DigitsCNN, load_data  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    x_train, y_train, _, _ = load_data(0)
    x, y = x_train[:64].to("mlu"), y_train[:64].to("mlu")
    model = DigitsCNN().to("mlu")
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step() -> float:
        start = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch.mlu.synchronize()
        return time.perf_counter() - start

    for _ in range(3):
        step()
    plain = min(step() for _ in range(args.steps))
    profiled = []
    for _ in range(args.steps):
        with torch.autograd.profiler.profile(use_device="mlu", use_kineto=False) as prof:
            profiled.append(step())
    events = prof.key_averages()
    print(events.table(sort_by="self_device_time_total", row_limit=12))
    worst = min(min(e.self_device_time_total, e.device_time_total) for e in events)
    ratio = min(profiled) / plain
    print(f"min device time: {worst:.1f} us (must be >= 0)")
    print(f"step: {plain * 1e3:.2f} ms unprofiled, {min(profiled) * 1e3:.2f} ms profiled: overhead {ratio:.2f}x "
          f"(target <= 2x)")
    return 0 if worst >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
