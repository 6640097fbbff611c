# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Release tooling: the static package index a release publishes into (:mod:`.index`), loopback servers for a
rehearsal (:mod:`.servers`) and the release rehearsal itself (:mod:`.rehearsal`: its steps run by :mod:`.steps`, the
image steps in :mod:`.images`). The command lines are :mod:`catch_tools.cli.release`."""
