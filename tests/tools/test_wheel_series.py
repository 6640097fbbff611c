# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The overlay build applies a Python-only series to the wheel's files through the patch engine."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel

from catch_tools.errors import UserError
from catch_tools.patches import parse as parse_module
from catch_tools.pin import Pin
from catch_tools.wheel.overlay import build_overlay

COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"
PIN = Pin("https://github.com/pytorch/pytorch.git", "v2.13.0", COMMIT, "2.13.0+cpu", 2)

HEADER = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Catch <catch@example.com>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH] {subject}

Why: the combined wheel test needs it.

Upstream-Status: Inappropriate [test fixture]
Catch-Test: tests/tools/test_wheel_series.py::test_python_patch_lands_in_the_wheel
---
"""

EDIT_HELPERS = HEADER.format(subject="Add triple to helpers") + """\
diff --git a/torch/utils/helpers.py b/torch/utils/helpers.py
index 1111111..2222222 100644
--- a/torch/utils/helpers.py
+++ b/torch/utils/helpers.py
@@ -4,3 +4,7 @@ def scale(x, factor=2):

 def shift(x, by):
     return x + by
+
+
+def triple(x):
+    return 3 * x
--
2.39.0
"""

NEW_FILE = HEADER.format(subject="Add a Catch note module") + """\
diff --git a/torch/utils/_catch_note.py b/torch/utils/_catch_note.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/torch/utils/_catch_note.py
@@ -0,0 +1 @@
+NOTE = "catch"
--
2.39.0
"""

BAD_CONTEXT = HEADER.format(subject="Edit a line that is not there") + """\
diff --git a/torch/utils/helpers.py b/torch/utils/helpers.py
index 1111111..2222222 100644
--- a/torch/utils/helpers.py
+++ b/torch/utils/helpers.py
@@ -1,2 +1,2 @@
-def nothing_like_this(x):
+def something_else(x):
     return x
--
2.39.0
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATCH_CACHE", str(tmp_path / "cache"))


def series(root: Path, patches: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    (root / "series").write_text("".join(f"{name}\n" for name in patches))
    for name, text in patches.items():
        (root / name).write_text(text)
    return root


def test_python_patch_lands_in_the_wheel(tmp_path: Path) -> None:
    patches = series(tmp_path / "patches", {"0001-Add-triple-to-helpers.patch": EDIT_HELPERS,
                                            "0002-Add-a-Catch-note-module.patch": NEW_FILE})
    upstream = fake_torch_wheel(tmp_path / "up", PIN.wheel_version, COMMIT)
    result = build_overlay(upstream_wheel=upstream, backend_wheel=fake_backend_wheel(tmp_path / "be"),
                           patches_dir=patches, pin=PIN, out_dir=tmp_path / "dist")
    assert "torch/utils/helpers.py" in result.patched
    assert "torch/utils/_catch_note.py" in result.added
    with zipfile.ZipFile(result.wheel) as zf, zipfile.ZipFile(upstream) as up:
        helpers = zf.read("torch/utils/helpers.py").decode()
        assert helpers == up.read("torch/utils/helpers.py").decode() + "\n\ndef triple(x):\n    return 3 * x\n"
        assert zf.read("torch/utils/_catch_note.py") == b'NOTE = "catch"\n'
        assert zf.testzip() is None


def test_series_that_does_not_apply_is_refused(tmp_path: Path) -> None:
    patches = series(tmp_path / "patches", {"0001-Edit-a-line-that-is-not-there.patch": BAD_CONTEXT})
    with pytest.raises(UserError) as info:
        build_overlay(upstream_wheel=fake_torch_wheel(tmp_path / "up", PIN.wheel_version, COMMIT),
                      backend_wheel=fake_backend_wheel(tmp_path / "be"), patches_dir=patches, pin=PIN,
                      out_dir=tmp_path / "dist")
    assert "series fails check" in str(info.value) and "0001-Edit-a-line-that-is-not-there.patch" in str(info.value)
    assert not (tmp_path / "dist").exists() or not list((tmp_path / "dist").iterdir())


#: Files opened while :data:`_OPENS` is a list (``sys.addaudithook``: every ``open``, whichever function does it).
_OPENS: list[str] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _OPENS is not None and isinstance(args[0], str | Path):
        _OPENS.append(str(args[0]))


sys.addaudithook(_audit)


def test_one_build_reads_the_series_once_and_parses_each_patch_once(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's series consumers (touched paths, lint, check, apply) share one Series: ``series`` is opened once
    and each patch's diff is parsed once (counted where every parse goes through, whoever calls it)."""
    global _OPENS
    names = ["0001-Add-triple-to-helpers.patch", "0002-Add-a-Catch-note-module.patch"]
    patches = series(tmp_path / "patches", dict(zip(names, (EDIT_HELPERS, NEW_FILE), strict=True)))
    upstream = fake_torch_wheel(tmp_path / "up", PIN.wheel_version, COMMIT)
    backend = fake_backend_wheel(tmp_path / "be")
    parsed: list[str] = []
    real = parse_module._file_changes

    def counting(diff: str, first: int, strip: int, where: str) -> list[object]:
        parsed.append(Path(where).name)
        return real(diff, first, strip, where)

    monkeypatch.setattr(parse_module, "_file_changes", counting)
    _OPENS = []
    try:
        build_overlay(upstream_wheel=upstream, backend_wheel=backend, patches_dir=patches, pin=PIN,
                      out_dir=tmp_path / "dist")
        opened = _OPENS
    finally:
        _OPENS = None
    assert [p for p in opened if Path(p) == patches / "series"] == [str(patches / "series")]
    assert sorted(parsed) == names
