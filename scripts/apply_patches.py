#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Apply, check, inspect, reverse, export and lint Catch's patch series on top of the pinned PyTorch.

    scripts/apply_patches.py apply  [--source DIR | --target-dir DIR] [--force] [--3way] [--stop-at-conflict]
    scripts/apply_patches.py check  [--source DIR | --target-dir DIR] [--json]
    scripts/apply_patches.py status [--source DIR] [--json]
    scripts/apply_patches.py reverse [--source DIR] [--force]
    scripts/apply_patches.py export [--source DIR] [--dry-run]
    scripts/apply_patches.py lint

The default tree is the ``pytorch/`` submodule and the default series ``patches/``. The command line is
``catch_tools.cli.patches`` (also ``catch apply``, ``catch check``...); run a subcommand with ``--help`` for its
options.
"""

import sys

from catch_tools.cli.patches import main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
