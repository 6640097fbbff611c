# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Where the combined build's input wheels come from: the pinned upstream wheel and the Catch backend wheel.

The backend wheel is built once per set of inputs and kept (:func:`cached_backend_wheel`): every tox env installs
the same wheel (``catch backend --install``) and the combined build takes it, instead of each compiling ``catch/``
again.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.paths import cache_dir, source_files
from catch_tools.pin import Pin
from catch_tools.progress import Reporter
from catch_tools.upstream import release_wheel
from catch_tools.userfiles import exclusive_lock, output_dir, write_atomic


def upstream_wheel(path: Path | None, pin: Pin) -> Path:
    """``path`` if given (must exist), else the cached ``torch==<pin.wheel_version>`` wheel (``pip download``)."""
    if path is not None:
        if path.is_dir():
            raise UserError("is a directory, expected the upstream wheel file (torch-*.whl)", path=path)
        if not path.is_file():
            raise UserError("upstream wheel not found (omit the option to download the pinned one)", path=path)
        return path
    return release_wheel(pin.wheel_version)


def backend_build_command(catch_dir: Path, out_dir: Path, build_dir: Path | None = None) -> list[str]:
    """The pip command that builds the Catch wheel against the installed torch (no build isolation, no deps), in
    ``build_dir`` when given (default: the project's own, ``catch/build/<wheel tag>``)."""
    where = ["-C", f"build-dir={build_dir}"] if build_dir is not None else []
    return [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-v", *where, str(catch_dir),
            "-w", str(out_dir)]


#: A ninja status line: ``[12/40] Building CXX object CMakeFiles/_C.dir/csrc/ops/device_kernel.cpp.o``.
_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\] (?:Building \w+ object \S*?\.dir/(\S+?)\.o$|(.*))")


def ninja_step(line: str) -> str | None:
    """``[n/N] <what>`` of a ninja status line in the build's output (the source file of a compile step, else
    ninja's own description), or None for any other line (pip's, CMake's, the compiler's)."""
    step = _NINJA_STEP.match(line.strip())
    return f"[{step.group(1)}/{step.group(2)}] {step.group(3) or step.group(4)}" if step else None


