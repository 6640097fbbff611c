# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Where the combined build's input wheels come from: the pinned upstream wheel and the Catch backend wheel."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.pin import Pin
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
    return [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", str(catch_dir),
            "-w", str(out_dir)]


def backend_wheel(path: Path | None, catch_dir: Path, out_dir: Path) -> Path:
    """``path`` if given, else build ``catch_dir`` into ``out_dir`` with :func:`backend_build_command`.

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
    proc = subprocess.run(backend_build_command(catch_dir, out_dir), capture_output=True, text=True, check=False)
    log = out_dir / "build.log"
    log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
    built = sorted(out_dir.glob("torch_mlu-*.whl"))
    if proc.returncode != 0 or not built:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        raise UserError(f"building the Catch backend failed: {lines[-1] if lines else 'no output'} (log: {log})",
                        path=catch_dir)
    return built[-1]
