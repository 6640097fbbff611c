# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Derive a wheel from another with some members replaced, removed or added; the rest raw-copied, RECORD rewritten.

For experiments and tests of the interface check (a combined wheel with one header edited, one symbol removed, ...)
and for quick local fixes of a built wheel. The input's RECORD rows are reused for copied members (the input is not
re-verified: use :func:`catch_tools.wheel.record.verify_wheel` first if it is untrusted).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.wheel.metadata import split_wheel_filename
from catch_tools.wheel.record import RecordRow, format_record, parse_record, record_digest
from catch_tools.wheel.zipraw import RawZipReader, dos_datetime, open_writer


def edit_wheel(src: Path, dst: Path, changes: Mapping[str, bytes | None], *, epoch: int = 1577836800) -> Path:
    """Write ``dst`` = ``src`` with ``changes`` applied (``None`` removes a member; new names are appended sorted).

    Edited members get timestamp ``epoch`` (default 2020-01-01) and keep their mode (new ones 0644); the
    ``.dist-info`` RECORD is regenerated. ``dst`` is written under a temporary name and renamed.

    Raises:
        UserError: ``src`` unreadable, no RECORD, or a removal of a member that does not exist.
    """
    name, version, _tags = split_wheel_filename(src.name)
    record_name = f"{name}-{version}.dist-info/RECORD"
    stamp = dos_datetime(epoch)
    partial = dst.with_name(f".{dst.name}.{os.getpid()}.partial")
    with RawZipReader(src) as reader:
        if reader.get(record_name) is None:
            raise UserError(f"wheel has no {record_name}", path=src)
        old_rows = parse_record(reader.read(record_name).decode("utf-8"), record_name)
        for path, data in changes.items():
            if data is None and reader.get(path) is None:
                raise UserError(f"cannot remove {path}: no such member", path=src)
        rows: list[RecordRow] = []
        try:
            with open_writer(partial) as writer:
                for member in reader.members:
                    if member.name == record_name:
                        continue
                    if member.name in changes:
                        data = changes[member.name]
                        if data is None:
                            continue
                        writer.add(member.name, data, stamp, (member.external_attr >> 16) & 0o777 or 0o644)
                        rows.append(RecordRow(member.name, record_digest(data), len(data)))
                    else:
                        writer.copy_raw(reader, member)
                        old = old_rows[member.name]
                        rows.append(RecordRow(member.name, old.digest, old.size))
                for path in sorted(p for p, d in changes.items() if d is not None and reader.get(p) is None):
                    data = changes[path]
                    assert data is not None
                    writer.add(path, data, stamp)
                    rows.append(RecordRow(path, record_digest(data), len(data)))
                rows.append(RecordRow(record_name, "", None))
                writer.add(record_name, format_record(rows), stamp)
            partial.replace(dst)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return dst
