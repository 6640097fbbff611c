# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""mlu tensors passed between processes through ``torch.multiprocessing``, as cuda tensors pass on CUDA IPC handles.

PyTorch 2.13's reductions (``torch/multiprocessing/reductions.py``) share CPU storages through shared memory and cuda
storages through ``_share_cuda_``; they have no hook for a PrivateUse1 device, so an mlu storage reached the CPU
path and raised ``_share_fd_: only available on CPU``. :func:`install` registers :func:`reduce_storage` for
``torch.UntypedStorage`` with multiprocessing's ``ForkingPickler``, as torch's ``init_reductions`` registers its own:
an mlu storage goes by the runtime's memory handle (``catch/csrc/runtime/mem_handle.h``: a file descriptor, which
travels as ``multiprocessing.reduction.DupFd`` like a CPU storage's), any other storage to upstream's reducer.
Tensors keep upstream's ``reduce_tensor``, which sends a tensor as its typed storage plus size, stride, offset and
``requires_grad``, so views, Parameters and the non-leaf error arrive as upstream makes them.

What the receiver gets, as with cuda:

- the same device memory: a write by either process is seen by the other once the writer's device work is done
  (the sender synchronizes its device when it shares);
- memory that lives while either process holds it: a sender freeing (or exiting) leaves the receiver's tensor
  valid, and the sender's caching allocator never reuses a block it shared;
- a storage that is not resizable, and that cannot be sent on: cuda's "received from another process" error;
- in a child forked after mlu was initialized, cuda's fork error (``torch.mlu._lazy_init``).

Unlike cuda's reducer, which refuses a bare storage, an mlu ``UntypedStorage`` may also be sent by itself.
"""

from __future__ import annotations

import multiprocessing.reduction
import os
from typing import Any

import torch
from torch.multiprocessing import reductions as _upstream

from torch_mlu import _C, mlu


def rebuild_storage(df: Any, device: int, size: int, offset: int, nbytes: int) -> torch.UntypedStorage:
    """The receiving side of :func:`reduce_storage`: ``nbytes`` bytes at ``offset`` of the sender's allocation of
    ``size`` bytes on mlu ``device``, mapped from the file ``df`` (a ``DupFd``) names. A storage already received in
    this process (keyed like upstream's ``rebuild_storage_fd``, by the file's identity, and the offset) is returned
    again, so views sent separately still share it. Raises cuda's fork error in a child forked after mlu was
    initialized."""
    fd = df.detach()
    try:
        key = ("mlu", *_upstream.fd_id(fd), offset)
        storage = _upstream.storage_from_cache(torch.UntypedStorage, key)
        if storage is not None:
            return storage
        mlu._lazy_init()
        storage = _C._new_shared_mlu(device, fd, size, offset, nbytes)
        _upstream.shared_cache[key] = _upstream.StorageWeakRef(storage)
        return storage
    finally:
        os.close(fd)


def rebuild_empty_storage(device: torch.device) -> torch.UntypedStorage:
    """The receiving side of an empty mlu storage: a new empty one on ``device`` (cuda sends no handle either)."""
    return torch.UntypedStorage(0, device=device)


def reduce_storage(storage: torch.UntypedStorage) -> tuple[Any, tuple[Any, ...]]:
    """``ForkingPickler`` reducer of ``torch.UntypedStorage``: an mlu storage by memory handle (see the module's
    docstring), any other by upstream's ``reduce_storage``. Raises cuda's error for a storage this process received
    from another one."""
    if storage.device.type != "mlu":
        return _upstream.reduce_storage(storage)
    if storage.nbytes() == 0:
        return (rebuild_empty_storage, (storage.device,))
    device, fd, size, offset = _C._share_mlu_(storage)
    return (rebuild_storage, (multiprocessing.reduction.DupFd(fd), device, size, offset, storage.nbytes()))


def install() -> None:
    """Registers :func:`reduce_storage` with ``multiprocessing.reduction.ForkingPickler`` (run when torch_mlu is
    imported, after ``torch.multiprocessing`` registered upstream's reducers)."""
    multiprocessing.reduction.ForkingPickler.register(torch.UntypedStorage, reduce_storage)
