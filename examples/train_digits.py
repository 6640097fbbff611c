# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Train a small CNN on scikit-learn's digits (1,797 real 8x8 images) on ``--device mlu``, ``cpu`` or ``both``.

Usage: python examples/train_digits.py --device mlu --seed 0 --epochs 12

The script is an ordinary CUDA-style PyTorch script with ``mlu`` for ``cuda``. Weights are initialised on the CPU
from ``--seed`` and moved to the device, batches are drawn from a CPU generator, so an mlu run and a cpu run with the
same seed see the same numbers. On one device it prints ``step <n> loss <value>`` every ``--log-every`` optimizer
steps (default: every step) and ``test accuracy <fraction>`` at the end; with several devices (``--device both``)
each line is tagged ``[mlu]``/``[cpu]`` and a table gives the loss, accuracy and time per step side by side. The
full record goes to ``--result`` (JSON).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _demo import (  # noqa: E402
    StepTimer,
    add_common_args,
    apply_threads,
    check_positive,
    emit_result,
    fallbacks,
    load_digits,
    parse_devices,
    print_summary,
    reset_fallbacks,
    run,
    say,
)


def load_data(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Digits as (N, 1, 8, 8) float32 in [0, 1] plus int64 labels; 80/20 split shuffled by ``seed``."""
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.int64)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    n_train = int(0.8 * len(y))
    train, test = perm[:n_train], perm[n_train:]
    return x[train], y[train], x[test], y[test]


class DigitsCNN(nn.Module):
    """conv(1->16) relu conv(16->32) relu maxpool(2) linear(512->64) relu linear(64->10)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def train(device: str | torch.device, seed: int, epochs: int, steps: int | None, batch_size: int = 64,
          lr: float = 2e-3, log_every: int = 1, tag: bool = False) -> tuple[list[float], float, float]:
    """Train and evaluate; returns (per-step losses, test accuracy in [0, 1], median ms per optimizer step).

    Prints ``step <n> loss <value>`` every ``log_every`` steps (prefixed ``[<device>]`` when ``tag``).
    """
    device = torch.device(device)
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = load_data(seed)
    model = DigitsCNN().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    batch_gen = torch.Generator().manual_seed(seed + 1)
    x_dev, y_dev = x_train.to(device), y_train.to(device)
    losses: list[float] = []
    timer = StepTimer(device)
    for _ in range(epochs):
        order = torch.randperm(len(y_train), generator=batch_gen).to(device)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            with timer.step():
                opt.zero_grad(set_to_none=True)
                loss = loss_fn(model(x_dev[idx]), y_dev[idx])
                loss.backward()
                opt.step()
            losses.append(loss.item())
            if len(losses) % log_every == 0 or len(losses) == 1:
                line = f"step {len(losses)} loss {losses[-1]:.8f}"
                say(device, line) if tag else print(line, flush=True)
            if steps is not None and len(losses) >= steps:
                break
        if steps is not None and len(losses) >= steps:
            break
    model.eval()
    with torch.no_grad():
        pred = model(x_test.to(device)).argmax(dim=1).cpu()
    accuracy = (pred == y_test).float().mean().item()
    return losses, accuracy, timer.ms_per_step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser, steps=None, device="mlu", log_every=1)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate (default: 2e-3)")
    args = parser.parse_args(argv)
    devices = parse_devices(args.device)
    apply_threads(args.threads)
    check_positive(epochs=args.epochs, batch_size=args.batch_size, log_every=args.log_every)
    if args.steps is not None:
        check_positive(steps=args.steps)
    runs = []
    tag = len(devices) > 1
    for device in devices:
        reset_fallbacks(device)
        losses, accuracy, ms = train(device, args.seed, args.epochs, args.steps, args.batch_size, args.lr,
                                     args.log_every, tag)
        line = f"test accuracy {accuracy:.4f}"
        say(device, line) if tag else print(line, flush=True)
        runs.append({"device": str(device), "steps": len(losses), "losses": losses, "first_loss": losses[0],
                     "final_loss": losses[-1], "test_accuracy": accuracy, "ms_per_step": ms,
                     "fallback_ops": fallbacks(device)})
    print_summary("Digits CNN", runs, [("first_loss", "first loss", ".4f"), ("final_loss", "last loss", ".4f"),
                                       ("test_accuracy", "test acc", ".4f"), ("ms_per_step", "ms/step", ".2f")])
    emit_result("train_digits", args.seed, runs, args.result)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
