# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Distributed training on ``mlu``: the ``cncl`` process-group backend for c10d (``torch.distributed``).

Importing this module registers ``cncl`` with ``torch.distributed.Backend.register_backend("cncl", ...,
extended_api=True, devices=["mlu"])`` (the third-party backend API of PyTorch 2.13), so that

- ``dist.init_process_group("cncl")``,
- ``dist.init_process_group(device_id=torch.device("mlu", rank))`` (c10d looks up
  ``Backend.default_device_backend_map["mlu"]``),
- ``dist.init_process_group()`` on a machine whose accelerator is ``mlu`` (``torch.accelerator``), and
- ``dist.get_default_backend_for_device("mlu")``

all pick ``cncl``; a CUDA script with ``nccl`` replaced by ``cncl`` and ``cuda`` by ``mlu`` runs unchanged under
``torchrun``, including ``DistributedDataParallel(model, device_ids=[rank])``.

Transport: c10d's own Gloo over TCP, with ``mlu`` tensors staged through pinned host memory asynchronously with
respect to the caller's current queue (see :mod:`torch_mlu.distributed._engine`); on MLU hardware CNCL would
replace the staging. Because the transport is c10d, the same script runs across machines (``torchrun --nnodes``).

Timeout: the ``timeout`` of ``init_process_group`` / ``new_group``; its default for a third-party backend is c10d's
``torch.distributed.constants.default_pg_timeout`` (30 minutes). A collective whose peer stops answering fails
with ``torch.distributed.DistBackendError`` after it; a peer process that exits fails it at once (its TCP
connection closes).

Devices: ``cncl`` handles ``mlu`` tensors. A cpu tensor raises ``ValueError`` naming ``gloo`` as the backend for
cpu tensors, unless the group was created as ``init_process_group("mlu:cncl,cpu:gloo")``, in which case cpu tensors
go straight to the Gloo transport.

Options: ``pg_options=ProcessGroupCNCL.Options(check_arguments=False)`` turns off the cross-rank argument check
(see ``_checks``; it exchanges a small descriptor of each call over direct TCP connections between the ranks, see
``_exchange``) for one group. Environment: ``CATCH_CNCL_CHECK=0`` turns it off by default; ``CATCH_CNCL_CHECK_ADDR``
sets the address this rank's check connections listen on (default: the local address of the route to
``MASTER_ADDR``); ``CATCH_CNCL_POOL_BYTES`` caps the idle pinned staging memory (default 1 GiB).
"""

from __future__ import annotations

import torch.distributed as dist
from torch._C._distributed_c10d import _DistributedBackendOptions

from torch_mlu.distributed.process_group import CNCLOptions, ProcessGroupCNCL

__all__ = ["BACKEND_NAME", "CNCLOptions", "ProcessGroupCNCL", "is_cncl_available"]

#: The name users pass to ``init_process_group`` (the Cambricon CNCL name, as ``nccl`` for CUDA).
BACKEND_NAME = "cncl"


def is_cncl_available() -> bool:
    """True when ``torch.distributed`` is usable and the ``cncl`` backend is registered (``is_nccl_available``)."""
    return dist.is_available() and BACKEND_NAME.upper() in dist.Backend._plugins


def _create_cncl(common: _DistributedBackendOptions, backend_options: object) -> ProcessGroupCNCL:
    """c10d creator (``extended_api=True``): ``common`` carries store, group_rank, group_size, timeout.

    ``backend_options`` is the ``pg_options`` of ``init_process_group`` / ``new_group``: ``None`` or a
    :class:`CNCLOptions` (``ProcessGroupCNCL.Options``); anything else raises ``TypeError``.
    """
    if backend_options is not None and not isinstance(backend_options, CNCLOptions):
        raise TypeError(f"cncl pg_options must be ProcessGroupCNCL.Options, got {type(backend_options).__name__}")
    return ProcessGroupCNCL(common.store, common.group_rank, common.group_size, common.timeout, backend_options)


def _register() -> None:
    if dist.is_available() and BACKEND_NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND_NAME, _create_cncl, extended_api=True, devices=["mlu"])


_register()
