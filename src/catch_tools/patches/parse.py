# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Parse one patch file: a ``git format-patch`` mbox, a DEP-3 (Debian) patch, or a bare quilt diff.

Rules and where they come from:

* mbox: the ``From <sha> <date>`` line, RFC 2822 headers (``From``, ``Date``, ``Subject``, RFC 2047 encoded words
  decoded), the message body up to the ``---`` line (git-mailinfo(1)); a ``[PATCH ...]`` subject prefix is dropped as
  ``git am`` does without ``-k``.
* DEP-3 (https://dep-team.pages.debian.net/deps/dep3/): ``Description``/``Subject`` (first line is the subject, the
  continuation lines the body), ``Author``/``From``; other fields (``Origin``, ``Forwarded``, ``Bug``...) become
  trailers of the commit message so nothing is lost. ``Index:`` lines and ``pkg.orig/`` prefixes are handled by the
  ``-pN`` strip (quilt default ``-p1``).
* the diff is parsed with ``unidiff``; git's extended headers (modes, renames, copies) are read from each file's
  header lines. Paths are validated: no absolute paths, no ``..``, nothing under ``.git``.

Every problem raises :class:`~catch_tools.errors.UserError` naming the patch file and line.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import posixpath
import re
from pathlib import Path

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from catch_tools.errors import UserError
from catch_tools.patches.model import MODE_LINK, FileChange, Hunk, HunkLine, Patch, PatchFormat, PatchMeta
from catch_tools.patches.validate import DiffProblem, diff_problems
from catch_tools.userfiles import decode_utf8, read_regular_file

_FIELD_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):(?:\s(.*)|)$")
_PATCH_PREFIX_RE = re.compile(r"^\[PATCH[^\]]*\]\s*")
_MBOX_FROM_RE = re.compile(r"^From \S+ ")
_TRAILER_KEYS = ("Upstream-Status", "Catch-Test", "Catch-Binary")
_DEP3_SUBJECT = ("Description", "Subject")
_DEP3_AUTHOR = ("Author", "From")


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (shorter error lines), else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _decode(raw: bytes, where: str) -> str:
    text = decode_utf8(raw, where, "patch files")
    cr = text.find("\r")
    if cr >= 0:
        line = text.count("\n", 0, cr) + 1
        raise UserError("CRLF/CR line ending: patch files must use LF line endings (convert with dos2unix); "
                        "the upstream sources they patch use LF", path=where, line=line)
    return text


def diff_start(lines: list[str]) -> int | None:
    """Index of the first line of the diff: ``diff --git``, ``Index:``, or a ``---``/``+++`` pair."""
    for i, line in enumerate(lines):
        if line.startswith(("diff --git ", "Index: ")):
            return i
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            return i
    return None


def _trailers(body_lines: list[str], first_line: int) -> dict[str, tuple[str, int]]:
    found: dict[str, tuple[str, int]] = {}
    for offset, line in enumerate(body_lines):
        m = _FIELD_RE.match(line)
        if m and m.group(1) in _TRAILER_KEYS and m.group(1) not in found:
            found[m.group(1)] = ((m.group(2) or "").strip(), first_line + offset)
    return found


