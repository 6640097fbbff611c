#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Publish wheels into a static PEP 503 package index (see ``catch_tools.release.index``).

    scripts/publish_index.py WHEEL... --index-dir DIR    # DIR/files/WHEEL + DIR/simple/<project>/index.html
    scripts/publish_index.py --check WHEEL...           # only check that each wheel is what its name says

Thin entry point over :mod:`catch_tools.cli.release` (also ``catch release publish``).
"""

import sys

from catch_tools.cli.release import publish_main as main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
