# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``catch backend``: the Catch backend wheel (torch_mlu) of the checkout, built against the installed torch once per
set of sources and kept in the cache (:func:`catch_tools.wheel.sources.cached_backend_wheel`); ``--install`` installs
it into this Python. Prints the wheel's path, one line on stdout. Exit status 0, or 2 on bad input or a failed build
(one line on stderr)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from catch_tools import clikit
from catch_tools.errors import UserError
from catch_tools.paths import repo_root
from catch_tools.progress import progress
from catch_tools.wheel.sources import cached_backend_wheel


def build_parser(prog: str = "catch backend") -> argparse.ArgumentParser:
    """The parser, in the :mod:`catch_tools.clikit` vocabulary."""
    p = clikit.parser(prog, __doc__ or "", ["catch backend", "catch backend --install -v",
                                            "catch backend --project ../other-checkout"],
                      epilog="The cache is $CATCH_CACHE/backend (default ~/.cache/catch/backend), one wheel per digest "
                             "of the sources under catch/, the pin manifest, the torch version and the Python ABI; "
                             "one build at a time (a second caller waits and then reuses the wheel). With -v the "
                             "build's compile steps are logged when stderr is not a terminal (CI logs).")
    p.add_argument("--project", metavar="DIR", type=Path, help="the Catch checkout (default: this repository)")
    p.add_argument("--install", action="store_true",
                   help="install the wheel into this Python: pip install --no-deps --force-reinstall")
    return p


def main(argv: Sequence[str] | None = None, prog: str = "catch backend") -> int:
    """Parse ``argv``, get the wheel (built or cached), install it with ``--install``, print its path; returns 0.

    Raises:
        UserError: see :func:`~catch_tools.wheel.sources.cached_backend_wheel`; or pip fails to install the wheel.
    """
    args = build_parser(prog).parse_args(argv)
    clikit.setup_logging(args)
    project = args.project or repo_root()
    with progress("the Catch backend wheel") as shown:
        wheel = cached_backend_wheel(project / "catch", progress=shown)
        if args.install:
            shown.step(f"installing {wheel.name}")
            # pip's output goes to stderr: stdout is the wheel's path only
            done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                                   str(wheel)], stdout=sys.stderr, check=False)
            if done.returncode != 0:
                raise UserError(f"pip could not install the backend wheel (exit {done.returncode}; its output is "
                                "above)", path=wheel)
            shown.line(f"installed {wheel.name}")
    print(wheel)
    return 0
