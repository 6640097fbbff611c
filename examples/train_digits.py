# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Train a small CNN on scikit-learn's digits (1,797 real 8x8 images) on ``--device mlu`` or ``cpu``.

Usage: python examples/train_digits.py --device mlu --seed 0 --epochs 12

The script is an ordinary CUDA-style PyTorch script with ``mlu`` for ``cuda``. Weights are initialised on the CPU
from ``--seed`` and moved to the device, batches are drawn from a CPU generator, so an mlu run and a cpu run with the
same seed see the same numbers. Prints ``step <n> loss <value>`` for every optimizer step and
``test accuracy <fraction>`` at the end.
"""

from __future__ import annotations

import argparse
import sys

import torch
from torch import nn


def load_data(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Digits as (N, 1, 8, 8) float32 in [0, 1] plus int64 labels; 80/20 split shuffled by ``seed``."""
    from sklearn.datasets import load_digits

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


def train(device: str, seed: int, epochs: int, steps: int | None, batch_size: int = 64,
          lr: float = 2e-3) -> tuple[list[float], float]:
    """Train and evaluate; returns (per-step losses, test accuracy in [0, 1])."""
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = load_data(seed)
    model = DigitsCNN().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    batch_gen = torch.Generator().manual_seed(seed + 1)
    x_dev, y_dev = x_train.to(device), y_train.to(device)
    losses: list[float] = []
    for _ in range(epochs):
        order = torch.randperm(len(y_train), generator=batch_gen).to(device)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x_dev[idx]), y_dev[idx])
            loss.backward()
            opt.step()
            losses.append(loss.item())
            print(f"step {len(losses)} loss {losses[-1]:.8f}", flush=True)
            if steps is not None and len(losses) >= steps:
                break
        if steps is not None and len(losses) >= steps:
            break
    model.eval()
    with torch.no_grad():
        pred = model(x_test.to(device)).argmax(dim=1).cpu()
    accuracy = (pred == y_test).float().mean().item()
    return losses, accuracy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="mlu", help="mlu, mlu:1, cpu ... (default: mlu)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--steps", type=int, default=None, help="stop after this many optimizer steps")
    args = parser.parse_args(argv)
    try:
        dev = torch.device(args.device)
    except RuntimeError as exc:
        print(f"error: --device {args.device}: {exc}", file=sys.stderr)
        return 2
    if dev.type == "mlu" and not hasattr(torch, "mlu"):
        print("error: --device mlu: torch_mlu is not installed (pip install ./catch)", file=sys.stderr)
        return 2
    _, accuracy = train(args.device, args.seed, args.epochs, args.steps)
    print(f"test accuracy {accuracy:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
