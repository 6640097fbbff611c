# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Source mode of build_wheel.py: the dry run prints the exact steps and environment; missing pieces are errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from catch_tools.cli.wheel import main
from catch_tools.errors import UserError
from catch_tools.pin import load_pin


def test_dry_run_prints_steps_and_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "pytorch"
    assert main(["--from-source", "--dry-run", "--source", str(source), "--jobs", "7",
                 "--out", str(tmp_path / "dist")]) == 0
    out = capsys.readouterr().out
    pin = load_pin()
    for line in ("export USE_CUDA=0", "export USE_ROCM=0", "export BUILD_TEST=0", "export USE_MKLDNN=1",
                 "export MAX_JOBS=7", f"export PYTORCH_BUILD_VERSION={pin.wheel_version}"):
        assert line in out.splitlines()
    assert "apply_patches.py apply --source " + str(source) in out
    assert "pip wheel --no-build-isolation --no-deps -v ." in out
    assert "git submodule update --init --recursive" in out
    # the steps come in build order: series, submodules, upstream build, Catch, assembly
    order = [out.index(s) for s in ("apply_patches.py", "submodule update", "pip wheel --no-build-isolation "
                                    "--no-deps -v", "catch -w", "add Catch")]
    assert order == sorted(order)
    assert "# preflight: " in out and "not a PyTorch checkout" in out
    assert not (tmp_path / "dist").exists()


def test_missing_checkout_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pytorch").mkdir()
    with pytest.raises(UserError) as info:
        main(["--from-source", "--source", str(tmp_path / "pytorch"), "--out", str(tmp_path / "dist")])
    assert "not a PyTorch checkout" in str(info.value)
    assert not (tmp_path / "dist").exists()


def test_missing_compiler_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "pytorch"
    (source / ".git").mkdir(parents=True)
    (source / "setup.py").write_text("raise SystemExit('must not run')\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(UserError) as info:
        main(["--from-source", "--source", str(source), "--out", str(tmp_path / "dist")])
    assert "no C compiler found" in str(info.value)


def test_dry_run_needs_from_source(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        main(["--dry-run", "--out", str(tmp_path / "dist")])
