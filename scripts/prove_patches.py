#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Patch proof gate: each patch's ``Catch-Test`` must fail on unpatched upstream torch and pass on the patched one.

    scripts/prove_patches.py [--torch-tree DIR] [--upstream-tree DIR] [--patch NAME]... [--json]
    scripts/prove_patches.py --write-table | --check-table      (docs/patches.md, generated from the series)

Exit 0 when every patch is proven, 1 with one ``rejected: <patch>: <why>`` line per rejected patch (or a stale
table), 2 on bad input. Thin entry point over :mod:`catch_tools.cli.prove` (also ``catch prove``).
"""

import sys

from catch_tools.cli.prove import main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
