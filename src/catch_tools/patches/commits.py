# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Turn a simulated series into git commits, reproducibly.

Each patch becomes one commit whose author is the patch's (``From``/``Date``; DEP-3 ``Author``; the fixed identity
and date of :mod:`catch_tools.patches.gittree` when absent) and whose committer is the fixed identity with the author
date -- what ``git am --committer-date-is-author-date`` with ``GIT_COMMITTER_NAME/EMAIL`` set produces, so both paths
give the same commit ids. The message is ``subject + "\\n\\n" + body`` cleaned like git's ``stripspace`` (as
``git am`` does).

All commits are written by one ``git fast-import`` process (git-fast-import(1)); no ref but a temporary one is touched.
"""

from __future__ import annotations

import datetime as dt
import email.header
import email.utils
import tempfile
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.git import Repo
from catch_tools.patches.engine import PatchOutcome
from catch_tools.patches.gittree import COMMITTER, FIXED_DATE, REF_IMPORT
from catch_tools.patches.model import Patch, PatchMeta
from catch_tools.patches.parse import diff_start


def stripspace(text: str) -> str:
    """git's ``strbuf_stripspace``: strip trailing spaces, collapse blank-line runs, drop leading/trailing blank lines,
    end with one newline (empty stays empty)."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n" if out else ""


def commit_message(meta: PatchMeta) -> str:
    return stripspace(f"{meta.subject}\n\n{meta.body}")


def identity(meta: PatchMeta) -> tuple[str, str, tuple[int, str]]:
    """(author name, author email, (epoch seconds, "+hhmm")) of a patch, with the fixed fallbacks."""
    return (meta.author_name or COMMITTER.name, meta.author_email or COMMITTER.email, meta.date or FIXED_DATE)


def render_mbox(patch: Patch) -> bytes:
    """A canonical ``git format-patch``-style mail of ``patch`` for ``git am`` (From/Date/Subject always present)."""
    name, mail, (secs, tz) = identity(patch.meta)
    sign = -1 if tz.startswith("-") else 1
    offset = sign * (int(tz[1:3]) * 3600 + int(tz[3:5]) * 60)
    date = email.utils.format_datetime(dt.datetime.fromtimestamp(secs, dt.timezone(dt.timedelta(seconds=offset))))
    subject = patch.meta.subject
    if not subject.isascii():
        subject = email.header.Header(subject, "utf-8", maxlinelen=100000).encode()
    sender = email.utils.formataddr((name, mail), charset="utf-8")
    text = patch.raw.decode("utf-8")
    lines = text.split("\n")
    start = diff_start(lines) or 0
    diff = "\n".join(lines[start:])
    head = (f"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: {sender}\n"
            f"Date: {date}\nSubject: {subject}\nMIME-Version: 1.0\n"
            "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n\n")
    body = patch.meta.body + "\n" if patch.meta.body else ""
    if not diff.endswith("\n"):
        diff += "\n"
    return (head + body + "---\n" + diff).encode("utf-8")


def _data(blob: bytes) -> bytes:
    return b"data %d\n" % len(blob) + blob + b"\n"


def fast_import(repo: Repo, base: str, outcomes: list[PatchOutcome]) -> list[str]:
    """Write one commit per (successful) outcome on top of ``base`` with ``git fast-import``.

    Returns the commit ids in order. Only objects and the temporary ref ``refs/patches/import-tmp`` (deleted again)
    are written; HEAD, index and work tree are untouched.
    """
    if not outcomes:
        return []
    parts: list[bytes] = []
    for i, out in enumerate(outcomes, 1):
        name, mail, (secs, tz) = identity(out.patch.meta)
        msg = commit_message(out.patch.meta).encode("utf-8")
        parts.append(f"commit {REF_IMPORT}\nmark :{i}\n".encode())
        parts.append(f"author {name} <{mail}> {secs} {tz}\n".encode())
        parts.append(f"committer {COMMITTER.name} <{COMMITTER.email}> {secs} {tz}\n".encode())
        parts.append(_data(msg))
        if i == 1:
            parts.append(f"from {base}\n".encode())
        for path, state in out.changes.items():
            if state is None:
                parts.append(f"D {path}\n".encode())
            else:
                parts.append(f"M {state[0]} inline {path}\n".encode())
                parts.append(_data(state[1]))
        parts.append(b"\n")
    parts.append(b"done\n")
    with tempfile.TemporaryDirectory(dir=repo.git_dir) as tmp:
        marks = Path(tmp) / "marks"
        proc = repo.run("fast-import", "--quiet", "--force", "--done", "--date-format=raw",
                        f"--export-marks={marks}", input=b"".join(parts), check=False)
        repo.run("update-ref", "-d", REF_IMPORT, check=False)
        if not proc.ok:
            err = proc.err.decode("utf-8", "replace").strip().splitlines()
            raise UserError(f"git fast-import failed: {err[0] if err else proc.status}", path=str(repo.root))
        table = dict(line.split() for line in marks.read_text().splitlines())
    return [table[f":{i}"] for i in range(1, len(outcomes) + 1)]
