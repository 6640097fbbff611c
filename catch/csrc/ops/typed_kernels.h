// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Typed device kernels for the hottest ops: add, sub, mul and div (.Tensor, and their in-place forms), mm, bmm and
// addmm (and their .out forms).
#pragma once

#include <torch/library.h>

#include <cstdint>
#include <set>
#include <string>

namespace torch_mlu {

// Registers the typed kernels on `lib` (aten, PrivateUse1); returns their full names ("aten::add.Tensor").
std::set<std::string> register_typed_kernels(torch::Library& lib);

// Calls made on this thread that took a typed device kernel's common path, for tests: the rest of those calls ran
// the generic kernel.
int64_t typed_kernel_calls();

}  // namespace torch_mlu
