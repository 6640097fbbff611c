# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The wheel ``RECORD`` file: parse, write, and verify members against it.

Rules (PEP 376 / the binary distribution format spec, "The .dist-info directory"): RECORD is CSV with rows
``path,hash,size``; ``hash`` is ``sha256=<urlsafe base64 without padding>`` of the file's bytes, ``size`` in bytes;
RECORD's own row and signature files (``RECORD.jws``, ``RECORD.p7s``) have empty hash and size.

Rows are read, written and checked with pypa's ``installer.records`` (``parse_record_file``,
``RecordEntry.from_elements`` / ``to_row`` / ``validate``, ``Hash``), the RECORD code pip's installer uses; this
module adds file:line errors, the sha256-only and no-duplicate rules, and the verification cache.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from installer.records import Hash, InvalidRecordEntry, RecordEntry, parse_record_file

from catch_tools.errors import UserError
from catch_tools.paths import cache_dir
from catch_tools.userfiles import write_atomic
from catch_tools.wheel.metadata import member_text
from catch_tools.wheel.zipraw import RawMember, RawZipReader

_UNHASHED_SUFFIXES = ("/RECORD", "/RECORD.jws", "/RECORD.p7s")


@dataclass(frozen=True)
class RecordRow:
    """One RECORD row: ``digest`` like ``sha256=...`` (or empty), ``size`` in bytes (or None)."""

    path: str
    digest: str
    size: int | None


