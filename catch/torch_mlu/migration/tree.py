# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Convert a file or a directory tree: walk it, convert each ``.py`` file, copy everything else, collect outcomes.

Per input file, one of: ``converted`` (written with changes), ``unchanged`` (Python without CUDA code, copied),
``copied`` (not Python, copied byte for byte), ``skipped-malformed`` (Python that does not parse, or bytes that do
not decode in its PEP 263 encoding, with the 1-based line of the first such byte: copied unchanged, not converted),
``skipped-unreadable`` (cannot be read: a permission error, a broken symlink, a directory named ``*.py``; nothing
written). Nothing is ever written into the input tree unless converting in place (``dst=None``), and then only
files with changes are rewritten, each atomically, after every file was converted, and never a file outside the
input through a symlink. Where ``dst`` may lie is the
caller's to check (:mod:`torch_mlu.migration.plan`).
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import io
import os
import shutil
import stat
import tempfile
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from torch_mlu.contrib.api_map import ApiMap, load_api_map
from torch_mlu.migration.plan import STAGING_PREFIX, file_kind, inplace_targets, input_files
from torch_mlu.migration.transform import FileResult, convert_source


@dataclass
class FileOutcome:
    """What happened to one input file (``rel`` is relative to the input root, POSIX separators)."""

    rel: str
    status: str
    message: str = ""
    line: int | None = None
    result: FileResult | None = None


@dataclass
class TreeResult:
    """All outcomes of one run, in walk order (sorted paths)."""

    files: list[FileOutcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)


def _undecodable(data: bytes) -> tuple[str, int | None] | None:
    """Why ``data`` does not decode in its PEP 263 encoding (a coding cookie in its first two lines, else UTF-8; a
    UTF-8 byte order mark), with the 1-based line of the first byte that does not decode; None when it decodes."""
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError as err:
        if err.msg != "invalid or missing encoding declaration":
            return f"cannot decode: {err.msg}", None  # an unknown encoding, or a cookie that contradicts the BOM
        encoding = "utf-8"  # no cookie and the first lines are not UTF-8: the decode below finds the byte
    try:
        data.decode(encoding)
    except UnicodeDecodeError as err:
        name = codecs.lookup(encoding).name.removesuffix("-sig")
        line = err.object.count(b"\n", 0, err.start) + 1  # err.object: what was decoded (without a BOM)
        return f"cannot decode as {name}: byte 0x{err.object[err.start]:02x} ({err.reason})", line
    return None


def _syntax_error(data: bytes, rel: str, err: cst.ParserSyntaxError) -> tuple[str, int | None]:
    """Message and line of a parse failure, from CPython's own parser (its positions are exact); libcst's when
    CPython accepts the file (syntax newer than libcst knows)."""
    try:
        compile(data, rel, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as py_err:
        return f"not valid Python: {py_err.msg}", py_err.lineno
    except ValueError as py_err:  # NUL bytes
        return f"not valid Python: {py_err}", None
    return f"libcst cannot parse it: {err.message}", err.raw_line


def convert_file(src: Path, rel: str, table: ApiMap) -> tuple[FileOutcome, bytes | None]:
    """Convert one file: ``(outcome, bytes to write or None when nothing can be written)``."""
    is_python = src.suffix == ".py"
    try:
        # non-blocking, and checked before reading: a FIFO (or a device) that appeared since the run was planned
        # is skipped, never waited on
        fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                return FileOutcome(rel, "skipped-unreadable", f"cannot read: {file_kind(mode)}"), None
            with open(fd, "rb", closefd=False) as f:
                data = f.read()
        finally:
            os.close(fd)
    except OSError as err:
        kind = (err.strerror or type(err).__name__).lower()
        if src.is_symlink() and not src.exists():
            kind = "a broken symlink"
        return FileOutcome(rel, "skipped-unreadable", f"cannot read: {kind}"), None
    if not is_python:
        return FileOutcome(rel, "copied", "not Python"), data
    problem = _undecodable(data)
    if problem is not None:
        return FileOutcome(rel, "skipped-malformed", problem[0], line=problem[1]), data
    if b"cuda" not in data and b"nccl" not in data:
        # nothing any rule could rewrite: only check that it is valid Python (CPython's parser, ~20x faster)
        try:
            compile(data, rel, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as err:
            return FileOutcome(rel, "skipped-malformed", f"not valid Python: {err.msg}", line=err.lineno), data
        except ValueError as err:
            return FileOutcome(rel, "skipped-malformed", f"not valid Python: {err}"), data
        return FileOutcome(rel, "unchanged", result=FileResult(code="")), data
    try:
        result = convert_source(data, table)
    except cst.ParserSyntaxError as err:
        message, line = _syntax_error(data, rel, err)
        return FileOutcome(rel, "skipped-malformed", message, line=line), data
    except (UnicodeDecodeError, LookupError, SyntaxError) as err:
        return FileOutcome(rel, "skipped-malformed", f"cannot decode: {err}"), data
    if not result.changed:
        return FileOutcome(rel, "unchanged", result=result), data
    encoded = result.code.encode(result.encoding)
    if data.startswith(b"\xef\xbb\xbf") and not encoded.startswith(b"\xef\xbb\xbf"):
        encoded = b"\xef\xbb\xbf" + encoded  # keep a UTF-8 byte order mark
    return FileOutcome(rel, "converted", f"{len(result.changes)} changes", result=result), encoded


def _replace(real: Path, data: bytes) -> None:
    """Write ``data`` as ``real`` (symlinks already resolved: :func:`~torch_mlu.migration.plan.inplace_targets`)
    atomically: a temporary file beside it (``.torch_gpu2mlu-<random>``, with its mode) renamed over it, so that a
    symlink put there since is replaced, not followed."""
    fd, tmp = tempfile.mkstemp(prefix=STAGING_PREFIX, dir=real.parent)
    try:
        with open(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, stat.S_IMODE(real.stat().st_mode))
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def convert_tree(src: Path, dst: Path | None, table: ApiMap | None = None, *, skip: Iterable[Path] = ()) -> TreeResult:
    """Convert ``src`` (a ``.py`` file or a directory) into ``dst`` (a directory; created). ``dst=None`` converts
    in place: only files with changes are rewritten, after every file was converted. ``skip``: directories left out
    of the walk by identity (the run's staging directories, :func:`~torch_mlu.migration.plan.walk`).

    Returns every file's outcome; bad input files are outcomes, not errors.

    Raises:
        MigrationError: ``src`` holds a FIFO, a socket or a device (:func:`~torch_mlu.migration.plan.input_files`);
            in place, a file to rewrite is a symlink out of ``src`` (:func:`~torch_mlu.migration.plan.inplace_targets`:
            nothing is rewritten then).
        OSError: ``dst`` (or, in place, an input file) cannot be written.
    """
    table = table or load_api_map()
    out = TreeResult()
    pending: list[tuple[Path, bytes]] = []
    for path, rel in input_files(src, skip):
        outcome, data = convert_file(path, rel, table)
        out.files.append(outcome)
        if data is None:
            continue
        if dst is None:
            if outcome.status == "converted":
                pending.append((path, data))
            continue
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if outcome.status == "copied" and not path.is_symlink():
            shutil.copymode(path, target)
    for real, (_path, data) in zip(inplace_targets(src, [path for path, _ in pending]), pending, strict=True):
        _replace(real, data)
    return out
