# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The upgrade after the patch rebase: from a series moved to a new PyTorch release to a tested, installable combined
wheel of that release (``scripts/upgrade.py``).

Steps (:data:`catch_tools.upgrade.steps.STEPS`), each a row in the report, resumable like the rebase:
``fetch`` the release's wheel (the flavour that exists; recorded in the manifest) -> ``build`` the backend against it
-> ``suite`` (backend tests + the patch proof gate) -> ``wheel`` (the combined wheel from that release's wheel) ->
``interfaces`` (native interface check) -> ``demo`` (the digits CNN trains on ``mlu`` in a fresh venv holding only the
combined wheel).

Modules: :mod:`.steps` (the steps), :mod:`.state` (their outcomes on disk), :mod:`.runner` (running them, the report);
the command line is :mod:`catch_tools.cli.upgrade`.
"""
