#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Real upstream PyTorch material built from release wheels (see ``catch_tools.upstream``).

    scripts/upstream.py wheel [VERSION]              # path of the cached torch==VERSION wheel (default: the pin)
    scripts/upstream.py tree [VERSION ...]           # cached git repo, one commit + tag per release
    scripts/upstream.py checkout DEST [VERSION ...]  # a work clone of it at DEST
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from catch_tools.errors import run_cli
from catch_tools.upstream import main

if __name__ == "__main__":
    sys.exit(run_cli(main))
