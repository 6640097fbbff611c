# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The command line: every bad input is one ``error: <file>:<line>: ...`` line on stderr, a non-zero exit, no
traceback, and the target unchanged."""

from __future__ import annotations

import re

import pytest
from conftest import REPO_ROOT, SmallTree, git_cmd, numbered

LOCATED = re.compile(r"^error: \S+:\d+: .+$")


def _one_line_error(proc, located: bool = True) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    if located:
        assert LOCATED.match(lines[0]), lines[0]
    return lines[0]


PATCHES = {
    "malformed-hunk": ("--- a/torch/b.py\n+++ b/torch/b.py\n@@ -1,2 +1,two @@\n-b line 1\n+x\n b line 2\n",
                       "malformed hunk header"),
    "does-not-apply": ("--- a/torch/b.py\n+++ b/torch/b.py\n@@ -1,2 +1,2 @@\n-not in file\n+x\n b line 2\n",
                       "does not apply"),
    "missing-file": ("--- a/torch/nope.py\n+++ b/torch/nope.py\n@@ -1 +1 @@\n-a\n+b\n", "no such file"),
    "dotdot": ("--- a/../../outside.py\n+++ b/../../outside.py\n@@ -1 +1 @@\n-a\n+b\n", "'..'"),
    "absolute": ("--- /etc/hosts\n+++ /etc/hosts\n@@ -1 +1 @@\n-a\n+b\n", "absolute path"),
    "symlink": ("diff --git a/torch/l b/torch/l\nnew file mode 120000\n--- /dev/null\n+++ b/torch/l\n"
                "@@ -0,0 +1 @@\n+../../../etc\n\\ No newline at end of file\n", "outside the tree"),
    "crlf": ("--- a/torch/b.py\r\n+++ b/torch/b.py\r\n@@ -1 +1 @@\r\n-b line 1\r\n+x\r\n", "CRLF"),
    "empty": ("", "empty patch"),
}


@pytest.mark.parametrize("case", sorted(PATCHES))
@pytest.mark.parametrize("mode", ["git", "dir"])
def test_bad_patch_through_cli(small_tree: SmallTree, run_script, case: str, mode: str) -> None:
    text, fragment = PATCHES[case]
    (small_tree.patches / f"{case}.patch").write_bytes(text.encode())
    (small_tree.patches / "series").write_text(f"# s\n{case}.patch\n")
    before = small_tree.snapshot()
    target = ["--source", str(small_tree.root)] if mode == "git" else ["--target-dir", str(small_tree.root)]
    proc = run_script("apply_patches.py", "apply", *target, "--patches-dir", str(small_tree.patches))
    line = _one_line_error(proc)
    assert fragment in line and f"{case}.patch" in line
    assert small_tree.snapshot() == before


def test_non_utf8_through_cli(small_tree: SmallTree, run_script) -> None:
    (small_tree.patches / "latin.patch").write_bytes(
        b"--- a/torch/b.py\n+++ b/torch/b.py\n@@ -1 +1 @@\n-b line 1\n+caf\xe9\n")
    (small_tree.patches / "series").write_text("latin.patch\n")
    before = small_tree.snapshot()
    proc = run_script("apply_patches.py", "apply", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches))
    assert "latin.patch:5: non-UTF-8" in _one_line_error(proc)
    assert small_tree.snapshot() == before


@pytest.mark.parametrize(("series", "fragment", "lineno"), [
    ("# c\nmissing.patch\n", "series names missing.patch", 2),
    ("ok.patch\nok.patch\n", "duplicate entry ok.patch", 2),
])
def test_bad_series_through_cli(small_tree: SmallTree, run_script, series: str, fragment: str, lineno: int) -> None:
    (small_tree.patches / "ok.patch").write_text("--- a/torch/b.py\n+++ b/torch/b.py\n@@ -1 +1 @@\n-b line 1\n+x\n")
    (small_tree.patches / "series").write_text(series)
    before = small_tree.snapshot()
    proc = run_script("apply_patches.py", "apply", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches))
    line = _one_line_error(proc)
    assert fragment in line and f"series:{lineno}:" in line
    assert small_tree.snapshot() == before


def test_file_missing_from_series_fails_lint(small_tree: SmallTree, run_script) -> None:
    (small_tree.patches / "orphan.patch").write_text("--- a/torch/b.py\n+++ b/torch/b.py\n@@ -1 +1 @@\n-b\n+x\n")
    proc = run_script("apply_patches.py", "lint", "--patches-dir", str(small_tree.patches))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: {small_tree.patches / 'orphan.patch'}: not listed in series: add it there or delete the file"]


def test_dirty_tree_and_wrong_base_through_cli(small_tree: SmallTree, run_script) -> None:
    small_tree.commit("Edit b", {"torch/b.py": "b\n"})
    small_tree.format_series()
    (small_tree.root / "torch/a.py").write_text("dirty\n")
    before = small_tree.snapshot()
    args = ["apply", "--source", str(small_tree.root), "--patches-dir", str(small_tree.patches)]
    assert "uncommitted changes" in _one_line_error(run_script("apply_patches.py", *args), located=False)
    assert small_tree.snapshot() == before
    args_base = [*args, "--base", "no-such-ref"]
    assert "no such commit" in _one_line_error(run_script("apply_patches.py", *args_base), located=False)
    # A tree checked out at some other commit than the pinned base.
    (small_tree.root / "torch/a.py").write_text(numbered("a", 60))
    other = git_cmd(small_tree.root, "commit-tree", "-m", "elsewhere", f"{small_tree.base}^{{tree}}")
    git_cmd(small_tree.root, "reset", "-q", "--hard", other)
    before = small_tree.snapshot()
    line = _one_line_error(run_script("apply_patches.py", *args), located=False)
    assert "not at the pinned base" in line and "--force" in line
    assert small_tree.snapshot() == before


def test_missing_source_and_help(run_script, tmp_path) -> None:
    proc = run_script("apply_patches.py", "status", "--source", str(tmp_path / "nope"), "--patches-dir",
                      str(tmp_path), "--pin", str(REPO_ROOT / "patches" / "manifest.toml"))
    assert "does not exist" in _one_line_error(proc, located=False)
    for sub in ("apply", "check", "status", "reverse", "export", "lint"):
        helped = run_script("apply_patches.py", sub, "--help")
        assert helped.returncode == 0 and "usage:" in helped.stdout
