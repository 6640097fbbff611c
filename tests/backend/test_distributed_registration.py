# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Registration of ``cncl`` with c10d and single-rank behaviour (mixed cpu/mlu groups, Work API, options).

The registry checks run in the test process; anything that initializes a process group runs in a fresh interpreter
so the test process keeps no global c10d state.
"""

from __future__ import annotations

import json
import subprocess
import sys

import torch
import torch.distributed as dist

import torch_mlu.distributed as cncl


def test_backend_registered_for_mlu() -> None:
    assert "cncl" in dist.Backend.backend_list
    assert dist.Backend("CNCL") == "cncl"
    assert dist.Backend.default_device_backend_map["mlu"] == "cncl"
    assert dist.Backend.backend_capability["cncl"] == ["mlu"]
    assert dist.get_default_backend_for_device("mlu") == "cncl"
    assert dist.get_default_backend_for_device(torch.device("mlu", 1)) == "cncl"
    assert dist.get_default_backend_for_device("cpu") == "gloo"  # cpu keeps its own default
    assert cncl.is_cncl_available()


def test_registration_is_idempotent() -> None:
    plugin = dist.Backend._plugins["CNCL"]
    cncl._register()
    assert dist.Backend._plugins["CNCL"] is plugin
    assert dist.Backend.backend_list.count("cncl") == 1


SINGLE_RANK = r"""
import datetime, json
import torch, torch.distributed as dist
import torch_mlu.distributed
report = {}
store = dist.HashStore()
dist.init_process_group("mlu:cncl,cpu:gloo", store=store, rank=0, world_size=1,
                        timeout=datetime.timedelta(seconds=42))
pg = dist.group.WORLD
report["type"] = type(pg).__name__
report["name"] = pg.name()
report["timeout_s"] = pg.options._timeout.total_seconds()
t = torch.arange(4.0, device="mlu")
work = dist.all_reduce(t, async_op=True)
chained = work.get_future().then(lambda f: f.value()[0] * 10)
work.wait(timeout=datetime.timedelta(seconds=30))
report["completed"] = work.is_completed()
report["success"] = work.is_success()
report["future_device"] = str(chained.wait().device)
report["chained"] = chained.wait().cpu().tolist()
c = torch.ones(3)
dist.all_reduce(c)  # cpu tensor in a 'mlu:cncl,cpu:gloo' group goes to the Gloo transport
report["cpu_in_mixed_group"] = c.tolist()
dist.barrier()
dist.destroy_process_group(pg)
try:
    pg.allreduce([t])
except dist.DistBackendError as e:
    report["after_destroy"] = str(e)
try:
    dist.init_process_group("cncl", store=dist.HashStore(), rank=0, world_size=1, pg_options=object())
except TypeError as e:
    report["pg_options"] = str(e)
dist.init_process_group("cncl", store=dist.HashStore(), rank=0, world_size=1,
                        pg_options=torch_mlu.distributed.ProcessGroupCNCL.Options(check_arguments=False))
report["checked_group"] = dist.group.WORLD.cncl_options.check_arguments
print("REPORT " + json.dumps(report))
"""


def test_single_rank_mixed_group_work_api_and_options() -> None:
    proc = subprocess.run([sys.executable, "-c", SINGLE_RANK], capture_output=True, text=True, timeout=120)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("REPORT ")]
    assert lines, proc.stderr[-3000:]
    r = json.loads(lines[-1].removeprefix("REPORT "))
    assert r["type"] == "ProcessGroupCNCL" and r["name"] == "cncl"
    assert r["timeout_s"] == 42
    assert r["completed"] and r["success"]
    assert r["future_device"] == "mlu:0"
    assert r["chained"] == [0.0, 10.0, 20.0, 30.0]
    assert r["cpu_in_mixed_group"] == [1.0, 1.0, 1.0]
    assert "shut down" in r["after_destroy"]
    assert r["pg_options"] == "cncl pg_options must be ProcessGroupCNCL.Options, got object"
    assert r["checked_group"] is False


EXIT_COLLECTIONS = r"""
import atexit, gc, os, sys
seen = {"exiting": False, "full": 0}
def count(phase, info):
    if phase == "stop" and info["generation"] == 2 and seen["exiting"]:
        seen["full"] += 1
gc.callbacks.append(count)
atexit.register(lambda: os.write(1, b"%d" % seen["full"]))  # registered first: runs last
import torch
import torch.distributed as dist
if sys.argv[1] == "group":
    dist.init_process_group("cncl", store=dist.HashStore(), rank=0, world_size=1)
    t = torch.ones(4, device="mlu")
    dist.all_reduce(t)
    dist.destroy_process_group()
atexit.register(lambda: seen.__setitem__("exiting", True))  # registered last: runs first
"""


def test_exit_collects_garbage_only_after_a_cncl_group() -> None:
    """The exit's drain runs a full garbage collection for processes that made a ``cncl`` process group (see
    ``torch_mlu.distributed._engine._drain_at_exit``); any other process that imports torch exits without one,
    as it does with the autoload off (~65 ms each exit)."""
    full = {}
    for case in ("import", "group"):
        proc = subprocess.run([sys.executable, "-c", EXIT_COLLECTIONS, case], capture_output=True, text=True,
                              check=True, timeout=120)
        full[case] = int(proc.stdout)
    assert full == {"import": 0, "group": 1}
