# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Raw zip member copy: move compressed members from one zip archive to another without recompressing them.

Why our own writer: :mod:`zipfile` can read a member's metadata but has no public API to write an already-compressed
member; ``wheel pack`` therefore recompresses all 700 MB of the torch wheel (tens of seconds). A member of a zip
archive is self-contained: a local file header (method, CRC-32, sizes, name) followed by the compressed bytes; the
central directory at the end repeats the header fields plus the member's offset (APPNOTE.TXT 6.3.10, sections 4.3.7,
4.3.12, 4.3.16). So a copy is: read the member's compressed bytes at ``local header offset + 30 + name + extra``, write
a fresh local header carrying the same CRC/sizes/method, the same bytes, and a matching central-directory row.

Reading uses :mod:`zipfile` for the central directory (well kept, validates the end record) and :mod:`mmap` for the
bytes. Writing is done here: local headers without extra fields and without data descriptors (sizes are known), one
central directory, one end record. ZIP64 is not written: an archive over 4 GiB or with more than 65535 members is
refused with a :class:`~catch_tools.errors.UserError` (the largest torch wheels are far below both limits).
Encrypted members are refused too (wheels never use them).

This reader is the one way the tools open a wheel, so it is also where hostile archives stop: opening refuses member
names that could leave or confuse an extraction directory (:func:`unsafe_member_reason`), symlink and other
non-regular members, and two members that would land on the same path. The rules follow PEP 427 (a wheel's members
are relative ``/``-separated paths inside the install root) and the checks of CPython's own ``zipfile`` extraction
(which drops ``..`` and drive letters instead of refusing them: a wheel that needs that is not one we install).
"""

from __future__ import annotations

import contextlib
import mmap
import re
import stat
import struct
import time
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from catch_tools.errors import UserError
from catch_tools.userfiles import open_regular_file

_LOCAL = struct.Struct("<IHHHHHIIIHH")  # APPNOTE 4.3.7
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # APPNOTE 4.3.12
_END = struct.Struct("<IHHHHIIH")  # APPNOTE 4.3.16
_LOCAL_SIG, _CENTRAL_SIG, _END_SIG = 0x04034B50, 0x02014B50, 0x06054B50
_MADE_BY = (3 << 8) | 20  # Unix attributes, spec 2.0
_NEEDED = 20  # deflate needs 2.0
_FLAG_ENCRYPTED, _FLAG_DESCRIPTOR, _FLAG_UTF8 = 0x01, 0x08, 0x800
_LIMIT32 = 0xFFFFFFFF

DateTime = tuple[int, int, int, int, int, int]

_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Unicode categories refused in member names: controls (C0 and C1, e.g. U+0085 NEL), format characters (e.g. U+202E
#: RIGHT-TO-LEFT OVERRIDE, which makes ``torch/\u202eyp.exe`` display as ``torch/exe.py``; zero-width characters),
#: line and paragraph separators (U+2028, U+2029: they split a line in logs and in RECORD), surrogates and private use.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co"})
#: Zip bombs: deflate reaches about 1032:1. A member larger than :data:`_BOMB_FLOOR` whose declared size is more than
#: :data:`_BOMB_RATIO` times its compressed size is refused; the text and code of real wheels stay far below.
_BOMB_RATIO = 200
_BOMB_FLOOR = 1 << 20
_ALLOWED_TYPES = (0, stat.S_IFREG, stat.S_IFDIR)  # 0: no Unix mode recorded (archives made on Windows)


def unsafe_member_reason(name: str, external_attr: int = 0) -> str | None:
    """Why member ``name`` must not be extracted or copied, or None when it is a plain relative path.

    Refused: an empty name; an absolute path (``/x``); a drive letter (``C:x``); a backslash (a separator on Windows);
    a control character (a NUL ends the name for C readers, a newline splits log lines); an empty, ``.`` or ``..``
    segment (``a//b``, ``torch/./x``, ``torch/../../x``: they alias or leave the root); a Unix mode in
    ``external_attr`` that is a symlink or any other non-regular, non-directory type. A trailing ``/`` marks a
    directory entry and is allowed.
    """
    if not name:
        return "empty member name"
    if name.startswith("/"):
        return "absolute member path"
    if _DRIVE.match(name):
        return "member path with a drive letter"
    if "\\" in name:
        return "backslash in member path"
    if _CONTROL.search(name) or any(unicodedata.category(ch) in _HIDDEN_CATEGORIES for ch in name if ord(ch) > 0x7E):
        return "control, format or line-separator character in member name"
    parts = (name[:-1] if name.endswith("/") else name).split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "empty, '.' or '..' segment in member path"
    kind = stat.S_IFMT(external_attr >> 16)
    if kind not in _ALLOWED_TYPES:
        return "symlink member" if kind == stat.S_IFLNK else f"non-regular member (file type {kind:o})"
    return None


def check_member_names(infos: list[zipfile.ZipInfo], path: Path) -> None:
    """Refuse an archive whose members are unsafe (:func:`unsafe_member_reason`) or collide on one path.

    Two members collide when their names are equal after Unicode NFC normalization and with any trailing ``/``
    removed (a duplicate, or a file and a directory entry of the same name), or when one file's name is a directory
    of another member's path (``torch/a.py`` and ``torch/a.py/b.py``). CPython's ``zipfile`` also truncates a name at
    a NUL: a central-directory name that differs from the stored one is refused too.

    Raises:
        UserError: naming the archive and the first offending member.
    """
    files: set[str] = set()
    dirs: set[str] = set()
    seen: set[str] = set()
    for info in infos:
        shown = info.orig_filename if info.orig_filename.isprintable() else ascii(info.orig_filename)
        reason = "NUL in member name" if info.filename != info.orig_filename else \
            unsafe_member_reason(info.filename, info.external_attr)
        if reason:
            raise UserError(f"unsafe wheel member {shown}: {reason}", path=path)
        key = unicodedata.normalize("NFC", info.filename.rstrip("/"))
        if key in seen:
            raise UserError(f"unsafe wheel member {shown}: a second member with this path", path=path)
        seen.add(key)
        parents = key.split("/")[:-1]
        prefixes = ["/".join(parents[: i + 1]) for i in range(len(parents))]
        clash = next((p for p in prefixes if p in files), None)
        if clash is None and not info.filename.endswith("/") and key in dirs:
            clash = key
        if clash is not None:
            raise UserError(f"unsafe wheel member {shown}: {clash} is both a file and a directory", path=path)
        dirs.update(prefixes)
        if info.filename.endswith("/"):
            dirs.add(key)
        else:
            files.add(key)


def dos_datetime(epoch: int) -> DateTime:
    """UTC ``(Y, M, D, h, m, s)`` for a Unix time, clamped to the zip range 1980-01-01 .. 2107-12-31."""
    tm = time.gmtime(max(315532800, min(epoch, 4354819199)))
    return (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)


def _dos_pack(dt: DateTime) -> tuple[int, int]:
    year, month, day, hour, minute, sec = dt
    return (hour << 11) | (minute << 5) | (sec // 2), ((year - 1980) << 9) | (month << 5) | day


@dataclass(frozen=True)
class RawMember:
    """One member of a source archive, located for a raw copy.

    ``data_offset``/``compress_size`` are byte offsets/lengths in the source file; ``crc`` is the CRC-32 of the
    uncompressed bytes (``file_size`` long); ``method`` is the zip compression method (0 stored, 8 deflate).
    """

    name: str
    data_offset: int
    compress_size: int
    file_size: int
    crc: int
    method: int
    flags: int
    date_time: DateTime
    external_attr: int


class RawZipReader:
    """A zip archive opened for raw member access (``with RawZipReader(path) as zr``).

    Raises:
        UserError: not a zip file, truncated, a member whose local header is missing or disagrees with the
            central directory, an encrypted member, or an unsafe member name (:func:`check_member_names`).
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self._fh: BinaryIO = open_regular_file(self.path, "a wheel")  # closed in close()
        except OSError as err:
            raise UserError(f"cannot open: {err.strerror}", path=self.path) from None
        try:
            self._mm = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ)
            with zipfile.ZipFile(self._fh) as zf:
                infos = zf.infolist()
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
            self._fh.close()
            raise UserError(f"not a readable wheel (corrupt or truncated zip): {err}", path=self.path) from None
        try:
            check_member_names(infos, self.path)
            self.members: list[RawMember] = [self._locate(info) for info in infos]
        except UserError:
            self.close()
            raise
        self._by_name = {m.name: m for m in self.members}

    def _locate(self, info: zipfile.ZipInfo) -> RawMember:
        off = info.header_offset
        if off + _LOCAL.size > len(self._mm):
            raise UserError(f"truncated zip: local header of {info.filename} is past the end", path=self.path)
        fields = _LOCAL.unpack_from(self._mm, off)
        if fields[0] != _LOCAL_SIG:
            raise UserError(f"corrupt zip: bad local header for {info.filename}", path=self.path)
        name_len, extra_len = fields[9], fields[10]
        start = off + _LOCAL.size
        local_name = bytes(self._mm[start : start + name_len])
        expected = info.orig_filename.encode("utf-8" if info.flag_bits & _FLAG_UTF8 else "cp437")
        if local_name != expected:
            raise UserError(f"corrupt zip: local header name differs for {info.filename}", path=self.path)
        if info.flag_bits & _FLAG_ENCRYPTED:
            raise UserError(f"encrypted member {info.filename} (not allowed in a wheel)", path=self.path)
        data = start + name_len + extra_len
        if info.file_size > _BOMB_FLOOR and info.file_size > _BOMB_RATIO * max(info.compress_size, 1):
            raise UserError(f"member {info.filename} would expand {info.compress_size} bytes to {info.file_size} "
                            f"(over {_BOMB_RATIO}:1: a zip bomb, not a wheel)", path=self.path)
        if data + info.compress_size > len(self._mm):
            raise UserError(f"truncated zip: data of {info.filename} is past the end", path=self.path)
        return RawMember(
            name=info.filename,
            data_offset=data,
            compress_size=info.compress_size,
            file_size=info.file_size,
            crc=info.CRC,
            method=info.compress_type,
            flags=info.flag_bits,
            date_time=info.date_time,
            external_attr=info.external_attr,
        )

    def __enter__(self) -> RawZipReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the mapping and the file (a mapping still viewed by a live memoryview is left to the GC)."""
        with contextlib.suppress(BufferError):
            self._mm.close()
        self._fh.close()

    def names(self) -> list[str]:
        """Member names in archive order."""
        return [m.name for m in self.members]

    def get(self, name: str) -> RawMember | None:
        """The member called ``name``, or None."""
        return self._by_name.get(name)

    def raw(self, member: RawMember) -> memoryview:
        """The member's compressed bytes (a view into the mapping; valid until :meth:`close`)."""
        return memoryview(self._mm)[member.data_offset : member.data_offset + member.compress_size]

    def read(self, member: RawMember | str) -> bytes:
        """The member's uncompressed bytes, checked against its CRC-32 and size.

        Raises:
            UserError: unknown member, unsupported method, or corrupt data (CRC/size mismatch, bad deflate stream).
        """
        if isinstance(member, str):
            found = self.get(member)
            if found is None:
                raise UserError(f"member {member} not found", path=self.path)
            member = found
        if member.method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise UserError(f"member {member.name}: unsupported compression method {member.method}", path=self.path)
        error = None
        with self.raw(member) as raw:  # released before any exception leaves (the mapping can then be closed)
            try:
                # never more than the declared size plus one byte: a lying header cannot make us allocate more
                data = bytes(raw) if member.method == zipfile.ZIP_STORED else \
                    zlib.decompressobj(-15).decompress(raw, member.file_size + 1)
            except zlib.error as err:
                data, error = b"", str(err)
        if error is not None:
            raise UserError(f"corrupt data in {member.name}: {error}", path=self.path)
        if len(data) != member.file_size or zlib.crc32(data) != member.crc:
            raise UserError(f"corrupt data in {member.name}: CRC-32 or size mismatch", path=self.path)
        return data

    def mapping(self) -> mmap.mmap:
        """The whole file, memory-mapped (for hashing the input)."""
        return self._mm


