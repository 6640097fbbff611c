# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Data model of a parsed patch series: patches, their metadata, file changes and hunks.

Shapes only; parsing lives in :mod:`catch_tools.patches.parse`, application in :mod:`catch_tools.patches.engine`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

PathClass = Literal["python", "native", "unshipped"]
PatchFormat = Literal["mbox", "dep3", "plain"]

#: Modes git records in trees (git's ``S_IFREG|0644``, executable, symlink; see git-fast-import(1) "filemodify").
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_LINK = "120000"


@dataclass(frozen=True)
class HunkLine:
    """One line of a hunk: ``kind`` is ``" "`` (context), ``"-"`` (removed) or ``"+"`` (added).

    ``text`` is the line's bytes including its ``\\n`` unless a ``\\ No newline at end of file`` marker followed it.
    ``patch_line`` is the 1-based line number in the patch file.
    """

    kind: str
    text: bytes
    patch_line: int


@dataclass
class Hunk:
    """A unified-diff hunk ``@@ -old_start,old_len +new_start,new_len @@ section``."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    section: str
    lines: list[HunkLine]
    patch_line: int  # line of the ``@@`` header in the patch file

    @property
    def header(self) -> str:
        """The hunk header as written in the patch (without the section heading)."""
        return f"@@ -{self.old_start},{self.old_len} +{self.new_start},{self.new_len} @@"

    @property
    def old_lines(self) -> list[bytes]:
        return [ln.text for ln in self.lines if ln.kind in " -"]

    @property
    def new_lines(self) -> list[bytes]:
        return [ln.text for ln in self.lines if ln.kind in " +"]


@dataclass
class FileChange:
    """The change a patch makes to one path (paths already stripped of ``-pN`` prefix components).

    ``old_path`` is None for a created file, ``new_path`` is None for a deleted file; they differ for renames/copies.
    """

    old_path: str | None
    new_path: str | None
    hunks: list[Hunk]
    patch_line: int
    old_mode: str | None = None
    new_mode: str | None = None
    is_copy: bool = False
    binary: bool = False
    #: a traditional (non-git) diff whose only hunk is ``@@ -0,0 ...``: creates the file when it is absent, else
    #: edits the (empty) file -- git apply's ``is_new < 0`` ("unknown") case.
    maybe_new: bool = False

    @property
    def path(self) -> str:
        """The path this change is reported under (the new path, or the old one for a deletion)."""
        return self.new_path or self.old_path or ""

    @property
    def paths(self) -> list[str]:
        return [p for p in dict.fromkeys([self.old_path, self.new_path]) if p]


@dataclass
class PatchMeta:
    """The commit message and identity a patch carries.

    ``date`` is ``(seconds since the epoch, "+hhmm")`` or None when the patch states no date (DEP-3/plain).
    ``trailers`` maps a trailer key (``Upstream-Status``, ``Catch-Test``, ``Catch-Binary``...) to ``(value, line)``.
    """

    subject: str
    body: str
    author_name: str | None
    author_email: str | None
    date: tuple[int, str] | None
    trailers: dict[str, tuple[str, int]] = field(default_factory=dict)
    format: PatchFormat = "mbox"


@dataclass
class Patch:
    """One entry of the series, parsed."""

    name: str
    path: Path
    strip: int
    series_line: int
    meta: PatchMeta
    files: list[FileChange]
    raw: bytes

    @property
    def display(self) -> str:
        """How errors name the patch file (``patches/0001-x.patch``)."""
        return f"{self.path.parent.name}/{self.name}"
