# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Real upstream trees from release wheels: the right files, the right tag, reproducible commit ids."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from catch_tools.errors import UserError
from catch_tools.pin import load_pin
from catch_tools.upstream import extract_python_tree, release_wheel, upstream_repo

pytestmark = pytest.mark.real


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def test_pinned_release_tree_matches_wheel() -> None:
    pin = load_pin()
    repo = upstream_repo([pin.public_version])
    assert _git(repo, "rev-parse", f"{pin.tag}^{{commit}}") == _git(repo, "rev-parse", "HEAD")
    tracked = set(_git(repo, "ls-files").splitlines())
    with zipfile.ZipFile(release_wheel(pin.public_version)) as zf:
        py = {n for n in zf.namelist() if n.endswith(".py") and n.split("/")[0] in ("torch", "torchgen", "functorch")}
        assert tracked == py
        sample = "torch/utils/collect_env.py"
        assert (repo / sample).read_bytes() == zf.read(sample)
    assert pin.commit in _git(repo, "log", "-1", "--format=%B")


def test_commit_ids_are_reproducible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pin = load_pin()
    first = _git(upstream_repo([pin.public_version]), "rev-parse", "HEAD")
    wheel = release_wheel(pin.public_version)
    monkeypatch.setenv("CATCH_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "wheels").mkdir(parents=True)
    (tmp_path / "cache" / "wheels" / wheel.name).symlink_to(wheel)
    second = _git(upstream_repo([pin.public_version]), "rev-parse", "HEAD")
    assert first == second


def test_bad_inputs_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        upstream_repo(["not-a-version"])
    junk = tmp_path / "torch-0.0.0-py3-none-any.whl"
    junk.write_bytes(b"not a zip")
    with pytest.raises(UserError, match="not a readable wheel"):
        extract_python_tree(junk, tmp_path / "out")
