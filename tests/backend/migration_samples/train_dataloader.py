# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Training from a DataLoader with worker processes and pinned host memory (a typical CUDA input pipeline).

The batches come from a Dataset over scikit-learn's digits, loaded by 2 worker processes with pin_memory=True when
CUDA is available, and copied with non_blocking=True. Writes per-epoch losses, final accuracy, whether the first
batch was pinned, and the device to --out (JSON).
"""

import argparse
import json

import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, Dataset


class Digits(Dataset):
    def __init__(self):
        d = load_digits()
        self.x = torch.tensor(d.data / 16.0, dtype=torch.float32).reshape(-1, 1, 8, 8)
        self.y = torch.tensor(d.target, dtype=torch.long)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def build_model():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 4 * 4, 10),
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    use_cuda = torch.cuda.is_available()
    device = "cuda:0" if use_cuda else "cpu"
    torch.manual_seed(1)
    loader = DataLoader(Digits(), batch_size=64, shuffle=False, num_workers=2, pin_memory=use_cuda,
                        persistent_workers=False)
    model = build_model()
    if use_cuda:
        model = model.cuda()
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)

    first_batch_pinned = None
    epoch_losses = []
    for _ in range(args.epochs):
        total, count = 0.0, 0
        for x, y in loader:
            if first_batch_pinned is None:
                first_batch_pinned = bool(x.is_pinned())
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
            count += len(y)
        epoch_losses.append(total / count)

    correct = 0
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(dim=1)
            correct += int((pred.cpu() == y).sum())
    result = {
        "device": str(next(model.parameters()).device),
        "epoch_losses": epoch_losses,
        "accuracy": correct / len(loader.dataset),
        "first_batch_pinned": first_batch_pinned,
    }
    with open(args.out, "w") as f:
        json.dump(result, f)
    print(result)


if __name__ == "__main__":
    main()
