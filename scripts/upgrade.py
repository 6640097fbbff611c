#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""After scripts/rebase.py: fetch, build, test, package and demo the new release (see --help).

Thin entry point over :mod:`catch_tools.cli.upgrade` (also ``catch upgrade``).
"""

import sys

from catch_tools.cli.upgrade import main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
