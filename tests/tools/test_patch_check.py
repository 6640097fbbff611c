# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``check``: every failing patch reported with file, hunk header, and offset/fuzz; nothing changed."""

from __future__ import annotations

import json

from conftest import SmallTree, git_cmd, numbered

from catch_tools.patches import check_series
from catch_tools.pin import load_pin


def _series_with_drift(tree: SmallTree) -> None:
    a = numbered("a", 60).splitlines(keepends=True)
    a[40] = "a ours 41\n"
    tree.commit("Edit a near line 41", {"torch/a.py": "".join(a)})
    b = numbered("b", 30).splitlines(keepends=True)
    b[10] = "b ours 11\n"
    tree.commit("Edit b", {"torch/b.py": "".join(b)})
    c = numbered("c", 20).splitlines(keepends=True)
    c[10] = "c ours 11\n"
    tree.commit("Edit c", {"torch/sub/c.py": "".join(c)})
    tree.format_series()
    # Upstream moves: 5 lines inserted at the top of a (offset), a context line of b changed (fuzz 1),
    # and c rewritten around the hunk (fails).
    new_a = "".join(f"new top {i}\n" for i in range(5)) + numbered("a", 60)
    new_b = numbered("b", 30).replace("b line 8\n", "b upstream 8\n")
    new_c = numbered("c", 20).replace("c line 10\n", "x\n").replace("c line 11\n", "y\n").replace(
        "c line 12\n", "z\n")
    tree.commit("upstream", {"torch/a.py": new_a, "torch/b.py": new_b, "torch/sub/c.py": new_c})
    git_cmd(tree.root, "tag", "-f", "v2.13.0")


def test_check_reports_offset_fuzz_and_failure_changing_nothing(small_tree: SmallTree) -> None:
    _series_with_drift(small_tree)
    before = small_tree.snapshot()
    report = check_series(small_tree.patches, source=small_tree.root, pin=load_pin(small_tree.patches /
                                                                                   "manifest.toml"))
    assert small_tree.snapshot() == before
    a, b, c = report.patches
    assert a.ok and a.hunks[0]["status"] == "offset" and a.hunks[0]["offset"] == 5
    assert a.hunks[0]["header"] == "@@ -38,7 +38,7 @@" and a.hunks[0]["path"] == "torch/a.py"
    assert not b.ok and b.hunks[0]["status"] == "fuzz" and b.hunks[0]["fuzz"] == 1
    assert "fuzz 1" in b.problems[0][2] and b.problems[0][1] == b.hunks[0]["patch_line"]
    assert not c.ok and c.hunks[0]["status"] == "fail"
    assert [p.name for p in report.failed] == ["0002-Edit-b.patch", "0003-Edit-c.patch"]
    text = report.to_text()
    assert "offset +5" in text and "FAIL 0002-Edit-b.patch" in text and "FAIL 0003-Edit-c.patch" in text
    data = json.loads(report.to_json())
    assert data["ok"] is False and [p["ok"] for p in data["patches"]] == [True, False, False]


def test_check_reports_every_broken_patch_including_parse_errors(small_tree: SmallTree, run_script) -> None:
    (small_tree.patches / "0001-bad.patch").write_text("--- a/torch/a.py\n+++ b/torch/a.py\n@@ -1,x @@\n")
    (small_tree.patches / "0002-missing-file.patch").write_text(
        "--- a/torch/nope.py\n+++ b/torch/nope.py\n@@ -1 +1 @@\n-a\n+b\n")
    (small_tree.patches / "0003-good.patch").write_text(
        "--- a/torch/b.py\n+++ b/torch/b.py\n@@ -1,2 +1,2 @@\n-b line 1\n+b good 1\n b line 2\n")
    (small_tree.patches / "series").write_text("0001-bad.patch\n0002-missing-file.patch\n0003-good.patch\n")
    proc = run_script("apply_patches.py", "check", "--json", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches))
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    verdicts = {p["name"]: p for p in data["patches"]}
    assert not verdicts["0001-bad.patch"]["ok"] and verdicts["0001-bad.patch"]["problems"][0]["line"] == 3
    assert "no such file" in verdicts["0002-missing-file.patch"]["problems"][0]["message"]
    assert verdicts["0003-good.patch"]["ok"]


def test_check_is_ok_on_a_clean_series(small_tree: SmallTree, run_script) -> None:
    small_tree.commit("Edit b", {"torch/b.py": "b\n"})
    small_tree.format_series()
    proc = run_script("apply_patches.py", "check", "--source", str(small_tree.root), "--patches-dir",
                      str(small_tree.patches))
    assert proc.returncode == 0, proc.stderr
    assert "1/1 patch(es) apply" in proc.stdout
