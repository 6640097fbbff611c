# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Real clients (transformers, timm, accelerate) training on mlu against CPU (tox env ``clients``).

Each test records its per-step losses on both devices; the terminal summary prints the maximum |loss difference|
per model, which is what the CI log and issue notes quote.
"""

from __future__ import annotations

import sys

import pytest
import torch

import torch_mlu  # noqa: E402,F401  (loud failure if the backend is not built)

# PyPI's torchvision wheels for Linux are CUDA builds: with the CPU torch their native library cannot load
# (it needs libtorch_cuda), so their ops are never defined, and torchvision 0.28's import then fails in
# _meta_registrations, which registers fake kernels for torchvision::nms and ::qnms without checking. timm only
# uses torchvision's pure-Python parts (FrozenBatchNorm2d, transforms); defining the two schemas (as the native
# library would) lets torchvision import. Its native ops stay unavailable; no test here uses them.
_TORCHVISION_SCHEMAS = ("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
                        "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_torchvision_lib = None
try:
    import torchvision  # noqa: F401
except RuntimeError as exc:
    if "torchvision::nms" not in str(exc):
        raise
    for _name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
        del sys.modules[_name]
    _torchvision_lib = torch.library.Library("torchvision", "FRAGMENT")
    for _schema in _TORCHVISION_SCHEMAS:
        _torchvision_lib.define(_schema)
    import torchvision  # noqa: F401

pytest.importorskip("transformers")
pytest.importorskip("timm")
pytest.importorskip("accelerate")

LOSS_DIFFS: dict[str, tuple[float, float, int]] = {}  # model -> (max |diff|, tolerance, steps)


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001  (pytest hook signature)
    if not LOSS_DIFFS:
        return
    terminalreporter.section("per-model max |loss(mlu) - loss(cpu)|")
    for name, (diff, tol, steps) in sorted(LOSS_DIFFS.items()):
        terminalreporter.write_line(f"{name:<34} {diff:.3e}  (tolerance {tol:.0e}, {steps} steps)")


@pytest.fixture(autouse=True)
def _deterministic():
    torch.manual_seed(0)
    yield
    torch.mlu.synchronize()
