# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Faults on ``cncl``: a peer that dies mid-collective, a peer that stops answering; bounded time, no hang.

Ranks run as plain subprocesses (``python -c``), so a rank that exits or hangs cannot take the test process with it;
every launch has a hard subprocess timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from test_distributed_collectives import free_port

HARD_TIMEOUT_S = 90

RANK_SCRIPT = r"""
import datetime, json, os, sys, time
import torch, torch.distributed as dist
import torch_mlu.distributed  # registers "cncl" until torch_mlu imports it itself

scenario, rank = sys.argv[1], int(os.environ["RANK"])
timeout = float(os.environ["CNCL_TEST_TIMEOUT"]) if "CNCL_TEST_TIMEOUT" in os.environ else None
kwargs = {"timeout": datetime.timedelta(seconds=timeout)} if timeout else {}
dist.init_process_group("cncl", **kwargs)
device = torch.device("mlu", rank)
big = torch.ones(8 << 20, device=device)  # 32 MB: the transfer is in flight when the peer goes away
dist.all_reduce(big)  # everyone is connected and healthy
report = {"configured_timeout_s": dist.group.WORLD.options._timeout.total_seconds()}
if rank == 1 and scenario == "peer_exits":
    dist.all_reduce(big, async_op=True)
    os._exit(17)  # dies right after entering the collective, its part of the transfer unfinished
if rank == 1 and scenario == "peer_hangs":
    time.sleep(600)  # alive, connected, never joins the collective
start = time.monotonic()
try:
    dist.all_reduce(big)
    report["error"] = None
except Exception as exc:
    report["error"] = f"{type(exc).__name__}: {exc}"
report["elapsed_s"] = time.monotonic() - start
print("REPORT " + json.dumps(report), flush=True)
os._exit(0)
"""


def run_pair(scenario: str, timeout_s: float | None) -> dict:
    """Start ranks 0 and 1; return rank 0's report. Rank 1 is killed if it is still alive at the end."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="2")
    if timeout_s is not None:
        env["CNCL_TEST_TIMEOUT"] = str(timeout_s)
    procs = [
        subprocess.Popen([sys.executable, "-c", RANK_SCRIPT, scenario], env=dict(env, RANK=str(r)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for r in range(2)
    ]
    try:
        out, err = procs[0].communicate(timeout=HARD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"rank 0 still running after {HARD_TIMEOUT_S} s: the fault was not detected (hang)")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.communicate()
    lines = [ln for ln in out.splitlines() if ln.startswith("REPORT ")]
    assert lines, f"rank 0 gave no report (exit {procs[0].returncode}):\n{err[-3000:]}"
    return json.loads(lines[-1].removeprefix("REPORT "))


def test_peer_exit_mid_collective_raises_promptly_with_default_timeout() -> None:
    start = time.monotonic()
    report = run_pair("peer_exits", timeout_s=None)
    # The documented default: c10d's default_pg_timeout (30 min) for a third-party backend.
    assert report["configured_timeout_s"] == 30 * 60
    assert report["error"] is not None, "the survivor's collective succeeded without its peer"
    assert report["error"].startswith("DistBackendError: cncl all_reduce failed on rank 0 of 2")
    assert "a peer process exited, or did not answer within the process group timeout of 0:30:00" in report["error"]
    # A closed connection is detected at once, long before the 30-minute timeout.
    assert report["elapsed_s"] < 30, report
    assert time.monotonic() - start < HARD_TIMEOUT_S


def test_unresponsive_peer_raises_after_configured_timeout() -> None:
    report = run_pair("peer_hangs", timeout_s=3)
    assert report["configured_timeout_s"] == 3
    assert report["error"] is not None
    assert report["error"].startswith("DistBackendError: cncl all_reduce failed on rank 0 of 2")
    assert "imed out" in report["error"], report["error"]
    assert 2.5 <= report["elapsed_s"] < 30, report
