# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Catch tooling: the patch engine, rebase, the combined-wheel build, the native interface check and the release.

Layout (one concept per module):

- :mod:`catch_tools.cli`         -- every command line (``catch <command>``; ``scripts/*.py`` are thin entry points).
- :mod:`catch_tools.clikit`      -- the shared command-line vocabulary (``-v/-q``, help with examples, dispatch).
- :mod:`catch_tools.errors`      -- ``UserError`` and the CLI wrapper that turns it into one line and exit code.
- :mod:`catch_tools.git`         -- every git process, and the repository object.
- :mod:`catch_tools.progress`    -- the one progress display (``Reporter``).
- :mod:`catch_tools.faults`      -- the one fault-injection point of the crash tests (``CATCH_FAULT``).
- :mod:`catch_tools.userfiles`   -- files read and directories written for the user, checked.
- :mod:`catch_tools.pin`         -- the pin manifest ``patches/manifest.toml`` (upstream tag, commit, wheel version).
- :mod:`catch_tools.paths`       -- where the project's directories are.
- :mod:`catch_tools.patches`     -- the patch engine (the :class:`~catch_tools.patches.series.Series`, apply, check).
- :mod:`catch_tools.rebase`      -- the series moved to a new upstream release.
- :mod:`catch_tools.upgrade`     -- the steps after the rebase, to a tested wheel of the new release.
- :mod:`catch_tools.wheel`       -- the combined wheel.
- :mod:`catch_tools.interfaces`  -- the native interface check.
- :mod:`catch_tools.proof`       -- the patch proof gate.
- :mod:`catch_tools.upstream`    -- real upstream trees and wheels from release wheels.
- :mod:`catch_tools.release`     -- the static package index and the release rehearsal.
- :mod:`catch_tools.docs_matrix`, :mod:`catch_tools.docs_commands` -- the docs' version matrix and command runner.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
