# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""PyTorch's profiler with ``use_device="mlu"`` measures device time (torch_openreg's test_profiler.py checks the
same surface): ops get device time from timing notifiers (catch/csrc/profiler/stubs.cpp), every time is
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


KINETO_SCRIPT = textwrap.dedent("""
    import json, os, tempfile
    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile
    m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).to("mlu")
    x = torch.randn(128, 64, device="mlu")
    for acts in ([ProfilerActivity.CPU, ProfilerActivity.PrivateUse1], [ProfilerActivity.CPU]):
        with profile(activities=acts) as prof:
            m(x).sum().backward()
            torch.mlu.synchronize()
        tag = "both" if len(acts) == 2 else "cpu"
        events = prof.key_averages()
        addmm = next(e for e in events if e.key == "aten::addmm")
        print(tag, "addmm", addmm.self_device_time_total, addmm.cpu_time_total)
        print(tag, "min", min(min(e.self_device_time_total, e.device_time_total) for e in events))
        kernels = [e for e in prof.events() if e.name.startswith("mlu_kernel")]
        on_device = all(e.device_type == torch.autograd.DeviceType.PrivateUse1 for e in kernels)
        print(tag, "kernels", len(kernels), on_device)
        path = os.path.join(tempfile.mkdtemp(), "trace.json")
        prof.export_chrome_trace(path)
        trace = json.load(open(path))["traceEvents"]
        cats = {ev.get("cat") for ev in trace if str(ev.get("name", "")).startswith("mlu_kernel")}
        print(tag, "trace", sorted(c for c in cats if c))
""")


def test_kineto_profiler_records_mlu_kernels():
    """torch.profiler with ProfilerActivity.PrivateUse1 (Kineto): our registered activity profiler reports each device
    kernel, linked to its op (device time, >= 0), in the table and the Chrome trace; a CPU-only profile has none, as
    with cuda (catch/csrc/profiler/kineto.cpp)."""
    r = run_python(KINETO_SCRIPT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] in ("both", "cpu"):
            out[parts[0], parts[1]] = parts[2]
    device_us, cpu_us = (float(v) for v in out["both", "addmm"].split())
    assert device_us > 0, "no device time recorded for aten::addmm"
    assert device_us <= cpu_us * 1.5 + 50, (device_us, cpu_us)  # device work runs inside the op's CPU span
    assert float(out["both", "min"]) >= 0
    n, types = out["both", "kernels"].split(" ", 1)
    assert int(n) > 0 and types == "True"  # DeviceType.PrivateUse1 (printed as DeviceType.MLU)
    assert out["both", "trace"] == "['kernel']"
    assert float(out["cpu", "addmm"].split()[0]) == 0 and out["cpu", "kernels"].startswith("0 ")
    assert "not enabled" not in r.stdout + r.stderr
