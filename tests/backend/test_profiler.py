# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""PyTorch's profiler with ``use_device="mlu"`` measures device time (torch_openreg's test_profiler.py checks the
same surface): ops get device time from timing notifiers (catch/csrc/aten/profiler_stubs.cpp), every time is
>= 0, and PyTorch's "PrivateUse1 used in profiler but not enabled" message is gone.
"""

from __future__ import annotations

import textwrap

from mlu_helpers import run_python

SCRIPT = textwrap.dedent("""
    import torch
    from torch import nn
    m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).to("mlu")
    x = torch.randn(128, 64, device="mlu")
    with torch.autograd.profiler.profile(use_device="mlu", use_kineto=False) as prof:
        m(x).sum().backward()
        torch.mlu.synchronize()
    events = prof.key_averages()
    by_name = {e.key: e for e in events}
    print("addmm", by_name["aten::addmm"].self_device_time_total, by_name["aten::addmm"].cpu_time_total)
    print("min", min(min(e.self_device_time_total, e.device_time_total) for e in events))
    table = prof.key_averages().table(sort_by="self_device_time_total", row_limit=5)
    print("table-has-mlu", "Self MLU" in table)
""")


def test_profiler_records_device_time():
    r = run_python(SCRIPT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    device_us, cpu_us = (float(v) for v in out["addmm"].split())
    assert device_us > 0, "no device time recorded for aten::addmm"
    assert device_us <= cpu_us * 1.5 + 50, (device_us, cpu_us)  # device work runs inside the op's CPU span
    assert float(out["min"]) >= 0
    assert out["table-has-mlu"] == "True"
    assert "not enabled" not in r.stdout + r.stderr
