#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Build the combined wheel torch-<version>.catch<N> (upstream torch + series + Catch). See --help.

Thin entry point over :mod:`catch_tools.cli.wheel` (also ``catch wheel``).
"""

import sys

from catch_tools.cli.wheel import main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
