# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The rewrite of one module (:class:`Rewriter`, a libcst transformer): the rules that
:mod:`torch_mlu.migration.transform` lists, applied node by node, each change and each CUDA API use recorded."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import libcst as cst

from torch_mlu.contrib.api_map import ApiEntry, ApiMap
from torch_mlu.migration.results import ApiUse, Change, FileResult
from torch_mlu.migration.scan import Scan

_DEVICE = re.compile(r"cuda(:\d*)?")
_BACKEND = re.compile(r"((cuda|mlu|cpu):)?(nccl|gloo)(,((cuda|mlu|cpu):)?(nccl|gloo))*")
_MLU_IMPORT = "torch_mlu"


@functools.lru_cache(maxsize=4096)
def _expr(code: str) -> cst.BaseExpression:
    """Parsed expression for generated code (libcst nodes are immutable, so one node can be reused anywhere)."""
    return cst.parse_expression(code)


def _dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a pure Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_dotted(node: cst.Attribute | cst.Name | None) -> str:
    return "" if node is None else (_dotted(node) or "")


def _import_path(dotted: str) -> str:
    """Importable module path for a ``torch.mlu`` submodule (``torch.mlu`` is ``torch_mlu.mlu``; importing
    ``torch.mlu.amp`` by that name would load a second copy of the module)."""
    if dotted.startswith("torch.mlu."):
        return "torch_mlu.mlu." + dotted[len("torch.mlu.") :]
    return dotted


def _is_torch_import(stmt: cst.CSTNode) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Import) and any(
            _module_dotted(a.name).split(".")[0] == "torch" for a in small.names
        ):
            return True
        if isinstance(small, cst.ImportFrom) and _module_dotted(small.module).split(".")[0] == "torch":
            return True
    return False


