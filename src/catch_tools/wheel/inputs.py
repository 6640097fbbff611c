# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Validation of the two input wheels of the combined build: upstream torch (against the pin) and Catch (torch_mlu).

Rules: both wheels must be what their file names say (name, version and tags agree with ``WHEEL`` and METADATA:
:func:`catch_tools.wheel.metadata.check_wheel_identity`); the upstream wheel's file-name version and METADATA
``Version`` must equal the pin's ``wheel_version`` (PEP 440 comparison) and ``torch/version.py``'s ``git_version`` the
pin's commit; the backend wheel must be ``torch_mlu``, carry only ``torch_mlu/`` besides its ``.dist-info``, be
installable wherever the upstream wheel is (same interpreter and ABI, or ``py3``/``none``/``abi3``; same CPU
architecture or ``any``), and require nothing torch does not (a requirement of one of its extras, marker exactly
``extra == "name"``, is offered as an extra of the combined wheel:
:func:`~catch_tools.wheel.metadata.requirement_extra`).

The backend's ``entry_points.txt`` (read by :func:`~catch_tools.wheel.metadata.parse_entry_points`) must declare at
least one entry point in ``[torch.backends]`` (the group PyTorch >= 2.5 autoloads on ``import torch``); every entry
point must name code of ``torch_mlu`` (the only package the backend ships); and no console or GUI script may take the
name of one of upstream's scripts or of a command the environment's users run by name (:data:`SHADOWED_COMMANDS`:
an activated environment's ``bin/`` comes first on ``PATH``). Names are compared case-insensitively (case-insensitive
file systems).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.tags import Tag
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from catch_tools.errors import UserError
from catch_tools.wheel.metadata import (
    GIT_VERSION_PY,
    check_backend_requirement,
    check_wheel_identity,
    member_text,
    metadata_field,
    parse_entry_points,
    split_wheel_filename,
)
from catch_tools.wheel.record import RecordRow, read_rows, verify_wheel
from catch_tools.wheel.zipraw import RawMember, RawZipReader

#: The Catch backend's top-level package: the backend wheel carries only it, the combined wheel adds only it.
BACKEND_PACKAGE = "torch_mlu"
AUTOLOAD_GROUP = "torch.backends"
#: Entry point groups whose names become commands in the environment's ``bin/`` (entry points spec).
SCRIPT_GROUPS = ("console_scripts", "gui_scripts")
#: Commands a backend script must not be named (compared case-insensitively): the Python launchers and package
#: installers of an environment (``python``, ``python3``, ``python3.11``, ``pip3``, ``pydoc``, ``idle``, with an
#: optional ``-config``) and the shells and tools other commands call by name.
SHADOWED_COMMANDS = re.compile(r"^(python|pip|pydoc|idle)(\d+(\.\d+)?)?(-config)?$"
                               r"|^(2to3|easy_install|wheel|virtualenv|uv|conda|sh|bash|env|sudo|git)$")


@dataclass
class WheelInfo:
    """A validated input wheel: its reader, file-name parts, ``.dist-info`` directory and verified RECORD rows."""

    reader: RawZipReader
    name: str
    version: str
    tags: str
    dist_info: str
    rows: dict[str, RecordRow]

    def member(self, relpath: str) -> RawMember:
        """The dist-info member ``relpath`` (e.g. ``METADATA``); UserError if absent."""
        found = self.reader.get(f"{self.dist_info}/{relpath}")
        if found is None:
            raise UserError(f"wheel has no {self.dist_info}/{relpath}", path=self.reader.path)
        return found

    def text(self, relpath: str) -> str:
        """A dist-info file as text (UserError if absent or not UTF-8)."""
        return member_text(self.reader, self.member(relpath).name)


def open_wheel(reader: RawZipReader, *, verify_cache: bool = True, hash_members: bool = True) -> WheelInfo:
    """Check the wheel is what its file name says (:func:`check_wheel_identity`), find its
    ``{name}-{version}.dist-info`` and verify RECORD (see :func:`verify_wheel`).

    ``hash_members=False`` checks only RECORD's listing; the caller must then run :func:`verify_rows` itself.

    Raises:
        UserError: a wheel whose file name, ``WHEEL`` and METADATA disagree, non-UTF-8 metadata, or a RECORD that
            does not match the members.
    """
    dist_info = check_wheel_identity(reader)
    name, version, tags = split_wheel_filename(reader.path.name)
    if hash_members:
        rows = verify_wheel(reader, f"{dist_info}/RECORD", use_cache=verify_cache)
    else:
        rows = read_rows(reader, f"{dist_info}/RECORD")
    return WheelInfo(reader, name, version, tags, dist_info, rows)


def check_upstream(info: WheelInfo, wheel_version: str, commit: str | None) -> None:
    """Refuse an upstream wheel that is not torch ``wheel_version`` built from ``commit`` (None: skip commit check).

    Raises:
        UserError: another project, another version (file name or METADATA), or another ``git_version``.
    """
    where = info.reader.path
    if canonicalize_name(info.name) != "torch":
        raise UserError(f"upstream wheel is {info.name}, not torch", path=where)
    if Version(info.version) != Version(wheel_version):
        raise UserError(f"upstream wheel is torch {info.version} but the pin wants {wheel_version} "
                        "(patches/manifest.toml)", path=where)
    meta = metadata_field(info.text("METADATA"), "Version")
    if not meta or Version(meta[0]) != Version(wheel_version):
        raise UserError(f"METADATA Version {meta[:1]} does not match the pin's {wheel_version}", path=where)
    if commit is None:
        return
    version_py = info.reader.get("torch/version.py")
    if version_py is None:
        raise UserError("upstream wheel has no torch/version.py", path=where)
    match = GIT_VERSION_PY.search(member_text(info.reader, version_py.name))
    found = match.group(1) if match else "none"
    if found != commit:
        raise UserError(f"upstream wheel was built from commit {found}, the pin is {commit}", path=where)


