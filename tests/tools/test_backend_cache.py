# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The backend wheel cache (:func:`catch_tools.wheel.sources.cached_backend_wheel`, ``catch backend``): one build per
set of inputs, reused after; a changed source or another torch version builds again; a failed or killed build leaves
no wheel in the cache; builds are serialized by the lock.

The project is a stand-in for ``catch/``: a ``torch_mlu`` package whose in-tree PEP 517 backend writes the wheel at
once (no compiler), prints ninja-like step lines and records each build (start and end time) in ``$FAKE_BUILDS``; a
file ``FAIL`` in the project makes it fail. It is built through the real command (``pip wheel
--no-build-isolation``).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from catch_tools.errors import UserError
from catch_tools.paths import source_files
from catch_tools.wheel import sources
from catch_tools.wheel.sources import backend_digest, cached_backend_wheel

REPO = Path(__file__).resolve().parents[2]

FAKE_BACKEND = '''\
import base64, hashlib, os, time, zipfile
from pathlib import Path

HERE = Path(__file__).parent
DIST = "torch_mlu-0.1.dist-info"
META = {"METADATA": "Metadata-Version: 2.1\\nName: torch_mlu\\nVersion: 0.1\\n",
        "WHEEL": "Wheel-Version: 1.0\\nGenerator: fake\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    (Path(metadata_directory) / DIST).mkdir()
    for name, text in META.items():
        (Path(metadata_directory) / DIST / name).write_text(text)
    return DIST


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    start = time.time()
    print("[1/2] Building CXX object CMakeFiles/_C.dir/csrc/one.cpp.o", flush=True)
    if (HERE / "FAIL").exists():
        raise SystemExit("fake build failed: FAIL is there")
    time.sleep(float(os.environ.get("FAKE_SECONDS", "0")))
    print("[2/2] Linking CXX shared module _C.so", flush=True)
    files = {"torch_mlu/__init__.py": (HERE / "torch_mlu" / "__init__.py").read_bytes()}
    files.update({f"{DIST}/{name}": text.encode() for name, text in META.items()})
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\\n" for name, data in files.items()) + f"{DIST}/RECORD,,\\n"
    name = "torch_mlu-0.1-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w") as whl:
        for member, data in files.items():
            whl.writestr(member, data)
        whl.writestr(f"{DIST}/RECORD", record)
    with open(os.environ["FAKE_BUILDS"], "a") as log:
        log.write(f"{start} {time.time()}\\n")
    return name
'''

PYPROJECT = '''\
[build-system]
requires = []
build-backend = "fake_backend"
backend-path = ["."]

[project]
name = "torch_mlu"
version = "0.1"
'''


