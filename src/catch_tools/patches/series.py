# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The series: ``patches/series`` in quilt's format (quilt(1), "series file"), read once, and each patch it names
parsed once.

One patch file name per line, applied in order; ``#`` starts a comment (whole line or after whitespace); an optional
``-pN`` after the name sets the strip level (default ``-p1``). Blank lines are ignored. Other quilt options
(``-R``, ``--fuzz``) are refused: the engine applies patches exactly.

A :class:`Series` is what every consumer of the series takes -- ``lint``, ``check``, ``apply`` (to a git tree or a
directory), the rebase, the proof gate and the combined wheel's build -- so one run reads ``series`` once and parses
each patch at most once, whatever it does with them.
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
#: The advice for a missing series, in the options of the tools that take the series directory.
PATCHES_DIR_HINT = "pass --patches-dir DIR holding a quilt series file"
_STRIP_RE = re.compile(r"^-p(\d+)$")


@dataclass(frozen=True)
class SeriesEntry:
    """One series line: patch file ``name``, strip level, and the 1-based line in ``series``."""

    name: str
    strip: int
    line: int


class Series:
    """The series of the ``patches/`` directory ``directory``: its entries in order (:meth:`read`), and each entry's
    patch, parsed on first use (:meth:`parse`) and kept -- a parse error too, which :meth:`parse` raises again."""

    def __init__(self, directory: Path, entries: list[SeriesEntry]) -> None:
        self.directory = directory
        self.entries = entries
        self._parsed: dict[SeriesEntry, Patch | UserError] = {}

    @classmethod
    def read(cls, directory: Path, *, allow_duplicates: bool = False, hint: str = PATCHES_DIR_HINT) -> Series:
        """Read ``<directory>/series`` (no patch file is read yet).

        ``hint`` is the advice for a missing series, in the calling tool's own options (``rebase.py`` has
        ``--project DIR``, not ``--patches-dir``).

        Raises:
            UserError: missing series file, not a regular file (a FIFO is never opened for reading), a byte that is
            not UTF-8 (with its line), a bad option, a name with a path separator or ``..``, a duplicate entry
            (unless ``allow_duplicates``: ``lint`` reports them as problems).
        """
        series = directory / SERIES_NAME
        where = display_path(series)
        try:
            text = decode_utf8(read_regular_file(series, "the quilt series file"), where, "the series file")
        except (FileNotFoundError, NotADirectoryError):
            what = "is a file, expected the patches/ directory" if directory.is_file() else "series file not found"
            raise UserError(f"{what} ({hint})", path=display_path(directory if directory.is_file() else series)
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
        return cls(directory, entries)

    @classmethod
    def of(cls, series: Series | Path) -> Series:
        """``series`` itself, or the series read from the directory ``series`` (:meth:`read`)."""
        return series if isinstance(series, Series) else cls.read(series)

    @property
    def names(self) -> list[str]:
        """The patch file names in series order."""
        return [entry.name for entry in self.entries]

    @property
    def empty(self) -> bool:
        """True when ``series`` names no patch."""
        return not self.entries

    def file(self, entry: SeriesEntry) -> Path:
        """The patch file ``entry`` names, checked to be there and a regular file (a FIFO named in ``series`` is
        refused, never opened).

        Raises:
            UserError: naming ``series`` and the entry's line: the file does not exist, or is not a regular file.
        """
        path = self.directory / entry.name
        if path.is_file():
            return path
        where = display_path(self.directory / SERIES_NAME)
        if path.exists():
            kind = "a directory" if path.is_dir() else "not a regular file (a FIFO, socket or device)"
            raise UserError(f"series names {entry.name}, which is {kind}: a patch must be a regular file",
                            path=where, line=entry.line)
        raise UserError(f"series names {entry.name}, which does not exist in {display_path(self.directory)}",
                        path=where, line=entry.line)

    def parse(self, entry: SeriesEntry) -> Patch:
        """The patch of ``entry``, parsed once (:func:`~catch_tools.patches.parse.parse_patch`).

        Raises:
            UserError: the file is missing or not a regular file (``series:<line>``, :meth:`file`), or does not parse
            (``<patch>:<line>``); the same error again on every later call.
        """
        found = self._parsed.get(entry)
        if found is None:
            try:
                found = parse_patch(self.file(entry), strip=entry.strip, name=entry.name, series_line=entry.line)
            except UserError as err:
                found = err
            self._parsed[entry] = found
        if isinstance(found, UserError):
            raise found
        return found

    @property
    def patches(self) -> list[Patch]:
        """Every patch, parsed, in series order (possibly empty).

        Raises:
            UserError: the first entry :meth:`parse` refuses.
        """
        return [self.parse(entry) for entry in self.entries]

    def touched_paths(self) -> list[str]:
        """Every tree-relative path the series' file changes name (old and new names of renames and copies), sorted.

        Raises:
            UserError: as :attr:`patches`.
        """
        return sorted({path for patch in self.patches for change in patch.files for path in change.paths})
