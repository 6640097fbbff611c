# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The files and directories a user hands the tooling: files read (series, patches, manifests, state files) are
regular files only, and UTF-8 text with the line of the first bad byte; such a file is replaced atomically
(:func:`write_atomic`); directories written into (``--out``, ``--work``, ``--index-dir``, ``--report``) are checked to
be directories before anything is written; the lock files of the tool's own caches and indexes
(:func:`exclusive_lock`).

A FIFO, socket or device named where a file is expected is refused without being read: opening a FIFO for reading
blocks until a writer comes (open(2), fifo(7)), and reading a device may never end. The check is ``os.stat`` +
``stat.S_ISREG`` before opening, and ``fstat`` of the descriptor (opened with ``O_NONBLOCK``, which makes opening a
FIFO return at once) after, so a file swapped for a FIFO in between is refused too.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from catch_tools.errors import UserError

_KIND = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"))


def _refuse(mode: int, path: Path, what: str) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "Is a directory", str(path))
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KIND if test(mode)), "not a regular file")
        raise UserError(f"is {kind}, expected {what} (a regular file): refusing to read it", path=path)


def open_regular_file(path: Path, what: str = "a file") -> BinaryIO:
    """``path`` opened for binary reading, once it is known to be a regular file (symlinks followed); never blocks on
    a FIFO (see the module doc).

    Raises:
        UserError: ``path`` is a FIFO, socket or device.
        OSError: as ``open`` raises it (see :func:`read_regular_file`).
    """
    _refuse(os.stat(path).st_mode, path, what)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        _refuse(os.fstat(fd).st_mode, path, what)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_file(path: Path, what: str = "a file") -> bytes:
    """The bytes of the regular file ``path`` (symlinks followed), never opening a FIFO, socket or device for a
    blocking read (see the module doc).

    ``what`` names the expected file in the error (``"the quilt series file"``).

    Raises:
        UserError: ``path`` is a FIFO, socket or device.
        OSError: as ``open`` raises it (``FileNotFoundError``, ``IsADirectoryError``, ``NotADirectoryError``,
            ``PermissionError``): each caller words its own advice for those.
    """
    with open_regular_file(path, what) as fh:
        return fh.read()


def decode_utf8(raw: bytes, path: str | Path, what: str) -> str:
    """``raw`` decoded as UTF-8; a bad byte is a :class:`UserError` naming ``path`` and the 1-based line it is on.

    ``what`` is the subject of the rule in the message: ``"patch files"`` -> "patch files must be UTF-8".

    Raises:
        UserError: ``raw`` is not valid UTF-8.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise UserError(f"non-UTF-8 byte 0x{raw[err.start]:02x}: {what} must be UTF-8 (re-encode it, e.g. "
                        "iconv -t UTF-8)", path=path, line=line) from None


def read_utf8_file(path: Path, what: str) -> str:
    """:func:`read_regular_file` then :func:`decode_utf8` (``what`` as in both: ``"the pin manifest"``).

    Raises:
        UserError: a FIFO, socket or device, or a byte that is not UTF-8 (with its line).
        OSError: as :func:`read_regular_file`.
    """
    return decode_utf8(read_regular_file(path, what), path, what)


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (str: UTF-8) so that a reader sees the old file or the new one, never a part.

    The bytes go to a new temporary file beside ``path`` with a random name (``.NAME.<random>.tmp``, created with
    ``O_EXCL`` by :func:`tempfile.mkstemp`: never a file or symlink a user or an earlier run left there), are synced
    to disk, then renamed over ``path`` (``rename(2)`` is atomic within a file system and replaces a symlink at
    ``path`` itself, never its target). On any error the temporary file is removed and ``path`` is unchanged.

    Raises:
        OSError: as creating, writing or renaming raises it (each caller words its own message).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def exclusive_lock(path: Path, what: str = "the lock file") -> Iterator[None]:
    """Hold an exclusive ``flock(2)`` on ``path`` for the ``with`` block; the next holder waits.

    The lock file is created when missing, never truncated or written, and opened without following a symlink
    (``O_NOFOLLOW``): a link planted at its name can be neither followed nor emptied, and a hard link to another file
    is only locked. The lock goes with the descriptor, so a process that dies leaves no stale lock.

    Raises:
        UserError: ``path`` is a symbolic link or not a regular file, or cannot be opened (``what`` names it).
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UserError(f"a symbolic link where {what} belongs: remove it", path=path) from None
        raise UserError(f"cannot open {what}: {err.strerror}", path=err.filename or path) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UserError(f"not a regular file where {what} belongs: remove it", path=path)
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
def output_dir(path: Path, option: str, *, create: bool = True) -> Path:
    """The directory an option names for the tool to write into (``--work DIR``), created with its parents when
    missing (not with ``create=False``: only checked, so that every option can be checked before anything is
    written); returns ``path``.

    Raises:
        UserError: ``path`` or one of its parents exists and is not a directory (a regular file, say; the one line
            names that path and ``option``), or the directory cannot be created.
    """
    for existing in (path, *path.parents):
        if existing.exists() or existing.is_symlink():
            if not existing.is_dir():
                raise UserError(f"{option} needs a directory, and this is not one", path=existing)
            break
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UserError(f"{option}: cannot create the directory ({err.strerror or err})", path=path) from None
    return path


def report_files(stem: Path) -> tuple[Path, Path]:
    """A report's two files: ``--report PATH`` -> (``PATH.md``, ``PATH.json``); a given ``.md``/``.json`` suffix is
    replaced."""
    base = stem.with_suffix("") if stem.suffix in (".md", ".json") else stem
    return base.with_name(base.name + ".md"), base.with_name(base.name + ".json")


def writable_report_files(stem: Path, option: str) -> tuple[Path, Path]:
    """:func:`report_files` of ``stem``, checked before anything runs (nothing is created): the directory they go
    in is one or can be made (:func:`output_dir`), and neither is something other than a regular file.

    Raises:
        UserError: naming the path in the way and ``option``.
    """
    files = report_files(stem)
    output_dir(files[0].parent, option, create=False)
    for path in files:
        if (path.exists() or path.is_symlink()) and not path.is_file():
            raise UserError(f"{option} writes PATH.md and PATH.json, and this is not a regular file", path=path)
    return files
