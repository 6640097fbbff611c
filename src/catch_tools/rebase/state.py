# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The in-progress state of a rebase, kept inside the upstream repository's git directory.

Layout under ``<git-dir>/catch-rebase/``:

- ``state.json``   -- :class:`RebaseState`, rewritten atomically (write to a temporary file, ``os.replace``) after every
  transition, so a crash, Ctrl-C or ``kill -9`` at any point leaves the last complete transition on disk; it is checked
  when read (:meth:`RebaseState.from_json`): a damaged or hand-edited state is one line, never a traceback;
- ``start.json``   -- the state as it was when the rebase started, written once before ``state.json``: everything
  ``--abort`` restores is recorded there, so ``--abort`` works even when ``state.json`` is damaged;
- ``backup/``      -- a byte-exact copy of the project's ``patches/`` (series, manifest, patch files) taken before
  anything changed, so ``--abort`` restores it and ``--continue`` can redo the final export from scratch.

A lock file ``<git-dir>/catch-rebase.lock`` is held with ``flock`` while a ``rebase.py`` process works; the kernel
releases it when the process dies, so a killed run never blocks the next one (unlike a stale ``git am`` directory,
``.git/rebase-apply``, which blocks every later ``git am`` until it is removed).
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from catch_tools.errors import UserError
from catch_tools.rebase.cause import Cause
from catch_tools.userfiles import read_utf8_file, write_atomic

#: The series replayed on the old base (range-diff's left side), kept reachable while the rebase runs.
REF_OLD_TIP = "refs/catch-rebase/old-tip"
STATE_DIR = "catch-rebase"
STATE_FILE = "state.json"
START_FILE = "start.json"
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
    causes: list[Cause] = field(default_factory=list)  # for conflicts: the upstream changes behind them


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
    conflict_causes: list[Cause] = field(default_factory=list)  # the upstream changes behind the conflict
    conflict_obsolete: str = ""  # the conflicting patch's test when it passes on the step's base without the patch
    prove: str = "all"  # which patches prove themselves on the new base: all, conflicts, none (rebase.proving)
    finalize_started: bool = False  # set before the final phase first writes patches/ (a resume restores the backup)
    format: int = FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> RebaseState:
        """Parse and check a saved state: every key of the right type (no unknown, no missing one), and values a
        rebase can be in (see :meth:`problem`).

        Raises:
            ValueError: the first thing wrong, in one line (``json.JSONDecodeError`` for a syntax error).
        """
        state = _convert(json.loads(text), cls, "the state")
        why = state.problem()
        if why:
            raise ValueError(why)
        return state

    def problem(self) -> str | None:
        """Why this state is not one a rebase can be in (a hand edit, a damaged file), or None."""
        if self.format != FORMAT:
            return f"format is {self.format}, this rebase.py reads format {FORMAT}"
        if self.phase not in PHASES:
            return f"phase {self.phase!r} is not one of {', '.join(PHASES)}"
        if not self.steps or len(self.step_commits) != len(self.steps):
            return (f"steps ({len(self.steps)}) and step_commits ({len(self.step_commits)}) must be the same, "
                    "non-zero count")
        if not 0 <= self.step < len(self.steps):
            return f"step is {self.step}, but there are {len(self.steps)} step(s)"
        if [p.name for p in self.patches] != self.series_names:
            return "patches do not match series_names"
        last = len(self.patches) - (1 if self.phase == "conflict" else 0)
        if not 0 <= self.current <= last:
            return f"current is {self.current}, but the series has {len(self.patches)} patch(es)"
        if self.phase in ("apply", "conflict") and self.tip is None:
            return f"phase {self.phase} needs a tip commit"
        commits = [self.orig_head, self.orig_gitlink, self.old_base, self.tip, self.old_tip, *self.step_commits,
                   *self.orig_refs.values(), *(c for p in self.patches for c in (p.commit or None, p.new_commit)),
                   *(r.upstream_commit for p in self.patches for r in p.results)]
        bad = next((c for c in commits if c is not None and not _COMMIT.match(c)), None)
        if bad is not None:
            return f"{bad!r} is not a commit id"
        status = next((r.status for p in self.patches for r in p.results if r.status not in STATUSES), None)
        if status is not None:
            return f"patch status {status!r} is not one of {', '.join(STATUSES)}"
        if self.orig_head_ref is not None and not self.orig_head_ref.startswith("refs/"):
            return f"orig_head_ref {self.orig_head_ref!r} is not a ref"
        paths = [self.project, self.upstream, *self.orig_files, *self.orig_absent_dirs]
        relative = next((p for p in paths if not Path(p).is_absolute()), None)
        if relative is not None:
            return f"{relative!r} is not an absolute path"
        return None


