# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""int8 inference on ``mlu`` for Conv2d and Linear, through torch.ao.quantization's eager-mode flows.

As in Cambricon's cnml flow only conv and linear are quantized: each quantizes its float input per tensor (uint8
with a zero point), multiplies int8 x int8 into int32 in a native kernel, rescales per output channel and returns
float; every other op stays float. Weights are int8, symmetric, one scale per output channel.

Flows (see catch/README.md, "Quantized inference"):

- dynamic: ``quantize_dynamic(model)`` or ``torch.ao.quantization.quantize_dynamic(model, {nn.Linear:
  get_default_dynamic_qconfig()}, dtype=torch.qint8, mapping=get_dynamic_quant_module_mappings())``;
- static PTQ: ``prepare`` -> calibrate on mlu -> ``convert`` (or the upstream functions with
  ``prepare_custom_config_dict=get_prepare_custom_config_dict()`` and ``mapping=get_static_quant_module_mappings()``);
- QAT: ``prepare_qat`` -> train on mlu -> ``convert`` (upstream: ``prepare_qat(model,
  mapping=get_qat_module_mappings())``).
"""

from torch_mlu.quantization.api import convert, prepare, prepare_qat, quantize_dynamic
from torch_mlu.quantization.mappings import (
    get_dynamic_quant_module_mappings,
    get_prepare_custom_config_dict,
    get_qat_module_mappings,
    get_static_quant_module_mappings,
)
from torch_mlu.quantization.modules import Conv2d, DynamicLinear, Linear
from torch_mlu.quantization.observed import ObservedConv2d, ObservedLinear, QATConv2d, QATLinear
from torch_mlu.quantization.qconfig import get_default_dynamic_qconfig, get_default_qat_qconfig, get_default_qconfig

__all__ = [
    "Conv2d",
    "DynamicLinear",
    "Linear",
    "ObservedConv2d",
    "ObservedLinear",
    "QATConv2d",
    "QATLinear",
    "convert",
    "get_default_dynamic_qconfig",
    "get_default_qat_qconfig",
    "get_default_qconfig",
    "get_dynamic_quant_module_mappings",
    "get_prepare_custom_config_dict",
    "get_qat_module_mappings",
    "get_static_quant_module_mappings",
    "prepare",
    "prepare_qat",
    "quantize_dynamic",
]
