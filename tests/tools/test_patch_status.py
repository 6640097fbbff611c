# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``status`` (applied per patch, drift) and ``reverse`` (back to the base, refs cleaned)."""

from __future__ import annotations

import pytest
from conftest import SmallTree, git_cmd

from catch_tools.errors import UserError
from catch_tools.patches import apply_to_git, reverse_series, series_status
from catch_tools.pin import load_pin


def _series(tree: SmallTree) -> None:
    tree.commit("Edit b", {"torch/b.py": "b\n"})
    tree.commit("Edit c", {"torch/sub/c.py": "c\n"})
    tree.format_series()


def test_status_before_and_after_apply(small_tree: SmallTree) -> None:
    _series(small_tree)
    pin = load_pin(small_tree.patches / "manifest.toml")
    before = series_status(small_tree.root, small_tree.patches, pin=pin)
    # A clean base carries none of the series: nothing applied, and nothing drifted either.
    assert [s for _, s in before.patches] == ["not-applied", "not-applied"] and before.drift == []
    apply_to_git(small_tree.root, small_tree.patches, pin=pin)
    after = series_status(small_tree.root, small_tree.patches, pin=pin)
    assert [s for _, s in after.patches] == ["applied", "applied"] and after.drift == []
    assert "2/2 applied; no drift" in after.to_text()
    reverse_series(small_tree.root, pin=pin)
    reversed_ = series_status(small_tree.root, small_tree.patches, pin=pin)
    assert [s for _, s in reversed_.patches] == ["not-applied", "not-applied"] and reversed_.drift == []


def test_status_reports_a_tree_that_differs_from_the_applied_patches(small_tree: SmallTree) -> None:
    _series(small_tree)
    pin = load_pin(small_tree.patches / "manifest.toml")
    apply_to_git(small_tree.root, small_tree.patches, pin=pin)
    # A merge brings in a change on a side branch: the series' commits are all on HEAD's first-parent line, yet
    # HEAD's tree is not base+series.
    head = git_cmd(small_tree.root, "rev-parse", "HEAD")
    git_cmd(small_tree.root, "checkout", "-q", "-b", "side", small_tree.base)
    small_tree.commit("side change", {"torch/a.py": "side\n"})
    git_cmd(small_tree.root, "checkout", "-q", "--detach", head)
    git_cmd(small_tree.root, "merge", "-q", "--no-ff", "--no-edit", "side")
    report = series_status(small_tree.root, small_tree.patches, pin=pin)
    assert [s for _, s in report.patches] == ["applied", "applied"]
    assert any("tree differs from base+series" in d for d in report.drift)


def test_status_reports_drift_and_modified_commits(small_tree: SmallTree) -> None:
    _series(small_tree)
    pin = load_pin(small_tree.patches / "manifest.toml")
    apply_to_git(small_tree.root, small_tree.patches, pin=pin)
    # Re-create the same changes as commits by someone else (same patch-id, other commit ids) plus an extra one.
    git_cmd(small_tree.root, "reset", "-q", "--hard", small_tree.base)
    small_tree.commit("Edit b differently worded", {"torch/b.py": "b\n"})
    small_tree.commit("Extra", {"torch/a.py": "extra\n"})
    (small_tree.root / "docs/index.md").write_text("dirty\n")
    report = series_status(small_tree.root, small_tree.patches, pin=pin)
    assert dict(report.patches) == {"0001-Edit-b.patch": "applied-modified", "0002-Edit-c.patch": "not-applied"}
    assert any("not from the series" in d for d in report.drift)
    assert any("uncommitted" in d for d in report.drift)


def test_reverse_goes_back_to_base_and_cleans_refs(small_tree: SmallTree, run_script) -> None:
    _series(small_tree)
    pin = load_pin(small_tree.patches / "manifest.toml")
    apply_to_git(small_tree.root, small_tree.patches, pin=pin)
    proc = run_script("apply_patches.py", "reverse", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches))
    assert proc.returncode == 0, proc.stderr
    assert git_cmd(small_tree.root, "rev-parse", "HEAD") == small_tree.base
    assert git_cmd(small_tree.root, "for-each-ref", "refs/patches") == ""
    assert git_cmd(small_tree.root, "status", "--porcelain") == ""
    again = run_script("apply_patches.py", "reverse", "--source", str(small_tree.root), "--patches-dir",
                       str(small_tree.patches))
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_reverse_refuses_to_drop_unknown_commits(small_tree: SmallTree) -> None:
    _series(small_tree)
    pin = load_pin(small_tree.patches / "manifest.toml")
    apply_to_git(small_tree.root, small_tree.patches, pin=pin)
    small_tree.commit("my work", {"torch/a.py": "mine\n"})
    before = small_tree.snapshot()
    with pytest.raises(UserError, match="export"):
        reverse_series(small_tree.root, pin=pin)
    assert small_tree.snapshot() == before
    reverse_series(small_tree.root, pin=pin, force=True)
    assert git_cmd(small_tree.root, "rev-parse", "HEAD") == small_tree.base
