# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Helpers shared by the backend tests (kept out of conftest.py so test modules can import them by a unique name)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

REPO = Path(__file__).resolve().parents[2]


def run_script(path: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python path args...`` in a fresh interpreter from the repository root."""
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -c code`` in a fresh interpreter (env vars read at startup need a new process)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env,
                          timeout=timeout, cwd=REPO)


def trains_like_cpu(make_model: Callable[[], torch.nn.Module], x: torch.Tensor) -> None:
    """The seeded model, compiled with backend="mlu", gives the same outputs and parameter gradients (loss: mean
    square of the output) as on CPU in eager mode."""
    import torch

    torch._dynamo.reset()
    torch.manual_seed(0)
    ref = make_model()
    model = copy.deepcopy(ref).to("mlu")
    want = ref(x)
    want.square().mean().backward()
    got = torch.compile(model, backend="mlu")(x.to("mlu"))
    got.square().mean().backward()
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6)
    for p_ref, p in zip(ref.parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu(), p_ref.grad, rtol=1e-4, atol=1e-6)
