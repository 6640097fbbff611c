// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// Quantized tensors on mlu (dispatch key QuantizedPrivateUse1), as ATen gives them to cuda (QuantizedCUDA):
// torch.quantize_per_tensor / quantize_per_channel of an mlu tensor, dequantize, int_repr, q_scale /
// q_zero_point / q_per_channel_*, the quantized factories (_empty_affine_quantized, empty_quantized, ...),
// views, clone, copies between mlu and CPU (`.to("cpu")`, `.to("mlu")`) and the few elementwise ops ATen has
// QuantizedCUDA kernels for (relu, gelu, fill_, masked_fill_, flip, index_select, min/max.dim).
//
// Why our own allocation: ATen's at::new_qtensor (aten/src/ATen/quantized/Quantizer.cpp) picks the allocator
// for CPU, CUDA and Meta only and asserts "unrecognized device for new_qtensor" for any other device, so every
// ATen factory that ends there cannot make an mlu quantized tensor. new_mlu_qtensor() below makes the same
// QTensorImpl (the quantizer object, sizes and strides as new_qtensor sets them) over a device allocation.
//
// Kernels, three kinds:
//   - metadata only (q_scale, views, qscheme, ...): ATen's own device-independent native functions;
//   - factories: new_mlu_qtensor with the quantizer ATen's factory would build;
//   - compute: ATen's CPU kernel on host aliases of the device buffers (a QuantizedCPU alias keeps the
//     quantizer; per-channel scales and zero points are aliased too), run in order on the current queue;
//     fresh results are adopted as device memory, so the values are the CPU kernel's, bit for bit.
#include <ATen/ATen.h>
#include <ATen/NativeFunctions.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/quantized/QTensorImpl.h>
#include <ATen/quantized/Quantizer.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <cstring>
#include <optional>
#include <vector>

#include "../aten/mlu_aten.h"
#include "../core/mlu_core.h"

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

// ---- factories (ATen: aten/src/ATen/native/quantized/TensorFactories.cpp) ---------------------------------
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

// ---- host aliases ----------------------------------------------------------------------------------------
bool on_mlu(const at::Tensor& t) { return t.defined() && t.device().type() == kMLU; }

c10::Storage host_storage(const at::Tensor& t) {
  auto* impl = t.storage().unsafeGetStorageImpl();
  const size_t nbytes = impl->nbytes();
  void* host = nbytes > 0 ? catch_rt::mapHostUnchecked(impl->data_ptr().get()) : nullptr;
  return c10::Storage(c10::Storage::use_byte_size_t(), nbytes, c10::DataPtr(host, c10::Device(c10::kCPU)),
                      c10::GetCPUAllocator(), /*resizable=*/true);
}

at::Tensor plain_host_alias(const at::Tensor& t) {
  auto alias = c10::make_intrusive<c10::TensorImpl>(host_storage(t), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                    t.dtype());
  alias->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  return at::Tensor(std::move(alias));
}

bool per_channel(c10::QScheme s) {
  return s == c10::kPerChannelAffine || s == c10::kPerChannelSymmetric || s == c10::kPerChannelAffineFloatQParams;
}

// The quantizer with its per-channel tensors moved by `move` (to host aliases, or to the device).
template <typename Move>
at::QuantizerPtr rehome_quantizer(const at::QuantizerPtr& q, Move&& move) {
  if (!q || !per_channel(q->qscheme())) return q;
  auto* pc = static_cast<at::PerChannelAffineQuantizer*>(q.get());
  return at::make_per_channel_affine_quantizer(move(pc->scales()), move(pc->zero_points()), pc->axis(),
                                               q->scalar_type());
}

at::Tensor host_alias(const at::Tensor& t) {
  if (!t.is_quantized()) return plain_host_alias(t);
  auto q = rehome_quantizer(at::get_qtensorimpl(t)->quantizer(),
                            [](const at::Tensor& x) { return on_mlu(x) ? plain_host_alias(x) : x; });
  auto alias = c10::make_intrusive<at::QTensorImpl>(host_storage(t), c10::DispatchKeySet(c10::DispatchKey::QuantizedCPU),
                                                    t.dtype(), std::move(q));
  alias->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  return at::Tensor(std::move(alias));
}

