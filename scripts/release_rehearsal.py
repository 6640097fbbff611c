#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Release rehearsal on 127.0.0.1 (see ``catch_tools.release.rehearsal``): publish the combined wheel to a real
package index and both images to a real OCI registry with the release scripts, then install and pull them as users do.

    scripts/release_rehearsal.py [--json REPORT] [--no-podman] [--fail-at STEP]
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import catch_tools  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from catch_tools.errors import run_cli
from catch_tools.release.rehearsal import main

if __name__ == "__main__":
    sys.exit(run_cli(main))