#: The phases of :class:`RebaseState`, in order.
PHASES = ("replay", "apply", "conflict", "finalize")
_COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")  # SHA-1 or SHA-256 object id


def _convert(value: Any, hint: Any, where: str) -> Any:
    """``value`` (parsed JSON) as the type ``hint`` of a state field: dataclasses from objects with exactly their
    keys, lists, string-keyed dicts, ``X | None``, str, int (not bool) and bool. Raises ValueError naming ``where``."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise ValueError(f"{where} must be a JSON object, got {type(value).__name__}")
        fields = {f.name: f for f in dataclasses.fields(hint)}
        unknown = sorted(set(value) - set(fields))
        if unknown:
            raise ValueError(f"{where} has an unknown key {unknown[0]!r}")
        hints = typing.get_type_hints(hint)
        kwargs = {}
        for name, spec in fields.items():
            if name in value:
                kwargs[name] = _convert(value[name], hints[name], f"{name}" if where == "the state" else
                                        f"{where}.{name}")
            elif spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
                raise ValueError(f"{where} has no key {name!r}")
        return hint(**kwargs)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        return _convert(value, next(a for a in args if a is not type(None)), where)
    if origin is list and isinstance(value, list):
        return [_convert(item, args[0], f"{where}[{i}]") for i, item in enumerate(value)]
    if origin is dict and isinstance(value, dict):
        return {key: _convert(item, args[1], f"{where}[{key!r}]") for key, item in value.items()}
    if hint in (str, bool) and isinstance(value, hint) or hint is int and type(value) is int:
        return value
    want = {str: "a string", int: "an integer", bool: "true or false", list: "a list", dict: "an object"}
    raise ValueError(f"{where} must be {want.get(origin or hint, str(hint))}, got {json.dumps(value)[:40]}")


class StateUnreadable(UserError):
    """``state.json`` (or the start record) is damaged or was edited into a state no rebase is in; ``why`` says how,
    without advice."""

    why = ""


class StateStore:
    """Reads, writes and removes the state directory of one upstream git directory."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.dir = git_dir / STATE_DIR
        self.file = self.dir / STATE_FILE
        self.start_file = self.dir / START_FILE
        self.backup = self.dir / "backup"

    def exists(self) -> bool:
        """Whether a rebase is in progress: ``state.json`` exists (readable or not: :meth:`load` tells)."""
        return os.path.lexists(self.file)

    def load(self) -> RebaseState:
        """The saved state.

        Raises:
            UserError: no rebase in progress.
            StateUnreadable: the file is not a regular file, not UTF-8 or not JSON (with its line), or describes no
                state a rebase can be in (a hand edit: an unknown phase, an index past the series...); the message
                says that ``--abort`` still undoes the rebase (from the start record).
        """
        if not self.exists():
            raise UserError("no rebase in progress (start one with --onto REF)", path=self.dir)
        return self._read(self.file, "run rebase.py --abort to undo the rebase (it restores from the start record)")

    def load_start(self) -> RebaseState:
        """The state as saved when the rebase started (``start.json``, written once): all ``--abort`` needs.

        Raises:
            StateUnreadable: missing, or as :meth:`load`.
        """
        return self._read(self.start_file, "")

    def _read(self, path: Path, advice: str) -> RebaseState:
        line = None
        try:
            return RebaseState.from_json(read_utf8_file(path, "a rebase state file"))
        except UserError as err:
            line, why = err.line, err.message
        except json.JSONDecodeError as err:
            line, why = err.lineno, f"not JSON: {err.msg}"
        except (OSError, ValueError, RecursionError) as err:
            why = getattr(err, "strerror", None) or str(err) or type(err).__name__
        unreadable = StateUnreadable(f"unreadable rebase state: {why}" + (f"; {advice}" if advice else ""),
                                     path=path, line=line)
        unreadable.why = why
        raise unreadable

    def save_start(self, state: RebaseState) -> None:
        """Write the start record ``start.json`` (atomically, once, before ``state.json``)."""
        self._write(self.start_file, state)

    def save(self, state: RebaseState) -> None:
        """Atomically replace ``state.json`` (fsync'd temporary file + ``os.replace``)."""
        self._write(self.file, state)

    def _write(self, path: Path, state: RebaseState) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, state.to_json())

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
