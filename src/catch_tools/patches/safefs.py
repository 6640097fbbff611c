# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""File operations confined to one directory: no path may leave it, through ``..``, an absolute path or a symlink.

Every operation resolves a relative POSIX path component by component from a file descriptor of the *real* root
directory (``os.open`` with ``O_NOFOLLOW | O_DIRECTORY`` per component, then ``*at`` system calls via ``dir_fd``), so
a symlink anywhere on the way -- planted before the run or swapped in during it -- is refused instead of followed.
This is ``git apply``'s rule for work trees (apply.c ``path_is_beyond_symlink``: "affected file '%s' is beyond a
symbolic link"), applied to reads and writes alike.

:class:`UnsafePath` carries the offending relative path and the reason; callers add the patch or journal name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class UnsafePath(Exception):
    """``path`` (relative to the root) cannot be used safely: ``reason`` says why (one line)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def check_relative(path: str) -> list[str]:
    """The components of the relative POSIX ``path``; raises :class:`UnsafePath` for an absolute path, an empty,
    ``.`` or ``..`` component, or a NUL byte."""
    if path.startswith("/"):
        raise UnsafePath(path, "absolute path: only paths inside the target directory are allowed")
    parts = path.split("/")
    if "\0" in path or any(p in ("", ".", "..") for p in parts):
        raise UnsafePath(path, "path with '..', '.' or an empty component leaves or escapes the target directory")
    return parts


class Root:
    """An open directory; every path is resolved below it without following symlinks.

    Use as a context manager (closes the descriptor). ``root`` is resolved once (``Path.resolve``): the target
    directory may itself be reached through a symlink, nothing below it may.
    """

    def __init__(self, root: Path):
        self.path = root.resolve()
        self.fd = os.open(self.path, _DIR_FLAGS)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Root:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def parent(self, path: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
        """Yield ``(dir_fd, name)`` for ``path``'s parent directory and last component.

        Raises:
            UnsafePath: a component is a symlink (or ``path`` is absolute / has ``..``).
            FileNotFoundError / NotADirectoryError: a parent is missing (and ``create`` is false) / is not a directory.
        """
        parts = check_relative(path)
        fd = os.dup(self.fd)
        try:
            for i, part in enumerate(parts[:-1]):
                try:
                    st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o755, dir_fd=fd)
                    st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise UnsafePath(path, f"{'/'.join(parts[:i + 1])} is a symbolic link in the target directory "
                                     "(git apply refuses paths beyond a symbolic link)")
                if not stat.S_ISDIR(st.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a directory", "/".join(parts[:i + 1]))
                try:
                    sub = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as err:  # swapped for a symlink after the stat: O_NOFOLLOW gives ELOOP/ENOTDIR
                    if err.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise UnsafePath(path, f"{'/'.join(parts[:i + 1])} is a symbolic link in the target "
                                         "directory (git apply refuses paths beyond a symbolic link)") from None
                    raise
                os.close(fd)
                fd = sub
            yield fd, parts[-1]
        finally:
            os.close(fd)

    def lstat(self, path: str) -> os.stat_result | None:
        """``lstat`` of ``path`` (None when it or a parent does not exist)."""
        try:
            with self.parent(path) as (fd, name):
                return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read_bytes(self, path: str) -> bytes:
        """The contents of the regular file ``path`` (a symlink is refused, not followed)."""
        with self.parent(path) as (dfd, name):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dfd)
            except OSError as err:
                if err.errno == errno.ELOOP:
                    raise UnsafePath(path, "is a symbolic link in the target directory") from None
                raise
            with os.fdopen(fd, "rb") as fh:
                return fh.read()

    def readlink(self, path: str) -> str:
        with self.parent(path) as (fd, name):
            return os.readlink(name, dir_fd=fd)

    def write_new(self, path: str, data: bytes, mode: int) -> None:
        """Create ``path`` (which must not exist) with ``data`` and permission ``mode``; parents are created."""
        with self.parent(path, create=True) as (dfd, name):
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                         mode, dir_fd=dfd)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                os.fchmod(fh.fileno(), mode)
                fh.flush()
                os.fsync(fh.fileno())

    def symlink_new(self, path: str, target: str) -> None:
        with self.parent(path, create=True) as (fd, name):
            os.symlink(target, name, dir_fd=fd)

    def unlink(self, path: str, *, missing_ok: bool = False) -> None:
        """Remove the file or symlink ``path`` (a symlink is removed, never followed)."""
        try:
            with self.parent(path) as (fd, name):
                os.unlink(name, dir_fd=fd)
        except (FileNotFoundError, NotADirectoryError):
            if not missing_ok:
                raise

    def replace(self, src: str, dst: str) -> None:
        """``os.replace`` of ``src`` onto ``dst``, both below the root (parents of ``dst`` are created)."""
        with self.parent(src) as (sfd, sname), self.parent(dst, create=True) as (dfd, dname):
            os.replace(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists as any kind of entry (a symlink counts, it is not followed)."""
        return self.lstat(path) is not None
