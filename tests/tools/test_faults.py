# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The one fault-injection point (``CATCH_FAULT``): it fires only at the point and pass it names, and a malformed
value is one clear error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from catch_tools import faults
from catch_tools.errors import UserError


@pytest.fixture(autouse=True)
def _fresh_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faults, "_passes", {})


def test_unset_or_another_point_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(faults.ENV, raising=False)
    faults.fault("rebase.start")
    monkeypatch.setenv(faults.ENV, "rebase.export")
    faults.fault("rebase.start")


def test_pause_fires_at_the_nth_pass_only(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(faults.time, "sleep", slept.append)
    monkeypatch.setenv(faults.ENV, "patches.move-head:2,pause=0.5")
    for _ in range(3):
        faults.fault("patches.move-head")
    assert slept == [0.5]


@pytest.mark.parametrize("spec", ["x:0", "x:two", "x,explode", "x,pause=soon"])
def test_malformed_values_are_refused(monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    monkeypatch.setenv(faults.ENV, spec)
    with pytest.raises(UserError, match="CATCH_FAULT"):
        faults.fault("x")


@pytest.mark.parametrize(("action", "status"), [("", -signal.SIGKILL), (",interrupt", -signal.SIGINT)])
def test_kill_and_interrupt_signal_the_process(action: str, status: int) -> None:
    code = "from catch_tools.faults import fault\nfault('p')\nprint('not reached')\n"
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, faults.ENV: f"p{action}"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == status and "not reached" not in proc.stdout
    if action:
        assert "KeyboardInterrupt" in proc.stderr