// Boxed kernel: the CPU kernel (QuantizedCPU or CPU, whichever the aliases select) on host aliases of the mlu
// arguments. Tensor arguments are plain tensors (no lists); in-place arguments are written in place (the
// ops listed never resize them) and a return aliasing one (Tensor(a!)) is that mlu argument.
void host_alias_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const auto& args = op.schema().arguments();
  const size_t n = args.size();
  const size_t begin = stack->size() - n;
  c10::DeviceIndex device = -1;
  std::vector<at::Tensor> keep;  // the mlu arguments stay alive while their aliases are used
  std::optional<at::Tensor> written;
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& iv = (*stack)[begin + i];
    if (!iv.isTensor() || !iv.toTensor().defined()) continue;
    const at::Tensor& t = iv.toTensor();
    if (on_mlu(t)) {
      TORCH_CHECK(device == -1 || device == t.device().index(),
                  "Expected all tensors to be on the same device, but found at least two devices, mlu:", device,
                  " and ", t.device(), "! (when checking arguments for ", op.schema().name(), ")");
      device = t.device().index();
      const auto* info = args[i].alias_info();
      if (info != nullptr && info->isWrite() && !written) written = t;
      keep.push_back(t);
      iv = c10::IValue(host_alias(t));
    } else {
      TORCH_CHECK(t.dim() == 0 && !t.is_quantized(),
                  "Expected all tensors to be on the same device, but found at least two devices, mlu and ",
                  t.device(), "! (when checking arguments for ", op.schema().name(), ")");
    }
  }
  if (device == -1) device = current_device();
  {
    catch_rt::Queue* q = current_queue(device);
    if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
    c10::DeviceGuard guard(c10::Device(kMLU, device));
    HostKernelScope scope;
    c10::impl::ExcludeDispatchKeyGuard below(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
    op.callBoxed(stack);
  }
  const auto& rets = op.schema().returns();
  const size_t nret = rets.size();
  for (size_t i = 0; i < nret; ++i) {
    c10::IValue& iv = (*stack)[stack->size() - nret + i];
    if (!iv.isTensor()) continue;
    if (rets[i].alias_info() != nullptr && written) {
      iv = c10::IValue(*written);
    } else {
      iv = c10::IValue(adopt_host_result(iv.toTensor(), device));
    }
  }
}

// _copy_from(self=src, dst): aten::copy_ (CompositeExplicitAutograd, aten/src/ATen/native/Copy.cpp) hands a
// device it does not know to _copy_from before its quantized checks, so they are made here as there: same qscheme
// and dtype, dst takes src's quantizer, no quantized -> float copy; float -> quantized quantizes with dst's
// quantizer. A plain contiguous pair is one memcpy, others run the CPU copy kernel on host aliases.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
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
  catch_rt::Queue* q = current_queue(dev);
  if (src_mlu && dst_mlu && self.device().index() != dev) catch_rt::queueSync(current_queue(self.device().index()));
  if (!catch_rt::queueIdle(q)) catch_rt::queueSync(q);
  at::Tensor hdst = dst_mlu ? host_alias(dst) : dst;
  at::Tensor hsrc = src_mlu ? host_alias(self) : self;
  c10::DeviceGuard guard(c10::Device(kMLU, dev));
  HostKernelScope scope;
  c10::impl::ExcludeDispatchKeyGuard below(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
  if (hdst.is_quantized() && hsrc.is_quantized() && hdst.dtype() == hsrc.dtype() && hdst.sizes() == hsrc.sizes() &&
      hdst.is_contiguous() && hsrc.is_contiguous()) {
    std::memcpy(static_cast<char*>(hdst.data_ptr()), hsrc.data_ptr(), hdst.nbytes());
  } else {
    hdst.copy_(hsrc);
  }
  return dst;
}

at::Tensor squeeze_all(const at::Tensor& self) { return at::native::squeeze_quantized(self); }
at::Tensor squeeze_dim(const at::Tensor& self, int64_t dim) { return at::native::squeeze_quantized(self, dim); }
at::Tensor squeeze_dims(const at::Tensor& self, c10::IntArrayRef dims) {
  return at::native::squeeze_quantized(self, dims);
}

}  // namespace

// A block the kernel allocated (under HostKernelScope) -> device DataPtr; a foreign block is copied.
c10::DataPtr to_device_block(c10::DataPtr hp, size_t nbytes, c10::DeviceIndex device) {
  if (adopt_host_block(hp, device)) return hp;
  c10::DataPtr dp = device_allocator()->allocate(nbytes);
  if (nbytes > 0) MLU_CHECK(catch_rt::memcpy(dp.get(), hp.get(), nbytes, catch_rt::MemcpyKind::HostToDevice));
  return dp;
}

