# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Hostile wheels at the one wheel reader and the unpacking behind it: nothing written outside the target, no file of
a cached tree changed through a link, a cached tree changed after unpacking never trusted again.

The wheels are made here with :mod:`zipfile`; "nothing changed" is a checksum of the target and the cache before and
after."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel

from catch_tools.errors import UserError
from catch_tools.interfaces.check import run_check
from catch_tools.pin import Pin
from catch_tools.upstream import extract_python_tree
from catch_tools.wheel.overlay import build_overlay
from catch_tools.wheel.unpack import MANIFEST, Unpacker, verify_tree
from catch_tools.wheel.zipraw import RawZipReader

REPO = Path(__file__).resolve().parents[2]
COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"
PIN = Pin("https://github.com/pytorch/pytorch.git", "v2.13.0", COMMIT, "2.13.0+cpu", 1)


def tree_sum(root: Path) -> str:
    """One digest of every path, file content, link target and mode under ``root`` (missing root: empty)."""
    h = hashlib.sha256()
    if root.exists():
        for path in sorted(root.rglob("*")):
            st = path.lstat()
            h.update(f"{path.relative_to(root)}\0{stat.S_IFMT(st.st_mode)}\0{st.st_mode & 0o7777}\0".encode())
            if path.is_symlink():
                h.update(os.readlink(path).encode())
            elif path.is_file():
                h.update(path.read_bytes())
    return h.hexdigest()


def zip_with(path: Path, members: list[tuple[str, bytes, int]]) -> Path:
    """A zip of ``(name, data, unix mode incl. file type)`` members, written as given (duplicates kept)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            info.create_system = 3
            with pytest.warns(UserWarning) if name in zf.NameToInfo else contextlib.nullcontext():
                zf.writestr(info, data)
    return path


REG = stat.S_IFREG | 0o644
HOSTILE = {
    "dotdot": [("torch/../../escape/X.py", b"x = 1\n", REG)],
    "absolute": [("/tmp/escape/X.py", b"x = 1\n", REG)],
    "dot-segment": [("torch/./__init__.py", b"x = 1\n", REG)],
    "empty-segment": [("torch//__init__.py", b"x = 1\n", REG)],
    "backslash": [("torch\\..\\..\\X.py", b"x = 1\n", REG)],
    "drive-letter": [("C:/X.py", b"x = 1\n", REG)],
    "newline": [("torch/a\nb.py", b"x = 1\n", REG)],
    "symlink": [("torch/link.py", b"/etc/passwd", stat.S_IFLNK | 0o777)],
    "fifo": [("torch/fifo", b"", stat.S_IFIFO | 0o644)],
    "duplicate": [("torch/__init__.py", b"import os\n", REG), ("torch/__init__.py", b"x = 1\n", REG)],
    "nfc-duplicate": [("torch/caf\u00e9.py", b"", REG), ("torch/cafe\u0301.py", b"", REG)],
    "file-then-dir": [("torch/a.py", b"", REG), ("torch/a.py/b.py", b"", REG)],
    "dir-then-file": [("torch/a.py/b.py", b"", REG), ("torch/a.py", b"", REG)],
    "file-and-dir-entry": [("torch/a", b"", REG), ("torch/a/", b"", stat.S_IFDIR | 0o755)],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_reader_refuses_unsafe_members(case: str, tmp_path: Path) -> None:
    wheel = zip_with(tmp_path / "torch-9.9.9-py3-none-any.whl", HOSTILE[case])
    with pytest.raises(UserError) as caught:
        RawZipReader(wheel)
    message = str(caught.value)
    assert message.startswith(str(wheel)) and "unsafe wheel member" in message and "\n" not in message


def test_reader_opens_plain_members_and_directory_entries(tmp_path: Path) -> None:
    wheel = zip_with(tmp_path / "ok.whl", [("torch/", b"", stat.S_IFDIR | 0o755), ("torch/a.py", b"a\n", REG),
                                           ("torch/sub/b.py", b"b\n", 0), ("torch/café.py", b"", REG)])
    with RawZipReader(wheel) as reader:
        assert reader.names() == ["torch/", "torch/a.py", "torch/sub/b.py", "torch/café.py"]


def test_upstream_tree_of_a_hostile_release_wheel_writes_nothing_outside(tmp_path: Path) -> None:
    """``upstream.py tree`` on a cached release wheel with a ``..`` member: one line, exit 2, nothing written."""
    cache = tmp_path / "cache"
    zip_with(cache / "wheels" / "torch-9.9.9-cp311-cp311-linux_x86_64.whl",
             [("torch/__init__.py", b"", REG), ("torch/version.py", b"git_version = 'x'\n", REG),
              ("torch/../../escape/X.py", b"print('escaped')\n", REG)])
    wheels_before = tree_sum(cache / "wheels")
    env = {**os.environ, "CATCH_CACHE": str(cache)}
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "upstream.py"), "tree", "9.9.9"], env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "torch/../../escape/X.py" in proc.stderr
    assert not list(tmp_path.rglob("X.py"))
    assert not (cache / "upstream" / "torch-9.9.9").exists()
    assert tree_sum(cache / "wheels") == wheels_before


def test_extract_python_tree_never_writes_through_an_existing_file(tmp_path: Path) -> None:
    """A target that already holds the member's path (a link into another tree) is refused, the other tree kept."""
    other = tmp_path / "other.py"
    other.write_bytes(b"trusted\n")
    dest = tmp_path / "dest"
    (dest / "torch").mkdir(parents=True)
    os.link(other, dest / "torch" / "__init__.py")
    wheel = zip_with(tmp_path / "w.whl", [("torch/__init__.py", b"hostile\n", REG)])
    with pytest.raises(UserError, match="written twice"):
        extract_python_tree(wheel, dest)
    assert other.read_bytes() == b"trusted\n"


