# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""A static PEP 503 "simple" package index: the tree a release publishes its wheels into.

Layout (any HTTP server serves it as it is, the way PyTorch's own wheel index is served)::

    ROOT/simple/index.html               one link per project
    ROOT/simple/<project>/index.html     one link per file: ../../files/<file>#sha256=<hex>, with
                                         data-requires-python (PEP 503) and data-core-metadata (PEP 714/658)
    ROOT/files/<file>                    the wheel
    ROOT/files/<file>.metadata           its METADATA (PEP 658: pip resolves without downloading the wheel)

The ``#sha256=`` fragment is computed when the file is published: pip checks every download against it, so a file
whose bytes changed after publishing (a tampered mirror, a corrupted upload) is refused ("THESE PACKAGES DO NOT
MATCH THE HASHES"). Publishing is append-only, like PyPI: a file name already published with other bytes is an error.
"""

from __future__ import annotations

import hashlib
import html
import os
import shutil
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from urllib.parse import quote

from packaging.utils import canonicalize_name, parse_wheel_filename

from catch_tools.errors import UserError

_PAGE = """<!DOCTYPE html>
<html>
  <head>
    <meta name="pypi:repository-version" content="1.0">
    <title>{title}</title>
  </head>
  <body>
    <h1>{title}</h1>
{links}
  </body>
</html>
"""


@dataclass(frozen=True)
class IndexFile:
    """One published file: its name, sha256 (hex), Requires-Python (or None) and its METADATA's sha256 (hex)."""

    filename: str
    sha256: str
    requires_python: str | None
    metadata_sha256: str | None


def sha256_file(path: Path) -> str:
    """Hex sha256 of ``path``'s bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def wheel_metadata(wheel: Path) -> bytes:
    """The ``*.dist-info/METADATA`` bytes of ``wheel``.

    Raises:
        UserError: not a wheel file name, not a zip, or no METADATA in the wheel's own ``.dist-info``.
    """
    try:
        name, version, _build, _tags = parse_wheel_filename(wheel.name)
    except ValueError as err:
        raise UserError(f"not a wheel file name: {err}", path=wheel) from None
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            ours = [n for n in members if canonicalize_name(n.split("-")[0]) == name]
            if len(ours) != 1:
                raise UserError(f"expected one {name}-*.dist-info/METADATA in the wheel, found {len(ours)}",
                                path=wheel)
            return zf.read(ours[0])
    except (zipfile.BadZipFile, OSError) as err:
        raise UserError(f"cannot read the wheel: {err}", path=wheel) from None


def requires_python(metadata: bytes) -> str | None:
    """The ``Requires-Python`` field of a METADATA file (None when absent)."""
    value = HeaderParser().parsestr(metadata.decode("utf-8", "replace")).get("Requires-Python")
    return value.strip() if value else None


def _write(path: Path, data: bytes) -> None:
    """Write atomically: a reader (the HTTP server) never sees half a page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _files_of(root: Path) -> dict[str, list[IndexFile]]:
    projects: dict[str, list[IndexFile]] = {}
    for wheel in sorted((root / "files").glob("*.whl")):
        name = parse_wheel_filename(wheel.name)[0]
        meta = wheel.with_name(wheel.name + ".metadata")
        meta_bytes = meta.read_bytes() if meta.is_file() else wheel_metadata(wheel)
        sums = root / "files" / f".{wheel.name}.sha256"  # the hash recorded at publishing time, never recomputed
        digest = sums.read_text().strip() if sums.is_file() else sha256_file(wheel)
        projects.setdefault(str(name), []).append(IndexFile(
            wheel.name, digest, requires_python(meta_bytes),
            hashlib.sha256(meta_bytes).hexdigest() if meta.is_file() else None))
    return projects


def write_pages(root: Path, *, hashes: bool = True) -> list[Path]:
    """(Re)write ``ROOT/simple/`` from ``ROOT/files/``; returns the pages written.

    Args:
        root: the index root.
        hashes: False leaves out the ``#sha256=`` fragments (only to show what they protect: tests).
    """
    pages: list[Path] = []
    projects = _files_of(root)
    for project, files in projects.items():
        links = []
        for f in files:
            href = f"../../files/{quote(f.filename)}" + (f"#sha256={f.sha256}" if hashes else "")
            attrs = f'href="{html.escape(href)}"'
            if f.requires_python:
                attrs += f' data-requires-python="{html.escape(f.requires_python)}"'
            if f.metadata_sha256 and hashes:
                attrs += f' data-core-metadata="sha256={f.metadata_sha256}"'
                attrs += f' data-dist-info-metadata="sha256={f.metadata_sha256}"'
            links.append(f"    <a {attrs}>{html.escape(f.filename)}</a><br>")
        page = root / "simple" / project / "index.html"
        _write(page, _PAGE.format(title=f"Links for {project}", links="\n".join(links)).encode())
        pages.append(page)
    top = [f'    <a href="{quote(p)}/">{html.escape(p)}</a><br>' for p in sorted(projects)]
    _write(root / "simple" / "index.html", _PAGE.format(title="Simple index", links="\n".join(top)).encode())
    return [root / "simple" / "index.html", *pages]


def publish(wheel: Path, root: Path) -> IndexFile:
    """Add ``wheel`` to the static index at ``root`` and rewrite its pages.

    Returns the published file's entry (sha256 of the bytes published). Publishing the same bytes again changes
    nothing.

    Raises:
        UserError: ``wheel`` is missing or not a wheel, or a file of that name is already published with other bytes.
    """
    if not wheel.is_file():
        raise UserError("no such wheel", path=wheel)
    metadata = wheel_metadata(wheel)
    digest = sha256_file(wheel)
    dest = root / "files" / wheel.name
    sums = dest.with_name(f".{wheel.name}.sha256")
    if dest.exists():
        published = sums.read_text().strip() if sums.is_file() else sha256_file(dest)
        if published != digest:
            raise UserError(f"{wheel.name} is already published with other bytes (sha256 {published}); "
                            "a published file never changes: release a new version", path=wheel)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{wheel.name}.tmp")
        try:
            os.link(wheel, tmp)  # same file system: no copy of a 200 MB wheel
        except OSError:
            shutil.copyfile(wheel, tmp)
        os.replace(tmp, dest)
    _write(dest.with_name(wheel.name + ".metadata"), metadata)
    _write(sums, (digest + "\n").encode())
    write_pages(root)
    return IndexFile(wheel.name, digest, requires_python(metadata), hashlib.sha256(metadata).hexdigest())


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``publish_index.py WHEEL... --index-dir DIR``; prints one line per published wheel."""
    import argparse

    parser = argparse.ArgumentParser(prog="publish_index.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wheels", nargs="+", type=Path, help="wheel files to publish")
    parser.add_argument("--index-dir", type=Path, required=True, help="root of the static index (created if missing)")
    args = parser.parse_args(argv)
    for wheel in args.wheels:
        entry = publish(wheel, args.index_dir)
        project = parse_wheel_filename(wheel.name)[0]
        print(f"published {entry.filename} sha256 {entry.sha256} requires-python {entry.requires_python or '-'} "
              f"-> {args.index_dir}/simple/{project}/")
    return 0
