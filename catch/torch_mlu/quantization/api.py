# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Thin wrappers over torch.ao.quantization's eager-mode functions with the mlu mappings filled in.

Each wrapper is one upstream call (``prepare``, ``prepare_qat``, ``convert``, ``quantize_dynamic`` of
torch.ao.quantization in PyTorch 2.13) plus the qconfig/mapping arguments documented in :mod:`.mappings`; calling
the upstream functions with those arguments directly is equivalent. Only ``nn.Conv2d`` and ``nn.Linear`` get a
qconfig (unless a module already carries a ``qconfig`` attribute, which wins, as in upstream propagation).
"""

from __future__ import annotations

import copy

import torch
from torch import nn
from torch.ao import quantization as tq
from torch.ao.quantization import QConfig

from torch_mlu.quantization.mappings import (
    get_dynamic_quant_module_mappings,
    get_prepare_custom_config_dict,
    get_qat_module_mappings,
    get_static_quant_module_mappings,
)
from torch_mlu.quantization.qconfig import get_default_dynamic_qconfig, get_default_qat_qconfig, get_default_qconfig


def _targets(qconfig: QConfig) -> dict[type, QConfig]:
    return {nn.Conv2d: qconfig, nn.Linear: qconfig}


def prepare(model: nn.Module, qconfig: QConfig | None = None, inplace: bool = False) -> nn.Module:
    """Static PTQ step 1: swap Conv2d/Linear for modules that observe their inputs (and nothing else).

    ``qconfig`` defaults to :func:`get_default_qconfig` (HistogramObserver inputs, per-channel weights). Run
    calibration batches through the result on ``mlu``, then :func:`convert`. Upstream equivalent:
    ``propagate_qconfig_(model, {Conv2d: qc, Linear: qc}); prepare(model, allow_list=set(),
    prepare_custom_config_dict=get_prepare_custom_config_dict())``.
    """
    if not inplace:
        model = copy.deepcopy(model)
    tq.propagate_qconfig_(model, _targets(qconfig or get_default_qconfig()))
    return tq.prepare(model, inplace=True, allow_list=set(),
                      prepare_custom_config_dict=get_prepare_custom_config_dict())


def prepare_qat(model: nn.Module, qconfig: QConfig | None = None, inplace: bool = False) -> nn.Module:
    """QAT step 1: swap Conv2d/Linear for QAT modules (FakeQuantize on inputs and per-channel weights).

    ``model`` must be in training mode (upstream rule). ``qconfig`` defaults to :func:`get_default_qat_qconfig`.
    Create the optimizer after this call, train on ``mlu``, then :func:`convert`. Upstream equivalent:
    ``prepare_qat(model, mapping=get_qat_module_mappings())`` with the qconfig set on Conv2d/Linear.
    """
    if not inplace:
        model = copy.deepcopy(model)
    tq.propagate_qconfig_(model, _targets(qconfig or get_default_qat_qconfig()))
    return tq.prepare_qat(model, mapping=get_qat_module_mappings(), inplace=True)


def convert(model: nn.Module, inplace: bool = False) -> nn.Module:
    """Step 2 of both flows: observed/QAT Conv2d/Linear -> int8 mlu modules (``convert(model,
    mapping=get_static_quant_module_mappings())``). The result should be used in eval mode."""
    return tq.convert(model, mapping=get_static_quant_module_mappings(), inplace=inplace)


def quantize_dynamic(model: nn.Module, qconfig_spec: dict | set | None = None, inplace: bool = False) -> nn.Module:
    """Dynamic int8 quantization of Linear layers: ``torch.ao.quantization.quantize_dynamic(model, qconfig_spec,
    dtype=torch.qint8, mapping=get_dynamic_quant_module_mappings())``; ``qconfig_spec`` defaults to
    ``{nn.Linear: get_default_dynamic_qconfig()}`` (per-channel weights)."""
    spec = qconfig_spec if qconfig_spec is not None else {nn.Linear: get_default_dynamic_qconfig()}
    return tq.quantize_dynamic(model, spec, dtype=torch.qint8, mapping=get_dynamic_quant_module_mappings(),
                               inplace=inplace)
