# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Where the combined build's input wheels come from: the pinned upstream wheel and the Catch backend wheel."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.pin import Pin
from catch_tools.progress import Reporter
from catch_tools.upstream import release_wheel


def upstream_wheel(path: Path | None, pin: Pin) -> Path:
    """``path`` if given (must exist), else the cached ``torch==<pin.wheel_version>`` wheel (``pip download``)."""
    if path is not None:
        if path.is_dir():
            raise UserError("is a directory, expected the upstream wheel file (torch-*.whl)", path=path)
        if not path.is_file():
            raise UserError("upstream wheel not found (omit the option to download the pinned one)", path=path)
        return path
    return release_wheel(pin.wheel_version)


def backend_build_command(catch_dir: Path, out_dir: Path) -> list[str]:
    """The pip command that builds the Catch wheel against the installed torch (no build isolation, no deps)."""
    return [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-v", str(catch_dir),
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
        if path.is_dir():
            raise UserError("is a directory, expected the backend wheel file (torch_mlu-*.whl)", path=path)
        if not path.is_file():
            raise UserError("backend wheel not found (omit the option to build it from catch/)", path=path)
        return path
    if not (catch_dir / "pyproject.toml").is_file():
        raise UserError("no pyproject.toml: the Catch backend sources are missing", path=catch_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / "build.log"
    shown = progress or Reporter()
    shown.step("building the Catch backend (C++, 1-2 min on 2 idle cores)")
    start = time.monotonic()
    lines: list[str] = []
    with subprocess.Popen(backend_build_command(catch_dir, out_dir), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            step = ninja_step(line)
            if step:  # one short line per compile/link step: the build is visibly moving
                (shown.step if shown.shown else shown.line)(f"building the Catch backend: {step}")
    log.write_text("".join(lines), encoding="utf-8")
    built = sorted(out_dir.glob("torch_mlu-*.whl"))
    if proc.returncode != 0 or not built:
        lines = [ln for ln in lines if ln.strip()]
        raise UserError(f"building the Catch backend failed: {lines[-1].strip() if lines else 'no output'} "
                        f"(log: {log})", path=catch_dir)
    shown.line(f"built {built[-1].name} in {time.monotonic() - start:.0f} s")
    return built[-1]
