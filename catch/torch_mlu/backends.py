# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.backends.mlu`` (and ``torch.backends.cnnl``): the mlu backend's switches, as ``torch.backends.cuda`` and
``torch.backends.cudnn`` are CUDA's, plus ``torch.is_mlu_available()`` and ``torch.version.mlu``.

- ``torch.backends.mlu.matmul.allow_tf32`` / ``allow_fp16_reduced_precision_reduction`` /
  ``allow_bf16_reduced_precision_reduction``: Cambricon's names for the GEMM precision switches.
- ``torch.backends.mlu.cnnl`` (= ``torch.backends.cnnl``): ``enabled``, ``benchmark``, ``deterministic``,
  ``allow_tf32`` for convolutions (cuDNN's switches).

The emulated device computes GEMMs and convolutions in full precision with deterministic kernels whatever the
switches say (``torch.mlu.is_tf32_supported()`` is False); they are kept, validated and readable so scripts that set
them run unchanged. Defaults follow CUDA's: matmul TF32 off, convolution TF32 on, reduced-precision reductions on.
"""

from __future__ import annotations

import sys
import types

import torch

__all__ = ["cnnl", "is_built", "matmul"]


class _Flags(types.ModuleType):
    """A module whose attributes are boolean switches (assigning a non-bool raises TypeError)."""

    _defaults: dict[str, bool] = {}

    def __init__(self, name: str, defaults: dict[str, bool], doc: str) -> None:
        super().__init__(name, doc)
        object.__setattr__(self, "_defaults", dict(defaults))
        for k, v in defaults.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, name: str, value: object) -> None:
        if name in self._defaults and not isinstance(value, bool):
            raise TypeError(f"{self.__name__}.{name} must be a bool, got {type(value).__name__}")
        object.__setattr__(self, name, value)


matmul = _Flags("torch.backends.mlu.matmul", {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
                                               "allow_bf16_reduced_precision_reduction": True},
                "GEMM precision switches of the mlu backend.")
cnnl = _Flags("torch.backends.cnnl", {"enabled": True, "benchmark": False, "deterministic": False,
                                      "allow_tf32": True}, "Convolution switches of the mlu backend (cuDNN's).")


def is_built() -> bool:
    """True: this PyTorch has the mlu backend."""
    return True


def install() -> None:
    """Register ``torch.backends.mlu``, ``torch.backends.cnnl``, ``torch.is_mlu_available`` and
    ``torch.version.mlu`` (called by ``import torch_mlu``)."""
    from torch_mlu._version import __version__

    this = sys.modules[__name__]
    sys.modules["torch.backends.mlu"] = this
    sys.modules["torch.backends.cnnl"] = cnnl
    sys.modules["torch.backends.mlu.matmul"] = matmul
    torch.backends.mlu = this  # type: ignore[attr-defined]
    torch.backends.cnnl = cnnl  # type: ignore[attr-defined]
    torch.is_mlu_available = torch.mlu.is_available  # type: ignore[attr-defined]
    torch.version.mlu = __version__  # type: ignore[attr-defined]
