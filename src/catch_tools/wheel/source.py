# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Source mode of the combined build: apply the series to ``pytorch/``, build upstream's wheel, then add Catch.

Upstream's own build is used unchanged: ``python -m pip wheel --no-build-isolation --no-deps -v .`` in the PyTorch
checkout (setup.py drives CMake + ninja; PyTorch's README "From Source"), with the CPU-only switches of
:func:`source_env`. Needs a full recursive checkout of ``pytorch/`` (third_party submodules), a C/C++17 compiler,
CMake >= 3.27 for 2.13 and ninja, PyTorch's ``requirements-build.txt`` installed, and about 16 cores / 32 GB RAM /
20 GB disk for a build in about an hour (a 2-core CI machine needs most of a day: use ``--dry-run`` there).

The Catch backend is built against the installed upstream torch of the same pin: the native interface check run
afterwards proves the source-built torch keeps every upstream interface the backend links against.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import try_git
from catch_tools.pin import Pin


@dataclass
class Step:
    """One step of the plan: ``argv`` run in ``cwd`` with ``env`` added to the environment (empty: inherited)."""

    title: str
    argv: list[str]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)

    def render(self) -> str:
        """Shell-like one-liner (for ``--dry-run``)."""
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items()))
        cmd = " ".join(shlex.quote(a) for a in self.argv)
        return f"(cd {shlex.quote(str(self.cwd))} && {env + ' ' if env else ''}{cmd})"


def source_env(pin: Pin, jobs: int) -> dict[str, str]:
    """CPU-only build switches read by PyTorch's setup.py / CMake (``tools/setup_helpers/env.py``, CMakeLists.txt).

    ``PYTORCH_BUILD_VERSION`` makes the wheel's version equal the upstream wheel's (``2.13.0+cpu``) so that the
    combined version and the interface check line up with overlay mode.
    """
    return {
        "USE_CUDA": "0",
        "USE_ROCM": "0",
        "USE_XPU": "0",
        "USE_MPS": "0",
        "BUILD_TEST": "0",
        "USE_MKLDNN": "1",
        "USE_DISTRIBUTED": "1",
        "USE_GLOO": "1",
        "USE_FBGEMM": "1",
        "USE_NINJA": "1",
        "MAX_JOBS": str(jobs),
        "PYTORCH_BUILD_VERSION": pin.wheel_version,
        "PYTORCH_BUILD_NUMBER": "1",
    }


def plan(pin: Pin, repo: Path, source: Path, build_dir: Path, jobs: int) -> list[Step]:
    """The steps of a source build (see module doc); ``build_dir`` receives upstream's wheel."""
    py = sys.executable
    return [
        Step("apply the series to the PyTorch checkout (patch engine)",
             [py, str(repo / "scripts" / "apply_patches.py"), "apply", "--source", str(source)], repo),
        Step("check out PyTorch's third_party submodules",
             ["git", "submodule", "update", "--init", "--recursive"], source),
        Step("build upstream's wheel with its own build (setup.py -> CMake + ninja), CPU only",
             [py, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-v", ".", "-w", str(build_dir)],
             source, source_env(pin, jobs)),
    ]


def _compiler(var: str, names: tuple[str, ...]) -> str | None:
    chosen = os.environ.get(var)
    if chosen:
        return shutil.which(chosen.split()[0])
    return next((found for n in names if (found := shutil.which(n))), None)


def preflight(source: Path) -> list[str]:
    """Problems that stop a source build before it starts (empty list: none).

    Checks: ``source`` is a git checkout with ``setup.py`` (the submodule is cloned), C and C++ compilers
    (``$CC``/``$CXX`` or cc/gcc/clang, c++/g++/clang++), ``cmake`` and ``ninja`` on PATH.
    """
    problems = []
    if not (source / "setup.py").is_file() or not (source / ".git").exists():
        problems.append(f"{source} is not a PyTorch checkout (run: git submodule update --init pytorch)")
    if _compiler("CC", ("cc", "gcc", "clang")) is None:
        problems.append("no C compiler found (set CC or install gcc)")
    if _compiler("CXX", ("c++", "g++", "clang++")) is None:
        problems.append("no C++ compiler found (set CXX or install g++)")
    for tool in ("cmake", "ninja"):
        if shutil.which(tool) is None:
            problems.append(f"{tool} not found on PATH")
    return problems


def run_plan(steps: list[Step]) -> None:
    """Run the steps in order, stopping at the first failure.

    Raises:
        UserError: a step exits non-zero (its title and exit status are named).
    """
    for step in steps:
        print(f"==> {step.title}", flush=True)
        proc = subprocess.run(step.argv, cwd=step.cwd, env={**os.environ, **step.env}, check=False)
        if proc.returncode != 0:
            raise UserError(f"source build step failed (exit {proc.returncode}): {step.title}", path=step.cwd)


def head_commit(source: Path) -> str:
    """``git rev-parse HEAD`` of the checkout (the ``git_version`` a source build records in ``torch/version.py``)."""
    proc = try_git(source, "rev-parse", "HEAD")
    if not proc.ok:
        raise UserError("cannot read HEAD of the PyTorch checkout", path=source)
    return proc.stdout.strip()
