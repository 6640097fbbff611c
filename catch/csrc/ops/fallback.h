// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The boxed CPU fallback for every mlu op without a device kernel (at::native::cpu_fallback: copies in and out). It
// warns once per op and counts calls per op (torch.mlu.fallback_report()); strict mode (CATCH_FALLBACK_STRICT=1 or
// set_fallback_strict(true)) turns a fallback into an error naming the op.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <map>
#include <string>

namespace torch_mlu {

// The kernel registered for the PrivateUse1 fallback (TORCH_LIBRARY_IMPL(_, PrivateUse1)).
void fallback_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack);

std::map<std::string, int64_t> fallback_report();  // "aten::op.overload" -> calls
void reset_fallback_report();
bool fallback_strict();  // CATCH_FALLBACK_STRICT=1 or set_fallback_strict(true)
void set_fallback_strict(bool on);

}  // namespace torch_mlu