def _strip_blank(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _parse_mbox(head: list[str], where: str) -> PatchMeta:
    # head[0] is the mbox "From <sha> <date>" separator line.
    end = next((i for i, ln in enumerate(head) if i > 0 and not ln.strip()), len(head))
    msg = email.message_from_string("\n".join(head[1:end]) + "\n\n", policy=email.policy.default)
    cte = str(msg.get("Content-Transfer-Encoding", "8bit")).lower()
    if cte not in ("7bit", "8bit", "binary"):
        raise UserError(f"unsupported Content-Transfer-Encoding {cte!r}: re-export the patch with git format-patch",
                        path=where, line=1)
    subject = _PATCH_PREFIX_RE.sub("", str(msg.get("Subject", "")).strip())
    if not subject:
        raise UserError("mbox patch has no Subject header: add one (Subject: <what it fixes>)", path=where, line=1)
    name, addr = email.utils.parseaddr(str(msg.get("From", "")))
    date = None if msg.get("Date") is None else _mbox_date(str(msg["Date"]), head[1:end], where)
    body = head[end + 1:]
    if "---" in body:
        body = body[: body.index("---")]
    trailers = _trailers(body, end + 2)
    return PatchMeta(subject=subject, body="\n".join(_strip_blank(body)), author_name=name or None,
                     author_email=addr or None, date=date, trailers=trailers, format="mbox")


def _mbox_date(value: str, header_lines: list[str], where: str) -> tuple[int, str]:
    """The ``Date`` header as ``(seconds since the epoch, "+hhmm")``; ``header_lines`` are the mbox headers from the
    patch's line 2, for the line of an error.

    Refused: what RFC 2822 parsing (``email.utils.parsedate_tz``) cannot read; a date before 1970 or after year 9999
    (git keeps commit times as unsigned seconds since the epoch and refuses years past 9999, as Python's datetime
    does); a zone beyond +-14:00 (``git fast-import --date-format=raw`` refuses it: "resulting date is too far").
    """
    line = 2 + next((i for i, text in enumerate(header_lines) if text.lower().startswith("date:")), -1)
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        raise UserError(f"cannot parse Date header {value!r}", path=where, line=line)
    offset = parsed[9] or 0
    try:
        if abs(offset) > 14 * 3600:
            raise ValueError("zone offset beyond +-14:00")
        seconds = int(email.utils.mktime_tz(parsed))
        if seconds < 0:
            raise ValueError("before 1970")
    except (ValueError, OverflowError) as err:
        raise UserError(f"Date header {value!r} is out of range ({err}): git records commit times from 1970 to "
                        "year 9999 in zones within +-14:00", path=where, line=line) from None
    sign = "-" if offset < 0 else "+"
    return seconds, f"{sign}{abs(offset) // 3600:02d}{abs(offset) % 3600 // 60:02d}"


def _parse_dep3(head: list[str], fallback_subject: str) -> PatchMeta:
    fields: list[tuple[str, list[str], int]] = []
    free: list[str] = []
    for i, line in enumerate(head):
        m = _FIELD_RE.match(line)
        if m and not free:
            fields.append((m.group(1), [(m.group(2) or "").strip()], i + 1))
        elif line.startswith((" ", "\t")) and fields and not free:
            cont = line.strip()
            fields[-1][1].append("" if cont == "." else cont)
        elif line.strip() in ("---", "") and not free:
            continue
        elif not line.startswith("===="):
            free.append(line)
    subject, body, author = "", [], ""
    trailers: dict[str, tuple[str, int]] = {}
    extra: list[str] = []
    for key, values, lineno in fields:
        if key in _DEP3_SUBJECT and not subject:
            subject, body = values[0], values[1:]
        elif key in _DEP3_AUTHOR and not author:
            author = values[0]
        else:
            extra.append(f"{key}: {' '.join(v for v in values if v)}")
            if key in _TRAILER_KEYS:
                trailers[key] = (" ".join(v for v in values if v), lineno)
    if not subject:
        free = _strip_blank(free)
        if free:
            subject, body = free[0].strip(), free[1:]
        else:
            subject = fallback_subject
    name, addr = email.utils.parseaddr(author) if author else ("", "")
    body_text = "\n".join(_strip_blank(body + [""] + extra))
    return PatchMeta(subject=subject, body=body_text, author_name=name or None, author_email=addr or None,
                     date=None, trailers=trailers, format="dep3" if fields else "plain")


def _fallback_subject(name: str) -> str:
    stem = re.sub(r"\.(patch|diff)$", "", name)
    stem = re.sub(r"^\d+-", "", stem)
    return stem.replace("-", " ").replace("_", " ").strip() or name


def _check_diff(lines: list[str], first: int, strip: int, where: str) -> None:
    """Raise the first problem ``git apply`` refuses a patch for (see :mod:`catch_tools.patches.validate`;
    unidiff silently skips a malformed hunk header)."""
    for problem in diff_problems(lines, first, strip):
        if problem.refuses:
            raise UserError(problem.message, path=where, line=problem.line)


def _safe_path(raw: str, strip: int, where: str, line: int) -> str:
    if raw.startswith("/"):
        raise UserError(f"absolute path {raw!r}: patches may only touch files inside the tree", path=where, line=line)
    parts = [p for p in raw.split("/") if p not in ("",)]
    if len(parts) <= strip:
        raise UserError(f"path {raw!r} has no components left after -p{strip}", path=where, line=line)
    parts = parts[strip:]
    if any(p == ".." for p in parts) or any(p == "." for p in parts):
        raise UserError(f"path {raw!r} contains '..' or '.': patches may only touch files inside the tree",
                        path=where, line=line)
    if parts[0] == ".git":
        raise UserError(f"path {raw!r} is inside .git", path=where, line=line)
    path = "/".join(parts)
    if any(c in path for c in '"\n\\') or path.startswith(" "):
        raise UserError(f"path {raw!r} contains a quote, backslash or newline", path=where, line=line)
    return path


def _git_headers(info: list[str]) -> dict[str, str]:
    keys = ("old mode ", "new mode ", "deleted file mode ", "new file mode ", "rename from ", "rename to ",
            "copy from ", "copy to ")
    found: dict[str, str] = {}
    for line in info:
        for key in keys:
            if line.startswith(key):
                found[key.strip()] = line[len(key):].strip()
        if line.startswith("GIT binary patch") or (line.startswith("Binary files ") and line.endswith(" differ")):
            found["binary"] = "yes"
    return found


def _file_changes(diff: str, first: int, strip: int, where: str) -> list[FileChange]:
    try:
        patchset = PatchSet(diff)
    except UnidiffParseError as err:
        raise UserError(f"cannot parse diff: {err}", path=where, line=first) from None
    changes: list[FileChange] = []
    starts = _file_header_lines(diff)
    for index, pf in enumerate(patchset):
        info = [str(x).rstrip("\n") for x in pf.patch_info] if pf.patch_info else []
        hdr = _git_headers(info)
        header_line = first + (starts[index] if index < len(starts) and len(starts) == len(patchset) else 0)
        old_raw, new_raw = pf.source_file, pf.target_file
        old_path: str | None = None
        new_path: str | None = None
        if "rename from" in hdr or "copy from" in hdr:
            # git writes rename/copy paths without the a/ b/ prefix: strip one component less.
            src = hdr.get("rename from") or hdr["copy from"]
            dst = hdr.get("rename to") or hdr.get("copy to", "")
            old_path = _safe_path(src, max(strip - 1, 0), where, header_line)
            new_path = _safe_path(dst, max(strip - 1, 0), where, header_line)
        else:
            # Created/deleted only when a side is /dev/null (unidiff maps "new/deleted file mode" to it). Not
            # unidiff's is_added_file/is_removed_file: they also call "@@ -0,0 +1 @@" (filling an existing empty
            # file) a creation and "@@ -1 +0,0 @@" (emptying a file) a deletion; git apply does not.
            if old_raw != "/dev/null":
                old_path = _safe_path(old_raw, strip, where, header_line)
            if new_raw != "/dev/null":
                new_path = _safe_path(new_raw, strip, where, header_line)
        if old_path is None and new_path is None:
            raise UserError("file header names /dev/null on both sides", path=where, line=header_line)
        hunks: list[Hunk] = []
        for h in pf:
            lines: list[HunkLine] = []
            for ln in h:
                if ln.line_type == "\\":
                    if lines:
                        prev = lines[-1]
                        lines[-1] = HunkLine(prev.kind, prev.text.removesuffix(b"\n"), prev.patch_line)
                    continue
                lines.append(HunkLine(ln.line_type, ln.value.encode("utf-8"), first + (ln.diff_line_no or 1) - 1))
            hline = lines[0].patch_line - 1 if lines else header_line
            hunks.append(Hunk(h.source_start, h.source_length, h.target_start, h.target_length,
                              (h.section_header or "").strip(), lines, hline))
        change = FileChange(
            old_path=old_path, new_path=new_path, hunks=hunks, patch_line=header_line,
            old_mode=hdr.get("old mode") or hdr.get("deleted file mode"),
            new_mode=hdr.get("new mode") or hdr.get("new file mode"),
            is_copy="copy from" in hdr, binary=bool(pf.is_binary_file or "binary" in hdr),
            maybe_new=(old_path is not None and old_path == new_path and len(hunks) == 1 and hunks[0].old_len == 0
                       and not any(x.startswith("diff --git ") for x in info)))
        _check_symlink(change, where)
        changes.append(change)
    return changes


def _file_header_lines(diff: str) -> list[int]:
    """0-based line of each file's header in ``diff``, in order: ``diff --git`` lines, else ``Index:`` lines,
    else ``---`` lines followed by ``+++`` (for error locations)."""
    lines = diff.split("\n")
    for prefix in ("diff --git ", "Index: "):
        found = [i for i, line in enumerate(lines) if line.startswith(prefix)]
        if found:
            return found
    return [i for i, line in enumerate(lines[:-1]) if line.startswith("--- ") and lines[i + 1].startswith("+++ ")]


def _check_symlink(change: FileChange, where: str) -> None:
    if change.new_mode != MODE_LINK or change.new_path is None:
        return
    target = b"".join(ln.text for h in change.hunks for ln in h.lines if ln.kind in " +").decode("utf-8", "replace")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(change.new_path), target))
    if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
        raise UserError(f"creates symlink {change.new_path} -> {target} pointing outside the tree",
                        path=where, line=change.patch_line)


