# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Overlay build of the combined wheel: upstream torch wheel + series (Python files) + the Catch backend wheel.

Output ``torch-<pin.combined_version>-<upstream tags>.whl``; see :func:`build_overlay` for the steps. Unchanged
members are raw copies (:mod:`catch_tools.wheel.zipraw`), so the build costs about a file copy.

Reproducibility: the output depends only on the input files, the series and ``source_date_epoch``. Raw-copied members
keep their input timestamps and modes; members this build writes (patched files, metadata, RECORD) get
``source_date_epoch`` (``$SOURCE_DATE_EPOCH``, else the newest timestamp in the upstream wheel) and mode 0644 (or the
mode of the file they replace); new members come in sorted order; deflate level 6.
"""

from __future__ import annotations

import calendar
import contextlib
import os
import re
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.errors import UserError
from catch_tools.patches import Series, apply_series_to_dir, check_series, lint_series
from catch_tools.paths import cache_dir
from catch_tools.pin import Pin
from catch_tools.progress import Reporter
from catch_tools.userfiles import output_dir
from catch_tools.wheel.inputs import BACKEND_PACKAGE, WheelInfo, backend_payload, check_upstream, open_wheel
from catch_tools.wheel.metadata import (
    add_extras,
    add_top_level,
    backend_extras,
    combined_filename,
    member_text,
    merge_entry_points,
    set_metadata_version,
    set_version_py,
)
from catch_tools.wheel.record import RecordRow, format_record, is_unhashed, record_digest, verify_members, verify_rows
from catch_tools.wheel.zipraw import DateTime, RawZipReader, RawZipWriter, dos_datetime, open_writer

VERSION_PY = "torch/version.py"
#: Prefix of the build's work directory in the output directory: ``.catch-build-<pid>-<random>/`` holds the wheel
#: being written (``<wheel>.partial``) until it is renamed into place.
WORK_PREFIX = ".catch-build-"
#: The pid, then :func:`tempfile.mkdtemp`'s 8 random characters (``[a-z0-9_]``).
_WORK_DIR = re.compile(rf"^{re.escape(WORK_PREFIX)}(\d+)-[a-z0-9_]{{8}}$")


@dataclass
class BuildResult:
    """What :func:`build_overlay` wrote: the wheel, the members it rewrote/added/removed, and stage times (s)."""

    wheel: Path
    patched: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def source_date_epoch(upstream: RawZipReader) -> int:
    """``$SOURCE_DATE_EPOCH`` (reproducible-builds.org) if set, else the upstream wheel's newest member time (UTC)."""
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env:
        try:
            return int(env)
        except ValueError:
            raise UserError(f"SOURCE_DATE_EPOCH must be an integer, got {env!r}") from None
    newest = max(m.date_time for m in upstream.members)
    return calendar.timegm((*newest, 0, 0, 0))


def _series_changes(upstream: WheelInfo, patches_dir: Path) -> dict[str, bytes | None]:
    """Apply the series to the wheel files it touches; ``{path: new bytes, or None if deleted}`` for changed paths.

    The series is read once and each patch parsed once (:class:`~catch_tools.patches.series.Series`): only the
    members it touches are extracted, it must pass ``lint`` and ``check`` against them, then it is applied to them.

    Raises:
        UserError: a bad series, a series that fails ``lint`` or ``check`` (naming the first problem), or one that
            changes the wheel's metadata or the backend.
    """
    series = Series.read(patches_dir)
    if series.empty:
        return {}
    touched = series.touched_paths()
    reader = upstream.reader
    with tempfile.TemporaryDirectory(prefix="catch-overlay-") as tmp:
        root = Path(tmp)
        before: dict[str, bytes] = {}
        for path in touched:
            member = reader.get(path)
            if member is not None:
                before[path] = reader.read(member)
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(before[path])
        _refuse_failing(series, root)
        apply_series_to_dir(series, root)
        changes: dict[str, bytes | None] = {}
        for path in touched:
            target = root / path
            now = target.read_bytes() if target.is_file() else None
            if now != before.get(path):
                changes[path] = now
    for path in changes:
        if path.startswith(f"{upstream.dist_info}/") or path.split("/", 1)[0] == BACKEND_PACKAGE:
            raise UserError(f"the series changes {path}, which belongs to the wheel metadata or the backend",
                            path=patches_dir / "series")
    return changes


