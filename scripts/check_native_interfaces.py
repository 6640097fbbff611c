#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Compare an upstream torch wheel with the combined wheel: exit bits 1 error, 4 review, 8 incompatible. See --help.

Thin entry point over :mod:`catch_tools.interfaces.cli`; works from a checkout without installing the tooling.
"""

import sys
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from catch_tools.errors import run_cli  # noqa: E402
from catch_tools.interfaces.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(run_cli(main))
