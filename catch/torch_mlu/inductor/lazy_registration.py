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

Two registrations cannot wait for that lookup; each runs right after a module is imported, through a post-import hook
(:class:`_AfterImport`):

- Dynamo's device interface, after Dynamo's registry of device interfaces (``torch._dynamo.device_interface``): a
  process that only loads an AOTInductor package (``aoti_load_package`` asks ``get_interface_for_device("mlu")`` for
  the device's compute capability) lowers no graph, so the code-generator lookup never comes;
- the decompositions that leave ops to mlu's kernels (:func:`torch_mlu.inductor.fallbacks.register_decompositions`),
  after Inductor's decomposition table (``torch._inductor.decomposition``): Inductor traces a graph with that table
  before it lowers the graph.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

#: the device-module names Inductor looks up to register a PrivateUse1 backend (torch/_inductor/codegen/common.py)
CODEGEN_NAMES = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen")
#: Dynamo's registry of device interfaces (``get_interface_for_device``)
DEVICE_INTERFACE_MODULE = "torch._dynamo.device_interface"
#: Inductor's decomposition table
DECOMPOSITION_MODULE = "torch._inductor.decomposition"


def register_device_interface() -> None:
    """Registers Dynamo's device interface for mlu (:mod:`torch_mlu.inductor.device_interface`; idempotent)."""
    from torch_mlu.inductor import device_interface

    device_interface.register()


def register_decompositions() -> None:
    """Registers mlu's entries of Inductor's decomposition table (:mod:`torch_mlu.inductor.fallbacks`; idempotent)."""
    from torch_mlu.inductor import fallbacks

    fallbacks.register_decompositions()


def _after_import(name: str, callback: Callable[[], None]) -> None:
    """Runs ``callback()`` now if the module ``name`` is imported already, otherwise right after its import."""
    if name in sys.modules:
        callback()
    elif not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, callback))


class _AfterImport(importlib.abc.MetaPathFinder):
    """A finder on ``sys.meta_path`` that runs ``callback()`` right after the module ``name`` is executed, the first
    time it is imported (a post-import hook, the idea of PEP 369; the finder protocol of PEP 451). It finds the
    module's spec with the finders after it and wraps that spec's loader; then it leaves ``sys.meta_path``."""

    def __init__(self, name: str, callback: Callable[[], None]) -> None:
        self.name = name
        self.callback = callback

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        callback = self.callback

        def exec_then_call(module: ModuleType) -> None:
            exec_module(module)
            callback()

        spec.loader.exec_module = exec_then_call  # type: ignore[method-assign]
        return spec


def register() -> None:
    """Registers Dynamo's device interface and Inductor's code generators for mlu (idempotent)."""
    from torch_mlu.inductor import codegen

    register_device_interface()
    codegen.register()


def install(device_module: ModuleType) -> None:
    """Makes a lookup of one of :data:`CODEGEN_NAMES` on ``device_module`` call :func:`register` and raise
    ``AttributeError``; an existing module ``__getattr__`` is chained for other names. Registers Dynamo's device
    interface when :data:`DEVICE_INTERFACE_MODULE` is imported and mlu's decompositions when
    :data:`DECOMPOSITION_MODULE` is, each now if its module is imported already."""
    _after_import(DEVICE_INTERFACE_MODULE, register_device_interface)
    _after_import(DECOMPOSITION_MODULE, register_decompositions)
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