def _refuse_failing(series: Series, tree: Path) -> None:
    """Refuse a series that fails ``lint`` or its ``check`` against the directory ``tree``.

    Raises:
        UserError: naming the first problem (file and line) and how many there are.
    """
    problems = lint_series(series)
    if problems:
        first = problems[0]
        raise UserError(f"series fails lint: {first.message} ({len(problems)} problem(s); run "
                        "scripts/apply_patches.py lint)", path=first.file, line=first.line)
    report = check_series(series, target_dir=tree)
    if report.failed:
        failed = report.failed[0]
        file, line, message = failed.problems[0] if failed.problems else (failed.file, None, "does not apply")
        raise UserError(f"series fails check: {failed.name}: {message} ({len(report.failed)} failing patch(es); "
                        "run scripts/apply_patches.py check)", path=file or failed.file, line=line)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_partials(out_dir: Path) -> list[Path]:
    """Delete the work directories of builds that died (``kill -9``: no cleanup ran); return them.

    Only directories named like the ones :func:`build_overlay` makes (``.catch-build-<pid>-<random>``, from
    :func:`tempfile.mkdtemp`) whose pid is no longer alive are touched, and in them only ``*.whl.partial`` files; a
    directory still holding anything else after that is kept. Nothing else in ``out_dir`` is ever deleted.
    """
    removed = []
    for path in out_dir.glob(f"{WORK_PREFIX}*"):
        match = _WORK_DIR.match(path.name)
        if match is None or path.is_symlink() or not path.is_dir() or _alive(int(match.group(1))):
            continue
        for partial in path.glob("*.whl.partial"):
            if partial.is_file() and not partial.is_symlink():
                partial.unlink(missing_ok=True)
        try:
            path.rmdir()
        except OSError:  # not ours after all, or not empty: keep it
            continue
        removed.append(path)
    return removed


def _mode(upstream: WheelInfo, path: str) -> int:
    member = upstream.reader.get(path)
    return (member.external_attr >> 16) & 0o777 if member is not None else 0o644


class _Output:
    """Writer plus the RECORD rows of what it wrote."""

    def __init__(self, writer: RawZipWriter, stamp: DateTime):
        self.writer = writer
        self.stamp = stamp
        self.rows: list[RecordRow] = []
        self.written: list[str] = []

    def copy(self, src: WheelInfo, path: str, name: str | None = None) -> None:
        member = src.reader.get(path)
        assert member is not None
        self.writer.copy_raw(src.reader, member, name)
        row = src.rows[path]
        self.rows.append(RecordRow(name or path, row.digest, row.size))

    def add(self, name: str, data: bytes, mode: int = 0o644, *, source: str | Path) -> None:
        self.writer.add(name, data, self.stamp, mode, source=source)
        self.rows.append(RecordRow(name, record_digest(data), len(data)))
        self.written.append(name)


