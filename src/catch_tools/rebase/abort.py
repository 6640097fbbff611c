# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``--abort``: put back exactly the state from before the rebase, from the saved state or, when that is damaged,
from the start record."""

from __future__ import annotations

from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.rebase import pinning
from catch_tools.rebase.state import (
    REF_OLD_TIP,
    RebaseState,
    StateUnreadable,
    changed_files,
    copy_tree_exact,
    tree_hash,
)
from catch_tools.rebase.workspace import Workspace


def abort(ws: Workspace) -> list[str]:
    """``--abort``: put back the exact state from before the rebase (upstream HEAD and branch, work tree, refs
    ``refs/patches/*``, ``patches/`` and pin, gitlink). Returns warnings (hand edits to ``patches/`` are kept in a
    copy next to the state directory before being undone).

    A damaged or hand-edited ``state.json`` does not stop it: everything it restores is also in the start record
    (``start.json``, :class:`~catch_tools.rebase.state.StateStore`), which it then uses, with a warning.

    Raises:
        UserError: no rebase in progress; the state and the start record are both unreadable (the message says
            how to clean up by hand).
    """
    with ws.store.lock():
        try:
            state = ws.load()
        except StateUnreadable as err:
            start = start_record(ws, err)
            where = f"{err.path}:{err.line}" if err.line else err.path
            return [f"{where}: unreadable rebase state ({err.why}): aborted with the start record "
                    f"{ws.store.start_file}",
                    *undo(ws, start, phase_known=False)]
        return undo(ws, state)


def start_record(ws: Workspace, err: StateUnreadable) -> RebaseState:
    """The start record, when ``state.json`` is unreadable (``err``); a UserError saying how to clean up by hand
    when it is unreadable too."""
    try:
        state = ws.store.load_start()
    except StateUnreadable as again:
        up, patches, backup = ws.repo.root, ws.patches, ws.store.backup
        raise UserError(
            f"unreadable rebase state ({err.why}), and the start record too ({again.why}): --abort cannot tell "
            f"where the rebase started (START: the branch or commit {up} was on, see `git -C {up} reflog`); "
            f"clean up by hand: `git -C {up} reset -q --hard && git -C {up} checkout -q <START> && git -C {up} "
            f"update-ref -d {REF_OLD_TIP} && rm -rf {patches} && cp -a {backup} {patches} && "
            f"rm -rf {ws.store.dir}`", path=err.path, line=err.line) from None
    if Path(state.project) != ws.project:
        raise UserError(f"the rebase in progress belongs to the project {state.project}; pass --project "
                        f"{state.project}", path=ws.project)
    return state


def undo(ws: Workspace, state: RebaseState, *, phase_known: bool = True) -> list[str]:
    """Put back everything recorded in ``state`` (see :func:`abort`); remove the state. ``phase_known`` is False
    for the start record (then the rebase may have rewritten ``patches/`` itself)."""
    warnings = []
    edited = ws.patches.exists() and tree_hash(ws.patches) != state.patches_hash
    if edited and (state.phase != "finalize" or not phase_known):
        keep = ws.repo.git_dir / "catch-rebase-aborted-patches"
        copy_tree_exact(ws.patches, keep)
        names = ", ".join(changed_files(ws.patches, ws.store.backup))
        warnings.append(f"patches/ had been edited during the rebase ({names}); that copy is kept in {keep}"
                        if phase_known else f"patches/ differs from its state before the rebase ({names}: hand "
                        f"edits or the rebase's own export); that copy is kept in {keep}")
    if (ws.repo.git_dir / "rebase-apply").exists():
        ws.repo.run("am", "--abort", check=False)
    if state.orig_head is not None:
        ws.repo.reset_hard(state.orig_head)
        if state.orig_head_ref is not None:
            ws.repo.run("symbolic-ref", "HEAD", state.orig_head_ref)
            ws.repo.run("reset", "-q", "--hard", state.orig_head)
    for ref, value in state.orig_refs.items():
        ws.repo.set_ref(ref, value)
    for name, content in state.orig_files.items():
        if content is None:
            Path(name).unlink(missing_ok=True)
        else:
            Path(name).write_text(content, encoding="utf-8", errors="surrogateescape")
    for directory in map(Path, state.orig_absent_dirs):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
    ws.repo.set_ref(REF_OLD_TIP, None)
    copy_tree_exact(ws.store.backup, ws.patches)
    if state.orig_gitlink is not None and pinning.project_gitlink(ws.project) != state.orig_gitlink:
        pinning.set_gitlink(ws.project, state.orig_gitlink)
    ws.store.remove()
    return warnings
