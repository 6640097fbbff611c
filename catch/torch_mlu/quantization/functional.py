# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Python entry points of the native int8 kernels (``torch.ops.torch_mlu.*``, catch/csrc/ops/quantized_ops.cpp).

Quantized values are plain ``torch.uint8`` / ``torch.int8`` tensors (not PyTorch quantized tensors): the ``mlu``
device has no quantized tensor type, exactly as in the cnml flow, where only the conv/linear kernels see int8 data.
Every function works on ``mlu`` and on CPU tensors; all tensor arguments must be on the same device.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from torch_mlu import fake_kernels  # noqa: F401  (fake kernels for torch.compile tracing)

# torch quantized dtypes -> the integer dtype that stores them
_STORAGE = {torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.uint8: torch.uint8, torch.int8: torch.int8}


def storage_dtype(dtype: torch.dtype) -> torch.dtype:
    """The integer dtype holding values of ``dtype`` (``torch.quint8`` -> ``torch.uint8``, ``torch.qint8`` ->
    ``torch.int8``). Raises ``ValueError`` for anything else (the kernels are 8-bit only)."""
    try:
        return _STORAGE[dtype]
    except KeyError:
        raise ValueError(f"mlu int8 quantization supports quint8/qint8 (uint8/int8) activations, got {dtype}") from None


def quantize_int8(x: torch.Tensor, scale: float, zero_point: int, dtype: torch.dtype) -> torch.Tensor:
    """Per-tensor affine quantization of float32 ``x``: ``clamp(round_half_even(x * (1/scale) + zero_point))``.

    The rounding is that of ATen's CPU quantizer (``torch.quantize_per_tensor(...).int_repr()`` gives the same values).
    ``dtype`` is ``torch.quint8``/``torch.uint8`` (range 0..255) or ``torch.qint8``/``torch.int8`` (-128..127).
    Returns a uint8/int8 tensor of ``x``'s shape. Raises ``RuntimeError`` for a non-float32 ``x``, a non-positive
    scale or a zero point outside the range.
    """
    return torch.ops.torch_mlu.quantize_int8(x, float(scale), int(zero_point), storage_dtype(dtype))


def int8_mm(qa: torch.Tensor, a_zero_point: int, qb: torch.Tensor) -> torch.Tensor:
    """int32 ``(qa - a_zero_point) @ qb.T`` for ``qa`` (M, K) uint8/int8 and ``qb`` (N, K) int8, exact in int32.

    Raises ``RuntimeError`` for other dtypes, mismatched K, or K > 65536 (the int32 accumulation bound).
    """
    return torch.ops.torch_mlu.int8_mm(qa, int(a_zero_point), qb)


def int8_linear(qx: torch.Tensor, x_scale: float, x_zero_point: int, qw: torch.Tensor, w_scale: torch.Tensor,
                bias: torch.Tensor | None) -> torch.Tensor:
    """float32 ``(..., N)`` = ``int32((qx - x_zp) @ qw.T) * (float32(x_scale) * w_scale[n]) + bias[n]``.

    ``qx`` (..., K) uint8/int8, ``qw`` (N, K) int8 (symmetric), ``w_scale`` (N,) float32 per output channel,
    ``bias`` (N,) float32 or None.
    """
    return torch.ops.torch_mlu.int8_linear(qx, float(x_scale), int(x_zero_point), qw, w_scale, bias)


def int8_conv2d_acc(qx: torch.Tensor, x_zero_point: int, qw: torch.Tensor, stride: Sequence[int],
                    padding: Sequence[int], dilation: Sequence[int], groups: int) -> torch.Tensor:
    """int32 accumulator (N, OC, OH, OW) of conv2d over ``qx - x_zero_point`` (NCHW uint8/int8) and ``qw``
    (OC, C/groups, KH, KW) int8, computed as im2col + int8 GEMM; padding taps are the zero point (= float 0.0)."""
    return torch.ops.torch_mlu.int8_conv2d_acc(qx, int(x_zero_point), qw, list(stride), list(padding),
                                               list(dilation), int(groups))


def int8_conv2d(qx: torch.Tensor, x_scale: float, x_zero_point: int, qw: torch.Tensor, w_scale: torch.Tensor,
                bias: torch.Tensor | None, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                groups: int) -> torch.Tensor:
    """float32 NCHW conv2d output: :func:`int8_conv2d_acc` rescaled per output channel like :func:`int8_linear`."""
    return torch.ops.torch_mlu.int8_conv2d(qx, float(x_scale), int(x_zero_point), qw, w_scale, bias, list(stride),
                                           list(padding), list(dilation), int(groups))
