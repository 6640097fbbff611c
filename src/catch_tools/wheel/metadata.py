# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Edits of the torch wheel's metadata for the combined wheel: version, entry points, ``torch/version.py``.

Each function takes and returns text so it can be tested on its own. Rules: METADATA is an email-style header block
(core metadata spec, "Version" field); ``entry_points.txt`` is the INI format of the entry points spec (groups in
``[brackets]``, ``name = module:attr``); the wheel file name is ``{name}-{version}-{python}-{abi}-{platform}.whl``
(binary distribution format spec) and the ``.dist-info`` directory is ``{name}-{version}.dist-info``.
"""

from __future__ import annotations

import configparser
import re

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from catch_tools.errors import UserError

_VERSION_PY = re.compile(r"""^__version__\s*=\s*['"][^'"]*['"]\s*$""", re.MULTILINE)
_ALL_PY = re.compile(r"""^(__all__\s*=\s*\[)([^\]]*)\]""", re.MULTILINE)
_EXTRA_MARKER = re.compile(r""";\s*extra\s*==\s*['"]([^'"]+)['"]\s*$""")
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


def backend_extras(backend_text: str) -> dict[str, list[str]]:
    """The extras of the backend's METADATA: ``{extra: [Requires-Dist lines conditional on it]}``.

    A requirement belongs to extra ``name`` when its marker is exactly ``extra == "name"`` (how build backends write
    ``[project.optional-dependencies]``); ``Provides-Extra`` names with no requirement map to an empty list.
    """
    extras: dict[str, list[str]] = {name: [] for name in metadata_field(backend_text, "Provides-Extra")}
    for line in metadata_field(backend_text, "Requires-Dist"):
        match = _EXTRA_MARKER.search(line)
        if match:
            extras.setdefault(match.group(1), []).append(line)
    return extras


def add_extras(text: str, extras: dict[str, list[str]], where: str) -> str:
    """Add ``Provides-Extra`` and the extra's ``Requires-Dist`` lines of ``extras`` to METADATA ``text``.

    So ``pip install "torch[migration]"`` brings what the backend's own extra brings; plain ``torch`` installs resolve
    exactly as upstream's (every added requirement is conditional on an added extra).

    Raises:
        UserError: upstream torch already provides an extra of the same name.
    """
    if not extras:
        return text
    have = set(metadata_field(text, "Provides-Extra"))
    head, sep, body = text.partition("\n\n")
    lines = [head.rstrip("\n")]
    for name in sorted(extras):
        if name in have:
            raise UserError(f"extra {name!r} of the backend is already an extra of torch", path=where)
        lines.append(f"Provides-Extra: {name}")
        lines += [f"Requires-Dist: {req}" for req in extras[name]]
    return "\n".join(lines) + "\n" + (sep[1:] if sep else "") + body


def metadata_field(text: str, field: str) -> list[str]:
    """All values of header ``field`` (e.g. ``Requires-Dist``) in METADATA ``text``, in order."""
    head = text.partition("\n\n")[0]
    prefix = field.lower() + ":"
    return [line.split(":", 1)[1].strip() for line in head.splitlines() if line.lower().startswith(prefix)]


def _parse_entry_points(text: str, where: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # names are case-sensitive
    try:
        parser.read_string(text, source=where)
    except configparser.Error as err:
        raise UserError(f"invalid entry_points.txt: {err.message}", path=where) from None
    return parser


def merge_entry_points(torch_text: str, backend_text: str, where: str) -> str:
    """Add every group of the backend's ``entry_points.txt`` to torch's; return the merged text.

    Torch's groups keep their order and entries; new groups follow in sorted order, entries sorted by name.

    Raises:
        UserError: either file does not parse, or the backend defines an entry point torch already has.
    """
    torch_ep = _parse_entry_points(torch_text, where)
    backend_ep = _parse_entry_points(backend_text, f"{where} (backend)")
    merged: dict[str, dict[str, str]] = {g: dict(torch_ep[g]) for g in torch_ep.sections()}
    for group in sorted(backend_ep.sections()):
        target = merged.setdefault(group, {})
        for name in sorted(backend_ep[group]):
            if name in target:
                raise UserError(f"entry point [{group}] {name} is defined by both torch and the backend", path=where)
            target[name] = backend_ep[group][name]
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
