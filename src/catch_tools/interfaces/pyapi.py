# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Layer 3: the Python API of ``torch``, compared statically with ``griffe``.

Rules: ``griffe.find_breaking_changes(old, new)`` (removed or changed public objects and parameters; additions and
attribute values are ignored by griffe) must find nothing (incompatible); public names added outside ``torch.mlu``,
``torch.version`` and ``torch_mlu`` need review; a removed module is incompatible.

Scope: loading the whole torch tree with griffe takes tens of seconds per wheel, so by default only the modules whose
source differs between the two wheels (``.py`` and ``.pyi``; raw-identical files have identical APIs) plus the
``torch`` package itself are loaded, each visited on its own (``griffe.visit``); the report says so. ``full=True``
loads both complete packages with ``griffe.load`` instead.
"""

from __future__ import annotations

import logging
from pathlib import Path

import griffe

from catch_tools.interfaces.pair import WheelPair
from catch_tools.interfaces.report import INCOMPATIBLE, REVIEW, LayerResult

ALLOWED_ADDITIONS = ("torch.mlu", "torch.version", "torch_mlu")
API_ROOTS = ("torch/", "torchgen/", "functorch/")


def module_name(path: str) -> str:
    """``torch/utils/x.py`` -> ``torch.utils.x``; ``torch/__init__.pyi`` -> ``torch``."""
    stem = path.rsplit(".", 1)[0]
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _allowed(path: str) -> bool:
    return any(path == p or path.startswith(p + ".") for p in ALLOWED_ADDITIONS)


def _public(obj: griffe.Object | griffe.Alias) -> bool:
    try:
        return bool(obj.is_public)
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return not obj.name.startswith("_")


def additions(old: griffe.Object, new: griffe.Object) -> list[str]:
    """Paths of public members in ``new`` absent from ``old``, recursing into classes (not into submodules)."""
    out = []
    for name, member in new.members.items():
        if name not in old.members:
            if _public(member) and not name.startswith("_"):
                out.append(member.path)
            continue
        before = old.members[name]
        if (not member.is_alias and not before.is_alias and member.is_class and before.is_class):
            out.extend(additions(before, member))  # type: ignore[arg-type]
    return out


def _breakages(old: griffe.Object, new: griffe.Object, res: LayerResult, where: str) -> None:
    for breakage in griffe.find_breaking_changes(old, new):
        detail = ""
        if breakage.old_value is not None or breakage.new_value is not None:
            detail = f" ({_short(breakage.old_value)} -> {_short(breakage.new_value)})"
        res.add(INCOMPATIBLE, "api-breaking-change", f"{breakage.kind.value}: {breakage.obj.path}{detail}", where)
    for path in additions(old, new):
        if not _allowed(path):
            res.add(REVIEW, "api-added-outside-backend", f"public name added: {path}", where)


def _short(value: object) -> str:
    text = getattr(value, "name", None) or str(value)
    return text if len(text) < 60 else text[:57] + "..."


def _visit(name: str, path: Path) -> griffe.Module:
    return griffe.visit(name, path, path.read_text(encoding="utf-8", errors="replace"))


def _is_python(name: str) -> bool:
    return name.endswith((".py", ".pyi"))


def check_api(pair: WheelPair, full: bool = False) -> LayerResult:
    """Run layer 3 (see module doc for the scope and rules)."""
    res = LayerResult(3)
    logging.getLogger("griffe").setLevel(logging.ERROR)
    python_files = ("torch/__init__.py",)
    changed, removed = [], []
    for member in pair.up.members:
        name = member.name
        if not name.endswith((".py", ".pyi")) or not name.startswith(API_ROOTS):
            continue
        if pair.new.get(name) is None:
            removed.append(name)
        elif name in python_files or not pair.raw_identical(member):
            changed.append(name)
    new_modules = sorted(m.name for m in pair.new.members
                         if m.name.endswith((".py", ".pyi")) and m.name.startswith(API_ROOTS)
                         and pair.up.get(m.name) is None)
    for name in removed:
        res.add(INCOMPATIBLE, "api-module-removed", f"module {module_name(name)} removed", name)
    for name in new_modules:
        if not _allowed(module_name(name)) and not module_name(name).rsplit(".", 1)[-1].startswith("_"):
            res.add(REVIEW, "api-module-added", f"public module {module_name(name)} added", name)
    up_tree, new_tree = pair.tree("upstream", _is_python), pair.tree("combined", _is_python)
    if full:
        loaded = []
        for tree in (up_tree, new_tree):
            loader = griffe.GriffeLoader(search_paths=[tree], allow_inspection=False)
            loaded.append(loader.load("torch", try_relative_path=False))
        _breakages(loaded[0], loaded[1], res, "torch")  # type: ignore[arg-type]
        res.notes.append("full API of torch loaded from both trees")
        return res
    for name in changed:
        if not (new_tree / name).is_file() or not (up_tree / name).is_file():
            continue
        old_mod, new_mod = _visit(module_name(name), up_tree / name), _visit(module_name(name), new_tree / name)
        _breakages(old_mod, new_mod, res, name)
    res.notes.append(f"scope: {len(changed)} module file(s) that differ from upstream plus torch/__init__.py; "
                     "byte-identical modules skipped (use --full-api to load the whole package)")
    return res
