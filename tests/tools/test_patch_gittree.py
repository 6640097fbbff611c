# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The git access of ``apply``, each against git itself as the oracle: resolving several names in one process
(``Repo.revs`` vs ``git rev-parse --verify``), setting refs in one transaction (``Repo.set_refs``), and reading
only the series' paths of the base tree (``GitTreeReader(paths=...)`` vs ``git ls-tree -r``; a committed symlink on
the way to a patched file refused as ``git apply`` refuses it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import SmallTree, git_cmd

from catch_tools.errors import UserError
from catch_tools.patches import apply_to_git
from catch_tools.patches.gittree import GitTreeReader, open_tree
from catch_tools.pin import load_pin


def _rev_parse(root: Path, name: str) -> str | None:
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], cwd=root,
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def test_revs_resolve_every_name_as_rev_parse_does(small_tree: SmallTree) -> None:
    second = small_tree.commit("Second", {"torch/a.py": "changed\n"})
    git_cmd(small_tree.root, "tag", "-a", "-m", "annotated", "v-annotated", second)
    blob = git_cmd(small_tree.root, "rev-parse", "HEAD:torch/a.py")
    names = ["HEAD", "HEAD~1", "v2.13.0", "v-annotated", second[:10], "refs/patches/none", blob, "HEAD:torch",
             ":/Second", ":/no such subject", "not a ref", "two\nlines", "-v", ""]
    target = open_tree(small_tree.root)
    expected = [_rev_parse(small_tree.root, n) if "\n" not in n else None for n in names]
    assert expected[:5] == [second, small_tree.base, small_tree.base, second, second]  # the oracle sees them all
    assert target.revs(*names) == expected
    assert [target.rev(n) for n in names] == expected


def test_set_refs_is_one_transaction(small_tree: SmallTree) -> None:
    target = open_tree(small_tree.root)
    target.set_refs({"refs/patches/one": small_tree.base, "refs/patches/two": small_tree.base})
    before = git_cmd(small_tree.root, "for-each-ref", "refs/patches/")
    with pytest.raises(UserError, match="update-ref"):
        target.set_refs({"refs/patches/one": None, "refs/patches/two": "0" * 39 + "1"})  # no such object
    assert git_cmd(small_tree.root, "for-each-ref", "refs/patches/") == before
    target.set_refs({"refs/patches/one": None, "refs/patches/absent": None})
    assert git_cmd(small_tree.root, "for-each-ref", "--format=%(refname)", "refs/patches/") == "refs/patches/two"


def _ls_tree(root: Path) -> dict[str, tuple[str, str]]:
    out = git_cmd(root, "ls-tree", "-r", "-z", "--full-tree", "HEAD")
    entries = {}
    for entry in filter(None, out.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        entries[path] = (mode, sha)
    return entries


def test_tree_reader_reads_the_series_paths_and_falls_back_to_the_whole_tree(small_tree: SmallTree) -> None:
    (small_tree.root / "torch/link").symlink_to("sub")
    (small_tree.root / "tools").mkdir()
    (small_tree.root / "tools/run.sh").write_text("#!/bin/sh\n")
    (small_tree.root / "tools/run.sh").chmod(0o755)
    (small_tree.root / "odd *name?.py").write_text("x = 1\n")
    head = small_tree.commit("More kinds", {})
    full = _ls_tree(small_tree.root)
    assert full["torch/link"][0] == "120000" and full["tools/run.sh"][0] == "100755"
    target = open_tree(small_tree.root)
    asked = {"torch/link/c.py", "tools/run.sh", "odd *name?.py", "docs/new.md"}
    reader = GitTreeReader(target, head, asked)
    assert reader.known is not None and "aten/src/ATen/native/x.cpp" not in reader.entries  # not listed
    for path in ("torch", "torch/link", "tools/run.sh", "odd *name?.py", "docs/new.md", "tools"):
        assert reader.exists(path) == (path in full), path
        if path in full:
            blob = subprocess.run(["git", "cat-file", "blob", full[path][1]], cwd=small_tree.root,
                                  capture_output=True, check=True).stdout
            assert reader.read(path) == (full[path][0], blob)
    assert reader.known is not None  # every question so far was about the series' paths or their directories
    assert reader.exists("aten/src/ATen/native/x.cpp")  # any other path: the whole listing, then the answer
    assert reader.known is None and reader.entries == full
    assert GitTreeReader(target, head).entries == full


def test_committed_symlink_on_the_way_is_refused_like_git_apply(small_tree: SmallTree) -> None:
    """The base tree has torch/link -> sub; a patch to torch/link/c.py is refused in git mode too, as by
    ``git apply`` ("affected file ... is beyond a symbolic link"), and nothing changes."""
    (small_tree.root / "torch/link").symlink_to("sub")
    small_tree.commit("Link", {})
    git_cmd(small_tree.root, "tag", "-f", "v2.13.0")
    small_tree.base = git_cmd(small_tree.root, "rev-parse", "HEAD")
    (small_tree.patches / "through-link.patch").write_text(
        "--- a/torch/link/c.py\n+++ b/torch/link/c.py\n@@ -1,2 +1,2 @@\n-c line 1\n+c changed 1\n c line 2\n")
    (small_tree.patches / "series").write_text("through-link.patch\n")
    oracle = subprocess.run(["git", "apply", "--check", str(small_tree.patches / "through-link.patch")],
                            cwd=small_tree.root, capture_output=True, text=True)
    assert oracle.returncode != 0 and "beyond a symbolic link" in oracle.stderr
    before = small_tree.snapshot()
    with pytest.raises(UserError, match="beyond a symbolic link"):
        apply_to_git(small_tree.root, small_tree.patches, pin=load_pin(small_tree.patches / "manifest.toml"))
    assert small_tree.snapshot() == before
