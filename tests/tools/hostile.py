# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Test helpers for hostile and careless input (not shipped): what a directory holds, to prove "nothing changed",
and the shape of a refusal on the command line (one ``error:`` line, the right exit status, no traceback)."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path


def tree_checksum(root: Path, *, exclude: tuple[str, ...] = ()) -> dict[str, str]:
    """Every entry under ``root``, symlinks not followed: a file's sha256 and permission bits, a link's target, a
    directory, or the file type of anything else (a FIFO is never opened). Entries whose first path component is in
    ``exclude`` are left out; ``{}`` when ``root`` does not exist."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == root:
            dirnames[:] = [d for d in dirnames if d not in exclude]
            filenames = [f for f in filenames if f not in exclude]
        for name in sorted(dirnames + filenames):
            path = here / name
            rel = str(path.relative_to(root))
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                out[rel] = f"link -> {os.readlink(path)}"
            elif stat.S_ISREG(mode):
                out[rel] = f"file {stat.S_IMODE(mode):o} {hashlib.sha256(path.read_bytes()).hexdigest()}"
            else:
                out[rel] = "dir" if stat.S_ISDIR(mode) else f"type {stat.S_IFMT(mode):o}"
    return out


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> str:
    """Assert ``proc`` was refused: exit status ``code``, stderr one line ``error: ...`` holding every needle, no
    traceback. Returns that line."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
