# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Publishing (scripts/publish_index.py, ci/scripts/publish_release.sh) given hostile and careless input.

The index is append-only: a refused publish leaves every byte of it as it was (a checksum of the whole tree, hidden
files included, before and after), a published file is a copy that no later change to ``dist/`` reaches, a stray file
in the index is reported and does not stop a publish, and only wheels that are what their name says get in. Every bad
input gets one line on stderr and exit status 2. The wheels are made here, with :mod:`zipfile`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel, write_wheel

from catch_tools.pin import Pin
from catch_tools.wheel.overlay import build_overlay

REPO_ROOT = Path(__file__).resolve().parents[2]
PUBLISH_INDEX = REPO_ROOT / "scripts" / "publish_index.py"
PUBLISH_RELEASE = REPO_ROOT / "ci" / "scripts" / "publish_release.sh"
COMMIT = "cf30153c4c131c8164ee7798e5022d810682e2cb"
TAGS = "cp311-cp311-manylinux_2_28_x86_64"
COMBINED = f"torch-2.13.0+cpu.catch1-{TAGS}.whl"
PROBE = "catch_probe-1.0-py3-none-any.whl"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


def tree_sum(root: Path) -> str:
    """sha256 over every path below ``root`` (hidden ones too), its kind and its bytes; "absent" without ``root``."""
    if not root.exists():
        return "absent"
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + os.readlink(path).encode())
        elif path.is_file():
            digest.update(b"file:" + path.read_bytes())
        else:
            digest.update(b"dir")
    return digest.hexdigest()


def probe(out: Path, value: str = "1", **kw: object) -> Path:
    """A valid pure-Python wheel catch_probe 1.0 (``kw``: :func:`fake_wheels.write_wheel` options)."""
    return write_wheel(out, "catch_probe", "1.0", {"catch_probe.py": f"VALUE = {value}\n"}, **kw)  # type: ignore[arg-type]


def renamed(wheel: Path, name: str) -> Path:
    return wheel.rename(wheel.with_name(name))


def run(*cmd: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src"), "PYTHON": sys.executable, **(env or {})}
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=full, check=False, timeout=300)


