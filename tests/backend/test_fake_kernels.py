# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The fake (meta) kernels of the ``torch_mlu`` ops: one module registers them all (``torch_mlu.fake_kernels``), and
every op that a C++ kernel computes has one, so FakeTensor tracing passes through it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch
from torch._library.simple_registry import singleton

import torch_mlu.compile  # noqa: F401  (imports torch_mlu.fake_kernels, as the graph-mode backend does)
import torch_mlu.fake_kernels
import torch_mlu.quantization  # noqa: F401  (so does the int8 flow)

# Ops without a fake kernel: fused_adam is a Python kernel (CompositeExplicitAutograd) that runs on fake tensors as
# they are; set_layout/get_layout tag storages for serialization and are not traced.
NO_FAKE = {"torch_mlu::fused_adam", "torch_mlu::set_layout", "torch_mlu::get_layout"}


def _torch_mlu_ops() -> set[str]:
    return {name for name in torch._C._dispatch_get_all_op_names() if name.startswith("torch_mlu::")}


def _fake_kernels() -> dict[str, str]:
    """op -> the file that registered its fake kernel (``torch.library`` records the registration's file:line)."""
    found = {}
    for op in _torch_mlu_ops():
        entry = singleton.get(op)
        if entry is not None and entry.fake_impl.kernel is not None:
            found[op] = Path(entry.fake_impl.kernel.source.rpartition(":")[0]).resolve()
    return found


def test_every_traced_op_has_a_fake_kernel_from_the_one_module():
    fakes = _fake_kernels()
    assert set(fakes) == _torch_mlu_ops() - NO_FAKE
    assert set(fakes.values()) == {Path(torch_mlu.fake_kernels.__file__).resolve()}


def test_importing_fake_kernels_alone_registers_all_of_them():
    code = (
        "import torch, torch_mlu.fake_kernels\n"
        "from torch._library.simple_registry import singleton\n"
        "ops = [n for n in torch._C._dispatch_get_all_op_names() if n.startswith('torch_mlu::')]\n"
        "print(sorted(n for n in ops if singleton.get(n) and singleton.get(n).fake_impl.kernel))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(sorted(set(_fake_kernels())))
