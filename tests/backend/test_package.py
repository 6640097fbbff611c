# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Package wiring of torch_mlu: torch.mlu submodules are single modules; `import torch` alone registers cncl."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_torch_mlu_submodules_are_the_same_objects() -> None:
    # Like `import torch.cuda.amp`: importing the dotted name must not load a second copy of the module.
    out = _run(
        "import torch, importlib\n"
        "import torch.mlu.amp, torch.mlu.memory, torch.mlu.random, torch.mlu.streams\n"
        "import torch_mlu.mlu as m\n"
        "print(all(importlib.import_module('torch.mlu.' + n) is getattr(m, n) if hasattr(m, n) else\n"
        "          importlib.import_module('torch.mlu.' + n) is importlib.import_module('torch_mlu.mlu.' + n)\n"
        "          for n in ('amp', 'memory', 'random', 'streams')))\n"
        "print(torch.mlu.Stream is torch.mlu.streams.Stream)"
    )
    assert out.splitlines() == ["True", "True"]


def test_plain_import_torch_registers_cncl_for_mlu() -> None:
    # The default c10d backend for a device is what init_process_group() picks for its tensors (nccl for cuda).
    out = _run(
        "import torch, torch.distributed as dist\n"
        "print('cncl' in dist.Backend.backend_list)\n"
        "print(dist.get_default_backend_for_device('mlu'))"
    )
    assert out.splitlines() == ["True", "cncl"]
