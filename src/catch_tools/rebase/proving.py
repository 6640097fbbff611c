# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Patches that prove they are still needed on the new base: the proof gate (:mod:`catch_tools.proof`) run during
a rebase.

A carried patch is **proven** on the new base when its ``Catch-Test`` fails on the new base without the series and
passes on the new series' tip (:func:`catch_tools.proof.prove_one`, :func:`catch_tools.proof.judge`); otherwise it
is **not proven**, with why. A test that passes on the new base without the patch means upstream now does it: the
patch is *obsolete?* (the report says so; a conflict stop suggests dropping it first).

The trees are the ``torch/`` directories of the two commits (``git archive``), so the test imports torch from them:
an upstream history whose ``torch/`` does not import (the wheel-built one lacks the native libraries) leaves every
patch not proven, with that reason.

Modes (``--prove``): ``all`` (default: every carried patch at the end, and a conflicting patch's test at its
stop), ``conflicts`` (only patches that conflicted), ``none``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catch_tools.errors import UserError
from catch_tools.git import Repo
from catch_tools.patches import Series
from catch_tools.patches.model import Patch
from catch_tools.proof import patch_test, prove_one, run_test, test_file_exists, verify_tree
from catch_tools.rebase.state import RebaseState

MODES = ("all", "conflicts", "none")
PROVEN, NOT_PROVEN = "proven", "not proven"


def obsolete_note(tag: str) -> str:
    """What the report says of a patch whose test passes on ``tag`` without it."""
    return f"obsolete? its test passes on {tag} without it"


def drop_reason(test: str, tag: str) -> str:
    """The reason a conflict stop suggests for dropping a patch upstream made obsolete."""
    return f"upstream provides it: {test} passes on {tag}"


def _patches(backup: Path) -> dict[str, Patch]:
    """The series as it was at the start of the rebase (its trailers name the tests), by name."""
    return {p.name: p for p in Series.read(backup).patches}


def _tree(repo: Repo, commit: str, dest: Path, tag: str) -> Path:
    """``torch/`` of ``commit`` at ``dest``, checked to be what torch imports from there.

    Raises:
        UserError: no ``torch/`` package in the commit, or torch does not import from it.
    """
    if not repo.export(commit, dest, "torch") or not (dest / "torch" / "__init__.py").is_file():
        raise UserError(f"no torch package (torch/__init__.py) in {tag}")
    verify_tree(dest, f"the {tag} tree")
    return dest


def passes_without(repo: Repo, state: RebaseState, backup: Path, root: Path, name: str) -> str:
    """At a conflict stop: the conflicting patch's test when it passes on the step's base without the patch (upstream
    provides it), else ``""`` (also when the test cannot run there, or ``--prove none``)."""
    if state.prove == "none":
        return ""
    try:
        test = patch_test(_patches(backup)[name])
    except (UserError, KeyError):
        return ""  # the stop still names the conflict and its cause; the final proof says why nothing ran
    if test is None or not test_file_exists(test, root):
        return ""
    tag = state.steps[state.step]
    with tempfile.TemporaryDirectory(prefix="catch-rebase-prove-") as tmp:
        try:
            tree = _tree(repo, state.step_commits[state.step], Path(tmp), tag)
        except UserError:
            return ""
        outcome, _ = run_test(test, tree, root)
    return test if outcome == "passed" else ""


def prove(repo: Repo, state: RebaseState, backup: Path, root: Path, new_tip: str,
          line: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """The verdict on each carried patch on the new base (see the module doc), by name: ``verdict`` (proven / not
    proven), ``reason`` (empty when proven), ``test``, ``without`` and ``with`` (the outcomes), ``obsolete``."""
    tag = state.steps[-1]
    carried = [p for p in state.patches if not p.gone]
    wanted = {p.name for p in carried if state.prove == "all"
              or state.prove == "conflicts" and any(r.files for r in p.results)}
    verdicts: dict[str, dict[str, Any]] = {}
    skipped = {p.name for p in carried} - wanted
    for name in skipped:
        verdicts[name] = _verdict(None, "not-run", "not-run", f"not run (--prove {state.prove})", False)
    if not wanted:
        return verdicts
    with tempfile.TemporaryDirectory(prefix="catch-rebase-prove-") as tmp:
        try:
            patches = _patches(backup)
            base = _tree(repo, state.step_commits[-1], Path(tmp) / "base", tag)
            tip = _tree(repo, new_tip, Path(tmp) / "tip", f"{tag}+series")
        except UserError as err:
            why = f"not run: {err.message} (the upgrade's proof gate runs it on the release's wheel)"
            return verdicts | {p.name: _verdict(None, "not-run", "not-run", why, False)
                               for p in carried if p.name in wanted}
        for p in carried:
            if p.name not in wanted:
                continue
            result = prove_one(patches[p.name], root, base, tip)
            obsolete = result.unpatched == "passed"
            reason = obsolete_note(tag) if obsolete else result.reason
            verdicts[p.name] = _verdict(result.test, result.unpatched, result.patched, reason, obsolete)
            if line is not None:
                line(f"{tag}: {p.name}: {verdicts[p.name]['verdict']}")
    return verdicts


def _verdict(test: str | None, without: str, with_: str, reason: str, obsolete: bool) -> dict[str, Any]:
    ok = not reason
    return {"verdict": PROVEN if ok else NOT_PROVEN, "reason": reason, "test": test, "without": without,
            "with": with_, "obsolete": obsolete}

