# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""torch_mlu: the Catch backend, the ``mlu`` device for PyTorch 2.13 through PrivateUse1.

Importing this package (or just ``import torch``, through the ``torch.backends`` entry point that PyTorch 2.13
autoloads; ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` disables it) renames PrivateUse1 to ``mlu``, registers ``torch.mlu``
(mirroring ``torch.cuda``) and generates ``Tensor.mlu()``, ``Tensor.is_mlu``, ``Module.mlu()`` and the storage
methods, as PyTorch's reference backend torch_openreg does.

The device runs on an emulated MLU runtime. Environment variables:

- ``MLU_VISIBLE_DEVICE_COUNT``: number of devices (default 2).
- ``MLU_VISIBLE_DEVICES``: which of them are visible, parsed like ``CUDA_VISIBLE_DEVICES`` (takes precedence).
- ``CATCH_MLU_MEMORY_BYTES``: capacity of each device in bytes (default 8 GiB); exceeding it raises
  ``torch.OutOfMemoryError``.
- ``CATCH_FALLBACK_STRICT=1``: an op without an mlu kernel raises instead of falling back to the CPU.
"""



def _autoload() -> None:
    """Entry point of group ``torch.backends`` (PyTorch 2.13 ``torch._import_device_backends``).

    Importing this package does all registration, so there is nothing left to do here. It is defined before
    ``import torch``: when a script imports ``torch_mlu`` first, that ``import torch`` runs torch's autoload, which
    looks this function up while the package is still initializing; registration then happens when it returns.
    """


import sys  # noqa: E402

import torch  # noqa: E402

# _C registers the device (guard, allocator, hooks, static kernels) as it loads; optim registers its op.
from torch_mlu import _C, backends, mlu, optim  # noqa: E402,F401
from torch_mlu._version import __version__  # noqa: E402

__all__ = ["__version__", "mlu"]

# The device itself initializes lazily, at its first use (torch.mlu._lazy_init).

# Backward of mlu tensors runs on the thread that calls it, as for CPU tensors, not on the autograd engine's mlu
# device thread: device kernels run synchronously on the calling thread, so a device thread buys no overlap, and it
# costs two thread hand-offs per backward plus a second OpenMP team whose spinning workers compete with the first
# (the digits training step at 2 threads took 2.6x CPU's time with it). PyTorch's own switch, per thread
# (this one: the thread that imports torch); torch.autograd.set_multithreading_enabled(True) restores device threads.
torch._C._set_multithreading_enabled(False)
torch.utils.rename_privateuse1_backend("mlu")
torch._register_device_module("mlu", mlu)
# torch._register_device_module makes `torch.mlu` an alias of torch_mlu.mlu in sys.modules; alias its submodules
# too, so `import torch.mlu.amp` (as `import torch.cuda.amp` works) yields the same module objects, not a second copy.
for _name in ("amp", "cncl", "cnpx", "graphs", "memory", "profiler", "random", "streams"):
    sys.modules[f"torch.mlu.{_name}"] = sys.modules[f"torch_mlu.mlu.{_name}"]
backends.install()
# mlu tensors through torch.multiprocessing (ForkingPickler), registered after torch.multiprocessing's own reducers.
from torch_mlu import reductions  # noqa: E402

reductions.install()
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
)

# Inductor's code generators for mlu, registered lazily when Inductor first lowers a graph (default torch.compile).
from torch_mlu.inductor import lazy_registration  # noqa: E402

lazy_registration.install(mlu)

# The "cncl" c10d backend for mlu tensors (torch.distributed is already imported by `import torch`).
if torch.distributed.is_available():
    from torch_mlu import distributed  # noqa: E402,F401
