// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Quantized tensors on mlu (dispatch key QuantizedPrivateUse1), as ATen gives them to cuda (QuantizedCUDA):
// torch.quantize_per_tensor / quantize_per_channel of an mlu tensor, dequantize, int_repr, q_scale /
// q_zero_point / q_per_channel_*, the quantized factories (_empty_affine_quantized, empty_quantized, ...),
// views, clone, copies between mlu and CPU (`.to("cpu")`, `.to("mlu")`) and the few elementwise ops ATen has
// QuantizedCUDA kernels for (relu, gelu, fill_, masked_fill_, flip, index_select, min/max.dim). Registered in
// registration.cpp.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <optional>

namespace torch_mlu {

// ---- factories (ATen: aten/src/ATen/native/quantized/TensorFactories.cpp) ----
at::Tensor empty_affine_quantized(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                  std::optional<c10::Layout>, std::optional<c10::Device> device,
                                  std::optional<bool>, double scale, int64_t zero_point,
                                  std::optional<c10::MemoryFormat> memory_format);
at::Tensor empty_per_channel_affine_quantized(c10::IntArrayRef size, const at::Tensor& scales,
                                              const at::Tensor& zero_points, int64_t axis,
                                              std::optional<c10::ScalarType> dtype, std::optional<c10::Layout>,
                                              std::optional<c10::Device> device, std::optional<bool>,
                                              std::optional<c10::MemoryFormat> memory_format);
at::Tensor empty_unknown_quantized(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                   std::optional<c10::Layout>, std::optional<c10::Device> device,
                                   std::optional<bool>, std::optional<c10::MemoryFormat> memory_format);

// ---- views ----
at::Tensor squeeze_quantized(const at::Tensor& self);
at::Tensor squeeze_quantized_dim(const at::Tensor& self, int64_t dim);
at::Tensor squeeze_quantized_dims(const at::Tensor& self, c10::IntArrayRef dims);

// _copy_from(self=src, dst) with aten::copy_'s quantized checks (see the definition).
at::Tensor quantized_copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);

// Boxed kernel: the CPU kernel (QuantizedCPU or CPU, whichever the host views select) on host views of the mlu
// arguments (host_call.h). Tensor arguments are plain tensors (no lists); in-place arguments are written in place
// (the ops registered never resize them) and a return aliasing one (Tensor(a!)) is that mlu argument.
void quantized_host_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);

}  // namespace torch_mlu
