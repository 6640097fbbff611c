# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""A static PEP 503 "simple" package index: the tree a release publishes its wheels into.

Layout (any HTTP server serves it as it is, the way PyTorch's own wheel index is served)::

    ROOT/simple/index.html               one link per project
    ROOT/simple/<project>/index.html     one link per file: ../../files/<file>#sha256=<hex>, with
                                         data-requires-python (PEP 503) and data-core-metadata (PEP 714/658)
    ROOT/files/<file>                    the wheel
    ROOT/files/<file>.metadata           its METADATA (PEP 658: pip resolves without downloading the wheel)
    ROOT/.catch-index.lock               the lock every publish holds (empty; see below)

The ``#sha256=`` fragment is computed when the file is published: pip checks every download against it, so a file
whose bytes changed after publishing (a tampered mirror, a corrupted upload) is refused ("THESE PACKAGES DO NOT
MATCH THE HASHES"). Publishing is append-only, like PyPI: a file name already published with other bytes is an error.

Rules of publishing:

- only wheels that are what their name says are published (:func:`~.wheel_check.check_wheel`): a valid wheel
  file name (PEP 427) made only of the characters of the wheel-name grammar and in its normal form, one
  ``.dist-info`` whose METADATA ``Name``/``Version`` and WHEEL ``Tag`` lines agree with the file name, and a RECORD
  that lists and matches every member;
- append-only holds for what a name means, not its spelling: a wheel whose project, version, build tag and tags are
  those of a published file of another spelling (published before names had to be normal) is refused;
- every wheel is checked, and the index read, before anything is written; a refused publish changes nothing;
- one publish at a time: reading the index, writing files and pages all happen under an exclusive ``flock(2)`` of
  ``ROOT/.catch-index.lock`` (opened without following a symlink), so two runs publishing the same name with other
  bytes, or different wheels, run one after the other: the second sees what the first published;
- the index writes only into its own directories: ``files/``, ``simple/`` and ``simple/<project>/`` must be real
  directories, a symbolic link there is refused (``ROOT`` itself may be a link: the caller names it);
- a wheel is published as a copy (never a link to the caller's file, which may change later): written to a hidden
  temporary file with a random suffix in ``files/``, synced, then renamed to its name, which is never replaced; its
  companions (``.metadata``, the recorded sha256) are written after that rename succeeded, each atomically;
- the pages are written last, each one atomically (temporary file + rename, which replaces a link, never writes
  through it);
- a file in ``files/`` that is not a published wheel (an invalid name, not a regular file, unreadable) is left out of
  the pages with one warning line naming it; it does not stop a publish.
"""

from __future__ import annotations

import errno
import hashlib
import html
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from packaging.utils import NormalizedName, parse_wheel_filename

from catch_tools.errors import UserError
from catch_tools.release.wheel_check import (
    CheckedWheel,
    check_wheel,
    check_wheel_filename,
    requires_python,
    sha256_file,
    wheel_metadata,
)
from catch_tools.userfiles import decode_utf8, exclusive_lock, write_atomic

_PAGE = """<!DOCTYPE html>
<html>
  <head>
    <meta name="pypi:repository-version" content="1.0">
    <title>{title}</title>
  </head>
  <body>
    <h1>{title}</h1>
{links}
  </body>
</html>
"""

#: The characters of the wheel-name grammar (PEP 427 escaped names and tags ``[A-Za-z0-9_.]``, PEP 440 versions
#: adding ``!`` and ``+``, ``-`` between the components). ``parse_wheel_filename`` accepts more (any character in a
#: tag, Unicode letters in the name); none of those can be in a valid wheel, and all are unsafe in a URL or a page.
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: The lock file every publish holds, in the index root.
LOCK_NAME = ".catch-index.lock"

Warn = Callable[[UserError], None]


@dataclass(frozen=True)
class IndexFile:
    """One published file: its name, sha256 (hex), Requires-Python (or None) and its METADATA's sha256 (hex)."""

    filename: str
    sha256: str
    requires_python: str | None
    metadata_sha256: str | None


def _sums_path(published: Path) -> Path:
    """Where the sha256 recorded at publishing time lives (a hidden file next to the wheel)."""
    return published.with_name(f".{published.name}.sha256")


def _published(wheel: Path) -> tuple[NormalizedName, IndexFile]:
    """The index entry of ``files/<wheel>``: recorded sha256 and ``.metadata`` when present, else read from it.

    Raises:
        UserError: why the file is not a published wheel (the caller reports it and leaves it out).
    """
    project = check_wheel_filename(wheel)[0]
    try:
        if not stat.S_ISREG(wheel.lstat().st_mode):
            raise UserError("not a regular file (a link or a directory)", path=wheel)
        meta = wheel.with_name(wheel.name + ".metadata")
        has_meta = meta.is_file()
        meta_bytes = meta.read_bytes() if has_meta else wheel_metadata(wheel)
        decode_utf8(meta_bytes, str(meta) if has_meta else f"{wheel}!METADATA", "wheel metadata")
        sums = _sums_path(wheel)  # the hash recorded at publishing time, never recomputed
        digest = sums.read_text(encoding="ascii", errors="replace").strip() if sums.is_file() else sha256_file(wheel)
    except OSError as err:
        raise UserError(f"cannot read: {err.strerror}", path=err.filename or wheel) from None
    if not _SHA256.fullmatch(digest):
        raise UserError("the recorded sha256 is not 64 hex digits", path=_sums_path(wheel))
    return project, IndexFile(wheel.name, digest, requires_python(meta_bytes),
                              hashlib.sha256(meta_bytes).hexdigest() if has_meta else None)


def _warn_stderr(err: UserError) -> None:
    print(f"warning: {err}", file=sys.stderr)


def _report(strays: dict[str, UserError], warn: Warn) -> None:
    for err in strays.values():
        warn(UserError(f"{err.message}: not a published wheel, left out of the pages", path=err.path, line=err.line))


def _directory(path: Path, *, link_ok: bool = False) -> None:
    """Refuse ``path`` when it exists and is not a directory (it is created later, when writing), or, unless
    ``link_ok`` (the index root, which the caller names), when it is a symbolic link: the index writes only into
    directories of its own, never through a link to somewhere else."""
    if path.is_symlink() and not link_ok:
        raise UserError("a symbolic link where the index has a directory of its own: the index never writes "
                        "through a link (replace it by a directory)", path=path)
    if (path.exists() or path.is_symlink()) and not path.is_dir():
        raise UserError("not a directory", path=path)


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Hold an exclusive ``flock(2)`` on ``ROOT/.catch-index.lock`` (the index root is created when missing): one
    publish, or page rewrite, at a time; the next waits. The lock file is created when missing, never truncated, and
    opened without following a symlink (``O_NOFOLLOW``); the lock goes with the descriptor, so a run that dies
    leaves no stale lock.

    Raises:
        UserError: ``root`` is not a directory or cannot be created, or the lock file is a symbolic link, not a
            regular file, or cannot be opened.
    """
    _directory(root, link_ok=True)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot lock the index: {err.strerror}", path=err.filename or root) from None
    with exclusive_lock(root / LOCK_NAME, "the index's lock file"):
        yield


def _scan(root: Path) -> tuple[dict[str, IndexFile], dict[str, NormalizedName], dict[str, UserError]]:
    """Read ``ROOT/files``: (published entries by file name, their projects, strays by file name: why each ``*.whl``
    that is not a published wheel is not).

    Raises:
        UserError: ``ROOT``, ``ROOT/files`` or ``ROOT/simple`` exists and is not a directory, ``files/`` or
            ``simple/`` is a symbolic link, or ``files/`` cannot be listed.
    """
    _directory(root, link_ok=True)
    for path in (root / "files", root / "simple"):
        _directory(path)
    entries: dict[str, IndexFile] = {}
    projects: dict[str, NormalizedName] = {}
    strays: dict[str, UserError] = {}
    files = root / "files"
    try:
        names = sorted(os.listdir(files)) if files.is_dir() else []
    except OSError as err:
        raise UserError(f"cannot list: {err.strerror}", path=files) from None
    for name in names:
        if not name.endswith(".whl"):
            continue  # the wheels' companions (.metadata, .sha256) and our temporary files
        try:
            project, entry = _published(files / name)
        except UserError as err:
            strays[name] = err
            continue
        entries[name] = entry
        projects[name] = project
    return entries, projects, strays


def _pages(root: Path, entries: dict[str, IndexFile], projects: dict[str, NormalizedName], *,
           hashes: bool = True) -> dict[Path, bytes]:
    """The page bytes for ``entries`` (by file name; ``projects`` maps each to its project), top page last.

    Raises:
        UserError: a page's directory is not a directory or is a symbolic link, or a page is a directory.
    """
    by_project: dict[str, list[IndexFile]] = {}
    for name in sorted(entries):
        by_project.setdefault(str(projects[name]), []).append(entries[name])
    pages: dict[Path, bytes] = {}
    for project, files in sorted(by_project.items()):
        links = []
        for f in files:
            href = f"../../files/{quote(f.filename)}" + (f"#sha256={f.sha256}" if hashes else "")
            attrs = f'href="{html.escape(href)}"'
            if f.requires_python:
                attrs += f' data-requires-python="{html.escape(f.requires_python)}"'
            if f.metadata_sha256 and hashes:
                attrs += f' data-core-metadata="sha256={f.metadata_sha256}"'
                attrs += f' data-dist-info-metadata="sha256={f.metadata_sha256}"'
            links.append(f"    <a {attrs}>{html.escape(f.filename)}</a><br>")
        page = root / "simple" / project / "index.html"
        pages[page] = _PAGE.format(title=f"Links for {project}", links="\n".join(links)).encode()
    top = [f'    <a href="{quote(p)}/">{html.escape(p)}</a><br>' for p in sorted(by_project)]
    pages[root / "simple" / "index.html"] = _PAGE.format(title="Simple index", links="\n".join(top)).encode()
    for page in pages:
        _directory(page.parent)
        if page.is_dir():
            raise UserError("is a directory, not a page", path=page)
    return pages


@contextmanager
def _temporary(directory: Path, name: str) -> Iterator[tuple[Path, int]]:
    """A new hidden file ``.NAME.<random>.tmp`` in ``directory`` (a name no user picks), opened for writing.

    Yields its path and descriptor; the descriptor is closed, and the file removed unless it was renamed, on exit.
    """
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        yield tmp, fd
    finally:
        os.close(fd)
        if tmp.exists():
            tmp.unlink()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` through a synced temporary file and a rename: a reader (the HTTP server) sees the old or the
    new bytes, never half; unchanged bytes are not rewritten. A symbolic link at ``path`` is replaced, never
    written through."""
    if not path.is_symlink() and path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


def _copy_new(wheel: CheckedWheel, dest: Path) -> None:
    """Copy ``wheel`` to ``dest`` (which must not exist): temporary file, the bytes checked against the sha256 the
    wheel was checked with, fsync, then a rename that never replaces an existing file.

    Raises:
        UserError: the source changed since it was checked, or ``dest`` appeared meanwhile (another publish).
    """
    digest = hashlib.sha256()
    with _temporary(dest.parent, dest.name) as (tmp, fd), wheel.path.open("rb") as src:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        if digest.hexdigest() != wheel.sha256:
            raise UserError("the wheel changed while it was being published: nothing was published",
                            path=wheel.path)
        os.fsync(fd)
        try:
            os.link(tmp, dest)  # a rename that fails when dest exists (rename(2) would replace it)
        except FileExistsError:
            raise UserError(f"{dest.name} was published meanwhile by another run", path=dest) from None
        except OSError as err:
            if err.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            if dest.exists() or dest.is_symlink():
                raise UserError(f"{dest.name} was published meanwhile by another run", path=dest) from None
            os.replace(tmp, dest)  # a file system without hard links


def _check_all(wheels: Sequence[Path]) -> dict[str, CheckedWheel]:
    """Check every wheel (:func:`~.wheel_check.check_wheel`), by file name in the order given. Reads no index.

    Raises:
        UserError: a wheel refused, or one file name given twice with other bytes.
    """
    checked: dict[str, CheckedWheel] = {}
    for path in wheels:
        got = check_wheel(path)
        seen = checked.get(path.name)
        if seen is not None and seen.sha256 != got.sha256:
            raise UserError(f"{path.name} is given twice with other bytes (also {seen.path})", path=path)
        checked.setdefault(path.name, got)
    return checked


def _plan(checked: dict[str, CheckedWheel], root: Path, warn: Warn
          ) -> tuple[list[CheckedWheel], dict[str, IndexFile], dict[str, NormalizedName]]:
    """Read the index (under the lock) for the checked wheels: (the new ones, the entries of the pages, their
    projects). Writes nothing.

    Raises:
        UserError: a wheel already published with other bytes, or published under another spelling of its name
            (same project, version, build tag and tags: :func:`packaging.utils.parse_wheel_filename`); a stray file
            or a non-regular companion in the way; the index's directories refused by :func:`_scan`.
    """
    entries, projects, strays = _scan(root)
    spelled = {parse_wheel_filename(name): name for name in entries}
    new = []
    files = root / "files"
    for name, wheel in checked.items():
        if name in strays:  # e.g. a directory or a link of that name
            raise UserError(f"{name} is in the index but is not a published wheel ({strays[name].message}): "
                            "remove it, or publish another version", path=root / "files" / name)
        published = entries.get(name)
        if published is None:
            other = spelled.get(parse_wheel_filename(name))
            if other is not None:
                raise UserError(f"{name} is already published as {other} (the same project, version and tags, "
                                "spelled otherwise); a published file never changes: release a new version",
                                path=wheel.path)
            for companion in (files / f"{name}.metadata", _sums_path(files / name)):
                if companion.is_symlink() or (companion.exists() and not companion.is_file()):
                    raise UserError("not a regular file: remove it, it is in the way of publishing", path=companion)
            new.append(wheel)
            entries[name] = IndexFile(wheel.path.name, wheel.sha256, wheel.requires_python,
                                      hashlib.sha256(wheel.metadata).hexdigest())
            projects[name] = wheel.project
        elif published.sha256 != wheel.sha256:
            raise UserError(f"{name} is already published with other bytes (sha256 {published.sha256}); "
                            "a published file never changes: release a new version", path=wheel.path)
    _report(strays, warn)
    return new, entries, projects


def publish_all(wheels: Sequence[Path], root: Path, *, warn: Warn = _warn_stderr) -> list[IndexFile]:
    """Add ``wheels`` to the static index at ``root`` and rewrite its pages; return their entries (in order).

    Every wheel is checked (:func:`~.wheel_check.check_wheel`) before the index is touched; then, under the index's lock
    (:func:`_locked`: concurrent publishes run one after the other), the index is read and refusals decided before
    anything is written: a refused publish changes nothing. A new wheel is copied in (never linked: the caller's
    file may change later) and never replaces a file; once it is in, its METADATA and sha256 are recorded next to it;
    the pages come last, made from every file present. Publishing the same bytes again changes nothing. Files in
    ``files/`` that are not published wheels are reported with ``warn`` and left out.

    Raises:
        UserError: a wheel refused by :func:`check_wheel`, given twice with other bytes, or already published with
            other bytes or under another spelling of its name; a stray file of the same name in the index; ``root``
            (or ``files/``, ``simple/``, ``simple/<project>/``) not a directory, or (but ``root``) a symbolic link;
            the lock file refused (:func:`_locked`); a write that fails (the message names the file).
    """
    checked = _check_all(wheels)
    with _locked(root):
        new, entries, projects = _plan(checked, root, warn)
        pages = _pages(root, entries, projects)
        files = root / "files"
        try:
            for wheel in new:
                dest = files / wheel.path.name
                _copy_new(wheel, dest)
                _write_atomic(dest.with_name(dest.name + ".metadata"), wheel.metadata)
                _write_atomic(_sums_path(dest), (wheel.sha256 + "\n").encode())
            if new:
                _fsync_dir(files)
            for page, data in pages.items():
                _write_atomic(page, data)
        except OSError as err:
            raise UserError(f"cannot write: {err.strerror}", path=err.filename or root) from None
    return [entries[p.name] for p in wheels]


def publish(wheel: Path, root: Path, *, warn: Warn = _warn_stderr) -> IndexFile:
    """Publish one wheel (:func:`publish_all`); returns its entry (sha256 of the bytes published).

    Raises:
        UserError: see :func:`publish_all`.
    """
    return publish_all([wheel], root, warn=warn)[0]


def write_pages(root: Path, *, hashes: bool = True, warn: Warn = _warn_stderr) -> list[Path]:
    """(Re)write ``ROOT/simple/`` from ``ROOT/files/``; returns the pages written (top page first).

    Args:
        root: the index root.
        hashes: False leaves out the ``#sha256=`` fragments (only to show what they protect: tests).
        warn: called with each stray file of ``files/`` (left out of the pages).

    Raises:
        UserError: ``root`` (or ``files/``, ``simple/``, ``simple/<project>/``) is not a directory, or (but
            ``root``) a symbolic link; the lock file refused (:func:`_locked`); a page cannot be written.
    """
    with _locked(root):
        entries, projects, strays = _scan(root)
        _report(strays, warn)
        pages = _pages(root, entries, projects, hashes=hashes)
        try:
            for page, data in pages.items():
                _write_atomic(page, data)
        except OSError as err:
            raise UserError(f"cannot write: {err.strerror}", path=err.filename or root) from None
    top = root / "simple" / "index.html"
    return [top, *(p for p in pages if p != top)]