def record_digest(data: bytes) -> str:
    """``sha256=<urlsafe b64, no padding>`` of ``data`` (the RECORD hash format, :class:`installer.records.Hash`)."""
    return str(Hash("sha256", base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")))


def _entry(row: RecordRow) -> RecordEntry:
    return RecordEntry(row.path, Hash.parse(row.digest) if row.digest else None, row.size)


def parse_record(text: str, where: Path | str) -> dict[str, RecordRow]:
    """Parse RECORD ``text`` into ``{path: row}`` (``installer.records``; blank lines are skipped).

    Raises:
        UserError: a row without three fields, a malformed hash or non-integer size, a hash other than sha256, a
            duplicate path; the message names ``where`` and the 1-based line.
    """
    rows: dict[str, RecordRow] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            (elements,) = parse_record_file([line])
            entry = RecordEntry.from_elements(*elements)
        except InvalidRecordEntry as err:
            issues = "; ".join(i.split(": ", 1)[-1] for i in err.issues)
            raise UserError(f"invalid RECORD row: {issues}", path=where, line=lineno) from None
        except ValueError:  # a csv row spanning lines (an unterminated quote)
            raise UserError("invalid RECORD row: unterminated quote", path=where, line=lineno) from None
        if entry.path in rows:
            raise UserError(f"RECORD lists {entry.path} twice", path=where, line=lineno)
        if entry.hash_ is not None and entry.hash_.name != "sha256":
            raise UserError(f"RECORD hash of {entry.path} is not sha256", path=where, line=lineno)
        rows[entry.path] = RecordRow(entry.path, str(entry.hash_) if entry.hash_ else "", entry.size)
    return rows


def format_record(rows: Iterable[RecordRow]) -> bytes:
    """RECORD bytes for ``rows`` in the given order (``RecordEntry.to_row``, ``\n`` line ends, csv quoting as
    installer and pip write it)."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=",", quotechar='"', lineterminator="\n")
    for row in rows:
        writer.writerow(_entry(row).to_row())
    return out.getvalue().encode("utf-8")


def is_unhashed(name: str) -> bool:
    """True for RECORD itself and its signatures (rows with empty hash)."""
    return name.endswith(_UNHASHED_SUFFIXES)


def check_listing(reader: RawZipReader, rows: dict[str, RecordRow], record_name: str) -> None:
    """Every member is in RECORD with a hash and every row names a member.

    Raises:
        UserError: a member missing from RECORD, a row for a missing member, or a member row without hash.
    """
    names = [m.name for m in reader.members if not m.name.endswith("/")]
    where = f"{reader.path}!{record_name}"
    for name in names:
        row = rows.get(name)
        if row is None:
            raise UserError(f"member {name} is not listed in RECORD", path=where)
        if not row.digest and not is_unhashed(name):
            raise UserError(f"RECORD row of {name} has no hash", path=where)
    present = set(names)
    for path in rows:
        if path not in present:
            raise UserError(f"RECORD lists {path} but the wheel has no such member", path=where)


def verify_members(reader: RawZipReader, rows: dict[str, RecordRow], members: Iterable[RawMember],
                   record_name: str) -> None:
    """Decompress each member and compare its sha256 and size with its RECORD row (2 threads, largest first).

    zlib and hashlib release the GIL on large buffers, so threads overlap the big ``libtorch_cpu.so`` with the rest.

    Raises:
        UserError: the first member (in archive order) whose bytes do not match RECORD, or corrupt data.
    """
    todo = sorted((m for m in members if not is_unhashed(m.name) and not m.name.endswith("/")),
                  key=lambda m: -m.file_size)
    order = {m.name: i for i, m in enumerate(reader.members)}

    def one(member: RawMember) -> str | None:
        data = reader.read(member)
        row = rows[member.name]
        if row.size is not None and row.size != len(data):
            return f"size of {member.name} is {len(data)}, RECORD says {row.size}"
        if not row.digest or not _entry(row).validate(data):
            return f"sha256 of {member.name} does not match RECORD"
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(zip(todo, pool.map(one, todo), strict=True))
    bad = sorted(((order[m.name], msg) for m, msg in results if msg), key=lambda x: x[0])
    if bad:
        raise UserError(f"{bad[0][1]} ({len(bad)} member(s) differ): the wheel is corrupt",
                        path=f"{reader.path}!{record_name}")


def file_sha256(reader: RawZipReader) -> str:
    """Hex sha256 of the whole archive file (the key of the verification cache)."""
    return hashlib.sha256(reader.mapping()).hexdigest()


def verify_wheel(reader: RawZipReader, record_name: str, *, use_cache: bool = True) -> dict[str, RecordRow]:
    """Check RECORD lists every member and every member's sha256/size matches; return the parsed rows.

    A full verification of the 192 MB torch wheel decompresses 700 MB, which takes seconds. Its result is cached under
    ``<cache>/verified-wheels/<sha256 of the whole file>``: a byte-identical file was verified before, and any
    corruption or truncation changes the file hash, so it is verified again. ``use_cache=False`` always verifies.

    Raises:
        UserError: missing/extra rows or a hash/size mismatch (see :func:`check_listing`, :func:`verify_members`).
    """
    rows = read_rows(reader, record_name)
    verify_rows(reader, rows, record_name, use_cache=use_cache)
    return rows


def read_rows(reader: RawZipReader, record_name: str) -> dict[str, RecordRow]:
    """Parse RECORD and check it lists exactly the members (:func:`check_listing`); no hashing (fast).

    Raises:
        UserError: no RECORD, RECORD not UTF-8, a malformed row, a member missing from RECORD or a row without member.
    """
    if reader.get(record_name) is None:
        raise UserError(f"wheel has no {record_name}", path=reader.path)
    rows = parse_record(member_text(reader, record_name), f"{reader.path}!{record_name}")
    check_listing(reader, rows, record_name)
    return rows


def verify_rows(reader: RawZipReader, rows: dict[str, RecordRow], record_name: str, *, use_cache: bool = True) -> None:
    """The hashing half of :func:`verify_wheel` (cache lookup, full verification, cache marker).

    Thread-safe with respect to other reads of ``reader`` (the combined build runs it while writing).
    """
    marker = None
    if use_cache:
        marker = cache_dir() / "verified-wheels" / file_sha256(reader)
        if marker.is_file():
            return
    verify_members(reader, rows, reader.members, record_name)
    if marker is not None:
        marker.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(marker, json.dumps({"wheel": reader.path.name, "members": len(reader.members)}) + "\n")
