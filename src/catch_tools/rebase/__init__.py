# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Rebase of the patch series onto a new upstream PyTorch release, behind ``scripts/rebase.py``.

Modules, one job each:

- :mod:`.flow`     -- start / continue / drop / status: the resumable state machine;
- :mod:`.workspace` -- where a rebase works: the project, the upstream work tree, the state store;
- :mod:`.checks`   -- what a rebase refuses before it changes anything;
- :mod:`.finish`   -- the final phase: export, pin, refs, report;
- :mod:`.abort`    -- ``--abort``: everything back as before the rebase;
- :mod:`.outcome`  -- stopped at a conflict, or finished;
- :mod:`.batch`    -- the fast path: runs of patches moved in memory with the patch engine (clean, offset, upstreamed);
- :mod:`.pick`     -- one patch moved with git and classified (offset, upstreamed, 3-way, conflict);
- :mod:`.series`   -- the series as commits: read ``series``, replay on the old base, export back to ``patches/``;
- :mod:`.pinning`  -- the new pin (tag, upstream commit, wheel version) in the manifest and the ``pytorch`` gitlink;
- :mod:`.state`    -- the in-progress state under ``<git-dir>/catch-rebase/`` and the ``patches/`` backup;
- :mod:`.report`   -- the Markdown / JSON report with ``git range-diff``;
- the command line is :mod:`catch_tools.cli.rebase`.
"""

from catch_tools.rebase.flow import Rebase
from catch_tools.rebase.outcome import Finished, Stopped

__all__ = ["Finished", "Rebase", "Stopped"]
