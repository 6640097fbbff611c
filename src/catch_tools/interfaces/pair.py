# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The two wheels under comparison (upstream, combined): member lookup, raw identity, and unpacked trees.

"Raw identical" means same compression method, CRC-32, sizes and compressed bytes: such a member holds the same file
in both wheels, so checks of its contents can be skipped (the combined build copies unchanged members raw).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.paths import cache_dir
from catch_tools.wheel.metadata import check_wheel_identity, dist_info_dir
from catch_tools.wheel.unpack import Unpacker, record_tree, unpack_members, verify_tree
from catch_tools.wheel.zipraw import RawMember, RawZipReader

log = logging.getLogger(__name__)

#: Members not needed to import torch (skipped when unpacking a tree for layers 2 and 3).
NOT_FOR_IMPORT = ("torch/include/", "torch/test/", "torch/share/", "torch/bin/")
#: ... except these (``import torch`` checks that the shared-memory manager exists).
NEEDED_FOR_IMPORT = ("torch/bin/torch_shm_manager",)


def wanted_for_import(name: str) -> bool:
    """False for members under :data:`NOT_FOR_IMPORT` other than :data:`NEEDED_FOR_IMPORT`."""
    return name in NEEDED_FOR_IMPORT or not name.startswith(NOT_FOR_IMPORT)


def _dist_info(reader: RawZipReader) -> str:
    """The wheel's ``.dist-info`` directory (:func:`~catch_tools.wheel.metadata.dist_info_dir`), with its
    ``METADATA``.

    Raises:
        UserError (exit code 1): not exactly one ``.dist-info``, or no ``METADATA`` in it.
    """
    try:
        dist_info = dist_info_dir(reader)
    except UserError as err:
        err.exit_code = 1
        raise
    if reader.get(f"{dist_info}/METADATA") is None:
        raise UserError(f"wheel has no {dist_info}/METADATA", path=reader.path, exit_code=1)
    return dist_info


