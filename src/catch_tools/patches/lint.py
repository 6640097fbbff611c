# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``lint``: static checks of ``patches/`` (no tree needed). Every problem is reported, one line each.

* every patch file in ``patches/`` is in ``series`` and every ``series`` entry exists; no duplicates
  (files that are not patches: ``series``, ``manifest.toml``, ``interfaces-reviewed.toml``, ``*.md``, dot-files);
* every patch parses (UTF-8, LF line endings, ``unidiff``) and changes something; every diff header field and hunk
  count ``git apply`` validates is valid, and no hunk header undercounts its body (git silently drops the extra
  lines): :mod:`catch_tools.patches.validate`, each finding with file:line;
* no path escapes the tree (absolute, ``..``, ``.git``, symlinks whose target leaves the tree);
* binary changes only with a ``Catch-Binary: yes`` trailer;
* headers: ``Upstream-Status`` with the Yocto vocabulary (Pending, Submitted [where], Backport [commit], Denied,
  Inappropriate [why], Inactive-Upstream [why] -- docs.yoctoproject.org, "Patch Upstream Status"), and
  ``Catch-Test: tests/<path>.py::<test>`` naming a test that exists (checked when the repository's ``tests/`` is
  next to ``patches/``);
* the pin ``manifest.toml`` (when the series directory has one, or when the caller names it): every problem
  :func:`catch_tools.pin.load_pin` refuses (:func:`catch_tools.pin.pin_problems`), each with file:line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.patches.model import FileChange, Patch
from catch_tools.patches.parse import display_path, patch_diff_problems
from catch_tools.patches.series import NON_PATCH_FILES, SERIES_NAME, Series
from catch_tools.pin import MANIFEST_NAME, pin_problems, read_manifest

UPSTREAM_STATUS_RE = re.compile(
    r"^(Pending|Denied|Submitted \[[^\]]+\]|Backport \[[^\]]+\]|Inappropriate \[[^\]]+\]"
    r"|Inactive-Upstream( \[[^\]]+\])?)$")
CATCH_TEST_RE = re.compile(r"^(tests/[\w./-]+\.py)::(\w+)(?:\[[^\]]*\])?$")


