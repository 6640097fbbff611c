# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Publishing (scripts/publish_index.py, ci/scripts/publish_release.sh) given hostile and careless input.

The index is append-only: a refused publish leaves every byte of it as it was (a checksum of the whole tree, hidden
files included, before and after), a published file is a copy that no later change to ``dist/`` reaches, a stray file
in the index is reported and does not stop a publish, and only wheels that are what their name says get in. Every bad
input gets one line on stderr and exit status 2. The wheels are made here, with :mod:`zipfile`.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fake_wheels import fake_backend_wheel, fake_torch_wheel, write_wheel
from hostile import one_line_error, tree_checksum

from catch_tools.errors import UserError
from catch_tools.pin import Pin
from catch_tools.release import index as release_index
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




def probe(out: Path, value: str = "1", **kw: object) -> Path:
    """A valid pure-Python wheel catch_probe 1.0 (``kw``: :func:`fake_wheels.write_wheel` options)."""
    return write_wheel(out, "catch_probe", "1.0", {"catch_probe.py": f"VALUE = {value}\n"}, **kw)  # type: ignore[arg-type]


def renamed(wheel: Path, name: str) -> Path:
    return wheel.rename(wheel.with_name(name))


def run(*cmd: str | Path, env: dict[str, str] | None = None, unset: tuple[str, ...] = (),
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src"), "PYTHON": sys.executable, **(env or {})}
    for name in unset:
        full.pop(name, None)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=full, check=False, timeout=300,
                          cwd=cwd)


def publish_index(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run(sys.executable, PUBLISH_INDEX, *args)


def publish_release(tag: str, dist: Path, index: Path, *, env: dict[str, str] | None = None,
                    **kw: object) -> subprocess.CompletedProcess[str]:
    return run("bash", PUBLISH_RELEASE, tag, dist,
               env={"CATCH_INDEX_DIR": str(index), "CATCH_GH_RELEASE": "0", **(env or {})}, **kw)  # type: ignore[arg-type]




@pytest.fixture
def index(tmp_path: Path) -> Path:
    """An index holding one published wheel (other-1.0)."""
    root = tmp_path / "idx"
    other = write_wheel(tmp_path / "first", "other", "1.0", {"other.py": "X = 1\n"})
    proc = publish_index(other, "--index-dir", root)
    assert proc.returncode == 0, proc.stderr
    return root


def release_wheel(dist: Path) -> Path:
    """A small wheel with the combined wheel's name and metadata (enough for ``publish_release.sh``)."""
    return write_wheel(dist, "torch", "2.13.0+cpu.catch1", {"torch/__init__.py": ""}, tag=TAGS)


def path_without(bin_dir: Path, *names: str) -> str:
    """A ``PATH`` of one directory holding every command of ``$PATH`` but ``names``."""
    bin_dir.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        try:
            entries = sorted(os.scandir(directory or "."), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            link = bin_dir / entry.name
            if entry.name not in names and not link.exists() and not link.is_symlink():
                link.symlink_to(entry.path)
    return str(bin_dir)


def bound_by_permission_bits() -> list[str]:
    """The command prefix that makes a command obey permission bits: none for a user, ``unshare --user`` for root
    (in a new user namespace root keeps its uid, so it still owns its files, but loses the capabilities, such as
    CAP_DAC_OVERRIDE, that let it write where the bits say no: user_namespaces(7))."""
    if os.geteuid() != 0:
        return []
    prefix = ["unshare", "--user"]
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], check=False).returncode != 0:
        pytest.skip("running as root, and no user namespace to drop its capabilities in")
    return prefix


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
    before = tree_checksum(index)
    # `cp other.whl dist/X.whl`: new bytes written into the same inode
    wheel.write_bytes(probe(tmp_path / "other", "2").read_bytes())
    assert hashlib.sha256(published.read_bytes()).hexdigest() == sha
    again = publish_index(wheel, "--index-dir", index)
    one_line_error(again, "already published with other bytes")
    assert tree_checksum(index) == before
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
    # the scorecard beside the wheel, both in SHA256SUMS (checked by coreutils' sha256sum -c)
    assert (wheel.parent / "support.md").read_bytes() == (REPO_ROOT / "docs" / "support.md").read_bytes()
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=wheel.parent, capture_output=True, text=True,
                           check=False)
    assert check.returncode == 0 and check.stdout.splitlines() == [f"{wheel.name}: OK", "support.md: OK"], check


