# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Three ZeRO-1 training steps with deepspeed.initialize on one process; prints the final parameters as JSON.

Usage: python ds_zero1.py {fused|torch}
  fused: DeepSpeed's FusedAdam (its op builder for the detected accelerator; on mlu that is
         torch.ops.torch_mlu.fused_adam), fp32.
  torch: DeepSpeed's "torch_adam" (torch.optim.AdamW) -- what its CPU-only path can run without building native ops.
Run with DS_ACCELERATOR=cpu (or without torch_mlu) for the CPU reference.
"""

from __future__ import annotations

import json
import os
import socket
import sys

import torch


def main() -> None:
    mode = sys.argv[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    import deepspeed
    import deepspeed.ops
    from deepspeed.accelerator import get_accelerator

    # No native op builds: DeepSpeed's CPU backend would JIT-compile its shared-memory collective op
    # (ShareMemCommBuilder, "deepspeed_shm_comm") at init when a compiler is present; one process needs no
    # shared-memory transport, so mark it unavailable (DeepSpeed then uses torch.distributed's own collectives).
    deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(), torch.nn.Linear(12, 2))
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(4, 6, generator=g), torch.randn(4, 2, generator=g)) for _ in range(3)]
    params = {"lr": 1e-2, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01}
    if mode == "torch":
        params["torch_adam"] = True
    config = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
              "optimizer": {"type": "Adam", "params": params}, "zero_optimization": {"stage": 1},
              "steps_per_print": 1000}
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    dev = get_accelerator().current_device_name()
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(engine(x.to(dev)), y.to(dev))
        engine.backward(loss)
        engine.step()
    out = {k: v.detach().float().cpu().flatten().tolist() for k, v in engine.module.state_dict().items()}
    inner = getattr(optimizer, "optimizer", optimizer)
    print(json.dumps({"accelerator": get_accelerator().device_name(), "device": dev,
                      "optimizer": type(inner).__name__, "zero_stage": engine.zero_optimization_stage(),
                      "params": out}))


if __name__ == "__main__":
    main()