class Rewriter(cst.CSTTransformer):
    """Rewrites a module of CUDA code by the rules of :mod:`torch_mlu.migration.transform`, using ``table`` for the
    ``torch.cuda`` names. ``result`` collects the changes and uses with placeholder lines (-k: the line of the k-th
    node in ``line_nodes``; 0: the line after ``end_line_node``), which
    :func:`torch_mlu.migration.transform.convert_source` resolves through ``scan``."""

    def __init__(self, table: ApiMap, module: cst.Module, scan: Scan) -> None:
        super().__init__()
        self.table = table
        self.module = module
        self.scan = scan
        self.cuda_names: set[str] = set()  # local names bound to torch.cuda objects (import ... as X, from ...)
        self.aliases: dict[str, str] = {}
        self.replace: dict[cst.CSTNode, cst.BaseExpression] = {}
        self.cuda_calls: set[cst.CSTNode] = set()
        self.result = FileResult(code="")
        self.needed: set[str] = set()
        self.line_nodes: list[cst.CSTNode] = []  # placeholder -k in a line field means line of line_nodes[k-1]
        self.end_line_node: cst.CSTNode | None = None  # the statement the added imports follow

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseStatement) and self.scan.is_quiet(node, self.cuda_names):
            return False  # nothing inside can change
        return super().on_visit(node)

    # -- helpers -------------------------------------------------------------------------------------------------
    def _line(self, node: cst.CSTNode) -> int:
        """Placeholder line (-k for the k-th node recorded), resolved after the rewrite by ``convert_source``."""
        self.line_nodes.append(node)
        return -len(self.line_nodes)

    def _record(self, original: cst.CSTNode, updated: cst.CSTNode) -> None:
        before = self.module.code_for_node(original)
        after = self.module.code_for_node(updated)
        if before != after:
            self.result.changes.append(Change(self._line(original), before, after))

    def _use(self, node: cst.CSTNode, api: str, entry: ApiEntry | None) -> None:
        kind = entry.status if entry is not None else "unknown"
        reason = entry.reason if entry is not None else ""
        self.result.uses.append(ApiUse(self._line(node), api, kind, reason))

    def _qualify(self, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return dotted if head == "torch" and "torch" not in self.aliases else ""
        return target + ("." + rest if rest else "")

    def _spell(self, target: str) -> cst.BaseExpression:
        """Expression naming ``target`` in this module, recording the import it needs."""
        root = "torch_mlu" if target.startswith("torch_mlu.") else "torch"
        bound = next((n for n, q in sorted(self.aliases.items()) if q == root), None)
        if bound is None:
            bound = root
            self.needed.add(target.rsplit(".", 1)[0] if root == "torch_mlu" else "torch")
        return _expr(bound + target[len(root) :])

    def _classify(self, qual: str) -> tuple[ApiEntry | None, str, bool]:
        """(entry, rest, is_cuda_related) for a qualified dotted name."""
        entry, rest = self.table.resolve(qual)
        related = qual == "torch.cuda" or qual.startswith("torch.cuda.") or entry is not None
        return entry, rest, related

    # -- imports -------------------------------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            name = _module_dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = name
                if name.startswith("torch.cuda"):
                    self.cuda_names.add(alias.asname.name.value)
            else:
                root = name.split(".")[0]
                self.aliases.setdefault(root, root)
            if name.split(".")[0] == "torch" and name.startswith("torch.distributed"):
                self.result.distributed = True
        return False

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        names = []
        for alias in updated_node.names:
            name = _module_dotted(alias.name)
            if name == "torch.cuda" or name.startswith("torch.cuda."):
                entry = self.table.get(name)
                self._use(original_node, name, entry)
                if alias.asname is None:
                    alias = alias.with_changes(name=cst.Name("torch"))
                elif entry is not None and entry.status != "unsupported":
                    alias = alias.with_changes(name=_expr(_import_path(entry.mlu)))
            names.append(alias)
        updated = updated_node.with_changes(names=names)
        self._record(original_node, updated)
        return updated

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = _module_dotted(node.module)
        if node.relative or not module:
            return False
        if module.startswith("torch.distributed") or module == "torch.nn.parallel":
            self.result.distributed = True
        if isinstance(node.names, cst.ImportStar):
            return False
        for alias in node.names:
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None
            imported = _module_dotted(alias.name)
            self.aliases[local or imported] = f"{module}.{imported}"
            if f"{module}.{imported}".startswith("torch.cuda"):
                self.cuda_names.add(local or imported)
            if module == "torch" and imported == "distributed":
                self.result.distributed = True
        return False

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.BaseSmallStatement | cst.FlattenSentinel[cst.BaseSmallStatement]:
        module = _module_dotted(updated_node.module)
        if updated_node.relative or not module:
            return updated_node
        if isinstance(updated_node.names, cst.ImportStar):
            if module == "torch.cuda" or module.startswith("torch.cuda."):
                entry = self.table.get(module)
                self._use(original_node, module + ".*", entry)
                if entry is not None and entry.status == "mapped":
                    updated = updated_node.with_changes(module=_expr(_import_path(entry.mlu)))
                    self._record(original_node, updated)
                    return updated
            return updated_node
        groups: dict[str, list[cst.ImportAlias]] = {}
        kept: list[cst.ImportAlias] = []
        for alias in updated_node.names:
            imported = _module_dotted(alias.name)
            qual = f"{module}.{imported}"
            entry, rest, related = self._classify(qual)
            if not related or rest:
                kept.append(alias)
                continue
            self._use(original_node, qual, entry)
            if entry is None or entry.status == "unsupported":
                kept.append(alias)
                continue
            parent, leaf = entry.mlu.rsplit(".", 1)
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else imported
            new_alias = cst.ImportAlias(
                name=cst.Name(leaf), asname=None if local == leaf else cst.AsName(name=cst.Name(local))
            )
            groups.setdefault(_import_path(parent), []).append(new_alias)
        if not groups:
            return updated_node
        statements: list[cst.BaseSmallStatement] = []
        if kept:
            statements.append(updated_node.with_changes(names=_fix_commas(kept)))
        for parent, aliases in groups.items():
            module_expr = _expr(parent)
            assert isinstance(module_expr, cst.Attribute | cst.Name)
            statements.append(cst.ImportFrom(module=module_expr, names=_fix_commas(aliases)))
        self.result.changes.append(
            Change(
                self._line(original_node),
                self.module.code_for_node(original_node),
                "; ".join(cst.Module(body=[]).code_for_node(s) for s in statements),
            )
        )
        if len(statements) == 1:
            return statements[0]
        return cst.FlattenSentinel(statements)

    # -- names ---------------------------------------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        dotted = _dotted(node)
        if dotted is None:
            return True
        qual = self._qualify(dotted)
        if qual.startswith("torch.distributed") or qual.startswith("torch.nn.parallel.DistributedDataParallel"):
            self.result.distributed = True
        if not qual:
            return True
        entry, rest, related = self._classify(qual)
        if not related:
            return qual != dotted or not dotted.startswith("torch.")  # a torch.* chain has nothing else inside
        api = qual[: len(qual) - len(rest)] if entry is not None else qual
        self._use(node, api, entry)
        if entry is not None and entry.status != "unsupported":
            new = self._spell(entry.mlu)
            if rest:
                new = _expr(self.module.code_for_node(new) + rest)
            self.replace[node] = new
        return False

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        new = self.replace.pop(original_node, None)
        if new is not None:
            self._record(original_node, new)
            return new
        if original_node in self.cuda_calls:
            self.cuda_calls.discard(original_node)
            updated = updated_node.with_changes(attr=cst.Name("mlu"))
            self._record(original_node, updated)
            return updated
        if updated_node.attr.value == "is_cuda":
            updated = updated_node.with_changes(attr=cst.Name("is_mlu"))
            self._use(original_node, "Tensor.is_cuda", ApiEntry("Tensor.is_cuda", "mapped", "Tensor.is_mlu", ""))
            self._record(original_node, updated)
            return updated
        return updated_node

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
            dotted = _dotted(func)
            qual = self._qualify(dotted) if dotted else ""
            if not (qual == "torch.cuda" or qual.startswith("torch.cuda.")):
                self.cuda_calls.add(func)
                self._use(node, "Tensor.cuda / Module.cuda",
                          ApiEntry("Tensor.cuda", "mapped", "Tensor.mlu", ""))
        return True

    # -- literals ------------------------------------------------------------------------------------------------
    def leave_SimpleString(
        self, original_node: cst.SimpleString, updated_node: cst.SimpleString
    ) -> cst.SimpleString:
        prefix_len = len(updated_node.prefix)
        if "b" in updated_node.prefix.lower():
            return updated_node
        quote = updated_node.quote
        body = updated_node.value[prefix_len + len(quote) : -len(quote)]
        if _DEVICE.fullmatch(body):
            new_body = "mlu" + body[4:]
            self._use(original_node, f"device string '{body}'", ApiEntry(body, "mapped", "mlu", ""))
        elif "nccl" in body and _BACKEND.fullmatch(body):
            new_body = body.replace("nccl", "cncl").replace("cuda:", "mlu:")
            self._use(original_node, f"backend '{body}'", ApiEntry(body, "mapped", "cncl", ""))
            self.result.distributed = True
        else:
            return updated_node
        updated = updated_node.with_changes(value=updated_node.value[: prefix_len + len(quote)] + new_body + quote)
        self._record(original_node, updated)
        return updated

    def leave_FormattedString(
        self, original_node: cst.FormattedString, updated_node: cst.FormattedString
    ) -> cst.FormattedString:
        parts = updated_node.parts
        if (
            len(parts) == 2
            and isinstance(parts[0], cst.FormattedStringText)
            and parts[0].value == "cuda:"
            and isinstance(parts[1], cst.FormattedStringExpression)
        ):
            updated = updated_node.with_changes(parts=[parts[0].with_changes(value="mlu:"), parts[1]])
            self._use(original_node, "device string f'cuda:{...}'", ApiEntry("cuda:N", "mapped", "mlu:N", ""))
            self._record(original_node, updated)
            return updated
        return updated_node

    # -- module --------------------------------------------------------------------------------------------------
    def visit_If(self, node: cst.If) -> bool:
        test = node.test
        if (
            isinstance(test, cst.Comparison)
            and isinstance(test.left, cst.Name)
            and test.left.value == "__name__"
        ):
            self.result.has_main = True
        return True

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.result.changes:
            return updated_node
        body = list(updated_node.body)
        new_imports = [cst.parse_statement(f"import {m}") for m in sorted(self.needed)]
        if self.result.distributed and "torch_mlu.distributed" not in self.needed:
            new_imports.append(cst.parse_statement("import torch_mlu.distributed  # added by torch_gpu2mlu: cncl"))
        elif "torch_mlu" not in self.aliases and not any(m.startswith("torch_mlu") for m in self.needed):
            new_imports.append(cst.parse_statement(f"import {_MLU_IMPORT}  # added by torch_gpu2mlu: the mlu device"))
        torch_at = next((i for i, stmt in enumerate(body) if _is_torch_import(stmt)), None)
        insert_at = _after_preamble(body) if torch_at is None else torch_at + 1
        if new_imports:
            body[insert_at:insert_at] = new_imports
            line = 1
            if insert_at > 0:
                self.end_line_node = original_node.body[insert_at - 1]
                line = 0  # resolved to the line after that statement by convert_source
            text = "\n".join(cst.Module(body=[]).code_for_node(s).strip() for s in new_imports)
            self.result.changes.append(Change(line, "", text))
        return updated_node.with_changes(body=body)


def _after_preamble(body: Sequence[cst.BaseStatement]) -> int:
    """Index after the module docstring and ``from __future__`` imports."""
    i = 0
    first = body[0] if body else None
    if (
        isinstance(first, cst.SimpleStatementLine)
        and isinstance(first.body[0], cst.Expr)
        and isinstance(first.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    ):
        i = 1
    while i < len(body):
        stmt = body[i]
        if (
            isinstance(stmt, cst.SimpleStatementLine)
            and isinstance(stmt.body[0], cst.ImportFrom)
            and _module_dotted(stmt.body[0].module) == "__future__"
        ):
            i += 1
            continue
        break
    return i


def _fix_commas(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    out = []
    for i, alias in enumerate(aliases):
        last = i == len(aliases) - 1
        out.append(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT if last else cst.Comma(
            whitespace_after=cst.SimpleWhitespace(" "))))
    return out
