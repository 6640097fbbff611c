# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``apply --target-dir D`` never writes outside ``D``: one test per escape route.

Each route is refused with one line naming the patch (or journal) and the path, the target and the outside are left
byte-identical. ``git apply`` is the reference: it refuses a patch whose path goes through a symbolic link ("affected
file ... is beyond a symbolic link") and a regular-file patch onto a symlink ("wrong type").
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import SCRIPTS, SmallTree, numbered

from catch_tools.errors import UserError
from catch_tools.patches import apply_series_to_dir, check_series


def _tree_bytes(root: Path) -> dict[str, object]:
    """Every entry under ``root``: file bytes, or ``("link", target)`` for a symlink (never followed)."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = p.read_bytes()
    return out


def _setup(tmp_path: Path, small_tree: SmallTree) -> tuple[Path, Path]:
    """A wheel-like target ``D`` and an ``outside`` directory holding files a patch could reach."""
    target = tmp_path / "wheel"
    (target / "torch").mkdir(parents=True)
    (target / "torch/a.py").write_text(numbered("a", 60))
    (target / "torch/b.py").write_text(numbered("b", 30))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "c.py").write_text(numbered("c", 20))
    (outside / "victim.txt").write_text("precious\n")
    return target, outside


def _refused(patches: Path, target: Path, outside: Path, *, match: str) -> UserError:
    before = (_tree_bytes(target), _tree_bytes(outside))
    with pytest.raises(UserError) as info:
        apply_series_to_dir(patches, target)
    assert (_tree_bytes(target), _tree_bytes(outside)) == before, "the target or the outside changed"
    message = str(info.value)
    assert match in message, message
    assert "\n" not in message
    return info.value


def test_symlinked_parent_edit_is_refused(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Edit c", {"torch/sub/c.py": numbered("c", 20).replace("c line 5\n", "c ours 5\n")})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    (target / "torch/sub").symlink_to(outside)  # D/torch/sub -> outside: same file contents as the patch expects
    err = _refused(small_tree.patches, target, outside, match="torch/sub/c.py")
    assert "0001-Edit-c.patch" in str(err) and "symbolic link" in str(err)
    report = check_series(small_tree.patches, target_dir=target)
    assert not report.patches[0].ok and "symbolic link" in report.patches[0].problems[0][2]


def test_symlinked_parent_create_is_refused(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Add d", {"torch/sub/d.py": "evil\n"})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    (target / "torch/sub").symlink_to(outside)
    err = _refused(small_tree.patches, target, outside, match="torch/sub/d.py")
    assert "0001-Add-d.patch" in str(err) and "symbolic link" in str(err)


def test_symlinked_parent_delete_is_refused(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Remove c", {"torch/sub/c.py": None})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    (target / "torch/sub").symlink_to(outside)
    _refused(small_tree.patches, target, outside, match="symbolic link")


def test_symlinked_grandparent_is_refused(small_tree: SmallTree, tmp_path: Path) -> None:
    """The symlink is the first component: D/torch -> outside/torch."""
    small_tree.commit("Edit c", {"torch/sub/c.py": numbered("c", 20).replace("c line 5\n", "c ours 5\n")})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    (outside / "torch/sub").mkdir(parents=True)
    (outside / "torch/sub/c.py").write_text(numbered("c", 20))
    (target / "torch/a.py").unlink()
    (target / "torch/b.py").unlink()
    (target / "torch").rmdir()
    (target / "torch").symlink_to(outside / "torch")
    _refused(small_tree.patches, target, outside, match="symbolic link")


def test_rename_into_symlinked_directory_is_refused(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Move b", {"torch/b.py": None, "torch/sub/b.py": numbered("b", 30)})
    small_tree.format_series()
    assert "rename to" in next(small_tree.patches.glob("0001-*")).read_text()
    target, outside = _setup(tmp_path, small_tree)
    (target / "torch/sub").symlink_to(outside)
    _refused(small_tree.patches, target, outside, match="torch/sub/b.py")


def test_symlinked_target_file_is_refused(small_tree: SmallTree, tmp_path: Path) -> None:
    """D/torch/a.py is a symlink to a file outside with the contents the patch expects."""
    small_tree.commit("Edit a", {"torch/a.py": numbered("a", 60).replace("a line 5\n", "a ours 5\n")})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    (outside / "a.py").write_text(numbered("a", 60))
    (target / "torch/a.py").unlink()
    (target / "torch/a.py").symlink_to(outside / "a.py")
    err = _refused(small_tree.patches, target, outside, match="torch/a.py")
    assert "symbolic link" in str(err)


def test_plain_diff_cannot_retarget_a_symlink_outside(small_tree: SmallTree, tmp_path: Path) -> None:
    """A plain diff (no mode lines) on a symlink edits its target text: it must not make it point outside D."""
    target, outside = _setup(tmp_path, small_tree)
    (target / "torch/link.py").symlink_to("a.py")
    (small_tree.patches / "0001-retarget.patch").write_text(
        "Retarget\n\n--- a/torch/link.py\n+++ b/torch/link.py\n@@ -1 +1 @@\n-a.py\n\\ No newline at end of file\n"
        f"+{outside}/victim.txt\n\\ No newline at end of file\n")
    (small_tree.patches / "series").write_text("0001-retarget.patch\n")
    _refused(small_tree.patches, target, outside, match="torch/link.py")


def test_journal_temp_file_symlink_is_not_followed(small_tree: SmallTree, tmp_path: Path) -> None:
    """A symlink planted where the crash journal's temporary file goes must not be written through."""
    small_tree.commit("Edit b", {"torch/b.py": "b\n"})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    (target / ".catch-apply-journal.json.tmp").symlink_to(outside / "victim.txt")
    apply_series_to_dir(small_tree.patches, target)
    assert (target / "torch/b.py").read_text() == "b\n"
    assert (outside / "victim.txt").read_text() == "precious\n"


@pytest.mark.parametrize("field", ["dest", "tmp", "bak"])
def test_crafted_journal_cannot_touch_outside(small_tree: SmallTree, tmp_path: Path, field: str) -> None:
    """Recovery reads paths from a journal inside D: a path leaving D is refused naming the journal."""
    small_tree.commit("Edit b", {"torch/b.py": "b\n"})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    entry = {"dest": "torch/b.py", "tmp": "torch/b.py.catch-new", "bak": "torch/b.py.catch-orig", "created": False}
    entry[field] = "../outside/victim.txt"
    for phase in ("commit", "done"):
        (target / ".catch-apply-journal.json").write_text(json.dumps({"phase": phase, "entries": [entry]}))
        err = _refused(small_tree.patches, target, outside, match=".catch-apply-journal.json")
        assert "outside" in str(err) or ".." in str(err)


def test_crafted_journal_through_symlink_cannot_touch_outside(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Edit b", {"torch/b.py": "b\n"})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    (target / "torch/sub").symlink_to(outside)
    entry = {"dest": "torch/sub/victim.txt", "tmp": "torch/sub/victim.txt.catch-new",
             "bak": "torch/sub/victim.txt.catch-orig", "created": True}
    (target / ".catch-apply-journal.json").write_text(json.dumps({"phase": "commit", "entries": [entry]}))
    _refused(small_tree.patches, target, outside, match="symbolic link")


@pytest.mark.parametrize("header", [
    "--- a/../outside/victim.txt\n+++ b/../outside/victim.txt\n",
    "--- a/torch/../../outside/victim.txt\n+++ b/torch/../../outside/victim.txt\n",
    "--- {outside}/victim.txt\n+++ {outside}/victim.txt\n",
])
def test_dotdot_and_absolute_paths_are_refused(small_tree: SmallTree, tmp_path: Path, header: str) -> None:
    target, outside = _setup(tmp_path, small_tree)
    (small_tree.patches / "0001-escape.patch").write_text(
        "Escape\n\n" + header.format(outside=outside) + "@@ -1 +1 @@\n-precious\n+owned\n")
    (small_tree.patches / "series").write_text("0001-escape.patch\n")
    _refused(small_tree.patches, target, outside, match="0001-escape.patch")


def test_cli_reports_symlink_escape_in_one_line(small_tree: SmallTree, tmp_path: Path, run_script) -> None:
    small_tree.commit("Add d", {"torch/sub/d.py": "evil\n"})
    small_tree.format_series()
    target, outside = _setup(tmp_path, small_tree)
    (target / "torch/sub").symlink_to(outside)
    proc = run_script("apply_patches.py", "apply", "--target-dir", str(target), "--patches-dir",
                      str(small_tree.patches))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "0001-Add-d.patch" in proc.stderr and "torch/sub" in proc.stderr
    assert not (outside / "d.py").exists()
    assert SCRIPTS.is_dir()
