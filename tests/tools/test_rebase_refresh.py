# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""A completed rebase writes each carried patch as ``git format-patch`` writes it on the new base: a patch whose hunks
moved is refreshed (line numbers, ``index`` lines) under its own header, message and trailers; a patch that did not
move keeps its bytes. The oracle is real ``git am`` + ``git format-patch`` in a clone of the new base."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from test_rebase_support import edit, git, lines, make_project, make_upstream, release, run_cli, series_names

from catch_tools.patches.export import FORMAT_PATCH_OPTIONS
from catch_tools.paths import repo_root

APPLY = repo_root() / "scripts" / "apply_patches.py"
TRAILERS = "Catch-Test: tests/x.py::test_x\n"
A10 = ("a", "Change a line 10", {"torch/a.py": lambda t: edit(t, "a line 10\n", "a line 10 patched\n")})
B = ("b", "Change b in two places", {"torch/b.py": lambda t: edit(edit(t, "b line 20\n", "b line 20 patched\n"),
                                                                "b line 35\n", "b line 35 patched\n")})
C5 = ("c", "Change c line 5", {"torch/c.py": lambda t: edit(t, "c line 5\n", "c line 5 patched\n")})
SIGNATURE = b"-- \n2.43.0\n\n"


def hunk_and_index_lines(data: bytes) -> list[bytes]:
    return [ln for ln in data.split(b"\n") if ln.startswith((b"@@ ", b"index "))]


def format_patch_on(upstream: Path, base: str, patch: Path, scratch: Path) -> bytes:
    """The oracle: ``patch`` applied with ``git am`` onto ``base`` in a clone, exported with ``git format-patch``."""
    git(upstream.parent, "clone", "-q", str(upstream), str(scratch))
    git(scratch, "checkout", "-q", "--detach", base)
    git(scratch, "am", "-q", "--keep-non-patch", str(patch))
    out = git(scratch, "format-patch", *FORMAT_PATCH_OPTIONS, "-o", str(scratch.parent / "oracle"), f"{base}..HEAD")
    return Path(out).read_bytes()


def apply_check(upstream: Path, patch: Path) -> str:
    """``git apply --check -v`` of ``patch`` on the checked-out tree (raises when it does not apply); its stderr."""
    proc = subprocess.run(["git", "apply", "--check", "-v", str(patch)], cwd=upstream, capture_output=True, text=True,
                          check=True)
    return proc.stderr


def test_rebase_refreshes_moved_patches_and_keeps_unmoved_ones(tmp_path: Path) -> None:
    up = make_upstream(tmp_path / "up")
    proj = make_project(tmp_path / "proj", up, [A10, B, C5])
    names = series_names(proj)
    moved = proj / "patches" / names[1]
    # the maintainer's file: a Catch-Test trailer and format-patch's signature, both kept by the refresh
    moved.write_bytes(moved.read_bytes().replace(b"Regression-Test: tests/x.py\n",
                                                 b"Regression-Test: tests/x.py\n" + TRAILERS.encode()) + SIGNATURE)
    original = moved.read_bytes()
    before = {n: (proj / "patches" / n).read_bytes() for n in names}
    b = (up / "torch/b.py").read_text()
    release(up, "2.14.0", {"torch/b.py": "upstream header\n" * 4 + b, "torch/d.py": lines("d", 45)})
    res = run_cli(proj, up, "--onto", "v2.14.0")
    assert res.returncode == 0, res.stderr
    report = json.loads((up / ".git" / "catch-rebase-report.json").read_text())
    assert [p["status"] for p in report["patches"]] == ["clean", "offset", "clean"]
    assert [p["name"] for p in report["patches"] if p["file_changed"]] == [names[1]]
    assert series_names(proj) == names

    # unmoved patches: byte-identical
    assert (proj / "patches" / names[0]).read_bytes() == before[names[0]]
    assert (proj / "patches" / names[2]).read_bytes() == before[names[2]]

    # the moved patch: its diff is git format-patch's on the new base; header, message, trailers, signature kept
    refreshed = moved.read_bytes()
    (tmp_path / "original.patch").write_bytes(original)
    oracle = format_patch_on(up, "v2.14.0", tmp_path / "original.patch", tmp_path / "scratch")
    assert hunk_and_index_lines(refreshed) == hunk_and_index_lines(oracle)
    assert hunk_and_index_lines(refreshed) != hunk_and_index_lines(original)
    assert [h.split(b" @@")[0] for h in hunk_and_index_lines(refreshed) if h.startswith(b"@@")] == [
        b"@@ -21,7 +21,7", b"@@ -36,7 +36,7"]
    assert refreshed.endswith(SIGNATURE) and TRAILERS.encode() in refreshed
    assert refreshed.removesuffix(SIGNATURE) == oracle
    header_end = original.index(b"diff --git")
    assert refreshed[:header_end] == original[:header_end]

    # check on the new base: no hunk moved; git apply: no offset for any patch of the series
    check = subprocess.run([sys.executable, str(APPLY), "check", "--json", "--source", str(up), "--patches-dir",
                            str(proj / "patches"), "--base", "v2.14.0"], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr
    hunks = [h for p in json.loads(check.stdout)["patches"] for h in p["hunks"]]
    assert hunks and all(h["status"] == "ok" for h in hunks), hunks
    git(up, "checkout", "-q", "--detach", "v2.14.0")
    assert "offset" in apply_check(up, tmp_path / "original.patch")  # what the old file needed
    for name in names:
        stderr = apply_check(up, proj / "patches" / name)
        assert "offset" not in stderr and not re.search(r"succeeded at \d+", stderr), stderr