@pytest.fixture
def builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the fake backend appends one line to per build (start and end time)."""
    path = tmp_path / "builds.txt"
    path.touch()
    monkeypatch.setenv("FAKE_BUILDS", str(path))
    monkeypatch.delenv("PIP_CONSTRAINT", raising=False)
    return path


def project(root: Path) -> Path:
    """A fake ``<root>/catch`` (see the module doc); returns it."""
    catch = root / "catch"
    (catch / "torch_mlu").mkdir(parents=True)
    (catch / "pyproject.toml").write_text(PYPROJECT)
    (catch / "fake_backend.py").write_text(FAKE_BACKEND)
    (catch / "torch_mlu" / "__init__.py").write_text("VALUE = 1\n")
    return catch


def count(builds: Path) -> int:
    return len(builds.read_text().splitlines())


def wheels(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.whl"))


def test_second_call_reuses_the_wheel_and_a_changed_source_rebuilds(tmp_path: Path, builds: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    catch, cache = project(tmp_path), tmp_path / "cache"
    caplog.set_level(logging.INFO, logger="catch_tools")
    first = cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu")
    assert first == cache / backend_digest(catch, "2.13.0+cpu") / "torch_mlu-0.1-py3-none-any.whl"
    assert first.is_file() and count(builds) == 1
    # the build is visibly moving: each ninja step is one progress line (in the log when nothing is drawn)
    assert "building the Catch backend: [1/2] csrc/one.cpp" in caplog.text
    assert "building the Catch backend: [2/2] Linking CXX shared module _C.so" in caplog.text

    again = cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu")
    assert again == first and count(builds) == 1
    assert f"reusing the cached backend wheel {first}" in caplog.text

    (catch / "torch_mlu" / "__init__.py").write_text("VALUE = 2\n")
    changed = cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu")
    assert changed != first and count(builds) == 2
    assert (cache / "build.log").is_file() and (changed.parent / "build.log").is_file()


def test_another_torch_version_rebuilds(tmp_path: Path, builds: Path) -> None:
    catch, cache = project(tmp_path), tmp_path / "cache"
    one = cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu")
    other = cached_backend_wheel(catch, cache=cache, torch_version="2.15.0+cpu")
    assert one.parent != other.parent and count(builds) == 2
    assert cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu") == one and count(builds) == 2


def test_the_key_is_the_sources_not_the_build_outputs(tmp_path: Path) -> None:
    catch = project(tmp_path)
    (catch / ".." / "patches").mkdir()
    (catch / ".." / "patches" / "manifest.toml").write_text('wheel_version = "2.13.0+cpu"\n')
    before = backend_digest(catch, "2.13.0+cpu")
    for junk in ("build/cp311/CMakeCache.txt", "torch_mlu/__pycache__/x.pyc", "torch_mlu/_version.py",
                 "torch_mlu.egg-info/PKG-INFO"):
        (catch / junk).parent.mkdir(parents=True, exist_ok=True)
        (catch / junk).write_text("generated\n")
    assert backend_digest(catch, "2.13.0+cpu") == before
    # the pin manifest gives the wheel its version: it is an input
    (catch / ".." / "patches" / "manifest.toml").write_text('wheel_version = "2.13.1+cpu"\n')
    assert backend_digest(catch, "2.13.0+cpu") != before


def test_in_git_the_key_is_what_git_lists(tmp_path: Path) -> None:
    catch = project(tmp_path)
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    (tmp_path / ".gitignore").write_text("scratch/\n")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True, env=env)
    before = backend_digest(catch, "2.13.0+cpu")
    assert [p.relative_to(catch).as_posix() for p in source_files(catch)] == [
        "fake_backend.py", "pyproject.toml", "torch_mlu/__init__.py"]
    (catch / "scratch").mkdir()
    (catch / "scratch" / "notes.txt").write_text("ignored by git\n")
    assert backend_digest(catch, "2.13.0+cpu") == before
    (catch / "torch_mlu" / "new.py").write_text("# a new file, not yet added: CMake's globs would build it\n")
    assert backend_digest(catch, "2.13.0+cpu") != before
    (catch / "torch_mlu" / "new.py").unlink()
    assert backend_digest(catch, "2.13.0+cpu") == before
    (catch / "fake_backend.py").unlink()  # tracked, deleted: no longer an input
    assert backend_digest(catch, "2.13.0+cpu") != before


def test_a_failed_build_leaves_no_wheel_and_names_the_log(tmp_path: Path, builds: Path) -> None:
    catch, cache = project(tmp_path), tmp_path / "cache"
    (catch / "FAIL").touch()
    with pytest.raises(UserError) as info:
        cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu")
    message = str(info.value)
    assert message.startswith(f"{catch}: building the Catch backend failed: ") and "\n" not in message
    assert message.endswith(f"(log: {cache / 'build.log'})")
    assert "fake build failed: FAIL is there" in (cache / "build.log").read_text()
    assert wheels(cache) == [] and not list(cache.glob(".building-*"))
    (catch / "FAIL").unlink()
    assert cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu").is_file()


def test_a_half_written_wheel_of_a_failed_build_is_removed(tmp_path: Path, builds: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    catch, cache = project(tmp_path), tmp_path / "cache"

    def half(catch_dir: Path, out_dir: Path, build_dir: Path | None = None) -> list[str]:
        return [sys.executable, "-c", f"open({str(out_dir / 'torch_mlu-0.1-py3-none-any.whl')!r}, 'w').write('PK');"
                "raise SystemExit('linker crashed')"]
    monkeypatch.setattr(sources, "backend_build_command", half)
    with pytest.raises(UserError, match="linker crashed"):
        cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu")
    assert wheels(cache) == []


CHILD = """\
import sys
from pathlib import Path
from catch_tools.wheel import sources
catch, cache, version, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
if mode == "killed":  # a build that has written part of its wheel, then hangs until killed
    sources.backend_build_command = lambda catch_dir, out_dir, build_dir=None: [
        sys.executable, "-c", f"import time; open({str(out_dir / 'torch_mlu-0.1-py3-none-any.whl')!r}, 'w')"
        ".write('PK'); print('[1/2] Building CXX object x.dir/y.cpp.o', flush=True); time.sleep(600)"]
