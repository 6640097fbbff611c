# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Layer 0: files and metadata.

Rules: every upstream file is present (a removed file can break any importer or linker: incompatible); files that
extensions compile against -- ``torch/include/**`` and ``torch/share/cmake/**`` -- are byte-identical (incompatible);
``WHEEL`` tags, ``Root-Is-Purelib``, ``Requires-Dist``, ``Provides-Extra`` and ``Requires-Python`` equal (incompatible:
installers would resolve differently; requirements of an extra the combined wheel adds, such as ``migration``, apply
only to who asks for it and are left out: a requirement belongs to an extra only when its marker is exactly
``extra == "name"``, the build's rule, :func:`catch_tools.wheel.metadata.requirement_extra`); every upstream entry point
is still declared unchanged, and the combined ``entry_points.txt`` follows
:func:`catch_tools.wheel.metadata.parse_entry_points` (incompatible: ``torchrun`` or a plugin would vanish, or an entry
hidden in a value would reach some readers); added files only under the backend package and the ``.dist-info`` (else:
review); changed files other than Python sources, shared objects (layers 3 and 1 judge those) and the version/metadata
files the build edits need review; the combined RECORD lists every member with its right hash (incompatible: pip would
install a wheel whose contents it cannot verify).
"""

from __future__ import annotations

from packaging.utils import canonicalize_name

from catch_tools.errors import UserError
from catch_tools.interfaces.pair import WheelPair
from catch_tools.interfaces.report import ERROR, INCOMPATIBLE, REVIEW, LayerResult
from catch_tools.wheel.inputs import BACKEND_PACKAGE
from catch_tools.wheel.metadata import backend_extras, member_text, metadata_field, parse_entry_points
from catch_tools.wheel.record import is_unhashed, parse_record, record_digest
from catch_tools.wheel.zipraw import RawZipReader

BACKEND_PREFIXES = (f"{BACKEND_PACKAGE}/",)
FROZEN_PREFIXES = ("torch/include/", "torch/share/cmake/")
#: Files the combined build edits on purpose.
EDITED = ("torch/version.py",)
_EDITED_DIST_INFO = ("METADATA", "entry_points.txt", "top_level.txt", "RECORD")


def is_shared_object(name: str) -> bool:
    """``*.so`` or ``*.so.N``: judged by layer 1."""
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".so") or ".so." in base


def _wheel_fields(pair: WheelPair, which: str) -> dict[str, list[str]]:
    """The installer-relevant fields; the combined wheel's requirements of extras upstream lacks are left out.

    An added extra (``Provides-Extra`` upstream does not have, e.g. the backend's ``migration``) changes nothing
    for an install of ``torch`` or of upstream's extras: its requirements apply only when that extra is asked for.
    Upstream's own extras must keep their names and requirements.
    """
    reader, di = (pair.up, pair.up_di) if which == "upstream" else (pair.new, pair.new_di)
    wheel = member_text(reader, f"{di}/WHEEL", exit_code=1) if reader.get(f"{di}/WHEEL") else ""
    meta = member_text(reader, f"{di}/METADATA", exit_code=1)
    requires = metadata_field(meta, "Requires-Dist")
    extras = set(metadata_field(meta, "Provides-Extra"))
    if which != "upstream":
        up_meta = member_text(pair.up, f"{pair.up_di}/METADATA", exit_code=1)
        up_extras = set(metadata_field(up_meta, "Provides-Extra"))
        added = {canonicalize_name(name) for name in extras - up_extras}
        requires = [r for r in requires if not any(r in lines for name, lines in backend_extras(meta).items()
                                                   if name in added)]
        extras = up_extras & extras
    return {
        "Tag": sorted(metadata_field(wheel, "Tag")),
        "Root-Is-Purelib": metadata_field(wheel, "Root-Is-Purelib"),
        "Requires-Dist": sorted(requires),
        "Requires-Python": metadata_field(meta, "Requires-Python"),
        "Provides-Extra": sorted(extras),
    }


def check_files(pair: WheelPair) -> LayerResult:
    """Run layer 0 on ``pair`` (see module doc)."""
    res = LayerResult(0)
    up_names = set()
    changed_py = 0
    for member in pair.up.members:
        if member.name.endswith("/"):
            continue
        name = pair.counterpart(member.name)
        up_names.add(name)
        other = pair.new.get(name)
        if other is None:
            res.add(INCOMPATIBLE, "file-removed", "upstream file missing from the combined wheel", member.name)
            continue
        if pair.raw_identical(member):
            continue
        rel = name.split("/", 1)[1] if name.startswith(f"{pair.new_di}/") else ""
        if rel in _EDITED_DIST_INFO or name in EDITED:
            continue
        if pair.up.read(member) == pair.new.read(other):
            continue
        if member.name.startswith(FROZEN_PREFIXES):
            res.add(INCOMPATIBLE, "frozen-file-changed",
                    "file extensions build against differs from upstream (must be byte-identical)", member.name)
        elif member.name.endswith((".py", ".pyi")):
            changed_py += 1
        elif not is_shared_object(member.name):
            res.add(REVIEW, "file-changed", "non-Python, non-ELF file differs from upstream", member.name)
    if changed_py:
        res.notes.append(f"{changed_py} Python file(s) differ from upstream (judged by layer 3)")
    up_fields, new_fields = _wheel_fields(pair, "upstream"), _wheel_fields(pair, "combined")
    for key, value in up_fields.items():
        if new_fields[key] != value:
            res.add(INCOMPATIBLE, "metadata-changed", f"{key} differs: upstream {value}, combined {new_fields[key]}",
                    f"{pair.new_di}")
    _check_entry_points(pair, res)
    added = 0
    for member in pair.new.members:
        name = member.name
        if name.endswith("/") or name in up_names:
            continue
        added += 1
        if not (name.startswith(BACKEND_PREFIXES) or name.startswith(f"{pair.new_di}/")):
            res.add(REVIEW, "file-added-outside-backend", "file added outside the backend package and .dist-info",
                    name)
    res.notes.append(f"{added} file(s) added")
    _check_record(pair, res)
    return res


def _entry_points(reader: RawZipReader, dist_info: str) -> set[tuple[str, str, str]]:
    """The ``(group, name, value)`` entry points of the wheel, read by
    :func:`~catch_tools.wheel.metadata.parse_entry_points` (UserError when the file breaks its rules)."""
    name = f"{dist_info}/entry_points.txt"
    if reader.get(name) is None:
        return set()
    groups = parse_entry_points(member_text(reader, name, exit_code=1), f"{reader.path}!{name}")
    return {(group, key, ep.value) for group, entries in groups.items() for key, ep in entries.items()}


def _check_entry_points(pair: WheelPair, res: LayerResult) -> None:
    """Every upstream entry point (console scripts, plugin groups) is still declared, unchanged; the combined
    ``entry_points.txt`` must read the same to every reader (else incompatible: an entry hidden in a value)."""
    try:
        upstream = _entry_points(pair.up, pair.up_di)
    except UserError as err:
        res.add(ERROR, "entry-points-unreadable", f"upstream: {err.message}", f"{pair.up_di}/entry_points.txt")
        return
    try:
        kept = _entry_points(pair.new, pair.new_di)
    except UserError as err:
        where = f"{pair.new_di}/entry_points.txt" + (f":{err.line}" if err.line else "")
        res.add(INCOMPATIBLE, "entry-points-unreadable", err.message, where)
        return
    for group, key, value in sorted(upstream - kept):
        res.add(INCOMPATIBLE, "entry-point-removed", f"[{group}] {key} = {value} missing or changed",
                f"{pair.new_di}/entry_points.txt")


def _check_record(pair: WheelPair, res: LayerResult) -> None:
    """Combined RECORD: rows for all members; hashes checked for members not raw-identical to upstream."""
    record = f"{pair.new_di}/RECORD"
    if pair.new.get(record) is None:
        res.add(INCOMPATIBLE, "record-missing", "combined wheel has no RECORD", record)
        return
    rows = parse_record(member_text(pair.new, record, exit_code=1), f"{pair.new.path}!{record}")
    up_record = f"{pair.up_di}/RECORD"
    up_rows = (parse_record(member_text(pair.up, up_record, exit_code=1), f"{pair.up.path}!{up_record}")
               if pair.up.get(up_record) else {})
    up_by_new = {pair.counterpart(m.name): m for m in pair.up.members}
    listed = set()
    for member in pair.new.members:
        name = member.name
        if name.endswith("/"):
            continue
        listed.add(name)
        row = rows.get(name)
        if row is None:
            res.add(INCOMPATIBLE, "record-row-missing", "member not listed in RECORD", name)
            continue
        if is_unhashed(name):
            continue
        up_member = up_by_new.get(name)
        if up_member is not None and pair.raw_identical(up_member) and up_member.name in up_rows:
            up_row = up_rows[up_member.name]
            if (row.digest, row.size) != (up_row.digest, up_row.size):
                res.add(INCOMPATIBLE, "record-mismatch", "RECORD row differs from upstream's for an identical file",
                        name)
            continue
        data = pair.new.read(member)
        if record_digest(data) != row.digest or (row.size is not None and row.size != len(data)):
            res.add(INCOMPATIBLE, "record-mismatch", "sha256/size does not match RECORD", name)
    for path in rows:
        if path not in listed:
            res.add(INCOMPATIBLE, "record-extra-row", "RECORD lists a file the wheel does not have", path)
