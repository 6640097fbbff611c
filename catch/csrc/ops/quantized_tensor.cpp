// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// Why our own allocation: ATen's at::new_qtensor (aten/src/ATen/quantized/Quantizer.cpp) picks the allocator
// for CPU, CUDA and Meta only and asserts "unrecognized device for new_qtensor" for any other device, so every
// ATen factory that ends there cannot make an mlu quantized tensor. new_mlu_qtensor() below makes the same
// QTensorImpl (the quantizer object, sizes and strides as new_qtensor sets them) over a device allocation.
//
// Kernels, three kinds:
//   - metadata only (q_scale, views, qscheme, ...): ATen's own device-independent native functions;
//   - factories: new_mlu_qtensor with the quantizer ATen's factory would build;
//   - compute: ATen's CPU kernel on host views of the device buffers (a QuantizedCPU view keeps the
//     quantizer; per-channel scales and zero points are viewed too), run in order on the current queue;
//     fresh results are adopted as device memory, so the values are the CPU kernel's, bit for bit (host_call.h).
#include "quantized_tensor.h"

#include <ATen/ATen.h>
#include <ATen/NativeFunctions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/quantized/QTensorImpl.h>
#include <ATen/quantized/Quantizer.h>
#include <c10/core/DeviceGuard.h>

#include <cstring>
#include <optional>
#include <vector>

#include "../core/device.h"
#include "../core/current_allocator.h"
#include "../core/stream.h"
#include "../runtime/queue.h"
#include "host_call.h"

namespace torch_mlu {
namespace {

constexpr auto kQMLU = c10::DispatchKey::QuantizedPrivateUse1;

c10::Device target_device(std::optional<c10::Device> device) {
  c10::Device d = device.value_or(c10::Device(kMLU, current_device()));
  TORCH_CHECK(d.type() == kMLU, "expected an mlu device, got ", d);
  if (!d.has_index()) d = c10::Device(kMLU, current_device());
  check_device_index(d.index());
  return d;
}

// Storage bytes of a quantized tensor, as ATen's get_sub_byte_tensor_size (sub-byte dtypes pack the last dim).
int64_t qtensor_nbytes(c10::IntArrayRef sizes, c10::ScalarType t) {
  const int64_t itemsize = static_cast<int64_t>(c10::elementSize(t));
  if (sizes.empty()) return itemsize;
  int64_t per_byte = t == c10::ScalarType::QUInt4x2 ? 2 : t == c10::ScalarType::QUInt2x4 ? 4 : 1;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) rows *= sizes[i];
  return rows * ((sizes.back() * itemsize + per_byte - 1) / per_byte);
}

// ATen's new_qtensor for mlu: a QTensorImpl over a device allocation.
at::Tensor new_mlu_qtensor(c10::IntArrayRef sizes, c10::ScalarType dtype, c10::Device device,
                           c10::MemoryFormat memory_format, at::QuantizerPtr quantizer) {
  for (int64_t s : sizes) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  TORCH_CHECK(c10::isQIntType(dtype), "ScalarType ", dtype, " is not supported in new_qtensor.");
  c10::DeviceGuard guard(device);
  const int64_t nbytes = qtensor_nbytes(sizes, dtype);
  c10::Allocator* alloc = device_allocator();
  auto storage = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), nbytes,
                                                       alloc->allocate(nbytes), alloc, /*resizable=*/true);
  auto t = at::detail::make_tensor<at::QTensorImpl>(c10::Storage(std::move(storage)), c10::DispatchKeySet(kQMLU),
                                                    c10::scalarTypeToTypeMeta(dtype), std::move(quantizer));
  at::get_qtensorimpl(t)->set_sizes_contiguous(sizes);
  at::get_qtensorimpl(t)->empty_tensor_restride(memory_format);
  return t;
}

c10::MemoryFormat format_of(std::optional<c10::MemoryFormat> mf) { return mf.value_or(c10::MemoryFormat::Contiguous); }

bool on_mlu(const at::Tensor& t) { return t.defined() && t.device().type() == kMLU; }

}  // namespace

// ---- factories (ATen: aten/src/ATen/native/quantized/TensorFactories.cpp) ----
at::Tensor empty_affine_quantized(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                  std::optional<c10::Layout>, std::optional<c10::Device> device,
                                  std::optional<bool>, double scale, int64_t zero_point,
                                  std::optional<c10::MemoryFormat> memory_format) {
  const auto st = dtype.value_or(c10::get_default_dtype_as_scalartype());
  return new_mlu_qtensor(size, st, target_device(device), format_of(memory_format),
                         at::make_per_tensor_affine_quantizer(scale, zero_point, st));
}

at::Tensor empty_per_channel_affine_quantized(c10::IntArrayRef size, const at::Tensor& scales,
                                              const at::Tensor& zero_points, int64_t axis,
                                              std::optional<c10::ScalarType> dtype, std::optional<c10::Layout>,
                                              std::optional<c10::Device> device, std::optional<bool>,
                                              std::optional<c10::MemoryFormat> memory_format) {
  // Dispatched here by mlu scales also when the tensor goes elsewhere: `.to("cpu")` of a per-channel mlu tensor
  // makes its CPU result this way (QuantizedCUDA's kernel serves CPU the same way); its qparams go along.
  if (device.has_value() && device->is_cpu()) {
    return at::native::empty_per_channel_affine_quantized(size, scales.cpu(), zero_points.cpu(), axis, dtype,
                                                          std::nullopt, device, std::nullopt, memory_format);
  }
  const auto st = dtype.value_or(c10::get_default_dtype_as_scalartype());
  TORCH_CHECK(c10::isQIntType(st), "ScalarType ", st, " is not supported in new_qtensor.");
  return new_mlu_qtensor(size, st, target_device(device), format_of(memory_format),
                         at::make_per_channel_affine_quantizer(scales, zero_points, axis, st));
}

