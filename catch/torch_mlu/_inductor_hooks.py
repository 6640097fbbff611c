# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Lazy Inductor registration for ``mlu`` through the device module (``torch.mlu``).

When Inductor lowers a graph it calls ``init_backend_registration()``, which, for the PrivateUse1 device, looks up
``Scheduling``, ``PythonWrapperCodegen``, ``CppWrapperCodegen`` and ``WrapperFxCodegen`` on ``torch.<backend name>``
(``torch.utils.backend_registration._get_custom_mod_func``) and registers them. :func:`install` gives ``torch.mlu`` a
module ``__getattr__`` (PEP 562) answering those four names from :mod:`torch_mlu.compile.inductor`, imported only
then, so ``import torch`` does not import Inductor.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

_NAMES = {
    "Scheduling": "CppScheduling",
    "PythonWrapperCodegen": "MluWrapperCodegen",
    "CppWrapperCodegen": "MluCppWrapperUnsupported",
    "WrapperFxCodegen": "WrapperFxCodegen",
}


def _lookup(name: str) -> Any:
    from torch_mlu.compile import inductor

    inductor.register()
    return getattr(inductor, _NAMES[name])


def install(device_module: ModuleType) -> None:
    """Makes ``device_module.Scheduling`` etc. resolve lazily; an existing module ``__getattr__`` is chained."""
    previous: Callable[[str], Any] | None = device_module.__dict__.get("__getattr__")

    def __getattr__(name: str) -> Any:  # noqa: N807  (PEP 562 module hook)
        if name in _NAMES:
            return _lookup(name)
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {device_module.__name__!r} has no attribute {name!r}")

    device_module.__getattr__ = __getattr__  # type: ignore[method-assign]
