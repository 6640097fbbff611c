# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``lint`` validates the pin ``patches/manifest.toml``: every problem the pin loader refuses is one lint line with
file and line, all of them in one run; the project's own manifest passes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, SmallTree

from catch_tools.errors import UserError
from catch_tools.patches import lint_series
from catch_tools.pin import manifest_path, parse_pin, pin_problems

REAL = manifest_path(REPO_ROOT).read_text(encoding="utf-8")

# (case: the real manifest's line to replace, its replacement, the start of the message lint prints)
BAD = {
    "version-word": ("version = 1", 'version = "one"', "series.version must be a positive integer"),
    "version-zero": ("version = 1", "version = 0", "series.version must be a positive integer, got 0"),
    "version-float": ("version = 1", "version = 1.0", "series.version must be a positive integer"),
    "version-bool": ("version = 1", "version = true", "series.version must be a positive integer"),
    "commit-short": ('commit = "cf30153c4c131c8164ee7798e5022d810682e2cb"', 'commit = "cf30153c"',
                     "upstream.commit must be 40 lowercase hex digits"),
    "commit-upper": ('commit = "cf30153c4c131c8164ee7798e5022d810682e2cb"',
                     'commit = "CF30153C4C131C8164EE7798E5022D810682E2CB"', "upstream.commit must be 40 lowercase"),
    "commit-int": ('commit = "cf30153c4c131c8164ee7798e5022d810682e2cb"', "commit = 12",
                   "upstream.commit must be a string"),
    "tag-space": ('tag = "v2.13.0"', 'tag = "v2.13.0 rc"', "upstream.tag must be a git tag name"),
    "tag-dots": ('tag = "v2.13.0"', 'tag = "v2..13"', "upstream.tag must be a git tag name"),
    "tag-empty": ('tag = "v2.13.0"', 'tag = ""', "upstream.tag must be a git tag name"),
    "wheel-not-normal": ('wheel_version = "2.13.0+cpu"', 'wheel_version = "2.13.0-rc1+cpu"',
                         "upstream.wheel_version must be a PEP 440 version in normal form"),
    "wheel-not-pep440": ('wheel_version = "2.13.0+cpu"', 'wheel_version = "latest"',
                         "upstream.wheel_version must be a PEP 440 version in normal form"),
    "repository-empty": ('repository = "https://github.com/pytorch/pytorch.git"', 'repository = ""',
                         "upstream.repository must be a git URL or path"),
    "repository-list": ('repository = "https://github.com/pytorch/pytorch.git"', 'repository = ["a"]',
                        "upstream.repository must be a string"),
}


def _line_of(text: str, line: str) -> int:
    return next(n for n, got in enumerate(text.splitlines(), 1) if got == line)


def _series_with(small_tree: SmallTree, manifest: str) -> Path:
    path = small_tree.patches / "manifest.toml"
    path.write_text(manifest, encoding="utf-8")
    return path


def test_the_project_manifest_passes(run_script) -> None:
    assert pin_problems(REAL, "manifest.toml") == []
    proc = run_script("apply_patches.py", "lint", cwd=REPO_ROOT)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.strip() == "lint: series is clean"


@pytest.mark.parametrize("case", sorted(BAD))
def test_each_bad_manifest_fails_lint_with_its_line(small_tree: SmallTree, run_script, case: str) -> None:
    old, new, message = BAD[case]
    assert old in REAL.splitlines()
    text = REAL.replace(old, new, 1)
    path = _series_with(small_tree, text)
    line = _line_of(text, new)
    with pytest.raises(UserError) as refused:  # the loader refuses it, at the same line
        parse_pin(text, path)
    assert refused.value.line == line
    proc = run_script("apply_patches.py", "lint", "--patches-dir", str(small_tree.patches))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [f"error: {path}:{line}: {refused.value.message}"]
    assert proc.stderr.startswith(f"error: {path}:{line}: {message}")


def test_every_problem_is_reported_in_one_run(small_tree: SmallTree) -> None:
    text = REAL
    for case in ("version-word", "commit-short", "tag-dots", "wheel-not-normal"):
        old, new, _ = BAD[case]
        text = text.replace(old, new, 1)
    path = _series_with(small_tree, text)
    found = [(p.file, p.line, p.message.split(" must ")[0]) for p in lint_series(small_tree.patches)]
    assert found == [(str(path), _line_of(text, new), key) for key, new in (
        ("upstream.tag", BAD["tag-dots"][1]), ("upstream.commit", BAD["commit-short"][1]),
        ("upstream.wheel_version", BAD["wheel-not-normal"][1]), ("series.version", BAD["version-word"][1]))]


@pytest.mark.parametrize(("old", "new", "message", "at"), [
    ("version = 1", "", "missing key 'version' in [series]", "[series]"),
    ('tag = "v2.13.0"', "", "missing key 'tag' in [upstream]", "[upstream]"),
    ("[series]", "[serie]", "missing table [series]", None),
    ('tag = "v2.13.0"', 'tag = "v2.13.0', "invalid TOML", 'tag = "v2.13.0'),
])
def test_missing_keys_and_syntax_errors(small_tree: SmallTree, old: str, new: str, message: str,
                                        at: str | None) -> None:
    text = REAL.replace(old, new, 1)
    path = _series_with(small_tree, text)
    found = lint_series(small_tree.patches)
    line = _line_of(text, at) if at else None
    assert len(found) == 1 and (found[0].file, found[0].line) == (str(path), line)
    assert found[0].message.startswith(message)


def test_pin_option_and_missing_manifest(small_tree: SmallTree, run_script, tmp_path: Path) -> None:
    (small_tree.patches / "manifest.toml").unlink()
    proc = run_script("apply_patches.py", "lint", "--patches-dir", str(small_tree.patches))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [f"error: {small_tree.patches / 'manifest.toml'}: pin manifest not found: "
                                        "pass --pin FILE, or run from a Catch checkout (patches/manifest.toml)"]
    pin = tmp_path / "pin.toml"
    shutil.copy(manifest_path(REPO_ROOT), pin)
    proc = run_script("apply_patches.py", "lint", "--patches-dir", str(small_tree.patches), "--pin", str(pin))
    assert proc.returncode == 0, proc.stderr
    pin.write_text(REAL.replace("version = 1", 'version = "one"'), encoding="utf-8")
    proc = run_script("apply_patches.py", "lint", "--patches-dir", str(small_tree.patches), "--pin", str(pin))
    line = _line_of(pin.read_text(), 'version = "one"')
    assert proc.returncode == 1 and proc.stderr.startswith(f"error: {pin}:{line}: series.version must be")
    catch = subprocess.run([sys.executable, "-m", "catch_tools.cli", "lint", "--patches-dir", str(small_tree.patches),
                            "--pin", str(pin)], capture_output=True, text=True, check=False, timeout=300)
    assert (catch.returncode, catch.stderr) == (proc.returncode, proc.stderr)  # `catch lint` is the same lint
