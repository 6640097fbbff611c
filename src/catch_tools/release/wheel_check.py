# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Checking a wheel before it is published (:mod:`catch_tools.release.index`): a valid wheel file name (PEP 427)
made only of the characters of the wheel-name grammar and in its normal form, one ``.dist-info`` whose METADATA
``Name``/``Version`` and WHEEL ``Tag`` lines agree with the file name
(:func:`~catch_tools.wheel.metadata.check_wheel_identity`), and a RECORD that lists and matches every member."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import BuildTag, NormalizedName, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from catch_tools.errors import UserError
from catch_tools.wheel.metadata import check_wheel_identity, dist_info_dir, member_text
from catch_tools.wheel.record import check_listing, parse_record, verify_members
from catch_tools.wheel.zipraw import RawZipReader

_WHEEL_NAME = re.compile(r"[A-Za-z0-9._!+-]+\.whl")


@dataclass(frozen=True)
class CheckedWheel:
    """A wheel :func:`check_wheel` accepted: its path, project (canonical name), version, the sha256 (hex) of the
    bytes checked, its METADATA bytes and Requires-Python."""

    path: Path
    project: NormalizedName
    version: Version
    sha256: str
    metadata: bytes
    requires_python: str | None


def sha256_file(path: Path) -> str:
    """Hex sha256 of ``path``'s bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def check_wheel_filename(wheel: Path) -> tuple[NormalizedName, Version, BuildTag, frozenset[Tag]]:
    """The parts of a wheel file name (``packaging.utils.parse_wheel_filename``) once it is known to be safe.

    Raises:
        UserError: not a valid wheel file name (PEP 427), or a character outside the wheel-name grammar (letters,
            digits, ``. _ ! + -``) that ``parse_wheel_filename`` lets through (e.g. ``"<>`` or a newline in a tag).
            The name is quoted (``repr``) in the message, which names the directory.
    """
    name = wheel.name
    if not _WHEEL_NAME.fullmatch(name):
        raise UserError(f"{name!r} is not a valid wheel file name: only letters, digits and . _ ! + - may appear "
                        "(PEP 427)", path=wheel.parent)
    try:
        return parse_wheel_filename(name)
    except ValueError as err:  # InvalidWheelFilename, an invalid version
        raise UserError(f"{name!r} is not a valid wheel file name: {err}", path=wheel.parent) from None


def normalized_wheel_filename(name: str) -> str:
    """The normal form of the valid wheel file name ``name`` (``torch-2.13.00+CPU.catch1-…`` ->
    ``torch-2.13.0+cpu.catch1-…``).

    Rules (binary distribution format spec, "Escaping and Unicode"): the project name canonicalised
    (``packaging.utils.canonicalize_name``) with ``-`` written ``_``; the version in PEP 440 normal form
    (``str(packaging.version.Version)``); the build tag as ``packaging`` reads it (its number, then its text); the
    tags in lower case (``packaging.tags.Tag`` compares them so), in the order given.

    Raises:
        ValueError: ``name`` is not a valid wheel file name (``packaging.utils.parse_wheel_filename``).
    """
    project, version, build, _tags = parse_wheel_filename(name)
    parts = name[: -len(".whl")].split("-")
    fields = [canonicalize_name(project).replace("-", "_"), str(version)]
    if build:
        fields.append(f"{build[0]}{build[1]}")
    return "-".join([*fields, *(part.lower() for part in parts[-3:])]) + ".whl"


def _regular_file(path: Path, what: str) -> os.stat_result:
    """``os.stat`` of ``path``, which must be a regular file (a FIFO or device is refused, never opened)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise UserError(f"no such {what}", path=path) from None
    except OSError as err:
        raise UserError(f"cannot read: {err.strerror}", path=path) from None
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"not a regular file: a {what} must be a file", path=path)
    return st


def _headers(text: str) -> dict[str, list[str]]:
    message = HeaderParser().parsestr(text, headersonly=True)
    fields: dict[str, list[str]] = {}
    for key, value in message.items():
        fields.setdefault(key.lower(), []).append(str(value).strip())
    return fields


def requires_python(metadata: bytes) -> str | None:
    """The ``Requires-Python`` field of a METADATA file (None when absent)."""
    value = HeaderParser().parsestr(metadata.decode("utf-8", "replace"), headersonly=True).get("Requires-Python")
    return str(value).strip() if value else None


def check_wheel(wheel: Path) -> CheckedWheel:
    """Check that ``wheel`` is what its file name says, and return what the index needs of it.

    Rules: the file name is valid and safe (:func:`check_wheel_filename`) and in its normal form
    (:func:`normalized_wheel_filename`: else one wheel name could be published twice, spelled twice); the wheel has
    exactly one ``.dist-info`` directory, of the file name's project and version (PEP 427; pip refuses several);
    its METADATA ``Name`` and ``Version`` equal the file name's (compared canonicalized / as PEP 440 versions: pip
    refuses a wheel whose metadata version differs, "inconsistent version"), ``Requires-Python`` is a valid
    specifier; its WHEEL file has ``Wheel-Version`` 1.x, ``Tag`` lines giving exactly the file name's tags and the
    file name's build tag (PEP 427/491); RECORD lists every member with a matching sha256 and size (PEP 376).

    Raises:
        UserError: any rule broken (one line naming the wheel, or ``wheel!member`` and the line; a name not in its
            normal form is told its normal form), a missing file or one that is not a regular file, or an
            unreadable zip (the message of :class:`RawZipReader`).
    """
    project, version, build, tags = check_wheel_filename(wheel)
    normal = normalized_wheel_filename(wheel.name)
    if wheel.name != normal:
        raise UserError(f"{wheel.name!r} is not a normalized wheel file name: rename it {normal!r} (binary "
                        "distribution format spec: canonical project name, PEP 440 normal version, lower-case "
                        "tags)", path=wheel.parent)
    _regular_file(wheel, "wheel")
    try:
        reader = RawZipReader(wheel)
    except UserError as err:
        raise UserError(f"cannot read the wheel: {err.message}", path=wheel, exit_code=err.exit_code) from None
    with reader:
        dist_info = check_wheel_identity(reader)
        meta_name, record_name = f"{dist_info}/METADATA", f"{dist_info}/RECORD"
        if reader.get(record_name) is None:
            raise UserError(f"the wheel has no {record_name}", path=wheel)
        metadata = reader.read(meta_name)
        where = f"{wheel}!{meta_name}"
        python = next(iter(_headers(member_text(reader, meta_name)).get("requires-python", [])), None)
        if python is not None:
            try:
                SpecifierSet(python)
            except InvalidSpecifier:
                raise UserError(f"invalid Requires-Python {python!r}", path=where) from None
        rows = parse_record(member_text(reader, record_name), f"{wheel}!{record_name}")
        check_listing(reader, rows, record_name)
        verify_members(reader, rows, reader.members, record_name)
        digest = hashlib.sha256(reader.mapping()).hexdigest()
    return CheckedWheel(wheel, project, version, digest, metadata, python)


def wheel_metadata(wheel: Path) -> bytes:
    """The ``*.dist-info/METADATA`` bytes of ``wheel`` (no other check: for files already in the index).

    Raises:
        UserError: not a valid wheel file name, not a readable zip, or no single METADATA in its ``.dist-info``.
    """
    check_wheel_filename(wheel)
    try:
        reader = RawZipReader(wheel)
    except UserError as err:
        raise UserError(f"cannot read the wheel: {err.message}", path=wheel, exit_code=err.exit_code) from None
    with reader:
        return reader.read(f"{dist_info_dir(reader)}/METADATA")
