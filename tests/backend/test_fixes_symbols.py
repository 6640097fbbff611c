# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The extension stays within the wheel's platform promise: no symbol version newer than torch's or manylinux_2_28's.

The combined wheel is tagged ``manylinux_2_28`` (PEP 600: runs on glibc >= 2.28), and it loads next to torch's own
``libtorch_cpu.so``. So ``torch_mlu/_C*.so`` must not require a GLIBC version above 2.28, nor GLIBCXX / CXXABI versions
above what ``libtorch_cpu.so`` requires (the libstdc++ torch already needs). Versions required are read from the ELF
``.gnu.version_r`` section (the version needs: one entry per library, one auxiliary per version name).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator

import pytest
import torch
from elftools.elf.elffile import ELFFile
from packaging.version import Version

import torch_mlu

_MANYLINUX_GLIBC = Version("2.28")


def _needed_versions(path: str) -> Iterator[tuple[str, str]]:
    """Yields (library, version name) for every version ``path`` requires, e.g. ("libc.so.6", "GLIBC_2.14")."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        section = elf.get_section_by_name(".gnu.version_r")
        if section is None:
            return
        for verneed, auxiliaries in section.iter_versions():
            for aux in auxiliaries:
                yield verneed.name, aux.name


def _highest(path: str) -> dict[str, Version]:
    """Highest required version per prefix ("GLIBC", "GLIBCXX", "CXXABI") of ``path``."""
    best: dict[str, Version] = {}
    for _lib, name in _needed_versions(path):
        prefix, sep, number = name.partition("_")
        if not sep or prefix not in ("GLIBC", "GLIBCXX", "CXXABI"):
            continue
        try:
            v = Version(number)
        except ValueError:  # e.g. GLIBC_PRIVATE
            continue
        if prefix not in best or v > best[prefix]:
            best[prefix] = v
    return best


@pytest.fixture(scope="module")
def extension() -> str:
    found = glob.glob(os.path.join(os.path.dirname(torch_mlu.__file__), "_C*.so"))
    assert len(found) == 1, f"expected one torch_mlu extension module, found {found}"
    return found[0]


@pytest.fixture(scope="module")
def torch_cpu() -> str:
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    assert os.path.exists(path), path
    return path


def test_reads_versions_of_a_real_library(torch_cpu: str):
    # Guards the reader itself: torch needs glibc and libstdc++ symbols, so both must show up.
    best = _highest(torch_cpu)
    assert "GLIBC" in best and "GLIBCXX" in best, best


def test_glibc_within_manylinux_2_28(extension: str):
    best = _highest(extension)
    assert "GLIBC" in best
    assert best["GLIBC"] <= _MANYLINUX_GLIBC, (
        f"{os.path.basename(extension)} requires GLIBC_{best['GLIBC']}, above manylinux_2_28's GLIBC_2.28"
    )


@pytest.mark.parametrize("prefix", ["GLIBC", "GLIBCXX", "CXXABI"])
def test_no_version_newer_than_torch_needs(extension: str, torch_cpu: str, prefix: str):
    ours = _highest(extension)
    theirs = _highest(torch_cpu)
    if prefix not in ours:
        return  # nothing required from that family
    assert prefix in theirs, f"libtorch_cpu.so requires no {prefix} version, the extension requires {ours[prefix]}"
    assert ours[prefix] <= theirs[prefix], (
        f"{os.path.basename(extension)} requires {prefix}_{ours[prefix]}, newer than libtorch_cpu.so's "
        f"{prefix}_{theirs[prefix]}"
    )
