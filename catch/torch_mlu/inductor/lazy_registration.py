# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Lazy Inductor registration for ``mlu`` through the device module (``torch.mlu``).

When Inductor lowers a graph it calls ``init_backend_registration()``, which, for a PrivateUse1 device without code
generators yet, looks up ``Scheduling``, ``PythonWrapperCodegen``, ``CppWrapperCodegen`` and ``WrapperFxCodegen`` on
``torch.<backend name>`` (``torch.utils.backend_registration._get_custom_mod_func``) and registers what it finds.
:func:`install` gives ``torch.mlu`` a module ``__getattr__`` (PEP 562) that takes the first of those lookups as the
signal: it registers Dynamo's device interface (:mod:`torch_mlu.inductor.device_interface`) and mlu's code
generators (:func:`torch_mlu.inductor.codegen.register`, imported only then, so ``import torch`` does not import
Inductor), and answers that the name is absent. Inductor then keeps that registration rather than making its own from
the four names, which would drop the device pass that keys Inductor's FX graph cache by the code generators' version
(:class:`torch_mlu.inductor.codegen.CodegenVersion`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

#: the device-module names Inductor looks up to register a PrivateUse1 backend (torch/_inductor/codegen/common.py)
CODEGEN_NAMES = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen")


def register() -> None:
    """Registers Dynamo's device interface and Inductor's code generators for mlu (idempotent)."""
    from torch_mlu.inductor import codegen, device_interface

    device_interface.register()
    codegen.register()


def install(device_module: ModuleType) -> None:
    """Makes a lookup of one of :data:`CODEGEN_NAMES` on ``device_module`` call :func:`register` and raise
    ``AttributeError``; an existing module ``__getattr__`` is chained for other names."""
    previous: Callable[[str], Any] | None = device_module.__dict__.get("__getattr__")

    def __getattr__(name: str) -> Any:  # noqa: N807  (PEP 562 module hook)
        if name in CODEGEN_NAMES:
            register()
            raise AttributeError(f"module {device_module.__name__!r} has no attribute {name!r}: mlu's code "
                                 "generators are registered with Inductor by torch_mlu.inductor.codegen.register")
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {device_module.__name__!r} has no attribute {name!r}")

    device_module.__getattr__ = __getattr__  # type: ignore[method-assign]
