# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""DistributedDataParallel training with NCCL, launched by torchrun (a typical multi-GPU CUDA script).

Each process takes LOCAL_RANK/RANK/WORLD_SIZE from torchrun, binds its GPU, wraps the model in DDP, reads its shard
through a DistributedSampler and all-reduces the loss for logging. Rank 0 writes the averaged per-step losses, the
final weights' checksum and the devices to --out (JSON). Uses gloo on the CPU when CUDA is not available.
"""

import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device(f"cuda:{local_rank}")
        dist.init_process_group(backend="nccl")
    else:
        device = torch.device("cpu")
        dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10)).to(device)
    ddp = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)

    d = load_digits()
    data = TensorDataset(torch.tensor(d.data / 16.0, dtype=torch.float32), torch.tensor(d.target))
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=False)
    loader = DataLoader(data, batch_size=16, sampler=sampler)

    losses = []
    for step, (x, y) in enumerate(loader):
        if step == args.steps:
            break
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        optimizer.step()
        logged = loss.detach().clone()
        dist.all_reduce(logged, op=dist.ReduceOp.SUM)
        losses.append(logged.item() / world)

    weights = torch.cat([p.detach().cpu().flatten() for p in model.parameters()])
    gathered = [torch.zeros_like(weights).to(device) for _ in range(world)]
    dist.all_gather(gathered, weights.to(device))
    in_sync = all(torch.equal(g.cpu(), weights) for g in gathered)
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump({
                "device": str(next(model.parameters()).device),
                "backend": dist.get_backend(),
                "world_size": world,
                "losses": losses,
                "weights_sum": float(weights.sum()),
                "weights_abs_sum": float(weights.abs().sum()),
                "replicas_in_sync": in_sync,
            }, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
