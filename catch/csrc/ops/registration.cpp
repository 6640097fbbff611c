// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "registration.h"

#include <ATen/NativeFunctions.h>
#include <ATen/native/transformers/attention.h>
#include <torch/library.h>

#include <memory>
#include <set>

#include "../core/hooks.h"
#include "../kernels/rnn.h"
#include "../kernels/sdpa.h"
#include "copy.h"
#include "device_kernel.h"
#include "device_ops.h"
#include "fallback.h"
#include "quantized_tensor.h"
#include "redirects.h"
#include "shallow_copy.h"
#include "sparse_tensor.h"
#include "typed_kernels.h"

namespace torch_mlu {
namespace {

std::vector<std::string>& registered_ops() {
  static std::vector<std::string> v;
  return v;
}

void register_device_ops(torch::Library& lib) {
  const std::set<std::string>& wanted = device_op_base_names();
  const std::set<std::string> typed = register_typed_kernels(lib);
  const std::set<std::string> manual = {"copy_", "_copy_from", "_copy_from_and_resize", "empty",
                                        "empty_strided", "convolution_overrideable",
                                        "convolution_backward_overrideable"};
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    std::string base = name.name.substr(6);
    if (!wanted.count(base) || manual.count(base)) continue;
    auto op = c10::Dispatcher::singleton().findOp(name);
    if (!op.has_value() || !op->hasSchema()) continue;
    if (!op->hasKernelForDispatchKey(c10::DispatchKey::CPU)) continue;
    // Composite-implicit ops decompose above the backend; a backend kernel
    // would bypass their autograd formula.
    if (op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) continue;
    std::string full = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    if (typed.count(full)) {
      // registered above
    } else if (full == "aten::max_pool2d_with_indices") {
      lib.impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&max_pool2d_kernel>());
    } else if (base == "native_dropout") {
      lib.impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&implicit_rng_kernel>());
    } else {
      lib.impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&device_kernel>());
    }
    registered_ops().push_back(full);
  }
}

// The generic list is registered at the device's initialization: deferred from `import torch`, and by then the whole
// aten library is loaded, so every overload name is known.
const DeviceInitStep g_register_at_init(&register_device_kernels);

}  // namespace

void register_device_kernels() {
  static std::unique_ptr<torch::Library> lib;
  if (lib) return;
  lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                                         __LINE__);
  register_device_ops(*lib);
}

const std::vector<std::string>& device_op_names() { return registered_ops(); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // allocation and copies (copy.h)
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("copy_", copy_);
  m.impl("_copy_from", _copy_from);
  m.impl("_copy_from_and_resize", _copy_from_and_resize);
  m.impl("record_stream", record_stream);
  // redirects (redirects.h)
  // torch._fused_sdp_choice(q, k, v) answers as scaled_dot_product_attention chooses (the stub's entry, below), as
  // CUDA's _fused_sdp_choice_cuda does, instead of through the CPU fallback
  m.impl("_fused_sdp_choice", &mlu_fused_sdp_choice);
  m.impl("convolution_overrideable", torch::CppFunction::makeFromBoxedFunction<&convolution_kernel>());
  m.impl("convolution_backward_overrideable",
         torch::CppFunction::makeFromBoxedFunction<&convolution_backward_kernel>());
  // Module.to("mlu") keeps Parameter objects (shallow_copy.h)
  m.impl("_has_compatible_shallow_copy_type", &has_compatible_shallow_copy_type);
  // fused RNN cells (kernels/rnn.h)
  m.impl("_thnn_fused_lstm_cell", &fused_lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", &fused_lstm_cell_backward_impl);
  m.impl("_thnn_fused_gru_cell", &fused_gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", &fused_gru_cell_backward);
  // the Overrideable fused attention pair (kernels/sdpa.h)
  m.impl("_scaled_dot_product_fused_attention_overrideable", &fused_attention_overrideable);
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", &fused_attention_overrideable_backward);
  // Float mlu tensors in, quantized mlu tensors out (ATen: CPU, CUDA kernels; quantized_tensor.h).
  for (const char* name : {"quantize_per_tensor", "quantize_per_tensor.tensor_qparams", "quantize_per_tensor_dynamic",
                           "quantize_per_channel", "_make_per_tensor_quantized_tensor",
                           "_make_per_channel_quantized_tensor"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&quantized_host_kernel>());
  }
  // A quantized factory asked for a non-quantized dtype (e.g. `q.float()`) lands on the plain backend key: CPU's
  // error ("Creation of quantized tensor requires quantized dtype like torch.quint8"), not the CPU fallback.
  m.impl("_empty_affine_quantized", TORCH_FN(at::native::empty_affine_quantized_other_backends_stub));
  m.impl("_empty_per_channel_affine_quantized",
         TORCH_FN(at::native::empty_per_channel_affine_quantized_other_backends_stub));
  // Dense to sparse conversions: the CPU kernels on host views, the results sparse mlu tensors (sparse_tensor.h).
  for (const char* name : {"_to_sparse", "_to_sparse.sparse_dim", "_to_sparse_csr"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&sparse_host_kernel>());
  }
  // The ops torch.ao fake-quantize modules (FakeQuantize, FusedMovingAvgObsFakeQuantize) call, which have only CPU
  // kernels in ATen and are not in the device-op list: the generic device kernel. (HistogramObserver's histc and
  // bucketize stay on the CPU fallback: the fallback tests use them as their example ops.)
  for (const char* name : {"fake_quantize_per_tensor_affine_cachemask",
                           "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams",
                           "fake_quantize_per_channel_affine_cachemask", "_fused_moving_avg_obs_fq_helper"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&device_kernel>());
  }
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback_kernel>()); }

// Quantized mlu tensors (QuantizedCUDA's list in native_functions.yaml, for the ops whose kernels need no GPU;
// quantized_tensor.h).
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
  m.impl("squeeze", &squeeze_quantized);
  m.impl("squeeze.dim", &squeeze_quantized_dim);
  m.impl("squeeze.dims", &squeeze_quantized_dims);
  m.impl("unsqueeze", TORCH_FN(at::native::unsqueeze_quantized));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(at::native::set_storage_quantized_));
  // copies
  m.impl("_copy_from", &quantized_copy_from);
  // compute: ATen's CPU kernels on host views
  for (const char* name : {"dequantize.self", "int_repr", "clone", "relu", "relu_", "gelu", "fill_.Scalar",
                           "fill_.Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor", "flip", "index_select",
                           "max.dim", "min.dim", "_adaptive_avg_pool2d", "quantized_max_pool2d"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&quantized_host_kernel>());
  }
}

