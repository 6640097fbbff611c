# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The combined wheel's only contact with the patch engine (:mod:`catch_tools.patches`).

The build needs four things from the series: is it empty, which paths does it touch (only those members are
extracted from the wheel), does it pass ``lint`` and ``check`` against those files, and apply it to them. An empty
series needs no engine at all (the ``series`` file is read here with quilt's rules: one name per line, ``#``
comments); a non-empty one needs :mod:`catch_tools.patches`, and a clear error says so when it cannot be imported.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

from catch_tools.errors import UserError


def series_is_empty(series_dir: Path) -> bool:
    """True when ``series_dir/series`` names no patch (quilt format: ``#`` starts a comment).

    Raises:
        UserError: no ``series`` file.
    """
    path = series_dir / "series"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError("series file not found: is this a patches/ directory?", path=path) from None
    except IsADirectoryError:
        raise UserError("is a directory, expected the quilt series file", path=path) from None
    return all(not re.sub(r"(^|\s)#.*$", "", line).strip() for line in text.splitlines())


def _engine() -> ModuleType:
    try:
        return importlib.import_module("catch_tools.patches")
    except ImportError as err:
        raise UserError(f"the series is not empty but the patch engine cannot be imported ({err})") from None


def touched_paths(series_dir: Path) -> list[str]:
    """Tree-relative paths the series reads or writes (sorted), from the engine's parse of every patch.

    Raises:
        UserError: from the engine (bad series, unparsable patch).
    """
    paths = {p for patch in _engine().load_series(series_dir) for change in patch.files for p in change.paths}
    return sorted(p for p in paths if p and p != "/dev/null")


def check_series_ok(series_dir: Path, tree: Path) -> None:
    """Refuse a series that fails the engine's ``lint`` or its ``check`` against the directory ``tree``.

    Raises:
        UserError: naming the first problem (file and line) and how many there are.
    """
    engine = _engine()
    problems = engine.lint_series(series_dir)
    if problems:
        first = problems[0]
        raise UserError(f"series fails lint: {first.message} ({len(problems)} problem(s); run "
                        "scripts/apply_patches.py lint)", path=first.file, line=first.line)
    report = engine.check_series(series_dir, target_dir=tree, progress=False)
    if report.failed:
        failed = report.failed[0]
        file, line, message = failed.problems[0] if failed.problems else (failed.file, None, "does not apply")
        raise UserError(f"series fails check: {failed.name}: {message} ({len(report.failed)} failing patch(es); "
                        "run scripts/apply_patches.py check)", path=file or failed.file, line=line)


def apply_to_dir(series_dir: Path, target: Path) -> list[Path]:
    """Apply the series to the plain directory ``target`` through the engine; returns the changed files.

    Raises:
        UserError: from the engine (a native patch needs ``--from-source``; a hunk that does not apply; ...).
    """
    changed: list[Path] = _engine().apply_series_to_dir(series_dir, target)
    return changed
