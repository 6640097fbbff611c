# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The tooling's shape, checked on its source: files of one concept and a readable size, no import circle, no module
reaching another through ``importlib``, and every git process started by the one git module."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "catch_tools"
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The catch_tools modules ``name`` imports when it is imported (module level; ``if TYPE_CHECKING`` left out)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                for alias in node.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {m for m in found if m in modules and m != name}


def test_no_file_over_the_limit() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_import_circle() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def walk(name: str, trail: list[str]) -> None:
        state[name] = 1
        for nxt in sorted(graph[name]):
            if state.get(nxt) == 1:
                circles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                walk(nxt, [*trail, nxt])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [name])
    assert circles == []
    assert "catch_tools.patches" in graph["catch_tools.wheel.overlay"]  # the graph sees package imports too


def test_no_module_reaches_another_through_importlib() -> None:
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
                called = ast.unparse(node.func)
                if called.endswith(("import_module", "__import__")) and node.args:
                    target = ast.unparse(node.args[0])
                    assert "catch_tools" not in target, f"{path.relative_to(SRC)}: {called}({target})"


def test_every_git_process_starts_in_the_git_module() -> None:
    starters = ("subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
                "subprocess.check_output")
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in starters and node.args:
                first = node.args[0]
                if isinstance(first, ast.List) and first.elts and ast.unparse(first.elts[0]) == "'git'":
                    found.append(str(path.relative_to(SRC)))
    assert found and set(found) == {"git.py"}, found
