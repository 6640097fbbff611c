# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Train a small ResNet (residual blocks with BatchNorm) on scikit-learn's digits, on mlu and on cpu.

Usage: python examples/resnet_digits.py [--device both|mlu|cpu] [--steps 150] [--seed 0]

The 1,797 real 8x8 digit images are upsampled to 16x16 inside the network and go through three stages of basic
residual blocks (16, 32, 64 channels; 16x16 -> 8x8 -> 4x4), global average pooling and a linear classifier. Weights
are initialised on the CPU from ``--seed`` and batches come from a CPU generator, so every device trains on the same
numbers: with the emulated mlu the per-step losses match the cpu run. After training, BatchNorm's running
statistics are recomputed over the training set (``torch.optim.swa_utils.update_bn``) before the test.

Prints the training loss every ``--log-every`` steps, then per device the test loss, test accuracy and median
milliseconds per optimizer step, a summary table and the line naming the result file (``--result``, JSON).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812  (PyTorch's usual alias)

from _demo import (
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


def load_digits_split(seed: int, test_fraction: float = 0.2) -> tuple[torch.Tensor, ...]:
    """scikit-learn digits as ``(x_train, y_train, x_test, y_test)``.

    ``x`` is float32 (N, 1, 8, 8) scaled to [0, 1] (the raw pixels are 0..16), ``y`` int64 (N,) in 0..9; the split is
    a permutation drawn from ``seed`` (1,437 train / 360 test images with the default fraction).
    """
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.int64)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    n_test = int(round(test_fraction * len(y)))
    test, train = perm[:n_test], perm[n_test:]
    return x[train], y[train], x[test], y[test]


class BasicBlock(nn.Module):
    """conv3x3-BN-ReLU-conv3x3-BN plus the identity (or a strided 1x1 conv + BN when the shape changes), then ReLU.

    The block of He et al., "Deep Residual Learning for Image Recognition" (2015), as in torchvision's ResNet-18.
    """

    def __init__(self, in_ch: int, out_ch: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        nn.init.zeros_(self.bn2.weight)  # each block starts as the identity ("zero-init residual")
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class DigitsResNet(nn.Module):
    """(N, 1, 8, 8) in [0, 1] -> (N, 10) logits: bilinear 2x upsample, stem, 3 stages of 2 blocks, pool, linear."""

    def __init__(self, widths: tuple[int, int, int] = (16, 32, 64), num_classes: int = 10) -> None:
        super().__init__()
        self.upsample = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.stem = nn.Sequential(nn.Conv2d(1, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU())
        stages: list[nn.Module] = []
        in_ch = widths[0]
        for i, width in enumerate(widths):
            stride = 1 if i == 0 else 2
            stages += [BasicBlock(in_ch, width, stride), BasicBlock(width, width)]
            in_ch = width
        self.stages = nn.Sequential(*stages)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(in_ch, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stages(self.stem(self.upsample(x))))


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """(mean cross-entropy, accuracy in [0, 1]) of ``model`` in eval mode on device tensors ``x``, ``y``."""
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, y).item()
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    model.train()
    return loss, accuracy


def train(device: torch.device, seed: int, steps: int, batch_size: int = 64, lr: float = 1e-2,
          log_every: int = 25) -> tuple[nn.Module, dict[str, Any]]:
    """Train a DigitsResNet for ``steps`` AdamW steps (cosine learning-rate decay) on ``device``.

    Returns the trained model (on ``device``, eval mode) and a run record: ``losses`` per step, ``test_loss``,
    ``test_accuracy`` in [0, 1], ``chance_accuracy`` (0.1), ``ms_per_step`` and ``fallback_ops``.
    """
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = load_digits_split(seed)
    model = DigitsResNet().to(device)  # initialised on the CPU by the seed, then moved
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    batches = torch.Generator().manual_seed(seed + 1)
    x_dev, y_dev, x_test_dev, y_test_dev = (t.to(device) for t in (x_train, y_train, x_test, y_test))
    reset_fallbacks(device)
    timer = StepTimer(device)
    losses: list[float] = []
    order = torch.empty(0, dtype=torch.int64)
    while len(losses) < steps:
        if len(order) < batch_size:  # a new epoch: reshuffle, drop the ragged tail
            order = torch.randperm(len(y_train), generator=batches)
        idx, order = order[:batch_size].to(device), order[batch_size:]
        with timer.step():
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x_dev[idx]), y_dev[idx])
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        if len(losses) % log_every == 0 or len(losses) in (1, steps):
            say(device, f"step {len(losses):4d}  loss {losses[-1]:.4f}  ({timer.ms_per_step:.1f} ms/step)")
    # BatchNorm's running statistics trail the weights (momentum 0.1); recompute them over the training set with the
    # weights as trained, as stochastic weight averaging does (torch.optim.swa_utils.update_bn).
    with torch.no_grad():
        torch.optim.swa_utils.update_bn(x_dev.split(256), model)
    test_loss, test_acc = evaluate(model, x_test_dev, y_test_dev)
    model.eval()
    record = {"device": str(device), "steps": steps, "losses": losses, "test_loss": test_loss,
              "test_accuracy": test_acc, "chance_accuracy": 0.1, "ms_per_step": timer.ms_per_step,
              "fallback_ops": fallbacks(device)}
    say(device, f"test loss {test_loss:.4f}  test accuracy {test_acc:.4f} on {len(y_test)} held-out images")
    return model, record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser, steps=150)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2, help="peak AdamW learning rate (default: 1e-2)")
    args = parser.parse_args(argv)
    devices = parse_devices(args.device)
    apply_threads(args.threads)
    check_positive(steps=args.steps, batch_size=args.batch_size, log_every=args.log_every)
    runs = []
    for device in devices:
        say(device, f"training DigitsResNet for {args.steps} steps (batch {args.batch_size}, seed {args.seed})")
        _, record = train(device, args.seed, args.steps, args.batch_size, args.lr, args.log_every)
        runs.append(record)
    for record in runs:
        record["first_loss"], record["final_loss"] = record["losses"][0], record["losses"][-1]
    print_summary("ResNet on digits", runs, [("first_loss", "first loss", ".4f"), ("final_loss", "last loss", ".4f"),
                                             ("test_loss", "test loss", ".4f"), ("test_accuracy", "test acc", ".4f"),
                                             ("ms_per_step", "ms/step", ".1f")])
    emit_result("resnet_digits", args.seed, runs, args.result)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
