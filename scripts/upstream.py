#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Real upstream PyTorch material built from release wheels (see ``catch_tools.upstream``).

    scripts/upstream.py wheel [VERSION]              # path of the cached torch==VERSION wheel (default: the pin)
    scripts/upstream.py tree [VERSION ...]           # cached git repo, one commit + tag per release
    scripts/upstream.py checkout DEST [VERSION ...]  # a work clone of it at DEST

Thin entry point over :mod:`catch_tools.cli.upstream` (also ``catch upstream``).
"""

import sys

from catch_tools.cli.upstream import main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
