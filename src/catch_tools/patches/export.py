# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``export``: regenerate ``patches/`` from the commits on top of the base, deterministically.

``git format-patch`` options and why (Electron's ``script/lib/git.py`` and microsoft/go-infra's ``git-go-patch``
make the same choices):

* ``--zero-commit --no-signature --no-numbered --no-stat --keep-subject``: nothing that changes between runs or
  machines (commit ids, git version, ``[PATCH n/m]``, diffstat widths);
* ``--full-index``: full blob ids in ``index`` lines, which ``git am --3way`` needs and which never change width;
* ``-M50%`` (git's default similarity, stated so user configuration cannot change it),
  ``--diff-algorithm=myers``, ``--src-prefix=a/ --dst-prefix=b/``, ``--no-ext-diff --no-textconv --no-color``;
* file names are git's own: ``NNNN-<subject slug>.patch`` with ``--filename-max-length=64`` (NNNN = position).

A patch file is kept byte-for-byte when its change is *equivalent* to the new export: same message and identity and
same diff once ``index`` lines and hunk line numbers/section headings are ignored (so upstream drift that only moves
hunks does not churn the series). With ``refresh`` (what the rebase does on the new base) an equivalent patch whose
diff moved is *refreshed* instead (:func:`refreshed`): its diff becomes the new export's -- hunk line numbers,
``index`` lines and section headings as ``git format-patch`` writes them on the base -- under the file's own mail
header, message and trailers; a patch whose diff did not move stays byte-identical. The series file keeps its comment
lines; export refuses an empty range (that would delete every patch). ``dry_run`` changes nothing and lists the
patches that would change.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import run_git
from catch_tools.patches.gittree import open_tree, recorded_base
from catch_tools.patches.lint import undeclared_binary
from catch_tools.patches.parse import diff_start, display_path, parse_patch
from catch_tools.patches.series import SERIES_NAME, Series
from catch_tools.patches.transaction import Transaction
from catch_tools.pin import Pin
from catch_tools.userfiles import write_atomic

FORMAT_PATCH_OPTIONS = (
    "--zero-commit", "--no-signature", "--no-numbered", "--no-stat", "--keep-subject", "--full-index", "-M50%",
    "--diff-algorithm=myers", "--src-prefix=a/", "--dst-prefix=b/", "--no-ext-diff", "--no-textconv",
    "--no-color", "--filename-max-length=64", "--no-notes", "--no-thread", "--no-cover-letter",
)
_SIGNATURE_VERSION = re.compile(rb"[0-9][^\s]*\n*")
_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@.*$")


def equivalence_key(data: bytes) -> bytes:
    """The bytes of a patch with what does not change its meaning removed: the mbox ``From <sha>`` line, ``index``
    lines, hunk start lines and section headings, and a trailing ``-- `` signature."""
    out: list[bytes] = []
    for line in data.split(b"\n"):
        if line == b"-- ":
            break
        if line.startswith(b"From ") and not out:
            continue
        if line.startswith(b"index "):
            continue
        m = _HUNK.match(line)
        out.append(b"@@ -%s +%s @@" % (m.group(1) or b"1", m.group(2) or b"1") if m else line)
    return b"\n".join(out).rstrip(b"\n")


def _diff_bounds(data: bytes) -> tuple[int, int]:
    """Byte offsets of the diff of a mail patch: where its first diff line starts and where a trailing ``-- ``
    signature (``git format-patch`` without ``--no-signature``: ``-- ``, the git version, maybe a blank line) begins
    (``len(data)`` without one)."""
    lines = data.decode("utf-8", "surrogateescape").split("\n")
    first = diff_start(lines)
    start = len(data) if first is None else len("\n".join(lines[:first]).encode("utf-8", "surrogateescape")) + (
        1 if first else 0)
    sig = data.rfind(b"\n-- \n", start - 1)
    end = sig + 1 if sig >= 0 and _SIGNATURE_VERSION.fullmatch(data[sig + 5:]) else len(data)
    return start, end


def refreshed(old: bytes, new: bytes) -> bytes:
    """``old`` (a patch file) with its diff replaced by the diff of ``new`` (its equivalent change exported on the
    current base); the mail header, message, DEP-3 and ``Catch-*`` trailers and a signature of ``old`` are kept. Equals
    ``old`` byte for byte when the diff did not move."""
    old_start, old_end = _diff_bounds(old)
    new_start, new_end = _diff_bounds(new)
    return old[:old_start] + new[new_start:new_end] + old[old_end:]


@dataclass
class ExportResult:
    """``written``: new/changed patch files; ``kept``: byte-identical or equivalent ones; ``removed``: old series
    entries no longer exported; ``series_changed``: whether ``series`` changes."""

    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    series_changed: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed or self.series_changed)


