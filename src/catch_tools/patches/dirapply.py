# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``apply --target-dir``: the series onto a plain directory without git (an unpacked wheel).

Same engine and errors as the git mode (:mod:`catch_tools.patches.engine`). Path classes
(:mod:`catch_tools.patches.classify`) decide what a wheel overlay can take: ``python`` paths are patched,
``unshipped`` paths (tests, docs, CI) are skipped with a note, and a ``native`` path is an error naming the patch,
because a wheel holds the compiled result, not the source.

Atomic: everything is computed in memory first; then every new file is written next to its target, the originals are
renamed to backups, the new files renamed into place, and the backups removed. A failure while writing puts the
backups back. Crash-safe: a journal ``.catch-apply-journal.json`` in the target lists the files being replaced
(phase ``commit``) and is marked ``done`` once every new file is in place; a run killed in between leaves it, and the
next run rolls back (``commit``: originals restored) or forward (``done``: leftover backups removed) before anything
else.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.faults import fault
from catch_tools.patches.classify import classify_path
from catch_tools.patches.engine import DirReader, FileState, simulate
from catch_tools.patches.model import MODE_EXEC, MODE_LINK, Patch, PathClass
from catch_tools.patches.parse import display_path
from catch_tools.patches.safefs import Root, UnsafePath, check_relative
from catch_tools.patches.series import Series

_TMP = ".catch-new"
_BAK = ".catch-orig"
JOURNAL = ".catch-apply-journal.json"


def _write_journal(fs: Root, phase: str, entries: list[dict[str, str | bool]]) -> None:
    tmp = JOURNAL + ".tmp"
    fs.unlink(tmp, missing_ok=True)  # never write through whatever was planted there
    fs.write_new(tmp, json.dumps({"phase": phase, "entries": entries}).encode("utf-8"), 0o644)
    fs.replace(tmp, JOURNAL)


def _journal_entries(fs: Root, where: str) -> tuple[str, list[dict[str, str | bool]]] | None:
    try:
        raw = fs.read_bytes(JOURNAL)
    except FileNotFoundError:
        return None
    except UnsafePath:
        raise UserError("the journal of an interrupted apply is a symbolic link: remove it and restore the directory "
                        "from its source", path=where) from None
    try:
        data = json.loads(raw.decode("utf-8"))
        phase, entries = data["phase"], data["entries"]
        if phase not in ("commit", "done") or not isinstance(entries, list):
            raise ValueError(phase)
        for entry in entries:
            for key in ("dest", "tmp", "bak"):
                if not isinstance(entry[key], str):
                    raise ValueError(key)
            check_relative(entry["dest"])
            if entry["tmp"] != entry["dest"] + _TMP or entry["bak"] != entry["dest"] + _BAK:
                raise UnsafePath(entry["tmp"], "is not the journal's own temporary/backup name of " + entry["dest"])
    except UnsafePath as err:
        raise UserError(f"journal of an interrupted apply names {err.path!r}, outside or not made by an apply "
                        f"({err.reason}): remove it and restore the directory from its source", path=where) from None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise UserError("corrupt journal of an interrupted apply: restore the directory from its source",
                        path=where) from None
    return phase, entries


def recover_dir(target_dir: Path) -> str | None:
    """Finish an interrupted :func:`commit_dir_changes` (see module doc). Returns a note, or None if none pending.

    Raises:
        UserError: a corrupt journal, or one naming a path outside ``target_dir`` or through a symlink (nothing is
        then changed).
    """
    where = display_path(target_dir / JOURNAL)
    with Root(target_dir) as fs:
        found = _journal_entries(fs, where)
        if found is None:
            return None
        phase, entries = found
        try:
            for entry in entries:  # first every path is checked (nothing done yet), then acted on
                for key in ("dest", "tmp", "bak"):
                    fs.lstat(str(entry[key]))
            for entry in entries:
                dest, tmp, bak = (str(entry[k]) for k in ("dest", "tmp", "bak"))
                fs.unlink(tmp, missing_ok=True)
                if phase == "done":
                    fs.unlink(bak, missing_ok=True)
                elif fs.exists(bak):
                    fs.replace(bak, dest)
                elif entry.get("created"):
                    fs.unlink(dest, missing_ok=True)
        except UnsafePath as err:
            raise UserError(f"journal of an interrupted apply names {err}: remove it and restore the directory from "
                            "its source", path=where) from None
        fs.unlink(JOURNAL)
    return ("finished" if phase == "done" else "rolled back") + f" an interrupted apply in {target_dir}"


def _skip_unshipped(path: str) -> PathClass | None:
    return "unshipped" if classify_path(path) == "unshipped" else None


