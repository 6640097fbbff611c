#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Upgrade the patch series to a new PyTorch release: ``scripts/rebase.py --onto v2.14.0`` (see --help).

Thin entry point over :mod:`catch_tools.cli.rebase` (also ``catch rebase``).
"""

import sys

from catch_tools.cli.rebase import main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