// Sparse COO mlu tensors (sparse_tensor.h): ATen's device-generic kernels for construction and metadata (the ones
// native_functions.yaml names for SparseCPU and SparseCUDA alike), the CPU kernels on host views for compute. Other
// ops raise the dispatcher's "Could not run ... with arguments from the 'Sparsemlu' backend".
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  // construction
  m.impl("_sparse_coo_tensor_with_dims", &sparse_coo_with_dims);
  m.impl("_sparse_coo_tensor_with_dims_and_tensors", &sparse_coo_with_dims_and_tensors);
  m.impl("empty.memory_format", &empty_sparse_coo);
  m.impl("empty_like", TORCH_FN(at::native::empty_like_sparse_coo));
  m.impl("clone", TORCH_FN(at::native::clone_sparse));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_wrapper_));
  m.impl("copy_sparse_to_sparse_", TORCH_FN(at::native::copy_sparse_));
  m.impl("sparse_resize_", TORCH_FN(at::native::sparse_resize_));
  m.impl("sparse_resize_and_clear_", TORCH_FN(at::native::sparse_resize_and_clear_));
  m.impl("resize_as_sparse_", TORCH_FN(at::native::resize_as_sparse_));
  m.impl("zero_", TORCH_FN(at::native::zero_sparse_));
  // metadata
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("_dimI", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("_dimV", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse));
  m.impl("is_coalesced", TORCH_FN(at::native::is_coalesced_sparse));
  m.impl("_coalesced_", TORCH_FN(at::native::_coalesced_sparse_));
  m.impl("_indices", TORCH_FN(at::native::_indices_sparse));
  m.impl("_values", TORCH_FN(at::native::_values_sparse));
  m.impl("indices", TORCH_FN(at::native::indices_sparse));
  m.impl("values", TORCH_FN(at::native::values_sparse));
  // compute: ATen's CPU kernels on host views
  for (const char* name : {"_coalesce", "_to_dense", "_to_sparse", "_to_sparse.sparse_dim", "_to_sparse_csr", "mm",
                           "mm.out", "addmm", "addmm.out", "mv", "add.Tensor", "add_.Tensor", "add.out", "sum",
                           "sum.dim_IntList", "sparse_mask", "_sparse_mask_projection"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&sparse_host_kernel>());
  }
}

// Sparse compressed mlu tensors (CSR, CSC, BSR, BSC; sparse_tensor.h), as SparsePrivateUse1 above.
TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  // construction (the constructors themselves are composite: _sparse_compressed_tensor_unsafe)
  m.impl("empty_like", TORCH_FN(at::native::empty_like_sparse_csr));
  m.impl("clone", TORCH_FN(at::native::clone_sparse_compressed));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_compressed_));
  m.impl("resize_as_sparse_", TORCH_FN(at::native::resize_as_sparse_compressed_));
  // metadata
  m.impl("crow_indices", TORCH_FN(at::native::crow_indices_sparse_csr));
  m.impl("col_indices", TORCH_FN(at::native::col_indices_sparse_csr));
  m.impl("ccol_indices", TORCH_FN(at::native::ccol_indices_sparse_csr));
  m.impl("row_indices", TORCH_FN(at::native::row_indices_sparse_csr));
  m.impl("values", TORCH_FN(at::native::values_sparse_csr));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse_csr));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse_csr));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse_csr));
  // compute: ATen's CPU kernels on host views
  for (const char* name : {"_to_dense", "_to_sparse", "_to_sparse.sparse_dim", "_to_sparse_csr", "mm", "mm.out",
                           "addmm", "addmm.out", "addmv.out", "add.Tensor", "add_.Tensor", "add.out", "sum",
                           "sum.dim_IntList"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&sparse_host_kernel>());
  }
}

}  // namespace torch_mlu

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_mlu::mlu_fused_sdp_choice)
}  // namespace at::native
