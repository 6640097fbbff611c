# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The crash-safe change of a git work tree that ``apply``, ``reverse`` and the conflict workflow of ``export`` make.

A :class:`Transaction` is the one way the patch engine moves HEAD, index, work tree and ``refs/patches/*``:

1. **snapshot**: HEAD, its branch and ``refs/patches/*`` as they are (when the transaction is made);
2. **begin**: the snapshot is written to ``<git-dir>/catch-patches/state.json`` (atomically) and
   ``refs/patches/apply-in-progress`` set to the old HEAD;
3. **move**: index and work tree, then HEAD, move to the new commit (:meth:`Transaction.move_head`);
4. **finish**: the new ``refs/patches/*`` are set and the in-progress ref deleted in one ref transaction, then the
   state file removed -- or, on any exception between 2 and 4, **restore**: the snapshot is put back.

A run killed with ``kill -9`` between 2 and 4 leaves the state file; the next run finds it (:func:`recover`) and
restores the recorded HEAD, index and work tree before doing anything else. ``apply --stop-at-conflict`` leaves its
transaction open on purpose (state ``stopped``) until ``export`` or ``reverse`` ends it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType

from catch_tools.errors import UserError
from catch_tools.faults import fault
from catch_tools.git import Repo
from catch_tools.patches.gittree import REF_APPLIED, REF_BASE, REF_IN_PROGRESS


@dataclass
class State:
    """What ``state.json`` records while an operation changes the tree."""

    operation: str  # "apply", "apply-am", "stopped", "reverse"
    orig_head: str
    orig_branch: str | None
    orig_refs: dict[str, str | None]
    pid: int
    touched: list[str] = field(default_factory=list)
    patch: str | None = None  # the patch stopped at (operation "stopped")
    patch_file: str | None = None


def state_dir(repo: Repo) -> Path:
    """``<git-dir>/catch-patches``: the transaction's state file and the engine's scratch files."""
    return repo.git_dir / "catch-patches"


class Transaction:
    """One crash-safe change of ``repo`` (see the module doc). ``operation`` names it in the state file; ``touched``
    lists the paths it may create (a restore removes those the old tree lacks).

    Usage::

        tx = Transaction(repo, "apply", touched)   # snapshot
        with tx:                                   # begin; restore on an exception
            tx.move_head(new)
            tx.finish({REF_BASE: base, REF_APPLIED: new})
    """

    def __init__(self, repo: Repo, operation: str, touched: list[str] | None = None, *,
                 state: State | None = None) -> None:
        self.repo = repo
        if state is None:
            head, base, applied = repo.revs("HEAD", REF_BASE, REF_APPLIED)
            assert head is not None
            state = State(operation, head, repo.head_ref(), {REF_BASE: base, REF_APPLIED: applied}, os.getpid(),
                          touched or [])
        self.state = state
        self.open = False

    @classmethod
    def pending(cls, repo: Repo) -> Transaction | None:
        """The transaction a run left open (interrupted, or stopped at a conflict), or None.

        Raises:
            UserError: the state file is corrupt (the message says how to recover by hand).
        """
        path = state_dir(repo) / "state.json"
        try:
            state = State(**json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError):
            raise UserError(f"corrupt state file: remove it and run `git -C {repo.root} reset --hard` "
                            "to a known commit", path=str(path)) from None
        tx = cls(repo, state.operation, state=state)
        tx.open = True
        return tx

    def _write(self) -> None:
        """Record the state atomically, then the ``apply-in-progress`` ref."""
        directory = state_dir(self.repo)
        directory.mkdir(exist_ok=True)
        tmp = directory / "state.json.tmp"
        tmp.write_text(json.dumps(asdict(self.state), indent=1), encoding="utf-8")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        tmp.replace(directory / "state.json")
        self.repo.set_ref(REF_IN_PROGRESS, self.state.orig_head)

    def begin(self) -> None:
        """Write the snapshot (step 2 of the module doc)."""
        self._write()
        self.open = True

    def move_head(self, new: str, *, reset: bool = False) -> None:
        """Check out commit ``new`` like a fast-forward: index and work tree follow (two-tree ``read-tree -m -u``,
        which refuses to overwrite untracked files before touching anything; ``reset``: ``read-tree --reset``, which
        discards local changes), then HEAD (or the branch HEAD names) moves."""
        if reset:
            self.repo.run("read-tree", "--reset", "-u", new)
        else:
            self.repo.run("read-tree", "-m", "-u", self.repo.head() or new, new)
        fault("patches.move-head")
        self.repo.run("update-ref", "-m", "catch patches", "HEAD", new)

    def finish(self, refs: dict[str, str | None] | None = None) -> None:
        """End the transaction: ``refs`` are set in the ref transaction that deletes ``apply-in-progress``, then the
        state file goes."""
        self.repo.set_refs({**(refs or {}), REF_IN_PROGRESS: None})
        with contextlib.suppress(FileNotFoundError):
            (state_dir(self.repo) / "state.json").unlink()
        self.open = False

    def stop(self, patch: str, patch_file: str) -> None:
        """Leave the transaction open at a conflict in ``patch`` for the maintainer (``apply --stop-at-conflict``);
        ``export`` finishes it, ``reverse`` or the next ``apply --force`` restores it."""
        self.state.operation, self.state.patch, self.state.patch_file = "stopped", patch, patch_file
        self._write()
        self.open = False

    def restore(self) -> None:
        """Put HEAD, branch, index, work tree and ``refs/patches/*`` back to the snapshot and drop the state."""
        repo, state = self.repo, self.state
        for stale in ("rebase-apply", "rebase-merge"):
            shutil.rmtree(repo.git_dir / stale, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            (repo.git_dir / "index.lock").unlink()
        before = set(repo.out("ls-tree", "-r", "--name-only", "-z", state.orig_head).split("\0"))
        if state.orig_branch:
            repo.run("symbolic-ref", "HEAD", state.orig_branch)
            repo.run("update-ref", state.orig_branch, state.orig_head)
        else:
            repo.run("update-ref", "--no-deref", "HEAD", state.orig_head)
        repo.run("read-tree", "--reset", "-u", state.orig_head)
        for path in state.touched:
            # Files a killed run created that the restored tree does not have (read-tree only removes indexed files).
            p = repo.root / path
            if path not in before and (p.is_file() or p.is_symlink()):
                p.unlink()
        self.finish(state.orig_refs)

    def __enter__(self) -> Transaction:
        self.begin()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None and self.open:
            self.restore()


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(repo: Repo, *, force: bool = False) -> str | None:
    """Finish what an interrupted run left behind. Returns a note for the user, or None if nothing was pending.

    * a run killed mid-way (state ``apply``/``apply-am``/``reverse``, its process gone): restore the recorded state;
    * a patch stopped at a conflict (``apply --stop-at-conflict``): refused unless ``force`` (then aborted);
    * a stale ``git am``/rebase not started by us: aborted (``git am --abort``/``git rebase --abort``).

    Raises:
        UserError: another run is still active (its pid is alive), or a stopped conflict without ``force``.
    """
    tx = Transaction.pending(repo)
    if tx is not None:
        state = tx.state
        if state.operation == "stopped" and not force:
            raise UserError(f"patch {state.patch} is stopped at a conflict: resolve it and run "
                            f"`git -C {repo.root} am --continue`, then export; or discard with --force "
                            "(or `reverse`)", path=state.patch_file)
        if state.operation != "stopped" and _pid_alive(state.pid):
            raise UserError(f"another apply (pid {state.pid}) is running on this tree", path=str(repo.root))
        tx.restore()
        what = "discarded the conflict of" if state.operation == "stopped" else "recovered from an interrupted"
        return f"{what} {state.operation}: restored HEAD {state.orig_head[:12]}"
    op = repo.operation_in_progress()
    if op in ("am", "rebase"):
        repo.run(op, "--abort", check=False)
        for stale in ("rebase-apply", "rebase-merge"):
            shutil.rmtree(repo.git_dir / stale, ignore_errors=True)
        return f"aborted a stale git {op} in {repo.root}"
    if op is not None:
        raise UserError(f"a git {op} is in progress: finish or abort it first", path=str(repo.root))
    if repo.rev(REF_IN_PROGRESS) is not None:
        repo.set_ref(REF_IN_PROGRESS, None)
    return None
