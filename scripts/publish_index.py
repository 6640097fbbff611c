#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Publish wheels into a static PEP 503 package index (see ``catch_tools.release.index``).

    scripts/publish_index.py WHEEL... --index-dir DIR    # DIR/files/WHEEL + DIR/simple/<project>/index.html
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from catch_tools.errors import run_cli
from catch_tools.release.index import main

if __name__ == "__main__":
    sys.exit(run_cli(main))
