# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The command lines of the tooling, one module each, all on the shared kit :mod:`catch_tools.clikit`, and ``catch``
(:mod:`.catch`), the console script that runs them as subcommands (``pyproject.toml`` ``[project.scripts]``;
``python -m catch_tools.cli`` without installing).

``catch`` command   module                       script (thin entry point in ``scripts/``)
==================  ===========================  =============================================================
apply, check,       :mod:`.patches`              ``apply_patches.py {apply,check,status,reverse,export,lint}``
status, reverse,
export, lint
rebase              :mod:`.rebase`               ``rebase.py``
upgrade             :mod:`.upgrade`              ``upgrade.py``
wheel               :mod:`.wheel`                ``build_wheel.py``
backend             :mod:`.backend`              (none: ``catch backend``, what tox envs install)
interfaces          :mod:`.interfaces`           ``check_native_interfaces.py``
prove               :mod:`.prove`                ``prove_patches.py``
upstream            :mod:`.upstream`             ``upstream.py``
release             :mod:`.release`              ``publish_index.py``, ``release_rehearsal.py``
gpu2mlu             :mod:`.gpu2mlu`              ``torch_gpu2mlu.py``
versions            :mod:`.versions`             (none: ``catch versions``)
==================  ===========================  =============================================================

A script imports only its own module (this package imports none of them). Each module's ``main(argv, prog)`` returns
the exit status and raises :class:`~catch_tools.errors.UserError` for bad input; :func:`~catch_tools.errors.run_cli`
turns that into one line on stderr.
"""
