// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The `torch_mlu` op namespace (torch.ops.torch_mlu.*): schemas, and kernels registered apart from their
// implementations. Catch's math kernels (kernels/) serve CPU tensors, which compiled fusion groups hand them; on mlu
// they run as device kernels on the host views (device_kernel.h), except linear_gelu, whose mlu kernel is ATen's ops.
// The int8 kernels (quantized_ops.h) take CPU and mlu tensors alike.
#include <ATen/Functions.h>
#include <torch/library.h>

#include "../kernels/attention.h"
#include "../kernels/attention_probs.h"
#include "../kernels/conv.h"
#include "../kernels/gemm.h"
#include "../kernels/pool.h"
#include "device_kernel.h"
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
  // attention (kernels/attention.h, attention_probs.h)
  // flexible_layout: the kernels take inputs of any strides, so Inductor need not convert its buffers' layouts.
  m.def("attention(Tensor query, Tensor key, Tensor value, *, float? scale=None) -> (Tensor output, Tensor logsumexp)",
        {at::Tag::flexible_layout});
  m.def(
      "attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, *, "
      "float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)",
      {at::Tag::flexible_layout});
  m.def(
      "attention_with_probs(Tensor query, Tensor key, Tensor value, *, float? scale=None) -> (Tensor output, "
      "Tensor logsumexp, Tensor probs)",
      {at::Tag::flexible_layout});
  m.def(
      "attention_backward_with_probs(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, "
      "Tensor probs, *, float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)",
      {at::Tag::flexible_layout});
  // convolution (kernels/conv.h)
  m.def(
      "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
      "bool transposed, int[] output_padding, int groups) -> Tensor");
  m.def(
      "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, int[]? bias_sizes, int[] stride, "
      "int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool[3] output_mask) "
      "-> (Tensor, Tensor, Tensor)");
  // matrix products (kernels/gemm.h)
  // flexible_layout: the kernels take operands of any strides, so Inductor need not convert its buffers' layouts.
  m.def("mm(Tensor self, Tensor mat2) -> Tensor", {at::Tag::flexible_layout});
  m.def("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        {at::Tag::flexible_layout});
  m.def("linear_gelu(Tensor input, Tensor weight, Tensor? bias, bool derivative=False) -> (Tensor, Tensor)",
        {at::Tag::flexible_layout});
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
  m.impl("attention", &attention);
  m.impl("attention_backward", &attention_backward);
  m.impl("attention_with_probs", &attention_with_probs);
  m.impl("attention_backward_with_probs", &attention_backward_with_probs);
  m.impl("convolution", &convolution);
  m.impl("convolution_backward", &convolution_backward);
  m.impl("mm", &mm);
  m.impl("addmm", &addmm);
  m.impl("linear_gelu", &linear_gelu);
  m.impl("max_pool2d_with_indices", &max_pool2d_with_indices);
  m.impl("max_pool2d_with_indices_backward", &aten_max_pool2d_with_indices_backward);
  m.impl("quantize_int8", &quantize_int8);
  m.impl("int8_mm", &int8_mm);
  m.impl("int8_linear", &int8_linear);
  m.impl("int8_conv2d_acc", &int8_conv2d_acc);
  m.impl("int8_conv2d", &int8_conv2d);
}

// Catch's attention kernels, which compiled training graphs call outside Inductor too: a fusion group's debug modes
// (FUSE_GROUP_DEBUG_MODE=eager, layerwise) run its graph as eager mlu kernels. Like ATen's device ops: the CPU kernel
// on host views, in order on the current queue, without the fallback's copies.
TORCH_LIBRARY_IMPL(torch_mlu, PrivateUse1, m) {
  for (const char* name :
       {"attention", "attention_backward", "attention_with_probs", "attention_backward_with_probs"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&device_kernel>());
  }
  m.impl("linear_gelu", &linear_gelu_reference);
  m.impl("quantize_int8", &quantize_int8);
  m.impl("int8_mm", &int8_mm);
  m.impl("int8_linear", &int8_linear);
  m.impl("int8_conv2d_acc", &int8_conv2d_acc);
  m.impl("int8_conv2d", &int8_conv2d);
}

TORCH_LIBRARY_IMPL(torch_mlu, Autograd, m) { m.impl("linear_gelu", &linear_gelu_autograd); }

}  // namespace torch_mlu
