# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Layer 1: ELF interfaces of torch's shared objects, read with ``pyelftools``.

For every upstream ``torch/lib/*.so*`` and ``torch/_C*.so`` (the simple and robust subset of what libabigail's
``abidiff`` checks, which on stripped objects sees only added and removed ELF symbols):

- the object is still in the combined wheel (layer 1 reports a removed object itself, so it stands alone);
- ``DT_SONAME``, ``DT_NEEDED`` (in order), ``DT_RUNPATH`` and ``DT_RPATH`` equal;
- the upstream set of *defined* dynamic symbols with their version (``name@VERSION`` from ``.gnu.version`` /
  ``.gnu.version_d``; global or weak binding, default or protected visibility) is contained in ours;
- the highest required ``GLIBC_*``, ``GLIBCXX_*`` and ``CXXABI_*`` version (``.gnu.version_r``) does not rise.

Each violation is incompatible (bit 8): a program or extension linked against upstream libtorch would fail to load or
to resolve a symbol. Objects whose bytes are identical in both wheels are not parsed (same bytes, same interface).
Shared objects the backend adds are checked against the wheel's platform tag: ``manylinux_2_X`` promises that nothing
needs glibc newer than 2.X (PEP 600), and the backend must not need a newer libstdc++ than torch already does (review).
``torch.compiled_with_cxx11_abi()`` and ``torch._C._PYBIND11_*`` are compared from the runtime probes of layer 2.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerDefSection, GNUVerNeedSection, GNUVerSymSection
from elftools.elf.sections import SymbolTableSection

from catch_tools.interfaces.files import BACKEND_PREFIXES, is_shared_object
from catch_tools.interfaces.pair import WheelPair
from catch_tools.interfaces.report import ERROR, INCOMPATIBLE, REVIEW, LayerResult
from catch_tools.wheel.metadata import member_text, metadata_field

_FAMILIES = ("GLIBC", "GLIBCXX", "CXXABI")
_VERSION = re.compile(r"^(GLIBC|GLIBCXX|CXXABI)_(\d+(?:\.\d+)*)$")


@dataclass
class ElfFacts:
    """What layer 1 compares for one shared object."""

    soname: str | None = None
    needed: list[str] = field(default_factory=list)
    runpath: str | None = None
    rpath: str | None = None
    defined: set[str] = field(default_factory=set)
    required: dict[str, tuple[int, ...]] = field(default_factory=dict)


def version_key(text: str) -> tuple[int, ...]:
    """``"2.28"`` -> ``(2, 28)``."""
    return tuple(int(x) for x in text.split("."))


def read_elf(path: Path, symbols: bool = True) -> ElfFacts:
    """Read the :class:`ElfFacts` of a shared object (``symbols=False``: leave ``defined`` empty, much faster).

    Raises:
        ELFError: not an ELF file (the caller reports it).
    """
    facts = ElfFacts()
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        verdefs: dict[int, str] = {}
        versym = None
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    kind = tag.entry.d_tag  # pyelftools sets the string value as an attribute named after it
                    if kind == "DT_SONAME":
                        facts.soname = getattr(tag, "soname")  # noqa: B009
                    elif kind == "DT_NEEDED":
                        facts.needed.append(getattr(tag, "needed"))  # noqa: B009
                    elif kind == "DT_RUNPATH":
                        facts.runpath = getattr(tag, "runpath")  # noqa: B009
                    elif kind == "DT_RPATH":
                        facts.rpath = getattr(tag, "rpath")  # noqa: B009
            elif isinstance(section, GNUVerDefSection):
                for verdef, auxiter in section.iter_versions():
                    names = [aux.name for aux in auxiter]
                    if names:
                        verdefs[verdef["vd_ndx"]] = names[0]
            elif isinstance(section, GNUVerNeedSection):
                for _verneed, auxiter in section.iter_versions():
                    for aux in auxiter:
                        match = _VERSION.match(aux.name)
                        if match:
                            fam, ver = match.group(1), version_key(match.group(2))
                            facts.required[fam] = max(facts.required.get(fam, ()), ver)
            elif isinstance(section, GNUVerSymSection):
                versym = section
        dynsym = elf.get_section_by_name(".dynsym")
        if isinstance(dynsym, SymbolTableSection) and symbols:
            facts.defined = _defined_symbols(elf, dynsym, versym, verdefs)
    return facts


# st_info >> 4 (binding) kept: STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE; st_other & 3 (visibility): default, protected
_BINDINGS = frozenset((1, 2, 10))
_VISIBILITIES = frozenset((0, 3))


def _defined_symbols(elf: ELFFile, dynsym: SymbolTableSection, versym: GNUVerSymSection | None,
                     verdefs: dict[int, str]) -> set[str]:
    """Defined exported symbols of ``dynsym`` as ``name@VERSION`` (or ``name``), unpacked in bulk.

    pyelftools locates the sections; the symbol table, its string table and ``.gnu.version`` are then unpacked with
    :func:`struct.iter_unpack` (ELF gABI symbol layout) instead of one pyelftools object per symbol, which is ~20x
    faster on libtorch_cpu.so (hundreds of thousands of symbols). Version index 0 (local) and 1 (global) carry no
    version, others name a ``.gnu.version_d`` entry (the hidden bit 0x8000 masked), as pyelftools reads them.
    """
    end = "<" if elf.little_endian else ">"
    header = dynsym.header
    if elf.elfclass == 64:
        layout, name_i, info_i, other_i, shndx_i = f"{end}IBBHQQ", 0, 1, 2, 3
    else:
        layout, name_i, info_i, other_i, shndx_i = f"{end}IIIBBH", 0, 3, 4, 5
    size = struct.calcsize(layout)
    data = dynsym.data()
    count = len(data) // size
    strtab = elf.get_section(header["sh_link"]).data()
    versions: Sequence[int] = ()
    if versym is not None:
        versions = struct.unpack(f"{end}{versym.header['sh_size'] // 2}H", versym.data())
    out: set[str] = set()
    for index, entry in enumerate(struct.iter_unpack(layout, data[:count * size])):
        if entry[shndx_i] == 0 or not entry[name_i]:  # SHN_UNDEF, or no name
            continue
        if entry[info_i] >> 4 not in _BINDINGS or entry[other_i] & 3 not in _VISIBILITIES:
            continue
        start = entry[name_i]
        name = strtab[start:strtab.index(b"\0", start)].decode("utf-8", "replace")
        if not name:
            continue
        version = ""
        if index < len(versions) and versions[index] > 1:
            version = verdefs.get(versions[index] & 0x7FFF, "")
        out.add(f"{name}@{version}" if version else name)
    return out


def _targets(pair: WheelPair) -> list[str]:
    out = []
    for member in pair.up.members:
        name = member.name
        base = name.rsplit("/", 1)[-1]
        in_lib = name.startswith("torch/lib/") and name.count("/") == 2 and is_shared_object(name)
        if in_lib or (name.count("/") == 1 and base.startswith("_C") and base.endswith(".so")):
            out.append(name)
    return out


def _max_glibc_from_tags(pair: WheelPair) -> tuple[int, ...] | None:
    name = f"{pair.up_di}/WHEEL"
    wheel = member_text(pair.up, name, exit_code=1) if pair.up.get(name) else ""
    found = [version_key(f"{m.group(1)}.{m.group(2)}") for tag in metadata_field(wheel, "Tag")
             if (m := re.search(r"manylinux_(\d+)_(\d+)_", tag))]
    return min(found) if found else None


def compare_elf(name: str, old: ElfFacts, new: ElfFacts, res: LayerResult) -> None:
    """Add layer-1 findings for one object (rules in the module doc)."""
    for attr in ("soname", "needed", "runpath", "rpath"):
        if getattr(old, attr) != getattr(new, attr):
            res.add(INCOMPATIBLE, f"elf-{attr}-changed",
                    f"{attr.upper()} changed: {getattr(old, attr)!r} -> {getattr(new, attr)!r}", name)
    missing = sorted(old.defined - new.defined)
    if missing:
        shown = ", ".join(missing[:5]) + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else "")
        res.add(INCOMPATIBLE, "elf-symbol-removed", f"{len(missing)} exported symbol(s) removed: {shown}", name)
    added = len(new.defined - old.defined)
    if added:
        res.notes.append(f"{name}: {added} exported symbol(s) added")
    for fam in _FAMILIES:
        before, after = old.required.get(fam, ()), new.required.get(fam, ())
        if after > before:
            res.add(INCOMPATIBLE, "elf-version-rise",
                    f"needs {fam}_{'.'.join(map(str, after))}, upstream needed at most "
                    f"{fam}_{'.'.join(map(str, before)) if before else '(none)'}", name)


def check_elf(pair: WheelPair, full: bool = False) -> LayerResult:
    """Run layer 1 on ``pair``; ``full`` parses objects even when their bytes are identical (for measurement).

    Objects are read from the unpacked trees (:meth:`WheelPair.tree`, shared with the probes of layers 1 and 2).
    """
    res = LayerResult(1)
    targets = _targets(pair)
    skipped = removed = 0

    def facts(which: str, member_name: str, symbols: bool = True) -> ElfFacts | None:
        try:
            return read_elf(pair.tree(which) / member_name, symbols)
        except ELFError as err:
            res.add(ERROR, "elf-unreadable", f"not a readable ELF object: {err}", member_name)
            return None

    for name in targets:
        member = pair.up.get(name)
        assert member is not None
        if pair.new.get(name) is None:
            res.add(INCOMPATIBLE, "elf-object-removed", "upstream shared object missing from the combined wheel",
                    name)
            removed += 1
            continue
        if not full and pair.raw_identical(member):
            skipped += 1
            continue
        old, new = facts("upstream", name), facts("combined", name)
        if old is not None and new is not None:
            compare_elf(name, old, new, res)
    added = [m.name for m in pair.new.members if m.name.startswith(BACKEND_PREFIXES) and is_shared_object(m.name)]
    if added:
        upstream_max: dict[str, tuple[int, ...]] = {}
        for name in targets:  # the backend's needs are judged against torch's own
            old = facts("upstream", name, symbols=False)
            for fam, ver in (old.required.items() if old else ()):
                upstream_max[fam] = max(upstream_max.get(fam, ()), ver)
        glibc_tag = _max_glibc_from_tags(pair)
        for name in added:
            new = facts("combined", name)
            if new is not None:
                _check_backend_object(name, new, upstream_max, glibc_tag, res)
    res.notes.append(f"{len(targets)} upstream shared object(s): {skipped} byte-identical (not parsed), "
                     f"{len(targets) - skipped - removed} compared, {removed} removed; {len(added)} backend "
                     "object(s)")
    return res


def _check_backend_object(name: str, facts: ElfFacts, upstream_max: dict[str, tuple[int, ...]],
                          glibc_tag: tuple[int, ...] | None, res: LayerResult) -> None:
    glibc = facts.required.get("GLIBC", ())
    if glibc_tag is not None and glibc > glibc_tag:
        res.add(REVIEW, "backend-glibc-above-tag",
                f"backend needs GLIBC_{'.'.join(map(str, glibc))} but the wheel tag promises glibc "
                f"{'.'.join(map(str, glibc_tag))} (build the backend in a manylinux_2_{glibc_tag[1]} image)", name)
    for fam in ("GLIBCXX", "CXXABI"):
        mine, theirs = facts.required.get(fam, ()), upstream_max.get(fam, ())
        if theirs and mine > theirs:
            res.add(REVIEW, "backend-libstdcxx-above-torch",
                    f"backend needs {fam}_{'.'.join(map(str, mine))}, torch at most "
                    f"{fam}_{'.'.join(map(str, theirs))}", name)
