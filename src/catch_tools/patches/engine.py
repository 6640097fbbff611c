# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Apply a parsed series to a virtual copy of a tree, in memory: the one engine behind ``check``, ``apply`` (git
fast path) and ``apply --target-dir``.

A :class:`TreeReader` gives the base contents (a git commit or a plain directory); :func:`simulate` applies each patch
on top of the previous ones and returns, per patch, the resulting file states or the reasons it failed. Nothing is
written anywhere.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from catch_tools.patches.hunks import HunkResult, apply_hunks
from catch_tools.patches.model import MODE_EXEC, MODE_FILE, MODE_LINK, FileChange, Patch, PathClass
from catch_tools.patches.safefs import Root, UnsafePath

#: A file state: (git mode, contents) -- None means "absent".
FileState = tuple[str, bytes]


class TreeReader(Protocol):
    """Read-only access to the base tree."""

    def exists(self, path: str) -> bool: ...

    def read(self, path: str) -> FileState: ...


class DirReader:
    """A plain directory as a tree (an unpacked wheel, a source tarball), read through
    :class:`~catch_tools.patches.safefs.Root`: nothing outside ``root`` is ever read.

    A path that goes through a symlink, or is itself a symlink, raises
    :class:`~catch_tools.patches.safefs.UnsafePath` (the engine reports it as the patch's failure): an overlay
    never patches through a symlink. A directory counts as absent (creating a file there fails when writing).
    Call :meth:`close` (or use ``with``) to release the directory descriptor.
    """

    def __init__(self, root: Path):
        self.root = root
        self.fs = Root(root)

    def close(self) -> None:
        self.fs.close()

    def __enter__(self) -> DirReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def exists(self, path: str) -> bool:
        st = self.fs.lstat(path)
        if st is None or stat.S_ISDIR(st.st_mode):
            return False
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePath(path, "is a symbolic link in the target directory (an overlay never patches through "
                             "a symlink)")
        return stat.S_ISREG(st.st_mode)

    def read(self, path: str) -> FileState:
        st = self.fs.lstat(path)
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise UnsafePath(path, "is a symbolic link in the target directory (an overlay never patches through "
                             "a symlink)")
        mode = MODE_EXEC if st is not None and st.st_mode & stat.S_IXUSR else MODE_FILE
        return mode, self.fs.read_bytes(path)


@dataclass
class FileProblem:
    """Why a file change of a patch failed: ``message``, the patch ``line`` it refers to."""

    path: str
    message: str
    line: int


@dataclass
class PatchOutcome:
    """The result of applying one patch in the simulation.

    ``changes`` maps each touched path to its new state (None = deleted); it is empty when the patch failed.
    ``hunks`` holds every hunk's :class:`HunkResult` per path; ``skipped`` lists unshipped paths left out.
    """

    patch: Patch
    changes: dict[str, FileState | None] = field(default_factory=dict)
    hunks: list[tuple[str, HunkResult]] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


class VirtualTree:
    """The base tree plus the changes of the patches applied so far."""

    def __init__(self, reader: TreeReader):
        self.reader = reader
        self.overlay: dict[str, FileState | None] = {}

    def get(self, path: str) -> FileState | None:
        if path in self.overlay:
            return self.overlay[path]
        return self.reader.read(path) if self.reader.exists(path) else None

    def exists(self, path: str) -> bool:
        return self.get(path) is not None if path in self.overlay else self.reader.exists(path)


def _apply_change(tree: VirtualTree, change: FileChange, out: PatchOutcome, pending: dict[str, FileState | None],
                  report_fuzz: bool) -> None:
    """Apply one file change onto ``pending`` (or record its problems in ``out``); a path that goes through a
    symlink (of the tree, of an earlier patch, or on disk) is refused as ``git apply`` refuses it."""
    def current(path: str) -> FileState | None:
        return pending[path] if path in pending else tree.get(path)

    try:
        for path in change.paths:
            parts = path.split("/")
            for i in range(1, len(parts)):
                prefix = "/".join(parts[:i])
                state = current(prefix)
                if state is not None and state[0] == MODE_LINK:
                    raise UnsafePath(path, f"affected file is beyond a symbolic link ({prefix})")
        _apply_change_checked(tree, change, out, pending, report_fuzz, current)
    except UnsafePath as err:
        where = str(err) if err.path in change.paths else f"{change.path}: {err}"
        out.problems.append(FileProblem(change.path, f"{where}; refusing to patch through a symlink",
                                        change.patch_line))


