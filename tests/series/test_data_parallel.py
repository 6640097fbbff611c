# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.nn.DataParallel`` across two ``mlu`` devices.

DataParallel splits the batch over the devices (scatter), copies the module to each (broadcast_coalesced), runs the
replicas and concatenates the outputs (gather). In 2.13 those three steps call kernels from
torch/csrc/cuda/comm.cpp that exist only in CUDA builds and address CUDA devices only, so on ``mlu`` the forward
dies with ``AttributeError: module 'torch._C' has no attribute '_scatter'``. The patched ``comm`` does the same with
device copies for any non-CUDA accelerator; forward and backward must then equal one device's, without the
"not compiled with NCCL" warning the gradient reduction used to give on every backward.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

RunProbe = Callable[[str], Any]

_PROBE = r"""
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to("mlu:0")
x = torch.randn(10, 8).to(INPUT_DEVICE)   # 10 rows: split 5 + 5 over two devices
ref_out = model(x.to("mlu:0"))
ref_out.square().sum().backward()
ref_grads = [p.grad.cpu().clone() for p in model.parameters()]
model.zero_grad()

replica_devices = []
def record(module, args, output):
    replica_devices.append(str(output.device))
hook = model[2].register_forward_hook(record)

import warnings
dp = torch.nn.DataParallel(model, device_ids=[0, 1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        out = dp(x)   # scattered to mlu:0 and mlu:1
    except Exception as exc:
        emit({"error": "%s: %s" % (type(exc).__name__, exc)})
        raise SystemExit(0)
    out.square().sum().backward()
hook.remove()
emit({
    "device_count": torch.mlu.device_count(),
    "out_device": str(out.device),
    "out_shape": list(out.shape),
    "out_close": bool(torch.allclose(out.detach().cpu(), ref_out.detach().cpu(), atol=1e-5)),
    "grads_close": all(torch.allclose(p.grad.cpu(), g, atol=1e-5) for p, g in zip(model.parameters(), ref_grads)),
    "replica_devices": sorted(set(replica_devices)),
    "nccl_warnings": [str(w.message) for w in caught if "NCCL" in str(w.message)],
})
"""


def _check(r: dict) -> None:
    assert "error" not in r, r["error"]
    assert r["device_count"] >= 2
    assert r["replica_devices"] == ["mlu:0", "mlu:1"]
    assert r["out_device"] == "mlu:0" and r["out_shape"] == [10, 4]
    assert r["out_close"], "DataParallel output differs from the single-device output"
    assert r["grads_close"], "DataParallel gradients differ from the single-device gradients"
    # The gradient reduction must not ask NCCL (CUDA only) about mlu tensors, which warned on every backward.
    assert r["nccl_warnings"] == []


def test_data_parallel_runs_on_two_mlu_devices(run_probe: RunProbe) -> None:
    # The usual training loop: the batch is moved to the first device, DataParallel splits it from there.
    _check(run_probe('INPUT_DEVICE = "mlu:0"\n' + _PROBE))


def test_data_parallel_scatters_a_cpu_batch(run_probe: RunProbe) -> None:
    # A CPU batch is copied on background copy streams; Scatter then calls Tensor.record_stream on each chunk.
    _check(run_probe('INPUT_DEVICE = "cpu"\n' + _PROBE))
