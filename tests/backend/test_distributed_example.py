# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``examples/train_digits_ddp.py`` under ``torchrun --nproc-per-node 2`` on ``mlu`` over ``cncl`` (short run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from test_distributed_collectives import free_port

REPO = Path(__file__).resolve().parents[2]


def test_train_digits_ddp_under_torchrun() -> None:
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
        "--master-port", str(free_port()), str(REPO / "examples" / "train_digits_ddp.py"), "--epochs", "3",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    losses = [float(v) for v in re.findall(r"^epoch \d+ loss ([0-9.]+)$", proc.stdout, re.M)]
    assert len(losses) == 3, proc.stdout  # printed once, by rank 0
    assert losses[-1] < losses[0] / 2, losses
    accuracy = float(re.search(r"^test accuracy ([0-9.]+)$", proc.stdout, re.M).group(1))  # type: ignore[union-attr]
    assert accuracy >= 0.85, proc.stdout
    assert "2 processes on mlu (cncl)" in proc.stdout
