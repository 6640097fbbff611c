# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Run an unchanged CUDA PyTorch script on ``mlu``: ``import torch_mlu.contrib.transfer_to_mlu`` at its top.

The name follows torch_npu's ``torch_npu.contrib.transfer_to_npu`` (and torch_mlu's ``gpu_migration``), which
Ascend and Cambricon users already put in their scripts. Importing the module calls :func:`apply`; :func:`restore`
undoes every change. What it redirects, in-process only:

- ``torch.cuda.*`` and its public submodules (``amp``, ``memory``, ``random``, ``streams``, ``graphs``, ``nvtx``,
  ...): every name listed in the shared table ``api_map.csv`` (see :mod:`torch_mlu.contrib.api_map`). ``mapped``
  names become their ``torch.mlu`` equivalent (``torch.cuda.is_available()`` answers for mlu);
  ``not_applicable`` names become stand-ins that warn once (``nvtx`` ranges, sync debug mode); ``unsupported``
  names become stubs that raise :class:`~torch_mlu.contrib.api_map.UnsupportedCudaAPIError` naming the API and the
  reason when called (``torch.cuda.CUDAPluggableAllocator(...)``, ``torch.cuda.temperature()``).
- device arguments: ``"cuda"``, ``"cuda:N"`` and ``torch.device("cuda", N)`` become ``mlu`` where a device is
  consumed: every factory function PyTorch itself lists as taking ``device``
  (``torch.utils._device._device_constructors``, the list ``torch.set_default_device`` uses), the ``*_like``
  functions, ``Tensor.to``/``new_*``/``pin_memory``, ``Module.to``, ``torch.Generator``, the mapped ``torch.cuda``
  functions (``torch.cuda.set_device(torch.device("cuda", 1))``), ``torch.cuda.device(...)``,
  ``torch.load(map_location=...)`` (a checkpoint saved from ``cuda:N`` loads onto ``mlu:N`` when no
  ``map_location`` is given), ``DataLoader(pin_memory_device=...)``. ``torch.device("cuda")`` itself stays a cuda
  device object, so a script's own ``device.type == "cuda"`` checks keep choosing its CUDA path (AMP, pinned
  memory) rather than silently switching to its CPU path; tensors report ``mlu``, so ``x.device == device`` is
  False for such an object (compare ``x.device.type`` against ``torch.mlu`` or convert the script instead).
- ``Tensor.cuda()`` and ``Module.cuda()`` call ``.mlu()``.
- AMP: ``torch.autocast("cuda")`` / ``torch.amp.autocast(device_type="cuda")``, ``torch.amp.GradScaler("cuda")``,
  ``torch.amp.custom_fwd/custom_bwd(device_type="cuda")``, ``torch.is_autocast_enabled("cuda")``,
  ``torch.get_autocast_dtype("cuda")``; ``torch.cuda.amp.autocast``/``GradScaler`` through the table.
- distributed: ``backend="nccl"`` (also ``"cuda:nccl"``, ``dist.Backend.NCCL``) becomes ``"cncl"`` in
  ``init_process_group`` and ``new_group``; ``device_id=torch.device("cuda", N)`` becomes mlu.

