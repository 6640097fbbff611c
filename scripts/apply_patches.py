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

The default tree is the ``pytorch/`` submodule and the default series ``patches/``. The library behind it is
``catch_tools.patches`` (src/catch_tools/patches/); run a subcommand with ``--help`` for its options.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from catch_tools.errors import run_cli
from catch_tools.patches.cli import main

if __name__ == "__main__":
    sys.exit(run_cli(main))
