# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Rebase of the patch series onto a new upstream PyTorch release, behind ``scripts/rebase.py``.

Modules, one job each:

- :mod:`.flow`     -- start / continue / drop / abort / status: the resumable state machine;
- :mod:`.batch`    -- the fast path: runs of patches moved in memory with the patch engine (clean, offset, upstreamed);
- :mod:`.pick`     -- one patch moved with git and classified (offset, upstreamed, 3-way, conflict);
- :mod:`.series`   -- the series as commits: read ``series``, replay on the old base, export back to ``patches/``;
- :mod:`.pinning`  -- the new pin (tag, upstream commit, wheel version) in the manifest and the ``pytorch`` gitlink;
- :mod:`.state`    -- the in-progress state under ``<git-dir>/catch-rebase/`` and the ``patches/`` backup;
- :mod:`.report`   -- the Markdown / JSON report with ``git range-diff``;
- the command line is :mod:`catch_tools.cli.rebase`.
"""

from catch_tools.rebase.flow import Finished, Rebase, Stopped

__all__ = ["Finished", "Rebase", "Stopped"]
