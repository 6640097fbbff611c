# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``lint`` validates every diff header field ``git apply`` validates, and the hunk line counts, with file:line.

Oracle: ``git apply --check`` on the same patch in a real tree. Each malformed patch below is refused by git (so lint
must report it at the right line), except the undercounted hunk, which git applies silently dropping the extra
lines -- the reason a series linter must catch it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import SmallTree, git_cmd

from catch_tools.patches import lint_series

HEAD = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A <a@example.org>
Date: Fri, 2 Jan 2026 03:04:05 +0100
Subject: x

Why.

Upstream-Status: Pending
Catch-Test: tests/tools/test_x.py::test_x
---
"""
B = "diff --git a/torch/b.py b/torch/b.py\n--- a/torch/b.py\n+++ b/torch/b.py\n"

# (diff, marker: the text (or number) of the line lint must point at, git refuses it? -- None: a deliberate
# difference, git does not compare ---/+++ names with the diff --git line and applies it as an undeclared rename)
CASES = {
    "undercounted_hunk": (B + "@@ -1,2 +1,2 @@\n-b line 1\n+b new 1\n b line 2\n+b sneaked in\n",
                          "+b sneaked in", False),
    "undercounted_hunk_context": (B + "@@ -1,2 +1,2 @@\n-b line 1\n+b new 1\n b line 2\n b line 3\n-b line 4\n",
                                  " b line 3", False),
    # git: "corrupt patch at line 18" (one past the end)
    "overcounted_hunk": (B + "@@ -1,3 +1,3 @@\n-b line 1\n+b new 1\n b line 2\n", 18, True),
    "hunk_header_syntax": (B + "@@ -1,2 +1,x @@\n-b line 1\n+b new 1\n b line 2\n", "@@ -1,2 +1,x @@", True),
    "fragment_without_header": (B + "@@ -1,2 +1,2 @@\n-b line 1\n+b new 1\n b line 2\ngarbage\n"
                                "@@ -5,1 +5,1 @@\n-b line 5\n+b new 5\n", "@@ -5,1 +5,1 @@", True),
    "invalid_old_mode": ("diff --git a/torch/b.py b/torch/b.py\nold mode 10064x\nnew mode 100755\n",
                         "old mode 10064x", True),
    "invalid_new_mode": ("diff --git a/torch/b.py b/torch/b.py\nold mode 100644\nnew mode 1OO755\n",
                         "new mode 1OO755", True),
    "invalid_index_mode": ("diff --git a/torch/b.py b/torch/b.py\nindex 1234567..89abcde 10z644\n"
                           "--- a/torch/b.py\n+++ b/torch/b.py\n@@ -1,2 +1,2 @@\n-b line 1\n+b new 1\n b line 2\n",
                           "index 1234567..89abcde 10z644", True),
    "new_file_depends_on_old_contents": ("diff --git a/torch/n.py b/torch/n.py\nnew file mode 100644\n"
                                         "--- /dev/null\n+++ b/torch/n.py\n@@ -1,1 +1,1 @@\n-x\n+y\n",
                                         "@@ -1,1 +1,1 @@", True),
    "deleted_file_still_has_contents": ("diff --git a/torch/b.py b/torch/b.py\ndeleted file mode 100644\n"
                                        "--- a/torch/b.py\n+++ /dev/null\n@@ -1,2 +1,1 @@\n-b line 1\n b line 2\n",
                                        "@@ -1,2 +1,1 @@", True),
    "inconsistent_old_filename": ("diff --git a/torch/b.py b/torch/b.py\n--- a/torch/a.py\n+++ b/torch/b.py\n"
                                  "@@ -1,2 +1,2 @@\n-b line 1\n+b new 1\n b line 2\n", "--- a/torch/a.py", None),
    "inconsistent_new_filename": ("diff --git a/torch/b.py b/torch/b.py\n--- a/torch/b.py\n+++ b/torch/a.py\n"
                                  "@@ -1,2 +1,2 @@\n-b line 1\n+b new 1\n b line 2\n", "+++ b/torch/a.py", None),
    "expected_dev_null": ("diff --git a/torch/n.py b/torch/n.py\nnew file mode 100644\n--- a/torch/n.py\n"
                          "+++ b/torch/n.py\n@@ -0,0 +1,1 @@\n+y\n", "--- a/torch/n.py", True),
}


def _write(tree: SmallTree, diff: str) -> Path:
    path = tree.patches / "0001-x.patch"
    path.write_text(HEAD + diff)
    (tree.patches / "series").write_text("0001-x.patch\n")
    return path


def _git_refuses(tree: SmallTree, patch: Path) -> bool:
    proc = subprocess.run(["git", "apply", "--check", str(patch)], cwd=tree.root, capture_output=True, check=False)
    return proc.returncode != 0


@pytest.mark.parametrize("case", sorted(CASES))
def test_lint_reports_what_git_apply_validates(small_tree: SmallTree, case: str) -> None:
    diff, marker, git_refuses = CASES[case]
    patch = _write(small_tree, diff)
    if git_refuses is not None:
        assert _git_refuses(small_tree, patch) is git_refuses, "the oracle disagrees with this case's premise"
    line = marker if isinstance(marker, int) else (HEAD + diff).split("\n").index(marker) + 1
    problems = lint_series(small_tree.patches)
    assert problems, f"lint calls a {case} patch clean"
    assert any(p.file.endswith("0001-x.patch") and p.line == line for p in problems), [str(p) for p in problems]


def test_undercounted_hunk_is_silently_dropped_by_git(small_tree: SmallTree) -> None:
    """The premise of the undercount check: git applies the patch and drops the uncounted line."""
    patch = _write(small_tree, CASES["undercounted_hunk"][0])
    git_cmd(small_tree.root, "apply", str(patch))
    text = (small_tree.root / "torch/b.py").read_text()
    assert "b new 1" in text and "sneaked" not in text


def test_trailing_signature_and_no_newline_markers_are_not_undercounts(small_tree: SmallTree) -> None:
    diff = B + "@@ -1,2 +1,2 @@\n-b line 1\n+b new 1\n b line 2\n\\ No newline at end of file\n-- \n2.39.5\n\n"
    _write(small_tree, diff)
    assert not [p for p in lint_series(small_tree.patches) if "count" in p.message]
