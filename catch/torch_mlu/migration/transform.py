# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Rewrite one Python module of CUDA PyTorch code into ``mlu`` code with libcst (formatting and comments kept).

Rules, all driven by the shared table ``torch_mlu/contrib/api_map.csv`` except the device/backend literals:

- ``torch.cuda`` names, however imported (``import torch``, ``import torch.cuda as tc``, ``from torch.cuda.amp
  import GradScaler``): ``mapped`` and ``not_applicable`` rows become their ``mlu`` column (``torch.mlu.X`` or a
  stand-in in ``torch_mlu.contrib.cuda_compat``, imported as needed); ``unsupported`` rows are left unchanged and
  reported with the reason; names the table does not list are left unchanged and reported as unknown.
- string literals that are a whole device or backend name: ``"cuda"`` / ``"cuda:N"`` / ``f"cuda:{i}"`` -> ``mlu``,
  ``"nccl"`` -> ``"cncl"`` (also inside ``"cuda:nccl,cpu:gloo"``). Other strings (``"NCCL_DEBUG"``) are untouched.
- method calls ``x.cuda(...)`` -> ``x.mlu(...)`` and the attribute ``x.is_cuda`` -> ``x.is_mlu``.
- a changed module gets ``import torch_mlu`` after its first ``torch`` import, so that the ``mlu`` device exists
  even with ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` (``import torch_mlu.distributed`` when it has distributed code,
  which registers the ``cncl`` backend).

The rules are applied by :class:`~torch_mlu.migration.rewriter.Rewriter`; :class:`~torch_mlu.migration.scan.Scan`
gives the lines of the report; the result types are in :mod:`torch_mlu.migration.results`.
"""

from __future__ import annotations

import libcst as cst

from torch_mlu.contrib.api_map import ApiMap
from torch_mlu.migration.results import ApiUse, Change, FileResult
from torch_mlu.migration.rewriter import Rewriter
from torch_mlu.migration.scan import Scan

__all__ = ["ApiUse", "Change", "FileResult", "convert_source"]


def _resolve_lines(scan: Scan, rewriter: Rewriter) -> None:
    """Replace the placeholder lines of changes and uses by real 1-based lines of the input."""
    lines = [scan.line(node) for node in rewriter.line_nodes]
    items: list[Change | ApiUse] = [*rewriter.result.changes, *rewriter.result.uses]
    for item in items:
        if item.line < 0:
            item.line = lines[-item.line - 1]
        elif item.line == 0 and rewriter.end_line_node is not None:
            item.line = scan.line_after(rewriter.end_line_node)
    rewriter.result.changes.sort(key=lambda c: c.line)
    rewriter.result.uses.sort(key=lambda u: u.line)


def convert_source(source: str | bytes, table: ApiMap) -> FileResult:
    """Convert one module's source. Raises ``libcst.ParserSyntaxError`` for malformed Python (its ``raw_line`` is
    the 1-based line) and ``UnicodeDecodeError`` for bytes that do not decode in the module's declared encoding
    (PEP 263). The result's ``code`` is ``str`` (the caller encodes it as the input was)."""
    module = cst.parse_module(source)
    scan = Scan(module)
    rewriter = Rewriter(table, module, scan)
    new_module = module.visit(rewriter)
    _resolve_lines(scan, rewriter)
    result = rewriter.result
    result.code = new_module.code
    result.encoding = module.encoding
    return result
