# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""QConfigs for mlu int8 inference, and reading quantization parameters out of torch.ao observers.

The qconfigs are ordinary ``torch.ao.quantization.QConfig`` objects built from torch.ao observers and fake-quantize
modules, so they run on ``mlu`` tensors and plug into ``prepare`` / ``prepare_qat`` / ``quantize_dynamic``:

- weights: int8, symmetric, one scale per output channel (``PerChannelMinMaxObserver``, ``ch_axis=0``);
- activations: uint8 per tensor with a zero point (``HistogramObserver`` or ``MinMaxObserver``), full 0..255 range:
  the mlu kernels accumulate in int32, so the x86 ``reduce_range`` workaround (7-bit activations) is not needed.

In this flow a quantized conv/linear quantizes its *input* and returns float, so the ``activation`` observer of a
qconfig observes the input of each Conv2d/Linear; what PyTorch's eager ``prepare`` attaches to module *outputs* is
replaced by :data:`FLOAT_OUTPUT` (a ``PlaceholderObserver`` with dtype float: outputs stay float).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.ao.quantization import QConfig
from torch.ao.quantization.fake_quantize import FakeQuantize, FakeQuantizeBase
from torch.ao.quantization.observer import (
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
)

from torch_mlu.quantization.functional import storage_dtype

FLOAT_OUTPUT = PlaceholderObserver.with_args(dtype=torch.float)

_PER_TENSOR = (torch.per_tensor_affine, torch.per_tensor_symmetric)
_SYMMETRIC = (torch.per_tensor_symmetric, torch.per_channel_symmetric)

_WEIGHT_OBSERVER = PerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_symmetric,
                                                      ch_axis=0)


def get_default_qconfig(activation_observer: str = "histogram") -> QConfig:
    """Post-training static qconfig: ``activation_observer`` ``"histogram"`` (``HistogramObserver``, L2-optimal
    range, slower) or ``"minmax"`` (``MinMaxObserver``) for uint8 per-tensor inputs; per-channel symmetric int8
    weights. Raises ``ValueError`` for another observer name."""
    if activation_observer == "histogram":
        act = HistogramObserver.with_args(dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False)
    elif activation_observer == "minmax":
        act = MinMaxObserver.with_args(dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False)
    else:
        raise ValueError(f"activation_observer must be 'histogram' or 'minmax', got {activation_observer!r}")
    return QConfig(activation=act, weight=_WEIGHT_OBSERVER)


def get_default_qat_qconfig() -> QConfig:
    """QAT qconfig: ``FakeQuantize`` over ``MovingAverageMinMaxObserver`` (uint8 per tensor) for conv/linear inputs
    and over ``MovingAveragePerChannelMinMaxObserver`` (int8, symmetric, ``ch_axis=0``) for weights."""
    act = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                 dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False)
    weight = FakeQuantize.with_args(observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
                                    dtype=torch.qint8, qscheme=torch.per_channel_symmetric, ch_axis=0)
    return QConfig(activation=act, weight=weight)


def get_default_dynamic_qconfig() -> QConfig:
    """Dynamic qconfig (torch's ``per_channel_dynamic_qconfig`` shape): activation qparams are chosen per call from
    the input's range; weights int8 per-channel symmetric."""
    return QConfig(activation=PlaceholderObserver.with_args(dtype=torch.quint8, is_dynamic=True),
                   weight=_WEIGHT_OBSERVER)


def output_stays_float(qconfig: QConfig) -> QConfig:
    """``qconfig`` with :data:`FLOAT_OUTPUT` as activation: what our observed/QAT modules carry after ``from_float``,
    so torch's ``prepare`` attaches a pass-through placeholder (not a second observer) to their outputs."""
    return QConfig(activation=FLOAT_OUTPUT, weight=qconfig.weight)


