# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Real upstream PyTorch trees built from release wheels, as a local git repository.

GitHub is unreachable on our machines, but the Python files of a PyTorch release are real upstream code inside that
release's wheel: ``torch/**/*.py`` (and ``torchgen/``, ``functorch/``) in the wheel equal the same paths in the source
tree at the release tag. :func:`upstream_repo` turns one or more releases into a git repository with one commit and one
tag (``v<version>``) per release, in version order on one linear history -- the shape of upstream's release history as
seen by a rebase. Everything is cached under :func:`catch_tools.paths.cache_dir` (downloads ~540 MB per release).

Commits are reproducible: fixed author/committer and dates, so the same releases give the same commit ids. The
command line is :mod:`catch_tools.cli.upstream` (``scripts/upstream.py``, ``catch upstream``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from packaging.tags import sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from catch_tools.errors import UserError
from catch_tools.git import run_git
from catch_tools.paths import cache_dir
from catch_tools.progress import progress
from catch_tools.userfiles import exclusive_lock
from catch_tools.wheel.unpack import Unpacker, unpack_members
from catch_tools.wheel.zipraw import RawZipReader

#: Top-level directories of the wheel whose ``*.py`` files are taken (they sit at the same paths in the source tree).
PY_ROOTS = ("torch", "torchgen", "functorch")
_IDENTITY = {
    "GIT_AUTHOR_NAME": "PyTorch release (from wheel)",
    "GIT_AUTHOR_EMAIL": "upstream@catch.invalid",
    "GIT_COMMITTER_NAME": "PyTorch release (from wheel)",
    "GIT_COMMITTER_EMAIL": "upstream@catch.invalid",
}
#: A ``git log --grep`` pattern matching the message of a release commit this module makes (one per wheel): a history
#: of only such commits is wheel-built, not upstream's real one.
WHEEL_BUILT_GREP = r"^Python files of .*\.whl; upstream commit "
_GIT_VERSION = re.compile(r"""^git_version\s*=\s*['"]([0-9a-f]{40})['"]""", re.MULTILINE)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold :func:`~catch_tools.userfiles.exclusive_lock` on ``path`` (its directory created if needed) so concurrent
    builders wait for each other.

    Raises:
        UserError: the lock file cannot be opened (a symlink, not a regular file, no permission).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(path):
        yield


def release_wheel(version: str) -> Path:
    """Return the path of the cached ``torch==version`` wheel for this Python, downloading it with pip if needed.

    Uses ``pip download --no-deps`` with the machine's indexes and find-links but without any constraint
    (:func:`unconstrained_pip_env`: the project's ``PIP_CONSTRAINT`` pins the release Catch installs, not the releases
    it fetches to compare or rebase onto), into ``<cache>/wheels``. It says on stderr that it downloads (~540 MB) and,
    when done, how long it took; in between, on a terminal, the megabytes received and the rate
    (:mod:`catch_tools.progress`). Raises UserError when pip cannot get it.
    """
    wheels = cache_dir() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = _find_wheel(wheels, version)
    if found:
        return found
    with _locked(wheels / ".lock"):
        found = _find_wheel(wheels, version)
        if found:
            return found
        returncode, errors = _pip_download(version, wheels)
        found = _find_wheel(wheels, version)
        if returncode != 0 or not found:
            last = (errors.strip().splitlines() or ["no output"])[-1]
            raise UserError(f"cannot download torch=={version}: {last}")
        return found


def unconstrained_pip_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) with every pip constraint lifted, indexes and find-links kept.

    ``PIP_CONSTRAINT=/dev/null`` replaces both the project's constraint file (tox and CI export ``PIP_CONSTRAINT``)
    and a ``constraint =`` line of a pip configuration file such as ``/etc/xdg/pip/pip.conf``: pip reads environment
    variables after its configuration files, and the empty file constrains nothing. (``PIP_CONFIG_FILE=/dev/null``
    would also drop the configured ``index-url``/``extra-index-url``; an empty ``PIP_CONSTRAINT`` falls back to the
    configuration file's value.)
    """
    env = dict(os.environ if base is None else base)
    env["PIP_CONSTRAINT"] = os.devnull
    env.pop("PIP_REQUIREMENT", None)
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    return env


_SIZE = re.compile(r"\(([0-9.]+) (kB|MB|GB)\)")
_UNIT = {"kB": 1e3, "MB": 1e6, "GB": 1e9}


def _pip_download(version: str, dest: Path, every: float = 5.0) -> tuple[int, str]:
    """Run ``pip download --no-deps torch==version -d dest`` unconstrained, reporting progress on stderr.

    pip writes the file into its temporary directory first: pip gets a private ``TMPDIR`` whose size, polled every
    ``every`` seconds, is the progress. Returns (pip's exit status, pip's stderr).
    """
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--progress-bar", "off", "-d", str(dest),
           f"torch=={version}"]
    with tempfile.TemporaryDirectory(prefix="catch-pip-") as tmp:
        env = unconstrained_pip_env()
        env["TMPDIR"] = tmp
        print(f"downloading torch=={version} (pip download --no-deps, no constraint) into {dest}", file=sys.stderr,
              flush=True)
        start = time.monotonic()
        total: list[float] = []
        errors: list[str] = []
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None and proc.stderr is not None

        def read_stdout(stream: IO[str]) -> None:
            for line in stream:
                match = _SIZE.search(line)
                if match and "Downloading" in line:
                    total.append(float(match.group(1)) * _UNIT[match.group(2)])

        def read_stderr(stream: IO[str]) -> None:
            errors.extend(stream)

        readers = [threading.Thread(target=read_stdout, args=(proc.stdout,), daemon=True),
                   threading.Thread(target=read_stderr, args=(proc.stderr,), daemon=True)]
        for reader in readers:
            reader.start()
        with progress(f"downloading torch=={version}") as shown:
            while True:
                try:
                    proc.wait(timeout=every)
                    break
                except subprocess.TimeoutExpired:
                    got = _tree_size(Path(tmp))
                    elapsed = time.monotonic() - start
                    of = f" of {total[-1] / 1e6:.0f} MB" if total else ""
                    shown.step(f"downloading torch=={version}: {got / 1e6:.0f} MB{of}, {got / 1e6 / elapsed:.1f} MB/s")
            for reader in readers:
                reader.join(timeout=10)
        if proc.returncode == 0:
            size = sum(w.stat().st_size for w in dest.glob(f"torch-{version}*.whl"))
            print(f"  torch=={version}: done, {size / 1e6:.0f} MB in {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)
        return proc.returncode, "".join(errors)


def _tree_size(root: Path) -> int:
    """Bytes of the regular files under ``root`` (files vanishing while walking are skipped)."""
    size = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                size += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return size


def _find_wheel(directory: Path, version: str) -> Path | None:
    """The cached torch wheel of ``version`` this interpreter can install, or None.

    A wheel matches when its version equals ``version``, or has the same public version when ``version`` has no local
    label (``2.13.0`` finds ``2.13.0+cpu``), and one of its tags is supported here (``packaging.tags.sys_tags()``:
    a ``win_amd64`` or ``cp39`` wheel left in the cache is never picked). Of several, an exact version comes first,
    then the best-ranked tag (earliest in ``sys_tags()``, the order pip prefers), then the file name.
    """
    want = Version(version)
    rank = {tag: index for index, tag in enumerate(sys_tags())}
    found: list[tuple[bool, int, str, Path]] = []
    for whl in directory.glob("torch-*.whl"):
        try:
            name, have, _build, tags = parse_wheel_filename(whl.name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if name != "torch" or not (have == want or (have.public == want.public and not want.local)):
            continue
        best = min((rank[tag] for tag in tags if tag in rank), default=None)
        if best is not None:
            found.append((have != want, best, whl.name, whl))
    return min(found)[3] if found else None


def extract_python_tree(wheel: Path, dest: Path) -> str | None:
    """Extract ``torch/**/*.py`` (and the other :data:`PY_ROOTS`) of ``wheel`` into ``dest``.

    Returns the upstream commit recorded in the wheel's ``torch/version.py`` (``git_version``), or None. The wheel is
    read through :class:`~catch_tools.wheel.zipraw.RawZipReader` (unsafe member names refused) and the files are
    created new under ``dest`` (:mod:`catch_tools.wheel.unpack`).

    Raises:
        UserError: a file that is not a readable wheel, a wheel with an unsafe member, or a member inside ``.git``.
    """
    with RawZipReader(wheel) as reader:
        members = [m for m in reader.members if not m.name.endswith("/") and m.name.endswith(".py")
                   and m.name.split("/", 1)[0] in PY_ROOTS]
        nested_git = next((m.name for m in members if ".git" in m.name.split("/")), None)
        if nested_git is not None:  # git refuses to add a nested repository's files; never write one into ours
            raise UserError(f"wheel member {nested_git} is inside a .git directory: not a release's source file",
                            path=wheel)
        # default modes: the release's commit must not depend on the wheel's mode bits (reproducible commit ids)
        unpack_members(reader, members, Unpacker(dest), keep_modes=False)
        version_py = reader.get("torch/version.py")
        if version_py is None:
            return None
        match = _GIT_VERSION.search(reader.read(version_py).decode("utf-8", "replace"))
        return match.group(1) if match else None


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return run_git(repo, *args, env=env).out.decode("utf-8", "replace")


def upstream_repo(versions: Sequence[str]) -> Path:
    """Return a cached git repository holding the real Python trees of the given PyTorch releases.

    Args:
        versions: release versions such as ``["2.13.0", "2.14.0"]`` (any order; duplicates ignored).

    Returns:
        Path of a non-bare repository (branch ``main``) with one commit per release in ascending version order, each
        tagged ``v<public version>``. Treat it as read-only: clone it (:func:`clone_upstream`) to work on it.

    Raises:
        UserError: an invalid version, or a release pip cannot download.
    """
    try:
        ordered = sorted({Version(v) for v in versions})
    except InvalidVersion as err:
        raise UserError(f"invalid release version: {err}") from None
    if not ordered:
        raise UserError("no release given")
    key = "_".join(str(v) for v in ordered)
    root = cache_dir() / "upstream"
    repo = root / f"torch-{key}"
    if _complete(repo):
        return repo
    with _locked(root / f".torch-{key}.lock"):
        if _complete(repo):
            return repo
        wheels = [release_wheel(str(v)) for v in ordered]
        tmp = Path(tempfile.mkdtemp(prefix=f".torch-{key}.", dir=root))
        try:
            _build(tmp, ordered, wheels)
            _discard(repo)
            tmp.rename(repo)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return repo


def _complete(repo: Path) -> bool:
    """A finished cached repository: a real directory of ours (never a symlink planted at its name) with the marker."""
    return not repo.is_symlink() and (repo / ".git" / "catch-complete").is_file()


def _discard(path: Path) -> None:
    """Remove what stands at ``path``: a symlink or file itself (never what a symlink points to), or a directory."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _build(repo: Path, ordered: Sequence[Version], wheels: Sequence[Path]) -> None:
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "core.autocrlf", "false")
    for index, (version, wheel) in enumerate(zip(ordered, wheels, strict=True)):
        for child in repo.iterdir():
            if child.name != ".git":
                shutil.rmtree(child)
        commit = extract_python_tree(wheel, repo)
        _git(repo, "add", "-A")
        date = f"{1_700_000_000 + index * 86_400} +0000"
        env = {**_IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        message = f"PyTorch v{version.public}\n\nPython files of {wheel.name}; upstream commit {commit or 'unknown'}.\n"
        _git(repo, "commit", "-q", "--allow-empty", "-m", message, env=env)
        _git(repo, "tag", f"v{version.public}", env=env)
    (repo / ".git" / "catch-complete").write_text("ok\n")


def clone_upstream(versions: Sequence[str], dest: Path) -> Path:
    """Clone :func:`upstream_repo` ``(versions)`` to ``dest`` (local clone, hard links) and return ``dest``.

    The clone has all release tags and ``main`` checked out at the newest release.
    """
    src = upstream_repo(versions)
    run_git(Path.cwd(), "clone", "-q", "--no-hardlinks" if os.environ.get("CATCH_NO_HARDLINKS") else "--local",
            str(src), str(dest))
    _git(dest, "fetch", "-q", "--tags", "origin")
    return dest
