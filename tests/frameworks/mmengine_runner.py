# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""A tiny mmengine Runner (2 epochs of a 2-layer MLP) run as mmengine users do; prints the final parameters and the
device mmengine picked as JSON. ``--amp``: AmpOptimWrapper (fp16 autocast + dynamic loss scaling), as
mmengine's MLU path runs it; otherwise the plain OptimWrapper.

Usage: python mmengine_runner.py WORK_DIR [--amp] [--no-mlu]
  --no-mlu: run as if torch_mlu were not installed (mmengine imports it itself when it can), i.e. on the CPU.
"""

from __future__ import annotations

import json
import sys

if "--no-mlu" in sys.argv:
    sys.modules["torch_mlu"] = None  # type: ignore[assignment]  # makes `import torch_mlu` raise ImportError

import torch
from mmengine.device import get_device
from mmengine.model import BaseModel
from mmengine.runner import Runner


class TinyNet(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))

    def forward(self, inputs: torch.Tensor, labels: torch.Tensor, mode: str = "tensor") -> object:
        out = self.net(inputs)
        if mode == "loss":
            return {"loss": torch.nn.functional.cross_entropy(out.float(), labels)}
        return out


def main() -> None:
    work_dir, amp = sys.argv[1], "--amp" in sys.argv
    g = torch.Generator().manual_seed(0)
    data = [{"inputs": torch.randn(8, generator=g), "labels": torch.randint(0, 3, (), generator=g)}
            for _ in range(32)]
    torch.manual_seed(0)
    model = TinyNet()
    runner = Runner(
        model=model, work_dir=work_dir,
        train_dataloader={"dataset": data, "sampler": {"type": "DefaultSampler", "shuffle": False},
                          "batch_size": 8, "collate_fn": {"type": "default_collate"}, "num_workers": 0},
        train_cfg={"by_epoch": True, "max_epochs": 2},
        optim_wrapper={"type": "AmpOptimWrapper" if amp else "OptimWrapper",
                       "optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9}},
        default_hooks={"checkpoint": None}, env_cfg={"cudnn_benchmark": False}, launcher="none")
    runner.train()
    params = {k: v.detach().float().cpu().flatten().tolist() for k, v in runner.model.state_dict().items()}
    wrapper = type(runner.optim_wrapper).__name__
    print(json.dumps({"device": get_device(), "wrapper": wrapper,
                      "param_device": str(next(runner.model.parameters()).device), "params": params}))


if __name__ == "__main__":
    main()
