# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Hostile and careless input to the combined-wheel build (``scripts/build_wheel.py``): wheels that are not what
their name says, members that would escape, backend requirements and entry points that reach plain ``torch``
installs, output and cache directories that are files or read-only, user files that look like the build's own
temporary files, a cached release wheel for another platform, a closed standard output. Every refusal is one line,
exit 2, and leaves the output directory as it was."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel, write_wheel
from hostile import one_line_error, tree_checksum
from packaging.tags import sys_tags

from catch_tools import upstream as upstream_mod
from catch_tools.errors import UserError
from catch_tools.pin import Pin
from catch_tools.wheel import overlay
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
    before = tree_checksum(out)
    with pytest.raises(UserError) as info:
        build_overlay(upstream_wheel=up, backend_wheel=backend or fake_backend_wheel(tmp / "be"),
                      patches_dir=series(tmp / "patches"), pin=PIN, out_dir=out)
    assert tree_checksum(out) == before
    assert "\n" not in str(info.value)
    return info.value


def cli(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "build_wheel.py"), *args], capture_output=True,
                          text=True, check=False, env=dict(os.environ, **(env or {})), timeout=300)




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
    assert tree_checksum(out) == {} and not (tmp_path / "escape").exists()


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
    before = tree_checksum(out)
    result = build_overlay(upstream_wheel=upstream(tmp_path), backend_wheel=fake_backend_wheel(tmp_path / "be"),
                           patches_dir=series(tmp_path / "patches"), pin=PIN, out_dir=out)
    after = tree_checksum(out)
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


# --- the backend's requirements: nothing reaches a plain `pip install torch` ---

AUTOLOAD = "[torch.backends]\nmlu = torch_mlu:_autoload\n"


def backend_with(tmp: Path, *, entry_points: str = AUTOLOAD, requires: Sequence[str] = ("torch==2.13.0",)) -> Path:
    """A backend wheel like the fake one, with the given ``entry_points.txt`` text and ``Requires-Dist`` lines."""
    return write_wheel(tmp / "be-hostile", "torch_mlu", "0.1.0",
                       {"torch_mlu/__init__.py": "def _autoload() -> None:\n    pass\n"},
                       requires=tuple(requires), entry_points=entry_points)


@pytest.mark.parametrize("requirement", ['evilpkg ; python_version >= "3" or extra == "x"',
                                         'evilpkg ; extra != "zzz"',
                                         'filelock ; extra == "x" or python_version >= "3"'])
def test_backend_requirement_whose_marker_is_not_exactly_an_extra_is_refused(tmp_path: Path,
                                                                             requirement: str) -> None:
    backend = backend_with(tmp_path, requires=("torch==2.13.0", requirement))
    err = refused(tmp_path, upstream(tmp_path), backend)
    assert err.path == f"{backend}!torch_mlu-0.1.0.dist-info/METADATA" and requirement in str(err)


def test_backend_extra_requirement_is_still_offered(tmp_path: Path) -> None:
    backend = backend_with(tmp_path, requires=("torch==2.13.0", "libcst>=1.0.1; extra=='Migration'"))
    result = build_overlay(upstream_wheel=upstream(tmp_path), backend_wheel=backend,
                           patches_dir=series(tmp_path / "patches"), pin=PIN, out_dir=tmp_path / "dist")
    with zipfile.ZipFile(result.wheel) as zf:
        meta = zf.read("torch-2.13.0+cpu.catch1.dist-info/METADATA").decode()
    assert "Provides-Extra: migration\nRequires-Dist: libcst>=1.0.1; extra=='Migration'\n" in meta


# --- the backend's entry points ---

@pytest.mark.parametrize(("text", "line"), [
    (AUTOLOAD + "  [console_scripts]\n  torchrun = torch_mlu:_autoload\n", 3),  # hidden in mlu's value
    (AUTOLOAD + "  [console_scripts]\n", 3),
    ("[torch.backends]\nmlu = torch_mlu:_autoload\u2028[console_scripts]\u2028torchrun = torch_mlu:_autoload\n", 2),
    ("[torch.backends]\nmlu = torch_mlu:_autoload # comment\n", 2),
])
def test_backend_entry_points_read_differently_by_installers_are_refused(tmp_path: Path, text: str,
                                                                         line: int) -> None:
    backend = backend_with(tmp_path, entry_points=text)
    err = refused(tmp_path, upstream(tmp_path), backend)
    assert (err.path, err.line) == (f"{backend}!torch_mlu-0.1.0.dist-info/entry_points.txt", line)


@pytest.mark.parametrize("text", ["# [torch.backends]\n[other]\nmlu = torch_mlu:_autoload\n", "[torch.backends]\n",
                                  "[console_scripts]\ntorch_gpu2mlu = torch_mlu.cli:main\n"])
def test_backend_without_an_autoload_entry_point_is_refused(tmp_path: Path, text: str) -> None:
    backend = backend_with(tmp_path, entry_points=text)
    assert "no entry point in [torch.backends]" in str(refused(tmp_path, upstream(tmp_path), backend))


def test_backend_entry_point_outside_the_backend_package_is_refused(tmp_path: Path) -> None:
    backend = backend_with(tmp_path, entry_points="[torch.backends]\nmlu = os:system\n")
    err = refused(tmp_path, upstream(tmp_path), backend)
    assert err.line == 2 and "os:system" in str(err)


