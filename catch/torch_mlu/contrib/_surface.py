# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The public surface of ``torch.cuda`` as installed (PyTorch 2.13), against which the API map is checked.

Rule (PEP 8 "Public and internal interfaces"): a module's public names are its ``__all__``; where a module has no
``__all__``, the public names are those without a leading underscore that the module itself defines. On top of
``__all__`` we count the public exception classes (``torch.cuda.OutOfMemoryError`` is used in ``except`` clauses but
not listed in ``__all__``) and every public submodule whose name starts with ``torch.cuda.`` (recursively).
Imported helpers (``os``, ``typing.Any``, ``torch._utils.classproperty``) are not public API of ``torch.cuda``.
"""

from __future__ import annotations

import types


def _public_names(mod: types.ModuleType) -> list[tuple[str, types.ModuleType | None]]:
    """``(name, submodule-or-None)`` for the public names of ``mod`` by the rule in the module docstring."""
    exported = getattr(mod, "__all__", None)
    out: list[tuple[str, types.ModuleType | None]] = []
    for name in sorted(dir(mod)):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        if isinstance(obj, types.ModuleType):
            if obj.__name__.startswith("torch.cuda."):
                out.append((name, obj))
            continue
        if exported is not None:
            is_exception = isinstance(obj, type) and issubclass(obj, BaseException)
            if name in exported or is_exception:
                out.append((name, None))
        elif getattr(obj, "__module__", None) == mod.__name__:
            out.append((name, None))
    return out


def cuda_public_surface() -> list[str]:
    """Sorted dotted names (``"torch.cuda.memory_allocated"``, ``"torch.cuda.amp.GradScaler"``, ...) of the public
    surface of the installed ``torch.cuda`` and its public submodules. Importing ``torch.cuda`` needs no GPU."""
    import torch.cuda  # noqa: F401  (the attribute walk below needs the package loaded)
    import torch.cuda.amp  # noqa: F401
    import torch.cuda.nvtx  # noqa: F401
    import torch.cuda.profiler  # noqa: F401

    root = __import__("torch").cuda
    names: list[str] = []
    seen: set[str] = set()

    def walk(mod: types.ModuleType) -> None:
        if mod.__name__ in seen:
            return
        seen.add(mod.__name__)
        for name, sub in _public_names(mod):
            names.append(f"{mod.__name__}.{name}")
            if sub is not None:
                walk(sub)

    walk(root)
    return sorted(set(names))