def backend_wheel(path: Path | None, catch_dir: Path, out_dir: Path, progress: Reporter | None = None) -> Path:
    """``path`` if given, else build ``catch_dir`` into ``out_dir`` with :func:`backend_build_command`, reporting
    each compile step (:func:`ninja_step`) on ``progress`` (:mod:`catch_tools.progress`; default: the log only): the
    live line of the display on a terminal, else one INFO line per step (shown with ``-v``: a CI log or a piped run
    shows the build moving too).

    Raises:
        UserError: ``path`` missing, ``catch_dir`` has no ``pyproject.toml``, or the build fails (last line of its
            output is quoted; the full log is in ``out_dir/build.log``).
    """
    if path is not None:
        return given_backend_wheel(path)
    _check_project(catch_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return _build(catch_dir, out_dir, out_dir / "build.log", progress or Reporter())


def given_backend_wheel(path: Path) -> Path:
    """``path``, checked to be a file (``--catch-wheel``).

    Raises:
        UserError: ``path`` is a directory or does not exist.
    """
    if path.is_dir():
        raise UserError("is a directory, expected the backend wheel file (torch_mlu-*.whl)", path=path)
    if not path.is_file():
        raise UserError("backend wheel not found (omit the option to build it from catch/)", path=path)
    return path


def _check_project(catch_dir: Path) -> None:
    if not (catch_dir / "pyproject.toml").is_file():
        raise UserError("no pyproject.toml: the Catch backend sources are missing", path=catch_dir)


def _build(catch_dir: Path, out_dir: Path, log: Path, shown: Reporter, build_dir: Path | None = None) -> Path:
    """Run :func:`backend_build_command`, one progress step per ninja line; the whole output goes to ``log``."""
    shown.step("building the Catch backend (C++, 2-5 min on 2 cores)")
    start = time.monotonic()
    lines: list[str] = []
    with subprocess.Popen(backend_build_command(catch_dir, out_dir, build_dir), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            step = ninja_step(line)
            if step:  # one short line per compile/link step: the build is visibly moving (in a CI log too, with -v)
                (shown.step if shown.shown else shown.line)(f"building the Catch backend: {step}")
    write_atomic(log, "".join(lines))
    built = sorted(out_dir.glob("torch_mlu-*.whl"))
    if proc.returncode != 0 or not built:
        lines = [ln for ln in lines if ln.strip()]
        raise UserError(f"building the Catch backend failed: {lines[-1].strip() if lines else 'no output'} "
                        f"(log: {log})", path=catch_dir)
    shown.line(f"built {built[-1].name} in {time.monotonic() - start:.0f} s")
    return built[-1]


#: The backend cache, under :func:`catch_tools.paths.cache_dir`.
BACKEND_CACHE = "backend"
#: Prefix of a build in progress in the backend cache (renamed to its digest when complete).
_BUILDING = ".building-"
#: How many wheels (digests) and build directories the backend cache keeps, newest first.
KEEP_WHEELS = 4
KEEP_BUILD_DIRS = 2


def installed_torch_version() -> str:
    """The version of the torch installed in this Python (its metadata; torch is not imported).

    Raises:
        UserError: torch is not installed.
    """
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        raise UserError("torch is not installed in this Python: the backend builds against the installed torch "
                        "(pip install -c constraints.txt torch)", path=sys.executable) from None


def backend_key(torch_version: str) -> str:
    """What a backend wheel is built for besides its sources: the torch version, the Python ABI and the platform
    (``torch=2.13.0+cpu python=cpython-311-x86_64-linux-gnu platform=linux-x86_64``)."""
    abi = sysconfig.get_config_var("SOABI") or sys.implementation.cache_tag
    return f"torch={torch_version} python={abi} platform={sysconfig.get_platform()}"


def backend_digest(catch_dir: Path, torch_version: str) -> str:
    """BLAKE2b (128 bits, hex) of the backend's inputs: :func:`backend_key` of ``torch_version``, then the path and
    bytes of each source file under ``catch_dir`` (:func:`catch_tools.paths.source_files`: what git lists, tracked
    and untracked-not-ignored, or every file without git; build outputs and caches never) and of the pin manifest
    beside it (``../patches/manifest.toml``, which gives the wheel its version), when there is one."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(b"torch_mlu backend 1\0" + backend_key(torch_version).encode() + b"\0")
    inputs = [(path.relative_to(catch_dir).as_posix(), path) for path in source_files(catch_dir)]
    manifest = catch_dir / ".." / "patches" / "manifest.toml"
    if manifest.is_file():
        inputs.append(("../patches/manifest.toml", manifest))
    for name, path in inputs:
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def cached_backend_wheel(catch_dir: Path, progress: Reporter | None = None, *, cache: Path | None = None,
                         torch_version: str | None = None) -> Path:
    """The Catch backend wheel of ``catch_dir`` built against the installed torch: from the cache when it holds one
    for these inputs, else built once (:func:`backend_build_command`, progress on ``progress`` as
    :func:`backend_wheel`) and stored there.

    Key: :func:`backend_digest` of ``catch_dir`` and ``torch_version`` (default: :func:`installed_torch_version`),
    so a wheel whose sources, pin manifest, torch, Python ABI or platform differ is never reused. Not in the key:
    the compiler and build flags from the environment (``CMAKE_ARGS``, ``CXX``): after changing those, remove the
    cache directory.

    Layout of ``cache`` (default ``$CATCH_CACHE/backend``, :func:`catch_tools.paths.cache_dir`)::

        <digest>/torch_mlu-<version>-<tags>.whl   a complete wheel (the directory appears by rename(2), whole)
        <digest>/build.log                        its build's output
        build/<hash of project path, Python, torch>/   CMake build directory, kept: a rebuild compiles what changed
        .building-<random>/                       a build in progress (or killed: removed by the next build)
        build.log                                 the last build's output (the log a failure names)
        .lock                                     flock(2): one build at a time, waiters then find its wheel

    The newest :data:`KEEP_WHEELS` wheels and :data:`KEEP_BUILD_DIRS` build directories are kept, older ones removed
    after a build.

    Raises:
        UserError: ``catch_dir`` has no ``pyproject.toml``, torch is not installed, the cache directory or its lock
            file is unusable, or the build fails (its last output line quoted, the log named).
    """
    _check_project(catch_dir)
    torch_version = torch_version or installed_torch_version()
    digest = backend_digest(catch_dir, torch_version)
    root = output_dir(cache if cache is not None else cache_dir() / BACKEND_CACHE, "the backend cache directory")
    shown = progress or Reporter()
    found = _cached(root / digest)
    if found is None:
        with exclusive_lock(root / ".lock", "the backend cache's lock file"):
            found = _cached(root / digest)  # built meanwhile by the holder of the lock this call waited for
            if found is None:
                return _build_into_cache(catch_dir, root, digest, torch_version, shown)
    shown.line(f"reusing the cached backend wheel {found}")
    with contextlib.suppress(OSError):  # recently used: kept by the pruning
        os.utime(found.parent)
    return found


def _cached(entry: Path) -> Path | None:
    wheels = sorted(entry.glob("torch_mlu-*.whl")) if entry.is_dir() else []
    return wheels[-1] if wheels else None


def _build_into_cache(catch_dir: Path, root: Path, digest: str, torch_version: str, shown: Reporter) -> Path:
    """Build into a fresh ``.building-*`` directory and rename it to ``<digest>``; on any failure (an exception, a
    signal) no ``<digest>`` appears. Called with the lock held: every other ``.building-*`` is a killed build's."""
    for stale in root.glob(_BUILDING + "*"):
        shutil.rmtree(stale, ignore_errors=True)
    where = hashlib.blake2b(f"{catch_dir.resolve()}\0{sys.prefix}\0{torch_version}".encode(), digest_size=8)
    build_dir = root / "build" / where.hexdigest()
    build_dir.mkdir(parents=True, exist_ok=True)
    os.utime(build_dir)
    work = Path(tempfile.mkdtemp(prefix=_BUILDING, dir=root))
    try:
        wheel = _build(catch_dir, work, root / "build.log", shown, build_dir)
        for extra in work.iterdir():  # the wheel only, and its log
            if extra != wheel:
                shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
        shutil.copyfile(root / "build.log", work / "build.log")
        work.chmod(0o755)  # mkdtemp's 0700 is for the build in progress only
        os.rename(work, root / digest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    _prune(root, digest)
    return root / digest / wheel.name


def _prune(root: Path, keep: str) -> None:
    """Remove all but the newest wheels and build directories (never ``keep``, the one just built)."""
    def newest_first(paths: list[Path]) -> list[Path]:
        return sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True)
    wheels = [p for p in root.iterdir() if p.is_dir() and re.fullmatch(r"[0-9a-f]{32}", p.name) and p.name != keep]
    builds = [p for p in (root / "build").iterdir() if p.is_dir()] if (root / "build").is_dir() else []
    for old in newest_first(wheels)[KEEP_WHEELS - 1:] + newest_first(builds)[KEEP_BUILD_DIRS:]:
        shutil.rmtree(old, ignore_errors=True)