@dataclass(frozen=True)
class LintProblem:
    """One finding: ``file``, 1-based ``line`` (None if not about a line), ``message``."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


def is_patch_file(path: Path) -> bool:
    """Whether a file in ``patches/`` must be listed in ``series``."""
    name = path.name
    return path.is_file() and name not in NON_PATCH_FILES and not name.endswith(".md") and not name.startswith(".")


def _check_test(value: str, line: int, file: str, repo: Path | None) -> list[LintProblem]:
    m = CATCH_TEST_RE.match(value)
    if not m:
        return [LintProblem(file, line, f"Catch-Test {value!r} must look like tests/<path>.py::test_name")]
    if repo is None or not (repo / "tests").is_dir():
        return []
    test_file = repo / m.group(1)
    if not test_file.is_file():
        return [LintProblem(file, line, f"Catch-Test names {m.group(1)}, which does not exist")]
    source = test_file.read_text(encoding="utf-8", errors="replace")
    if not re.search(rf"^\s*(async\s+)?def {re.escape(m.group(2))}\(", source, re.MULTILINE):
        return [LintProblem(file, line, f"Catch-Test names {m.group(2)}, which {m.group(1)} does not define")]
    return []


def lint_manifest(path: Path) -> list[LintProblem]:
    """Every problem of the pin manifest ``path`` that :func:`catch_tools.pin.load_pin` refuses, a missing or
    unreadable file included (empty list = valid)."""
    file = display_path(path)
    try:
        text = read_manifest(path, option="--pin FILE")
    except UserError as err:
        return [LintProblem(file, err.line, err.message)]
    return [LintProblem(file, err.line, err.message) for err in pin_problems(text, file)]


def lint_series(series: Series | Path, *, repo: Path | None = None, pin: Path | None = None) -> list[LintProblem]:
    """All problems of the series (a :class:`~catch_tools.patches.series.Series`, or its ``patches/`` directory;
    empty list = clean). ``repo`` is where ``Catch-Test`` paths are resolved (default: the parent of the series
    directory). ``pin`` is the series' pin manifest, which must exist (default: ``<directory>/manifest.toml``,
    linted when it exists: a series can be used with ``--pin FILE`` or ``--base REF`` instead)."""
    directory = series.directory if isinstance(series, Series) else series
    manifest = pin if pin is not None else directory / MANIFEST_NAME
    pin_found = lint_manifest(manifest) if pin is not None or manifest.exists() or manifest.is_symlink() else []
    return _lint_patches(series, repo) + pin_found


def _lint_patches(series: Series | Path, repo: Path | None) -> list[LintProblem]:
    if not isinstance(series, Series):
        directory = series
        try:
            series = Series.read(directory, allow_duplicates=True)
        except UserError as err:
            return [LintProblem(err.path or display_path(directory / SERIES_NAME), err.line, err.message)]
    patches_dir = series.directory
    repo = repo if repo is not None else patches_dir.parent
    series_file = display_path(patches_dir / SERIES_NAME)
    problems: list[LintProblem] = []
    entries = series.entries
    first: dict[str, int] = {}
    for entry in entries:
        if entry.name in first:
            problems.append(LintProblem(series_file, entry.line,
                                        f"duplicate entry {entry.name} (first on line {first[entry.name]})"))
        first.setdefault(entry.name, entry.line)
    on_disk = sorted(p.name for p in patches_dir.iterdir() if is_patch_file(p))
    for name in on_disk:
        if name not in first:
            problems.append(LintProblem(display_path(patches_dir / name), None,
                                        f"not listed in {SERIES_NAME}: add it there or delete the file"))
    for entry in entries:
        if first[entry.name] != entry.line:
            continue
        path = patches_dir / entry.name
        file = display_path(path)
        try:
            series.file(entry)
        except UserError as err:
            problems.append(LintProblem(err.path or series_file, err.line, err.message))
            continue
        found = patch_diff_problems(path, entry.strip)
        problems.extend(LintProblem(file, p.line, p.message) for p in found)
        try:
            patch = series.parse(entry)
        except UserError as err:
            if not any(p.line == err.line and p.message == err.message for p in found):
                problems.append(LintProblem(err.path or file, err.line, err.message))
            continue
        trailers = patch.meta.trailers
        status = trailers.get("Upstream-Status")
        if status is None:
            problems.append(LintProblem(file, 1, "missing Upstream-Status: trailer (Pending, Submitted [where], "
                                                 "Backport [commit], Denied, Inappropriate [why])"))
        elif not UPSTREAM_STATUS_RE.match(status[0]):
            problems.append(LintProblem(file, status[1], f"Upstream-Status {status[0]!r} is not in the Yocto "
                                        "vocabulary (Pending, Submitted [where], Backport [commit], Denied, "
                                        "Inappropriate [why])"))
        test = trailers.get("Catch-Test")
        if test is None:
            problems.append(LintProblem(file, 1, "missing Catch-Test: trailer naming the regression test "
                                                 "(tests/<path>.py::test_name)"))
        else:
            problems.extend(_check_test(test[0], test[1], file, repo))
        for change in undeclared_binary(patch):
            problems.append(LintProblem(file, change.patch_line, f"binary change to {change.path} without a "
                                        "'Catch-Binary: yes' trailer"))
    return problems


def undeclared_binary(patch: Patch) -> list[FileChange]:
    """The binary changes of ``patch`` when its message has no ``Catch-Binary: yes`` trailer (lint's rule: a binary
    change is reviewed on purpose, and only git mode applies it)."""
    if patch.meta.trailers.get("Catch-Binary", ("no", 0))[0].lower() == "yes":
        return []
    return [change for change in patch.files if change.binary]