Nothing is disabled: ``torch.jit.script`` keeps working (the wrapped factory functions are registered as the same
TorchScript builtins as the originals). Limits, stated rather than hidden: device strings inside TorchScript code
are compiled by TorchScript and are not translated; ``Tensor.is_cuda`` stays False on mlu tensors (PyTorch's own
code selects CUDA kernels by it); the redirection is per process (DataLoader workers started with ``spawn``
re-import the script, so they apply it again).
"""

from __future__ import annotations

import contextlib
import functools
import pkgutil
import re
from collections.abc import Callable
from typing import Any

import torch

from torch_mlu.contrib.api_map import ApiEntry, UnsupportedCudaAPIError, load_api_map

__all__ = ["apply", "is_applied", "restore", "to_mlu_backend", "to_mlu_device"]

_ORIG_DEVICE = torch.device
_ORIG_GENERATOR: type = torch.Generator
_CUDA_BACKEND = re.compile(r"\bnccl\b")

# (owner, attribute, had its own attribute, previous value), in the order applied
_patches: list[tuple[Any, str, bool, Any]] = []
# mapped classes whose constructor takes a device (others, like Stream and Event, stay the torch.mlu classes so that
# isinstance against what torch.mlu returns holds)
_TRANSLATING_CLASSES = frozenset({"torch.mlu.device"})
_jit_ids: list[int] = []


def to_mlu_device(device: Any) -> Any:
    """``"cuda"`` -> ``"mlu"``, ``"cuda:N"`` -> ``"mlu:N"``, ``torch.device("cuda", N)`` -> ``torch.device("mlu", N)``;
    anything else (ints, other devices, None) unchanged. Ints already mean the current accelerator in PyTorch 2.13."""
    if isinstance(device, str):
        if device == "cuda" or device.startswith("cuda:"):
            return "mlu" + device[4:]
        return device
    if isinstance(device, _ORIG_DEVICE) and device.type == "cuda":
        return _ORIG_DEVICE("mlu", device.index) if device.index is not None else _ORIG_DEVICE("mlu")
    return device


def to_mlu_backend(backend: Any) -> Any:
    """Process-group backend: ``"nccl"`` -> ``"cncl"``, ``"cuda:nccl,cpu:gloo"`` -> ``"mlu:cncl,cpu:gloo"``."""
    if not isinstance(backend, str):
        return backend
    return _CUDA_BACKEND.sub("cncl", backend.replace("cuda:", "mlu:"))


def _map_location(loc: Any) -> Any:
    if loc is None:
        count = max(torch.mlu.device_count(), 1)  # type: ignore[attr-defined]
        table = {f"cuda:{i}": f"mlu:{i}" for i in range(count)}
        table["cuda"] = "mlu"
        return table
    if isinstance(loc, dict):
        return {k: to_mlu_device(v) for k, v in loc.items()}
    return to_mlu_device(loc)


def _set(owner: Any, name: str, value: Any) -> None:
    """Patch ``owner.name`` (recorded for :func:`restore`). A replacement of a TorchScript builtin is registered as
    the same builtin, so ``torch.jit.script`` compiles calls to it exactly as before."""
    had = name in vars(owner)
    old = getattr(owner, name, None)
    _patches.append((owner, name, had, vars(owner).get(name)))
    setattr(owner, name, value)
    builtins = torch.jit._builtins
    op = builtins._find_builtin(old) if old is not None else None
    if op is not None and builtins._find_builtin(value) is None:
        builtins._register_builtin(value, op)
        _jit_ids.append(id(value))


def _wrap_device_kwarg(fn: Callable[..., Any], positional: int | None = None) -> Callable[..., Any]:
    """Wrapper translating ``device=`` (and the positional argument at index ``positional``, if given)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "device" in kwargs:
            kwargs["device"] = to_mlu_device(kwargs["device"])
        if positional is not None and len(args) > positional:
            args = (*args[:positional], to_mlu_device(args[positional]), *args[positional + 1 :])
        return fn(*args, **kwargs)

    return wrapper


def _wrap_to(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``Tensor.to`` / ``Module.to``: the device may be the first positional argument after self."""

    @functools.wraps(fn)
    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            args = (to_mlu_device(args[0]), *args[1:])
        if "device" in kwargs:
            kwargs["device"] = to_mlu_device(kwargs["device"])
        return fn(self, *args, **kwargs)

    return to


class _FactoryMeta(type):
    """``isinstance(x, torch.Generator)`` keeps working while ``torch.Generator`` is the translating factory."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._wrapped)  # type: ignore[attr-defined]

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._wrapped)  # type: ignore[attr-defined]


def _make_factory_class(orig: type) -> type:
    """A stand-in for the C class ``orig`` (``torch.Generator``) whose construction translates a cuda device and
    returns a real ``orig`` instance. Named ``torch.Generator`` because ``Generator.__reduce__`` refers to the class
    by that name: pickles made while applied load with or without it."""

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if args:
            args = (to_mlu_device(args[0]), *args[1:])
        if "device" in kwargs:
            kwargs["device"] = to_mlu_device(kwargs["device"])
        return orig(*args, **kwargs)

    ns = {"__new__": __new__, "__module__": "torch", "__qualname__": orig.__name__, "__doc__": orig.__doc__,
          "_wrapped": orig}
    return _FactoryMeta(orig.__name__, (), ns)


