# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The in-progress state of a rebase, kept inside the upstream repository's git directory.

Layout under ``<git-dir>/catch-rebase/``:

- ``state.json``   -- :class:`RebaseState`, rewritten atomically (write to a temporary file, ``os.replace``) after every
  transition, so a crash, Ctrl-C or ``kill -9`` at any point leaves the last complete transition on disk;
- ``backup/``      -- a byte-exact copy of the project's ``patches/`` (series, manifest, patch files) taken before
  anything changed, so ``--abort`` restores it and ``--continue`` can redo the final export from scratch.

A lock file ``<git-dir>/catch-rebase.lock`` is held with ``flock`` while a ``rebase.py`` process works; the kernel
releases it when the process dies, so a killed run never blocks the next one (unlike a stale ``git am`` directory,
``.git/rebase-apply``, which blocks every later ``git am`` until it is removed).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from catch_tools.errors import UserError

STATE_DIR = "catch-rebase"
STATE_FILE = "state.json"
LOCK_FILE = "catch-rebase.lock"
FORMAT = 1

#: Statuses a patch can end with (the report's vocabulary), in increasing order of attention needed.
STATUSES = ("clean", "offset", "3way", "resolved", "upstreamed", "dropped")


@dataclass
class StepResult:
    """What happened to one patch in one step (one target release)."""

    onto: str  # the step's target ref as given (tag or commit)
    status: str  # one of STATUSES
    detail: str = ""  # offsets, upstream commit, drop reason...
    upstream_commit: str | None = None  # for "upstreamed": the upstream commit with the same patch-id, when found
    files: list[str] = field(default_factory=list)  # for conflicts: the files that conflicted


@dataclass
class PatchState:
    """One input patch: its name in ``series``, its commit on the current step's old base, and its history."""

    name: str
    commit: str  # the patch as a commit on the previous step's base (the replay on the old base for step 0)
    results: list[StepResult] = field(default_factory=list)
    new_commit: str | None = None  # the patch as a commit on the current step's base, once applied
    drop_reason: str | None = None  # set by --drop before the patch is applied

    @property
    def final_status(self) -> str:
        """The status needing most attention over all steps ("clean" when all steps were clean)."""
        if not self.results:
            return "pending"
        return max((r.status for r in self.results), key=STATUSES.index)

    @property
    def gone(self) -> bool:
        """True once the patch left the series (upstreamed or dropped)."""
        return any(r.status in ("upstreamed", "dropped") for r in self.results)


@dataclass
class RebaseState:
    """Everything ``--continue``, ``--abort`` and ``status`` need; JSON-serialisable.

    Phases: ``replay`` (putting the series on the old base), ``apply`` (moving patches onto ``steps[step]``),
    ``conflict`` (stopped at ``patches[current]``, waiting for the maintainer), ``finalize`` (exporting, pinning,
    reporting).
    """

    project: str
    upstream: str
    series_names: list[str]
    patches_hash: str  # hash of patches/ at start (detects hand edits during the rebase)
    orig_head_ref: str | None
    orig_head: str | None
    orig_refs: dict[str, str | None]
    orig_gitlink: str | None
    orig_absent_dirs: list[str]  # directories under the git dir the engine may create; --abort removes them if empty
    orig_files: dict[str, str | None]  # absolute path -> text or None: files --abort puts back (ORIG_HEAD, reports)
    old_base: str  # commit of the current pin in the upstream repository
    old_base_ref: str  # the pin tag or commit as stated in the manifest
    steps: list[str]  # target refs as given, last is --onto
    step_commits: list[str]  # their commits
    three_way: bool
    report_path: str | None
    phase: str = "replay"
    step: int = 0
    current: int = 0  # index into patches of the next patch to apply in the current step
    tip: str | None = None  # commit the next patch goes on (the step's base plus the patches applied so far)
    patches: list[PatchState] = field(default_factory=list)
    old_tip: str | None = None  # the series replayed on the old base (range-diff's left side)
    conflict_files: list[str] = field(default_factory=list)
    conflict_detail: str = ""
    finalize_started: bool = False  # set before the final phase first writes patches/ (a resume restores the backup)
    format: int = FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> RebaseState:
        data: dict[str, Any] = json.loads(text)
        patches = [PatchState(**{**p, "results": [StepResult(**r) for r in p["results"]]}) for p in data.pop("patches")]
        return cls(**data, patches=patches)


class StateStore:
    """Reads, writes and removes the state directory of one upstream git directory."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.dir = git_dir / STATE_DIR
        self.file = self.dir / STATE_FILE
        self.backup = self.dir / "backup"

    def exists(self) -> bool:
        return self.file.is_file()

    def load(self) -> RebaseState:
        """The saved state. Raises UserError when there is none or it is unreadable."""
        try:
            return RebaseState.from_json(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError("no rebase in progress (start one with --onto REF)", path=self.dir) from None
        except (ValueError, TypeError, KeyError) as err:
            raise UserError(f"unreadable rebase state ({err}); remove the directory to start over",
                            path=self.file) from None

    def save(self, state: RebaseState) -> None:
        """Atomically replace ``state.json`` (fsync'd temporary file + ``os.replace``)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(state.to_json())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.file)

    def remove(self) -> None:
        """Delete the state directory (rename first, so a crash here never leaves a half-deleted state)."""
        if self.dir.exists():
            trash = self.git_dir / f"{STATE_DIR}.done"
            shutil.rmtree(trash, ignore_errors=True)
            os.replace(self.dir, trash)
            shutil.rmtree(trash, ignore_errors=True)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the per-repository lock; a concurrently running ``rebase.py`` gets a one-line UserError."""
        path = self.git_dir / LOCK_FILE
        with open(path, "a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as err:
                if err.errno in (errno.EAGAIN, errno.EACCES):
                    raise UserError("another rebase.py is running in this repository", path=path) from None
                raise
            try:
                yield
            finally:
                if not self.exists():
                    path.unlink(missing_ok=True)  # no rebase left: leave no trace in the git directory
                fcntl.flock(fh, fcntl.LOCK_UN)


def tree_hash(directory: Path) -> str:
    """SHA-256 over the relative paths, modes and bytes of every file under ``directory`` (sorted)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(directory).as_posix()
        digest.update(rel.encode() + b"\0" + oct(path.lstat().st_mode).encode() + b"\0")
        digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def changed_files(directory: Path, backup: Path) -> list[str]:
    """Relative paths that differ between ``directory`` and ``backup`` (added, removed or edited)."""
    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    now, before = files(directory), files(backup)
    return sorted(k for k in now.keys() | before.keys() if now.get(k) != before.get(k))


def copy_tree_exact(src: Path, dest: Path) -> None:
    """Replace ``dest`` by a copy of ``src`` keeping bytes, modes and timestamps (``shutil.copy2``).

    The copy is built next to ``dest`` and swapped in with renames, so a crash leaves either the old or the new tree
    (plus at most a leftover ``.catch-rebase-*`` sibling that the next call removes).
    """
    staging = dest.parent / f".catch-rebase-new-{dest.name}"
    old = dest.parent / f".catch-rebase-old-{dest.name}"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(src, staging, symlinks=True, copy_function=shutil.copy2)
    shutil.copystat(src, staging)
    if dest.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(dest, old)
    os.replace(staging, dest)
    shutil.rmtree(old, ignore_errors=True)