@pytest.mark.parametrize(("group", "name"), [("console_scripts", "pip"), ("console_scripts", "python3"),
                                             ("console_scripts", "Python3.11"), ("gui_scripts", "pip3"),
                                             ("gui_scripts", "torchrun"), ("console_scripts", "TorchRun")])
def test_backend_script_shadowing_a_launcher_or_torchs_script_is_refused(tmp_path: Path, group: str,
                                                                         name: str) -> None:
    backend = backend_with(tmp_path, entry_points=f"{AUTOLOAD}[{group}]\n{name} = torch_mlu:_autoload\n")
    err = refused(tmp_path, upstream(tmp_path), backend)
    assert err.line == 4 and f"[{group}] {name}" in str(err)


def test_backend_entry_points_syntax_error_names_the_backend_wheel(tmp_path: Path) -> None:
    backend = backend_with(tmp_path, entry_points=f"{AUTOLOAD}[torch.backends]\nx = torch_mlu:_autoload\n")
    up = upstream(tmp_path)
    err = refused(tmp_path, up, backend)
    assert err.path == f"{backend}!torch_mlu-0.1.0.dist-info/entry_points.txt" and err.line == 3
    assert str(up) not in str(err)


# --- the pin's wheel version as written is the wheel's name ---

def test_cli_wheel_version_with_a_line_break_is_one_line(tmp_path: Path) -> None:
    patches = series(tmp_path / "patches")
    (patches / "manifest.toml").write_text(MANIFEST.replace('"2.13.0+cpu"', '"2.13.0+cpu\\n"'))
    out = tmp_path / "dist"
    proc = cli("--upstream-wheel", str(upstream(tmp_path)), "--catch-wheel", str(fake_backend_wheel(tmp_path / "be")),
               "--patches-dir", str(patches), "--out", str(out), env={"CATCH_CACHE": str(tmp_path / "cache")})
    assert f"{patches / 'manifest.toml'}:5: " in one_line_error(proc)
    assert tree_checksum(out) == {}


# --- the cached release wheel must be one this interpreter can install ---

def test_cached_release_wheel_for_another_platform_is_not_used(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = tmp_path / "cache" / "wheels"
    wheels.mkdir(parents=True)
    foreign = wheels / "torch-2.13.0+cpu-cp39-cp39-win_amd64.whl"
    foreign.write_bytes(upstream(tmp_path).read_bytes())
    monkeypatch.setattr(upstream_mod, "_pip_download", lambda version, dest: (1, "ERROR: no network\n"))
    with pytest.raises(UserError, match="no network"):
        upstream_mod.release_wheel("2.13.0+cpu")
    tags = list(sys_tags())
    best, worse = tags[0], tags[-1]
    for tag in (worse, best):
        (wheels / f"torch-2.13.0+cpu-{tag.interpreter}-{tag.abi}-{tag.platform}.whl").write_bytes(b"")
    assert upstream_mod.release_wheel("2.13.0+cpu").name == f"torch-2.13.0+cpu-{best}.whl"


# --- the cache, the output directory, the standard output ---

def test_cli_cache_that_is_a_file_is_one_line_and_nothing_is_made(tmp_path: Path) -> None:
    cache = tmp_path / "cachefile"
    cache.write_text("not a directory\n")
    out = tmp_path / "dist"
    proc = cli("--upstream-wheel", str(upstream(tmp_path)), "--catch-wheel", str(fake_backend_wheel(tmp_path / "be")),
               "--patches-dir", str(series(tmp_path / "patches")), "--out", str(out),
               env={"CATCH_CACHE": str(cache)})
    assert str(cache) in one_line_error(proc, "CATCH_CACHE")
    assert not out.exists() and cache.read_text() == "not a directory\n"


def test_read_only_output_directory_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    out.chmod(0o555)
    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp(*args: object, dir: object = None, **kwargs: object) -> str:  # noqa: A002 -- tempfile's name
        if dir == out:  # as mkdir(2) in a directory without write permission (root is never refused one)
            raise PermissionError(errno.EACCES, "Permission denied", str(out / ".catch-build-x"))
        return real_mkdtemp(*args, dir=dir, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(overlay.tempfile, "mkdtemp", mkdtemp)
    before = tree_checksum(out)
    try:
        with pytest.raises(UserError) as info:
            build_overlay(upstream_wheel=upstream(tmp_path), backend_wheel=fake_backend_wheel(tmp_path / "be"),
                          patches_dir=series(tmp_path / "patches"), pin=PIN, out_dir=out)
    finally:
        out.chmod(0o755)
    assert info.value.path == str(out) and "Permission denied" in str(info.value)
    assert tree_checksum(out) == before


def test_cli_closed_standard_output_ends_quietly(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written (`build_wheel.py ... | head -0`)
    out = tmp_path / "dist"
    try:
        proc = subprocess.run([sys.executable, str(REPO / "scripts" / "build_wheel.py"), "--upstream-wheel",
                               str(upstream(tmp_path)), "--catch-wheel", str(fake_backend_wheel(tmp_path / "be")),
                               "--patches-dir", str(series(tmp_path / "patches")), "--out", str(out)],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, check=False, timeout=300,
                              env=dict(os.environ, CATCH_CACHE=str(tmp_path / "cache")))
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (1, "")
    assert [p.name for p in out.iterdir()] == ["torch-2.13.0+cpu.catch1-cp311-cp311-manylinux_2_28_x86_64.whl"]
