# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The final phase of a rebase: ``patches/`` regenerated from the new commits (unchanged patches stay
byte-identical), the pin moved (manifest, ``constraints.txt``, ``pytorch`` gitlink), ``refs/patches/base`` and
``applied`` set, and the report written. Restartable: after a crash it starts again from the ``patches/`` backup."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from catch_tools.faults import fault
from catch_tools.git import Repo
from catch_tools.patches.gittree import REF_APPLIED, REF_BASE
from catch_tools.rebase import pinning, proving, report, series
from catch_tools.rebase.outcome import Finished
from catch_tools.rebase.state import REF_OLD_TIP, RebaseState, copy_tree_exact
from catch_tools.rebase.workspace import Workspace
from catch_tools.userfiles import report_files

#: The report's name in the upstream git directory (``<git-dir>/catch-rebase-report.{md,json}``), besides ``--report``.
REPORT_NAME = "catch-rebase-report"


def finalize(ws: Workspace, state: RebaseState, line: Callable[[str], None] | None = None) -> Finished:
    """Run the final phase (see the module doc) and remove the rebase state; returns the report and its files.
    Each carried patch proves itself on the new base first (:func:`proving.prove`; ``line`` is told each verdict).

    Raises:
        UserError: the export refuses a new commit (:func:`catch_tools.patches.export_series`), or the new pin
            cannot be told (:func:`catch_tools.rebase.pinning.pin_target`).
    """
    if state.finalize_started:
        copy_tree_exact(ws.store.backup, ws.patches)  # after a crash here: redo from the original bytes
    else:
        state.finalize_started = True
        ws.store.save(state)
    kept = [p.name for p in state.patches if not p.gone]
    new_base = state.step_commits[-1]
    new_tip = state.tip or new_base
    ws.repo.reset_hard(new_tip, clean=False)  # the tree was clean: only the files that differ are written
    ws.repo.set_ref(REF_BASE, new_base)
    ws.repo.set_ref(REF_APPLIED, new_tip)
    new_names = series.export(ws.repo, ws.patches, pinning.load_project_pin(ws.project))
    if len(new_names) != len(kept):
        raise RuntimeError(f"export wrote {len(new_names)} patches for the {len(kept)} kept ones")
    renamed = dict(zip(kept, new_names, strict=True))
    changed = [old for old, new in renamed.items()
               if old != new or (ws.store.backup / old).read_bytes() != (ws.patches / new).read_bytes()]
    fault("rebase.export")
    target = pinning.pin_target(ws.repo, state.steps[-1], new_base)
    pinning.write_pin(ws.project, target)
    if state.orig_gitlink is not None:
        pinning.set_gitlink(ws.project, target.commit)
    fault("rebase.pin")
    assert state.old_tip is not None
    rdiff = report.range_diff(ws.repo, state.old_base, state.old_tip, new_base, new_tip)
    pin = {"tag": target.tag, "commit": target.commit, "wheel_version": target.wheel_version}
    proofs = proving.prove(ws.repo, state, ws.store.backup, ws.project, new_tip, line)
    data = report.build(state, new_tip, renamed, rdiff, changed, pin, upstreamed_in(ws.repo, state), proofs)
    paths = write_reports(ws.repo, state, data)
    fault("rebase.report")
    ws.repo.set_ref(REF_OLD_TIP, None)
    ws.store.remove()
    return Finished(data, paths)


def upstreamed_in(repo: Repo, state: RebaseState) -> dict[str, dict[str, str]]:
    """For each upstreamed patch: the upstream release that contains it (the oldest tag holding the upstream commit
    with its patch-id, else the step's release where the change was found) and that release's ``git_version`` (the
    upstream commit, :func:`pinning.pin_target`)."""
    found: dict[str, dict[str, str]] = {}
    for p in state.patches:
        result = next((r for r in p.results if r.status == "upstreamed"), None)
        if result is None:
            continue
        release = result.onto
        if result.upstream_commit:
            tags = repo.run("tag", "--contains", result.upstream_commit, "--sort=version:refname",
                                 check=False).stdout.split()
            release = next((t for t in tags if t in state.steps), tags[0] if tags else release)
        commit = repo.rev(release)
        entry = {"release": release}
        if commit is not None:
            entry["git_version"] = pinning.pin_target(repo, release, commit).commit
        found[p.name] = entry
    return found


def write_reports(repo: Repo, state: RebaseState, data: dict[str, Any]) -> list[Path]:
    """Write the report as Markdown and JSON into the git directory and to ``--report PATH``; returns the files."""
    markdown, text = report.to_markdown(data), report.to_json(data)
    default = repo.git_dir / REPORT_NAME
    targets = [default]
    if state.report_path:
        targets.append(Path(state.report_path))
    written = []
    for stem in targets:
        md, js = report_files(stem)
        md.parent.mkdir(parents=True, exist_ok=True)
        md.write_text(markdown, encoding="utf-8")
        js.write_text(text, encoding="utf-8")
        written += [md, js]
    return written
