# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Runtime probe of one unpacked wheel, run in a child interpreter whose ``PYTHONPATH`` is the unpacked tree.

Standalone on purpose (imports only the standard library and the torch under test): the check runs this file's
source with ``python -c`` in an empty working directory, so nothing of the checker's own environment but the
site-packages dependencies of torch is visible. Usage::

    python -c "<this file>" OUT.json MODE [ARG]

MODE ``plain``: import torch; ``backend``: import torch and the backend package ARG (autoload on);
``modules``: import torch and every module named in the JSON list file ARG. OUT.json receives ``torch_file``,
``version``, ``cxx11_abi``, ``abi_attrs`` (``torch._C._PYBIND11_*`` and ``_GLIBCXX_USE_CXX11_ABI``), ``modules``
(loaded ``torch.*`` names), ``schemas`` / ``class_schemas`` (strings of ``torch._C._jit_get_all_schemas()`` and
``_jit_get_custom_class_schemas()``, absent when torch lacks them), and ``bc_failures`` when env
``CATCH_PROBE_BC_AGAINST`` names a JSON list of old schema strings.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any


def bc_failures(old: Iterable[str], new: Iterable[str], parse: Callable[[str], Any]) -> list[str]:
    """Old schemas with no backward-compatible new schema of the same name (empty allow-list).

    Rule of PyTorch's ``check_forward_backward_compatibility.py``: an old schema is kept when some new schema with
    the same ``name`` satisfies ``new.is_backward_compatible_with(old)``; an identical string always matches.
    A string ``parse`` rejects matches only itself.
    """
    new_set = set(new)
    by_name: dict[str, list[Any]] = {}
    for text in new_set:
        try:
            schema = parse(text)
        except RuntimeError:
            continue
        by_name.setdefault(schema.name, []).append(schema)
    failures = []
    for text in old:
        if text in new_set:
            continue
        try:
            schema = parse(text)
        except RuntimeError:
            failures.append(text)
            continue
        if not any(cand.is_backward_compatible_with(schema) for cand in by_name.get(schema.name, [])):
            failures.append(text)
    return failures


def _probe(out_path: str, mode: str, arg: str | None) -> None:
    import os

    import torch

    result: dict[str, Any] = {"torch_file": torch.__file__, "version": torch.__version__}
    result["cxx11_abi"] = bool(torch.compiled_with_cxx11_abi())
    result["abi_attrs"] = {k: getattr(torch._C, k) for k in sorted(dir(torch._C))
                           if k.startswith("_PYBIND11_") or k == "_GLIBCXX_USE_CXX11_ABI"}
    failed = []
    if mode == "backend" and arg:
        result["backend_file"] = importlib.import_module(arg).__file__
    elif mode == "modules" and arg:
        with open(arg) as fh:
            for name in json.load(fh):
                try:
                    importlib.import_module(name)
                except Exception as err:  # noqa: BLE001 -- a module of one wheel may not exist in the other
                    failed.append(f"{name}: {type(err).__name__}")
    result["import_failures"] = failed
    result["modules"] = sorted(n for n in sys.modules if n == "torch" or n.startswith("torch."))
    if hasattr(torch._C, "_jit_get_all_schemas"):
        result["schemas"] = sorted({str(s) for s in torch._C._jit_get_all_schemas()})
        custom = getattr(torch._C, "_jit_get_custom_class_schemas", list)
        result["class_schemas"] = sorted({str(s) for s in custom()})
        against = os.environ.get("CATCH_PROBE_BC_AGAINST")
        if against:
            with open(against) as fh:
                old = json.load(fh)
            result["bc_failures"] = bc_failures(old, result["schemas"], torch._C.parse_schema)
    with open(out_path, "w") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    _probe(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
