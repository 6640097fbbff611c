# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""What a conversion run reads and where it writes, checked before anything is written; and how it writes.

- :func:`input_files`: the files of the input (a ``.py`` file or a directory tree), in walk order. Anything that is
  neither a regular file nor a directory (a FIFO, a socket, a device) is refused up front: reading one blocks or
  never ends.
- :func:`check_directory` and :func:`check_targets`: an output or report directory must be a directory (or
  creatable), and the converter never writes into its input: every path a run would write, symlinks resolved, must
  lie outside the input file or tree (``--inplace`` is the one exception, and it skips these checks).
- :func:`inplace_targets`: ``--inplace`` rewrites files of the input only, never a file outside it through a
  symlink.
- :class:`Staging`: a run writes into a directory of its own (``.torch_gpu2mlu-<random>``) that is moved into place
  once everything is written, so a run that fails leaves no half-written output. The walk leaves out the run's own
  staging directories by identity (their paths), never by name: a user's directory named like one is input.

This module needs only the standard library, so that the command checks its arguments before it needs libcst.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache"})
#: Prefix of the staging directories (:class:`Staging`); a random suffix follows. Only a name: nothing is skipped or
#: removed because its name starts with it.
STAGING_PREFIX = ".torch_gpu2mlu-"


def shown(name: str | Path) -> str:
    """``name`` as it goes into a one-line message or a comment: as it is when every character is printable, else
    quoted like a Python string literal (``'a\\nb.py'``), so that a newline, a control character or an undecodable
    byte in a file name can neither split the line nor be sent to a terminal raw."""
    text = str(name)
    return text if text.isprintable() else repr(text)


class MigrationError(Exception):
    """A usage error of the converter, reported as one line ``error: <path>[:<line>]: <message>``, exit 2.

    ``path`` is kept as shown (:func:`shown`): a name with a newline is quoted, not split over two lines.
    """

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = None if path is None else shown(path)
        self.line = line

    def __str__(self) -> str:
        where = "" if self.path is None else (self.path if self.line is None else f"{self.path}:{self.line}") + ": "
        return where + self.message


def file_kind(mode: int) -> str:
    """``"a FIFO"``, ``"a socket"``, ``"a character device"``, ... for an ``st_mode`` (for messages)."""
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def _kind(path: Path) -> str | None:
    """:func:`file_kind` of ``path`` with symlinks followed; None when it does not exist (or a symlink dangles)."""
    try:
        return file_kind(path.stat().st_mode)
    except OSError:
        return "a broken symlink" if path.is_symlink() else None


def walk(root: Path, skip: Iterable[Path] = ()) -> Iterator[Path]:
    """Files under ``root`` in sorted order (symlinked directories are not followed; symlinks to files are).

    Directories named ``*.py`` are yielded too (the run reports them as unreadable Python), and walked as well.
    :data:`SKIP_DIRS` are left out by name; the directories in ``skip`` (the run's own staging directories,
    :class:`Staging`) by identity: a directory whose resolved path is one of theirs, whatever its name.
    """
    skipped = {_resolved(p) for p in skip}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not (skipped and _resolved(Path(dirpath) / d) in skipped))
        for name in sorted(filenames):
            yield Path(dirpath) / name
        for name in dirnames:
            if name.endswith(".py") and (Path(dirpath) / name).is_dir():
                yield Path(dirpath) / name


def input_files(src: Path, skip: Iterable[Path] = ()) -> list[tuple[Path, str]]:
    """``(path, rel)`` of every file a run reads from ``src`` (``rel``: POSIX path relative to a directory input,
    the file name for a file input), in :func:`walk` order; ``skip``: the run's staging directories.

    Raises:
        MigrationError: ``src`` or a file in it (symlinks followed) is a FIFO, a socket or a device, named with its
            kind. Unreadable files and dangling symlinks are not errors here: the run reports them as skipped.
    """
    files = [(p, p.relative_to(src).as_posix()) for p in walk(src, skip)] if src.is_dir() else [(src, src.name)]
    for path, _rel in files:
        kind = _kind(path)
        if kind not in (None, "a broken symlink", "a regular file", "a directory"):
            raise MigrationError(f"{kind}, not a regular file: refusing to read it", path)
    return files


def check_directory(path: Path, what: str) -> None:
    """Check that ``path`` is a directory or can be created as one (nothing is created).

    Raises:
        MigrationError: ``path`` exists and is not a directory, or its nearest existing ancestor is not one.
    """
    for at in (path, *path.parents):
        kind = _kind(at)
        if kind is None:
            continue
        if kind == "a directory":
            return
        if at == path:
            raise MigrationError(f"{what} is {kind}, not a directory", path)
        raise MigrationError(f"{what} cannot be created: {shown(at)} is {kind}, not a directory", path)