// A fresh CPU result (quantized or not) -> an mlu tensor owning its (adopted) buffer.
at::Tensor adopt_host_result(const at::Tensor& r, c10::DeviceIndex device) {
  if (!r.defined() || r.device().type() != c10::kCPU) return r;
  auto* s = r.storage().unsafeGetStorageImpl();
  const size_t nbytes = s->nbytes();
  c10::DataPtr dp = to_device_block(s->set_data_ptr(c10::DataPtr(nullptr, c10::Device(c10::kCPU))), nbytes, device);
  s->set_nbytes(0);
  c10::Storage ds(c10::Storage::use_byte_size_t(), nbytes, std::move(dp), device_allocator(), true);
  c10::intrusive_ptr<c10::TensorImpl> impl;
  if (r.is_quantized()) {
    const c10::Device dev(kMLU, device);
    auto q = rehome_quantizer(at::get_qtensorimpl(r)->quantizer(), [&](const at::Tensor& x) { return x.to(dev); });
    impl = c10::make_intrusive<at::QTensorImpl>(std::move(ds), c10::DispatchKeySet(kQMLU), r.dtype(), std::move(q));
  } else {
    impl = c10::make_intrusive<c10::TensorImpl>(std::move(ds), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                r.dtype());
  }
  impl->set_sizes_and_strides(r.sizes(), r.strides(), r.storage_offset());
  return at::Tensor(std::move(impl));
}

// Quantized mlu tensors (QuantizedCUDA's list in native_functions.yaml, for the ops whose kernels need no GPU).
TORCH_LIBRARY_IMPL(aten, QuantizedPrivateUse1, m) {
  // factories
  m.impl("_empty_affine_quantized", &empty_affine_quantized);
  m.impl("_empty_per_channel_affine_quantized", &empty_per_channel_affine_quantized);
  m.impl("empty.memory_format", &empty_unknown_quantized);
  m.impl("empty_quantized", TORCH_FN(at::native::empty_quantized));
  m.impl("empty_like", TORCH_FN(at::native::empty_like_quantized));
  m.impl("empty_strided", TORCH_FN(at::native::empty_strided_unknown_quantized));
  // metadata and views
  m.impl("q_scale", TORCH_FN(at::native::q_scale_quant));
  m.impl("q_zero_point", TORCH_FN(at::native::q_zero_point_quant));
  m.impl("q_per_channel_scales", TORCH_FN(at::native::q_per_channel_scales));
  m.impl("q_per_channel_zero_points", TORCH_FN(at::native::q_per_channel_zero_points));
  m.impl("q_per_channel_axis", TORCH_FN(at::native::q_per_channel_axis));
  m.impl("qscheme", TORCH_FN(at::native::qscheme_quant));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_qtensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("squeeze", &squeeze_all);
  m.impl("squeeze.dim", &squeeze_dim);
  m.impl("squeeze.dims", &squeeze_dims);
  m.impl("unsqueeze", TORCH_FN(at::native::unsqueeze_quantized));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(at::native::set_storage_quantized_));
  // copies
  m.impl("_copy_from", &copy_from);
  // compute: ATen's CPU kernels on host aliases
  for (const char* name : {"dequantize.self", "int_repr", "clone", "relu", "relu_", "gelu", "fill_.Scalar",
                           "fill_.Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor", "flip", "index_select",
                           "max.dim", "min.dim", "_adaptive_avg_pool2d", "quantized_max_pool2d"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&host_alias_kernel>());
  }
}

// Float mlu tensors in, quantized mlu tensors out (ATen: CPU, CUDA kernels).
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : {"quantize_per_tensor", "quantize_per_tensor.tensor_qparams", "quantize_per_tensor_dynamic",
                           "quantize_per_channel", "_make_per_tensor_quantized_tensor",
                           "_make_per_channel_quantized_tensor"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&host_alias_kernel>());
  }
  // A quantized factory asked for a non-quantized dtype (e.g. `q.float()`) lands on the plain backend key: CPU's
  // error ("Creation of quantized tensor requires quantized dtype like torch.quint8"), not the CPU fallback.
  m.impl("_empty_affine_quantized", TORCH_FN(at::native::empty_affine_quantized_other_backends_stub));
  m.impl("_empty_per_channel_affine_quantized",
         TORCH_FN(at::native::empty_per_channel_affine_quantized_other_backends_stub));
}

}  // namespace torch_mlu
