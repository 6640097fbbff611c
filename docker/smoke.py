#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Smoke test run as the last step of every image build: a broken image fails its build.

    python docker/smoke.py

Imports torch (torch_mlu is autoloaded through the ``torch.backends`` entry point), creates an ``mlu`` tensor and runs
one training step of a small CNN (conv, relu, pooling, linear, cross-entropy, backward, AdamW) on ``mlu`` and the same
step on the CPU from the same weights and batch. Exits 1 unless the device is ``mlu``, the loss is finite, the weights
changed, and the mlu loss and weights equal the CPU ones within 1e-4 (float32; the emulated kernels compute on the
host, so only summation order can differ). On success prints one line starting with ``catch-smoke: ok`` (the image
build test looks for it).
"""

from __future__ import annotations

import math
import sys

import torch
from torch import nn


def one_step(device: str, state: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> tuple[float, nn.Module]:
    """One AdamW step from ``state`` on ``device``; returns (loss before the step, trained model on the CPU)."""
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 10))
    model.load_state_dict(state)
    model = model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item(), model.cpu()


def main() -> int:
    """Run the check; returns the exit status (0 ok, 1 failed, with one ``catch-smoke: FAILED`` line)."""
    probe = torch.ones(2, 3, device="mlu")
    if probe.device.type != "mlu" or (probe * 2).sum().item() != 12.0:
        print(f"catch-smoke: FAILED: mlu tensor arithmetic gave {probe.device} {(probe * 2).sum().item()}")
        return 1
    torch.manual_seed(0)
    init = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 10))
    state = {k: v.clone() for k, v in init.state_dict().items()}
    x, y = torch.randn(16, 1, 8, 8), torch.randint(0, 10, (16,))
    loss_mlu, trained_mlu = one_step("mlu", state, x, y)
    loss_cpu, trained_cpu = one_step("cpu", state, x, y)
    moved = max((p - state[k]).abs().max().item() for k, p in trained_mlu.state_dict().items())
    diff = max((p - trained_cpu.state_dict()[k]).abs().max().item() for k, p in trained_mlu.state_dict().items())
    if not math.isfinite(loss_mlu) or moved == 0.0 or abs(loss_mlu - loss_cpu) > 1e-4 or diff > 1e-4:
        print(f"catch-smoke: FAILED: loss mlu {loss_mlu} cpu {loss_cpu}, weights moved {moved}, mlu-cpu diff {diff}")
        return 1
    torch_mlu = sys.modules.get("torch_mlu")
    catch = getattr(torch_mlu, "__version__", "?")
    devices = torch.mlu.device_count()  # type: ignore[attr-defined]  # registered by torch_mlu at import
    print(f"catch-smoke: ok torch {torch.__version__} torch_mlu {catch} devices {devices} "
          f"loss {loss_mlu:.4f} (cpu {loss_cpu:.4f}) max|mlu-cpu| {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