def parse_patch(path: Path, *, strip: int = 1, name: str | None = None, series_line: int = 0) -> Patch:
    """Parse the patch file ``path`` (mbox, DEP-3 or plain diff) applied with ``-p<strip>``.

    Returns a :class:`~catch_tools.patches.model.Patch`. Raises :class:`UserError` (file and line) for: unreadable or
    empty files, non-UTF-8 bytes, CR line endings, malformed hunk headers or line counts, a patch without any file
    change, unsafe paths (absolute, ``..``, ``.git``, symlinks pointing outside the tree).
    """
    where = display_path(path)
    try:
        raw = read_regular_file(path, "a patch file")
    except OSError as err:
        raise UserError(f"cannot read patch: {err.strerror}", path=where) from None
    if not raw.strip():
        raise UserError("empty patch: the file has no content (delete it and its series line)", path=where, line=1)
    text = _decode(raw, where)
    lines = text.split("\n")
    start = diff_start(lines)
    if start is None:
        raise UserError("empty patch: no diff found (expected 'diff --git', 'Index:' or '---'/'+++' lines)",
                        path=where, line=len(lines))
    head = lines[:start]
    display_name = name or path.name
    fmt: PatchFormat
    if head and _MBOX_FROM_RE.match(head[0]):
        meta = _parse_mbox(head, where)
        fmt = "mbox"
    else:
        meta = _parse_dep3(head, _fallback_subject(display_name))
        fmt = meta.format
    meta.format = fmt
    diff_lines = lines[start:]
    _check_diff(diff_lines[:-1] if diff_lines and diff_lines[-1] == "" else diff_lines, start + 1, strip, where)
    files = _file_changes("\n".join(diff_lines), start + 1, strip, where)
    if not files:
        raise UserError("empty patch: the diff changes no file (delete it and its series line)", path=where,
                        line=start + 1)
    return Patch(name=display_name, path=path, strip=strip, series_line=series_line, meta=meta, files=files, raw=raw)


def patch_diff_problems(path: Path, strip: int = 1) -> list[DiffProblem]:
    """Every :func:`~catch_tools.patches.validate.diff_problems` finding of the patch file ``path`` (for ``lint``),
    including those ``git apply`` accepts. Empty when the file cannot be read or decoded (``parse_patch`` reports
    that)."""
    try:
        lines = read_regular_file(path, "a patch file").decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError, UserError):
        return []
    start = diff_start(lines)
    if start is None:
        return []
    diff_lines = lines[start:]
    return diff_problems(diff_lines[:-1] if diff_lines and diff_lines[-1] == "" else diff_lines, start + 1, strip)
