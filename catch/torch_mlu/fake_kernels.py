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
- matrix products (``catch/csrc/kernels/gemm.cpp``): ``mm``, ``addmm``, ``linear_gelu``;
- convolution (``catch/csrc/kernels/conv.cpp``): ``convolution``, ``convolution_backward``;
- max pooling: ``max_pool2d_with_indices`` (``catch/csrc/kernels/pool.cpp``) and
  ``max_pool2d_with_indices_backward`` (ATen's kernel);
- attention (``catch/csrc/kernels/attention.cpp``): ``attention``, ``attention_backward``,
  ``attention_with_probs``, ``attention_backward_with_probs``.

The ops that replace an ATen op with the same schema (:mod:`torch_mlu.compile.kernels`) return what ATen's meta
kernel for that op returns, and are computed by it here.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

_aten = torch.ops.aten
_FLASH = _aten._scaled_dot_product_flash_attention_for_cpu.default
_FLASH_BACKWARD = _aten._scaled_dot_product_flash_attention_for_cpu_backward.default

#: The attention kernels' vector width in floats (catch/csrc/kernels/attention.cpp): their tiled loops take
#: head dims of whole vectors, and each row of the probabilities P that ``attention_with_probs`` returns is padded to
#: whole vectors.
ATTENTION_LANES = 16


def padded_to_lanes(n: int) -> int:
    """``n`` rounded up to a whole number of :data:`ATTENTION_LANES` (the row length of P for ``n`` keys)."""
    return (n + ATTENTION_LANES - 1) // ATTENTION_LANES * ATTENTION_LANES


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


# ---- matrix products ------------------------------------------------------------------------------------------------


@torch.library.register_fake("torch_mlu::mm")
def _mm_fake(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    return _aten.mm.default(self, mat2)


@torch.library.register_fake("torch_mlu::addmm")
def _addmm_fake(bias: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor, *, beta: float = 1,
                alpha: float = 1) -> torch.Tensor:
    return _aten.addmm.default(bias, mat1, mat2, beta=beta, alpha=alpha)


@torch.library.register_fake("torch_mlu::linear_gelu")
def _linear_gelu_fake(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                      derivative: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    # the C++ kernels return both results contiguous, the derivative empty without `derivative`
    out = input.new_empty((*input.shape[:-1], weight.shape[0]))
    return out, torch.empty_like(out) if derivative else input.new_empty((0,))


# ---- convolution ----------------------------------------------------------------------------------------------------


@torch.library.register_fake("torch_mlu::convolution")
def _convolution_fake(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: list[int],
                      padding: list[int], dilation: list[int], transposed: bool, output_padding: list[int],
                      groups: int) -> torch.Tensor:
    # ATen's meta kernel: for the inputs the direct kernel takes (contiguous NCHW) ATen's result is contiguous too
    return _aten.convolution.default(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                                     groups)


@torch.library.register_fake("torch_mlu::convolution_backward")
def _convolution_backward_fake(grad_output: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
                               bias_sizes: list[int] | None, stride: list[int], padding: list[int],
                               dilation: list[int], transposed: bool, output_padding: list[int], groups: int,
                               output_mask: list[bool]) -> tuple[torch.Tensor | None, ...]:
    return _aten.convolution_backward.default(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                                              transposed, output_padding, groups, output_mask)


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


# ---- attention ------------------------------------------------------------------------------------------------------


@torch.library.register_fake("torch_mlu::attention")
def _attention_fake(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *,
                    scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    # Same shapes, dtypes and strides as the flash op (the kernel allocates its results that way).
    return _FLASH(query, key, value, scale=scale)


@torch.library.register_fake("torch_mlu::attention_backward")
def _attention_backward_fake(grad_out: torch.Tensor, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                             out: torch.Tensor, logsumexp: torch.Tensor, *,
                             scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _FLASH_BACKWARD(grad_out, query, key, value, out, logsumexp, 0.0, False, scale=scale)


def _probs_layout(query: torch.Tensor, s: int) -> torch.Tensor:
    b, h, lq, _ = query.shape
    return query.new_empty((b, h, lq, padded_to_lanes(s))).narrow(3, 0, s)


@torch.library.register_fake("torch_mlu::attention_with_probs")
def _attention_with_probs_fake(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *,
                               scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # out and logsumexp as the flash op lays them out (the kernel allocates them that way), P as _probs_layout
    out, lse = _FLASH(query, key, value, scale=scale)
    return out, lse, _probs_layout(query, key.shape[2])


@torch.library.register_fake("torch_mlu::attention_backward_with_probs")
def _attention_backward_with_probs_fake(grad_out: torch.Tensor, query: torch.Tensor, key: torch.Tensor,
                                        value: torch.Tensor, out: torch.Tensor, probs: torch.Tensor, *,
                                        scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # the flash backward's layouts, (B, L, H, *) in memory
    b, h, lq, _ = query.shape
    lse = query.new_empty((b, lq, h)).transpose(1, 2)
    return _FLASH_BACKWARD(grad_out, query, key, value, out, lse, 0.0, False, scale=scale)
