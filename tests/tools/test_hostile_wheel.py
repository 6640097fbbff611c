# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Hostile and careless input to the combined-wheel build (``scripts/build_wheel.py``): wheels that are not what
their name says, members that would escape, output directories that are files, and user files that look like the
build's own temporary files. Every refusal is one line, exit 2, and leaves the output directory as it was."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel

from catch_tools.errors import UserError
from catch_tools.pin import Pin
from catch_tools.wheel.overlay import build_overlay
from catch_tools.wheel.record import RecordRow, format_record, record_digest
from catch_tools.wheel.zipraw import RawZipReader, dos_datetime, open_writer

COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"
PIN = Pin("https://github.com/pytorch/pytorch.git", "v2.13.0", COMMIT, "2.13.0+cpu", 1)
REPO = Path(__file__).resolve().parents[2]
UP_DI = "torch-2.13.0+cpu.dist-info"
REGULAR, SYMLINK = 0o100644 << 16, 0o120777 << 16


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATCH_CACHE", str(tmp_path / "cache"))


def rewrite(src: Path, dst: Path, *, extra: Sequence[tuple[str, bytes, int]] = (),
            replace: Mapping[str, bytes] | None = None) -> Path:
    """Write ``dst``: the members of wheel ``src`` with ``replace`` applied, then ``extra`` (name, bytes, zip
    external attributes) appended as given (duplicates and unsafe names included). RECORD is recomputed so that it
    lists every member with its right hash, unless ``replace`` gives RECORD's bytes itself."""
    replace = dict(replace or {})
    with zipfile.ZipFile(src) as zf:
        record = next(name for name in zf.namelist() if name.endswith(".dist-info/RECORD"))
        given_record = record in replace
        members = [(i.filename, replace.pop(i.filename, zf.read(i)), i.external_attr) for i in zf.infolist()]
    members += [*extra, *((name, data, REGULAR) for name, data in replace.items())]
    if not given_record:
        rows = {name: RecordRow(name, record_digest(data), len(data)) for name, data, _attr in members
                if name != record}
        rows[record] = RecordRow(record, "", None)
        members = [(n, format_record(rows.values()) if n == record else d, a) for n, d, a in members]
    dst.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(), zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        warnings.simplefilter("ignore")  # "Duplicate name": wanted here
        for name, data, attr in members:
            info = zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = attr
            zf.writestr(info, data)
    return dst


def checksum(root: Path) -> dict[str, str]:
    """Path -> sha256 (or "dir"/"link -> target") of everything under ``root`` (empty when it does not exist)."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")) if root.exists() else ():
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = f"link -> {os.readlink(path)}"
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


MANIFEST = f"""[upstream]
repository = "{PIN.repository}"
tag = "{PIN.tag}"
commit = "{PIN.commit}"
wheel_version = "{PIN.wheel_version}"

[series]
version = {PIN.series_version}
"""


def series(root: Path) -> Path:
    """An empty series with the test pin (the build CLI reads the pin from the series directory)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "series").write_text("")
    (root / "manifest.toml").write_text(MANIFEST)
    return root


def upstream(tmp: Path) -> Path:
    return fake_torch_wheel(tmp / "src", PIN.wheel_version, COMMIT)


def refused(tmp: Path, up: Path, backend: Path | None = None) -> UserError:
    """Build into ``tmp/dist`` (holding a user's file); the build must raise UserError and change nothing there."""
    out = tmp / "dist"
    out.mkdir(exist_ok=True)
    (out / "notes.txt").write_text("mine\n")
    before = checksum(out)
    with pytest.raises(UserError) as info:
        build_overlay(upstream_wheel=up, backend_wheel=backend or fake_backend_wheel(tmp / "be"),
                      patches_dir=series(tmp / "patches"), pin=PIN, out_dir=out)
    assert checksum(out) == before
    assert "\n" not in str(info.value)
    return info.value


def cli(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "build_wheel.py"), *args], capture_output=True,
                          text=True, check=False, env=dict(os.environ, **(env or {})), timeout=300)