@dataclass
class _Written:
    name: bytes
    flags: int
    method: int
    dostime: int
    dosdate: int
    crc: int
    compress_size: int
    file_size: int
    external_attr: int
    offset: int


class RawZipWriter:
    """Write a zip archive member by member: raw copies and newly compressed members, in call order.

    Use :func:`open_writer`. Member names must be unique (checked); the central directory is written by
    :meth:`finish`. ``path`` is the archive named in errors (the final name when ``fh`` is a temporary file).
    """

    def __init__(self, fh: BinaryIO, path: str | Path | None = None):
        self._fh = fh
        self.path = None if path is None else Path(path)
        self._rows: list[_Written] = []
        self._sources: dict[str, str] = {}
        self._offset = 0

    def _header(self, name: str, flags: int, method: int, dt: DateTime, crc: int, csize: int, usize: int,
                attr: int, source: str) -> None:
        first = self._sources.get(name)
        if first is not None:
            again = "again" if source == first else f"and from {source}"
            raise UserError(f"duplicate zip member {name}: written from {first} {again}", path=self.path)
        self._sources[name] = source
        try:
            encoded = name.encode("ascii")
            flags &= ~_FLAG_UTF8
        except UnicodeEncodeError:
            encoded = name.encode("utf-8")
            flags |= _FLAG_UTF8
        flags &= ~_FLAG_DESCRIPTOR
        if csize > _LIMIT32 or usize > _LIMIT32 or self._offset > _LIMIT32 or len(self._rows) >= 0xFFFF:
            raise UserError(f"archive would need ZIP64 at member {name} (over 4 GiB or 65535 members)",
                            path=self.path)
        dostime, dosdate = _dos_pack(dt)
        self._fh.write(_LOCAL.pack(_LOCAL_SIG, _NEEDED, flags, method, dostime, dosdate, crc, csize, usize,
                                   len(encoded), 0))
        self._fh.write(encoded)
        self._rows.append(_Written(encoded, flags, method, dostime, dosdate, crc, csize, usize, attr, self._offset))
        self._offset += _LOCAL.size + len(encoded) + csize

    def copy_raw(self, reader: RawZipReader, member: RawMember, name: str | None = None) -> None:
        """Copy ``member`` from ``reader`` as is (same compressed bytes, CRC, timestamp, mode), optionally renamed.

        Raises:
            UserError: a member of that name was already written (naming this archive and both sources), or the
                archive would need ZIP64.
        """
        self._header(name or member.name, member.flags, member.method, member.date_time, member.crc,
                     member.compress_size, member.file_size, member.external_attr, str(reader.path))
        with reader.raw(member) as raw:
            self._fh.write(raw)

    def add(self, name: str, data: bytes, date_time: DateTime, mode: int = 0o644, *,
            source: str | Path = "new data") -> None:
        """Add ``data`` deflated (zlib level 6, raw stream: deterministic for a given zlib) with Unix ``mode``;
        ``source`` says where ``data`` comes from (named in errors).

        Raises:
            UserError: as :meth:`copy_raw`.
        """
        comp = zlib.compressobj(6, zlib.DEFLATED, -15)
        packed = comp.compress(data) + comp.flush()
        self._header(name, 0, zipfile.ZIP_DEFLATED, date_time, zlib.crc32(data), len(packed), len(data),
                     (0o100000 | mode) << 16, str(source))
        self._fh.write(packed)

    def finish(self) -> None:
        """Write the central directory and the end record (APPNOTE 4.3.12, 4.3.16)."""
        start = self._offset
        size = 0
        for row in self._rows:
            head = _CENTRAL.pack(_CENTRAL_SIG, _MADE_BY, _NEEDED, row.flags, row.method, row.dostime, row.dosdate,
                                 row.crc, row.compress_size, row.file_size, len(row.name), 0, 0, 0, 0,
                                 row.external_attr, row.offset)
            self._fh.write(head)
            self._fh.write(row.name)
            size += len(head) + len(row.name)
        if start + size > _LIMIT32:
            raise UserError("archive would need ZIP64 (central directory past 4 GiB)", path=self.path)
        count = len(self._rows)
        self._fh.write(_END.pack(_END_SIG, 0, 0, count, count, size, start, 0))


@contextmanager
def open_writer(path: Path, *, name: str | Path | None = None) -> Iterator[RawZipWriter]:
    """Open ``path`` for writing (1 MiB buffer) and yield a :class:`RawZipWriter`; ``finish`` runs on success.

    ``name`` is the archive named in errors (default ``path``; the final name when ``path`` is a temporary file).
    """
    with open(path, "wb", buffering=1 << 20) as fh:
        writer = RawZipWriter(fh, path if name is None else name)
        yield writer
        writer.finish()
