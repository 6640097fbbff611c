#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Patch proof gate: each patch's ``Catch-Test`` must fail on unpatched upstream torch and pass on the patched one.

    scripts/prove_patches.py [--torch-tree DIR] [--upstream-tree DIR] [--patch NAME]... [--json]
    scripts/prove_patches.py --write-table | --check-table      (docs/patches.md, generated from the series)

Exit 0 when every patch is proven, 1 with one ``rejected: <patch>: <why>`` line per rejected patch (or a stale
table), 2 on bad input. The library is ``catch_tools.proof`` (src/catch_tools/proof.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from catch_tools.errors import run_cli
from catch_tools.proof import main

if __name__ == "__main__":
    sys.exit(run_cli(main))