print(sources.cached_backend_wheel(catch, cache=cache, torch_version=version), flush=True)
"""


def child(catch: Path, cache: Path, version: str, mode: str = "build") -> subprocess.Popen[str]:
    """``cached_backend_wheel`` in another process (its own session, so that killing it kills its build too)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", CHILD, str(catch), str(cache), version, mode], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def test_a_killed_build_leaves_no_wheel_and_the_next_build_cleans_up(tmp_path: Path, builds: Path) -> None:
    catch, cache = project(tmp_path), tmp_path / "cache"
    proc = child(catch, cache, "2.13.0+cpu", "killed")
    try:
        deadline = time.monotonic() + 60
        while not list(cache.glob(".building-*/torch_mlu-*.whl")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert not (cache / backend_digest(catch, "2.13.0+cpu")).exists()  # the half wheel is no cached wheel
    wheel = cached_backend_wheel(catch, cache=cache, torch_version="2.13.0+cpu")
    assert wheels(cache) == [wheel] and not list(cache.glob(".building-*")) and count(builds) == 1


def test_the_lock_serializes_builds_and_a_waiter_reuses_the_wheel(tmp_path: Path, builds: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    catch, cache = project(tmp_path), tmp_path / "cache"
    monkeypatch.setenv("FAKE_SECONDS", "1.5")
    same = [child(catch, cache, "2.13.0+cpu") for _ in range(2)]
    outs = [proc.communicate(timeout=120) for proc in same]
    assert [proc.returncode for proc in same] == [0, 0], outs
    assert outs[0][0] == outs[1][0] and count(builds) == 1  # the second waited, then took the first one's wheel

    other = [child(catch, cache, version) for version in ("2.14.0+cpu", "2.15.0+cpu")]
    outs = [proc.communicate(timeout=120) for proc in other]
    assert [proc.returncode for proc in other] == [0, 0], outs
    spans = sorted(tuple(map(float, line.split())) for line in builds.read_text().splitlines()[1:])
    assert len(spans) == 2 and spans[0][1] <= spans[1][0]  # two builds, never at the same time


def catch_cli(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
                **(env or {}))
    return subprocess.run([sys.executable, "-m", "catch_tools.cli", "backend", *map(str, args)], capture_output=True,
                          text=True, check=False, env=full, timeout=300)


def test_cli_prints_the_path_on_one_line_and_installs(tmp_path: Path, builds: Path) -> None:
    pytest.importorskip("torch")  # the key is the installed torch's version (read from its metadata)
    catch = project(tmp_path / "checkout")
    cache, site = tmp_path / "cache", tmp_path / "site"
    env = {"CATCH_CACHE": str(cache), "COLUMNS": "40", "PIP_TARGET": str(site), "PIP_UPGRADE": "1",
           "PIP_NO_INDEX": "1"}  # --target: a second install replaces only with --upgrade
    first = catch_cli("--project", catch.parent, "--install", env=env)
    assert first.returncode == 0, first.stderr
    wheel = Path(first.stdout.strip())
    assert first.stdout == f"{wheel}\n" and wheel.parent.parent == cache / "backend" and wheel.is_file()
    assert (site / "torch_mlu" / "__init__.py").read_text() == "VALUE = 1\n"
    (site / "torch_mlu" / "__init__.py").write_text("edited\n")
    second = catch_cli("--project", catch.parent, "--install", "-v", env=env)
    assert second.returncode == 0 and second.stdout == first.stdout and count(builds) == 1, second.stderr
    assert f"reusing the cached backend wheel {wheel}" in second.stderr
    assert (site / "torch_mlu" / "__init__.py").read_text() == "VALUE = 1\n"  # reinstalled


def test_cli_without_the_backend_sources_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "catch").mkdir()
    proc = catch_cli("--project", tmp_path, env={"CATCH_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"error: {tmp_path / 'catch'}: no pyproject.toml: the Catch backend sources are missing\n"


def test_cli_with_a_file_for_the_cache_is_one_line(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "cache").write_text("not a directory\n")
    proc = catch_cli("--project", tmp_path, env={"CATCH_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and str(tmp_path / "cache") in proc.stderr
