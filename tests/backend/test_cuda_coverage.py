# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""How much of ``torch.cuda`` ``torch.mlu`` has, computed from the live modules so the number cannot drift.

Counted: the names of ``torch.cuda.__all__`` (its public API), minus the deprecated ones (marked with
``typing_extensions.deprecated``, i.e. a ``__deprecated__`` attribute, and the legacy ``*Storage`` classes, which
warn ``TypedStorage is deprecated``). A name counts as present when ``torch.mlu`` has it under the mlu spelling
(CUDA -> MLU, cuda -> mlu, nvtx -> cnpx, nccl -> cncl, cudart -> mlurt, ``CudaError`` -> ``MLUError``). Names that
are still missing must be listed, with the reason, in ``torch_mlu.mlu._MISSING`` (and catch/README.md), and must
raise an AttributeError that names the reason.
"""

from __future__ import annotations

import pytest
import torch

import torch_mlu.mlu

FLOOR = 0.90
_RENAMES = {"nvtx": "cnpx", "nccl": "cncl", "cudart": "mlurt", "CudaError": "MLUError",
            "DeferredCudaCallError": "DeferredMluCallError", "cudaStatus": "mluStatus"}


def mlu_name(cuda_name: str) -> str:
    """The torch.mlu spelling of a torch.cuda name."""
    if cuda_name in _RENAMES:
        return _RENAMES[cuda_name]
    return cuda_name.replace("CUDA", "MLU").replace("Cuda", "Mlu").replace("cuda", "mlu")


def counted_cuda_names() -> list[str]:
    """Public, non-deprecated torch.cuda names."""
    out = []
    for name in torch.cuda.__all__:
        obj = getattr(torch.cuda, name)
        if getattr(obj, "__deprecated__", None):
            continue
        if isinstance(obj, type) and issubclass(obj, torch.storage._LegacyStorage):
            continue
        out.append(name)
    return sorted(out)


def test_coverage_of_torch_cuda_api():
    names = counted_cuda_names()
    assert len(names) > 90, "torch.cuda.__all__ looks truncated"
    missing = [n for n in names if not hasattr(torch.mlu, mlu_name(n))]
    share = 1 - len(missing) / len(names)
    print(f"\ntorch.mlu has {len(names) - len(missing)} of {len(names)} public non-deprecated torch.cuda names "
          f"({share:.1%}); missing: {', '.join(mlu_name(n) for n in missing)}")
    assert share >= FLOOR, f"coverage {share:.1%} below {FLOOR:.0%}; missing: {missing}"


def test_missing_names_are_documented_and_raise_with_reason():
    names = counted_cuda_names()
    missing = {mlu_name(n) for n in names if not hasattr(torch.mlu, mlu_name(n))}
    undocumented = missing - set(torch_mlu.mlu._MISSING)
    assert not undocumented, f"missing without a reason in torch_mlu.mlu._MISSING: {sorted(undocumented)}"
    stale = {n for n in torch_mlu.mlu._MISSING if hasattr(torch.mlu, n)}
    assert not stale, f"listed as missing but present: {sorted(stale)}"
    for name in missing:
        with pytest.raises(AttributeError, match=f"torch.mlu.{name} is not available on Catch's emulated MLU: .+"):
            getattr(torch.mlu, name)


def test_all_lists_only_real_names():
    absent = [n for n in torch.mlu.__all__ if not hasattr(torch.mlu, n)]
    assert not absent
    for n in ("amp", "graphs", "memory", "random", "streams", "cnpx", "profiler", "cncl"):
        __import__(f"torch.mlu.{n}")
