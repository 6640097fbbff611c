# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fake (meta) kernels of the int8 ops: output shapes and dtypes only, so ``torch.compile``/FakeTensor tracing can
pass through int8 modules (PyTorch's ``torch.library.register_fake``). Shape checks mirror the native kernels."""

from __future__ import annotations

from collections.abc import Sequence

import torch


def _conv_out(qx: torch.Tensor, qw: torch.Tensor, stride: Sequence[int], padding: Sequence[int],
              dilation: Sequence[int]) -> list[int]:
    oh = (qx.shape[2] + 2 * padding[0] - dilation[0] * (qw.shape[2] - 1) - 1) // stride[0] + 1
    ow = (qx.shape[3] + 2 * padding[1] - dilation[1] * (qw.shape[3] - 1) - 1) // stride[1] + 1
    return [qx.shape[0], qw.shape[0], oh, ow]


@torch.library.register_fake("torch_mlu::quantize_int8")
def _quantize_int8(x: torch.Tensor, scale: float, zero_point: int, dtype: torch.dtype) -> torch.Tensor:
    torch._check(x.dtype == torch.float32, lambda: "torch_mlu::quantize_int8: expected a float32 tensor")
    return x.new_empty(x.shape, dtype=dtype)


@torch.library.register_fake("torch_mlu::int8_mm")
def _int8_mm(qa: torch.Tensor, a_zero_point: int, qb: torch.Tensor) -> torch.Tensor:
    return qa.new_empty((qa.shape[0], qb.shape[0]), dtype=torch.int32)


@torch.library.register_fake("torch_mlu::int8_linear")
def _int8_linear(qx: torch.Tensor, x_scale: float, x_zero_point: int, qw: torch.Tensor, w_scale: torch.Tensor,
                 bias: torch.Tensor | None) -> torch.Tensor:
    return qx.new_empty((*qx.shape[:-1], qw.shape[0]), dtype=torch.float32)


@torch.library.register_fake("torch_mlu::int8_conv2d_acc")
def _int8_conv2d_acc(qx: torch.Tensor, x_zero_point: int, qw: torch.Tensor, stride: Sequence[int],
                     padding: Sequence[int], dilation: Sequence[int], groups: int) -> torch.Tensor:
    return qx.new_empty(_conv_out(qx, qw, stride, padding, dilation), dtype=torch.int32)


@torch.library.register_fake("torch_mlu::int8_conv2d")
def _int8_conv2d(qx: torch.Tensor, x_scale: float, x_zero_point: int, qw: torch.Tensor, w_scale: torch.Tensor,
                 bias: torch.Tensor | None, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                 groups: int) -> torch.Tensor:
    return qx.new_empty(_conv_out(qx, qw, stride, padding, dilation), dtype=torch.float32)