def _series_text(old: str | None, names: list[str]) -> str:
    header = []
    for line in (old or "").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            break
        header.append(line)
    while header and not header[-1].strip():
        header.pop()
    return "\n".join([*header, *names]) + "\n"


def export_series(source: Path, patches_dir: Path, *, base: str | None = None, dry_run: bool = False,
                  pin: Pin | None = None, refresh: bool = False) -> ExportResult:
    """Regenerate ``patches_dir`` from the commits ``base..HEAD`` of ``source`` (see module doc; ``refresh``: an
    equivalent patch whose diff moved is refreshed instead of kept).

    The base is ``refs/patches/base`` when recorded (the base ``apply`` used), else ``base``/the pin.

    Raises:
        UserError: a git am still stopped on a conflict, merge commits in the range, or no commit to export.
    """
    repo = open_tree(source)
    operation = repo.operation_in_progress()
    if operation:
        raise UserError(f"a git {operation} is in progress: finish it "
                        f"(git -C {repo.root} am --continue) before exporting", path=str(repo.root))
    pending = Transaction.pending(repo)
    if pending is not None and pending.state.operation != "stopped":
        raise UserError("an interrupted apply is pending: run apply or reverse first to recover",
                        path=str(repo.root))
    base_sha = recorded_base(repo, pin, base)
    head = repo.head()
    if repo.out("rev-list", "--merges", f"{base_sha}..{head}"):
        raise UserError("the commits on top of the base include merges: a series must be linear",
                        path=str(repo.root))
    count = int(repo.out("rev-list", "--count", f"{base_sha}..{head}"))
    if count == 0:
        raise UserError(f"no commits on top of the base {base_sha[:12]}: refusing an empty export (it would delete "
                        "every patch; use `reverse` to drop the series from the tree)", path=str(repo.root))
    if patches_dir.exists() and not patches_dir.is_dir():
        raise UserError("is a file, expected the patches/ directory (pass --patches-dir DIR)",
                        path=display_path(patches_dir))
    series_path = patches_dir / SERIES_NAME
    old_series: str | None = None
    old_names: list[str] = []
    if os.path.lexists(series_path):
        old_names = Series.read(patches_dir).names  # refuses a FIFO, a bad byte or line
        old_series = series_path.read_text(encoding="utf-8")
    old_files = {n: (patches_dir / n).read_bytes() for n in old_names if (patches_dir / n).is_file()}
    old_by_key = {equivalence_key(data): data for data in old_files.values()}
    result = ExportResult()
    new_files: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        repo.run("format-patch", *FORMAT_PATCH_OPTIONS, "-o", tmp, f"{base_sha}..{head}")
        written = sorted(Path(tmp).iterdir())
        if len(written) != count:
            raise UserError(f"git format-patch wrote {len(written)} patches for {count} commits (empty commits "
                            "cannot be exported: drop them)", path=str(repo.root))
        _refuse_unacceptable(repo.root, f"{base_sha}..{head}", written)
        for path in written:
            data = path.read_bytes()
            old = old_by_key.get(equivalence_key(data))
            new_files[path.name] = data if old is None else refreshed(old, data) if refresh else old
    names = list(new_files)
    for name, data in new_files.items():
        (result.kept if old_files.get(name) == data else result.written).append(name)
    result.removed = [n for n in old_names if n not in new_files]
    new_series = _series_text(old_series, names)
    result.series_changed = new_series != old_series
    if dry_run or not result.changed:
        return result
    patches_dir.mkdir(parents=True, exist_ok=True)
    for name in result.written:
        write_atomic(patches_dir / name, new_files[name])
    write_atomic(series_path, new_series)
    for name in result.removed:
        (patches_dir / name).unlink(missing_ok=True)
    if pending is not None:  # the conflict ``apply --stop-at-conflict`` left, now resolved and exported
        pending.finish()
    return result


