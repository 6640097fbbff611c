# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Hostile wheels at the one wheel reader and the unpacking behind it: nothing written outside the target, no file of
a cached tree changed through a link, a cached tree changed after unpacking never trusted again.

The wheels are made here with :mod:`zipfile`; "nothing changed" is a checksum of the target and the cache before and
after."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel
from hostile import tree_checksum

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
    wheels_before = tree_checksum(cache / "wheels")
    env = {**os.environ, "CATCH_CACHE": str(cache)}
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "upstream.py"), "tree", "9.9.9"], env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "torch/../../escape/X.py" in proc.stderr
    assert not list(tmp_path.rglob("X.py"))
    assert not (cache / "upstream" / "torch-9.9.9").exists()
    assert tree_checksum(cache / "wheels") == wheels_before


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
    before = tree_checksum(cache)
    hostile = _with_extra_member(good, tmp_path / "hostile" / good.name, "torch/./__init__.py",
                                 b"raise SystemExit('poisoned')\n")
    env = {**os.environ, "CATCH_CACHE": str(cache)}
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_native_interfaces.py"), "--layers", "3",
                           str(upstream), str(hostile)], env=env, capture_output=True, text=True, check=False,
                          timeout=300)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "torch/./__init__.py" in proc.stderr and "unsafe wheel member" in proc.stderr
    assert tree_checksum(cache) == before


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


@pytest.mark.parametrize("name", ["torch/a\u2028b.py", "torch/a\u0085b.py", "torch/\u202eyp.exe", "torch/a\u200bb.py"])
def test_reader_refuses_hidden_unicode_in_member_names(name: str, tmp_path: Path) -> None:
    """Line separators, C1 controls and format characters (RTL override, zero width) hide what a name is."""
    wheel = zip_with(tmp_path / "torch-9.9.9-py3-none-any.whl", [(name, b"x = 1\n", REG)])
    with pytest.raises(UserError, match="control, format or line-separator character") as caught:
        RawZipReader(wheel)
    assert "\n" not in str(caught.value) and "\u2028" not in str(caught.value)


def test_reader_refuses_a_zip_bomb_and_a_lying_size(tmp_path: Path) -> None:
    """A member declaring a size far beyond its compressed bytes is refused at open; one that expands past its
    declared size is refused when read, without inflating more than that size."""
    bomb = tmp_path / "bomb.whl"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("torch/zeros.bin", b"\0" * (64 << 20))
    with pytest.raises(UserError, match="zip bomb"):
        RawZipReader(bomb)
    liar = tmp_path / "liar.whl"
    with zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("torch/a.py", b"x = 1\n" * 1000)
    raw = bytearray(liar.read_bytes())
    with zipfile.ZipFile(liar) as zf:
        info = zf.getinfo("torch/a.py")
    central = raw.rindex(b"PK\x01\x02")
    raw[central + 24 : central + 28] = (10).to_bytes(4, "little")  # uncompressed size in the central directory
    liar.write_bytes(bytes(raw))
    assert info.file_size == 6000
    with RawZipReader(liar) as reader, pytest.raises(UserError, match="CRC-32 or size mismatch"):
        reader.read("torch/a.py")


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_cache_entry_that_is_not_a_tree_is_replaced_never_followed(kind: str, pair_wheels: tuple[Path, Path, Path],
                                                                      tmp_path: Path) -> None:
    upstream, good, cache = pair_wheels
    assert run_check(upstream, good, (0, 3)).exit_code == 0
    (tree,) = (cache / "unpacked").iterdir()
    shutil.rmtree(tree)
    users = tmp_path / "users-dir"
    users.mkdir()
    (users / "notes.txt").write_text("mine\n")
    if kind == "file":
        tree.write_text("not a tree\n")
    else:
        tree.symlink_to(users)
    before = tree_checksum(users)
    assert run_check(upstream, good, (0, 3)).exit_code == 0
    assert tree.is_dir() and not tree.is_symlink() and verify_tree(tree) is None
    assert tree_checksum(users) == before


def test_lock_file_planted_as_a_link_is_never_emptied(tmp_path: Path) -> None:
    """A hard link at the lock file's name is locked, not truncated; a symlink there is refused in one line."""
    from catch_tools.upstream import _locked

    precious = tmp_path / "precious.txt"
    precious.write_text("precious\n")
    os.link(precious, tmp_path / "hard.lock")
    with _locked(tmp_path / "hard.lock"):
        pass
    assert precious.read_text() == "precious\n"
    (tmp_path / "sym.lock").symlink_to(precious)
    with pytest.raises(UserError, match="lock file"), _locked(tmp_path / "sym.lock"):
        pass
    assert precious.read_text() == "precious\n"


def test_upstream_tree_refuses_a_member_inside_dot_git(tmp_path: Path) -> None:
    wheel = zip_with(tmp_path / "torch-9.9.9-cp311-cp311-linux_x86_64.whl",
                     [("torch/__init__.py", b"", REG), ("torch/.git/hooks/x.py", b"import os\n", REG)])
    dest = tmp_path / "dest"
    with pytest.raises(UserError, match=r"inside a \.git directory"):
        extract_python_tree(wheel, dest)
    assert tree_checksum(dest) == {}


def test_upstream_tree_files_get_default_modes(tmp_path: Path) -> None:
    """A release's commit id must not depend on the wheel's mode bits: an executable member is written 0644."""
    wheel = zip_with(tmp_path / "w.whl", [("torch/__init__.py", b"", REG), ("torch/run.py", b"", stat.S_IFREG | 0o755)])
    dest = tmp_path / "dest"
    extract_python_tree(wheel, dest)
    assert {p.name: stat.S_IMODE(p.stat().st_mode) & 0o111 for p in (dest / "torch").iterdir()} == \
        {"__init__.py": 0, "run.py": 0}