def publish_index(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run(sys.executable, PUBLISH_INDEX, *args)


def publish_release(tag: str, dist: Path, index: Path) -> subprocess.CompletedProcess[str]:
    return run("bash", PUBLISH_RELEASE, tag, dist, env={"CATCH_INDEX_DIR": str(index), "CATCH_GH_RELEASE": "0"})


def one_error_line(proc: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for part in parts:
        assert part in proc.stderr, proc.stderr


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """An index holding one published wheel (other-1.0)."""
    root = tmp_path / "idx"
    other = write_wheel(tmp_path / "first", "other", "1.0", {"other.py": "X = 1\n"})
    proc = publish_index(other, "--index-dir", root)
    assert proc.returncode == 0, proc.stderr
    return root


def combined_wheel(tmp_path: Path) -> Path:
    """A combined wheel made by the overlay build from small synthetic inputs (what a release publishes)."""
    pin = Pin("https://github.com/pytorch/pytorch.git", "v2.13.0", COMMIT, "2.13.0+cpu", 1)
    series = tmp_path / "patches"
    series.mkdir()
    (series / "series").write_text("# no patches\n")
    result = build_overlay(upstream_wheel=fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT),
                           backend_wheel=fake_backend_wheel(tmp_path / "be"), patches_dir=series, pin=pin,
                           out_dir=tmp_path / "dist")
    assert result.wheel.name == COMBINED
    return result.wheel


# ---- a published file never changes ---------------------------------------------------------------------------------

def test_a_change_to_the_wheel_in_dist_after_publishing_does_not_reach_the_index(tmp_path: Path, index: Path) -> None:
    wheel = probe(tmp_path / "dist")
    first = publish_index(wheel, "--index-dir", index)
    assert first.returncode == 0, first.stderr
    published = index / "files" / PROBE
    sha = hashlib.sha256(published.read_bytes()).hexdigest()
    assert published.stat().st_nlink == 1 and not published.samefile(wheel)  # a copy, not a link
    before = tree_sum(index)
    # `cp other.whl dist/X.whl`: new bytes written into the same inode
    wheel.write_bytes(probe(tmp_path / "other", "2").read_bytes())
    assert hashlib.sha256(published.read_bytes()).hexdigest() == sha
    again = publish_index(wheel, "--index-dir", index)
    one_error_line(again, "already published with other bytes")
    assert tree_sum(index) == before
    assert f"#sha256={sha}" in (index / "simple" / "catch-probe" / "index.html").read_text()


def test_publish_release_publishes_a_copy_of_a_combined_wheel(tmp_path: Path) -> None:
    wheel = combined_wheel(tmp_path)
    proc = publish_release("v2.13.0-catch1", wheel.parent, tmp_path / "idx")
    assert proc.returncode == 0, proc.stderr
    published = tmp_path / "idx" / "files" / COMBINED
    assert published.read_bytes() == wheel.read_bytes()
    assert published.stat().st_nlink == 1 and wheel.stat().st_nlink == 1
    page = (tmp_path / "idx" / "simple" / "torch" / "index.html").read_text()
    assert f"#sha256={hashlib.sha256(wheel.read_bytes()).hexdigest()}" in page
    assert not [p.name for p in (tmp_path / "idx" / "files").iterdir() if p.name.endswith(".tmp")]


# ---- a half-published index ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("stray", ["notawheel.whl", "dir", "link"])
def test_a_stray_file_in_the_index_is_reported_and_the_publish_goes_on(tmp_path: Path, index: Path,
                                                                        stray: str) -> None:
    files = index / "files"
    if stray == "dir":
        name = "stray-1.0-py3-none-any.whl"
        (files / name).mkdir()
    elif stray == "link":
        name = "stray-1.0-py3-none-any.whl"
        (files / name).symlink_to(write_wheel(tmp_path / "elsewhere", "stray", "1.0", {"stray.py": ""}))
    else:
        name = stray
        (files / name).write_text("not a wheel")
    proc = publish_index(probe(tmp_path / "dist"), "--index-dir", index)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("warning: ") and name in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert PROBE in (index / "simple" / "catch-probe" / "index.html").read_text()
    assert name not in (index / "simple" / "index.html").read_text()
    assert not (index / "simple" / "stray").exists()
    again = publish_index(probe(tmp_path / "dist2", "1"), "--index-dir", index)  # and every later publish
    assert again.returncode == 0 and again.stderr.startswith("warning: "), again.stderr


def test_nothing_is_written_when_one_of_the_wheels_is_refused(tmp_path: Path, index: Path) -> None:
    good = probe(tmp_path / "dist")
    bad = renamed(write_wheel(tmp_path / "dist2", "zzz", "1.0", {"zzz.py": ""}), "zzz-2.0-py3-none-any.whl")
    before = tree_sum(index)
    one_error_line(publish_index(good, bad, "--index-dir", index), "is not the file name's zzz 2.0", bad.name)
    assert tree_sum(index) == before


def test_the_same_name_twice_with_other_bytes_is_refused(tmp_path: Path, index: Path) -> None:
    before = tree_sum(index)
    proc = publish_index(probe(tmp_path / "a"), probe(tmp_path / "b", "2"), "--index-dir", index)
    one_error_line(proc, "given twice with other bytes")
    assert tree_sum(index) == before


def test_a_directory_in_the_way_of_the_wheel_is_refused(tmp_path: Path, index: Path) -> None:
    (index / "files" / PROBE).mkdir()
    before = tree_sum(index)
    one_error_line(publish_index(probe(tmp_path / "dist"), "--index-dir", index), "not a published wheel")
    assert tree_sum(index) == before


# ---- valid wheel file names only -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    'catch_probe-1.0-py3-none-any"><img src=x onerror=alert(1)>.whl',
    "catch_probe-1.0-py3-none-any\n.whl",
    "catch_probe-1.0-py3-none-an y.whl",
    "catch_pröbe-1.0-py3-none-any.whl",
])
def test_a_name_outside_the_wheel_name_grammar_is_refused(tmp_path: Path, index: Path, name: str) -> None:
    wheel = renamed(probe(tmp_path / "dist"), name)
    before = tree_sum(index)
    one_error_line(publish_index(wheel, "--index-dir", index), "is not a valid wheel file name", repr(name))
    assert tree_sum(index) == before


# ---- wheels are what their name says ---------------------------------------------------------------------------------

