// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Sparse tensors on mlu: COO (dispatch key SparsePrivateUse1) and compressed, i.e. CSR/CSC/BSR/BSC
// (SparseCsrPrivateUse1), as ATen gives them to cuda (SparseCUDA, SparseCsrCUDA). Their member tensors (indices and
// values; compressed and plain indices and values) are plain mlu tensors. Registered in registration.cpp.
//
// Kernels, two kinds:
//   - construction and metadata (_indices, crow_indices, _nnz, is_coalesced, empty, copy_, ...): ATen's
//     device-generic native functions (the ones native_functions.yaml names for SparseCPU and SparseCUDA alike),
//     the COO constructors below under a guard of their device, as ATen's generated SparseCUDA wrappers do;
//   - compute (coalesce, to_dense, mm, addmm, mv, add, sum, ...): sparse_host_kernel, ATen's SparseCPU /
//     SparseCsrCPU / CPU kernel on host views of the member tensors (host_call.h): no copies, the CPU's values.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/SymIntArrayRef.h>

#include <cstdint>
#include <optional>

namespace torch_mlu {

// aten::_sparse_coo_tensor_with_dims: an empty COO tensor (nnz 0) of `size` with `sparse_dim` sparse and
// `dense_dim` dense dimensions on `device` (ATen: new_with_dims_sparse).
at::Tensor sparse_coo_with_dims(int64_t sparse_dim, int64_t dense_dim, c10::IntArrayRef size,
                                std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                                std::optional<c10::Device> device, std::optional<bool> pin_memory);

// aten::_sparse_coo_tensor_with_dims_and_tensors: a COO tensor over `indices` (int64, sparse_dim x nnz) and
// `values` (nnz x dense sizes) on `device`, without checks of the indices (ATen:
// new_with_dims_and_tensor_sparse_symint; its errors for inconsistent shapes).
at::Tensor sparse_coo_with_dims_and_tensors(int64_t sparse_dim, int64_t dense_dim, c10::SymIntArrayRef size,
                                            const at::Tensor& indices, const at::Tensor& values,
                                            std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                                            std::optional<c10::Device> device, std::optional<bool> pin_memory,
                                            std::optional<bool> is_coalesced);

// aten::empty.memory_format for the COO layout: an empty COO tensor of `size`, all dimensions sparse (ATen:
// empty_sparse).
at::Tensor empty_sparse_coo(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                            std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                            std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format);

// Boxed kernel: the op's CPU kernel (SparseCPU, SparseCsrCPU or CPU, whichever the host tensors select) on host
// views of the mlu arguments: a sparse mlu tensor becomes a CPU sparse tensor of the same layout, sizes and flags
// over host views of its member tensors. Results become mlu tensors of the same layout (fresh member buffers are
// adopted as device memory); a written sparse argument (in-place and out ops) takes the host tensor's sizes,
// members and coalesced flag. Tensor arguments are single tensors (no lists); mixing an mlu tensor with a non-scalar
// CPU tensor raises cuda's "Expected all tensors to be on the same device" error.
void sparse_host_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);

}  // namespace torch_mlu
