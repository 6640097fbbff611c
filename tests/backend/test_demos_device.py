# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Every demo in examples/ takes ``--device mlu|cpu|both`` and the options examples/README.md documents.

The ResNet, transformer and serving demos run with ``both`` in tests/backend/test_examples.py; here the digits CNN,
its quantization and the DDP demo (quick settings): ``both`` runs mlu then cpu, the table shows the metric and the
time per step of each, and the record goes to the ``--result`` file. The oracle for the numbers is the cpu run of the
same seed (the emulated mlu runs ATen's CPU kernels on device buffers).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mlu_helpers import REPO, run_script
from test_distributed_collectives import free_port

EXAMPLES = REPO / "examples"
DEMOS = ["train_digits.py", "resnet_digits.py", "transformer_lm.py", "serve_inference.py", "quantize_digits.py",
         "train_digits_ddp.py"]
#: The options examples/README.md says every demo takes.
COMMON_OPTIONS = ["--device", "--seed", "--steps", "--log-every", "--threads", "--result"]


def _result(path: Path, stdout: str) -> dict[str, Any]:
    assert f"result: {path}" in stdout, stdout[-2000:]
    assert max(len(line) for line in stdout.splitlines()) < 300  # no multi-KB JSON line on the terminal
    return json.loads(path.read_text())


def _table_row(stdout: str, device: str) -> list[str]:
    rows = [line.split() for line in stdout.splitlines() if line.startswith(f"  {device} ")]
    assert len(rows) == 1, stdout[-2000:]
    return rows[0]


@pytest.mark.parametrize("script", DEMOS)
def test_every_demo_documents_the_common_options(script: str) -> None:
    out = run_script(EXAMPLES / script, "--help")
    assert out.returncode == 0, out.stderr
    for option in COMMON_OPTIONS:
        assert option in out.stdout, (script, option)
    assert "both" in out.stdout


@pytest.mark.parametrize("script", DEMOS)
def test_bad_device_names_mlu_not_privateuseone(script: str) -> None:
    out = run_script(EXAMPLES / script, "--device", "nope")
    assert out.returncode == 2, out.stdout[-500:] + out.stderr
    assert out.stderr.startswith("error: --device nope"), out.stderr
    assert "mlu" in out.stderr and "privateuse" not in out.stderr.lower(), out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_train_digits_both_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    out = run_script(EXAMPLES / "train_digits.py", "--device", "both", "--steps", "20", "--log-every", "5",
                     "--threads", "1", "--seed", "2", "--result", str(path))
    assert out.returncode == 0, out.stderr[-3000:]
    result = _result(path, out.stdout)
    mlu, cpu = result["runs"]
    assert (mlu["device"], cpu["device"]) == ("mlu", "cpu")
    assert len(mlu["losses"]) == len(cpu["losses"]) == 20
    assert max(abs(a - b) for a, b in zip(mlu["losses"], cpu["losses"], strict=True)) <= 1e-5
    assert mlu["test_accuracy"] == pytest.approx(cpu["test_accuracy"], abs=0.01)
    assert re.findall(r"^\[(mlu|cpu)\] step 5 loss", out.stdout, re.M) == ["mlu", "cpu"]  # --log-every 5
    for device, run in (("mlu", mlu), ("cpu", cpu)):
        assert float(_table_row(out.stdout, device)[3]) == pytest.approx(run["test_accuracy"], abs=1e-4)
        assert run["ms_per_step"] > 0
    assert "mlu/cpu time per step:" in out.stdout


@pytest.mark.slow
def test_quantize_digits_both_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    out = run_script(EXAMPLES / "quantize_digits.py", "--device", "both", "--epochs", "2", "--flow", "static",
                     "--threads", "1", "--result", str(path), timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    result = _result(path, out.stdout)
    mlu, cpu = result["runs"]
    assert (mlu["device"], cpu["device"]) == ("mlu", "cpu") and result["flows"] == ["static"]
    assert max(abs(a - b) for a, b in zip(mlu["losses"], cpu["losses"], strict=True)) <= 1e-5
    assert mlu["float_accuracy"] == pytest.approx(cpu["float_accuracy"], abs=0.01)
    for run in (mlu, cpu):
        assert run["float_accuracy"] >= 0.8 and run["static_accuracy"] >= run["float_accuracy"] - 0.1
    assert "mlu/cpu time per step:" in out.stdout
    assert "[mlu] static int8 accuracy" in out.stdout and "[cpu] static int8 accuracy" in out.stdout


@pytest.mark.slow
def test_ddp_demo_both_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
           "--master-port", str(free_port()), str(EXAMPLES / "train_digits_ddp.py"), "--device", "both",
           "--epochs", "2", "--threads", "1", "--result", str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    result = _result(path, out.stdout)
    mlu, cpu = result["runs"]
    assert (mlu["backend"], cpu["backend"]) == ("cncl", "gloo")
    assert mlu["world_size"] == cpu["world_size"] == 2 and mlu["steps"] == cpu["steps"] > 0
    # same seed, same shards, same kernels: the epoch losses agree across the two transports
    assert mlu["epoch_losses"] == pytest.approx(cpu["epoch_losses"], abs=1e-4)
    assert _table_row(out.stdout, "mlu")[1] == "cncl" and _table_row(out.stdout, "cpu")[1] == "gloo"
    assert "mlu/cpu time per step:" in out.stdout
