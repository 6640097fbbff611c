# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Single-GPU training with automatic mixed precision (a typical CUDA script, written for the migration tests).

Trains a small MLP on scikit-learn's digits with float16 autocast and a GradScaler, then writes the per-step losses,
the final weights' checksum and the device used to --out (JSON). Falls back to the CPU when CUDA is not available,
as most CUDA scripts do.
"""

import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.manual_seed_all(0)
        torch.backends.cudnn.benchmark = True
        print("training on", torch.cuda.get_device_name(0))

    digits = load_digits()
    x_all = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y_all = torch.tensor(digits.target, dtype=torch.long)

    model = MLP().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler(device.type, init_scale=1024.0)

    losses = []
    for step in range(args.steps):
        idx = torch.arange(step * 32, step * 32 + 32) % len(x_all)
        x = x_all[idx].to(device, non_blocking=True)
        y = y_all[idx].to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())

    weights = torch.cat([p.detach().float().cpu().flatten() for p in model.parameters()])
    result = {
        "device": str(next(model.parameters()).device),
        "losses": losses,
        "weights_sum": float(weights.sum()),
        "weights_abs_sum": float(weights.abs().sum()),
        "scale": float(scaler.get_scale()),
        "logits_dtype": str(logits.dtype),
    }
    with open(args.out, "w") as f:
        json.dump(result, f)
    print(f"final loss {losses[-1]:.4f}", np.round(losses[:3], 4))


if __name__ == "__main__":
    main()
