# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Line-by-line validation of a diff's headers and hunks, as ``git apply`` validates them (apply.c), plus the checks
a series linter needs on top.

``git apply`` refuses (and so does :func:`catch_tools.patches.parse.parse_patch`, ``refuses=True``):

* a malformed ``@@ -a[,b] +c[,d] @@`` header or a hunk with fewer lines than its header counts ("corrupt patch");
* a ``@@`` hunk that follows junk instead of a file header ("patch fragment without header");
* an ``old mode``/``new mode``/``deleted file mode``/``new file mode``/``index .. <mode>`` value that is not octal
  ("invalid mode");
* a new file whose hunks remove lines ("depends on old contents"), a deleted file whose hunks add lines ("still has
  contents"), a ``---``/``+++`` name that is not ``/dev/null`` for a created/deleted file ("expected /dev/null"), or
  one that differs from the ``rename``/``copy`` header ("inconsistent old/new filename").

Checks only ``lint`` makes (``refuses=False``; git accepts these patches):

* diff-like lines (`` ``, ``-``, ``+``) left after a hunk's counted body: the header undercounts the hunk and git
  silently drops those lines -- a hand-edited patch that no longer says what it shows;
* a mode that is octal but not one git writes (100644, 100755, 120000, 160000).

Deliberate difference (refused by ``parse_patch`` too, documented in docs): ``---``/``+++`` names that differ from
the ``diff --git`` line without a rename/copy header. git 2.39 takes the ``---``/``+++`` names and turns such a patch
into an undeclared rename that overwrites the other file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_MODE_RE = re.compile(r"^[0-7]+$")
_GIT_MODES = frozenset({"100644", "100755", "120000", "160000"})
_INDEX_RE = re.compile(r"^index [0-9a-fA-F]+\.\.[0-9a-fA-F]+(?: (\S+))?$")
_MODE_KEYS = ("old mode ", "new mode ", "deleted file mode ", "new file mode ")
_OTHER_KEYS = ("rename from ", "rename to ", "copy from ", "copy to ", "similarity index ", "dissimilarity index ",
               "rename old ", "rename new ")


@dataclass(frozen=True)
class DiffProblem:
    """``line`` (1-based in the patch file), ``message``, and whether ``git apply`` refuses the patch for it."""

    line: int
    message: str
    refuses: bool


def _strip_name(raw: str, strip: int) -> str | None:
    name = raw.split("\t")[0].rstrip()
    if name == "/dev/null":
        return None
    parts = name.split("/")
    return "/".join(parts[strip:]) if len(parts) > strip else ""


def _git_names(line: str) -> tuple[str | None, str | None]:
    """The two names of ``diff --git a/X b/Y`` (unquoted form; None when ambiguous or quoted)."""
    rest = line[len("diff --git "):]
    if rest.startswith('"'):
        return None, None
    half = (len(rest) - 1) // 2
    old, new = rest[:half], rest[half + 1:]
    if rest[half:half + 1] == " " and old.split("/", 1)[-1] == new.split("/", 1)[-1]:
        return old, new
    return None, None


def _is_diff_like(lines: list[str], j: int) -> bool:
    line = lines[j]
    if not line or line[0] not in " +-":
        return False
    if line.startswith("--- ") and j + 1 < len(lines) and lines[j + 1].startswith("+++ "):
        return False
    return line not in ("-- ", "--")  # the format-patch signature separator (its trailing space often stripped)


class _Scanner:
    def __init__(self, lines: list[str], first: int, strip: int):
        self.lines, self.first, self.strip = lines, first, strip
        self.problems: list[DiffProblem] = []

    def add(self, j: int, message: str, refuses: bool) -> None:
        self.problems.append(DiffProblem(self.first + j, message, refuses))

    def mode(self, j: int, value: str) -> None:
        if not _MODE_RE.match(value):
            self.add(j, f"invalid mode {value!r} (git apply: 'invalid mode')", True)
        elif value not in _GIT_MODES:
            self.add(j, f"mode {value} is not one git writes (100644, 100755, 120000, 160000)", False)

    def run(self) -> list[DiffProblem]:
        lines = self.lines
        j, in_file = 0, False
        while j < len(lines):
            line = lines[j]
            if line.startswith("diff --git "):
                j, in_file = self.git_header(j)
            elif line.startswith("--- ") and j + 1 < len(lines) and lines[j + 1].startswith("+++ "):
                j, in_file = j + 2, True
            elif line.startswith("@@"):
                if not in_file:
                    self.add(j, f"hunk {line[:40]!r} without a file header before it (git apply: 'patch fragment "
                                "without header')", True)
                    j += 1
                    continue
                j = self.hunks(j, None)
                in_file = False
            else:
                j += 1
        return self.problems

    def git_header(self, j: int) -> tuple[int, bool]:
        """Validate a ``diff --git`` header and its hunks; returns (next line, whether hunks may still follow)."""
        lines = self.lines
        old_def, new_def = _git_names(lines[j])
        default = _strip_name(old_def, self.strip) if old_def else None
        fields: dict[str, tuple[str, int]] = {}
        k = j + 1
        names: dict[str, tuple[str | None, int]] = {}
        while k < len(lines):
            line = lines[k]
            key = next((key for key in _MODE_KEYS if line.startswith(key)), None)
            if key:
                fields[key.strip()] = (line[len(key):], k)
                self.mode(k, line[len(key):])
            elif line.startswith("index "):
                m = _INDEX_RE.match(line)
                if m and m.group(1) is not None:
                    self.mode(k, m.group(1))
                elif not m and " " in line[6:]:
                    self.mode(k, line.rsplit(" ", 1)[1])
            elif line.startswith(_OTHER_KEYS):
                key = next(key for key in _OTHER_KEYS if line.startswith(key))
                fields[key.strip()] = (line[len(key):], k)
            elif line.startswith("--- "):
                names["old"] = (_strip_name(line[4:], self.strip), k)
            elif line.startswith("+++ "):
                names["new"] = (_strip_name(line[4:], self.strip), k)
            else:
                break
            k += 1
        is_new, is_delete = "new file mode" in fields, "deleted file mode" in fields
        src = fields.get("rename from") or fields.get("copy from")
        dst = fields.get("rename to") or fields.get("copy to")
        want_old = None if is_new else (src[0] if src else default)
        want_new = None if is_delete else (dst[0] if dst else default)
        for side, want in (("old", want_old), ("new", want_new)):
            if side not in names:
                continue
            got, line_no = names[side]
            if got is None and want is not None and (src or dst) is None and not (is_new or is_delete):
                self.add(line_no, f"{side} name is /dev/null but the file is neither created nor deleted", False)
            elif got is not None and want is None and (is_new if side == "old" else is_delete):
                self.add(line_no, "expected /dev/null for a " + ("created" if side == "old" else "deleted")
                         + " file (git apply: 'expected /dev/null')", True)
            elif got is not None and want is not None and got != want:
                refuses = bool(src if side == "old" else dst)
                self.add(line_no, f"{side} name {got} differs from {want} named by the "
                         + ("rename/copy" if refuses else "diff --git") + " header"
                         + (" (git apply: 'inconsistent filename')" if refuses else
                            " (git would apply it as an undeclared rename)"), True)
        if k < len(lines) and lines[k].startswith("@@"):
            return self.hunks(k, "new" if is_new else "delete" if is_delete else None), False
        return k, True

    def hunks(self, j: int, kind: str | None) -> int:
        lines = self.lines
        while j < len(lines) and lines[j].startswith("@@"):
            header = lines[j]
            m = HUNK_RE.match(header)
            if not m:
                self.add(j, f"malformed hunk header {header[:60]!r} (git apply: 'corrupt patch')", True)
                return j + 1
            old = 1 if m.group(2) is None else int(m.group(2))
            new = 1 if m.group(4) is None else int(m.group(4))
            label = header.split("@@")[1].strip()
            k = j + 1
            while old > 0 or new > 0:
                if k >= len(lines) or (lines[k][:1] not in (" ", "-", "+", "\\") and lines[k] != ""):
                    self.add(k, f"hunk {label!r} ends early: expected {old} more old and {new} more new line(s); "
                             "the hunk header's line counts are wrong (git apply: 'corrupt patch')", True)
                    return k
                body = lines[k]
                if body.startswith("\\"):
                    pass
                elif body == "" or body[0] == " ":
                    old, new = old - 1, new - 1
                elif body[0] == "-":
                    old -= 1
                else:
                    new -= 1
                if old < 0 or new < 0:
                    self.add(k, f"hunk {label!r} has more lines of one kind than its header counts (git apply: "
                             "'corrupt patch')", True)
                    return k + 1
                k += 1
            if kind == "new" and (1 if m.group(2) is None else int(m.group(2))):
                self.add(j, "new file depends on old contents: its hunk has old lines (git apply refuses)", True)
            if kind == "delete" and (1 if m.group(4) is None else int(m.group(4))):
                self.add(j, "deleted file still has contents: its hunk adds lines (git apply refuses)", True)
            while k < len(lines) and lines[k].startswith("\\"):
                k += 1
            if k < len(lines) and not lines[k].startswith("@@") and _is_diff_like(lines, k):
                self.add(k, f"line after the counted body of hunk {label!r}: its header undercounts the hunk, and "
                         "git apply silently drops this line (fix the counts: `rediff`, or regenerate the patch)",
                         False)
                while k < len(lines) and _is_diff_like(lines, k):
                    k += 1
            j = k
        return j


def diff_problems(lines: list[str], first: int, strip: int = 1) -> list[DiffProblem]:
    """Every header and hunk problem of the diff ``lines`` (which start at 1-based patch line ``first``), in order.

    ``strip`` is the patch's ``-pN`` (names are compared after stripping). Never raises.
    """
    return _Scanner(lines, first, strip).run()
