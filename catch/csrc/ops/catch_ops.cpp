// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The `torch_mlu` op namespace (torch.ops.torch_mlu.*): schemas, and kernels registered apart from their
// implementations. The max-pooling ops serve CPU tensors, which compiled fusion groups hand them (eager mlu calls of
// aten::max_pool2d_with_indices run Catch's kernel through ops/redirects.h). The int8 kernels (quantized_ops.h) take
// CPU and mlu tensors alike.
#include <ATen/Functions.h>
#include <torch/library.h>

#include "../kernels/pool.h"
#include "quantized_ops.h"

namespace torch_mlu {
namespace {

at::Tensor aten_max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                 at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                                 const at::Tensor& indices) {
  return at::max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                              indices);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_mlu, m) {
  // max pooling: Catch's forward (kernels/pool.h); the backward is ATen's kernel, an op of its own so that compiled
  // groups call it instead of Inductor's lowering (torch_mlu.compile.kernels, ATEN_KERNELS)
  m.def(
      "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)");
  m.def(
      "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
      "int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor");
  // int8 inference (quantized_ops.h)
  m.def("quantize_int8(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor");
  m.def("int8_mm(Tensor qa, int a_zero_point, Tensor qb) -> Tensor");
  m.def(
      "int8_linear(Tensor qx, float x_scale, int x_zero_point, Tensor qw, Tensor w_scale, Tensor? bias) -> Tensor");
  m.def(
      "int8_conv2d_acc(Tensor qx, int x_zero_point, Tensor qw, int[2] stride, int[2] padding, int[2] dilation, "
      "int groups) -> Tensor");
  m.def(
      "int8_conv2d(Tensor qx, float x_scale, int x_zero_point, Tensor qw, Tensor w_scale, Tensor? bias, "
      "int[2] stride, int[2] padding, int[2] dilation, int groups) -> Tensor");
}

TORCH_LIBRARY_IMPL(torch_mlu, CPU, m) {
  m.impl("max_pool2d_with_indices", &max_pool2d_with_indices);
  m.impl("max_pool2d_with_indices_backward", &aten_max_pool2d_with_indices_backward);
  m.impl("quantize_int8", &quantize_int8);
  m.impl("int8_mm", &int8_mm);
  m.impl("int8_linear", &int8_linear);
  m.impl("int8_conv2d_acc", &int8_conv2d_acc);
  m.impl("int8_conv2d", &int8_conv2d);
}

TORCH_LIBRARY_IMPL(torch_mlu, PrivateUse1, m) {
  m.impl("quantize_int8", &quantize_int8);
  m.impl("int8_mm", &int8_mm);
  m.impl("int8_linear", &int8_linear);
  m.impl("int8_conv2d_acc", &int8_conv2d_acc);
  m.impl("int8_conv2d", &int8_conv2d);
}

}  // namespace torch_mlu
