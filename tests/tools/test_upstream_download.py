# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Release downloads ignore every pip constraint (the project's PIP_CONSTRAINT and a pip.conf ``constraint =``).

pip itself is the oracle: a local find-links directory holds a ``torch-9.9.9`` wheel that both constraints exclude;
plain ``pip download`` refuses it, :func:`release_wheel` gets it (offline, ``--no-index``), printing progress.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_wheels import write_wheel

from catch_tools.paths import repo_root
from catch_tools.upstream import release_wheel, unconstrained_pip_env


@pytest.fixture
def constrained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Offline pip with a find-links dir holding torch 9.9.9, the project's constraint and a pip.conf constraint."""
    links = tmp_path / "links"
    write_wheel(links, "torch", "9.9.9", {"torch/__init__.py": "__version__ = '9.9.9'\n"})
    conf_constraint = tmp_path / "machine-constraints.txt"
    conf_constraint.write_text("torch<=2.14.1\n")
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nconstraint = {conf_constraint}\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    monkeypatch.setenv("PIP_CONSTRAINT", str(repo_root() / "constraints.txt"))
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("CATCH_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_plain_pip_download_is_constrained(constrained: Path) -> None:
    for env in ({**os.environ}, {**os.environ, "PIP_CONSTRAINT": ""}):  # "" falls back to pip.conf's constraint
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(constrained / "d"),
                               "torch==9.9.9"], capture_output=True, text=True, env=env, check=False)
        assert proc.returncode != 0 and "torch" in proc.stderr


def test_release_wheel_downloads_without_constraints(constrained: Path, capfd: pytest.CaptureFixture[str]) -> None:
    wheel = release_wheel("9.9.9")
    assert wheel.name == "torch-9.9.9-py3-none-any.whl" and wheel.parent == constrained / "cache" / "wheels"
    err = capfd.readouterr().err
    assert "downloading torch==9.9.9 (pip download --no-deps, no constraint)" in err
    assert "torch==9.9.9: done" in err
    assert release_wheel("9.9.9") == wheel  # cached: no second download
    assert "downloading" not in capfd.readouterr().err


def test_unconstrained_env_keeps_indexes() -> None:
    env = unconstrained_pip_env({"PIP_CONSTRAINT": "/x/constraints.txt", "PIP_FIND_LINKS": "/opt/wheels",
                                 "PIP_INDEX_URL": "https://example.invalid/simple"})
    assert env["PIP_CONSTRAINT"] == os.devnull
    assert env["PIP_FIND_LINKS"] == "/opt/wheels" and env["PIP_INDEX_URL"] == "https://example.invalid/simple"