at::Tensor empty_unknown_quantized(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                   std::optional<c10::Layout>, std::optional<c10::Device> device,
                                   std::optional<bool>, std::optional<c10::MemoryFormat> memory_format) {
  const auto st = dtype.value_or(c10::get_default_dtype_as_scalartype());
  TORCH_CHECK(c10::isQIntType(st), "ScalarType ", st, " is not supported in new_qtensor.");
  return new_mlu_qtensor(size, st, target_device(device), format_of(memory_format), at::make_unknown_quantizer(st));
}

void quantized_host_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const auto& args = op.schema().arguments();
  const size_t n = args.size();
  const size_t begin = stack->size() - n;
  c10::DeviceIndex device = -1;
  for (size_t i = 0; i < n; ++i) {
    const c10::IValue& iv = (*stack)[begin + i];
    if (!iv.isTensor() || !iv.toTensor().defined()) continue;
    const at::Tensor& t = iv.toTensor();
    if (on_mlu(t)) {
      TORCH_CHECK(device == -1 || device == t.device().index(),
                  "Expected all tensors to be on the same device, but found at least two devices, mlu:", device,
                  " and ", t.device(), "! (when checking arguments for ", op.schema().name(), ")");
      device = t.device().index();
    } else {
      TORCH_CHECK(t.dim() == 0 && !t.is_quantized(),
                  "Expected all tensors to be on the same device, but found at least two devices, mlu and ",
                  t.device(), "! (when checking arguments for ", op.schema().name(), ")");
    }
  }
  HostCall hc(device == -1 ? current_device() : device);
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& iv = (*stack)[begin + i];
    if (iv.isTensor() && on_mlu(iv.toTensor())) iv = c10::IValue(hc.host_view(iv.toTensor()));
  }
  // The host views select the QuantizedCPU or CPU kernel.
  hc.run([&] { op.callBoxed(stack); });
  const size_t nret = op.schema().returns().size();
  for (size_t i = stack->size() - nret; i < stack->size(); ++i) {
    c10::IValue& iv = (*stack)[i];
    if (iv.isTensor()) iv = c10::IValue(hc.to_device(iv.toTensor()));
  }
}

// _copy_from(self=src, dst): aten::copy_ (CompositeExplicitAutograd, aten/src/ATen/native/Copy.cpp) hands a
// device it does not know to _copy_from before its quantized checks, so they are made here as there: same qscheme
// and dtype, dst takes src's quantizer, no quantized -> float copy; float -> quantized quantizes with dst's
// quantizer. A plain contiguous pair is one memcpy, others run the CPU copy kernel on host views.
at::Tensor quantized_copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  const bool dst_mlu = on_mlu(dst);
  const bool src_mlu = on_mlu(self);
  TORCH_CHECK((dst_mlu || dst.is_cpu()) && (src_mlu || self.is_cpu()), "copy_ between ", self.device(), " and ",
              dst.device(), " is not supported");
  TORCH_CHECK(dst.is_quantized() || !self.is_quantized(),
              "Copying from quantized Tensor to non-quantized Tensor is not allowed, please use dequantize to get a "
              "float Tensor from a quantized Tensor");
  if (dst.is_quantized() && self.is_quantized()) {
    TORCH_CHECK(dst.qscheme() == self.qscheme(), "Quantized Copy only works with same qscheme");
    TORCH_CHECK(dst.scalar_type() == self.scalar_type());
    // per-channel qparams go to dst's device (the CPU kernels read them on the host; cuda keeps them with the
    // tensor too)
    const c10::Device dev = dst.device();
    at::set_quantizer_(dst, rehome_quantizer(at::get_qtensorimpl(self)->quantizer(),
                                             [&](const at::Tensor& x) { return x.to(dev); }));
  }
  if (dst.numel() == 0) return dst;
  const c10::DeviceIndex dev = dst_mlu ? dst.device().index() : self.device().index();
  HostCall hc(dev);
  at::Tensor hdst = dst_mlu ? hc.host_view(dst) : dst;
  at::Tensor hsrc = src_mlu ? hc.host_view(self) : self;
  if (src_mlu && dst_mlu && self.device().index() != dev) catch_rt::queueSync(current_queue(self.device().index()));
  hc.run([&] {
    if (hdst.is_quantized() && hsrc.is_quantized() && hdst.dtype() == hsrc.dtype() &&
        hdst.sizes() == hsrc.sizes() && hdst.is_contiguous() && hsrc.is_contiguous()) {
      std::memcpy(static_cast<char*>(hdst.data_ptr()), hsrc.data_ptr(), hdst.nbytes());
    } else {
      hdst.copy_(hsrc);
    }
  });
  return dst;
}

at::Tensor squeeze_quantized(const at::Tensor& self) { return at::native::squeeze_quantized(self); }

at::Tensor squeeze_quantized_dim(const at::Tensor& self, int64_t dim) {
  return at::native::squeeze_quantized(self, dim);
}

at::Tensor squeeze_quantized_dims(const at::Tensor& self, c10::IntArrayRef dims) {
  return at::native::squeeze_quantized(self, dims);
}

}  // namespace torch_mlu
