// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "fallback.h"

#include <ATen/native/CPUFallback.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "device_kernel.h"

namespace torch_mlu {
namespace {

using torch::jit::Stack;

struct FallbackStats {
  std::mutex mu;
  std::map<std::string, int64_t> counts;
};
FallbackStats& fstats() {
  static FallbackStats* s = new FallbackStats();
  return *s;
}

void mlu_cpu_fallback(const c10::OperatorHandle& op, Stack* stack) {
  const auto& name = op.schema().operator_name();
  std::string full = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
  TORCH_CHECK_NOT_IMPLEMENTED(!fallback_strict(), "The operator '", full,
                              "' has no mlu device kernel and CATCH_FALLBACK_STRICT=1 forbids the CPU fallback.");
  const size_t n = op.schema().arguments().size();
  op_device(op, *stack, stack->size() - n, n);
  bool first = false;
  {
    auto& s = fstats();
    std::lock_guard<std::mutex> lk(s.mu);
    first = s.counts[full]++ == 0;
  }
  if (first) {
    TORCH_WARN("The operator '", full,
               "' has no mlu device kernel; it falls back to the CPU (copies in and out). "
               "This warning is shown once per operator; set CATCH_FALLBACK_STRICT=1 to make it an error.");
  }
  at::native::cpu_fallback(op, stack);
}

bool fallback_strict_env() {
  const char* v = std::getenv("CATCH_FALLBACK_STRICT");
  return v != nullptr && std::string(v) == "1";
}
std::atomic<bool> g_strict{fallback_strict_env()};

}  // namespace

void fallback_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) { mlu_cpu_fallback(op, stack); }

std::map<std::string, int64_t> fallback_report() {
  auto& s = fstats();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.counts;
}

void reset_fallback_report() {
  auto& s = fstats();
  std::lock_guard<std::mutex> lk(s.mu);
  s.counts.clear();
}

bool fallback_strict() { return g_strict.load(); }

void set_fallback_strict(bool on) { g_strict.store(on); }

}  // namespace torch_mlu
