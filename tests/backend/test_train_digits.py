# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The example's DONE-WHEN: mlu and cpu runs with the same seed give per-step losses within 1e-5 and >= 95% test
accuracy (scikit-learn digits, 1,797 real images)."""

from __future__ import annotations

import re

import pytest
from mlu_helpers import REPO, run_script

SCRIPT = REPO / "examples" / "train_digits.py"


def _run(device: str, *extra: str) -> tuple[list[float], float]:
    out = run_script(SCRIPT, "--device", device, *extra)
    assert out.returncode == 0, out.stderr
    losses = [float(m.group(1)) for m in re.finditer(r"^step \d+ loss (\S+)$", out.stdout, re.M)]
    acc = float(re.search(r"^test accuracy (\S+)$", out.stdout, re.M).group(1))
    return losses, acc


@pytest.mark.slow
def test_mlu_matches_cpu_and_learns():
    cpu_losses, cpu_acc = _run("cpu", "--seed", "0")
    mlu_losses, mlu_acc = _run("mlu", "--seed", "0")
    assert len(cpu_losses) == len(mlu_losses) > 100
    assert max(abs(a - b) for a, b in zip(cpu_losses, mlu_losses, strict=True)) <= 1e-5
    assert cpu_acc >= 0.95 and mlu_acc >= 0.95
    assert mlu_losses[-1] < mlu_losses[0] / 10


def test_second_device_and_other_seed_short_run():
    a, _ = _run("mlu:1", "--seed", "3", "--steps", "15")
    b, _ = _run("cpu", "--seed", "3", "--steps", "15")
    assert len(a) == 15
    assert max(abs(x - y) for x, y in zip(a, b, strict=True)) <= 1e-5


def test_bad_device_is_a_clean_error():
    out = run_script(SCRIPT, "--device", "nope")
    assert out.returncode == 2
    assert out.stderr.strip().startswith("error: --device nope")
    assert "Traceback" not in out.stderr

