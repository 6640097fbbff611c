# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Careless and hostile input to scripts/upgrade.py: a missing manifest's advice names the tool's own options."""

from __future__ import annotations

from pathlib import Path

import pytest

from catch_tools.errors import run_cli
from catch_tools.upgrade import cli
from catch_tools.wheel import cli as wheel_cli


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def test_a_missing_manifest_is_advised_with_the_tools_own_options(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli(cli.main, ["--project", str(empty)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "pin manifest not found: pass --project DIR" in line and "--pin" not in line
    assert run_cli(wheel_cli.main, ["--patches-dir", str(empty), "--out", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "pin manifest not found: pass --patches-dir DIR" in line and "--pin" not in line
