# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark graph mode on mlu: ``torch.compile(model, backend="mlu")`` against eager mlu, measured in one run.

Usage: python benchmarks/bench_compile.py [--reps N] [--threads N]

Models: the digits CNN of examples/train_digits.py (batch 64) and :class:`TransformerBlock` (pre-norm attention +
GELU MLP, 64 features, 4 heads, 1 x 512 tokens: attention-bound, where fusion matters). For each model it times
inference (``torch.no_grad`` forward) and one training step (forward, cross-entropy / mean loss, backward, SGD
step), eager and compiled, taking turns in short runs of consecutive calls so both see the same machine noise
(:func:`median_ms`). Compilation and warm-up calls are
excluded; each number is the median over ``--reps`` repetitions, in milliseconds of wall time and of process CPU
time (the latter is steadier on a shared machine); ratios are compiled / eager (target: <= 0.8 on the transformer
block). ``--threads`` sets ``torch.set_num_threads`` for both (default 1: eager mlu kernels and
generated kernels then both run on one core; the autograd engine's mlu thread inherits the setting).

Run with ``CATCH_FUSE_KERNELS=aten`` to time the compiled models with Inductor's partitioning alone
(``torch_mlu.compile.kernels``).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import cast

import torch
import torch.nn.functional as F
from rich.console import Console
from rich.table import Table
from torch import nn

REPO = Path(__file__).resolve().parents[1]


class TransformerBlock(nn.Module):
    """Pre-norm transformer block: x + attn(ln1(x)); x + mlp(ln2(x)). Input/output (batch, tokens, dim)."""

    def __init__(self, dim: int = 64, heads: int = 4, hidden: int = 256) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(d, dim=-1))
        att = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        y = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def digits_cnn() -> nn.Module:
    """The model of examples/train_digits.py."""
    sys.path.insert(0, str(REPO / "examples"))
    try:
        from train_digits import DigitsCNN
    finally:
        sys.path.pop(0)
    return DigitsCNN()


def workloads(device: str) -> dict[str, tuple[nn.Module, torch.Tensor, Callable[[torch.Tensor], torch.Tensor]]]:
    """name -> (model on ``device``, input batch, loss of the model output) with seeded weights and data."""
    torch.manual_seed(0)
    cnn = digits_cnn().to(device)
    labels = torch.randint(0, 10, (64,)).to(device)
    block = TransformerBlock().to(device)
    return {
        "digits CNN": (cnn, torch.rand(64, 1, 8, 8).to(device), lambda out: F.cross_entropy(out, labels)),
        "transformer block": (block, torch.randn(1, 512, 64).to(device), lambda out: out.square().mean()),
    }


def median_ms(fns: dict[str, Callable[[], object]], reps: int, block: int = 5) -> dict[str, tuple[float, float]]:
    """name -> (median wall ms, median process CPU ms) per call, over ``reps`` timed calls of each function after
    two warm-up calls each (the first compiles).

    The functions take turns in rounds, so they share the machine's drift. In each round every function runs once
    untimed and then ``block`` timed calls in a row: a timed call always follows a call of the same function, as a
    training loop's steps follow each other. Alternating single calls instead made each function pay for the caches
    that the other had just filled with its own data: of two copies of one compiled model, the copy timed right
    after eager measured several percent slower than the copy timed after it.
    """
    wall: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
        fn()
    torch.mlu.synchronize()
    while any(len(wall[name]) < reps for name in fns):
        for name, fn in fns.items():
            fn()
            torch.mlu.synchronize()
            for _ in range(min(block, reps - len(wall[name]))):
                start, start_cpu = time.perf_counter(), time.process_time()
                fn()
                torch.mlu.synchronize()
                wall[name].append((time.perf_counter() - start) * 1e3)
                cpu[name].append((time.process_time() - start_cpu) * 1e3)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in fns}


def add_row(table: Table, model: str, case: str, t: dict[str, tuple[float, float]]) -> None:
    (eager, eager_cpu), (comp, comp_cpu) = t["eager"], t["compiled"]
    table.add_row(model, case, f"{eager:.3f}", f"{comp:.3f}", f"{comp / eager:.2f}", f"{eager_cpu:.3f}",
                  f"{comp_cpu:.3f}", f"{comp_cpu / eager_cpu:.2f}")


def train_step(model: Callable[[torch.Tensor], torch.Tensor], opt: torch.optim.Optimizer, x: torch.Tensor,
               loss_fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[], object]:
    def step() -> object:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x))
        loss.backward()
        opt.step()
        return loss

    return step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=30, help="timed repetitions per case (default 30)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads for both (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    import torch_mlu.compile  # noqa: F401  (the backend; also reachable as backend="mlu" through its entry point)

    table = Table(title=f"graph mode vs eager on mlu (median of {args.reps}, ms; {torch.get_num_threads()} threads)")
    for col in ("model", "case", "eager", "compiled", "compiled/eager", "eager CPU", "compiled CPU", "CPU ratio"):
        table.add_column(col, justify="left" if col in ("model", "case") else "right")
    for name, (model, x, loss_fn) in workloads("mlu").items():
        eager_model = copy.deepcopy(model)
        infer_model = torch.compile(copy.deepcopy(model).eval(), backend="mlu")
        eager_model.eval()
        with torch.no_grad():
            add_row(table, name, "inference",
                    median_ms({"eager": partial(eager_model, x), "compiled": partial(infer_model, x)}, args.reps))
        eager_model.train()
        train_model = cast(nn.Module, torch.compile(copy.deepcopy(model), backend="mlu"))
        steps = {
            "eager": train_step(eager_model, torch.optim.SGD(eager_model.parameters(), lr=1e-3), x, loss_fn),
            "compiled": train_step(train_model, torch.optim.SGD(train_model.parameters(), lr=1e-3), x, loss_fn),
        }
        add_row(table, name, "training step", median_ms(steps, args.reps))
    Console(width=160).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
