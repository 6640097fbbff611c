# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The patch engine: Catch's series of patches on top of the pinned upstream PyTorch.

Library entry points (the command line ``scripts/apply_patches.py`` is a thin layer over them):

* :class:`Series` -- ``patches/series`` read once and every patch parsed once (quilt series; mbox, DEP-3 or plain
  diffs);
* :func:`check_series` -- dry run against a git tree or a directory, every failure reported;
* :func:`apply_to_git` / :func:`apply_series_to_dir` -- apply as reproducible commits / onto an unpacked wheel;
* :func:`series_status`, :func:`reverse_series`, :func:`export_series`, :func:`lint_series`.

Modules: ``parse`` (one patch file), ``series`` (the series file), ``classify`` (python/native/unshipped paths),
``hunks`` + ``engine`` (in-memory application with git's matching rules), ``commits`` (fast-import), ``gittree``
(refs, base, reading a commit), ``transaction`` (crash-safe tree changes), ``gitapply``, ``dirapply``, ``check``,
``status``, ``export``, ``lint``; the command line is :mod:`catch_tools.cli.patches`.
"""

from catch_tools.patches.check import CheckReport, check_series
from catch_tools.patches.classify import classify_path
from catch_tools.patches.dirapply import apply_series_to_dir
from catch_tools.patches.export import ExportResult, export_series
from catch_tools.patches.gitapply import ApplyResult, apply_to_git
from catch_tools.patches.lint import LintProblem, lint_series
from catch_tools.patches.model import FileChange, Hunk, Patch, PatchMeta
from catch_tools.patches.parse import parse_patch
from catch_tools.patches.series import Series, SeriesEntry
from catch_tools.patches.status import StatusReport, reverse_series, series_status

__all__ = [
    "ApplyResult", "CheckReport", "ExportResult", "FileChange", "Hunk", "LintProblem", "Patch", "PatchMeta", "Series",
    "SeriesEntry", "StatusReport", "apply_series_to_dir", "apply_to_git", "check_series", "classify_path",
    "export_series", "lint_series", "parse_patch", "reverse_series", "series_status",
]
