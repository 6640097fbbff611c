# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Helpers for the migration tests: make the checkout's migration code importable, run samples, compare results.

The checkout's ``catch/torch_mlu`` is put first on the package path, so the not-yet-imported pure-Python
subpackages (``contrib``, ``migration``, ``distributed``) come from the checkout even when the installed torch_mlu is
an older build; after ``pip install ./catch`` (tox env ``backend``) both are the same code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch  # noqa: F401  (before torch_mlu, as torch's backend autoload expects)

import torch_mlu

SAMPLES = Path(__file__).resolve().parent
REPO = SAMPLES.parents[2]
RUNNER = SAMPLES / "_runner.py"
SAMPLE_NAMES = ("train_amp.py", "train_dataloader.py", "cuda_memory_streams.py", "train_ddp.py")

_CHECKOUT = REPO / "catch" / "torch_mlu"
if _CHECKOUT.is_dir() and str(_CHECKOUT) not in torch_mlu.__path__:
    torch_mlu.__path__.insert(0, str(_CHECKOUT))  # the checkout's pure-Python subpackages win over an older install


def cncl_available() -> bool:
    """True when the ``cncl`` process-group backend can be registered (torch_mlu.distributed imports)."""
    try:
        import torch_mlu.distributed  # noqa: F401
    except ImportError:
        return False
    import torch.distributed as dist

    return dist.is_available() and dist.is_backend_available("cncl")


def run_sample(script: Path, out: Path, *, transfer: bool = False, ddp: bool = False, env: dict | None = None,
               timeout: float = 600) -> dict:
    """Run ``script --out OUT`` (under torchrun with 2 processes when ``ddp``), optionally with transfer_to_mlu
    imported first; return the JSON it wrote. Fails with the process output when it exits non-zero."""
    runner = [str(RUNNER)] + (["--transfer"] if transfer else []) + [str(script), "--out", str(out)]
    if ddp:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", *runner]
    else:
        cmd = [sys.executable, *runner]
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout, cwd=out.parent)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return json.loads(out.read_text())
