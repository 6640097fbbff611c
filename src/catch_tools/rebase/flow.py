# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The rebase itself: start, continue, drop, abort and status, resumable after a crash at any point.

A rebase moves the series from the pinned base to ``--onto`` (through each ``--via`` release first):

1. **replay**: the series files become commits on the old base (the pin) -- :func:`series.replay`;
2. **apply**: for each step, patch by patch onto the step's release with :func:`pick.apply_patch`; a conflict stops
   with the patch, its files and the commands to continue;
3. **finalize**: ``patches/`` is regenerated from the new commits (unchanged patches stay byte-identical), the pin is
   moved (manifest and ``pytorch`` gitlink), refs ``refs/patches/base``/``applied`` are set and the report is written.

Every transition is saved in :class:`state.RebaseState` before the next one starts, and every transition is
idempotent from its saved state (the work tree is reset to the recorded tip before a patch is retried; the final
phase starts again from the ``patches/`` backup), so ``kill -9`` anywhere leaves a rebase that ``--continue`` finishes
or ``--abort`` undoes. The crash tests kill it at each of :data:`CRASH_POINTS` (``CATCH_FAULT=rebase.<point>``,
:mod:`catch_tools.faults`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catch_tools.errors import UserError
from catch_tools.faults import fault
from catch_tools.git import NotAWorkTree, Repo
from catch_tools.patches.gittree import COMMITTER, REF_APPLIED, REF_BASE, resolve_base
from catch_tools.progress import Reporter
from catch_tools.rebase import batch, pick, pinning, report, resolutions, series
from catch_tools.rebase.state import (
    PatchState,
    RebaseState,
    StateStore,
    StateUnreadable,
    StepResult,
    changed_files,
    copy_tree_exact,
    tree_hash,
)
from catch_tools.userfiles import read_regular_file, report_files, writable_report_files

REF_OLD_TIP = "refs/catch-rebase/old-tip"
#: Where a crash is injected (``CATCH_FAULT=rebase.<point>``, :mod:`catch_tools.faults`): state saved at start;
#: series replayed on the old base; after a run/patch was applied but before its state was saved; conflict saved;
#: resolution committed but not saved; step done; export written; pin written; report written (state not yet removed).
CRASH_POINTS = ("start", "replay", "apply", "conflict", "resolve", "step", "export", "pin", "report")
REPORT_NAME = "catch-rebase-report"
#: A dropped patch's step detail; its reason is kept once, in ``PatchState.drop_reason`` (the report's "reason")
DROP_DETAIL = "dropped by the maintainer"
_MARKER = re.compile(r"^(<{7}|>{7})( |$)", re.MULTILINE)
#: Files git rewrites while we commit; ``--abort`` puts their old content back (with the report files).
GIT_SCRATCH_FILES = ("ORIG_HEAD", "COMMIT_EDITMSG")


def _read_or_none(path: Path) -> str | None:
    """The text of a file ``--abort`` puts back, or None when there is none; bytes that are not UTF-8 are kept
    (``surrogateescape``: JSON stores them as escapes, :meth:`Rebase._undo` writes the same bytes back).

    Raises:
        UserError: ``path`` is a directory, a FIFO, socket or device (never opened for reading).
    """
    try:
        return read_regular_file(path, "a regular file the rebase may rewrite").decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UserError("is a directory, but the rebase writes a file here", path=path) from None


def open_upstream(path: Path) -> Repo:
    """The upstream work tree at ``path``, committing as the series' committer (the patch engine's, so a rebased
    series has the commit ids ``apply`` gives it).

    Raises:
        UserError: ``path`` is a bare repository, not the top of a work tree, or no repository.
    """
    try:
        return Repo.open(path, committer=COMMITTER)
    except NotAWorkTree as err:
        if err.kind == "bare":
            raise UserError("a bare repository has no work tree to rebase in", path=path) from None
        detail = f" ({err.why})" if err.why else ""
        raise UserError(f"not a git checkout{detail} (use --source DIR for another upstream checkout)",
                        path=path) from None


@dataclass
class Stopped:
    """The rebase stopped at a conflict: ``patch`` could not be applied onto ``onto``; ``files`` hold the conflict."""

    patch: str
    onto: str
    files: list[str]
    detail: str
    upstream: Path

    def message(self) -> str:
        """Multi-line guidance for the maintainer: what conflicted and the commands to go on."""
        files = "\n".join(f"    {f}" for f in self.files)
        return (
            f"conflict: patch {self.patch} does not apply onto {self.onto} ({self.detail})\n"
            f"  files:\n{files}\n"
            f"  resolve them in {self.upstream} (remove every conflict marker; `git rm` a file the patch no longer "
            "needs), then run:\n"
            "    scripts/rebase.py --continue\n"
            f"  or drop the patch:  scripts/rebase.py --drop {self.patch} --reason \"...\"\n"
            "  or give up:         scripts/rebase.py --abort\n"
        )


@dataclass
class Finished:
    """The rebase completed: the report (dict, see :func:`report.build`) and the files it was written to."""

    report: dict[str, Any]
    paths: list[Path]


Outcome = Stopped | Finished


class Rebase:
    """One upstream repository and one project checkout.

    Args:
        project: the Catch checkout root (holds ``patches/``; its git index holds the ``pytorch`` gitlink if any).
        upstream: the upstream PyTorch work tree (the ``pytorch/`` submodule, a full clone, or the wheel-built repo).
        progress: the display told one line per event (patch applied, step done); default: the log only.
    """

    def __init__(self, project: Path, upstream: Path, progress: Reporter | None = None) -> None:
        self.project = project.resolve()
        self.patches = self.project / "patches"
        self.repo = open_upstream(upstream)
        self.store = StateStore(self.repo.git_dir)
        self.progress = progress or Reporter()
        #: called with a patch name when the maintainer resolved its conflict to no change (``git rm`` + ``--continue``)
        #: and gave no ``--reason``: returns the reason, or raises UserError (the CLI asks on a terminal)
        self.ask_reason: Callable[[str], str] | None = None
        self._pending_reason: str | None = None

    def drop_reason_for(self, name: str) -> str:
        """The reason for a maintainer's drop of ``name`` by resolution to no change: ``--continue --reason TEXT``,
        else :attr:`ask_reason`.

        Raises:
            UserError: no reason given and none can be asked for (nothing is changed: the conflict stays).
        """
        if self._pending_reason and self._pending_reason.strip():
            return self._pending_reason.strip()
        if self.ask_reason is not None:
            reason = self.ask_reason(name).strip()
            if reason:
                return reason
        raise UserError(f"{name}: the resolution removes the whole patch, a drop by the maintainer; say why with "
                        "rebase.py --continue --reason \"...\" (it goes into the report)")

    # -- entry points ------------------------------------------------------------------------------------------------

    def start(self, onto: str, via: list[str] | None = None, *, three_way: bool = True,
              drops: dict[str, str] | None = None, report_path: Path | None = None) -> Outcome:
        """Begin a rebase of the series onto ``onto`` (through ``via`` first).

        Raises:
            UserError: a rebase is in progress; a ref does not exist, is not newer than the base, or the refs are not in
                order; the upstream work tree is dirty or mid-operation; a ``--drop`` names no patch or has no reason.
        """
        with self.store.lock():
            if self.store.exists():
                raise UserError("a rebase is already in progress; run rebase.py status, --continue or --abort",
                                path=self.store.dir)
            names = series.names(self.patches)
            drops = dict(drops or {})
            self._check_drops(drops, names)
            if report_path is not None:
                writable_report_files(report_path.resolve(), "--report")
            old_base, old_ref = resolve_base(self.repo, pinning.load_project_pin(self.project),
                                             hint="fetch it or pass --source DIR")
            steps = [*(via or []), onto]
            commits = self._resolve_steps(steps, old_base)
            self._check_clean()
            head_ref, head = self.repo.head_ref(), self.repo.head()
            state = RebaseState(
                project=str(self.project), upstream=str(self.repo.root), series_names=names,
                patches_hash=tree_hash(self.patches), orig_head_ref=head_ref, orig_head=head,
                orig_refs={ref: self.repo.rev(ref) for ref in (REF_BASE, REF_APPLIED)},
                orig_gitlink=pinning.project_gitlink(self.project),
                orig_absent_dirs=[str(d) for d in self._engine_dirs() if not d.exists()],
                orig_files={str(path): _read_or_none(path)
                            for path in self._side_files(report_path) + self._resolution_files(names, via, onto)},
                old_base=old_base, old_base_ref=old_ref,
                steps=steps, step_commits=commits, three_way=three_way,
                report_path=None if report_path is None else str(report_path.resolve()),
            )
            self.store.dir.mkdir(parents=True, exist_ok=True)
            copy_tree_exact(self.patches, self.store.backup)
            state.patches = [PatchState(name=n, commit="", drop_reason=drops.get(n)) for n in names]
            self.store.save_start(state)
            self.store.save(state)
            fault("rebase.start")
            try:
                self._replay(state)
            except UserError:
                self._undo(state)  # the series does not apply to its own base: leave everything as it was
                raise
            return self._drive(state)

    def resume(self, drops: dict[str, str] | None = None, reason: str | None = None) -> Outcome:
        """``--continue`` (and ``--drop`` during a rebase): go on from the saved state.

        In a conflict, the maintainer's resolution is committed as the patch (status ``resolved``), or the patch is
        dropped when ``drops`` names it. After a crash, the interrupted transition is redone.

        Raises:
            UserError: nothing in progress; ``patches/`` edited since the start; conflict markers or ``*.rej`` files
                left; a drop naming no remaining patch or without a reason.
        """
        self._pending_reason = reason
        with self.store.lock():
            state = self._load()
            self._check_patches_untouched(state)
            drops = dict(drops or {})
            first = state.current if state.phase in ("apply", "conflict") else len(state.patches)
            remaining = [p.name for p in state.patches[first:] if not p.gone]
            self._check_drops(drops, remaining)
            for p in state.patches:
                if p.name in drops:
                    p.drop_reason = drops[p.name]
            if state.phase == "conflict":
                self._settle_conflict(state)
            return self._drive(state)

    def abort(self) -> list[str]:
        """``--abort``: put back the exact state from before the rebase (upstream HEAD and branch, work tree, refs
        ``refs/patches/*``, ``patches/`` and pin, gitlink). Returns warnings (hand edits to ``patches/`` are kept in a
        copy next to the state directory before being undone).

        A damaged or hand-edited ``state.json`` does not stop it: everything it restores is also in the start record
        (``start.json``, :class:`~catch_tools.rebase.state.StateStore`), which it then uses, with a warning.

        Raises:
            UserError: no rebase in progress; the state and the start record are both unreadable (the message says
                how to clean up by hand).
        """
        with self.store.lock():
            try:
                state = self._load()
            except StateUnreadable as err:
                start = self._start_record(err)
                where = f"{err.path}:{err.line}" if err.line else err.path
                return [f"{where}: unreadable rebase state ({err.why}): aborted with the start record "
                        f"{self.store.start_file}",
                        *self._undo(start, phase_known=False)]
            return self._undo(state)

    def _start_record(self, err: StateUnreadable) -> RebaseState:
        """The start record, when ``state.json`` is unreadable (``err``); a UserError saying how to clean up by hand
        when it is unreadable too."""
        try:
            state = self.store.load_start()
        except StateUnreadable as again:
            up, patches, backup = self.repo.root, self.patches, self.store.backup
            raise UserError(
                f"unreadable rebase state ({err.why}), and the start record too ({again.why}): --abort cannot tell "
                f"where the rebase started (START: the branch or commit {up} was on, see `git -C {up} reflog`); "
                f"clean up by hand: `git -C {up} reset -q --hard && git -C {up} checkout -q <START> && git -C {up} "
                f"update-ref -d {REF_OLD_TIP} && rm -rf {patches} && cp -a {backup} {patches} && "
                f"rm -rf {self.store.dir}`", path=err.path, line=err.line) from None
        if Path(state.project) != self.project:
            raise UserError(f"the rebase in progress belongs to the project {state.project}; pass --project "
                            f"{state.project}", path=self.project)
        return state

    def _undo(self, state: RebaseState, *, phase_known: bool = True) -> list[str]:
        """Put back everything recorded in ``state`` (see :meth:`abort`); remove the state. ``phase_known`` is False
        for the start record (then the rebase may have rewritten ``patches/`` itself)."""
        warnings = []
        edited = self.patches.exists() and tree_hash(self.patches) != state.patches_hash
        if edited and (state.phase != "finalize" or not phase_known):
            keep = self.repo.git_dir / "catch-rebase-aborted-patches"
            copy_tree_exact(self.patches, keep)
            names = ", ".join(changed_files(self.patches, self.store.backup))
            warnings.append(f"patches/ had been edited during the rebase ({names}); that copy is kept in {keep}"
                            if phase_known else f"patches/ differs from its state before the rebase ({names}: hand "
                            f"edits or the rebase's own export); that copy is kept in {keep}")
        if (self.repo.git_dir / "rebase-apply").exists():
            self.repo.run("am", "--abort", check=False)
        if state.orig_head is not None:
            self.repo.reset_hard(state.orig_head)
            if state.orig_head_ref is not None:
                self.repo.run("symbolic-ref", "HEAD", state.orig_head_ref)
                self.repo.run("reset", "-q", "--hard", state.orig_head)
        for ref, value in state.orig_refs.items():
            self.repo.set_ref(ref, value)
        for name, content in state.orig_files.items():
            if content is None:
                Path(name).unlink(missing_ok=True)
            else:
                Path(name).write_text(content, encoding="utf-8", errors="surrogateescape")
        for directory in map(Path, state.orig_absent_dirs):
            if directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
        self.repo.set_ref(REF_OLD_TIP, None)
        copy_tree_exact(self.store.backup, self.patches)
        if state.orig_gitlink is not None and pinning.project_gitlink(self.project) != state.orig_gitlink:
            pinning.set_gitlink(self.project, state.orig_gitlink)
        self.store.remove()
        return warnings

    def status(self) -> str:
        """Where a rebase stands, as a few lines of text ("no rebase in progress" when none)."""
        if not self.store.exists():
            return f"no rebase in progress in {self.repo.root}"
        state = self.store.load()
        total = len(state.steps)
        step_ref = state.steps[min(state.step, total - 1)]
        lines = [f"rebase in progress in {self.repo.root}: {state.old_base_ref} -> {state.steps[-1]}"
                 + (f" via {', '.join(state.steps[:-1])}" if total > 1 else ""),
                 f"phase: {state.phase}; step {state.step + 1}/{total} (onto {step_ref})"]
        for number, p in enumerate(state.patches):
            result = next((r for r in p.results if r.onto == step_ref), None)
            if p.gone:
                mark = p.final_status
            elif result is not None:
                mark = result.status
            elif state.phase == "conflict" and number == state.current:
                mark = "CONFLICT in " + ", ".join(state.conflict_files)
            else:
                mark = "pending" + (f" (to drop: {p.drop_reason})" if p.drop_reason else "")
            lines.append(f"  {p.name}: {mark}")
        if state.phase == "conflict":
            lines.append("next: resolve, then rebase.py --continue (or --drop NAME --reason ..., or --abort)")
        else:
            lines.append("interrupted: run rebase.py --continue to finish or --abort to undo")
        return "\n".join(lines)

    def _engine_dirs(self) -> list[Path]:
        """The patch engine's state directory (``<git-dir>/catch-patches``), created by its ``apply``."""
        return [self.repo.git_dir / "catch-patches"]

    def _side_files(self, report_path: Path | None) -> list[Path]:
        """Files outside ``patches/`` a rebase may write: git's scratch files, the report files and the project's
        ``constraints.txt`` (:func:`catch_tools.rebase.pinning.write_pin`)."""
        stems = [self.repo.git_dir / REPORT_NAME] + ([] if report_path is None else [report_path.resolve()])
        reports = [p for stem in stems for p in report_files(stem)]
        return ([self.repo.git_dir / name for name in GIT_SCRATCH_FILES] + reports
                + [pinning.constraints_path(self.project)])

    def _resolution_files(self, names: list[str], via: list[str] | None, onto: str) -> list[Path]:
        """The recorded resolutions this rebase may write (:func:`resolutions.path`): ``--abort`` removes new ones."""
        return [resolutions.path(self.project, ref, name) for ref in [*(via or []), onto] for name in names]

    def _load(self) -> RebaseState:
        state = self.store.load()
        if Path(state.project) != self.project:
            raise UserError(f"the rebase in progress belongs to the project {state.project}; pass --project "
                            f"{state.project}", path=self.project)
        return state

    # -- checks ------------------------------------------------------------------------------------------------------

    def _check_drops(self, drops: dict[str, str], names: list[str]) -> None:
        for name, reason in drops.items():
            if name not in names:
                raise UserError(f"--drop {name}: not a patch still to apply (droppable: {', '.join(names) or 'none'}; "
                                 "to drop an earlier one, --abort and start again with --drop)",
                                 path=self.patches / "series")
            if not reason.strip():
                raise UserError(f"--drop {name} needs --reason \"...\" (it goes into the report)")

    def _resolve_steps(self, steps: list[str], old_base: str) -> list[str]:
        commits, previous, previous_ref = [], old_base, "the pinned base"
        for ref in steps:
            commit = self.repo.rev(ref)
            if commit is None:
                raise UserError(f"--onto/--via {ref}: no such tag or commit in the upstream repository",
                                path=self.repo.root)
            if commit == previous or not self.repo.is_ancestor(previous, commit):
                raise UserError(f"{ref} is not newer than {previous_ref} ({previous[:12]}): refs must be later "
                                "releases, in order", path=self.repo.root)
            commits.append(commit)
            previous, previous_ref = commit, ref
        return commits

    def _check_clean(self) -> None:
        operation = self.repo.operation_in_progress()
        if operation:
            raise UserError(f"a git operation is in progress ({operation}); finish or abort it first",
                            path=self.repo.root)
        dirty = self.repo.dirty_paths(untracked=True, submodules=True)
        if dirty:
            raise UserError(f"the upstream work tree is not clean ({len(dirty)} change(s), e.g. {dirty[0]}); "
                            "commit or discard them first", path=self.repo.root)

    def _check_patches_untouched(self, state: RebaseState) -> None:
        if state.phase == "finalize":
            return  # the final phase rewrites patches/ itself, from the backup
        if tree_hash(self.patches) != state.patches_hash:
            edited = ", ".join(changed_files(self.patches, self.store.backup)) or "modes"
            raise UserError(f"patches/ was edited by hand during the rebase ({edited}); undo the edit, or run "
                            "rebase.py --abort", path=self.patches)

    # -- the state machine -------------------------------------------------------------------------------------------

    def _drive(self, state: RebaseState) -> Outcome:
        while True:
            if state.phase == "replay":
                self._replay(state)
            elif state.phase == "apply":
                stopped = self._apply_step(state)
                if stopped is not None:
                    return stopped
            elif state.phase == "conflict":
                return self._stopped(state)
            elif state.phase == "finalize":
                return self._finalize(state)
            else:
                raise RuntimeError(f"unknown rebase phase {state.phase!r}")

    def _replay(self, state: RebaseState) -> None:
        pin = pinning.load_project_pin(self.project)
        commits = series.replay(self.repo, self.patches, state.old_base, pin)
        state.old_tip = commits[-1] if commits else state.old_base
        self.repo.set_ref(REF_OLD_TIP, state.old_tip)
        for p, commit in zip(state.patches, commits, strict=True):
            p.commit = commit
        state.phase, state.step, state.current, state.tip = "apply", 0, 0, state.step_commits[0]
        self.store.save(state)
        self.progress.line(f"replayed {len(commits)} patches on {state.old_base_ref}")
        fault("rebase.replay")

    def _apply_step(self, state: RebaseState) -> Stopped | None:
        """Move every remaining patch onto ``steps[step]``: runs of patches through :func:`batch.move_run` (in memory),
        a patch the fast path cannot move through :func:`pick.apply_patch` (git, with a work tree). The state is saved
        after each run and each patch, so a crash redoes at most one run (deterministically: same commit ids)."""
        onto = state.steps[state.step]
        assert state.tip is not None
        live = [p for p in state.patches[state.current:] if not p.gone]
        previous = state.old_base if state.step == 0 else state.step_commits[state.step - 1]
        ours = list(batch.commit_files(self.repo, [p.commit for p in live]).values())
        ids = batch.upstream_patch_ids(self.repo, previous, state.step_commits[state.step], ours)
        while state.current < len(state.patches):
            p = state.patches[state.current]
            if p.gone:
                state.current += 1
                continue
            if p.drop_reason:
                p.results.append(StepResult(onto, "dropped", detail=DROP_DETAIL))
                state.current += 1
                self.store.save(state)
                continue
            run = []
            for q in state.patches[state.current:]:
                if q.gone:
                    continue
                if q.drop_reason:
                    break
                run.append(q)
            moved = batch.move_run(self.repo, state.tip, [q.commit for q in run], [q.name for q in run], ids)
            fault("rebase.apply")
            if moved.moved:
                for q, m in zip(run, moved.moved, strict=False):
                    q.results.append(StepResult(onto, m.status, m.detail, m.upstream_commit))
                    q.new_commit = m.commit
                state.tip = moved.tip
                state.current = state.patches.index(run[len(moved.moved) - 1]) + 1
                self.store.save(state)
                self.progress.line(f"{onto}: moved {len(moved.moved)} patch(es) in memory")
                continue
            stopped = self._pick_one(state, p, onto, ids)
            if stopped is not None:
                return stopped
        for p in state.patches:
            if not p.gone:
                assert p.new_commit is not None
                p.commit, p.new_commit = p.new_commit, None
        if state.step + 1 < len(state.steps):
            state.step, state.current, state.tip = state.step + 1, 0, state.step_commits[state.step + 1]
        else:
            state.phase = "finalize"
        self.store.save(state)
        fault("rebase.step")
        return None

    def _pick_one(self, state: RebaseState, p: PatchState, onto: str, ids: dict[str, str]) -> Stopped | None:
        """The per-patch path: git apply (offsets), reverse check (upstreamed), 3-way cherry-pick or conflict."""
        assert state.tip is not None
        self.repo.reset_hard(state.tip)
        outcome = pick.apply_patch(self.repo, p.commit, ids, state.three_way)
        fault("rebase.apply")
        if outcome.status == "conflict":
            replayed = resolutions.replay(self.repo, self.project, onto, p.name, p.commit, state.tip)
            if replayed is not None:
                outcome = replayed
        if outcome.status == "conflict":
            state.phase, state.conflict_files, state.conflict_detail = "conflict", outcome.files, outcome.detail
            self.store.save(state)
            fault("rebase.conflict")
            return self._stopped(state)
        p.results.append(StepResult(onto, outcome.status, outcome.detail, outcome.upstream_commit))
        if outcome.commit:
            p.new_commit, state.tip = outcome.commit, outcome.commit
        state.current += 1
        self.store.save(state)
        self.progress.line(f"{onto}: {p.name}: {outcome.status}")
        return None

    def _settle_conflict(self, state: RebaseState) -> None:
        p = state.patches[state.current]
        onto = state.steps[state.step]
        assert state.tip is not None
        head = self.repo.rev("HEAD")
        if p.drop_reason:
            self.repo.reset_hard(state.tip)
            p.results.append(StepResult(onto, "dropped", detail=DROP_DETAIL, files=state.conflict_files))
        elif head != state.tip and self.repo.rev("HEAD^") == state.tip:
            # a previous --continue committed the resolution and was killed before saving the state
            p.results.append(StepResult(onto, "resolved", "conflict resolved by hand", files=state.conflict_files))
            p.new_commit, state.tip = head, head
        else:
            self._check_resolved(state)
            # A resolution to no change: the maintainer removed the patch's change (git rm / checkout of the new
            # base) -- their drop, not a finding about upstream; it needs a reason like --drop does, asked before
            # anything is committed so a missing reason leaves the resolution as it is.
            reason = self.drop_reason_for(p.name) if pick.resolution_is_empty(self.repo) else None
            new = pick.commit_resolution(self.repo, p.commit)
            if new is None:
                reason = reason or self.drop_reason_for(p.name)
                p.results.append(StepResult(onto, "dropped", DROP_DETAIL, files=state.conflict_files))
                p.drop_reason = reason
            else:
                p.results.append(StepResult(onto, "resolved", "conflict resolved by hand", files=state.conflict_files))
                p.new_commit, state.tip = new, new
                recorded = resolutions.record(self.repo, self.project, onto, p.name, p.commit, new)
                self.progress.line(f"{onto}: {p.name}: resolution recorded in {recorded}")
        fault("rebase.resolve")
        state.phase, state.current, state.conflict_files = "apply", state.current + 1, []
        self.store.save(state)

    def _check_resolved(self, state: RebaseState) -> None:
        changed = set(state.conflict_files)
        changed |= set(self.repo.run("diff", "--name-only", "HEAD").stdout.split())
        changed |= set(self.repo.run("ls-files", "--others", "--exclude-standard").stdout.split())
        for rel in sorted(changed):
            path = self.repo.root / rel
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

    def _stopped(self, state: RebaseState) -> Stopped:
        p = state.patches[state.current]
        return Stopped(p.name, state.steps[state.step], state.conflict_files, state.conflict_detail, self.repo.root)

    def _finalize(self, state: RebaseState) -> Finished:
        if state.finalize_started:
            copy_tree_exact(self.store.backup, self.patches)  # after a crash here: redo from the original bytes
        else:
            state.finalize_started = True
            self.store.save(state)
        kept = [p.name for p in state.patches if not p.gone]
        new_base = state.step_commits[-1]
        new_tip = state.tip or new_base
        self.repo.reset_hard(new_tip, clean=False)  # the tree was clean: only the files that differ are written
        self.repo.set_ref(REF_BASE, new_base)
        self.repo.set_ref(REF_APPLIED, new_tip)
        new_names = series.export(self.repo, self.patches, pinning.load_project_pin(self.project))
        if len(new_names) != len(kept):
            raise RuntimeError(f"export wrote {len(new_names)} patches for the {len(kept)} kept ones")
        renamed = dict(zip(kept, new_names, strict=True))
        changed = [old for old, new in renamed.items()
                   if old != new or (self.store.backup / old).read_bytes() != (self.patches / new).read_bytes()]
        fault("rebase.export")
        target = pinning.pin_target(self.repo, state.steps[-1], new_base)
        pinning.write_pin(self.project, target)
        if state.orig_gitlink is not None:
            pinning.set_gitlink(self.project, target.commit)
        fault("rebase.pin")
        assert state.old_tip is not None
        rdiff = report.range_diff(self.repo, state.old_base, state.old_tip, new_base, new_tip)
        pin = {"tag": target.tag, "commit": target.commit, "wheel_version": target.wheel_version}
        data = report.build(state, new_tip, renamed, rdiff, changed, pin, self._upstreamed_in(state))
        paths = self._write_reports(state, data)
        fault("rebase.report")
        self.repo.set_ref(REF_OLD_TIP, None)
        self.store.remove()
        return Finished(data, paths)

    def _upstreamed_in(self, state: RebaseState) -> dict[str, dict[str, str]]:
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
                tags = self.repo.run("tag", "--contains", result.upstream_commit, "--sort=version:refname",
                                     check=False).stdout.split()
                release = next((t for t in tags if t in state.steps), tags[0] if tags else release)
            commit = self.repo.rev(release)
            entry = {"release": release}
            if commit is not None:
                entry["git_version"] = pinning.pin_target(self.repo, release, commit).commit
            found[p.name] = entry
        return found

    def _write_reports(self, state: RebaseState, data: dict[str, Any]) -> list[Path]:
        markdown, text = report.to_markdown(data), report.to_json(data)
        default = self.repo.git_dir / REPORT_NAME
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
