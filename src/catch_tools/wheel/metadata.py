# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Wheel metadata: reading it as text, checking a wheel is what its file name says (:func:`check_wheel_identity`),
and the combined wheel's edits of torch's metadata (version, entry points, ``torch/version.py``).

Each edit takes and returns text so it can be tested on its own. Rules: METADATA is an email-style header block
(core metadata spec, "Version" field); ``entry_points.txt`` is the INI format of the entry points spec (groups in
``[brackets]``, ``name = module:attr``), read by :func:`parse_entry_points`; a requirement belongs to an extra only
when its marker is exactly ``extra == "name"`` (:func:`requirement_extra`); the wheel file name is
``{name}-{version}-{python}-{abi}-{platform}.whl`` (binary distribution format spec) and the ``.dist-info`` directory
is ``{name}-{version}.dist-info``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag, parse_tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from catch_tools.errors import UserError
from catch_tools.userfiles import decode_utf8

if TYPE_CHECKING:
    from pathlib import Path

    from catch_tools.wheel.zipraw import RawZipReader

_VERSION_PY = re.compile(r"""^__version__\s*=\s*['"][^'"]*['"]\s*$""", re.MULTILINE)
_ALL_PY = re.compile(r"""^(__all__\s*=\s*\[)([^\]]*)\]""", re.MULTILINE)
#: ``str()`` of a marker that is one clause ``extra == "name"`` (packaging writes markers in this normal form).
_EXTRA_ONLY = re.compile(r'^extra == "([^"]+)"$')
_MENTIONS_EXTRA = re.compile(r"\bextra\b")
GIT_VERSION_PY = re.compile(r"""^git_version\s*=\s*['"]([0-9a-f]{40}|Unknown)['"]""", re.MULTILINE)


def split_wheel_filename(filename: str) -> tuple[str, str, str]:
    """``torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl`` -> ``("torch", "2.13.0+cpu", "cp311-...x86_64")``.

    Raises:
        UserError: not a valid wheel file name (packaging's ``parse_wheel_filename`` rules).
    """
    try:
        parse_wheel_filename(filename)
    except InvalidWheelFilename as err:
        raise UserError(f"not a wheel file name: {err}", path=filename) from None
    parts = filename[: -len(".whl")].split("-")
    return parts[0], parts[1], "-".join(parts[2:])


def member_text(reader: RawZipReader, name: str, *, exit_code: int = 2) -> str:
    """Member ``name`` of ``reader`` as UTF-8 text (the encoding of METADATA, WHEEL, RECORD and entry points: core
    metadata spec and binary distribution format spec).

    Raises:
        UserError: no such member, corrupt data, or bytes that are not UTF-8 (one line naming ``wheel!member`` and
            the 1-based line of the first bad byte); its exit code is ``exit_code``.
    """
    try:
        data = reader.read(name)
    except UserError as err:
        err.exit_code = exit_code
        raise
    try:
        return decode_utf8(data, f"{reader.path}!{name}", "wheel metadata")
    except UserError as err:
        err.exit_code = exit_code
        raise


def dist_info_dir(reader: RawZipReader) -> str:
    """The one top-level ``*.dist-info`` directory of the wheel (binary distribution format spec: exactly one)."""
    found = sorted({m.name.split("/", 1)[0] for m in reader.members
                    if "/" in m.name and m.name.split("/", 1)[0].endswith(".dist-info")})
    if len(found) != 1:
        what = "no .dist-info directory" if not found else f"{len(found)} .dist-info directories ({', '.join(found)})"
        raise UserError(f"wheel has {what}; a wheel has exactly one", path=reader.path)
    return found[0]


