#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Compare an upstream torch wheel with the combined wheel: exit bits 1 error, 4 review, 8 incompatible. See --help.

Thin entry point over :mod:`catch_tools.cli.interfaces` (also ``catch interfaces``).
"""

import sys

from catch_tools.cli.interfaces import main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
