# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Source migration from CUDA to mlu: the library behind the ``torch_gpu2mlu`` command.

- :mod:`torch_mlu.migration.transform`: ``convert_source`` rewrites one module (the rules are listed there), with
  :mod:`~torch_mlu.migration.rewriter` (the rules applied), :mod:`~torch_mlu.migration.scan` (lines, statements that
  cannot change) and :mod:`~torch_mlu.migration.results` (what a module's conversion found);
- :mod:`torch_mlu.migration.tree`: ``convert_tree`` converts a file or a directory tree;
- :mod:`torch_mlu.migration.reports`: ``write_reports`` (CSV reports and log) and ``write_launcher``;
- :mod:`torch_mlu.migration.plan`: what a run reads and where it writes, checked first (never into the input), and
  the staging directories that make a run all or nothing;
- :mod:`torch_mlu.migration.cli`: the command line (console script ``torch_gpu2mlu``).

The rewrite uses the same API table as ``torch_mlu.contrib.transfer_to_mlu`` (``torch_mlu/contrib/api_map.csv``).
It needs ``libcst`` (the ``migration`` extra of torch_mlu); nothing is imported here so that the command can say so
in one line when it is missing.
"""