def build_overlay(
    *,
    upstream_wheel: Path,
    backend_wheel: Path,
    patches_dir: Path,
    pin: Pin,
    out_dir: Path,
    expected_commit: str | None = "pin",
    verify_cache: bool = True,
    apply_series: bool = True,
    progress: Reporter | None = None,
) -> BuildResult:
    """Build the combined wheel into ``out_dir`` and return what was done.

    Steps: open both input wheels and check RECORD lists their members; refuse an upstream wheel that is not the
    pin (``expected_commit="pin"`` uses ``pin.commit``; None skips the commit, used after a source build); hash every
    upstream member against RECORD in a thread while the output is written (cached by file hash, see
    :func:`catch_tools.wheel.record.verify_wheel`); refuse a series failing the engine's lint/check; apply the
    series to the touched files; write members in upstream order (raw copies except patched files and
    ``torch/version.py``), then files the series adds, then ``torch_mlu/`` (raw copies), then the renamed
    ``.dist-info`` (METADATA version, merged ``entry_points.txt``, ``top_level.txt``, RECORD last). The wheel is
    written under a temporary name in ``out_dir`` and renamed only when everything, the input verification
    included, succeeded: on any error nothing is left in ``out_dir``. That temporary name is ``<wheel>.partial`` in a
    work directory of this build (``.catch-build-<pid>-<random>/``, see :func:`remove_stale_partials`).
    ``progress``: the caller's display (:mod:`catch_tools.progress`), told what is being verified and written.

    Raises:
        UserError: any bad input (see :mod:`catch_tools.wheel.inputs`, :mod:`catch_tools.wheel.record`), a native
            patch (from the engine), an output that would need ZIP64, an output directory that is a file or cannot be
            written into, a cache directory (``verify_cache``) that is not a directory.
    """
    shown = progress or Reporter()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    version = pin.combined_version
    if verify_cache:
        cache_dir()  # a cache that cannot be used is refused before the output directory is made
    output_dir(out_dir, "--out")
    remove_stale_partials(out_dir)
    final = out_dir / combined_filename(upstream_wheel.name, version)
    try:
        work = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-", dir=out_dir))
    except OSError as err:
        raise UserError(f"cannot write into the output directory (--out DIR): {err.strerror or err}",
                        path=out_dir) from None
    partial = work / f"{final.name}.partial"
    # exit order: the pool (waits for the verification thread) closes before the readers it uses
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(_remove_work_dir, work, partial)
        up_reader = cleanup.enter_context(RawZipReader(upstream_wheel))
        be_reader = cleanup.enter_context(RawZipReader(backend_wheel))
        pool = cleanup.enter_context(ThreadPoolExecutor(max_workers=1))
        upstream = open_wheel(up_reader, verify_cache=verify_cache, hash_members=False)
        check_upstream(upstream, pin.wheel_version, pin.commit if expected_commit == "pin" else expected_commit)
        shown.line(f"verifying {upstream_wheel.name} while writing {final.name}")
        # hashing the input runs alongside the rest; the output is only renamed into place once it succeeded
        verification = pool.submit(verify_rows, up_reader, upstream.rows, f"{upstream.dist_info}/RECORD",
                                   use_cache=verify_cache)
        try:
            result = _assemble(upstream, be_reader, patches_dir, pin, partial, final, apply_series, timings)
            t_wait = time.perf_counter()
            verification.result()
            timings["verify_wait"] = time.perf_counter() - t_wait
            partial.replace(final)
        except BaseException as err:  # the work directory and the partial wheel go with the exit stack
            failed = verification.exception()
            if isinstance(failed, UserError) and failed is not err:
                raise failed from None
            raise
    timings["total"] = time.perf_counter() - t0
    return result


def _remove_work_dir(work: Path, partial: Path) -> None:
    """Remove what :func:`build_overlay` made in its work directory, then the directory (empty by then)."""
    partial.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        work.rmdir()