def _apply_change_checked(tree: VirtualTree, change: FileChange, out: PatchOutcome,
                          pending: dict[str, FileState | None], report_fuzz: bool,
                          current: Callable[[str], FileState | None]) -> None:
    def fail(message: str, line: int | None = None) -> None:
        out.problems.append(FileProblem(change.path, message, line or change.patch_line))

    if change.binary:
        fail(f"{change.path}: binary change: the in-memory engine does not apply binary patches (use git mode)")
        return
    if change.old_path is None or (change.maybe_new and current(change.old_path) is None):  # creation
        assert change.new_path is not None
        if change.old_path is None and current(change.new_path) is not None:
            fail(f"{change.new_path}: file to create already exists")
            return
        content = b"".join(b"".join(h.new_lines) for h in change.hunks)
        pending[change.new_path] = (change.new_mode or MODE_FILE, content)
        for h in change.hunks:
            out.hunks.append((change.new_path, HunkResult(h, "ok", 1)))
        return
    state = current(change.old_path)
    if state is None:
        fail(f"{change.old_path}: no such file in the tree")
        return
    mode, content = state
    new_content, results = apply_hunks(content, change.hunks, allow_fuzz_report=report_fuzz)
    out.hunks.extend((change.old_path, r) for r in results)
    for r in results:
        if r.status == "fuzz":
            fail(f"{change.old_path}: hunk {r.hunk.header} only applies with fuzz {r.fuzz} at line {r.line} "
                 "(git applies without fuzz: refresh the patch or use --3way)", r.hunk.patch_line)
        elif r.status == "fail":
            fail(f"{change.old_path}: hunk {r.hunk.header} does not apply (its context/removed lines are not in "
                 "the file)", r.hunk.patch_line)
    if new_content is None:
        return
    if change.new_path is None:  # deletion: the patch must remove everything (git: "removal patch leaves contents")
        if new_content:
            fail(f"{change.old_path}: deletion patch leaves file contents")
            return
        pending[change.old_path] = None
        return
    new_mode = change.new_mode or mode
    if change.new_path != change.old_path:
        if current(change.new_path) is not None:
            fail(f"{change.new_path}: rename/copy target already exists")
            return
        if not change.is_copy:
            pending[change.old_path] = None
    pending[change.new_path] = (new_mode, new_content)


def simulate(patches: Iterable[Patch], reader: TreeReader, *, report_fuzz: bool = False,
             skip_class: Callable[[str], PathClass | None] | None = None,
             on_patch: Callable[[PatchOutcome], None] | None = None) -> list[PatchOutcome]:
    """Apply ``patches`` in order onto ``reader``'s tree, in memory.

    A failing patch contributes no change (later patches are tried against the tree without it, so ``check`` can
    report every failure). ``skip_class(path)`` may return a class name to leave a path out (recorded in
    ``skipped``); ``on_patch`` is called after each patch (progress bars).

    Returns one :class:`PatchOutcome` per patch.
    """
    tree = VirtualTree(reader)
    outcomes: list[PatchOutcome] = []
    for patch in patches:
        out = PatchOutcome(patch)
        pending: dict[str, FileState | None] = {}
        for change in patch.files:
            if skip_class is not None and all(skip_class(p) for p in change.paths):
                out.skipped.extend(change.paths)
                continue
            _apply_change(tree, change, out, pending, report_fuzz)
        if out.ok:
            out.changes = pending
            tree.overlay.update(pending)
        outcomes.append(out)
        if on_patch is not None:
            on_patch(out)
    return outcomes