def _refuse_unacceptable(root: Path, commits_range: str, written: list[Path]) -> None:
    """Raise for the first exported patch (in ``written``, one per commit of ``commits_range`` in order) that the engine
    would refuse (:func:`~catch_tools.patches.parse.parse_patch`: UTF-8, LF line endings, a diff git applies...) or
    that ``lint`` rejects as an undeclared binary change; the error names the commit, and the file and line of the
    commit's change when the problem is in its diff.

    Raises:
        UserError: before anything is written (``git format-patch`` writes raw bytes: a file with CRLF lines or
            bytes that are not UTF-8 becomes a patch the engine refuses).
    """
    log = run_git(root, "log", "--reverse", "--format=%H %s", commits_range).out
    commits = [line.split(" ", 1) + [""] for line in log.decode("utf-8", "replace").splitlines()]
    for (sha, subject, *_), path in zip(commits, written, strict=True):
        what = f"commit {sha[:12]} ({subject!r}) cannot be exported"
        fix = "fix the commit (git commit --amend or git rebase -i) and export again; nothing was written"
        try:
            patch = parse_patch(path)
        except UserError as err:
            file, line = _locate(path.read_bytes(), err.line)
            if not file:
                part = "its message" if file is None else "its diff"
                raise UserError(f"{what}: {part}: {err.message}; {fix}", path=str(root)) from None
            raise UserError(f"{what}: {err.message}; {fix}", path=display_path(root / file), line=line) from None
        binary = undeclared_binary(patch)
        if binary:
            raise UserError(f"{what}: binary change without a 'Catch-Binary: yes' trailer in its message (lint "
                            "refuses it); add the trailer if the binary file is meant, else drop the file; then "
                            "export again; nothing was written", path=display_path(root / binary[0].path))


_HUNK_START = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _diff_name(side: bytes) -> str | None:
    """The path of a ``---``/``+++`` line's name (``a/x``, ``"b/caf\\303\\251"``), None for ``/dev/null``."""
    name = side.strip().strip(b'"')
    return None if name == b"/dev/null" else name.split(b"/", 1)[-1].decode("utf-8", "replace")


def _locate(data: bytes, patch_line: int | None) -> tuple[str | None, int | None]:
    """The file a 1-based line of the ``git format-patch`` output ``data`` belongs to (None: the commit message; "":
    a diff header before the file is named) and its line in that file: the new file's for a context or added line,
    None for a removed line or a header."""
    if patch_line is None:
        return None, None
    file: str | None = None
    old_name: str | None = None
    new = old_left = new_left = 0
    lines = data.split(b"\n")
    for text in lines[: patch_line - 1]:
        if old_left > 0 or new_left > 0:  # a hunk body: count its lines
            kind = text[:1]
            old_left -= kind in (b" ", b"-")
            new_left -= kind in (b" ", b"+")
            new += kind in (b" ", b"+")
            continue
        hunk = _HUNK_START.match(text)
        if hunk:
            new = int(hunk.group(3))
            old_left, new_left = int(hunk.group(2) or 1), int(hunk.group(4) or 1)
        elif text.startswith(b"diff --git "):
            file = ""  # in the diff, its file not named yet
        elif text.startswith(b"--- "):
            old_name = _diff_name(text[4:])
        elif text.startswith(b"+++ "):
            file = _diff_name(text[4:]) or old_name
    here = lines[patch_line - 1][:1] if patch_line - 1 < len(lines) else b""
    in_body = (old_left > 0 or new_left > 0) and here in (b" ", b"+")
    return file, (new if in_body else None)


def describe_export(result: ExportResult, patches_dir: Path, dry_run: bool) -> list[str]:
    """Human lines for an export result."""
    verb = "would update" if dry_run else "updated"
    lines = [f"{verb} {display_path(patches_dir / n)}" for n in result.written]
    lines += [f"{'would remove' if dry_run else 'removed'} {display_path(patches_dir / n)}" for n in result.removed]
    if result.series_changed and not result.written and not result.removed:
        lines.append(f"{verb} {display_path(patches_dir / SERIES_NAME)}")
    lines.append(f"{len(result.kept)} patch(es) unchanged" + ("" if result.changed else "; series is up to date"))
    return lines
