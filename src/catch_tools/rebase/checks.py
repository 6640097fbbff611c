# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""What a rebase refuses before it changes anything: drops without a patch or a reason, refs that are not later
releases in order, an upstream work tree that is not clean, ``patches/`` edited during the rebase, and a conflict
resolution that leaves markers or rejected hunks."""

from __future__ import annotations

import re

from catch_tools.errors import UserError
from catch_tools.rebase.state import RebaseState, changed_files, tree_hash
from catch_tools.rebase.workspace import Workspace

_MARKER = re.compile(r"^(<{7}|>{7})( |$)", re.MULTILINE)


def check_drops(ws: Workspace, drops: dict[str, str], names: list[str]) -> None:
    """Refuse a ``--drop`` that names no patch of ``names`` (the ones still to apply) or has no reason."""
    for name, reason in drops.items():
        if name not in names:
            raise UserError(f"--drop {name}: not a patch still to apply (droppable: {', '.join(names) or 'none'}; "
                             "to drop an earlier one, --abort and start again with --drop)",
                             path=ws.patches / "series")
        if not reason.strip():
            raise UserError(f"--drop {name} needs --reason \"...\" (it goes into the report)")


def resolve_steps(ws: Workspace, steps: list[str], old_base: str) -> list[str]:
    """The commits of ``steps`` (``--via`` refs, then ``--onto``), each a later release than the one before
    (the first later than ``old_base``)."""
    commits, previous, previous_ref = [], old_base, "the pinned base"
    for ref in steps:
        commit = ws.repo.rev(ref)
        if commit is None:
            raise UserError(f"--onto/--via {ref}: no such tag or commit in the upstream repository",
                            path=ws.repo.root)
        if commit == previous or not ws.repo.is_ancestor(previous, commit):
            raise UserError(f"{ref} is not newer than {previous_ref} ({previous[:12]}): refs must be later "
                            "releases, in order", path=ws.repo.root)
        commits.append(commit)
        previous, previous_ref = commit, ref
    return commits


def check_clean(ws: Workspace) -> None:
    """Refuse an upstream work tree with a git operation in progress or any change (untracked files too)."""
    operation = ws.repo.operation_in_progress()
    if operation:
        raise UserError(f"a git operation is in progress ({operation}); finish or abort it first",
                        path=ws.repo.root)
    dirty = ws.repo.dirty_paths(untracked=True, submodules=True)
    if dirty:
        raise UserError(f"the upstream work tree is not clean ({len(dirty)} change(s), e.g. {dirty[0]}); "
                        "commit or discard them first", path=ws.repo.root)


def check_patches_untouched(ws: Workspace, state: RebaseState) -> None:
    """Refuse ``patches/`` edited by hand since the rebase started (the final phase rewrites it itself)."""
    if state.phase == "finalize":
        return  # the final phase rewrites patches/ itself, from the backup
    if tree_hash(ws.patches) != state.patches_hash:
        edited = ", ".join(changed_files(ws.patches, ws.store.backup)) or "modes"
        raise UserError(f"patches/ was edited by hand during the rebase ({edited}); undo the edit, or run "
                        "rebase.py --abort", path=ws.patches)


def check_resolved(ws: Workspace, state: RebaseState) -> None:
    """Refuse a resolution that leaves ``*.rej`` files or conflict markers."""
    changed = set(state.conflict_files)
    changed |= set(ws.repo.run("diff", "--name-only", "HEAD").stdout.split())
    changed |= set(ws.repo.run("ls-files", "--others", "--exclude-standard").stdout.split())
    for rel in sorted(changed):
        path = ws.repo.root / rel
        if rel.endswith(".rej"):
            raise UserError("rejected hunks file still present; resolve it and delete it", path=path)
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        match = _MARKER.search(text)
        if match:
            line = text.count("\n", 0, match.start()) + 1
            raise UserError("conflict markers remain; resolve them, then run rebase.py --continue",
                            path=path, line=line)
