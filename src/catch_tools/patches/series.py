# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Read ``patches/series``: quilt's format (quilt(1), "series file").

One patch file name per line, applied in order; ``#`` starts a comment (whole line or after whitespace); an optional
``-pN`` after the name sets the strip level (default ``-p1``). Blank lines are ignored. Other quilt options
(``-R``, ``--fuzz``) are refused: the engine applies patches exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.patches.model import Patch
from catch_tools.patches.parse import display_path, parse_patch
from catch_tools.userfiles import decode_utf8, read_regular_file

SERIES_NAME = "series"
#: Files in ``patches/`` that are not patches.
NON_PATCH_FILES = frozenset({SERIES_NAME, "manifest.toml", "interfaces-reviewed.toml"})
_STRIP_RE = re.compile(r"^-p(\d+)$")


@dataclass(frozen=True)
class SeriesEntry:
    """One series line: patch file ``name``, strip level, and the 1-based line in ``series``."""

    name: str
    strip: int
    line: int


def read_series_entries(patches_dir: Path, *, allow_duplicates: bool = False,
                        hint: str = "pass --patches-dir DIR holding a quilt series file") -> list[SeriesEntry]:
    """Parse ``<patches_dir>/series`` into entries (no patch file is read).

    ``hint`` is the advice for a missing series, in the calling tool's own options (``rebase.py`` has
    ``--project DIR``, not ``--patches-dir``).

    Raises:
        UserError: missing series file, not a regular file (a FIFO is never opened for reading), a byte that is not
        UTF-8 (with its line), a bad option, a name with a path separator or ``..``, a duplicate entry.
    """
    series = patches_dir / SERIES_NAME
    where = display_path(series)
    try:
        text = decode_utf8(read_regular_file(series, "the quilt series file"), where, "the series file")
    except (FileNotFoundError, NotADirectoryError):
        what = "is a file, expected the patches/ directory" if patches_dir.is_file() else "series file not found"
        raise UserError(f"{what} ({hint})", path=display_path(patches_dir if patches_dir.is_file() else series)
                        ) from None
    except IsADirectoryError:
        raise UserError("is a directory, expected the quilt series file", path=where) from None
    except OSError as err:
        raise UserError(f"cannot read the series file: {err.strerror}", path=where) from None
    entries: list[SeriesEntry] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        content = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not content:
            continue
        name, *opts = content.split()
        strip = 1
        for opt in opts:
            m = _STRIP_RE.match(opt)
            if not m:
                raise UserError(f"unsupported option {opt!r} for {name} (only -pN is allowed)", path=where,
                                line=lineno)
            strip = int(m.group(1))
        if "/" in name or name in (".", "..") or name in NON_PATCH_FILES:
            raise UserError(f"invalid patch name {name!r}: a file name directly in patches/", path=where,
                            line=lineno)
        if name in seen and not allow_duplicates:
            raise UserError(f"duplicate entry {name} (first on line {seen[name]})", path=where, line=lineno)
        seen.setdefault(name, lineno)
        entries.append(SeriesEntry(name, strip, lineno))
    return entries


def entry_path(patches_dir: Path, entry: SeriesEntry) -> Path:
    """The patch file a series entry names, checked to be there and a regular file (a FIFO named in ``series`` is
    refused, never opened).

    Raises:
        UserError: naming ``series`` and the entry's line: the file does not exist, or is not a regular file.
    """
    path = patches_dir / entry.name
    if path.is_file():
        return path
    where = display_path(patches_dir / SERIES_NAME)
    if path.exists():
        kind = "a directory" if path.is_dir() else "not a regular file (a FIFO, socket or device)"
        raise UserError(f"series names {entry.name}, which is {kind}: a patch must be a regular file", path=where,
                        line=entry.line)
    raise UserError(f"series names {entry.name}, which does not exist in {display_path(patches_dir)}", path=where,
                    line=entry.line)


def load_series(patches_dir: Path) -> list[Patch]:
    """Read the series and parse every patch it names, in order.

    Returns the parsed :class:`~catch_tools.patches.model.Patch` list (possibly empty).

    Raises:
        UserError: any series problem (see :func:`read_series_entries`), a series entry whose file is missing or not
        a regular file (``series:<line>``, :func:`entry_path`), or any parse problem of a patch (``<patch>:<line>``,
        see :func:`catch_tools.patches.parse.parse_patch`).
    """
    patches: list[Patch] = []
    for entry in read_series_entries(patches_dir):
        path = entry_path(patches_dir, entry)
        patches.append(parse_patch(path, strip=entry.strip, name=entry.name, series_line=entry.line))
    return patches
