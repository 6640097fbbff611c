# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""DDP on mlu collects its runtime statistics, as on CPU and CUDA (catch/csrc/distributed/ddp_timer.cpp registers a
c10d Timer for PrivateUse1). Without it c10d warned "Time stats are currently only collected for CPU and CUDA
devices" and DDP's logging data had no forward/backward times. One rank over ``cncl`` on loopback.
"""

from __future__ import annotations

import socket
import textwrap

from mlu_helpers import run_python


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SCRIPT = textwrap.dedent("""
    import os, sys, warnings, torch, torch.distributed as dist
    from torch import nn
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="{port}", RANK="0", WORLD_SIZE="1")
    dist.init_process_group("cncl")
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to("mlu"))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 32, device="mlu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(12):  # DDP samples runtime stats at iterations 1, 2, ..., 10 and every 100th
            model(x).sum().backward()
            opt.step()
            opt.zero_grad()
    data = model._get_ddp_logging_data()
    for key in ("avg_forward_compute_time", "avg_backward_compute_time", "avg_backward_comm_time"):
        print(key, data.get(key, -1))
    print("time-stats-warning", any("Time stats" in str(w.message) for w in caught))
    dist.destroy_process_group()
    sys.stdout.flush()  # os._exit skips the flush of a piped (block-buffered) stdout
    os._exit(0)
""")


def test_ddp_logging_data_has_device_times():
    r = run_python(SCRIPT.format(port=_free_port()), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert int(out["avg_forward_compute_time"]) > 0
    assert int(out["avg_backward_compute_time"]) > 0
    assert int(out["avg_backward_comm_time"]) >= 0
    assert out["time-stats-warning"] == "False"
    assert "Time stats are currently only collected" not in r.stderr
