# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The version matrix agrees with the pin: the current row is ``patches/manifest.toml`` read by ``tomllib`` here
(not through the code under test), the wheel tag is the pinned torch wheel's own, and a moved pin moves the row."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from catch_tools.docs_matrix import markdown_table, matrix_rows, python_of_tag
from catch_tools.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def manifest() -> dict:
    return tomllib.loads((REPO / "patches" / "manifest.toml").read_text())


def torch_wheel_tag() -> str:
    wheel = importlib.metadata.distribution("torch").read_text("WHEEL") or ""
    return next(line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:"))


def test_current_row_is_the_manifest() -> None:
    data = manifest()
    up, series = data["upstream"], data["series"]
    row = matrix_rows(REPO)[0]
    public = up["wheel_version"].split("+")[0]
    assert row.upstream_tag == up["tag"] and row.upstream_commit == up["commit"]
    assert row.upstream_wheel_version == up["wheel_version"]
    assert row.release_tag == f"v{public}-catch{series['version']}"
    assert row.combined_version == f"{up['wheel_version']}.catch{series['version']}"
    assert row.source == "working copy"


def test_torch_mlu_and_wheel_columns_match_what_is_installed() -> None:
    row = matrix_rows(REPO)[0]
    assert importlib.metadata.version("torch") == row.upstream_wheel_version  # constraints.txt pins the same release
    assert row.wheel_tag == torch_wheel_tag()
    assert row.python == f"CPython {sys.version_info.major}.{sys.version_info.minor}"
    try:
        installed_backend = importlib.metadata.version("torch_mlu")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("torch_mlu is not installed in this environment")
    assert installed_backend == row.torch_mlu_version


def test_a_built_combined_wheel_has_the_row_name() -> None:
    built = sorted((REPO / "dist").glob("torch-*catch*.whl"))
    if not built:
        pytest.skip("no combined wheel in dist/ (scripts/build_wheel.py makes one)")
    row = matrix_rows(REPO)[0]
    assert built[-1].name == f"torch-{row.combined_version}-{row.wheel_tag}.whl"


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "patches").mkdir(parents=True)
    (tmp_path / "patches" / "manifest.toml").write_text(text)
    return tmp_path


def test_moved_pin_moves_the_row_and_history_keeps_the_old_one(tmp_path: Path) -> None:
    text = (REPO / "patches" / "manifest.toml").read_text()
    root = _project(tmp_path, text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pin"], check=True)
    up = manifest()["upstream"]
    moved = (text.replace(up["tag"], "v9.9.0").replace(up["commit"], "ab" * 20)
             .replace(f'wheel_version = "{up["wheel_version"]}"', 'wheel_version = "9.9.0"')
             .replace("[series]", '[wheel]\ntag = "cp313-cp313-manylinux_2_28_aarch64"\n\n[series]'))
    (root / "patches" / "manifest.toml").write_text(moved)
    rows = matrix_rows(root)
    assert [r.upstream_tag for r in rows] == ["v9.9.0", up["tag"]]
    assert (rows[0].python, rows[0].wheel_tag) == ("CPython 3.13", "cp313-cp313-manylinux_2_28_aarch64")
    assert rows[0].combined_version == "9.9.0+catch1" and rows[1].source.startswith("commit `")
    table = markdown_table(rows).splitlines()
    assert len(table) == 4 and "`v9.9.0-catch1`" in table[2] and f"`{up['tag']}`" in table[3]


def test_unknown_wheel_tag_and_bad_manifest_are_one_line_errors(tmp_path: Path) -> None:
    text = (REPO / "patches" / "manifest.toml").read_text()
    up = manifest()["upstream"]
    root = _project(tmp_path / "a", text.replace(f'"{up["wheel_version"]}"', '"1.0.0"'))
    with pytest.raises(UserError, match=r"manifest.toml: no wheel tag for torch 1.0.0"):
        matrix_rows(root)
    bad = _project(tmp_path / "b", text.replace("[series]", "[series"))
    with pytest.raises(UserError, match=r"manifest.toml:\d+: invalid TOML"):
        matrix_rows(bad)
    with pytest.raises(UserError, match="CPython"):
        python_of_tag("py3-none-any")


def test_cli_prints_the_table() -> None:
    out = subprocess.run([sys.executable, "-m", "catch_tools.cli", "versions", "--root", str(REPO)],
                         capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0].startswith("| Catch release |")
    assert f"`{manifest()['upstream']['tag']}`" in out
