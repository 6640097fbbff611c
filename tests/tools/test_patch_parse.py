# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Parsing patch files and the series: mbox, DEP-3, plain diffs, path classes, and every malformed input."""

from __future__ import annotations

from pathlib import Path

import pytest

from catch_tools.errors import UserError
from catch_tools.patches import Series, classify_path, parse_patch

MBOX = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: =?UTF-8?q?J=C3=B6rg=20M=C3=BCller?= <joerg@example.org>
Date: Fri, 2 Jan 2026 03:04:05 +0100
Subject: [PATCH] Make collect_env report the backend and its devices,
 which users paste into bug reports

Body line one.

Upstream-Status: Submitted [https://github.com/pytorch/pytorch/pull/1]
Catch-Test: tests/tools/test_x.py::test_x
---
 torch/a.py | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/torch/a.py b/torch/a.py
index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644
--- a/torch/a.py
+++ b/torch/a.py
@@ -1,3 +1,3 @@ def f():
 a
-b
+c
 d
SIGNATURE
2.39.2

""".replace("SIGNATURE", "-- ")


def _write(tmp_path: Path, text: str | bytes, name: str = "0001-x.patch") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_mbox_metadata(tmp_path: Path) -> None:
    patch = parse_patch(_write(tmp_path, MBOX))
    meta = patch.meta
    assert meta.format == "mbox"
    assert meta.subject == ("Make collect_env report the backend and its devices, which users paste into bug "
                            "reports")
    assert (meta.author_name, meta.author_email) == ("Jörg Müller", "joerg@example.org")
    assert meta.date == (1767319445, "+0100")
    assert meta.trailers["Upstream-Status"] == ("Submitted [https://github.com/pytorch/pytorch/pull/1]", 9)
    assert meta.trailers["Catch-Test"][0] == "tests/tools/test_x.py::test_x"
    assert "Upstream-Status" in meta.body and "1 file changed" not in meta.body
    [change] = patch.files
    assert (change.old_path, change.new_path) == ("torch/a.py", "torch/a.py")
    [hunk] = change.hunks
    assert hunk.old_lines == [b"a\n", b"b\n", b"d\n"] and hunk.new_lines == [b"a\n", b"c\n", b"d\n"]
    assert hunk.patch_line == 19 and hunk.section == "def f():"


def test_dep3_quilt_patch_with_index_lines(tmp_path: Path) -> None:
    text = ("Description: Fix the frobnicator\n Second line.\n .\n Third.\nAuthor: Deb <deb@debian.org>\n"
            "Origin: vendor\nForwarded: not-needed\nLast-Update: 2024-01-01\n---\n"
            "Index: pkg-1.0/torch/a.py\n===================================================================\n"
            "--- pkg-1.0.orig/torch/a.py\n+++ pkg-1.0/torch/a.py\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n")
    patch = parse_patch(_write(tmp_path, text, "fix.patch"))
    assert patch.meta.format == "dep3"
    assert patch.meta.subject == "Fix the frobnicator"
    assert patch.meta.author_email == "deb@debian.org" and patch.meta.date is None
    assert patch.meta.body.splitlines()[:3] == ["Second line.", "", "Third."]
    assert "Origin: vendor" in patch.meta.body and "Forwarded: not-needed" in patch.meta.body
    assert patch.files[0].path == "torch/a.py"


def test_plain_diff_takes_subject_from_file_name(tmp_path: Path) -> None:
    patch = parse_patch(_write(tmp_path, "--- a/torch/a.py\n+++ b/torch/a.py\n@@ -1 +1 @@\n-a\n+b\n",
                               "0007-fix-the-thing.diff"))
    assert patch.meta.format == "plain" and patch.meta.subject == "fix the thing"
    assert patch.meta.author_name is None


def test_git_extended_headers(tmp_path: Path) -> None:
    text = ("From 0 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: x\n\n---\n"
            "diff --git a/torch/old.py b/torch/new.py\nsimilarity index 90%\nrename from torch/old.py\n"
            "rename to torch/new.py\n"
            "diff --git a/torch/run.sh b/torch/run.sh\nold mode 100644\nnew mode 100755\n"
            "diff --git a/torch/gone.py b/torch/gone.py\ndeleted file mode 100644\n--- a/torch/gone.py\n"
            "+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
    patch = parse_patch(_write(tmp_path, text))
    rename, mode, gone = patch.files
    assert (rename.old_path, rename.new_path) == ("torch/old.py", "torch/new.py")
    assert (mode.old_mode, mode.new_mode) == ("100644", "100755")
    assert (gone.old_path, gone.new_path) == ("torch/gone.py", None)


@pytest.mark.parametrize(("path", "cls"), [
    ("torch/utils/collect_env.py", "python"),
    ("torch/_C/__init__.pyi", "python"),
    ("torchgen/gen.py", "python"),
    ("functorch/__init__.py", "python"),
    ("torch/csrc/Module.cpp", "native"),
    ("torch/csrc/utils/python_arg_parser.py", "native"),
    ("aten/src/ATen/native/native_functions.yaml", "native"),
    ("tools/autograd/derivatives.yaml", "native"),
    ("c10/core/Device.h", "native"),
    ("torch/_C/_VariableFunctions.pyi.in", "native"),
    ("CMakeLists.txt", "native"),
    ("cmake/Dependencies.cmake", "native"),
    ("setup.py", "native"),
    ("torch/_inductor/codegen/cpp_prefix.h", "native"),
    ("test/test_torch.py", "unshipped"),
    ("docs/source/index.rst", "unshipped"),
    (".github/workflows/lint.yml", "unshipped"),
    ("benchmarks/run.py", "unshipped"),
    ("README.md", "unshipped"),
])
def test_classify(path: str, cls: str) -> None:
    assert classify_path(path) == cls


def test_series_format(tmp_path: Path) -> None:
    (tmp_path / "series").write_text("# comment\n\n0001-a.patch\n0002-b.patch -p0  # trailing comment\n")
    entries = Series.read(tmp_path).entries
    assert [(e.name, e.strip, e.line) for e in entries] == [("0001-a.patch", 1, 3), ("0002-b.patch", 0, 4)]


def _err(call, *args, **kwargs) -> UserError:
    with pytest.raises(UserError) as info:
        call(*args, **kwargs)
    assert "\n" not in str(info.value)
    return info.value


def test_series_naming_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "series").write_text("# c\nmissing.patch\n")
    err = _err(lambda: Series.read(tmp_path).patches)
    assert err.line == 2 and err.path and err.path.endswith("series") and "missing.patch" in err.message


def test_series_duplicate_entry(tmp_path: Path) -> None:
    (tmp_path / "series").write_text("a.patch\nb.patch\na.patch\n")
    err = _err(Series.read, tmp_path)
    assert err.line == 3 and "duplicate" in err.message


def test_series_bad_option(tmp_path: Path) -> None:
    (tmp_path / "series").write_text("a.patch -R\n")
    assert _err(Series.read, tmp_path).line == 1


BAD = {
    "malformed hunk header": ("--- a/torch/a.py\n+++ b/torch/a.py\n@@ -1,x +1 @@\n-a\n+b\n", 3, "malformed hunk"),
    "hunk shorter than header": ("--- a/torch/a.py\n+++ b/torch/a.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n", 7, "ends early"),
    "garbage inside hunk": ("--- a/torch/a.py\n+++ b/torch/a.py\n@@ -1,3 +1,3 @@\n a\n-b\n?c\n d\n", 6,
                            "line counts"),
    "dotdot path": ("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", None, "'..'"),
    "absolute path": ("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", None, "absolute path"),
    "git dir": ("--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", None, "inside .git"),
    "symlink out of the tree": (
        "diff --git a/torch/link b/torch/link\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n"
        "+++ b/torch/link\n@@ -0,0 +1 @@\n+../../etc/passwd\n\\ No newline at end of file\n", 1, "outside the tree"),
    "absolute symlink": (
        "diff --git a/torch/link b/torch/link\nnew file mode 120000\n--- /dev/null\n+++ b/torch/link\n"
        "@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n", 1, "outside the tree"),
    "empty file": ("", 1, "empty patch"),
    "no diff": ("From 0 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: nothing\n\njust words\n", None,
                "no diff found"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_patch_is_one_line_error_with_location(tmp_path: Path, case: str) -> None:
    text, line, fragment = BAD[case]
    path = _write(tmp_path, text)
    err = _err(parse_patch, path)
    assert fragment in err.message
    assert err.path is not None and err.path.endswith("0001-x.patch")
    if line is not None:
        assert err.line == line
    else:
        assert err.line is not None


def test_symlink_inside_the_tree_is_fine(tmp_path: Path) -> None:
    path = _write(tmp_path, "diff --git a/torch/sub/link b/torch/sub/link\nnew file mode 120000\n--- /dev/null\n"
                            "+++ b/torch/sub/link\n@@ -0,0 +1 @@\n+../a.py\n\\ No newline at end of file\n")
    [change] = parse_patch(path).files
    assert change.new_mode == "120000" and change.hunks[0].new_lines == [b"../a.py"]


def test_crlf_patch(tmp_path: Path) -> None:
    path = _write(tmp_path, b"--- a/torch/a.py\r\n+++ b/torch/a.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n")
    err = _err(parse_patch, path)
    assert err.line == 1 and "CRLF" in err.message


def test_non_utf8_bytes(tmp_path: Path) -> None:
    path = _write(tmp_path, b"--- a/torch/a.py\n+++ b/torch/a.py\n@@ -1 +1 @@\n-a\n+caf\xe9\n")
    err = _err(parse_patch, path)
    assert err.line == 5 and "non-UTF-8 byte 0xe9" in err.message


def test_no_newline_marker_strips_the_newline(tmp_path: Path) -> None:
    path = _write(tmp_path, "--- a/torch/a.py\n+++ b/torch/a.py\n@@ -1,2 +1,2 @@\n a\n-b\n"
                            "\\ No newline at end of file\n+c\n")
    [hunk] = parse_patch(path).files[0].hunks
    assert hunk.old_lines == [b"a\n", b"b"] and hunk.new_lines == [b"a\n", b"c\n"]


def test_each_file_header_has_its_own_line(tmp_path: Path) -> None:
    text = ("--- a/torch/a.py\n+++ b/torch/a.py\n@@ -1 +1 @@\n-a\n+b\n"
            "--- a/torch/sub/a.py\n+++ b/torch/sub/a.py\n@@ -1 +1 @@\n-a\n+b\n")
    first, second = parse_patch(_write(tmp_path, text)).files
    assert (first.path, first.patch_line) == ("torch/a.py", 1)
    assert (second.path, second.patch_line) == ("torch/sub/a.py", 6)
