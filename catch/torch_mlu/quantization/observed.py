# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Float Conv2d/Linear that observe (static) or fake-quantize (QAT) their *inputs* and weights.

``torch.ao.quantization.prepare`` swaps ``nn.Conv2d``/``nn.Linear`` for :class:`ObservedConv2d`/
:class:`ObservedLinear` through ``prepare_custom_config_dict["float_to_observed_custom_module_class"]`` and
``prepare_qat`` swaps them for :class:`QATConv2d`/:class:`QATLinear` through its ``mapping``; both call
``from_float(mod)``. ``convert`` later hands these modules to the int8 modules' ``from_float``, which reads
:meth:`quant_params`. Everything runs on the module's device (``mlu``): observers, fake-quantize and the float op.
"""

from __future__ import annotations

from typing import Any, TypeVar

import torch
from torch import nn
from torch.ao.quantization import QConfig

from torch_mlu.quantization.qconfig import ActivationQParams, activation_qparams, output_stays_float, weight_qparams


def _qconfig_of(mod: nn.Module, cls: type) -> QConfig:
    qconfig = getattr(mod, "qconfig", None)
    if qconfig is None:
        raise ValueError(f"{cls.__name__}.from_float: {type(mod).__name__} has no qconfig; set model.qconfig (e.g. "
                         "torch_mlu.quantization.get_default_qconfig()) before prepare")
    return qconfig


def _conv_args(mod: nn.Conv2d) -> dict:
    return dict(in_channels=mod.in_channels, out_channels=mod.out_channels, kernel_size=mod.kernel_size,
                stride=mod.stride, padding=mod.padding, dilation=mod.dilation, groups=mod.groups,
                bias=mod.bias is not None, padding_mode=mod.padding_mode)


_M = TypeVar("_M", bound=nn.Module)


def _wrap(cls: type[_M], mod: nn.Module) -> _M:
    """A ``cls`` (an observed/QAT subclass of ``type(mod)``) sharing ``mod``'s parameters, set up from ``mod.qconfig``.

    Raises:
        ValueError: ``mod`` has no ``qconfig``.
    """
    qconfig = _qconfig_of(mod, cls)
    new: Any
    if isinstance(mod, nn.Conv2d):
        new = cls(**_conv_args(mod), device="meta")
    else:
        new = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, device="meta")
    new.weight, new.bias = mod.weight, mod.bias
    new._setup(qconfig)
    return new


class _InputQuantized:
    """Shared by the observed and QAT modules: what convert needs from them."""

    weight: torch.Tensor

    def _input_obs(self) -> nn.Module:
        raise TypeError(f"{type(self).__name__} does not define its input observer")

    def _weight_obs(self) -> nn.Module:
        raise TypeError(f"{type(self).__name__} does not define its weight observer")

    def quant_params(self) -> tuple[ActivationQParams, torch.Tensor]:
        """(input qparams, float32 per-output-channel weight scales on CPU), from the calibrated observers."""
        what = type(self).__name__
        act = activation_qparams(self._input_obs(), f"{what} input")
        scales = weight_qparams(self._weight_obs(), self.weight.shape[0], f"{what} weight")
        return act, scales


class _Observed(_InputQuantized):
    """Static PTQ: the input observer sees every calibration batch; the weight is observed at convert time."""

    input_observer: nn.Module
    qconfig: QConfig

    def _setup(self, qconfig: QConfig) -> None:
        self.input_observer = qconfig.activation().to(self.weight.device)
        self._weight_observer_ctor = qconfig.weight
        self.qconfig = output_stays_float(qconfig)

    def _input_obs(self) -> nn.Module:
        return self.input_observer

    def _weight_obs(self) -> nn.Module:
        obs = self._weight_observer_ctor().to(self.weight.device)
        obs(self.weight.detach())
        return obs


class ObservedLinear(_Observed, nn.Linear):
    """``nn.Linear`` whose input passes through ``qconfig.activation()`` (an observer) before the float op."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(self.input_observer(x))

    @classmethod
    def from_float(cls, mod: nn.Linear, use_precomputed_fake_quant: bool = False) -> ObservedLinear:
        """Shares ``mod``'s parameters; ``mod.qconfig`` gives the observers (raises ``ValueError`` if unset)."""
        return _wrap(cls, mod)


class ObservedConv2d(_Observed, nn.Conv2d):
    """``nn.Conv2d`` whose input passes through ``qconfig.activation()`` (an observer) before the float op."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._conv_forward(self.input_observer(x), self.weight, self.bias)

    @classmethod
    def from_float(cls, mod: nn.Conv2d, use_precomputed_fake_quant: bool = False) -> ObservedConv2d:
        """Shares ``mod``'s parameters; ``mod.qconfig`` gives the observers (raises ``ValueError`` if unset)."""
        return _wrap(cls, mod)


class _QAT(_InputQuantized):
    """QAT: input and weight pass through FakeQuantize modules (straight-through gradients) in every forward."""

    input_fake_quant: nn.Module
    weight_fake_quant: nn.Module
    qconfig: QConfig

    def _setup(self, qconfig: QConfig) -> None:
        self.input_fake_quant = qconfig.activation().to(self.weight.device)
        self.weight_fake_quant = qconfig.weight().to(self.weight.device)
        self.qconfig = output_stays_float(qconfig)

    def _input_obs(self) -> nn.Module:
        return self.input_fake_quant

    def _weight_obs(self) -> nn.Module:
        # The scales the last training step fake-quantized the weight with (torch's nnq from_float does the same).
        return self.weight_fake_quant


class QATLinear(_QAT, nn.Linear):
    """``nn.Linear`` trained with fake-quantized int8 inputs and per-channel int8 weights."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(self.input_fake_quant(x), self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod: nn.Linear, use_precomputed_fake_quant: bool = False) -> QATLinear:
        """Shares ``mod``'s parameters (create the optimizer after ``prepare_qat``, as with torch's nnqat)."""
        return _wrap(cls, mod)


class QATConv2d(_QAT, nn.Conv2d):
    """``nn.Conv2d`` trained with fake-quantized int8 inputs and per-channel int8 weights."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._conv_forward(self.input_fake_quant(x), self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod: nn.Conv2d, use_precomputed_fake_quant: bool = False) -> QATConv2d:
        """Shares ``mod``'s parameters (create the optimizer after ``prepare_qat``, as with torch's nnqat)."""
        return _wrap(cls, mod)
