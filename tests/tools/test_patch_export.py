# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``export``: deterministic files, byte-identical round trip, no churn for equivalent changes, metadata kept,
empty export refused, ``--dry-run`` as a CI gate."""

from __future__ import annotations

import pytest
from conftest import SmallTree, git_cmd, numbered

from catch_tools.errors import UserError
from catch_tools.patches import apply_to_git, export_series, lint_series
from catch_tools.patches.export import FORMAT_PATCH_OPTIONS
from catch_tools.pin import load_pin


def _pin(tree: SmallTree):
    return load_pin(tree.patches / "manifest.toml")


def _apply_series(tree: SmallTree) -> None:
    a = numbered("a", 60).splitlines(keepends=True)
    a[40] = "a ours 41\n"
    tree.commit("Edit a: a subject long enough to be folded by git format-patch when it writes the header",
                {"torch/a.py": "".join(a)}, body="Why it is needed.\n\nSecond paragraph.",
                status="Backport [abc123]", test="tests/tools/test_x.py::test_x",
                author="Jörg Müller <joerg@example.org>")
    tree.commit("Add d", {"torch/d.py": "d\n"}, status="Inappropriate [Catch-specific]")
    tree.commit("Rename c", {"torch/sub/c.py": None, "torch/sub/c2.py": numbered("c", 20)})
    tree.format_series()
    apply_to_git(tree.root, tree.patches, pin=_pin(tree))


def test_export_round_trip_is_byte_identical_and_stable(small_tree: SmallTree) -> None:
    _apply_series(small_tree)
    (small_tree.patches / "series").write_text("# test series\n")
    for old in small_tree.patches.glob("*.patch"):
        old.unlink()
    first = export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    files = {p.name: p.read_bytes() for p in small_tree.patches.glob("*.patch")}
    assert sorted(first.written) == sorted(files)
    first_name, *rest = sorted(files)
    assert rest == ["0002-Add-d.patch", "0003-Rename-c.patch"]
    assert first_name.startswith("0001-Edit-a-a-subject-long") and first_name.endswith(".patch")
    assert len(first_name) <= 64
    rename = files["0003-Rename-c.patch"].decode()
    assert "rename from torch/sub/c.py" in rename and "similarity index 100%" in rename
    assert b"From 0000000000000000000000000000000000000000 " in files["0002-Add-d.patch"]
    # Apply what was exported to a fresh state, export again: nothing changes, byte for byte.
    apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree), force=True)
    second = export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert not second.changed and len(second.kept) == 3
    assert {p.name: p.read_bytes() for p in small_tree.patches.glob("*.patch")} == files
    meta = files[first_name].decode()
    assert "Upstream-Status: Backport [abc123]" in meta and "Catch-Test: tests/tools/test_x.py::test_x" in meta
    assert "Second paragraph." in meta and "=?UTF-8?q?J=C3=B6rg" in meta
    assert lint_series(small_tree.patches) == []


def test_equivalent_change_keeps_the_file_when_only_offsets_move(small_tree: SmallTree) -> None:
    _apply_series(small_tree)
    export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    files = {p.name: p.read_bytes() for p in small_tree.patches.glob("*.patch")}
    # Upstream inserts lines at the top of a.py: the hunk moves, the change is the same.
    git_cmd(small_tree.root, "checkout", "-q", "--detach", small_tree.base)
    small_tree.commit("upstream", {"torch/a.py": "top\n" * 7 + numbered("a", 60)})
    git_cmd(small_tree.root, "tag", "-f", "v2.13.0")
    git_cmd(small_tree.root, "update-ref", "-d", "refs/patches/base")
    apply_to_git(small_tree.root, small_tree.patches, pin=_pin(small_tree), force=True)
    exported = git_cmd(small_tree.root, "format-patch", "--stdout", "-1", "HEAD~2")
    assert "@@ -45,7 +45,7 @@" in exported  # the regenerated hunk really moved
    result = export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert not result.changed
    assert {p.name: p.read_bytes() for p in small_tree.patches.glob("*.patch")} == files
    # --refresh: the moved patch gets the diff git format-patch writes on this base, the others keep their bytes
    result = export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree), refresh=True)
    moved = [n for n, data in files.items() if b"a/torch/a.py" in data]
    assert result.written == moved and len(result.kept) == len(files) - 1
    oracle = git_cmd(small_tree.root, "format-patch", *FORMAT_PATCH_OPTIONS, "--stdout", "-1", "HEAD~2")
    assert (small_tree.patches / moved[0]).read_text() == oracle + "\n"
    assert {n: (small_tree.patches / n).read_bytes() for n in result.kept} == {n: files[n] for n in result.kept}


def test_dry_run_lists_changes_and_changes_nothing(small_tree: SmallTree, run_script) -> None:
    _apply_series(small_tree)
    export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    small_tree.commit("New fix", {"torch/b.py": "b fixed\n"})
    before = {p.name: p.read_bytes() for p in small_tree.patches.iterdir()}
    proc = run_script("apply_patches.py", "export", "--dry-run", "--source", str(small_tree.root),
                      "--patches-dir", str(small_tree.patches))
    assert proc.returncode == 1
    assert "would update" in proc.stdout and "0004-New-fix.patch" in proc.stdout
    assert {p.name: p.read_bytes() for p in small_tree.patches.iterdir()} == before
    proc = run_script("apply_patches.py", "export", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches))
    assert proc.returncode == 0, proc.stderr
    assert (small_tree.patches / "series").read_text().splitlines()[-1] == "0004-New-fix.patch"
    assert (small_tree.patches / "series").read_text().startswith("# test series\n")
    proc = run_script("apply_patches.py", "export", "--dry-run", "--source", str(small_tree.root),
                      "--patches-dir", str(small_tree.patches))
    assert proc.returncode == 0 and "up to date" in proc.stdout


def test_dropping_a_commit_removes_its_patch(small_tree: SmallTree) -> None:
    _apply_series(small_tree)
    export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    git_cmd(small_tree.root, "reset", "-q", "--hard", "HEAD~1")
    result = export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert result.removed == ["0003-Rename-c.patch"]
    assert not (small_tree.patches / "0003-Rename-c.patch").exists()


def test_empty_export_is_refused(small_tree: SmallTree) -> None:
    _apply_series(small_tree)
    export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    before = {p.name: p.read_bytes() for p in small_tree.patches.iterdir()}
    git_cmd(small_tree.root, "reset", "-q", "--hard", small_tree.base)
    with pytest.raises(UserError, match="empty export"):
        export_series(small_tree.root, small_tree.patches, pin=_pin(small_tree))
    assert {p.name: p.read_bytes() for p in small_tree.patches.iterdir()} == before
