# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The engine on the real pinned tree: the project's series lints, checks, applies as commits, reports status,
reverses, and exports back byte-identical; the same series overlays an unpacked wheel tree."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import git_cmd

from catch_tools.patches import (
    Series,
    apply_series_to_dir,
    apply_to_git,
    check_series,
    export_series,
    lint_series,
    reverse_series,
    series_status,
)
from catch_tools.paths import patches_dir
from catch_tools.pin import load_pin

pytestmark = pytest.mark.real


def test_project_series_is_clean_and_not_empty() -> None:
    assert lint_series(patches_dir()) == []
    assert len(Series.read(patches_dir()).patches) >= 1


def test_apply_status_export_reverse_on_real_tree(real_clone: Path, tmp_path: Path) -> None:
    pin = load_pin()
    report = check_series(patches_dir(), source=real_clone)
    assert report.failed == []
    result = apply_to_git(real_clone, patches_dir())
    assert git_cmd(real_clone, "rev-parse", "refs/patches/base") == git_cmd(real_clone, "rev-parse", pin.tag)
    assert len(result.commits) == len(Series.read(patches_dir()).patches)
    status = series_status(real_clone, patches_dir())
    assert all(state == "applied" for _, state in status.patches) and status.drift == []
    # Export into a copy of patches/: the round trip keeps every file byte-identical.
    copy = tmp_path / "patches"
    shutil.copytree(patches_dir(), copy)
    exported = export_series(real_clone, copy)
    assert not exported.changed
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == {p.name: p.read_bytes()
                                                               for p in patches_dir().iterdir()}
    assert apply_to_git(real_clone, patches_dir()).noop
    reverse_series(real_clone)
    assert git_cmd(real_clone, "rev-parse", "HEAD") == git_cmd(real_clone, "rev-parse", pin.tag)


def test_series_overlays_unpacked_wheel_files(real_clone: Path, tmp_path: Path) -> None:
    from catch_tools.upstream import release_wheel

    wheel = release_wheel(load_pin().public_version)
    target = tmp_path / "wheel"
    touched = {p for patch in Series.read(patches_dir()).patches for ch in patch.files for p in ch.paths}
    with zipfile.ZipFile(wheel) as zf:
        for name in touched:
            zf.extract(name, target)
    changed = apply_series_to_dir(patches_dir(), target)
    assert {str(p.relative_to(target)) for p in changed} == touched
    # The overlay gives exactly what the git mode gives on the source tree.
    apply_to_git(real_clone, patches_dir())
    for name in touched:
        assert (target / name).read_bytes() == (real_clone / name).read_bytes()
    assert b"get_privateuse1_backend_info" in (target / "torch/utils/collect_env.py").read_bytes()