@dataclass(frozen=True)
class ActivationQParams:
    """Per-tensor activation quantization: ``q = clamp(round(x / scale) + zero_point)`` in ``dtype``."""

    scale: float
    zero_point: int
    dtype: torch.dtype  # torch.quint8 or torch.qint8


def _observer_of(obs: Any) -> Any:
    return obs.activation_post_process if isinstance(obs, FakeQuantizeBase) else obs


def _check_calibrated(obs: Any, what: str) -> None:
    inner = _observer_of(obs)
    lo = getattr(inner, "min_val", None)
    if isinstance(lo, torch.Tensor) and (lo.numel() == 0 or bool(torch.isinf(lo.detach().cpu()).any())):
        raise RuntimeError(f"{what}: the observer has seen no data; run calibration (forward passes) on the "
                           "prepared model before convert")


def activation_qparams(obs: Any, what: str) -> ActivationQParams:
    """Scale/zero point of a calibrated per-tensor activation observer or FakeQuantize (on any device).

    ``what`` names the module in errors. Raises ``RuntimeError`` if the observer saw no data and ``ValueError`` for a
    dtype other than quint8/qint8 or a per-channel activation scheme.
    """
    dtype = getattr(obs, "dtype", None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"{what}: the activation observer has no dtype")
    storage_dtype(dtype)  # raises ValueError for float16, quint4x2, ...
    qscheme = getattr(obs, "qscheme", torch.per_tensor_affine)
    if qscheme not in _PER_TENSOR:
        raise ValueError(f"{what}: activations are quantized per tensor on mlu, got qscheme {qscheme}")
    _check_calibrated(obs, what)
    scale, zero_point = obs.calculate_qparams()
    return ActivationQParams(float(scale.detach().cpu().reshape(-1)[0]),
                             int(zero_point.detach().cpu().reshape(-1)[0]), dtype)


def weight_qparams(obs: Any, out_channels: int, what: str) -> torch.Tensor:
    """float32 (out_channels,) scales of a symmetric int8 weight observer that has seen the weight (CPU tensor).

    Per-tensor schemes give one scale repeated per channel. Raises ``ValueError`` for a non-qint8 dtype, an affine
    (non-zero zero point) scheme, or a per-channel axis other than 0 (the output channel).
    """
    if getattr(obs, "dtype", None) != torch.qint8:
        raise ValueError(f"{what}: mlu int8 kernels need qint8 weights, got {getattr(obs, 'dtype', None)}")
    qscheme = getattr(obs, "qscheme", None)
    if qscheme not in _SYMMETRIC:
        raise ValueError(f"{what}: weights must be symmetric (per_channel_symmetric or per_tensor_symmetric), "
                         f"got {qscheme}")
    if qscheme == torch.per_channel_symmetric and getattr(obs, "ch_axis", 0) != 0:
        raise ValueError(f"{what}: per-channel weight scales must be along the output channel (ch_axis=0)")
    _check_calibrated(obs, what)
    scale, zero_point = obs.calculate_qparams()
    scale = scale.detach().to("cpu", torch.float32).reshape(-1)
    if bool((zero_point.detach().cpu() != 0).any()):
        raise ValueError(f"{what}: symmetric weights need zero points of 0")
    if scale.numel() == 1:
        scale = scale.expand(out_channels).contiguous()
    if scale.numel() != out_channels:
        raise ValueError(f"{what}: {scale.numel()} weight scales for {out_channels} output channels")
    return scale


def quantize_weight(weight: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """int8 weight (same shape, on ``weight``'s device) quantized per output channel with ``scale`` (float32,
    (OC,)) and zero point 0: ``clamp(round_half_even(w * (1/scale)), -128, 127)``, the arithmetic of ATen's
    ``quantize_per_channel`` (``quantize_val``). Runs once, at convert time."""
    inv = 1.0 / scale.to(weight.device, torch.float32)
    w = weight.detach().float()
    q = torch.round(w * inv.reshape((-1,) + (1,) * (w.dim() - 1)))
    return q.clamp_(-128, 127).to(torch.int8)
