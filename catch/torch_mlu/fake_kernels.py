# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fake (meta) kernels of the ``torch.ops.torch_mlu`` ops: what each returns -- sizes, dtypes, strides -- without
computing it, so FakeTensor tracing (``torch.compile``, AOTAutograd, ``torch.export``) can pass through them
(``torch.library.register_fake``). Importing this module registers all of them; :mod:`torch_mlu.compile` and
:mod:`torch_mlu.quantization` import it.

The ops and their real kernels are defined in C++ (``TORCH_LIBRARY_FRAGMENT(torch_mlu, ...)``); each fake kernel
returns what its C++ kernel returns, in the same memory layout:

- int8 quantization (``catch/csrc/ops/quantized_ops.cpp``): ``quantize_int8``, ``int8_mm``,
  ``int8_linear``, ``int8_conv2d_acc``, ``int8_conv2d``; their shape checks mirror the native kernels;
- max pooling: ``max_pool2d_with_indices`` (``catch/csrc/kernels/pool.cpp``) and
  ``max_pool2d_with_indices_backward`` (ATen's kernel).

The ops that replace an ATen op with the same schema (:mod:`torch_mlu.compile.kernels`) return what ATen's meta
kernel for that op returns, and are computed by it here.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

_aten = torch.ops.aten


# ---- int8 quantization ----------------------------------------------------------------------------------------------


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


# ---- max pooling ----------------------------------------------------------------------------------------------------


@torch.library.register_fake("torch_mlu::max_pool2d_with_indices_backward")
def _max_pool2d_backward_fake(grad_output: torch.Tensor, self: torch.Tensor, kernel_size: list[int],
                              stride: list[int], padding: list[int], dilation: list[int], ceil_mode: bool,
                              indices: torch.Tensor) -> torch.Tensor:
    # ATen's meta kernel for ATen's kernel
    return _aten.max_pool2d_with_indices_backward.default(grad_output, self, kernel_size, stride, padding, dilation,
                                                          ceil_mode, indices)


@torch.library.register_fake("torch_mlu::max_pool2d_with_indices")
def _max_pool2d_fake(self: torch.Tensor, kernel_size: list[int], stride: list[int] | None = None,
                     padding: list[int] | int = 0, dilation: list[int] | int = 1,
                     ceil_mode: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    # ATen's meta kernel: the sizes and the memory format (that of the input) the C++ kernel returns as well
    return _aten.max_pool2d_with_indices.default(self, kernel_size, stride or [], padding, dilation, ceil_mode)
