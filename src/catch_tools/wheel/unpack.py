# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Unpacking wheel members into a directory: new files only, and cached trees verified before reuse.

Every tool that writes a wheel's members to disk (the real upstream trees of :mod:`catch_tools.upstream`, the
interface check's unpacked wheels) writes them here. The member names were already checked when the wheel was opened
(:class:`~catch_tools.wheel.zipraw.RawZipReader`); on top of that:

* a file is created with ``O_CREAT | O_EXCL | O_NOFOLLOW``: an existing path, a symlink planted in the directory or
  a hard link into another tree is never written through (a second write to one path fails instead of changing the
  file another tree shares);
* each directory a member lands in is checked to resolve inside the root;
* :func:`record_tree` stores a digest of every file unpacked, and :func:`verify_tree` recomputes them before a cached
  tree is trusted again, so a tree changed after unpacking is detected and rebuilt rather than imported.

The digest is BLAKE2b (``hashlib``, 256-bit): a cryptographic hash, about twice SHA-256's speed on CPUs without SHA
instructions.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.userfiles import write_atomic
from catch_tools.wheel.zipraw import RawMember, RawZipReader

#: The manifest of an unpacked tree: ``{"files": {name: digest}}``; written last, so its presence means complete.
MANIFEST = ".catch-tree.json"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def digest(data: bytes | memoryview) -> str:
    """Hex BLAKE2b-256 of ``data``."""
    return hashlib.blake2b(data, digest_size=32).hexdigest()


class Unpacker:
    """Creates files under ``root`` for member names of a checked wheel; remembers each file's digest.

    Raises:
        UserError: a member path whose directory resolves outside ``root``, or that already exists.
    """

    def __init__(self, root: Path):
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self._real_root = os.path.realpath(root)
        self._dirs_ok: set[str] = set()
        self.digests: dict[str, str] = {}

    def _parent(self, name: str) -> Path:
        target = self.root / name
        parent = os.path.dirname(name)
        if parent not in self._dirs_ok:
            target.parent.mkdir(parents=True, exist_ok=True)
            real = os.path.realpath(target.parent)
            if os.path.commonpath([real, self._real_root]) != self._real_root:
                raise UserError(f"member {name} would be written outside {self.root}", path=self.root)
            self._dirs_ok.add(parent)
        return target

    def write(self, name: str, data: bytes, mode: int = 0) -> None:
        """Create ``root/name`` holding ``data`` (never an existing path); ``mode``: Unix permission bits or 0."""
        target = self._parent(name)
        try:
            fd = os.open(target, _FLAGS, 0o644)
        except FileExistsError:
            raise UserError(f"member {name} is written twice", path=self.root) from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if mode:
                os.fchmod(fh.fileno(), mode)
        self.digests[name] = digest(data)

    def link(self, source: Path, name: str, known_digest: str | None = None) -> bool:
        """Hard-link ``source`` as ``root/name`` (a new name, never over an existing one); False when linking fails.

        Linking shares the file with the source tree, which is safe because no file is ever written twice here.
        """
        target = self._parent(name)
        try:
            os.link(source, target, follow_symlinks=False)
        except OSError:
            return False
        if known_digest is not None:
            self.digests[name] = known_digest
        return True


def unpack_members(reader: RawZipReader, members: Iterable[RawMember], unpacker: Unpacker, threads: int = 2, *,
                   keep_modes: bool = True) -> None:
    """Write ``members`` of ``reader`` through ``unpacker``, largest first on ``threads`` threads (zlib and the
    digest release the GIL); with ``keep_modes`` the Unix modes recorded in the archive (executable bits) are kept,
    else every file gets the default mode."""
    todo = sorted(members, key=lambda m: -m.file_size)

    def one(member: RawMember) -> None:
        unpacker.write(member.name, reader.read(member), (member.external_attr >> 16) & 0o777 if keep_modes else 0)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        list(pool.map(one, todo))


def record_tree(root: Path, digests: Mapping[str, str]) -> None:
    """Write ``root``'s manifest (:data:`MANIFEST`) listing ``digests``; call it when the tree is complete."""
    write_atomic(root / MANIFEST, json.dumps({"files": dict(sorted(digests.items()))}))


def tree_digests(root: Path) -> dict[str, str] | None:
    """The digests recorded for ``root`` by :func:`record_tree`, or None (no manifest, or an unreadable one)."""
    try:
        data = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        files = data["files"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        return None
    return files


def verify_tree(root: Path, threads: int = 2) -> str | None:
    """Recompute every digest of ``root``'s manifest; None when all match, else what differs (one line).

    Files the manifest does not list (bytecode written by imports) are not judged.
    """
    files = tree_digests(root)
    if files is None:
        return f"no readable manifest {MANIFEST}"
    real_root = os.path.realpath(root)

    def check(item: tuple[str, str]) -> str | None:
        name, want = item
        path = root / name
        try:
            if os.path.commonpath([os.path.realpath(path), real_root]) != real_root or path.is_symlink():
                return f"{name} leaves the tree"
            with open(path, "rb") as fh:
                got = hashlib.file_digest(fh, lambda: hashlib.blake2b(digest_size=32)).hexdigest()
        except OSError as err:
            return f"{name}: {err.strerror}"
        return None if got == want else f"{name} changed since it was unpacked"

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        return next((bad for bad in pool.map(check, files.items()) if bad), None)
