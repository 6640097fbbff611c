# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Graph mode for ``mlu``: the ``torch.compile`` backend with fusion groups.

``torch.compile(model, backend="mlu")`` (also ``"catch"``; both through the ``torch_dynamo_backends`` entry point)
traces the model with Dynamo and AOTAutograd, partitions each ATen graph into fusion groups of supported ops, compiles
each group with PyTorch Inductor's C++ code generation running on the device's memory, and runs every other node
as an eager mlu kernel. Importing this package registers Dynamo's device interface for ``mlu``
(:mod:`torch_mlu.inductor.device_interface`). Plain ``torch.compile(model)`` (default Inductor) on mlu is
:mod:`torch_mlu.inductor`'s.

- ``FUSE_GROUP_DEBUG_MODE=cpu|eager|layerwise`` switches how fusion groups run (:mod:`.debug_mode`).
- :func:`last_report` / ``CATCH_FUSE_REPORT=<path>``: the groups formed and the nodes left out (:mod:`.report`).
- ``CATCH_FUSE_KERNELS=auto|catch|aten``: ``aten`` leaves the partitioning of training graphs to Inductor alone
  (:mod:`.kernels`).
"""

from __future__ import annotations

from torch_mlu import fake_kernels  # noqa: F401  (the torch_mlu ops' fake kernels, for tracing the rewritten graphs)
from torch_mlu.compile.backend import mlu_backend
from torch_mlu.compile.debug_mode import MODE_ENV, MODES, debug_mode
from torch_mlu.compile.errors import FuseConfigError
from torch_mlu.compile.kernels import KERNELS_ENV
from torch_mlu.compile.report import REPORT_ENV, FuseReport, all_reports, last_report
from torch_mlu.host_view import host_view
from torch_mlu.inductor import device_interface as _device_interface

__all__ = [
    "MODES",
    "MODE_ENV",
    "REPORT_ENV",
    "KERNELS_ENV",
    "FuseConfigError",
    "FuseReport",
    "all_reports",
    "debug_mode",
    "host_view",
    "last_report",
    "mlu_backend",
]

_device_interface.register()
