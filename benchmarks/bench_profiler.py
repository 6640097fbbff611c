# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Profiler on mlu: top ops by device time for one digits training step, and the profiling overhead.

Usage: python benchmarks/bench_profiler.py [--steps N]

Runs the digits CNN (examples/train_digits.py, real scikit-learn digits) on mlu and profiles one training step two
ways: ``torch.profiler.profile(activities=[CPU, PrivateUse1])`` (Kineto; mlu kernels reported by our activity
profiler, catch/csrc/profiler/kineto.cpp) and ``torch.autograd.profiler.profile(use_device="mlu",
use_kineto=False)`` (PyTorch's legacy PrivateUse1 device-time path, catch/csrc/profiler/stubs.cpp). For each it
prints the table of top ops by device time, checks every device time is >= 0, and prints the ratio of the profiled to
the unprofiled step time, all measured in this run (best of ``--steps`` steps each) with the load average. Target:
<= 2x.
"""

from __future__ import annotations

import argparse
import os
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

    def kineto():
        return torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.PrivateUse1])

    def legacy():
        return torch.autograd.profiler.profile(use_device="mlu", use_kineto=False)

    def profiled_step(make) -> tuple[float, object]:
        with make() as prof:
            t = step()
        return t, prof

    for _ in range(3):
        step()
    # Interleaved (plain, Kineto, legacy, plain, ...) so that load from other processes hits all three alike.
    times: dict[str, list[float]] = {"plain": [], "kineto": [], "legacy": []}
    profs: dict[str, object] = {}
    for _ in range(args.steps):
        times["plain"].append(step())
        for name, make in (("kineto", kineto), ("legacy", legacy)):
            t, profs[name] = profiled_step(make)
            times[name].append(t)
    plain = min(times["plain"])
    ok = True
    for name, label in (("kineto", "torch.profiler (Kineto, CPU + PrivateUse1)"),
                        ("legacy", 'autograd.profiler(use_device="mlu", use_kineto=False)')):
        events = profs[name].key_averages()  # type: ignore[attr-defined]
        print(f"== {label}: top ops by device time, one step")
        print(events.table(sort_by="self_device_time_total", row_limit=12))
        worst = min(min(e.self_device_time_total, e.device_time_total) for e in events)
        # the op rows (Kineto also lists each op's kernels as "mlu_kernel: <op>" rows)
        total = sum(e.self_device_time_total for e in events if not e.key.startswith("mlu_kernel"))
        ratio = min(times[name]) / plain
        ok = ok and worst >= 0 and total > 0
        print(f"min device time: {worst:.1f} us (must be >= 0); self device time of the ops {total / 1e3:.2f} ms")
        print(f"step (best of {args.steps}, interleaved): {plain * 1e3:.2f} ms unprofiled, "
              f"{min(times[name]) * 1e3:.2f} ms profiled: overhead {ratio:.2f}x (target <= 2x); "
              f"load average {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
