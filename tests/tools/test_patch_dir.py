# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``apply --target-dir``: the same engine on a plain directory (an unpacked wheel): python paths patched,
unshipped skipped with a note, native refused naming the patch, all-or-nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import BASE_FILES, SmallTree, numbered

from catch_tools.errors import UserError
from catch_tools.patches import apply_series_to_dir, check_series


def _wheel_dir(tmp_path: Path) -> Path:
    """A directory shaped like an unpacked wheel: only the shipped torch/ files."""
    root = tmp_path / "wheel"
    for rel, content in BASE_FILES.items():
        if rel.startswith("torch/"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_python_patched_unshipped_skipped(small_tree: SmallTree, tmp_path: Path) -> None:
    a = numbered("a", 60).splitlines(keepends=True)
    a[5] = "a ours 6\n"
    small_tree.commit("Edit a and its test", {"torch/a.py": "".join(a), "test/test_a.py": "new test\n",
                                              "docs/index.md": "doc\n"})
    small_tree.commit("Add e, remove b", {"torch/sub/e.py": "e\n", "torch/b.py": None})
    small_tree.format_series()
    wheel = _wheel_dir(tmp_path)
    notes: list[str] = []
    changed = apply_series_to_dir(small_tree.patches, wheel, echo=notes.append)
    assert sorted(str(p.relative_to(wheel)) for p in changed) == ["torch/a.py", "torch/b.py", "torch/sub/e.py"]
    assert "a ours 6" in (wheel / "torch/a.py").read_text()
    assert (wheel / "torch/sub/e.py").read_text() == "e\n" and not (wheel / "torch/b.py").exists()
    assert not (wheel / "test").exists()
    assert len(notes) == 1 and "test/test_a.py" in notes[0] and "docs/index.md" in notes[0]
    assert not [p for p in wheel.rglob("*") if ".catch-" in p.name]


def test_native_patch_is_refused_naming_the_patch(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Edit python", {"torch/b.py": "b\n"})
    small_tree.commit("Edit kernel", {"aten/src/ATen/native/x.cpp": "int x;\n"})
    small_tree.format_series()
    wheel = _wheel_dir(tmp_path)
    before = _snapshot(wheel)
    with pytest.raises(UserError) as info:
        apply_series_to_dir(small_tree.patches, wheel)
    assert "0002-Edit-kernel.patch" in str(info.value) and "source build is needed" in str(info.value)
    assert info.value.line is not None
    assert _snapshot(wheel) == before
    report = check_series(small_tree.patches, target_dir=wheel)
    assert [p.ok for p in report.patches] == [True, False]


def test_failure_in_a_later_patch_changes_nothing(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Edit b", {"torch/b.py": "b\n"})
    small_tree.commit("Edit c", {"torch/sub/c.py": "c\n"})
    small_tree.format_series()
    wheel = _wheel_dir(tmp_path)
    (wheel / "torch/sub/c.py").write_text("something else\n")
    before = _snapshot(wheel)
    with pytest.raises(UserError, match="0002-Edit-c.patch does not apply"):
        apply_series_to_dir(small_tree.patches, wheel)
    assert _snapshot(wheel) == before


def test_missing_file_in_target(small_tree: SmallTree, tmp_path: Path) -> None:
    small_tree.commit("Edit c", {"torch/sub/c.py": "c\n"})
    small_tree.format_series()
    wheel = _wheel_dir(tmp_path)
    shutil.rmtree(wheel / "torch/sub")
    before = _snapshot(wheel)
    with pytest.raises(UserError, match="torch/sub/c.py: no such file"):
        apply_series_to_dir(small_tree.patches, wheel)
    assert _snapshot(wheel) == before


def test_kill_9_during_dir_apply_is_rolled_back_by_the_next_run(small_tree: SmallTree, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import SCRIPTS

    small_tree.commit("Edit b, add e", {"torch/b.py": "b\n", "torch/e.py": "e\n"})
    small_tree.format_series()
    wheel = _wheel_dir(tmp_path)
    before = _snapshot(wheel)
    proc = subprocess.Popen([sys.executable, str(SCRIPTS / "apply_patches.py"), "apply", "--target-dir", str(wheel),
                             "--patches-dir", str(small_tree.patches)],
                            env=dict(os.environ, CATCH_FAULT="patches.dir-commit,pause=30"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while (wheel / "torch/b.py").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (wheel / "torch/b.py").exists()  # killed with the original moved away: a broken tree
    notes: list[str] = []
    changed = apply_series_to_dir(small_tree.patches, wheel, echo=notes.append)
    assert "rolled back an interrupted apply" in notes[0]
    assert (wheel / "torch/b.py").read_text() == "b\n" and (wheel / "torch/e.py").read_text() == "e\n"
    assert len(changed) == 2
    expected = dict(before, **{"torch/b.py": b"b\n", "torch/e.py": b"e\n"})
    assert _snapshot(wheel) == expected
