# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The series as the rebase sees it, through the patch engine (:mod:`catch_tools.patches`).

- :func:`names`: the patch names in series order (engine: :class:`~catch_tools.patches.series.Series`);
- :func:`replay`: the series as one reproducible commit per patch on the old base (engine: ``Series``,
  ``simulate``, ``fast_import`` -- ``apply_to_git`` without its checkout);
- :func:`export`: ``patches/`` regenerated from the new commits (engine: ``export_series`` with ``refresh``:
  deterministic; a patch whose change is equivalent keeps its file name, mail header, message and trailers, and its
  diff is the one ``git format-patch`` writes on the new base -- hunk line numbers, ``index`` lines and context --
  so ``check`` on the new base finds no moved hunk; a patch whose diff did not move stays byte-for-byte).

The engine refuses an empty export (it would delete every patch by mistake); when a rebase has legitimately dropped
every patch (all upstreamed or dropped with reasons), :func:`export` writes the empty series itself.
"""

from __future__ import annotations

from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import Repo
from catch_tools.patches import Series, apply_to_git, export_series
from catch_tools.patches.commits import fast_import
from catch_tools.patches.engine import simulate
from catch_tools.patches.gittree import REF_BASE, GitTreeReader
from catch_tools.pin import Pin
from catch_tools.userfiles import write_atomic

#: The advice for a missing series, in ``rebase.py``'s options (it has ``--project``, not ``--patches-dir``).
PROJECT_HINT = "pass --project DIR, the Catch checkout holding patches/series"


def names(patches: Path) -> list[str]:
    """Patch file names of ``patches/series`` in order (files are parsed by :func:`replay`).

    Raises:
        UserError: a series problem the engine reports (file and line named).
    """
    return Series.read(patches, hint=PROJECT_HINT).names


def replay(repo: Repo, patches: Path, base: str, pin: Pin) -> list[str]:
    """The series as commits on ``base``, one per patch, in series order; HEAD, index and work tree untouched.

    The engine parses every patch (:class:`~catch_tools.patches.series.Series`), applies the series in memory on
    ``base`` (``simulate``, git's matching rules) and writes the commits with one ``git fast-import`` -- its
    reproducible ``apply`` without the checkout, which a rebase does not need on the old base. A series the in-memory
    engine cannot apply (binary patches) goes through the engine's full ``apply_to_git`` instead.

    Raises:
        UserError: a patch does not parse or does not apply to its own base (the engine names it).
    """
    parsed = Series.read(patches).patches
    outcomes = simulate(parsed, GitTreeReader(repo, base))
    failed = next((o for o in outcomes if not o.ok), None)
    if failed is None:
        return fast_import(repo, base, outcomes)
    if any(change.binary for patch in parsed for change in patch.files):
        return _replay_with_checkout(repo, patches, base, pin, [p.name for p in parsed])
    problem = failed.problems[0]
    raise UserError(f"does not apply to the pinned base {base[:12]}: {problem.message} (fix the series first: "
                    "scripts/apply_patches.py check)", path=patches / failed.patch.name, line=problem.line)


def _replay_with_checkout(repo: Repo, patches: Path, base: str, pin: Pin, expected: list[str]) -> list[str]:
    repo.reset_hard(base)  # detached: the engine's checkout never moves a branch of the maintainer
    result = apply_to_git(repo.root, patches, base=base, pin=pin)
    if result.stopped or [name for name, _commit in result.commits] != expected:
        raise UserError("the series does not apply to its own base", path=patches / "series")
    return [commit for _name, commit in result.commits]


def export(repo: Repo, patches: Path, pin: Pin) -> list[str]:
    """Regenerate ``patches/`` from ``refs/patches/base..HEAD`` of ``repo``; return the new series names.

    The caller checks out the new series and sets ``refs/patches/base`` first. An empty range writes an empty series
    (comment lines kept) and removes the old patch files.
    """
    if repo.rev("HEAD") == repo.rev(REF_BASE):
        _write_empty_series(patches)
        return []
    export_series(repo.root, patches, pin=pin, refresh=True)
    return Series.read(patches).names


def _write_empty_series(patches: Path) -> None:
    old = Series.read(patches).names
    header = []
    for line in (patches / "series").read_text(encoding="utf-8").splitlines(keepends=True):
        if line.strip() and not line.lstrip().startswith("#"):
            break
        header.append(line)
    write_atomic(patches / "series", "".join(header))
    for name in old:
        (patches / name).unlink(missing_ok=True)
