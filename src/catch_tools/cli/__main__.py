# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``python -m catch_tools.cli``: the ``catch`` command line without installing its console script."""

from catch_tools.cli.catch import entry

entry()