def test_publish_release_refuses_the_upstream_wheel_renamed_to_the_combined_name(tmp_path: Path) -> None:
    upstream = fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT)
    dist = tmp_path / "dist"
    dist.mkdir()
    shutil.copy(upstream, dist / COMBINED)
    before = tree_sum(dist)
    proc = publish_release("v2.13.0-catch1", dist, tmp_path / "idx")
    one_error_line(proc, COMBINED, "is not the file name's torch 2.13.0+cpu.catch1")
    assert tree_sum(tmp_path / "idx") == "absent" and tree_sum(dist) == before  # no SHA256SUMS either


@pytest.mark.parametrize(("edit", "message"), [
    ({"WHEEL": "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: cp311-cp311-any\n"},
     "the file name says py3-none-any but WHEEL says cp311-cp311-any"),
    ({"WHEEL": "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\n"}, "but WHEEL says no Tag"),
    ({"WHEEL": "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none\n"},
     "not a wheel tag: Tag: py3-none"),
    ({"METADATA": "Metadata-Version: 2.1\nName: other-probe\nVersion: 1.0\n"},
     "METADATA Name other-probe is not the file name's catch-probe"),
    ({"METADATA": "Metadata-Version: 2.1\nName: catch-probe\nVersion: 1.0+cpu\n"},
     "METADATA Version 1.0+cpu is not the file name's 1.0"),
    ({"METADATA": b"Metadata-Version: 2.1\nName: catch-probe\nVersion: 1.0\nSummary: caf\xe9\n"},
     "catch_probe-1.0.dist-info/METADATA:4: non-UTF-8 byte"),
    ({"METADATA": "Metadata-Version: 2.1\nName: catch-probe\nVersion: 1.0\nRequires-Python: >=3.x\n"},
     "invalid Requires-Python '>=3.x'"),
])
def test_a_wheel_whose_contents_disagree_with_its_name_is_refused(tmp_path: Path, index: Path,
                                                                   edit: dict[str, str | bytes], message: str) -> None:
    wheel = probe(tmp_path / "dist", extra_metadata=edit)
    before = tree_sum(index)
    one_error_line(publish_index(wheel, "--index-dir", index), str(wheel), message)
    one_error_line(publish_index("--check", wheel), message)
    assert tree_sum(index) == before


def test_a_non_utf8_record_is_refused_naming_the_wheel_and_member(tmp_path: Path, index: Path) -> None:
    good = probe(tmp_path / "good")
    wheel = tmp_path / "dist" / PROBE
    wheel.parent.mkdir()
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(wheel, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(info, data + b"# caf\xe9\n" if info.filename.endswith("/RECORD") else data)
    before = tree_sum(index)
    one_error_line(publish_index(wheel, "--index-dir", index),
                   f"{wheel}!catch_probe-1.0.dist-info/RECORD:", "non-UTF-8 byte")
    assert tree_sum(index) == before


def test_a_member_that_differs_from_record_is_refused(tmp_path: Path, index: Path) -> None:
    good = probe(tmp_path / "good")
    wheel = tmp_path / "dist" / PROBE
    wheel.parent.mkdir()
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(wheel, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, b"VALUE = 6\n" if info.filename == "catch_probe.py" else zin.read(info))
    before = tree_sum(index)
    one_error_line(publish_index(wheel, "--index-dir", index), "sha256 of catch_probe.py does not match RECORD")
    assert tree_sum(index) == before


# ---- one line for every bad input ----------------------------------------------------------------------------------

def test_publish_release_quotes_a_wheel_name_with_a_newline(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    renamed(combined_wheel(tmp_path), "torch-2.13.0+cpu.catch1-cp311-cp311-manylinux_2_28\n_x86_64.whl")
    before = tree_sum(dist)
    proc = publish_release("v2.13.0-catch1", dist, tmp_path / "idx")
    one_error_line(proc, "is not a valid wheel file name", r"manylinux_2_28\n_x86_64.whl")
    assert tree_sum(tmp_path / "idx") == "absent" and tree_sum(dist) == before


def test_an_index_dir_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "idx"
    target.write_text("a file\n")
    one_error_line(publish_index(probe(tmp_path / "dist"), "--index-dir", target),
                   f"{target}: --index-dir needs a directory, and this is not one")
    assert target.read_text() == "a file\n"


def test_a_fifo_is_refused_not_read(tmp_path: Path, index: Path) -> None:
    fifo = tmp_path / PROBE
    os.mkfifo(fifo)
    before = tree_sum(index)
    one_error_line(publish_index(fifo, "--index-dir", index), str(fifo), "not a regular file")
    assert tree_sum(index) == before