def plan_dir_apply(patches: list[Patch], target_dir: Path) -> tuple[dict[str, FileState | None], list[str]]:
    """Compute the final state of every path the series changes in ``target_dir``, writing nothing.

    Returns ``(changes, notes)``. Raises :class:`UserError` for a native path (naming the patch and line) or the
    first patch that does not apply.
    """
    for patch in patches:
        for change in patch.files:
            native = [p for p in change.paths if classify_path(p) == "native"]
            if native:
                raise UserError(f"patch {patch.name} changes native source {native[0]}: a wheel/directory overlay "
                                "cannot apply it; a source build is needed (scripts/build_wheel.py --from-source)",
                                path=display_path(patch.path), line=change.patch_line)
    with DirReader(target_dir) as reader:
        outcomes = simulate(patches, reader, skip_class=_skip_unshipped)
    notes: list[str] = []
    changes: dict[str, FileState | None] = {}
    for out in outcomes:
        if not out.ok:
            prob = out.problems[0]
            raise UserError(f"patch {out.patch.name} does not apply to {display_path(target_dir)}: {prob.message}; "
                            "nothing was changed", path=display_path(out.patch.path), line=prob.line)
        if out.skipped:
            notes.append(f"{out.patch.name}: skipped unshipped path(s) {', '.join(out.skipped)}")
        changes.update(out.changes)
    return changes, notes


def _write_new(fs: Root, rel: str, state: FileState) -> str:
    tmp = rel + _TMP
    mode, data = state
    fs.unlink(tmp, missing_ok=True)
    if mode == MODE_LINK:
        fs.symlink_new(tmp, data.decode("utf-8"))
    else:
        fs.write_new(tmp, data, 0o755 if mode == MODE_EXEC else 0o644)
    return tmp


def commit_dir_changes(target_dir: Path, changes: dict[str, FileState | None]) -> list[Path]:
    """Write ``changes`` into ``target_dir`` all-or-nothing (see module doc). Returns the changed paths.

    Every write goes through :class:`~catch_tools.patches.safefs.Root`: a symlink on the way (even one swapped in
    during the run) stops the write and rolls everything back.
    """
    staged: list[tuple[str, str | None]] = []
    backups: list[tuple[str, str]] = []
    with Root(target_dir) as fs:
        entries: list[dict[str, str | bool]] = [
            {"dest": rel, "tmp": rel + _TMP, "bak": rel + _BAK, "created": not fs.exists(rel)}
            for rel in sorted(changes)]
        try:
            _write_journal(fs, "commit", entries)
            for rel, state in sorted(changes.items()):
                staged.append((rel, None if state is None else _write_new(fs, rel, state)))
            for rel, _ in staged:
                if fs.exists(rel):
                    fs.replace(rel, rel + _BAK)
                    backups.append((rel, rel + _BAK))
            fault("patches.dir-commit")  # originals moved away, new files not yet in place
            for rel, tmp in staged:
                if tmp is not None:
                    fs.replace(tmp, rel)
            _write_journal(fs, "done", entries)
        except (OSError, UnsafePath) as err:
            for _rel, tmp in staged:
                if tmp is not None:
                    with contextlib.suppress(OSError, UnsafePath):
                        fs.unlink(tmp, missing_ok=True)
            for rel, bak in backups:
                with contextlib.suppress(OSError, UnsafePath):
                    fs.replace(bak, rel)
            with contextlib.suppress(OSError, UnsafePath):
                fs.unlink(JOURNAL, missing_ok=True)
            what = str(err) if isinstance(err, UnsafePath) else f"{err.filename}: {err.strerror}"
            raise UserError(f"cannot write {what}; nothing was changed", path=display_path(target_dir)) from None
        for _, bak in backups:
            fs.unlink(bak)
        fs.unlink(JOURNAL)
    return [target_dir / rel for rel, _ in staged]


def apply_series_to_dir(series: Series | Path, target_dir: Path, *, echo: Callable[[str], None] | None = None
                        ) -> list[Path]:
    """Apply the series (a :class:`~catch_tools.patches.series.Series`, or its ``patches/`` directory) to the plain
    directory ``target_dir``.

    Returns the changed files (absolute paths under ``target_dir``), sorted. ``echo`` receives notes about skipped
    unshipped paths. The combined-wheel builder calls this on the unpacked upstream wheel.

    Raises:
        UserError: a bad series or patch, a native path, a patch that does not apply, or a write error; the
        directory is then unchanged.
    """
    if not target_dir.is_dir():
        raise UserError("is a file, expected a directory (an unpacked wheel)" if target_dir.is_file() else
                        "target directory does not exist (unpack the wheel there: python -m zipfile -e WHL DIR)",
                        path=display_path(target_dir))
    recovered = recover_dir(target_dir)
    patches = Series.of(series).patches
    changes, notes = plan_dir_apply(patches, target_dir)
    if recovered:
        notes.insert(0, recovered)
    for note in notes:
        if echo is not None:
            echo(f"note: {note}")
    return commit_dir_changes(target_dir, changes)