def check_wheel_identity(reader: RawZipReader) -> str:
    """Refuse a wheel that is not what its file name says (e.g. a cp311 wheel renamed to cp312); return its
    ``.dist-info`` directory (:func:`dist_info_dir`).

    Rules (binary distribution format spec, PEP 427 and PEP 491; names compared normalized with packaging's
    ``canonicalize_name``, versions as PEP 440 versions, tags as sets with compressed tag sets expanded by
    ``packaging.tags.parse_tag``):

    - the file name is a wheel name (``packaging.utils.parse_wheel_filename``);
    - the wheel has exactly one top-level ``{name}-{version}.dist-info`` directory, with the file name's name and
      version;
    - its ``WHEEL`` has ``Wheel-Version`` 1.x (PEP 427: an installer must refuse a newer major version), ``Tag``
      lines giving exactly the file name's tags, and a ``Build`` field equal to the file name's build tag (both
      absent, or both the same);
    - its ``METADATA`` ``Name`` and ``Version`` are the file name's.

    Raises:
        UserError: the first rule broken, one line naming the wheel (and the member); non-UTF-8 metadata (see
            :func:`member_text`).
    """
    where = reader.path
    try:
        name, version, build, tags = parse_wheel_filename(where.name)
    except InvalidWheelFilename as err:
        raise UserError(f"not a wheel file name: {err}", path=where) from None
    dist_info = dist_info_dir(reader)
    di_name, _sep, di_version = dist_info[: -len(".dist-info")].rpartition("-")
    if canonicalize_name(di_name) != name or _version_or_none(di_version) != version:
        raise UserError(f"the wheel's {dist_info} is not the file name's {name} {version}", path=where)
    for rel in ("WHEEL", "METADATA"):
        if reader.get(f"{dist_info}/{rel}") is None:
            raise UserError(f"wheel has no {dist_info}/{rel}", path=where)
    wheel_at = f"{where}!{dist_info}/WHEEL"
    wheel = member_text(reader, f"{dist_info}/WHEEL")
    wheel_version = metadata_field(wheel, "Wheel-Version")
    if not wheel_version or wheel_version[0].split(".", 1)[0] != "1":
        raise UserError(f"Wheel-Version {wheel_version[0] if wheel_version else '(missing)'} is not 1.x "
                        "(PEP 427: only major version 1 exists)", path=wheel_at)
    wheel_tags: set[Tag] = set()
    for text in metadata_field(wheel, "Tag"):
        try:
            wheel_tags |= parse_tag(text)
        except ValueError:
            raise UserError(f"not a wheel tag: Tag: {text}", path=wheel_at) from None
    if wheel_tags != set(tags):
        shown = ".".join(sorted(str(t) for t in wheel_tags)) or "no Tag"
        raise UserError(f"the file name says {'.'.join(sorted(str(t) for t in tags))} but WHEEL says {shown} "
                        "(a renamed wheel?)", path=wheel_at)
    name_build = where.name[: -len(".whl")].split("-")[2] if build else None
    wheel_build = metadata_field(wheel, "Build")
    if (wheel_build[0] if wheel_build else None) != name_build:
        raise UserError(f"the file name's build tag {name_build or '(none)'} differs from WHEEL's Build "
                        f"{wheel_build[0] if wheel_build else '(none)'}", path=wheel_at)
    meta_at = f"{where}!{dist_info}/METADATA"
    meta = member_text(reader, f"{dist_info}/METADATA")
    meta_name, meta_version = metadata_field(meta, "Name"), metadata_field(meta, "Version")
    if not meta_name or canonicalize_name(meta_name[0]) != name:
        raise UserError(f"METADATA Name {meta_name[0] if meta_name else '(missing)'} is not the file name's {name}",
                        path=meta_at)
    if not meta_version or _version_or_none(meta_version[0]) != version:
        raise UserError(f"METADATA Version {meta_version[0] if meta_version else '(missing)'} is not the file "
                        f"name's {version}", path=meta_at)
    return dist_info


