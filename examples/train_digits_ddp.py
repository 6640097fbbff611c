# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Train the digits CNN with DistributedDataParallel on ``mlu`` over the ``cncl`` backend.

Usage: torchrun --nproc-per-node 2 examples/train_digits_ddp.py [--epochs 12] [--seed 0] [--device mlu|cpu]

A CUDA DDP script with ``nccl`` -> ``cncl`` and ``cuda`` -> ``mlu``: ``torchrun`` sets ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE`` and the rendezvous address; each process drives ``mlu:<LOCAL_RANK>``, trains on its shard of every
epoch (``DistributedSampler``) and DDP averages the gradients. ``--device cpu`` runs the same script on ``gloo`` for
comparison. The model and data are those of ``examples/train_digits.py`` (scikit-learn digits, 1,797 real 8x8
images). Rank 0 prints ``epoch <n> loss <mean over ranks>`` per epoch and ``test accuracy <fraction>`` at the end
(every rank scores its share of the test set; the counts are summed with ``all_reduce``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from train_digits import DigitsCNN, load_data  # examples/ is sys.path[0] when this file runs as a script


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="mlu", choices=["mlu", "cpu"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32, help="per process (global batch = this x world size)")
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args(argv)
    if "RANK" not in os.environ:
        print("error: run under torchrun, e.g. torchrun --nproc-per-node 2 examples/train_digits_ddp.py",
              file=sys.stderr)
        return 2
    if args.device == "mlu":
        if not hasattr(torch, "mlu"):
            print("error: --device mlu: torch_mlu is not installed (pip install ./catch)", file=sys.stderr)
            return 2
        import torch_mlu.distributed  # noqa: F401  (registers "cncl"; a no-op once torch_mlu imports it itself)

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if args.device == "mlu":
        device = torch.device("mlu", local_rank)
        torch.mlu.set_device(device)
        dist.init_process_group("cncl")
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    x_train, y_train, x_test, y_test = load_data(args.seed)
    torch.manual_seed(args.seed)  # same initial weights everywhere (DDP also broadcasts rank 0's)
    model = DistributedDataParallel(DigitsCNN().to(device), device_ids=[local_rank] if device.type == "mlu" else None)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    train_set = TensorDataset(x_train, y_train)
    sampler: DistributedSampler[tuple[torch.Tensor, ...]] = DistributedSampler(
        train_set, num_replicas=world, rank=rank, shuffle=True, seed=args.seed, drop_last=True
    )
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, pin_memory=device.type == "mlu",
                        drop_last=True)

    start = time.perf_counter()
    steps = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2, device=device)  # (sum of losses, number of steps) on this rank
        for xb, yb in loader:
            loss = loss_fn(model(xb.to(device, non_blocking=True)), yb.to(device, non_blocking=True))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += torch.stack([loss.detach(), torch.ones((), device=device)])
            steps += 1
        dist.all_reduce(total)
        if rank == 0:
            print(f"epoch {epoch + 1} loss {(total[0] / total[1]).item():.6f}", flush=True)

    model.eval()
    shard = slice(rank, None, world)
    with torch.no_grad():
        pred = model.module(x_test[shard].to(device)).argmax(dim=1)
        counts = torch.stack([(pred == y_test[shard].to(device)).sum(), torch.tensor(pred.numel(), device=device)])
    dist.all_reduce(counts)
    elapsed = time.perf_counter() - start
    if rank == 0:
        print(f"test accuracy {(counts[0] / counts[1]).item():.4f}")
        print(f"{world} processes on {device.type} ({dist.get_backend()}), {steps} steps per process, "
              f"{1e3 * elapsed / max(steps, 1):.1f} ms per step")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
