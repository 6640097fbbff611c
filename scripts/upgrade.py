#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""After scripts/rebase.py: fetch, build, test, package and demo the new release (see --help).

Thin entry point over :mod:`catch_tools.upgrade.cli`.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from catch_tools.errors import run_cli  # noqa: E402
from catch_tools.upgrade.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(run_cli(main))
