# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The native interface check: does the combined wheel keep every interface of the upstream torch wheel?

- :mod:`.pair`    -- the two wheels, raw identity of members, unpacked trees.
- :mod:`.files`   -- layer 0, files and metadata.
- :mod:`.elf`     -- layer 1, ELF (pyelftools).
- :mod:`.schemas` -- layer 2, operator schemas (probes in child interpreters, :mod:`._probe`).
- :mod:`.pyapi`   -- layer 3, Python API (griffe).
- :mod:`.report`  -- findings, exit bits, rich and JSON output.
- :mod:`.check`   -- runs the layers; the command line is :mod:`catch_tools.cli.interfaces`.
"""

from catch_tools.interfaces.check import run_check
from catch_tools.interfaces.report import ERROR, INCOMPATIBLE, REVIEW, Report

__all__ = ["ERROR", "INCOMPATIBLE", "REVIEW", "Report", "run_check"]
