# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Empty files: a patch that fills an existing empty file, or empties a file without deleting it, is an ordinary
modification (``@@ -0,0 +1,N @@`` / ``@@ -1,N +0,0 @@`` without ``new file mode``/``deleted file mode``).

Oracle: the commits ``git format-patch`` wrote them from, and ``git apply`` of the same files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SmallTree, git_cmd

from catch_tools.patches import apply_series_to_dir, apply_to_git, check_series
from catch_tools.pin import load_pin


def _with_empty_base(tree: SmallTree) -> None:
    """Add an empty ``torch/empty.py`` and a one-line ``torch/one.py`` to the base (the tag moves with it)."""
    tree.write("torch/empty.py", "")
    tree.write("torch/one.py", "x = 1\n")
    git_cmd(tree.root, "add", "-A")
    git_cmd(tree.root, "commit", "-q", "-m", "upstream v2.13.0 with empty files")
    git_cmd(tree.root, "tag", "-f", "v2.13.0")
    tree.base = git_cmd(tree.root, "rev-parse", "HEAD")


@pytest.mark.parametrize("mode", ["git", "dir"])
def test_fill_an_empty_file_and_empty_a_file(small_tree: SmallTree, tmp_path: Path, mode: str) -> None:
    _with_empty_base(small_tree)
    expected = small_tree.commit("Fill empty, empty one", {"torch/empty.py": "filled\n", "torch/one.py": ""})
    names = small_tree.format_series()
    text = (small_tree.patches / names[0]).read_text()
    assert "@@ -0,0 +1 @@" in text and "@@ -1 +0,0 @@" in text and "new file mode" not in text
    # The oracle: plain git applies the same patch file to the base.
    git_cmd(small_tree.root, "apply", "--check", str(small_tree.patches / names[0]))
    if mode == "git":
        result = apply_to_git(small_tree.root, small_tree.patches, pin=load_pin(small_tree.patches / "manifest.toml"))
        assert git_cmd(small_tree.root, "rev-parse", f"{result.head}^{{tree}}") == git_cmd(
            small_tree.root, "rev-parse", f"{expected}^{{tree}}")
        assert (small_tree.root / "torch/one.py").exists()
    else:
        target = tmp_path / "wheel"
        (target / "torch").mkdir(parents=True)
        (target / "torch/empty.py").write_text("")
        (target / "torch/one.py").write_text("x = 1\n")
        assert check_series(small_tree.patches, target_dir=target).patches[0].ok
        apply_series_to_dir(small_tree.patches, target)
        assert (target / "torch/empty.py").read_text() == "filled\n"
        assert (target / "torch/one.py").read_bytes() == b""