def _version_or_none(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def combined_filename(upstream_filename: str, version: str) -> str:
    """The upstream wheel's file name with its version replaced (tags kept exactly)."""
    name, _old, tags = split_wheel_filename(upstream_filename)
    return f"{name}-{version}-{tags}.whl"


def set_metadata_version(text: str, version: str, where: str) -> str:
    """Replace the ``Version:`` header of METADATA ``text``.

    Raises:
        UserError: the header block has no ``Version:`` field.
    """
    head, sep, body = text.partition("\n\n")
    new_head, count = re.subn(r"^Version: .*$", f"Version: {version}", head, count=1, flags=re.MULTILINE)
    if count != 1:
        raise UserError("METADATA has no Version field", path=where)
    return new_head + sep + body


def requirement_extra(req: Requirement) -> str | None:
    """The extra ``req`` belongs to: ``name`` when its marker is exactly the one clause ``extra == "name"``, else None.

    That is how build backends write ``[project.optional-dependencies]`` (core metadata spec, "Provides-Extra"), and
    the only form for which "this applies to ``torch[name]`` only" holds whatever the environment: a marker such as
    ``python_version >= "3" or extra == "x"`` or ``extra != "zzz"`` is true on a plain ``pip install torch``. The
    marker is judged by packaging's normal form of it (``str(req.marker)``: ``extra=='X'`` and ``(extra == "x")``
    both read ``extra == "x"``); anything else, a change of that form included, is not an extra's requirement (fails
    closed).
    """
    if req.marker is None:
        return None
    match = _EXTRA_ONLY.match(str(req.marker))
    return match.group(1) if match else None


def check_backend_requirement(text: str, where: str | Path) -> tuple[Requirement, str | None]:
    """Parse one ``Requires-Dist`` value of the backend; return it with its extra (:func:`requirement_extra`; None
    for a requirement of every install, whose marker then does not mention ``extra`` at all).

    Raises:
        UserError: not a PEP 508 requirement, or a marker that mentions ``extra`` other than as exactly
            ``extra == "name"`` (it would apply to installs that ask for no extra, or be dropped).
    """
    try:
        req = Requirement(text)
    except InvalidRequirement as err:
        raise UserError(f"bad Requires-Dist {text!r}: {err}", path=where) from None
    extra = requirement_extra(req)
    if extra is None and req.marker is not None and _MENTIONS_EXTRA.search(str(req.marker)):
        raise UserError(f"Requires-Dist {text!r}: a marker naming extra must be exactly "
                        'extra == "name" (anything else applies to installs that asked for no extra)', path=where)
    return req, extra


def backend_extras(backend_text: str) -> dict[str, list[str]]:
    """The extras of the backend's METADATA: ``{extra: [Requires-Dist lines of that extra]}``.

    A line belongs to an extra by :func:`requirement_extra`; lines that do not parse or belong to no extra are left
    out. ``Provides-Extra`` names with no requirement map to an empty list. Names are normalized (PEP 685, as
    packaging normalizes them in markers).
    """
    extras: dict[str, list[str]] = {canonicalize_name(name): [] for name in metadata_field(backend_text,
                                                                                           "Provides-Extra")}
    for line in metadata_field(backend_text, "Requires-Dist"):
        try:
            name = requirement_extra(Requirement(line))
        except InvalidRequirement:
            continue
        if name is not None:
            extras.setdefault(name, []).append(line)
    return extras


def add_extras(text: str, extras: dict[str, list[str]], where: str) -> str:
    """Add ``Provides-Extra`` and the extra's ``Requires-Dist`` lines of ``extras`` to METADATA ``text``.

    So ``pip install "torch[migration]"`` brings what the backend's own extra brings; plain ``torch`` installs resolve
    exactly as upstream's (every added requirement is conditional on an added extra).

    Raises:
        UserError: upstream torch already provides an extra of the same name (compared normalized, PEP 685).
    """
    if not extras:
        return text
    have = {canonicalize_name(name) for name in metadata_field(text, "Provides-Extra")}
    head, sep, body = text.partition("\n\n")
    lines = [head.rstrip("\n")]
    for name in sorted(extras):
        if canonicalize_name(name) in have:
            raise UserError(f"extra {name!r} of the backend is already an extra of torch", path=where)
        lines.append(f"Provides-Extra: {name}")
        lines += [f"Requires-Dist: {req}" for req in extras[name]]
    return "\n".join(lines) + "\n" + (sep[1:] if sep else "") + body


def metadata_field(text: str, field: str) -> list[str]:
    """All values of header ``field`` (e.g. ``Requires-Dist``) in METADATA ``text``, in order."""
    head = text.partition("\n\n")[0]
    prefix = field.lower() + ":"
    return [line.split(":", 1)[1].strip() for line in head.splitlines() if line.lower().startswith(prefix)]


#: An entry point's name and group: the entry points spec's recommended characters (letters, digits, ``_ . -``),
#: ASCII only (a console script's name is a file name and a command), not only dots.
_EP_NAME = re.compile(r"^(?!\.+$)[A-Za-z0-9_.-]+$")
#: An entry point's value, an object reference ``module[:attr]`` with optional ``[extras]``: the pattern of
#: ``importlib.metadata.EntryPoint``.
_EP_VALUE = re.compile(r"^(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
#: Characters that end a line for ``str.splitlines`` (importlib.metadata) but not for configparser, and other controls.
_EP_BAD_CHAR = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")


@dataclass(frozen=True)
class EntryPoint:
    """One entry point of an ``entry_points.txt``: ``[group]`` ``name = value``, on 1-based ``line``."""

    group: str
    name: str
    value: str
    line: int

    @property
    def module(self) -> str:
        """The module part of the value (``torch_mlu`` of ``torch_mlu:_autoload``)."""
        return self.value.split(":", 1)[0].split("[", 1)[0].strip()


def parse_entry_points(text: str, where: str | Path) -> dict[str, dict[str, EntryPoint]]:
    """``entry_points.txt`` ``text`` as ``{group: {name: entry point}}``, in file order.

    The file is read line by line as ``importlib.metadata`` reads it (what ``import torch`` uses to autoload
    ``torch.backends`` and installers use for scripts): blank lines and ``#`` comments skipped, ``[group]`` headers,
    ``name = value`` split at the first ``=``, both stripped. Installers that read the file with configparser see
    indented lines, ``;`` lines and other line breaks differently, so only text on which both readers agree is
    accepted; refused, with the line:

    - an indented line, comments included (configparser makes it part of the value above: an entry or a whole
      ``[group]`` hidden there);
    - a line break other than ``\\n`` / ``\\r\\n`` (U+2028, U+0085, ...) or another control character;
    - a line that is not a comment, a header or ``name = value``; a name or group outside the entry points spec's
      recommended characters (``[A-Za-z0-9_.-]``); an entry before the first group;
    - a value that is not an object reference ``module[:attr] [extras]`` (``importlib.metadata.EntryPoint``'s pattern);
    - a group header twice, or a name twice in one group (readers differ on which one wins).

    Raises:
        UserError: the first rule broken, one line naming ``where`` and the line.
    """
    groups: dict[str, dict[str, EntryPoint]] = {}
    current: str | None = None
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.removesuffix("\r")
        bad = _EP_BAD_CHAR.search(line)
        if bad:
            raise UserError(f"entry_points.txt: character U+{ord(bad.group()):04X} inside a line (readers split lines "
                            "differently there)", path=where, line=number)
        stripped = line.strip()
        if not stripped:
            continue
        if line[:1].isspace():
            raise UserError("entry_points.txt: indented line (configparser joins it to the value above)", path=where,
                            line=number)
        if stripped.startswith("#"):
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            current = stripped[1:-1].strip()
            if not _EP_NAME.match(current):
                raise UserError(f"entry_points.txt: bad group name [{current}]", path=where, line=number)
            if current in groups:
                raise UserError(f"entry_points.txt: group [{current}] appears twice", path=where, line=number)
            groups[current] = {}
            continue
        name, sep, value = (part.strip() for part in stripped.partition("="))
        if not sep or not _EP_NAME.match(name):
            raise UserError(f"entry_points.txt: expected 'name = module:attr', a [group] or a # comment, got "
                            f"{stripped!r}", path=where, line=number)
        if current is None:
            raise UserError(f"entry_points.txt: entry {name} before any [group]", path=where, line=number)
        if not _EP_VALUE.match(value):
            raise UserError(f"entry_points.txt: [{current}] {name} = {value!r} is not an object reference "
                            "(module:attr)", path=where, line=number)
        if name in groups[current]:
            raise UserError(f"entry_points.txt: [{current}] {name} is defined twice", path=where, line=number)
        groups[current][name] = EntryPoint(current, name, value, number)
    return groups


def merge_entry_points(torch_text: str, backend_text: str, where: str | Path,
                       backend_where: str | Path | None = None) -> str:
    """Add every group of the backend's ``entry_points.txt`` to torch's; return the merged text.

    Both files are read by :func:`parse_entry_points` (``where`` names torch's in errors, ``backend_where`` the
    backend's; default: ``where`` marked "(backend)"). Torch's groups keep their order and entries; new groups
    follow in sorted order, entries sorted by name.

    Raises:
        UserError: either file does not parse, or the backend defines an entry point torch already has.
    """
    backend_where = backend_where or f"{where} (backend)"
    torch_ep = parse_entry_points(torch_text, where)
    backend_ep = parse_entry_points(backend_text, backend_where)
    merged: dict[str, dict[str, str]] = {g: {n: ep.value for n, ep in eps.items()} for g, eps in torch_ep.items()}
    for group in sorted(backend_ep):
        target = merged.setdefault(group, {})
        for name in sorted(backend_ep[group]):
            if name in target:
                raise UserError(f"entry point [{group}] {name} is defined by both torch and the backend",
                                path=backend_where, line=backend_ep[group][name].line)
            target[name] = backend_ep[group][name].value
    chunks = []
    for group, entries in merged.items():
        lines = [f"[{group}]"] + [f"{name} = {value}" for name, value in entries.items()]
        chunks.append("\n".join(lines) + "\n")
    return "\n".join(chunks) + "\n"


def set_version_py(text: str, version: str, catch_version: str, where: str) -> str:
    """Edit ``torch/version.py``: ``__version__ = version``; add ``catch = catch_version`` (and to ``__all__``).

    Raises:
        UserError: no ``__version__`` assignment at the start of a line.
    """
    new, count = _VERSION_PY.subn(f"__version__ = '{version}'", text, count=1)
    if count != 1:
        raise UserError("no __version__ assignment", path=where)
    match = _ALL_PY.search(new)
    if match and "'catch'" not in match.group(2):
        items = match.group(2).rstrip()
        items = f"{items}, 'catch'" if items.strip() else "'catch'"
        new = new[: match.start()] + f"{match.group(1)}{items}]" + new[match.end():]
    if not new.endswith("\n"):
        new += "\n"
    return new + f"catch: str = '{catch_version}'\n"


def add_top_level(text: str, package: str) -> str:
    """Add ``package`` to setuptools' ``top_level.txt`` (one name per line, kept sorted and unique)."""
    names = {line.strip() for line in text.splitlines() if line.strip()}
    names.add(package)
    return "".join(f"{name}\n" for name in sorted(names))