def _assemble(upstream: WheelInfo, be_reader: RawZipReader, patches_dir: Path, pin: Pin, partial: Path, final: Path,
              apply_series: bool, timings: dict[str, float]) -> BuildResult:
    """Everything after the upstream checks: backend checks, series, and writing ``partial`` (not renamed)."""
    up_reader = upstream.reader
    version = pin.combined_version
    t1 = time.perf_counter()
    backend = open_wheel(be_reader, verify_cache=False)
    payload = backend_payload(backend, upstream, version)
    changes = _series_changes(upstream, patches_dir) if apply_series else {}
    clash = [m.name for m in payload if up_reader.get(m.name) is not None or m.name in changes]
    if clash:
        raise UserError(f"backend file {clash[0]} already exists in torch", path=be_reader.path)
    version_py = member_text(up_reader, VERSION_PY)  # UTF-8 (checked), so the series' version of it is too
    patched_py = changes.get(VERSION_PY)
    if patched_py is not None:
        version_py = patched_py.decode("utf-8")
    changes[VERSION_PY] = set_version_py(version_py, version, str(pin.series_version),
                                         f"{up_reader.path}!{VERSION_PY}").encode("utf-8")
    timings["inputs_and_series"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    new_di = f"torch-{version}.dist-info"
    stamp = dos_datetime(source_date_epoch(up_reader))
    result = BuildResult(final, timings=timings)
    with open_writer(partial, name=final) as writer:
        out = _Output(writer, stamp)
        di_prefix = f"{upstream.dist_info}/"
        for member in up_reader.members:
            name = member.name
            if name.startswith(di_prefix) or name.endswith("/"):
                continue
            if name in changes:
                data = changes[name]
                if data is None:
                    result.removed.append(name)
                else:
                    out.add(name, data, _mode(upstream, name),
                            source=up_reader.path if name == VERSION_PY else patches_dir)
                    result.patched.append(name)
            else:
                out.copy(upstream, name)
        for name in sorted(n for n, d in changes.items() if d is not None and up_reader.get(n) is None):
            data = changes[name]
            assert data is not None
            out.add(name, data, source=patches_dir)
            result.added.append(name)
        for member in payload:
            out.copy(backend, member.name)
            result.added.append(member.name)
        _write_dist_info(out, upstream, backend, new_di, version)
        record_name = f"{new_di}/RECORD"
        out.rows.append(RecordRow(record_name, "", None))
        out.writer.add(record_name, format_record(out.rows), stamp, 0o644, source="the build's RECORD")
    _self_check(partial, out)
    timings["write"] = time.perf_counter() - t2
    return result


def _write_dist_info(out: _Output, upstream: WheelInfo, backend: WheelInfo, new_di: str, version: str) -> None:
    """Renamed upstream ``.dist-info`` with METADATA, entry points and top_level edited; RECORD is left out."""
    prefix = f"{upstream.dist_info}/"
    where = f"{upstream.reader.path}!{upstream.dist_info}"
    backend_eps = backend.text("entry_points.txt")
    eps_at = f"{upstream.reader.path}!{upstream.dist_info}/entry_points.txt"
    backend_eps_at = f"{backend.reader.path}!{backend.dist_info}/entry_points.txt"
    have_eps = False
    for member in upstream.reader.members:
        if not member.name.startswith(prefix) or member.name.endswith("/"):
            continue
        rel = member.name[len(prefix):]
        name = f"{new_di}/{rel}"
        if rel == "RECORD":
            continue
        if rel == "METADATA":
            meta = set_metadata_version(upstream.text(rel), version, where)
            meta = add_extras(meta, backend_extras(backend.text("METADATA")), where)
            out.add(name, meta.encode("utf-8"), source=upstream.reader.path)
        elif rel == "entry_points.txt":
            have_eps = True
            merged = merge_entry_points(upstream.text(rel), backend_eps, eps_at, backend_eps_at)
            out.add(name, merged.encode("utf-8"), source=upstream.reader.path)
        elif rel == "top_level.txt":
            out.add(name, add_top_level(upstream.text(rel), BACKEND_PACKAGE).encode("utf-8"),
                    source=upstream.reader.path)
        else:
            out.copy(upstream, member.name, name)
    if not have_eps:
        merged = merge_entry_points("", backend_eps, eps_at, backend_eps_at)
        out.add(f"{new_di}/entry_points.txt", merged.encode("utf-8"), source=backend.reader.path)


def _self_check(path: Path, out: _Output) -> None:
    """Re-open the written archive (central directory parses) and verify the members this build compressed."""
    with RawZipReader(path) as reader:
        rows = {row.path: row for row in out.rows}
        mine = [m for m in reader.members if m.name in out.written and not is_unhashed(m.name)]
        verify_members(reader, rows, mine, "RECORD (just written)")
