# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/upstream.py`` (``catch upstream``): print paths of real upstream PyTorch material built from release
wheels (:mod:`catch_tools.upstream`), building it on first use.

    wheel [VERSION]               path of the cached release wheel (default: the pin's release)
    tree [VERSION ...]            path of the cached read-only repository of those releases
    checkout DEST [VERSION ...]   a work clone at DEST (made once, reused after), path printed
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from catch_tools import clikit
from catch_tools.pin import load_pin
from catch_tools.upstream import clone_upstream, release_wheel, upstream_repo

EXAMPLES = (
    "scripts/upstream.py wheel",
    "scripts/upstream.py tree 2.13.0 2.15.0",
    "scripts/upstream.py checkout ../pt",
)


def build_parser(prog: str = "upstream.py") -> argparse.ArgumentParser:
    """The parser: one subcommand per kind of material."""
    p = clikit.parser(prog, (__doc__ or "").split("\n\n")[0], EXAMPLES)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("wheel", help="path of the cached release wheel").add_argument("versions", nargs="?", default=None)
    sub.add_parser("tree", help="path of the cached repository of releases").add_argument("versions", nargs="*")
    checkout = sub.add_parser("checkout", help="a work clone of that repository")
    checkout.add_argument("dest", type=Path)
    checkout.add_argument("versions", nargs="*")
    return p


def main(argv: Sequence[str] | None = None, prog: str = "upstream.py") -> int:
    """Parse ``argv`` and print the path asked for; returns 0.

    Raises:
        UserError: a version pip cannot download, or a bad pin manifest.
    """
    args = build_parser(prog).parse_args(argv)
    clikit.setup_logging(args)
    pinned = load_pin().public_version
    if args.cmd == "wheel":
        print(release_wheel(args.versions or pinned))
    elif args.cmd == "tree":
        print(upstream_repo(args.versions or [pinned]))
    else:
        if not (args.dest / ".git").exists():
            clone_upstream(args.versions or [pinned], args.dest)
        print(args.dest)
    return 0
