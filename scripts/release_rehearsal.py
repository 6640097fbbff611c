#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Release rehearsal on 127.0.0.1 (see ``catch_tools.release.rehearsal``): publish the combined wheel to a real
package index and both images to a real OCI registry with the release scripts, then install and pull them as users do.

    scripts/release_rehearsal.py [--json REPORT] [--no-podman] [--fail-at STEP]

Thin entry point over :mod:`catch_tools.cli.release` (also ``catch release rehearse``).
"""

import sys

from catch_tools.cli.release import rehearse_main as main
from catch_tools.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
