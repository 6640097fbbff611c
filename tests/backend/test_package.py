# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Package wiring of torch_mlu: torch.mlu submodules are single modules; `import torch` alone registers cncl; no two
modules of the package import each other, directly or through others."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import torch_mlu


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_torch_mlu_submodules_are_the_same_objects() -> None:
    # Like `import torch.cuda.amp`: importing the dotted name must not load a second copy of the module.
    out = _run(
        "import torch, importlib\n"
        "import torch.mlu.amp, torch.mlu.memory, torch.mlu.random, torch.mlu.streams\n"
        "import torch_mlu.mlu as m\n"
        "print(all(importlib.import_module('torch.mlu.' + n) is getattr(m, n) if hasattr(m, n) else\n"
        "          importlib.import_module('torch.mlu.' + n) is importlib.import_module('torch_mlu.mlu.' + n)\n"
        "          for n in ('amp', 'memory', 'random', 'streams')))\n"
        "print(torch.mlu.Stream is torch.mlu.streams.Stream)"
    )
    assert out.splitlines() == ["True", "True"]


def test_plain_import_torch_registers_cncl_for_mlu() -> None:
    # The default c10d backend for a device is what init_process_group() picks for its tensors (nccl for cuda).
    out = _run(
        "import torch, torch.distributed as dist\n"
        "print('cncl' in dist.Backend.backend_list)\n"
        "print(dist.get_default_backend_for_device('mlu'))"
    )
    assert out.splitlines() == ["True", "cncl"]


def _module_imports(package: Path) -> dict[str, set[str]]:
    """torch_mlu module -> the torch_mlu modules it imports anywhere in its source (function-level imports too), read
    from the AST. ``from a import b`` counts as importing ``a.b`` when that is a module, else ``a``; a module's own
    packages are left out (a package's ``__init__`` has run by the time its modules are imported)."""
    modules: dict[str, Path] = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def known(name: str) -> str:
        while name not in modules and "." in name:
            name = name.rpartition(".")[0]
        return name if name in modules else ""

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets.update(known(f"{node.module}.{alias.name}") or known(node.module) for alias in node.names)
        graph[name] = {t for t in targets if t and t != name and not name.startswith(t + ".")}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` as the list of its modules (first repeated last), or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return []


def test_no_import_cycle_in_torch_mlu() -> None:
    graph = _module_imports(Path(torch_mlu.__file__).parent)
    assert "torch_mlu.compile.decompositions" in graph["torch_mlu.compile.group"]  # the graph is read
    assert _cycle(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