def _compatible(backend: Tag, upstream: Tag) -> bool:
    arch = upstream.platform.rsplit("_", 1)[-1] if "_" in upstream.platform else upstream.platform
    interp_ok = backend.interpreter in (upstream.interpreter, "py3", f"py{upstream.interpreter[2:]}")
    abi_ok = backend.abi in (upstream.abi, "none", "abi3")
    plat_ok = backend.platform == "any" or backend.platform.endswith(f"_{arch}")
    return interp_ok and abi_ok and plat_ok


def backend_payload(info: WheelInfo, upstream: WheelInfo, combined_version: str) -> list[RawMember]:
    """Check the backend wheel (see module doc) and return its members outside ``.dist-info``, sorted by name.

    Raises:
        UserError: wrong project, a file outside ``torch_mlu/``, incompatible tags, an ``entry_points.txt`` that
            does not parse or breaks a rule of the module doc, a torch requirement the combined version does not
            satisfy, another requirement torch does not have, or a marker naming ``extra`` in another form than
            ``extra == "name"``.
    """
    where = info.reader.path
    if canonicalize_name(info.name) != canonicalize_name(BACKEND_PACKAGE):
        raise UserError(f"backend wheel is {info.name}, expected {BACKEND_PACKAGE}", path=where)
    up_tags = parse_wheel_filename(upstream.reader.path.name)[3]
    for tag in parse_wheel_filename(info.reader.path.name)[3]:
        if not any(_compatible(tag, up) for up in up_tags):
            raise UserError(f"backend wheel tag {tag} does not fit the upstream wheel's {upstream.tags}", path=where)
    payload = []
    for member in info.reader.members:
        if member.name.startswith(f"{info.dist_info}/") or member.name.endswith("/"):
            continue
        top = member.name.split("/", 1)[0]
        if top != BACKEND_PACKAGE or posixpath.normpath(member.name) != member.name:
            raise UserError(f"backend wheel has {member.name} outside {BACKEND_PACKAGE}/", path=where)
        payload.append(member)
    if not payload:
        raise UserError(f"backend wheel has no {BACKEND_PACKAGE}/ files", path=where)
    _check_backend_entry_points(info, upstream)
    upstream_reqs = {canonicalize_name(Requirement(r).name) for r in
                     metadata_field(upstream.text("METADATA"), "Requires-Dist")}
    meta_at = f"{where}!{info.dist_info}/METADATA"
    for text in metadata_field(info.text("METADATA"), "Requires-Dist"):
        req, extra = check_backend_requirement(text, meta_at)
        if extra is not None:  # offered as torch[extra]: plain torch installs resolve as upstream's
            continue
        name = canonicalize_name(req.name)
        if name == "torch":
            if not req.specifier.contains(Version(combined_version), prereleases=True):
                raise UserError(f"backend requires {req}, which torch {combined_version} does not satisfy",
                                path=where)
        elif name not in upstream_reqs:
            raise UserError(f"backend requires {req.name}, which torch does not: add it to the backend's "
                            "dependencies only if torch has it", path=where)
    return sorted(payload, key=lambda m: m.name)


def _check_backend_entry_points(info: WheelInfo, upstream: WheelInfo) -> None:
    """The backend's entry points follow the module doc's rules.

    Raises:
        UserError: the first rule broken, naming the backend's ``entry_points.txt`` (and the line).
    """
    where = f"{info.reader.path}!{info.dist_info}/entry_points.txt"
    has = info.reader.get(f"{info.dist_info}/entry_points.txt") is not None
    groups = parse_entry_points(info.text("entry_points.txt"), where) if has else {}
    if not groups.get(AUTOLOAD_GROUP):
        raise UserError(f"backend wheel declares no entry point in [{AUTOLOAD_GROUP}] (torch would not autoload "
                        "it)", path=where if has else info.reader.path)
    up_has = upstream.reader.get(f"{upstream.dist_info}/entry_points.txt") is not None
    up_groups = parse_entry_points(upstream.text("entry_points.txt"),
                                   f"{upstream.reader.path}!{upstream.dist_info}/entry_points.txt") if up_has else {}
    up_scripts = {name.casefold() for group in SCRIPT_GROUPS for name in up_groups.get(group, {})}
    for group, entries in groups.items():
        for name, ep in entries.items():
            if ep.module != BACKEND_PACKAGE and not ep.module.startswith(f"{BACKEND_PACKAGE}."):
                raise UserError(f"[{group}] {name} = {ep.value} names code outside {BACKEND_PACKAGE}, the only "
                                "package the backend ships", path=where, line=ep.line)
            if group in SCRIPT_GROUPS and (name.casefold() in up_scripts or SHADOWED_COMMANDS.match(name.casefold())):
                whose = "one of torch's scripts" if name.casefold() in up_scripts else "a common command"
                raise UserError(f"[{group}] {name} would replace {whose} in the environment's bin/", path=where,
                                line=ep.line)