def _resolved(path: Path) -> Path:
    """``path`` with every symlink resolved (as far as it exists), absolute."""
    return Path(os.path.realpath(path))


def check_targets(src: Path, targets: Iterable[Path], what: str, hint: str = "") -> None:
    """Refuse to write into the input: no target, symlinks resolved, may be the input file or lie in the input tree.

    ``targets`` are the paths a run would write (each output file, each report). Every symlink in them is resolved,
    the last part's too: an output file that is a symlink into the input is refused, not replaced. ``hint`` ends the
    message.

    Raises:
        MigrationError: naming the first target that lands on the input, and the input.
    """
    root = _resolved(src)
    for target in targets:
        real = _resolved(target)
        if real == root or real.is_relative_to(root):
            into = "overwrite the input file" if not src.is_dir() else "write into the input tree"
            via = f" (as {shown(real)})" if real != Path(os.path.abspath(target)) else ""
            raise MigrationError(f"{what} would {into} {shown(src)}{via}{hint}", target)


def inplace_targets(src: Path, paths: Iterable[Path]) -> list[Path]:
    """The files an ``--inplace`` run rewrites, symlinks resolved: each must lie in the input.

    A symlink in the input tree is rewritten at its target only when that target is in the tree too. One that leads
    out (a shared module, a file of another project) is never written: the run is refused, before any file is
    rewritten. For a file input, the input is that file, its symlinks resolved (the user named it).

    Raises:
        MigrationError: naming the first path whose target lies outside the input, and that target.
    """
    root = _resolved(src)
    reals = []
    for path in paths:
        real = _resolved(path)
        if real != root and not real.is_relative_to(root):
            raise MigrationError(f"a symlink to {shown(real)}, outside the input {shown(src)}: --inplace never writes "
                                 "outside the input (use -o, or replace the link with a copy)", path)
        reals.append(real)
    return reals


class Staging:
    """A new directory that becomes ``target`` (or is merged into it) on :meth:`commit`, or vanishes on
    :meth:`discard`.

    It is ``.torch_gpu2mlu-<random>`` in ``target`` when that exists, else in its nearest existing ancestor: the same
    file system, so committing is renames only. Call :func:`check_directory` on ``target`` first.
    """

    def __init__(self, target: Path) -> None:
        """Create the staging directory for ``target``.

        Raises:
            MigrationError: it cannot be created (a read-only or protected place), naming ``target``, not the
                staging directory the user never asked for.
        """
        self.target = target
        anchor = next(p for p in (target, *target.parents) if p.is_dir())
        while True:
            path = anchor / f"{STAGING_PREFIX}{secrets.token_hex(8)}"
            try:
                path.mkdir()
                break
            except FileExistsError:
                continue
            except OSError as err:
                raise MigrationError(f"cannot write: {err.strerror or err}", target) from None
        self.path = path
        self._moves: list[tuple[Path, Path]] = []  # (staged file, its place in target), from check()

    def check(self) -> None:
        """Check that the staged files can be moved into ``target``: no staged file meets a directory there, no
        staged directory meets a file (nothing is moved). :meth:`commit` checks too; check every staging of a run
        before committing any.

        Raises:
            MigrationError: such a clash, naming the path in ``target``.
        """
        self._moves = []
        if not os.path.lexists(self.target):
            return
        for dirpath, dirnames, filenames in os.walk(self.path):
            rel = Path(dirpath).relative_to(self.path)
            for name in dirnames:
                dest = self.target / rel / name
                if os.path.lexists(dest) and not dest.is_dir():
                    raise MigrationError(f"cannot write into it: it is {_kind(dest)}, not a directory", dest)
            for name in filenames:
                dest = self.target / rel / name
                if dest.is_dir():
                    raise MigrationError("cannot replace it with a file: it is a directory", dest)
                self._moves.append((Path(dirpath) / name, dest))

    def commit(self) -> None:
        """Move the staged files into ``target``: a rename of the whole directory when ``target`` does not exist,
        else file by file (``os.replace``), after :meth:`check`.

        Raises:
            MigrationError: from :meth:`check` (nothing is moved then).
        """
        self.check()
        if not os.path.lexists(self.target):
            self.target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(self.path, self.target)
            return
        for staged, dest in self._moves:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, dest)
        shutil.rmtree(self.path)

    def as_target(self, path: str | Path | None) -> str | Path | None:
        """``path`` as the user knows it: a path in the staging directory becomes its place in ``target`` (for
        messages); any other path is returned as it is."""
        if path is None:
            return None
        staged = Path(os.fsdecode(path))
        if staged == self.path or staged.is_relative_to(self.path):
            return self.target / staged.relative_to(self.path)
        return path

    def discard(self) -> None:
        """Remove the staging directory and everything in it."""
        shutil.rmtree(self.path, ignore_errors=True)
