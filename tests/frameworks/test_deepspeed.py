# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""DeepSpeed's MLU path (accelerator/mlu_accelerator.py, op_builder/mlu), unmodified, on Catch.

- Every method of DeepSpeed's ``MLU_Accelerator`` answers on our torch.mlu.
- ``deepspeed.initialize`` with ZeRO-1 on one process and DeepSpeed's FusedAdam (-> ``torch.ops.torch_mlu.fused_adam``)
  matches the CPU. The CPU reference is DeepSpeed's own CPU accelerator with ``torch_adam`` (torch.optim.AdamW): its
  CPU FusedAdam is a C++ extension that DeepSpeed compiles at run time, and this env builds no native ops
  (DS_BUILD_OPS=0), so that is the deepest step DeepSpeed's CPU-only path allows. (Both DeepSpeed runs agree to the
  last bit; from the second step on they differ from a plain torch.optim.AdamW loop by up to 9e-3 after 3 steps, on
  cpu as on mlu, so that is DeepSpeed's ZeRO-1 behaviour, not the device's.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).parent


def _accelerator():
    from deepspeed.accelerator import get_accelerator
    from deepspeed.accelerator.mlu_accelerator import MLU_Accelerator

    acc = get_accelerator()
    assert isinstance(acc, MLU_Accelerator), type(acc)
    return acc, MLU_Accelerator


def test_get_accelerator_is_mlu():
    acc, _ = _accelerator()
    assert acc.device_name() == "mlu" and acc.is_available() and acc.communication_backend_name() == "cncl"


def test_every_mlu_accelerator_method_answers():
    acc, cls = _accelerator()
    t = torch.ones(2, device="mlu")
    graph = acc.create_graph()
    state = acc.get_rng_state()
    args = {
        "device_name": (0,), "device": (0,), "set_device": (0,), "set_rng_state": (state,), "get_rng_state": (0,),
        "manual_seed": (1,), "manual_seed_all": (1,), "default_generator": (0,), "stream": (acc.Stream(),),
        "current_stream": (0,), "default_stream": (0,), "range_push": ("catch",), "lazy_call": (lambda: None,),
        "create_op_builder": ("FusedAdamBuilder",), "get_op_builder": ("FusedAdamBuilder",),
        "on_accelerator": (t,), "replay_graph": (graph,), "capture_to_graph": (graph,),
        "set_visible_devices_envs": ({}, [0, 1]), "set_compile_backend": ("inductor",),
        "memory_allocated": (0,), "total_memory": (0,), "available_memory": (0,),
    }
    answered = []
    for name, member in vars(cls).items():  # every method MLU_Accelerator defines (not the base class' helpers)
        if name.startswith("__"):
            continue
        if isinstance(member, property):
            value = getattr(acc, name)  # Stream, Event, the typed tensor factories
            if name.endswith("Tensor"):
                assert value([1]).device.type == "mlu"
            answered.append(name)
            continue
        if not callable(member):
            continue  # class attributes
        result = getattr(acc, name)(*args.get(name, ()))
        if name == "capture_to_graph":
            with result:  # a context manager: capture some work, then replay it
                y = t * 3
            acc.replay_graph(graph)
            assert y.cpu().tolist() == [3.0, 3.0]
        if name == "range_push":
            acc.range_pop()
        answered.append(name)
    # the ones DeepSpeed's issue list names explicitly
    for name in ("memory_cached", "max_memory_cached", "reset_max_memory_cached", "create_graph", "lazy_call",
                 "range_push", "range_pop", "total_memory", "visible_devices_envs"):
        assert name in answered
    assert acc.visible_devices_envs() == ["MLU_VISIBLE_DEVICES"]
    assert acc.total_memory() == torch.mlu.get_device_properties(0).total_memory


def test_fused_adam_op_builder_is_ours():
    acc, _ = _accelerator()
    from deepspeed.ops.adam import FusedAdam

    p = torch.nn.Parameter(torch.randn(5, device="mlu"))
    ref = torch.nn.Parameter(p.detach().cpu().clone())
    opt = FusedAdam([p], lr=0.1, weight_decay=0.01)  # adam_w_mode=True by default
    ref_opt = torch.optim.AdamW([ref], lr=0.1, weight_decay=0.01, foreach=False)
    for _ in range(3):
        g = torch.randn(5)
        p.grad, ref.grad = g.to("mlu"), g.clone()
        opt.step()
        ref_opt.step()
    torch.testing.assert_close(p.detach().cpu(), ref.detach(), rtol=1e-6, atol=1e-7)


def _zero1(mode: str, cpu: bool, ext_dir: Path) -> dict:
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(ext_dir))
    if cpu:
        env.update(DS_ACCELERATOR="cpu", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    r = subprocess.run([sys.executable, str(HERE / "ds_zero1.py"), mode], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert not any(ext_dir.rglob("*.so")), "DeepSpeed built a native op"
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_zero1_fused_adam_step_on_mlu_matches_cpu(tmp_path):
    mlu = _zero1("fused", cpu=False, ext_dir=tmp_path / "ext")
    assert (mlu["accelerator"], mlu["device"], mlu["optimizer"], mlu["zero_stage"]) == (
        "mlu", "mlu:0", "FusedAdam", 1)
    cpu = _zero1("torch", cpu=True, ext_dir=tmp_path / "ext")
    assert (cpu["accelerator"], cpu["device"], cpu["zero_stage"]) == ("cpu", "cpu", 1)
    assert mlu["params"].keys() == cpu["params"].keys()
    for k in cpu["params"]:
        torch.testing.assert_close(torch.tensor(mlu["params"][k]), torch.tensor(cpu["params"][k]), rtol=1e-5,
                                   atol=1e-6, msg=k)
