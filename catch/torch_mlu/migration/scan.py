# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Where each node of a libcst module starts and ends in its token stream, for the lines of the migration report and
for skipping statements that cannot change (:class:`Scan`)."""

from __future__ import annotations

import libcst as cst
from libcst._nodes.internal import CodegenState

# A statement none of whose tokens contains one of these cannot change and holds nothing the rewrite must learn
# (aliases come from imports, the launcher needs ``__main__`` blocks and ``torch.distributed`` uses).
_KEYWORDS = ("cuda", "nccl", "import", "__main__", "istributed")


class Scan(CodegenState):
    """One code generation of the input module recording, per node, the token indices where it starts and ends.

    libcst's ``PositionProvider`` builds a range object for every node, which costs more than parsing; the report
    needs lines of a few nodes only, and the rewrite needs to know which statements mention CUDA at all. Lines are
    1-based and count ``\n`` (also ending ``\r\n``) as in the source.
    """

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.start_at: dict[cst.CSTNode, int] = {}
        self.end_at: dict[cst.CSTNode, int] = {}
        module._codegen(self)
        self.newlines = [0]
        self.hits = [0]
        for token in self.tokens:
            self.newlines.append(self.newlines[-1] + token.count("\n"))
            self.hits.append(self.hits[-1] + any(k in token for k in _KEYWORDS))

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.start_at.setdefault(node, len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.end_at[node] = len(self.tokens)

    def line(self, node: cst.CSTNode) -> int:
        return 1 + self.newlines[self.start_at[node]] if node in self.start_at else 1

    def line_after(self, node: cst.CSTNode) -> int:
        """First line after ``node`` (a statement's tokens end with its newline)."""
        return 1 + self.newlines[self.end_at[node]] if node in self.end_at else 1

    def is_quiet(self, node: cst.CSTNode, names: set[str]) -> bool:
        """True for a statement of the input whose text has none of the keywords and none of ``names`` (local
        aliases of ``torch.cuda`` objects): nothing inside it can change, so the rewrite need not look."""
        start = self.start_at.get(node)
        if start is None:
            return False
        end = self.end_at[node]
        if self.hits[end] != self.hits[start]:
            return False
        return not (names and any(token in names for token in self.tokens[start:end]))
