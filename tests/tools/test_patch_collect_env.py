# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Regression test of patches/0001-collect_env-...: ``torch.utils.collect_env`` reports the PrivateUse1 backend.

The test runs ``collect_env`` of a given torch tree in a fresh interpreter with a fake PrivateUse1 device module
registered the way out-of-tree backends do it (``torch.utils.rename_privateuse1_backend`` +
``torch._register_device_module``). The tree is ``$CATCH_TORCH_TREE`` (a directory holding ``torch/utils/``, e.g.
the site-packages of an installed combined wheel) when set, else the real v2.13.0 tree with the project's series
applied by the patch engine. It fails on unpatched torch 2.13.0, which the last test demonstrates.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from catch_tools.patches import apply_to_git
from catch_tools.paths import patches_dir

pytestmark = pytest.mark.real

_PROBE = r"""
import importlib.util, sys, types
import torch
if sys.argv[2] == "register":
    torch.utils.rename_privateuse1_backend("fakedev")
    mod = types.ModuleType("fakedev")
    mod.__version__ = "9.8.7"
    mod.is_available = lambda: True
    mod.device_count = lambda: 2
    def get_device_name(i=0):
        if i == 1:
            raise RuntimeError("device 1 is wedged")
        return "Fake Accelerator %d" % i
    mod.get_device_name = get_device_name
    torch._register_device_module("fakedev", mod)
spec = importlib.util.spec_from_file_location("collect_env_under_test", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(module.get_pretty_env_info())
"""


def _torch_or_skip() -> None:
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("torch is not installed in this environment (the tox env needs torch==2.13.0)")


def collect_env_output(tree: Path, register: bool = True) -> str:
    """Pretty env info of ``<tree>/torch/utils/collect_env.py`` with (or without) a fake PrivateUse1 backend."""
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(tree / "torch/utils/collect_env.py"),
                           "register" if register else "none"], capture_output=True, text=True, env=env,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def tree_under_test(real_clone: Path) -> Path:
    chosen = os.environ.get("CATCH_TORCH_TREE")
    if chosen:
        return Path(chosen)
    apply_to_git(real_clone, patches_dir())
    return real_clone


def test_collect_env_reports_privateuse1_backend(tree_under_test: Path) -> None:
    _torch_or_skip()
    out = collect_env_output(tree_under_test)
    assert "PrivateUse1 backend: fakedev" in out
    assert "Backend version: 9.8.7" in out
    assert "Is FAKEDEV available: True" in out
    assert "FAKEDEV device count: 2" in out
    assert "fakedev:0: Fake Accelerator 0" in out
    # A failing query is reported, not raised.
    assert "fakedev:1: Could not collect (RuntimeError)" in out


def test_collect_env_without_backend_still_works(tree_under_test: Path) -> None:
    _torch_or_skip()
    out = collect_env_output(tree_under_test, register=False)
    line = next(ln for ln in out.splitlines() if ln.startswith("PrivateUse1 backend: "))
    assert "fakedev" not in out
    # N/A unless an installed package declares a torch.backends entry point (then it is listed).
    assert line == "PrivateUse1 backend: N/A" or "Backend packages: " in out


def test_regression_test_fails_on_unpatched_torch(real_clone: Path) -> None:
    _torch_or_skip()
    out = collect_env_output(real_clone)
    assert "PyTorch version" in out
    assert "fakedev" not in out and "PrivateUse1 backend" not in out