def _translate_all(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrapper of a mapped ``torch.mlu`` function translating every cuda device among its arguments."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*(to_mlu_device(a) for a in args), **{k: to_mlu_device(v) for k, v in kwargs.items()})

    return wrapper


def _translating_class(cls: Any) -> type:
    """Subclass of a mapped ``torch.mlu`` class (``torch.mlu.device``) whose constructor translates cuda devices."""

    base_init = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        base_init(self, *(to_mlu_device(a) for a in args), **{k: to_mlu_device(v) for k, v in kwargs.items()})

    return type(cls.__name__, (cls,), {"__init__": __init__, "__doc__": cls.__doc__, "__module__": cls.__module__})


class _UnsupportedAttributeError(UnsupportedCudaAPIError, AttributeError):
    """Reading an attribute of an unsupported CUDA class (``torch.cuda.GreenContext.create``)."""


class _UnsupportedMeta(type):
    """Stub type for an unsupported CUDA API: calling it or reading an attribute raises; isinstance is False."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise UnsupportedCudaAPIError(cls._entry.message())  # type: ignore[attr-defined]

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        # an AttributeError too, so hasattr() and introspection see a missing attribute instead of failing
        raise _UnsupportedAttributeError(f"{cls._entry.message()} (attribute {name!r})")  # type: ignore[attr-defined]

    def __instancecheck__(cls, obj: Any) -> bool:
        return False

    def __repr__(cls) -> str:
        return f"<unsupported on mlu: {cls._entry.api}>"  # type: ignore[attr-defined]


def _unsupported_stub(entry: ApiEntry, original: Any = None) -> type:
    attrs: dict[str, Any] = {"_entry": entry, "__doc__": entry.message()}
    # torch 2.15's Dynamo reads torch.cuda.use_mem_pool.__wrapped__ while it is imported (torch/_dynamo/variables/
    # torch.py, new in 2.15): the stub keeps the real API's __wrapped__ so importing Dynamo works under transfer_to_mlu.
    wrapped = getattr(original, "__wrapped__", None)
    if wrapped is not None:
        attrs["__wrapped__"] = wrapped
    return _UnsupportedMeta(entry.api.rsplit(".", 1)[1], (), attrs)


def _patch_api_table() -> None:
    table = load_api_map().available(torch.__version__)  # rows for names newer than this torch stay out
    for api in sorted(table.entries):
        entry = table.entries[api]
        if api in table.namespaces or "." not in api:
            continue  # a module: its names have rows of their own; the module object stays
        owner_path, name = api.rsplit(".", 1)
        try:
            owner = pkgutil.resolve_name(owner_path)
        except (ImportError, AttributeError):
            continue  # e.g. torch.distributed.* on a torch built without distributed
        if entry.status == "unsupported":
            _set(owner, name, _unsupported_stub(entry, getattr(owner, name, None)))
            continue
        target = pkgutil.resolve_name(entry.mlu)
        if entry.mlu in _TRANSLATING_CLASSES:
            target = _translating_class(target)
        elif callable(target) and not isinstance(target, type) and entry.mlu.startswith("torch.mlu."):
            target = _translate_all(target)
        _set(owner, name, target)


def _patch_devices() -> None:
    from torch.utils._device import _device_constructors

    constructors = _device_constructors()
    for owner in (torch, torch.fft):
        for name in sorted(dir(owner)):
            fn = getattr(owner, name, None)
            if not callable(fn) or isinstance(fn, type):
                continue
            if not ((owner is torch and name.endswith("_like")) or fn in constructors):
                continue
            _set(owner, name, _wrap_device_kwarg(fn))

    generator_cls = _make_factory_class(_ORIG_GENERATOR)
    _set(torch, "Generator", generator_cls)

    tensor = torch.Tensor
    _set(tensor, "to", _wrap_to(tensor.to))
    for name in ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided"):
        _set(tensor, name, _wrap_device_kwarg(getattr(tensor, name)))
    _set(tensor, "pin_memory", _wrap_device_kwarg(tensor.pin_memory, positional=1))

    def tensor_cuda(self: torch.Tensor, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """``Tensor.cuda`` under transfer_to_mlu: ``Tensor.mlu(device, non_blocking)``."""
        return self.mlu(to_mlu_device(device), non_blocking, **kwargs)  # type: ignore[attr-defined]

    _set(tensor, "cuda", tensor_cuda)

    module = torch.nn.Module
    _set(module, "to", _wrap_to(module.to))

    def module_cuda(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
        """``Module.cuda`` under transfer_to_mlu: ``Module.mlu(device)``."""
        return self.mlu(to_mlu_device(device))  # type: ignore[operator]

    _set(module, "cuda", module_cuda)

    orig_load = torch.load

    @functools.wraps(orig_load)
    def load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
        return orig_load(f, _map_location(map_location), *args, **kwargs)

    _set(torch, "load", load)

    loader = torch.utils.data.DataLoader
    orig_init = loader.__init__

    @functools.wraps(orig_init)
    def loader_init(self: Any, *args: Any, **kwargs: Any) -> None:
        if "pin_memory_device" in kwargs:
            kwargs["pin_memory_device"] = to_mlu_device(kwargs["pin_memory_device"])
        orig_init(self, *args, **kwargs)

    _set(loader, "__init__", loader_init)


def _patch_amp() -> None:
    autocast = torch.amp.autocast_mode.autocast
    orig_autocast_init = autocast.__init__

    @functools.wraps(orig_autocast_init)
    def autocast_init(self: Any, device_type: str, *args: Any, **kwargs: Any) -> None:
        orig_autocast_init(self, to_mlu_device(device_type), *args, **kwargs)

    _set(autocast, "__init__", autocast_init)

    scaler = torch.amp.grad_scaler.GradScaler
    orig_scaler_init = scaler.__init__

    @functools.wraps(orig_scaler_init)
    def scaler_init(self: Any, device: str = "cuda", *args: Any, **kwargs: Any) -> None:
        orig_scaler_init(self, to_mlu_device(device), *args, **kwargs)

    _set(scaler, "__init__", scaler_init)

    for owner, name in ((torch.amp, "custom_fwd"), (torch.amp, "custom_bwd")):
        fn = getattr(owner, name)

        def make(fn: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fn)
            def wrapper(*args: Any, device_type: str, **kwargs: Any) -> Any:
                return fn(*args, device_type=to_mlu_device(device_type), **kwargs)

            return wrapper

        _set(owner, name, make(fn))
    for name in ("is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype"):
        _set(torch, name, _wrap_device_kwarg(getattr(torch, name), positional=0))


def _check_cncl(backend: Any) -> None:
    """A clear error instead of c10d's "Invalid backend" when nccl was mapped to cncl but cncl is not there."""
    import torch.distributed as dist

    if isinstance(backend, str) and "cncl" in backend and not dist.is_backend_available("cncl"):
        raise RuntimeError(
            "transfer_to_mlu: backend 'nccl' maps to 'cncl', but the cncl backend is not registered "
            "(torch_mlu.distributed could not be imported)"
        )


def _patch_distributed() -> None:
    import torch.distributed as dist

    if not dist.is_available():
        return
    with contextlib.suppress(ImportError):  # if missing, init_process_group says so (see _check_cncl)
        import torch_mlu.distributed  # noqa: F401  (registers the cncl backend)
    for name in ("init_process_group", "new_group"):
        fn = getattr(dist, name)

        def make(fn: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fn)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if args and fn.__name__ == "init_process_group":
                    args = (to_mlu_backend(args[0]), *args[1:])
                if "backend" in kwargs:
                    kwargs["backend"] = to_mlu_backend(kwargs["backend"])
                _check_cncl(args[0] if args and fn.__name__ == "init_process_group" else kwargs.get("backend"))
                if "device_id" in kwargs:
                    kwargs["device_id"] = to_mlu_device(kwargs["device_id"])
                return fn(*args, **kwargs)

            return wrapper

        _set(dist, name, make(fn))
        if name == "init_process_group":
            _set(dist.distributed_c10d, name, dist.init_process_group)


def is_applied() -> bool:
    """True while the redirection is active."""
    return bool(_patches)


def apply() -> None:
    """Redirect CUDA to mlu in this process (idempotent). Runs on import of this module."""
    if _patches:
        return
    import torch_mlu  # noqa: F401  (registers torch.mlu when autoload is off)

    try:
        _patch_api_table()
        _patch_devices()
        _patch_amp()
        _patch_distributed()
    except BaseException:
        restore()
        raise


def restore() -> None:
    """Undo :func:`apply`: every patched attribute gets its previous value back (or is removed)."""
    while _patches:
        owner, name, had, old = _patches.pop()
        if had:
            setattr(owner, name, old)
        else:
            delattr(owner, name)
    table = torch.jit._builtins._get_builtin_table()
    while _jit_ids:
        table.pop(_jit_ids.pop(), None)


apply()
