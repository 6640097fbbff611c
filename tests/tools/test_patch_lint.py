# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``lint``: series and files agree, headers present and valid, patches parse, no escapes, binary declared."""

from __future__ import annotations

from pathlib import Path

from conftest import SmallTree

from catch_tools.patches import lint_series

GOOD = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A <a@example.org>
Date: Fri, 2 Jan 2026 03:04:05 +0100
Subject: {subject}

Why.

{trailers}---
diff --git a/torch/b.py b/torch/b.py
--- a/torch/b.py
+++ b/torch/b.py
@@ -1,2 +1,2 @@
-b line 1
+b new 1
 b line 2
"""
TRAILERS = "Upstream-Status: Pending\nCatch-Test: tests/tools/test_x.py::test_x\n"


def _patch(dirpath: Path, name: str, trailers: str = TRAILERS, extra: str = "") -> None:
    (dirpath / name).write_text(GOOD.format(subject=name, trailers=trailers) + extra)


def _messages(problems) -> list[str]:
    return [str(p) for p in problems]


def test_clean_series(small_tree: SmallTree) -> None:
    _patch(small_tree.patches, "0001-a.patch")
    (small_tree.patches / "README.md").write_text("notes\n")
    (small_tree.patches / "series").write_text("0001-a.patch\n")
    assert lint_series(small_tree.patches) == []


def test_series_and_files_disagree(small_tree: SmallTree) -> None:
    _patch(small_tree.patches, "0001-a.patch")
    _patch(small_tree.patches, "0002-orphan.patch")
    (small_tree.patches / "series").write_text("0001-a.patch\nmissing.patch\n0001-a.patch\n")
    msgs = _messages(lint_series(small_tree.patches))
    assert any(m.endswith("series:3: duplicate entry 0001-a.patch (first on line 1)") for m in msgs)
    assert any("series:2: series names missing.patch" in m for m in msgs)
    assert any("0002-orphan.patch: not listed in series" in m for m in msgs)
    assert len(msgs) == 3


def test_headers(small_tree: SmallTree) -> None:
    _patch(small_tree.patches, "0001-none.patch", trailers="")
    _patch(small_tree.patches, "0002-bad.patch", trailers="Upstream-Status: Maybe\nCatch-Test: nope\n")
    _patch(small_tree.patches, "0003-ok.patch", trailers="Upstream-Status: Submitted [https://x/1]\n"
                                                        "Catch-Test: tests/tools/test_x.py::test_x\n")
    (small_tree.patches / "series").write_text("0001-none.patch\n0002-bad.patch\n0003-ok.patch\n")
    msgs = _messages(lint_series(small_tree.patches))
    assert any("0001-none.patch:1: missing Upstream-Status" in m for m in msgs)
    assert any("0001-none.patch:1: missing Catch-Test" in m for m in msgs)
    assert any("0002-bad.patch:8: Upstream-Status 'Maybe' is not in the Yocto vocabulary" in m for m in msgs)
    assert any("0002-bad.patch:9: Catch-Test 'nope'" in m for m in msgs)
    assert not any("0003-ok" in m for m in msgs)


def test_catch_test_must_exist_in_the_repository(tmp_path: Path) -> None:
    patches = tmp_path / "patches"
    patches.mkdir()
    (tmp_path / "tests" / "tools").mkdir(parents=True)
    (tmp_path / "tests" / "tools" / "test_x.py").write_text("def test_x():\n    pass\n")
    _patch(patches, "0001-a.patch")
    _patch(patches, "0002-b.patch", trailers="Upstream-Status: Pending\nCatch-Test: tests/tools/test_x.py::test_y\n")
    (patches / "series").write_text("0001-a.patch\n0002-b.patch\n")
    msgs = _messages(lint_series(patches))
    assert len(msgs) == 1 and "0002-b.patch:9: Catch-Test names test_y" in msgs[0]


def test_unparsable_and_unsafe_patches_are_reported_each(small_tree: SmallTree) -> None:
    p = small_tree.patches
    (p / "crlf.patch").write_bytes(GOOD.format(subject="x", trailers=TRAILERS).replace("\n", "\r\n").encode())
    (p / "latin1.patch").write_bytes(GOOD.format(subject="caf\xe9", trailers=TRAILERS).encode("latin-1"))
    (p / "escape.patch").write_text(GOOD.format(subject="x", trailers=TRAILERS).replace("torch/b.py", "../b.py"))
    (p / "empty.patch").write_text("")
    (p / "series").write_text("crlf.patch\nlatin1.patch\nescape.patch\nempty.patch\n")
    msgs = _messages(lint_series(p))
    assert len(msgs) == 4
    assert any("crlf.patch:1: CRLF" in m for m in msgs)
    assert any("latin1.patch:4: non-UTF-8 byte 0xe9" in m for m in msgs)
    assert any("escape.patch:" in m and "'..'" in m for m in msgs)
    assert any("empty.patch:1: empty patch" in m for m in msgs)


def test_binary_only_when_declared(small_tree: SmallTree) -> None:
    binary = ("diff --git a/torch/blob.bin b/torch/blob.bin\nnew file mode 100644\n"
              "index 0000000000000000000000000000000000000000..1111111111111111111111111111111111111111\n"
              "GIT binary patch\nliteral 3\nKcmZ>K0000\n\nliteral 0\nHcmV?d00001\n\n")
    (small_tree.patches / "0001-bin.patch").write_text(GOOD.format(subject="bin", trailers=TRAILERS).split(
        "diff --git")[0] + binary)
    (small_tree.patches / "0002-bin.patch").write_text(GOOD.format(
        subject="bin", trailers=TRAILERS + "Catch-Binary: yes\n").split("diff --git")[0] + binary)
    (small_tree.patches / "series").write_text("0001-bin.patch\n0002-bin.patch\n")
    msgs = _messages(lint_series(small_tree.patches))
    assert len(msgs) == 1 and "0001-bin.patch" in msgs[0] and "binary change to torch/blob.bin" in msgs[0]