def one_line_error(proc: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stderr


# --- members the reader refuses: the build must not copy them into the combined wheel ---

def test_member_escaping_upwards_is_refused(tmp_path: Path) -> None:
    name = "torch/../../escape/X.py"
    up = rewrite(upstream(tmp_path), tmp_path / "up" / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
                 extra=[(name, b"print('escaped')\n", REGULAR)])
    err = refused(tmp_path, up)
    assert str(up) in str(err) and name in str(err)
    assert not (tmp_path / "escape").exists()


def test_absolute_member_is_refused(tmp_path: Path) -> None:
    name = f"{tmp_path}/abs/X.py"
    up = rewrite(upstream(tmp_path), tmp_path / "up" / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
                 extra=[(name, b"print('absolute')\n", REGULAR)])
    err = refused(tmp_path, up)
    assert str(up) in str(err) and name in str(err)
    assert not (tmp_path / "abs").exists()


def test_symlink_member_is_refused(tmp_path: Path) -> None:
    up = rewrite(upstream(tmp_path), tmp_path / "up" / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
                 extra=[("torch/passwd.py", b"/etc/passwd", SYMLINK)])
    err = refused(tmp_path, up)
    assert str(up) in str(err) and "torch/passwd.py" in str(err)


def test_cli_refuses_a_hostile_member_in_one_line(tmp_path: Path) -> None:
    up = rewrite(upstream(tmp_path), tmp_path / "up" / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
                 extra=[("torch/../../escape/X.py", b"x = 1\n", REGULAR)])
    out = tmp_path / "dist"
    proc = cli("--upstream-wheel", str(up), "--catch-wheel", str(fake_backend_wheel(tmp_path / "be")),
               "--patches-dir", str(series(tmp_path / "patches")), "--out", str(out),
               env={"CATCH_CACHE": str(tmp_path / "cache")})
    assert "torch/../../escape/X.py" in one_line_error(proc)
    assert checksum(out) == {} and not (tmp_path / "escape").exists()


# --- wheels are what their name says ---

def test_wheel_renamed_to_another_python_is_refused(tmp_path: Path) -> None:
    good = upstream(tmp_path)
    renamed = tmp_path / "up" / good.name.replace("cp311-cp311", "cp312-cp312")
    renamed.parent.mkdir()
    renamed.write_bytes(good.read_bytes())
    err = refused(tmp_path, renamed)
    assert "cp312-cp312" in str(err) and "cp311-cp311" in str(err) and f"{UP_DI}/WHEEL" in str(err)
    proc = cli("--upstream-wheel", str(renamed), "--catch-wheel", str(fake_backend_wheel(tmp_path / "be")),
               "--patches-dir", str(series(tmp_path / "patches")), "--out", str(tmp_path / "dist"),
               env={"CATCH_CACHE": str(tmp_path / "cache")})
    assert "cp311-cp311" in one_line_error(proc)
    assert not list((tmp_path / "dist").glob("*.whl"))


def test_metadata_of_another_project_is_refused(tmp_path: Path) -> None:
    meta = b"Metadata-Version: 2.1\nName: not-torch\nVersion: 2.13.0+cpu\n\n"
    up = rewrite(upstream(tmp_path), tmp_path / "up" / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
                 replace={f"{UP_DI}/METADATA": meta})
    err = refused(tmp_path, up)
    assert "not-torch" in str(err) and f"{UP_DI}/METADATA" in str(err)


def test_backend_renamed_to_fit_is_refused(tmp_path: Path) -> None:
    built = fake_backend_wheel(tmp_path / "be-src", tag="cp312-cp312-linux_x86_64")
    renamed = tmp_path / "be" / "torch_mlu-0.1.0-py3-none-any.whl"
    renamed.parent.mkdir()
    renamed.write_bytes(built.read_bytes())
    err = refused(tmp_path, upstream(tmp_path), renamed)
    assert str(renamed) in str(err) and "cp312-cp312-linux_x86_64" in str(err)


def test_second_dist_info_directory_is_refused(tmp_path: Path) -> None:
    # named like the combined wheel's own .dist-info: it would be copied, then written again
    stray = "torch-2.13.0+cpu.catch1.dist-info/METADATA"
    up = rewrite(upstream(tmp_path), tmp_path / "up" / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
                 extra=[(stray, b"Metadata-Version: 2.1\nName: torch\nVersion: 9\n\n", REGULAR)])
    err = refused(tmp_path, up)
    assert ".dist-info directories" in str(err) and "torch-2.13.0+cpu.catch1.dist-info" in str(err)


def test_identity_check_accepts_a_consistent_wheel(tmp_path: Path) -> None:
    from catch_tools.wheel.metadata import check_wheel_identity

    with RawZipReader(upstream(tmp_path)) as reader:
        check_wheel_identity(reader)


# --- non-UTF-8 metadata: one line naming the wheel, the member and the line ---

@pytest.mark.parametrize("member", ["METADATA", "WHEEL", "RECORD"])
def test_non_utf8_upstream_metadata_names_wheel_member_and_line(tmp_path: Path, member: str) -> None:
    good = upstream(tmp_path)
    with zipfile.ZipFile(good) as zf:
        text = zf.read(f"{UP_DI}/{member}")
    bad_line = b"Summary: caf\xe9\n" if member != "RECORD" else b"torch/caf\xe9.py,,\n"
    lines = text.splitlines(keepends=True)
    data = b"".join(lines[:2]) + bad_line + b"".join(lines[2:])
    up = rewrite(good, tmp_path / "up" / good.name, replace={f"{UP_DI}/{member}": data})
    err = refused(tmp_path, up)
    assert err.path == f"{up}!{UP_DI}/{member}" and err.line == 3 and "UTF-8" in str(err)


def test_non_utf8_backend_metadata_is_refused(tmp_path: Path) -> None:
    backend = fake_backend_wheel(tmp_path / "be-src")
    di = "torch_mlu-0.1.0.dist-info"
    meta = b"Metadata-Version: 2.1\nName: torch_mlu\nVersion: 0.1.0\nSummary: \xff\nRequires-Dist: torch==2.13.0\n\n"
    bad = rewrite(backend, tmp_path / "be" / backend.name, replace={f"{di}/METADATA": meta})
    err = refused(tmp_path, upstream(tmp_path), bad)
    assert err.path == f"{bad}!{di}/METADATA" and err.line == 4


def test_cli_non_utf8_record_is_one_line(tmp_path: Path) -> None:
    good = upstream(tmp_path)
    with zipfile.ZipFile(good) as zf:
        record = zf.read(f"{UP_DI}/RECORD")
    up = rewrite(good, tmp_path / "up" / good.name, replace={f"{UP_DI}/RECORD": record + b"torch/\xff.py,,\n"})
    proc = cli("--upstream-wheel", str(up), "--catch-wheel", str(fake_backend_wheel(tmp_path / "be")),
               "--patches-dir", str(series(tmp_path / "patches")), "--out", str(tmp_path / "dist"),
               env={"CATCH_CACHE": str(tmp_path / "cache")})
    assert f"{UP_DI}/RECORD:" in one_line_error(proc)


# --- the output directory and the build's own temporary files ---

def test_users_file_named_like_an_old_partial_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    (out / ".thesis.4000000.partial").write_text("chapter 1\n")
    (out / f".thesis.{dead}.partial").write_text("chapter 2\n")
    (out / f".catch-build-{dead}-notes").mkdir()  # not a name the build makes: kept with its contents
    (out / f".catch-build-{dead}-notes" / "draft.whl.partial").write_text("draft\n")
    before = checksum(out)
    result = build_overlay(upstream_wheel=upstream(tmp_path), backend_wheel=fake_backend_wheel(tmp_path / "be"),
                           patches_dir=series(tmp_path / "patches"), pin=PIN, out_dir=out)
    after = checksum(out)
    assert after.pop(result.wheel.name)
    assert after == before


def test_failed_build_leaves_no_work_directory(tmp_path: Path) -> None:
    good = upstream(tmp_path)
    renamed = tmp_path / "up" / good.name.replace("cp311-cp311", "cp312-cp312")
    renamed.parent.mkdir()
    renamed.write_bytes(good.read_bytes())
    refused(tmp_path, renamed)
    assert not list((tmp_path / "dist").glob(".catch-build-*"))


def test_out_pointing_at_a_file_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("not a directory\n")
    proc = cli("--upstream-wheel", str(upstream(tmp_path)), "--catch-wheel", str(fake_backend_wheel(tmp_path / "be")),
               "--patches-dir", str(series(tmp_path / "patches")), "--out", str(target),
               env={"CATCH_CACHE": str(tmp_path / "cache")})
    assert str(target) in one_line_error(proc)
    assert target.read_text() == "not a directory\n"
    below = cli("--upstream-wheel", str(upstream(tmp_path)), "--catch-wheel", str(fake_backend_wheel(tmp_path / "be")),
                "--patches-dir", str(series(tmp_path / "patches")), "--out", str(target / "dist"),
                env={"CATCH_CACHE": str(tmp_path / "cache")})
    assert str(target) in one_line_error(below)


# --- the writer names the archive and the sources of a duplicate member ---

def test_duplicate_member_names_output_wheel_and_sources(tmp_path: Path) -> None:
    up = upstream(tmp_path)
    final = tmp_path / "dist" / "torch-2.13.0+cpu.catch1-cp311-cp311-manylinux_2_28_x86_64.whl"
    final.parent.mkdir()
    with RawZipReader(up) as reader, pytest.raises(UserError) as info, \
            open_writer(tmp_path / "dist" / "work.partial", name=final) as writer:
        member = reader.get("torch/version.py")
        assert member is not None
        writer.copy_raw(reader, member)
        writer.add("torch/version.py", b"__version__ = '0'\n", dos_datetime(0), source=tmp_path / "patches")
    message = str(info.value)
    assert message.startswith(f"{final}: duplicate zip member torch/version.py")
    assert str(up) in message and str(tmp_path / "patches") in message
