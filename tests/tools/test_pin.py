# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The pin manifest agrees with the ``pytorch`` gitlink and with the upstream wheel; updates keep the file valid."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from catch_tools.errors import UserError
from catch_tools.paths import repo_root
from catch_tools.pin import gitlink_commit, load_pin, manifest_path, parse_pin, update_pin

UPSTREAM_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")


def test_manifest_matches_gitlink() -> None:
    pin = load_pin()
    assert gitlink_commit(repo_root()) == pin.commit


def test_manifest_matches_gitmodules_url() -> None:
    text = (repo_root() / ".gitmodules").read_text()
    assert f"url = {load_pin().repository}" in text


@pytest.mark.skipif(not UPSTREAM_WHEEL.is_file(), reason="upstream wheel file not on this machine")
def test_manifest_matches_upstream_wheel() -> None:
    pin = load_pin()
    with zipfile.ZipFile(UPSTREAM_WHEEL) as zf:
        version_py = zf.read("torch/version.py").decode()
    scope: dict[str, object] = {}
    exec(compile(version_py, "torch/version.py", "exec"), scope)
    assert scope["git_version"] == pin.commit
    assert scope["__version__"] == pin.wheel_version


def test_combined_version_satisfies_upstream_specifiers() -> None:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    combined = Version(load_pin().combined_version)
    assert combined.local is not None and "catch" in combined.local
    public = load_pin().public_version
    assert combined in SpecifierSet(f"=={public}")
    assert combined in SpecifierSet(f">={public}")
    assert combined not in SpecifierSet(f">{public}")


def test_update_pin_keeps_comments_and_validates(tmp_path: Path) -> None:
    path = tmp_path / "manifest.toml"
    shutil.copy(manifest_path(), path)
    before = path.read_text()
    update_pin(path, tag="v2.14.0", commit="a" * 40, wheel_version="2.14.0+cpu")
    pin = load_pin(path)
    assert (pin.tag, pin.commit, pin.wheel_version) == ("v2.14.0", "a" * 40, "2.14.0+cpu")
    comments = [line for line in before.splitlines() if line.startswith("#")]
    assert comments and all(c in path.read_text() for c in comments)
    with pytest.raises(UserError):
        update_pin(path, commit="not-a-sha")
    assert load_pin(path).commit == "a" * 40  # a rejected update leaves the file as it was


def test_bad_manifest_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "manifest.toml"
    path.write_text("[upstream]\ntag = \n")
    with pytest.raises(UserError) as info:
        load_pin(path)
    assert str(info.value).startswith(f"{path}:") and "\n" not in str(info.value)
    # The error names the line of the bad value (line 2), on every Python (tomllib's lineno is 3.14+ only).
    assert info.value.line == 2 and str(info.value).startswith(f"{path}:2: invalid TOML")


def test_gitlink_absent_in_repo_without_submodule(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert gitlink_commit(tmp_path) is None


@pytest.mark.parametrize("written", [" 2.13.0+cpu", "2.13.0+cpu\\n", "2.13.0+CPU", "v2.13.0"])
def test_wheel_version_not_in_normal_form_is_one_line_with_its_line(written: str) -> None:
    text = manifest_path().read_text()
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if ln.startswith("wheel_version"))
    bad = text.replace(f'wheel_version = "{load_pin().wheel_version}"', f'wheel_version = "{written}"')
    assert bad != text
    with pytest.raises(UserError) as info:
        parse_pin(bad, "manifest.toml")
    assert info.value.line == line and "normal form" in str(info.value) and "\n" not in str(info.value)
