# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``catch versions``: print the version matrix of the docs (Catch <-> PyTorch <-> Python <-> wheel tag) as Markdown,
one row per pin (:mod:`catch_tools.docs_matrix`). Exit status 0, or 2 on bad input (one line)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from catch_tools import clikit
from catch_tools.docs_matrix import markdown_table, matrix_rows


def build_parser(prog: str = "catch versions") -> argparse.ArgumentParser:
    """The parser, in the :mod:`catch_tools.clikit` vocabulary."""
    p = clikit.parser(prog, __doc__ or "", ["catch versions", "catch versions --root ../other-checkout"])
    p.add_argument("--root", metavar="DIR", type=Path, default=None, help="Catch checkout (default: this repository)")
    return p


def main(argv: Sequence[str] | None = None, prog: str = "catch versions") -> int:
    """Parse ``argv`` and print the matrix; returns 0.

    Raises:
        UserError: an invalid current manifest, or its wheel tag is unknown.
    """
    args = build_parser(prog).parse_args(argv)
    clikit.setup_logging(args)
    print(markdown_table(matrix_rows(args.root)), end="")
    return 0
