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

from collections.abc import Callable
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.faults import fault
from catch_tools.patches.gittree import REF_APPLIED, REF_BASE, resolve_base
from catch_tools.progress import Reporter
from catch_tools.rebase import abort, batch, cause, checks, pick, pinning, proving, resolutions, series
from catch_tools.rebase.finish import REPORT_NAME, finalize
from catch_tools.rebase.outcome import Outcome, Stopped
from catch_tools.rebase.state import REF_OLD_TIP, PatchState, RebaseState, StepResult, copy_tree_exact, tree_hash
from catch_tools.rebase.workspace import Workspace
from catch_tools.userfiles import read_regular_file, report_files, writable_report_files

#: Where a crash is injected (``CATCH_FAULT=rebase.<point>``, :mod:`catch_tools.faults`): state saved at start;
#: series replayed on the old base; after a run/patch was applied but before its state was saved; conflict saved;
#: resolution committed but not saved; step done; export written; pin written; report written (state not yet removed).
CRASH_POINTS = ("start", "replay", "apply", "conflict", "resolve", "step", "export", "pin", "report")
#: A dropped patch's step detail; its reason is kept once, in ``PatchState.drop_reason`` (the report's "reason")
DROP_DETAIL = "dropped by the maintainer"
#: Files git rewrites while we commit; ``--abort`` puts their old content back (with the report files).
GIT_SCRATCH_FILES = ("ORIG_HEAD", "COMMIT_EDITMSG")


def _read_or_none(path: Path) -> str | None:
    """The text of a file ``--abort`` puts back, or None when there is none; bytes that are not UTF-8 are kept
    (``surrogateescape``: JSON stores them as escapes, :func:`catch_tools.rebase.abort.undo` writes the same bytes
    back).

    Raises:
        UserError: ``path`` is a directory, a FIFO, socket or device (never opened for reading).
    """
    try:
        return read_regular_file(path, "a regular file the rebase may rewrite").decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UserError("is a directory, but the rebase writes a file here", path=path) from None


class Rebase:
    """One upstream repository and one project checkout.

    Args:
        project: the Catch checkout root (holds ``patches/``; its git index holds the ``pytorch`` gitlink if any).
        upstream: the upstream PyTorch work tree (the ``pytorch/`` submodule, a full clone, or the wheel-built repo).
        progress: the display told one line per event (patch applied, step done); default: the log only.
    """

    def __init__(self, project: Path, upstream: Path, progress: Reporter | None = None) -> None:
        self.ws = Workspace.open(project, upstream)
        ws = self.ws
        self.project, self.patches, self.repo, self.store = ws.project, ws.patches, ws.repo, ws.store
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
              drops: dict[str, str] | None = None, report_path: Path | None = None, prove: str = "all") -> Outcome:
        """Begin a rebase of the series onto ``onto`` (through ``via`` first); ``prove``: which patches prove they
        are still needed on the new base (:data:`proving.MODES`).

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
            checks.check_drops(self.ws, drops, names)
            if report_path is not None:
                writable_report_files(report_path.resolve(), "--report")
            old_base, old_ref = resolve_base(self.repo, pinning.load_project_pin(self.project),
                                             hint="fetch it or pass --source DIR")
            steps = [*(via or []), onto]
            commits = checks.resolve_steps(self.ws, steps, old_base)
            checks.check_clean(self.ws)
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
                report_path=None if report_path is None else str(report_path.resolve()), prove=prove,
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
                abort.undo(self.ws, state)  # the series does not apply to its own base: leave everything as it was
                raise
            return self._drive(state)

    def resume(self, drops: dict[str, str] | None = None, reason: str | None = None,
               prove: str | None = None) -> Outcome:
        """``--continue`` (and ``--drop`` during a rebase): go on from the saved state.

        In a conflict, the maintainer's resolution is committed as the patch (status ``resolved``), or the patch is
        dropped when ``drops`` names it. After a crash, the interrupted transition is redone.

        Raises:
            UserError: nothing in progress; ``patches/`` edited since the start; conflict markers or ``*.rej`` files
                left; a drop naming no remaining patch or without a reason.
        """
        self._pending_reason = reason
        with self.store.lock():
            state = self.ws.load()
            checks.check_patches_untouched(self.ws, state)
            drops = dict(drops or {})
            first = state.current if state.phase in ("apply", "conflict") else len(state.patches)
            remaining = [p.name for p in state.patches[first:] if not p.gone]
            checks.check_drops(self.ws, drops, remaining)
            state.prove = prove or state.prove
            for p in state.patches:
                if p.name in drops:
                    p.drop_reason = drops[p.name]
            if state.phase == "conflict":
                self._settle_conflict(state)
            return self._drive(state)

    def abort(self) -> list[str]:
        """``--abort``: :func:`catch_tools.rebase.abort.abort` (returns its warnings)."""
        return abort.abort(self.ws)

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
                return finalize(self.ws, state, self.progress.line)
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
            previous = state.old_base if state.step == 0 else state.step_commits[state.step - 1]
            state.conflict_causes = cause.find(self.repo, previous, state.step_commits[state.step], p.commit,
                                               outcome.files)
            state.conflict_obsolete = proving.passes_without(self.repo, state, self.store.backup, self.project,
                                                             p.name)
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
            checks.check_resolved(self.ws, state)
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
        p.results[-1].causes = state.conflict_causes
        fault("rebase.resolve")
        state.phase, state.current, state.conflict_files = "apply", state.current + 1, []
        state.conflict_causes, state.conflict_obsolete = [], ""
        self.store.save(state)

    def _stopped(self, state: RebaseState) -> Stopped:
        p = state.patches[state.current]
        onto = state.steps[state.step]
        reason = proving.drop_reason(state.conflict_obsolete, onto) if state.conflict_obsolete else ""
        return Stopped(p.name, onto, state.conflict_files, state.conflict_detail, self.repo.root,
                       state.conflict_causes, reason)
