# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Hostile and careless input to ``scripts/apply_patches.py`` around the engine: ``export`` writes only patches the
engine accepts, out-of-range ``Date:`` headers, a manifest that is not UTF-8, and FIFOs named as series, patch or
manifest. Each bad input is one line (file and line), a non-zero exit, and nothing changed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SCRIPTS, SmallTree, git_cmd, numbered
from hostile import one_line_error

from catch_tools.errors import UserError
from catch_tools.pin import update_pin


def tree_digest(directory: Path) -> str:
    """SHA-256 over the relative path, type and bytes of everything under ``directory``."""
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        kind = b"fifo" if path.is_fifo() else b"dir" if path.is_dir() else b"file"
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0" + kind + b"\0")
        if kind == b"file":
            digest.update(path.read_bytes())
    return digest.hexdigest()


def cli(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``scripts/apply_patches.py <args>``; a FIFO read by mistake hangs, so the timeout is short."""
    return subprocess.run([sys.executable, str(SCRIPTS / "apply_patches.py"), *map(str, args)], capture_output=True,
                          text=True, check=False, timeout=timeout)




def git_apply_in_order(tree: SmallTree, names: list[str], tmp: Path) -> None:
    """The oracle: plain ``git apply`` takes every patch, in order, on a checkout of the base."""
    check = tmp / "oracle"
    git_cmd(tree.root, "worktree", "add", "-q", "--detach", str(check), tree.base)
    for name in names:
        git_cmd(check, "apply", "--check", str(tree.patches / name))
        git_cmd(check, "apply", "--index", str(tree.patches / name))


BAD_COMMITS = {
    # case: (files of the commit, what the error names, what it says, the fixed files and message body)
    "crlf-new-file": ({"torch/crlf.py": b"x = 1\r\ny = 2\r\n"}, "torch/crlf.py:1", "CRLF",
                      {"torch/crlf.py": b"x = 1\ny = 2\n"}, ""),
    "crlf-in-edit": ({"torch/b.py": numbered("b", 30).replace("b line 3\n", "b line three\r\n").encode()},
                     "torch/b.py:3", "CRLF",
                     {"torch/b.py": numbered("b", 30).replace("b line 3\n", "b line three\n").encode()}, ""),
    "latin-1": ({"torch/latin.py": b"x = 1\n# caf\xe9\n"}, "torch/latin.py:2", "non-UTF-8 byte 0xe9",
                {"torch/latin.py": "x = 1\n# caf\u00e9\n".encode()}, ""),
    "undeclared-binary": ({"torch/blob.bin": bytes(range(256)) * 2}, "torch/blob.bin", "Catch-Binary: yes",
                          {"torch/blob.bin": bytes(range(256)) * 2}, "Catch-Binary: yes"),
}


@pytest.mark.parametrize("case", sorted(BAD_COMMITS))
def test_export_refuses_a_commit_whose_patch_the_engine_refuses(small_tree: SmallTree, tmp_path: Path,
                                                                 case: str) -> None:
    changes, where, what, fixed, body = BAD_COMMITS[case]
    small_tree.commit("Fix a", {"torch/a.py": numbered("a", 60).replace("a line 7\n", "a line seven\n")})
    export = ("export", "--source", small_tree.root, "--patches-dir", small_tree.patches)
    assert cli(*export).returncode == 0
    small_tree.commit("Bad change", dict(changes))
    before = tree_digest(small_tree.patches)
    for args in (export, (*export, "--dry-run")):
        line = one_line_error(cli(*args), where, what, "Bad change", "nothing was written")
        assert line.startswith(f"error: {small_tree.root / where}")
        assert tree_digest(small_tree.patches) == before
    # the same change made right exports, and lint, apply and plain git apply all take it
    git_cmd(small_tree.root, "reset", "-q", "--hard", "HEAD~1")
    small_tree.commit("Good change", dict(fixed), body=body)
    assert cli(*export).returncode == 0
    names = [n for n in (small_tree.patches / "series").read_text().splitlines() if not n.startswith("#")]
    assert len(names) == 2
    lint = cli("lint", "--patches-dir", small_tree.patches)
    assert lint.returncode == 0, lint.stderr
    git_cmd(small_tree.root, "checkout", "-q", "--detach", small_tree.base)
    applied = cli("apply", "--source", small_tree.root, "--patches-dir", small_tree.patches, "--force")
    assert applied.returncode == 0, applied.stderr
    for rel, data in fixed.items():
        assert (small_tree.root / rel).read_bytes() == data
    git_apply_in_order(small_tree, names, tmp_path)


@pytest.mark.parametrize("date", ["Mon, 1 Jan 99999 00:00:00 +0000", "Fri, 1 Jan 1960 00:00:00 +0000",
                                  "Thu, 1 Jan 2026 00:00:00 +2359"])
def test_out_of_range_date_header_is_one_line_with_its_line(small_tree: SmallTree, date: str) -> None:
    small_tree.commit("Fix b", {"torch/b.py": numbered("b", 30).replace("b line 4\n", "b line four\n")})
    name = small_tree.format_series()[0]
    patch = small_tree.patches / name
    text = patch.read_text().splitlines(keepends=True)
    assert text[2].startswith("Date: ")
    text[2] = f"Date: {date}\n"
    patch.write_text("".join(text))
    before = small_tree.snapshot()
    lint = cli("lint", "--patches-dir", small_tree.patches)
    assert lint.returncode == 1 and "Traceback" not in lint.stderr
    assert f"{name}:3: Date header" in lint.stderr and "out of range" in lint.stderr
    check = cli("check", "--source", small_tree.root, "--patches-dir", small_tree.patches)
    assert check.returncode == 1 and "Traceback" not in check.stderr
    assert f"{name}:3: Date header" in check.stdout
    one_line_error(cli("apply", "--source", small_tree.root, "--patches-dir", small_tree.patches),
                   f"{name}:3: Date header", "out of range")
    assert small_tree.snapshot() == before


@pytest.mark.parametrize("command", ["apply", "check", "status", "export"])
def test_manifest_not_utf8_is_one_line_with_its_line(small_tree: SmallTree, command: str) -> None:
    small_tree.commit("Fix b", {"torch/b.py": numbered("b", 30).replace("b line 4\n", "b line four\n")})
    manifest = small_tree.patches / "manifest.toml"
    lines = manifest.read_bytes().split(b"\n")
    lines.insert(3, b"# pinned by J\xf6rg")
    manifest.write_bytes(b"\n".join(lines))
    before, patches = small_tree.snapshot(), tree_digest(small_tree.patches)
    one_line_error(cli(command, "--source", small_tree.root, "--patches-dir", small_tree.patches),
                   "manifest.toml:4: non-UTF-8 byte 0xf6")
    one_line_error(cli(command, "--source", small_tree.root, "--patches-dir", small_tree.patches, "--pin", manifest),
                   "manifest.toml:4: non-UTF-8 byte 0xf6")
    assert small_tree.snapshot() == before and tree_digest(small_tree.patches) == patches
    with pytest.raises(UserError, match="non-UTF-8"):
        update_pin(manifest, tag="v2.14.0")
    assert tree_digest(small_tree.patches) == patches


def test_fifo_as_series_is_refused_never_read(small_tree: SmallTree) -> None:
    small_tree.commit("Fix b", {"torch/b.py": numbered("b", 30).replace("b line 4\n", "b line four\n")})
    series = small_tree.patches / "series"
    series.unlink()
    os.mkfifo(series)
    before, patches = small_tree.snapshot(), tree_digest(small_tree.patches)
    lint = cli("lint", "--patches-dir", small_tree.patches)
    assert lint.returncode == 1 and "Traceback" not in lint.stderr
    assert len(lint.stderr.strip().splitlines()) == 1 and "series: is a FIFO" in lint.stderr
    for command in ("apply", "check", "status", "export"):
        one_line_error(cli(command, "--source", small_tree.root, "--patches-dir", small_tree.patches),
                       "series: is a FIFO")
    assert series.is_fifo()
    assert small_tree.snapshot() == before and tree_digest(small_tree.patches) == patches


def test_fifo_as_patch_or_manifest_is_refused_never_read(small_tree: SmallTree) -> None:
    small_tree.commit("Fix b", {"torch/b.py": numbered("b", 30).replace("b line 4\n", "b line four\n")})
    name = small_tree.format_series()[0]
    patch = small_tree.patches / name
    patch.unlink()
    os.mkfifo(patch)
    before, patches = small_tree.snapshot(), tree_digest(small_tree.patches)
    lint = cli("lint", "--patches-dir", small_tree.patches)
    assert lint.returncode == 1 and "Traceback" not in lint.stderr
    assert f"series:2: series names {name}, which is not a regular file" in lint.stderr
    one_line_error(cli("apply", "--source", small_tree.root, "--patches-dir", small_tree.patches),
                   f"series:2: series names {name}, which is not a regular file")
    check = cli("check", "--source", small_tree.root, "--patches-dir", small_tree.patches)
    assert check.returncode == 1 and "not a regular file" in check.stdout
    fifo_pin = small_tree.root.parent / "pin.toml"
    os.mkfifo(fifo_pin)
    one_line_error(cli("check", "--source", small_tree.root, "--patches-dir", small_tree.patches, "--pin", fifo_pin),
                   "pin.toml: is a FIFO")
    assert small_tree.snapshot() == before and tree_digest(small_tree.patches) == patches


def test_export_never_touches_a_users_dot_tmp_file_or_writes_through_a_planted_link(small_tree: SmallTree,
                                                                                      tmp_path: Path) -> None:
    """``patches/.series.tmp`` of the user's is kept; a symlink planted at a name export might use for its temporary
    file is neither followed nor left in place of the patch."""
    small_tree.commit("Fix a", {"torch/a.py": numbered("a", 60).replace("a line 7\n", "a line seven\n")})
    (small_tree.patches / ".series.tmp").write_text("my notes\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    (small_tree.patches / ".0001-Fix-a.patch.tmp").symlink_to(outside)
    proc = cli("export", "--source", small_tree.root, "--patches-dir", small_tree.patches)
    assert proc.returncode == 0, proc.stderr
    assert (small_tree.patches / ".series.tmp").read_text() == "my notes\n"
    assert outside.read_text() == "keep\n"
    patch = small_tree.patches / "0001-Fix-a.patch"
    assert patch.is_file() and not patch.is_symlink() and "a line seven" in patch.read_text()
    assert not [p for p in small_tree.patches.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()
                and p.name != ".series.tmp"]
