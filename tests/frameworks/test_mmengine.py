# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""mmengine's MLU path, unmodified, on Catch: ``import mmengine.structures`` (its annotations name
``torch.mlu.BoolTensor``) and a tiny Runner with AmpOptimWrapper on mlu against the same Runner on cpu."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).parent


def _run(work_dir: Path, *args: str, autoload: bool) -> dict:
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="1" if autoload else "0")
    r = subprocess.run([sys.executable, str(HERE / "mmengine_runner.py"), str(work_dir), *args], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_mmengine_structures():
    import mmengine.structures
    from mmengine.device import get_device, is_mlu_available

    assert is_mlu_available()
    assert get_device() == "mlu"
    data = mmengine.structures.PixelData(mask=torch.zeros(1, 4, 4, dtype=torch.bool, device="mlu"))
    assert data.mask.device.type == "mlu"


def test_runner_amp_on_mlu_matches_cpu(tmp_path):
    mlu = _run(tmp_path / "mlu", "--amp", autoload=True)
    cpu = _run(tmp_path / "cpu", "--no-mlu", autoload=False)  # no torch_mlu: mmengine picks the CPU
    assert (mlu["device"], mlu["wrapper"], mlu["param_device"]) == ("mlu", "AmpOptimWrapper", "mlu:0")
    assert (cpu["device"], cpu["wrapper"], cpu["param_device"]) == ("cpu", "OptimWrapper", "cpu")
    assert mlu["params"].keys() == cpu["params"].keys()
    for k in cpu["params"]:
        a, b = torch.tensor(mlu["params"][k]), torch.tensor(cpu["params"][k])
        # fp16 autocast vs fp32: close, not equal; a broken loss scale (unscaled grads, skipped steps) is far off
        torch.testing.assert_close(a, b, rtol=2e-2, atol=2e-2, msg=k)
