# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Recorded conflict resolutions: a conflict resolved by hand once is replayed by the next run of the same upgrade.

Like ``git rerere``, but kept as data in the project (git's ``rr-cache`` lives in one clone's git directory, and the
canary and CI work on fresh clones): when ``--continue`` commits a maintainer's resolution of patch ``NAME`` onto
``REF``, the resolved patch is written to ``resolutions/<REF>/<NAME>`` -- the new commit's full diff, after a header
naming the ``git patch-id --stable`` of the patch it resolves. When a later rebase stops on the same patch (same
patch-id) onto the same ref, the recorded diff is applied with ``git apply --index`` instead of stopping; the patch is
reported ``resolved`` ("recorded resolution replayed") for review like any hand resolution. A recorded diff that no
longer applies (the patch or the release changed) is ignored and the rebase stops as usual.
"""

from __future__ import annotations

import re
from pathlib import Path

from catch_tools.git import Repo
from catch_tools.rebase import pick

DIR = "resolutions"
_HEADER = re.compile(r"^# resolves patch-id ([0-9a-f]{40})$", re.MULTILINE)


def path(project: Path, onto: str, name: str) -> Path:
    """Where the resolution of patch ``name`` onto ``onto`` is recorded: ``<project>/resolutions/<onto>/<name>``
    (``/`` in a ref becomes ``_``)."""
    return project / DIR / onto.replace("/", "_") / name


def record(repo: Repo, project: Path, onto: str, name: str, original: str, resolved: str) -> Path:
    """Write the resolution of patch commit ``original`` (its hand-resolved commit ``resolved``) onto ``onto``."""
    _date, original_diff = pick.commit_diff(repo, original)
    pid = pick.patch_id(repo, original_diff) or ""
    _date, diff = pick.commit_diff(repo, resolved)
    target = path(project, onto, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"# Catch recorded resolution of {name} onto {onto} (scripts/rebase.py replays it)\n"
                      f"# resolves patch-id {pid}\n\n{diff}", encoding="utf-8")
    return target


def replay(repo: Repo, project: Path, onto: str, name: str, commit: str, tip: str) -> pick.PickOutcome | None:
    """After a conflict of patch commit ``commit`` onto ``tip``: apply the recorded resolution, if there is one for
    this patch (same patch-id) and ref and it applies. Returns the outcome (``resolved``, HEAD = the new commit) or
    None (the conflict is put back as it was: the caller stops)."""
    recorded = path(project, onto, name)
    if not recorded.is_file():
        return None
    text = recorded.read_text(encoding="utf-8")
    match = _HEADER.search(text)
    date, diff = pick.commit_diff(repo, commit)
    if match is None or match.group(1) != pick.patch_id(repo, diff):
        return None
    conflicted = repo.rev("HEAD")
    repo.reset_hard(tip)
    applied = repo.run("apply", "--index", "--whitespace=nowarn", input=text, check=False)
    if not applied.ok:
        repo.reset_hard(tip)
        repo.run("cherry-pick", "--no-commit", "--allow-empty", commit, check=False)  # the conflict, as it was
        assert conflicted == repo.rev("HEAD")
        return None
    new = pick._commit(repo, commit, date)
    rel = recorded.relative_to(project)
    return pick.PickOutcome("resolved", commit=new, detail=f"recorded resolution replayed ({rel})")