def test_unpacker_refuses_a_directory_that_resolves_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "torch").symlink_to(outside)
    with pytest.raises(UserError, match="outside"):
        Unpacker(root).write("torch/x.py", b"x")
    assert list(outside.iterdir()) == []


@pytest.fixture
def pair_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(upstream, good combined, cache dir) with the check's cache in ``tmp_path``."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CATCH_CACHE", str(cache))
    upstream = fake_torch_wheel(tmp_path / "up", PIN.wheel_version, COMMIT)
    (tmp_path / "patches").mkdir()
    (tmp_path / "patches" / "series").write_text("")
    result = build_overlay(upstream_wheel=upstream, backend_wheel=fake_backend_wheel(tmp_path / "be"),
                           patches_dir=tmp_path / "patches", pin=PIN, out_dir=tmp_path / "dist")
    return upstream, result.wheel, cache


def _with_extra_member(good: Path, dst: Path, name: str, data: bytes, first: bool = False) -> Path:
    """``good`` with one more member ``name`` (appended, or before every other member when ``first``)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out, \
            pytest.warns(UserWarning) if name in src.NameToInfo else contextlib.nullcontext():
        if first:
            out.writestr(name, data)
        for info in src.infolist():
            out.writestr(info, src.read(info))
        if not first:
            out.writestr(name, data)
    return dst


def test_combined_wheel_cannot_poison_the_cached_upstream_tree(pair_wheels: tuple[Path, Path, Path],
                                                              tmp_path: Path) -> None:
    """A combined wheel with ``torch/./__init__.py``: refused with one line; the cached upstream tree unchanged."""
    upstream, good, cache = pair_wheels
    assert run_check(upstream, good, (0, 3)).exit_code == 0
    before = tree_sum(cache)
    hostile = _with_extra_member(good, tmp_path / "hostile" / good.name, "torch/./__init__.py",
                                 b"raise SystemExit('poisoned')\n")
    env = {**os.environ, "CATCH_CACHE": str(cache)}
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), "--layers", "3",
                           str(upstream), str(hostile)], env=env, capture_output=True, text=True, check=False,
                          timeout=300)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "torch/./__init__.py" in proc.stderr and "unsafe wheel member" in proc.stderr
    assert tree_sum(cache) == before


def test_combined_wheel_with_a_hostile_first_duplicate_is_refused(pair_wheels: tuple[Path, Path, Path],
                                                                   tmp_path: Path) -> None:
    upstream, good, cache = pair_wheels
    hostile = _with_extra_member(good, tmp_path / "dup" / good.name, "torch/__init__.py",
                                 b"raise SystemExit('hostile')\n", first=True)
    with pytest.raises(UserError, match="a second member with this path"):
        run_check(upstream, hostile, (0, 3))


def test_changed_cached_tree_is_unpacked_again(pair_wheels: tuple[Path, Path, Path],
                                               caplog: pytest.LogCaptureFixture) -> None:
    """A cached upstream tree changed after unpacking is detected by its digests and replaced before use."""
    upstream, good, cache = pair_wheels
    assert run_check(upstream, good, (0, 3)).exit_code == 0
    (tree,) = (cache / "unpacked").iterdir()
    assert (tree / MANIFEST).is_file() and verify_tree(tree) is None
    init = tree / "torch" / "__init__.py"
    with zipfile.ZipFile(upstream) as zf:
        original = zf.read("torch/__init__.py")
    with open(init, "ab") as fh:  # what a write through a hard link does to the shared inode
        fh.write(b"\nraise SystemExit('poisoned')\n")
    assert verify_tree(tree) == "torch/__init__.py changed since it was unpacked"
    assert run_check(upstream, good, (0, 3)).exit_code == 0
    assert init.read_bytes() == original
    assert "is not as unpacked" in caplog.text


def test_reader_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "torch-9.9.9-py3-none-any.whl"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="FIFO"):
        RawZipReader(fifo)
