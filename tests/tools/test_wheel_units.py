# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Pieces of the combined build: metadata edits, RECORD format, raw zip copy read back by the standard library."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from catch_tools.errors import UserError
from catch_tools.wheel.metadata import (
    add_extras,
    backend_extras,
    combined_filename,
    merge_entry_points,
    set_metadata_version,
    set_version_py,
)
from catch_tools.wheel.record import parse_record
from catch_tools.wheel.zipraw import RawZipReader, dos_datetime, open_writer


def test_combined_filename_keeps_tags() -> None:
    name = combined_filename("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "2.13.0+cpu.catch1")
    assert name == "torch-2.13.0+cpu.catch1-cp311-cp311-manylinux_2_28_x86_64.whl"
    with pytest.raises(UserError):
        combined_filename("torch.zip", "1")


def test_metadata_version_only_in_header() -> None:
    text = "Metadata-Version: 2.4\nName: torch\nVersion: 2.13.0+cpu\n\nVersion: in the body stays\n"
    out = set_metadata_version(text, "2.13.0+cpu.catch1", "METADATA")
    assert out == "Metadata-Version: 2.4\nName: torch\nVersion: 2.13.0+cpu.catch1\n\nVersion: in the body stays\n"
    with pytest.raises(UserError):
        set_metadata_version("Name: torch\n", "1", "METADATA")


def test_backend_extras_reach_the_combined_metadata() -> None:
    # METADATA as scikit-build-core writes it for catch/pyproject.toml's [project.optional-dependencies]
    backend = ("Metadata-Version: 2.1\nName: torch_mlu\nVersion: 2.13.0+catch1\nProvides-Extra: migration\n"
               "Requires-Dist: libcst>=1.0.1; extra == \"migration\"\n\n")
    extras = backend_extras(backend)
    assert extras == {"migration": ['libcst>=1.0.1; extra == "migration"']}
    torch_meta = ("Metadata-Version: 2.4\nName: torch\nVersion: 2.13.0+cpu.catch1\nRequires-Dist: filelock\n"
                  "Provides-Extra: optree\nRequires-Dist: optree>=0.13.0; extra == \"optree\"\n\nlong description\n")
    out = add_extras(torch_meta, extras, "METADATA")
    head, body = out.split("\n\n", 1)
    assert body == "long description\n"
    assert head.splitlines()[-2:] == ["Provides-Extra: migration", 'Requires-Dist: libcst>=1.0.1; extra == "migration"']
    assert add_extras(torch_meta, {}, "METADATA") == torch_meta
    with pytest.raises(UserError, match="already an extra of torch"):
        add_extras(torch_meta, {"optree": []}, "METADATA")


def test_entry_point_merge_and_conflict() -> None:
    torch_eps = "[console_scripts]\ntorchrun = torch.distributed.run:main\n"
    backend = "[torch.backends]\nmlu = torch_mlu:_autoload\n\n[console_scripts]\ntorch_gpu2mlu = torch_mlu.tools:main\n"
    merged = merge_entry_points(torch_eps, backend, "eps")
    assert merged.startswith("[console_scripts]\ntorchrun = torch.distributed.run:main\ntorch_gpu2mlu = ")
    assert "[torch.backends]\nmlu = torch_mlu:_autoload\n" in merged
    with pytest.raises(UserError) as info:
        merge_entry_points(torch_eps, "[console_scripts]\ntorchrun = evil:main\n", "eps")
    assert "torchrun" in str(info.value)


def test_version_py_edit() -> None:
    text = "__all__ = ['__version__', 'git_version']\n__version__ = '2.13.0+cpu'\ngit_version = 'abc'\n"
    out = set_version_py(text, "2.13.0+cpu.catch4", "4", "version.py")
    ns: dict[str, object] = {}
    exec(out, ns)
    assert (ns["__version__"], ns["catch"], ns["git_version"]) == ("2.13.0+cpu.catch4", "4", "abc")
    assert ns["__all__"] == ["__version__", "git_version", "catch"]
    with pytest.raises(UserError):
        set_version_py("x = 1\n", "1", "1", "version.py")


def test_record_parse_errors_name_the_line() -> None:
    with pytest.raises(UserError) as info:
        parse_record("a.py,sha256=x,1\nb.py,md5=y,2\n", "RECORD")
    assert info.value.line == 2
    with pytest.raises(UserError) as info:
        parse_record("a.py,sha256=x,1\na.py,sha256=x,1\n", "RECORD")
    assert "twice" in str(info.value)


def test_raw_copy_round_trip_read_by_zipfile(tmp_path: Path) -> None:
    src = tmp_path / "src.zip"
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr(zipfile.ZipInfo("stored.txt", (2001, 2, 3, 4, 5, 6)), b"stored bytes")
        info = zipfile.ZipInfo("deflated/ü.txt", (2002, 2, 3, 4, 5, 6))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o100755 << 16
        zf.writestr(info, b"x" * 10000)
    dst = tmp_path / "dst.zip"
    with RawZipReader(src) as reader, open_writer(dst) as writer:
        for member in reader.members:
            writer.copy_raw(reader, member, None if member.name != "stored.txt" else "renamed.txt")
        writer.add("new.txt", b"new", dos_datetime(1700000000), 0o600)
    with zipfile.ZipFile(dst) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == ["renamed.txt", "deflated/ü.txt", "new.txt"]
        assert zf.read("renamed.txt") == b"stored bytes"
        assert zf.getinfo("renamed.txt").compress_type == zipfile.ZIP_STORED
        assert zf.read("deflated/ü.txt") == b"x" * 10000
        assert zf.getinfo("deflated/ü.txt").date_time == (2002, 2, 3, 4, 5, 6)
        assert zf.getinfo("deflated/ü.txt").external_attr >> 16 == 0o100755
        assert zf.getinfo("new.txt").external_attr >> 16 == 0o100600


def test_duplicate_member_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError), open_writer(tmp_path / "x.zip") as writer:
        writer.add("a", b"1", dos_datetime(0))
        writer.add("a", b"2", dos_datetime(0))