class WheelPair:
    """Both wheels opened for the whole check (``with WheelPair(up, new) as pair``); trees unpacked lazily.

    ``cache=True`` keeps the unpacked upstream tree (and, in :class:`~.schemas.Probes`, its plain probe) under
    :func:`catch_tools.paths.cache_dir`, keyed by the wheel's sha256.

    Raises:
        UserError (exit code 1): a wheel that is missing, not a zip, has no ``.dist-info``, or is not what its file
            name says (:func:`~catch_tools.wheel.metadata.check_wheel_identity`: a combined wheel renamed to another
            Python would pass every layer).
    """

    def __init__(self, upstream: Path, combined: Path, *, cache: bool = False):
        opened: list[RawZipReader] = []
        try:
            for path in (upstream, combined):
                opened.append(RawZipReader(path))
                check_wheel_identity(opened[-1])
        except UserError as err:
            for reader in opened:
                reader.close()
            err.exit_code = 1
            raise
        self.up, self.new = opened
        self.up_di = _dist_info(self.up)
        self.new_di = _dist_info(self.new)
        self._tmp_path = Path(tempfile.mkdtemp(prefix="catch-ifcheck-"))
        self._trees: dict[str, Path] = {}
        self._trees_lock = threading.RLock()  # layers and the probes' prefetch thread share the trees
        self._identical: dict[str, bool] = {}
        self.cache = cache
        self._up_sha: str | None = None

    def __enter__(self) -> WheelPair:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close both wheels and remove unpacked trees.

        A tree of the combined wheel (hundreds of directories of hard links) takes seconds to delete on a busy disk,
        so a directory with trees is removed by a detached ``rm -rf`` that outlives this process; without ``rm``
        (or when it cannot start) it is removed here.
        """
        self.up.close()
        self.new.close()
        if not self._tmp_path.exists():
            return
        if self._trees and shutil.which("rm"):
            try:
                subprocess.Popen(["rm", "-rf", "--", str(self._tmp_path)], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
                return
            except OSError:
                pass
        shutil.rmtree(self._tmp_path, ignore_errors=True)

    def counterpart(self, up_name: str) -> str:
        """Name in the combined wheel of upstream member ``up_name`` (``.dist-info`` renamed)."""
        prefix = f"{self.up_di}/"
        return f"{self.new_di}/{up_name[len(prefix):]}" if up_name.startswith(prefix) else up_name

    def raw_identical(self, up_member: RawMember) -> bool:
        """True when the combined wheel has the member with the same compressed bytes (see module doc; the answer is
        remembered per member: layers 0, 1 and 3 and the unpacking all ask)."""
        known = self._identical.get(up_member.name)
        if known is not None:
            return known
        other = self.new.get(self.counterpart(up_member.name))
        same = other is not None and (other.method, other.crc, other.file_size, other.compress_size) == (
            up_member.method, up_member.crc, up_member.file_size, up_member.compress_size)
        if same and other is not None:
            with self.up.raw(up_member) as a, self.new.raw(other) as b:
                same = a == b
        self._identical[up_member.name] = same
        return same

    def upstream_sha256(self) -> str:
        """Hex sha256 of the upstream wheel file (computed once; the key of the caches)."""
        if self._up_sha is None:
            self._up_sha = hashlib.sha256(self.up.mapping()).hexdigest()
        return self._up_sha

    def tree(self, which: str, keep: Callable[[str], bool] | None = None) -> Path:
        """Unpack ``which`` ("upstream" or "combined") without :data:`NOT_FOR_IMPORT`; cached per wheel.

        ``keep`` filters member names further (a full tree already unpacked is returned instead). With
        ``cache=True`` the full upstream tree is kept under ``<cache>/unpacked/<sha256 of the wheel>`` for later
        checks (its ``__pycache__`` too, so later probes import faster).

        Combined members raw identical to upstream are hard-linked from the upstream tree when it exists (saves
        decompressing libtorch twice). Executable modes are kept.
        """
        with self._trees_lock:
            return self._tree(which, keep)

    def _tree(self, which: str, keep: Callable[[str], bool] | None) -> Path:
        key = which if keep is None else f"{which}-filtered"
        for cached in (which, key):
            if cached in self._trees:
                return self._trees[cached]
        if which == "upstream" and self.cache:
            self._trees["upstream"] = self._cached_upstream_tree()
            return self._trees["upstream"]
        reader = self.up if which == "upstream" else self.new
        up_root = None
        if which == "combined":
            up_root = self._trees.get("upstream" if keep is None else "upstream-filtered", self._trees.get("upstream"))
        root = self._tmp_path / key
        self._unpack(reader, root, keep, up_root)
        self._trees[key] = root
        return root

    def _cached_upstream_tree(self) -> Path:
        """The upstream tree under ``<cache>/unpacked/<sha256 of the wheel>``, unpacked once and verified at each use.

        A cached tree is trusted only when every file still has the digest recorded when it was unpacked
        (:func:`~catch_tools.wheel.unpack.verify_tree`); a changed or incomplete tree is moved aside, removed and
        unpacked again, with a warning naming what changed.
        """
        base = cache_dir() / "unpacked" / self.upstream_sha256()
        base.parent.mkdir(parents=True, exist_ok=True)
        if base.is_symlink() or (base.exists() and not base.is_dir()):  # not a tree of ours: set it aside
            log.warning("cached upstream tree %s is not a directory: unpacking it again", base)
            base.unlink()
        if base.is_dir():
            problem = verify_tree(base)
            if problem is None:
                return base
            log.warning("cached upstream tree %s is not as unpacked (%s): unpacking it again", base, problem)
            doomed = Path(tempfile.mkdtemp(prefix=f".{base.name}.stale-", dir=base.parent))
            with contextlib.suppress(OSError):
                base.rename(doomed / "tree")
            shutil.rmtree(doomed, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{base.name}.", suffix=".tmp", dir=base.parent))
        try:
            record_tree(staging, self._unpack(self.up, staging, None, None))
            try:
                staging.rename(base)
            except OSError:  # a concurrent check finished first: use its tree once it verifies
                if verify_tree(base) is not None:
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return base

    def _unpack(self, reader: RawZipReader, root: Path, keep: Callable[[str], bool] | None,
                up_root: Path | None) -> dict[str, str]:
        """Unpack ``reader``'s members for import into ``root`` (new files only, see :mod:`catch_tools.wheel.unpack`);
        members raw identical to upstream are hard-linked from ``up_root`` when given. Returns the files' digests."""
        up_names = {self.counterpart(m.name): m for m in self.up.members} if up_root else {}
        unpacker = Unpacker(root)
        todo: list[RawMember] = []
        linked: set[str] = set()
        for member in reader.members:
            name = member.name
            if name.endswith("/") or not wanted_for_import(name) or (keep and not keep(name)):
                continue
            up_member = up_names.get(name)
            if up_root is not None and up_member is not None and self.raw_identical(up_member) \
                    and unpacker.link(up_root / up_member.name, name):
                linked.add(name)  # missing (filtered tree) or another file system: unpacked instead
                continue
            todo.append(member)
        # zlib releases the GIL: two threads, largest first, overlap libtorch_cpu.so with everything else
        unpack_members(reader, todo, unpacker, threads=2)
        if up_root is not None:
            _link_bytecode(up_root, root, linked)
        return unpacker.digests


def _link_bytecode(up_root: Path, root: Path, linked: set[str]) -> None:
    """Hard-link ``__pycache__/<stem>.*.pyc`` of the upstream tree for sources linked into ``root``.

    A linked source is the same inode (same mtime and size), so the bytecode CPython wrote for it while probing the
    cached upstream tree is valid here too (PEP 3147 layout, PEP 552 timestamp validation): the probe of the combined
    wheel then compiles only the files that differ.
    """
    for cache in up_root.rglob("__pycache__"):
        rel_dir = cache.parent.relative_to(up_root)
        for pyc in cache.glob("*.pyc"):
            source = (rel_dir / (pyc.name.split(".", 1)[0] + ".py")).as_posix()
            if source not in linked:
                continue
            dest = root / rel_dir / "__pycache__" / pyc.name
            dest.parent.mkdir(exist_ok=True)
            with contextlib.suppress(OSError):
                os.link(pyc, dest)
