# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""DDP on ``mlu`` over ``cncl``: 2 ranks for N steps equal one process training on the concatenated batches.

Each rank builds the same model (CPU init from one seed, moved to ``mlu:<rank>``), wraps it in
``DistributedDataParallel(model, device_ids=[rank])`` with tiny buckets (several all-reduces per step, gradients as
bucket views), and trains on its half of every batch. DDP averages the gradients, so the parameters must equal (within
1e-5) those of a single CPU process that trains on the whole batches -- computed in the test process.
"""

from __future__ import annotations

import datetime
import os
import traceback
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from test_distributed_collectives import launch
from torch import nn

import torch_mlu.distributed  # noqa: F401  (registers "cncl" until torch_mlu imports it itself)

STEPS = 6
BATCH = 16  # split 8 + 8 across the two ranks
WORLD = 2


def make_model() -> nn.Module:
    torch.manual_seed(1234)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(4 * 4 * 4, 16), nn.ReLU(), nn.Linear(16, 10),
    )


def batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(99)
    return [(torch.randn(BATCH, 1, 8, 8, generator=gen), torch.randint(0, 10, (BATCH,), generator=gen))
            for _ in range(STEPS)]


def train(model: nn.Module, data: list[tuple[torch.Tensor, torch.Tensor]], device: torch.device) -> list[float]:
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    losses = []
    for x, y in data:
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def worker(rank: int, world: int, port: int, out_dir: str) -> None:
    try:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
        device = torch.device("mlu", rank)
        # device_id only: c10d picks Backend.default_device_backend_map["mlu"] == "cncl".
        dist.init_process_group(device_id=device, timeout=datetime.timedelta(seconds=60))
        model = make_model().to(device)
        ddp = nn.parallel.DistributedDataParallel(
            model, device_ids=[rank], bucket_cap_mb=0.002, gradient_as_bucket_view=True
        )
        half = BATCH // world
        shard = [(x[rank * half:(rank + 1) * half], y[rank * half:(rank + 1) * half]) for x, y in batches()]
        train(ddp, shard, device)
        torch.save({
            "backend": dist.get_backend(),
            "params": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        }, Path(out_dir) / f"rank{rank}.pt")
        dist.destroy_process_group()
    except BaseException:
        (Path(out_dir) / f"rank{rank}.err").write_text(traceback.format_exc())
        raise


@pytest.fixture(scope="module")
def ddp_results(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    out = tmp_path_factory.mktemp("ddp")
    launch(worker, WORLD, str(out))
    errs = sorted(out.glob("*.err"))
    assert not errs, errs[0].read_text()
    return [torch.load(out / f"rank{r}.pt") for r in range(WORLD)]


def test_ddp_uses_cncl(ddp_results: list[dict]) -> None:
    assert [r["backend"] for r in ddp_results] == ["cncl", "cncl"]


def test_ddp_ranks_agree(ddp_results: list[dict]) -> None:
    p0, p1 = ddp_results[0]["params"], ddp_results[1]["params"]
    for k in p0:
        assert torch.equal(p0[k], p1[k]), k


def test_ddp_equals_single_process_on_concatenated_batches(ddp_results: list[dict]) -> None:
    reference = make_model()
    initial = {k: v.clone() for k, v in reference.state_dict().items()}
    train(reference, batches(), torch.device("cpu"))
    ddp_params = ddp_results[0]["params"]
    for k, ref in reference.state_dict().items():
        assert not torch.allclose(ref, initial[k]), f"{k} did not train"  # the comparison is not vacuous
        diff = (ddp_params[k] - ref).abs().max().item()
        assert diff <= 1e-5, f"{k}: DDP on mlu differs from the single-process reference by {diff}"
