# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Train the digits CNN with DistributedDataParallel on ``mlu`` over the ``cncl`` backend.

Usage: torchrun --nproc-per-node 2 examples/train_digits_ddp.py [--epochs 12] [--seed 0] [--device mlu|cpu|both]

A CUDA DDP script with ``nccl`` -> ``cncl`` and ``cuda`` -> ``mlu``: ``torchrun`` sets ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE`` and the rendezvous address; each process drives ``mlu:<LOCAL_RANK>``, trains on its shard of every
epoch (``DistributedSampler``) and DDP averages the gradients. ``--device cpu`` runs the same script on ``gloo`` for
comparison, ``--device both`` runs mlu then cpu and prints a table with their loss, accuracy and time per step side by
side. The model and data are those of ``examples/train_digits.py`` (scikit-learn digits, 1,797 real 8x8
images). Rank 0 prints ``[<device>] epoch <n> loss <mean over ranks>`` per epoch and ``[<device>] test accuracy
<fraction>`` at the end (every rank scores its share of the test set; the counts are summed with ``all_reduce``), and
writes the full record to ``--result`` (JSON).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from _demo import (  # examples/ is sys.path[0] when this file runs as a script
    DEVICE_CHOICES,
    DemoError,
    add_common_args,
    apply_threads,
    check_positive,
    emit_result,
    print_summary,
    run,
)
from train_digits import DigitsCNN, load_data

#: The c10d backend of each device type, as a CUDA script pairs nccl with cuda and gloo with cpu.
BACKENDS = {"mlu": "cncl", "cpu": "gloo"}


def train_on(kind: str, args: argparse.Namespace, tag: str = "") -> dict[str, Any]:
    """One DDP run on ``kind`` (``mlu``: cncl, one device per local rank; ``cpu``: gloo) in the default process
    group that :func:`main` set up; returns rank 0's record.

    Rank 0's progress lines start with ``tag`` (``[mlu] `` when several devices run one after the other).
    """
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("mlu", local_rank) if kind == "mlu" else torch.device("cpu")
    rank, world = dist.get_rank(), dist.get_world_size()
    backend = BACKENDS[kind]

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
    epoch_losses: list[float] = []
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2, device=device)  # (sum of losses, number of steps) on this rank
        for xb, yb in loader:
            if args.steps is not None and steps >= args.steps:
                break
            loss = loss_fn(model(xb.to(device, non_blocking=True)), yb.to(device, non_blocking=True))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += torch.stack([loss.detach(), torch.ones((), device=device)])
            steps += 1
            if rank == 0 and steps % args.log_every == 0:
                print(f"{tag}step {steps} loss {loss.item():.6f}", flush=True)
        dist.all_reduce(total)
        if total[1].item() == 0:
            break
        epoch_losses.append((total[0] / total[1]).item())
        if rank == 0:
            print(f"{tag}epoch {epoch + 1} loss {epoch_losses[-1]:.6f}", flush=True)

    model.eval()
    shard = slice(rank, None, world)
    with torch.no_grad():
        pred = model.module(x_test[shard].to(device)).argmax(dim=1)
        counts = torch.stack([(pred == y_test[shard].to(device)).sum(), torch.tensor(pred.numel(), device=device)])
    dist.all_reduce(counts)
    elapsed = time.perf_counter() - start
    accuracy = (counts[0] / counts[1]).item()
    ms = 1e3 * elapsed / max(steps, 1)
    if rank == 0:
        print(f"{tag}test accuracy {accuracy:.4f}")
        print(f"{tag}{world} processes on {device.type} ({backend}), {steps} steps per process, "
              f"{ms:.1f} ms per step", flush=True)
    return {"device": kind, "backend": backend, "world_size": world, "steps": steps, "epoch_losses": epoch_losses,
            "final_loss": epoch_losses[-1] if epoch_losses else float("nan"), "test_accuracy": accuracy,
            "ms_per_step": ms}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser, steps=None, device="mlu", log_every=1000)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32, help="per process (global batch = this x world size)")
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args(argv)
    kinds = ["mlu", "cpu"] if args.device == "both" else [part.strip() for part in args.device.split(",")]
    if not kinds or any(kind not in ("mlu", "cpu") for kind in kinds):
        raise DemoError(f"--device {args.device}: DDP takes mlu, cpu or both (one device per rank); "
                        f"the single-process demos take {DEVICE_CHOICES}")
    check_positive(epochs=args.epochs, batch_size=args.batch_size, log_every=args.log_every)
    if args.steps is not None:
        check_positive(steps=args.steps)
    apply_threads(args.threads)
    if "RANK" not in os.environ:
        raise DemoError("run under torchrun, e.g. torchrun --nproc-per-node 2 examples/train_digits_ddp.py")
    if "mlu" in kinds:
        if not hasattr(torch, "mlu"):
            raise DemoError("--device mlu: torch_mlu is not installed (pip install ./catch)")
        import torch_mlu.distributed  # noqa: F401  (registers "cncl"; a no-op once torch_mlu imports it itself)
    if "mlu" in kinds:
        torch.mlu.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    # One process group for the whole run; with both devices, c10d sends mlu tensors to cncl and cpu tensors to
    # gloo ("mlu:cncl,cpu:gloo"), as a CUDA script's "cuda:nccl,cpu:gloo" does.
    dist.init_process_group(",".join(f"{kind}:{BACKENDS[kind]}" for kind in kinds) if len(kinds) > 1
                            else BACKENDS[kinds[0]])
    runs = [train_on(kind, args, f"[{kind}] " if len(kinds) > 1 else "") for kind in kinds]
    dist.destroy_process_group()
    if int(os.environ["RANK"]) == 0:
        print_summary(f"Digits CNN, DDP over {runs[0]['world_size']} processes", runs,
                      [("backend", "backend", "s"), ("final_loss", "last epoch loss", ".4f"),
                       ("test_accuracy", "test acc", ".4f"), ("ms_per_step", "ms/step", ".1f")])
        emit_result("train_digits_ddp", args.seed, runs, args.result)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