# ---- one publish at a time -----------------------------------------------------------------------------------------

def concurrently(*argvs: tuple[str | Path, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Run ``publish_index.py`` with each argument list at the same time; their results, in order."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    procs = [subprocess.Popen([sys.executable, str(PUBLISH_INDEX), *map(str, argv)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for argv in argvs]
    done = []
    for argv, proc in zip(argvs, procs, strict=True):
        out, err = proc.communicate(timeout=300)
        done.append(subprocess.CompletedProcess([str(a) for a in argv], proc.returncode, out, err))
    return done


def page_sha256(root: Path, project: str, filename: str) -> str:
    page = (root / "simple" / project / "index.html").read_text()
    return page.split(f"files/{filename.replace('+', '%2B')}#sha256=", 1)[1][:64]


def test_a_publish_holds_the_index_lock_while_it_reads_and_writes(tmp_path: Path, index: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def lock_is_held() -> None:
        # another open file description of the lock file: flock(2) conflicts with the publish's own
        with (index / release_index.LOCK_NAME).open("rb") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                seen.append("held")
            else:
                seen.append("free")

    real_scan, real_write = release_index._scan, release_index._write_atomic

    def scan(root: Path) -> object:
        lock_is_held()
        return real_scan(root)

    def write(path: Path, data: bytes) -> None:
        lock_is_held()
        real_write(path, data)

    monkeypatch.setattr(release_index, "_scan", scan)
    monkeypatch.setattr(release_index, "_write_atomic", write)
    release_index.publish(probe(tmp_path / "dist"), index)
    assert len(seen) > 2 and set(seen) == {"held"}, seen


def test_a_run_that_loses_a_name_to_another_run_leaves_the_winners_companions(tmp_path: Path, index: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    files = index / "files"
    winner, loser = probe(tmp_path / "winner", "1"), probe(tmp_path / "loser", "2")
    real_pages = release_index._pages

    def pages(*args: object, **kw: object) -> object:
        # another run (one that does not take the lock) publishes the name after this run read the index
        shutil.copy(winner, files / PROBE)
        (files / f".{PROBE}.sha256").write_text(hashlib.sha256(winner.read_bytes()).hexdigest() + "\n")
        return real_pages(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(release_index, "_pages", pages)
    with pytest.raises(UserError, match="published meanwhile by another run"):
        release_index.publish(loser, index)
    recorded = (files / f".{PROBE}.sha256").read_text().strip()
    assert recorded == hashlib.sha256((files / PROBE).read_bytes()).hexdigest()
    assert not (files / f"{PROBE}.metadata").exists()


def test_concurrent_publishes_of_one_name_with_other_bytes_keep_the_index_consistent(tmp_path: Path) -> None:
    first, second = probe(tmp_path / "a", "1"), probe(tmp_path / "b", "2")
    for i in range(10):
        root = tmp_path / f"idx{i}"
        results = concurrently((first, "--index-dir", root), (second, "--index-dir", root))
        assert sorted(r.returncode for r in results) == [0, 2], results
        one_line_error(next(r for r in results if r.returncode), "already published with other bytes")
        published = hashlib.sha256((root / "files" / PROBE).read_bytes()).hexdigest()
        assert (root / "files" / f".{PROBE}.sha256").read_text().strip() == published
        assert page_sha256(root, "catch-probe", PROBE) == published


def test_concurrent_publishes_of_different_wheels_both_reach_the_page(tmp_path: Path) -> None:
    one = probe(tmp_path / "a")
    two = write_wheel(tmp_path / "b", "catch_probe", "2.0", {"catch_probe.py": "VALUE = 2\n"})
    for i in range(10):
        root = tmp_path / f"idx{i}"
        results = concurrently((one, "--index-dir", root), (two, "--index-dir", root))
        assert [r.returncode for r in results] == [0, 0], results
        page = (root / "simple" / "catch-probe" / "index.html").read_text()
        assert f">{one.name}<" in page and f">{two.name}<" in page, page


# ---- the index writes only into its own directories -----------------------------------------------------------------

@pytest.mark.parametrize("where", ["simple/catch-probe", "simple", "files"])
def test_a_symlinked_directory_in_the_index_is_refused_and_nothing_outside_is_written(tmp_path: Path, index: Path,
                                                                                     where: str) -> None:
    outside = tmp_path / "outside"
    link = index / where
    if link.exists():
        link.rename(outside)  # the index's own directory, moved out and linked back
    else:
        outside.mkdir()
    (outside / "index.html").write_text("mine\n")
    link.symlink_to(outside)
    before, before_outside = tree_checksum(index), tree_checksum(outside)
    one_line_error(publish_index(probe(tmp_path / "dist"), "--index-dir", index), f"{link}: a symbolic link")
    assert tree_checksum(index) == before and tree_checksum(outside) == before_outside


def test_a_symlinked_lock_file_is_refused(tmp_path: Path, index: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("precious\n")
    lock = index / release_index.LOCK_NAME
    lock.unlink(missing_ok=True)
    lock.symlink_to(precious)
    before = tree_checksum(index)
    one_line_error(publish_index(probe(tmp_path / "dist"), "--index-dir", index), f"{lock}: a symbolic link")
    assert tree_checksum(index) == before and precious.read_text() == "precious\n"


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
    before = tree_checksum(index)
    one_line_error(publish_index(good, bad, "--index-dir", index), "is not the file name's zzz 2.0", bad.name)
    assert tree_checksum(index) == before


def test_the_same_name_twice_with_other_bytes_is_refused(tmp_path: Path, index: Path) -> None:
    before = tree_checksum(index)
    proc = publish_index(probe(tmp_path / "a"), probe(tmp_path / "b", "2"), "--index-dir", index)
    one_line_error(proc, "given twice with other bytes")
    assert tree_checksum(index) == before


def test_a_directory_in_the_way_of_the_wheel_is_refused(tmp_path: Path, index: Path) -> None:
    (index / "files" / PROBE).mkdir()
    before = tree_checksum(index)
    one_line_error(publish_index(probe(tmp_path / "dist"), "--index-dir", index), "not a published wheel")
    assert tree_checksum(index) == before


# ---- valid wheel file names only -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    'catch_probe-1.0-py3-none-any"><img src=x onerror=alert(1)>.whl',
    "catch_probe-1.0-py3-none-any\n.whl",
    "catch_probe-1.0-py3-none-an y.whl",
    "catch_pröbe-1.0-py3-none-any.whl",
])
def test_a_name_outside_the_wheel_name_grammar_is_refused(tmp_path: Path, index: Path, name: str) -> None:
    wheel = renamed(probe(tmp_path / "dist"), name)
    before = tree_checksum(index)
    one_line_error(publish_index(wheel, "--index-dir", index), "is not a valid wheel file name", repr(name))
    assert tree_checksum(index) == before


@pytest.mark.parametrize(("name", "version", "tag"), [
    ("catch_probe", "1.00", "py3-none-any"),   # the version spelled otherwise
    ("Catch_Probe", "1.0", "py3-none-any"),    # the name in another case
    ("catch.probe", "1.0", "py3-none-any"),    # the name with another separator
    ("catch_probe", "1.0", "py3-none-ANY"),    # a tag in another case
])
def test_a_name_not_in_its_normal_form_is_refused_with_the_normal_name(tmp_path: Path, index: Path, name: str,
                                                                       version: str, tag: str) -> None:
    assert publish_index(probe(tmp_path / "first"), "--index-dir", index).returncode == 0
    spelled = write_wheel(tmp_path / "dist", name, version, {"catch_probe.py": "VALUE = 2\n"}, tag=tag)
    before = tree_checksum(index)
    one_line_error(publish_index(spelled, "--index-dir", index), repr(spelled.name),
                   f"is not a normalized wheel file name: rename it {PROBE!r}")
    one_line_error(publish_index("--check", spelled), f"rename it {PROBE!r}")
    assert tree_checksum(index) == before


def test_a_wheel_published_under_another_spelling_keeps_its_name(tmp_path: Path, index: Path) -> None:
    # a file published before names had to be normal
    shutil.copy(write_wheel(tmp_path / "old", "Catch_Probe", "1.0", {"catch_probe.py": "VALUE = 1\n"}),
                index / "files")
    before = tree_checksum(index)
    one_line_error(publish_index(probe(tmp_path / "dist", "2"), "--index-dir", index),
                   f"{PROBE} is already published as Catch_Probe-1.0-py3-none-any.whl")
    assert tree_checksum(index) == before


# ---- wheels are what their name says ---------------------------------------------------------------------------------

def test_publish_release_refuses_the_upstream_wheel_renamed_to_the_combined_name(tmp_path: Path) -> None:
    upstream = fake_torch_wheel(tmp_path / "up", "2.13.0+cpu", COMMIT)
    dist = tmp_path / "dist"
    dist.mkdir()
    shutil.copy(upstream, dist / COMBINED)
    before = tree_checksum(dist)
    proc = publish_release("v2.13.0-catch1", dist, tmp_path / "idx")
    one_line_error(proc, COMBINED, "is not the file name's torch 2.13.0+cpu.catch1")
    assert not (tmp_path / "idx").exists() and tree_checksum(dist) == before  # no SHA256SUMS either


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
    before = tree_checksum(index)
    one_line_error(publish_index(wheel, "--index-dir", index), str(wheel), message)
    one_line_error(publish_index("--check", wheel), message)
    assert tree_checksum(index) == before


def test_a_non_utf8_record_is_refused_naming_the_wheel_and_member(tmp_path: Path, index: Path) -> None:
    good = probe(tmp_path / "good")
    wheel = tmp_path / "dist" / PROBE
    wheel.parent.mkdir()
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(wheel, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(info, data + b"# caf\xe9\n" if info.filename.endswith("/RECORD") else data)
    before = tree_checksum(index)
    one_line_error(publish_index(wheel, "--index-dir", index),
                   f"{wheel}!catch_probe-1.0.dist-info/RECORD:", "non-UTF-8 byte")
    assert tree_checksum(index) == before


def test_a_member_that_differs_from_record_is_refused(tmp_path: Path, index: Path) -> None:
    good = probe(tmp_path / "good")
    wheel = tmp_path / "dist" / PROBE
    wheel.parent.mkdir()
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(wheel, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, b"VALUE = 6\n" if info.filename == "catch_probe.py" else zin.read(info))
    before = tree_checksum(index)
    one_line_error(publish_index(wheel, "--index-dir", index), "sha256 of catch_probe.py does not match RECORD")
    assert tree_checksum(index) == before


# ---- one line for every bad input ----------------------------------------------------------------------------------

def test_publish_release_quotes_a_wheel_name_with_a_newline(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    renamed(combined_wheel(tmp_path), "torch-2.13.0+cpu.catch1-cp311-cp311-manylinux_2_28\n_x86_64.whl")
    before = tree_checksum(dist)
    proc = publish_release("v2.13.0-catch1", dist, tmp_path / "idx")
    one_line_error(proc, "is not a valid wheel file name", r"manylinux_2_28\n_x86_64.whl")
    assert not (tmp_path / "idx").exists() and tree_checksum(dist) == before


def test_an_index_dir_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "idx"
    target.write_text("a file\n")
    one_line_error(publish_index(probe(tmp_path / "dist"), "--index-dir", target), f"{target}: not a directory")
    assert target.read_text() == "a file\n"


def test_a_fifo_is_refused_not_read(tmp_path: Path, index: Path) -> None:
    fifo = tmp_path / PROBE
    os.mkfifo(fifo)
    before = tree_checksum(index)
    one_line_error(publish_index(fifo, "--index-dir", index), str(fifo), "not a regular file")
    assert tree_checksum(index) == before


# ---- publish_release.sh: every tool first, SHA256SUMS written safely, paths are paths --------------------------------

def test_publish_release_replaces_a_symlinked_sha256sums_and_never_writes_through_it(tmp_path: Path) -> None:
    wheel = release_wheel(tmp_path / "dist")
    precious = tmp_path / "precious.txt"
    precious.write_text("precious\n")
    (wheel.parent / "SHA256SUMS").symlink_to(precious)
    proc = publish_release("v2.13.0-catch1", wheel.parent, tmp_path / "idx")
    assert proc.returncode == 0, proc.stderr
    assert precious.read_text() == "precious\n"
    sums = wheel.parent / "SHA256SUMS"
    assert not sums.is_symlink()
    card = hashlib.sha256((REPO_ROOT / "docs" / "support.md").read_bytes()).hexdigest()
    assert sums.read_text() == f"{hashlib.sha256(wheel.read_bytes()).hexdigest()}  {wheel.name}\n{card}  support.md\n"
    # no temporary file left
    assert sorted(p.name for p in wheel.parent.iterdir()) == ["SHA256SUMS", "support.md", wheel.name]


def test_publish_release_without_gh_writes_nothing(tmp_path: Path) -> None:
    dist = release_wheel(tmp_path / "dist").parent
    before = tree_checksum(dist)
    proc = publish_release("v2.13.0-catch1", dist, tmp_path / "idx",
                           env={"CATCH_GH_RELEASE": "1", "PATH": path_without(tmp_path / "bin", "gh")})
    one_line_error(proc, "gh (the GitHub CLI) is not on PATH", "CATCH_GH_RELEASE=0")
    assert not (tmp_path / "idx").exists() and tree_checksum(dist) == before


def test_publish_release_into_a_read_only_dist_dir_is_one_line(tmp_path: Path) -> None:
    dist = release_wheel(tmp_path / "dist").parent
    dist.chmod(0o555)
    try:
        before = tree_checksum(dist)
        proc = run(*bound_by_permission_bits(), "bash", PUBLISH_RELEASE, "v2.13.0-catch1", dist,
                   env={"CATCH_INDEX_DIR": str(tmp_path / "idx"), "CATCH_GH_RELEASE": "0"})
        one_line_error(proc, f"{dist}: cannot write SHA256SUMS there: Permission denied")
        assert tree_checksum(dist) == before and not (tmp_path / "idx").exists()
    finally:
        dist.chmod(0o755)


def test_publish_release_takes_a_dist_dir_named_like_an_option(tmp_path: Path) -> None:
    wheel = release_wheel(tmp_path / "-d")
    proc = publish_release("v2.13.0-catch1", Path("-d"), tmp_path / "idx", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "idx" / "files" / wheel.name).read_bytes() == wheel.read_bytes()
    assert f"  {wheel.name}\n" in (wheel.parent / "SHA256SUMS").read_text()


def test_publish_release_names_the_python_to_use_when_python3_lacks_the_tooling(tmp_path: Path) -> None:
    dist = release_wheel(tmp_path / "dist").parent
    bare = tmp_path / "bin"
    bare.mkdir()
    python3 = bare / "python3"  # a Python without the project's packages: no site-packages, no PYTHONPATH
    python3.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    python3.chmod(0o755)
    before = tree_checksum(dist)
    proc = publish_release("v2.13.0-catch1", dist, tmp_path / "idx", unset=("PYTHON",),
                           env={"PATH": f"{bare}{os.pathsep}{os.environ['PATH']}"})
    one_line_error(proc, "python3 cannot run the project's tooling", "set PYTHON to the Python of the project's")
    assert not (tmp_path / "idx").exists() and tree_checksum(dist) == before
