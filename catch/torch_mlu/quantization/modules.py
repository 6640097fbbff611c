# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""int8 Conv2d/Linear for mlu inference: float in, float out, int8 x int8 -> int32 inside.

Each module quantizes its float32 input per tensor (scale/zero point from calibration, or chosen per call for
:class:`DynamicLinear`), runs the native int8 kernel (int32 accumulation, per-output-channel float rescale, bias in
float) and returns float32, so every other op of the model stays float, as in the cnml flow. Buffers: ``weight``
(int8), ``weight_scale`` (float32, one per output channel), ``bias`` (float32 or None); the input qparams travel in
the state dict as extra state.
"""

from __future__ import annotations

from typing import Any, cast

import torch
from torch import nn
from torch.ao.quantization.utils import determine_qparams

from torch_mlu.quantization import functional as F
from torch_mlu.quantization.observed import _InputQuantized
from torch_mlu.quantization.qconfig import ActivationQParams, quantize_weight, weight_qparams


def _quant_source(cls: type, mod: nn.Module) -> _InputQuantized:
    if isinstance(mod, _InputQuantized):
        return mod
    hint = ("it was prepared with torch's default eager mapping, which observes module outputs; prepare with "
            "prepare_custom_config_dict=torch_mlu.quantization.get_prepare_custom_config_dict() (or "
            "torch_mlu.quantization.prepare) so that conv/linear inputs are observed")
    raise TypeError(f"{cls.__name__}.from_float expects an observed or QAT module from torch_mlu.quantization, got "
                    f"{type(mod).__name__}: {hint}")


class _Int8Module(nn.Module):
    weight: torch.Tensor
    weight_scale: torch.Tensor
    bias: torch.Tensor | None

    def __init__(self, act: ActivationQParams, qweight: torch.Tensor, scale: torch.Tensor,
                 bias: torch.Tensor | None) -> None:
        super().__init__()
        self.scale = act.scale
        self.zero_point = act.zero_point
        self.act_dtype = act.dtype
        self.register_buffer("weight", qweight)
        self.register_buffer("weight_scale", scale.to(qweight.device, torch.float32).contiguous())
        self.register_buffer("bias", None if bias is None else bias.detach().to(qweight.device, torch.float32))

    def _quantize_input(self, x: torch.Tensor) -> torch.Tensor:
        return F.quantize_int8(x, self.scale, self.zero_point, self.act_dtype)

    def get_extra_state(self) -> dict[str, Any]:
        return {"scale": self.scale, "zero_point": self.zero_point, "act_dtype": str(self.act_dtype)}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        self.scale = float(state["scale"])
        self.zero_point = int(state["zero_point"])
        self.act_dtype = {"torch.quint8": torch.quint8, "torch.qint8": torch.qint8}[state["act_dtype"]]


class Linear(_Int8Module):
    """int8 ``nn.Linear``: ``y = int8_linear(quantize(x), ...)``, input (..., in_features) float32."""

    def __init__(self, act: ActivationQParams, qweight: torch.Tensor, scale: torch.Tensor,
                 bias: torch.Tensor | None) -> None:
        super().__init__(act, qweight, scale, bias)
        self.out_features, self.in_features = qweight.shape

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.int8_linear(self._quantize_input(x), self.scale, self.zero_point, self.weight, self.weight_scale,
                             self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale:.6g}, "
                f"zero_point={self.zero_point}, act_dtype={self.act_dtype}, weight=int8 per-channel")

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> Linear:
        """From a calibrated :class:`ObservedLinear` or a trained :class:`QATLinear` (torch ``convert`` calls this).

        Raises ``TypeError`` for a plain ``nn.Linear`` (its inputs were never observed), ``RuntimeError`` for an
        uncalibrated observer, ``ValueError`` for unsupported dtypes/schemes.
        """
        src = _quant_source(cls, mod)
        lin = cast(nn.Linear, mod)
        act, scales = src.quant_params()
        return cls(act, quantize_weight(lin.weight, scales), scales, lin.bias)


class Conv2d(_Int8Module):
    """int8 ``nn.Conv2d`` (zeros padding, any stride/dilation/groups): float32 NCHW in and out."""

    def __init__(self, act: ActivationQParams, qweight: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor | None,
                 stride: tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int], groups: int) -> None:
        super().__init__(act, qweight, scale, bias)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.out_channels = qweight.shape[0]
        self.in_channels = qweight.shape[1] * groups
        self.kernel_size = tuple(qweight.shape[2:])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.int8_conv2d(self._quantize_input(x), self.scale, self.zero_point, self.weight, self.weight_scale,
                             self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, scale={self.scale:.6g}, "
                f"zero_point={self.zero_point}, act_dtype={self.act_dtype}, weight=int8 per-channel")

    @staticmethod
    def _padding_of(mod: nn.Conv2d) -> tuple[int, int]:
        name = type(mod).__name__
        if mod.padding_mode != "zeros":
            raise ValueError(f"{name}: only padding_mode='zeros' is supported by the mlu int8 conv, got "
                             f"{mod.padding_mode!r}")
        if mod.padding == "valid":
            return (0, 0)
        if mod.padding == "same":
            # nn.Conv2d pads (total // 2) before; an odd total would need asymmetric padding.
            totals = [d * (k - 1) for d, k in zip(mod.dilation, mod.kernel_size, strict=True)]
            if any(t % 2 for t in totals):
                raise ValueError(f"{name}: padding='same' with an even effective kernel needs asymmetric padding, "
                                 "which the mlu int8 conv does not support")
            return (totals[0] // 2, totals[1] // 2)
        return (int(mod.padding[0]), int(mod.padding[1]))

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> Conv2d:
        """From a calibrated :class:`ObservedConv2d` or a trained :class:`QATConv2d` (torch ``convert`` calls this).

        Raises like :meth:`Linear.from_float`, and ``ValueError`` for non-zeros padding modes.
        """
        src = _quant_source(cls, mod)
        conv = cast(nn.Conv2d, mod)
        padding = cls._padding_of(conv)
        act, scales = src.quant_params()
        stride = (int(conv.stride[0]), int(conv.stride[1]))
        dilation = (int(conv.dilation[0]), int(conv.dilation[1]))
        return cls(act, quantize_weight(conv.weight, scales), scales, conv.bias, stride, padding, dilation,
                   conv.groups)


class DynamicLinear(_Int8Module):
    """Dynamically quantized ``nn.Linear``: input qparams (uint8, full 0..255 range) are chosen per call from the
    input's min/max by torch.ao's ``determine_qparams`` (the ``MinMaxObserver`` formula); int8 per-channel weights."""

    def __init__(self, qweight: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor | None) -> None:
        super().__init__(ActivationQParams(1.0, 0, torch.quint8), qweight, scale, bias)
        self.out_features, self.in_features = qweight.shape
        self._eps = torch.tensor([torch.finfo(torch.float32).eps])

    def _qparams(self, x: torch.Tensor) -> tuple[float, int]:
        if x.numel() == 0:
            return 1.0, 0
        lo, hi = torch.aminmax(x.detach())
        bounds = torch.stack([lo, hi]).to("cpu", torch.float32)  # one device -> host transfer per call
        scale, zero_point = determine_qparams(bounds[:1], bounds[1:], 0, 255, torch.quint8, self._eps, False)
        return float(scale[0]), int(zero_point[0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale, zero_point = self._qparams(x)
        q = F.quantize_int8(x, scale, zero_point, torch.quint8)
        return F.int8_linear(q, scale, zero_point, self.weight, self.weight_scale, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, dynamic uint8 inputs, "
                "weight=int8 per-channel")

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> DynamicLinear:
        """From an ``nn.Linear`` carrying a dynamic qconfig (``quantize_dynamic`` propagates it).

        Raises ``ValueError`` for float16 or other non-int8 dynamic qconfigs and ``TypeError`` for non-Linear modules.
        """
        if not isinstance(mod, nn.Linear):
            raise TypeError(f"DynamicLinear.from_float expects nn.Linear, got {type(mod).__name__}")
        qconfig = getattr(mod, "qconfig", None)
        if qconfig is None:
            raise ValueError("DynamicLinear.from_float: the module has no qconfig (quantize_dynamic sets it)")
        act_dtype = getattr(qconfig.activation(), "dtype", None)
        if act_dtype not in (torch.quint8, torch.qint8):
            raise ValueError(f"DynamicLinear.from_float: mlu dynamic quantization is int8 only, the qconfig asks for "
                             f"{act_dtype} activations")
        obs = qconfig.weight().to(mod.weight.device)
        obs(mod.weight.detach())
        scales = weight_qparams(obs, mod.out_features, "DynamicLinear weight")
        return cls(quantize_weight(mod.weight, scales), scales, mod.bias)
