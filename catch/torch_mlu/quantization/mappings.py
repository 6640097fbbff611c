# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Module mappings for ``torch.ao.quantization`` eager-mode APIs (each call returns a fresh dict).

- :func:`get_prepare_custom_config_dict` -> ``prepare(..., prepare_custom_config_dict=...)``
- :func:`get_qat_module_mappings` -> ``prepare_qat(..., mapping=...)``
- :func:`get_static_quant_module_mappings` -> ``convert(..., mapping=...)`` (after prepare or prepare_qat)
- :func:`get_dynamic_quant_module_mappings` -> ``quantize_dynamic(..., mapping=...)``
"""

from __future__ import annotations

from typing import Any

from torch import nn

from torch_mlu.quantization.modules import Conv2d, DynamicLinear, Linear
from torch_mlu.quantization.observed import ObservedConv2d, ObservedLinear, QATConv2d, QATLinear


def get_prepare_custom_config_dict() -> dict[str, Any]:
    """``float_to_observed_custom_module_class``: nn.Linear/nn.Conv2d -> modules observing their inputs."""
    return {"float_to_observed_custom_module_class": {nn.Linear: ObservedLinear, nn.Conv2d: ObservedConv2d}}


def get_qat_module_mappings() -> dict[type, type]:
    """nn.Linear/nn.Conv2d -> QAT modules with fake-quantized inputs and per-channel weights."""
    return {nn.Linear: QATLinear, nn.Conv2d: QATConv2d}


def get_static_quant_module_mappings() -> dict[type, type]:
    """Observed and QAT modules -> int8 mlu modules."""
    return {ObservedLinear: Linear, ObservedConv2d: Conv2d, QATLinear: Linear, QATConv2d: Conv2d}


def get_dynamic_quant_module_mappings() -> dict[type, type]:
    """nn.Linear -> :class:`~torch_mlu.quantization.modules.DynamicLinear`."""
    return {nn.Linear: DynamicLinear}
