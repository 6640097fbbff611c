# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx extension of the Catch docs (event ``source-read``, so it works on the Markdown before MyST parses it).

- The version matrix: a page holding the line ``<!-- catch-version-matrix -->`` gets that line replaced by the table
  that :mod:`catch_tools.docs_matrix` generates from ``patches/manifest.toml``, so the published matrix is rebuilt
  from the pin on every build and cannot go stale. A broken manifest fails the build with the tool's one-line error.
- Links to repository files outside ``docs/``: ``docs/patches.md`` is generated for reading on the forge and links
  ``../patches/NATIVE.md``; MyST would take a ``.md`` target for a page of these docs and warn. Such links are
  rewritten to MyST's ``path:`` form, which publishes the file as a download (as it already does for the ``.patch``
  links). Only targets that exist outside ``docs/`` are touched.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from catch_tools.docs_matrix import markdown_table, matrix_rows
from catch_tools.errors import UserError

PLACEHOLDER = "<!-- catch-version-matrix -->"
_OUTSIDE_MD_LINK = re.compile(r"\]\((\.\./[^)#\s]+\.md)\)")


def insert_matrix(text: str) -> str:
    """``text`` with :data:`PLACEHOLDER` replaced by the generated table (unchanged without the placeholder)."""
    if PLACEHOLDER not in text:
        return text
    try:
        table = markdown_table(matrix_rows())
    except UserError as err:
        raise ExtensionError(f"version matrix: {err}") from None
    return text.replace(PLACEHOLDER, table)


def publish_outside_links(text: str, docdir: Path) -> str:
    """Rewrite ``[x](../dir/FILE.md)`` to ``[x](path:../dir/FILE.md)`` when that file exists outside ``docs/``."""

    def fix(match: re.Match[str]) -> str:
        target = match.group(1)
        return f"](path:{target})" if (docdir / target).is_file() else match.group(0)

    return _OUTSIDE_MD_LINK.sub(fix, text)


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    """``source-read`` handler applying both rewrites to ``source[0]``."""
    docdir = Path(app.env.doc2path(docname)).parent
    source[0] = publish_outside_links(insert_matrix(source[0]), docdir)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the handler (Sphinx extension entry point)."""
    app.connect("source-read", on_source_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
