// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "redirects.h"

#include <ATen/native/ConvUtils.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice_native.h>

#include <vector>

#include "../core/device.h"
#include "../core/generator.h"
#include "device_kernel.h"

namespace torch_mlu {
namespace {

using c10::IValue;
using torch::jit::Stack;

// The memory format ATen promises for an Overrideable (PrivateUse1) convolution's results:
// at::native::_determine_backend_memory_format(input, weight, ConvBackend::Overrideable), the rule FakeTensor's
// convolution impl applies to mlu tensors (torch/_subclasses/fake_impls.py: conv). The host kernel is CPU's, whose
// oneDNN path returns channels-last results for channels-last inputs; Inductor asserts the fake strides on the real
// results (assert_size_stride), so torch.compile of a channels-last CNN on mlu failed. Results are laid out as
// promised: a no-op unless the CPU kernel chose another layout.
at::MemoryFormat overrideable_conv_format(const Stack& stack, size_t input_pos) {
  const at::Tensor& input = stack[input_pos].toTensor();
  const at::Tensor& weight = stack[input_pos + 1].toTensor();
  return at::native::_determine_backend_memory_format(input, weight, at::native::ConvBackend::Overrideable);
}

void lay_out(IValue& result, at::MemoryFormat format) {
  if (!result.isTensor()) return;
  const at::Tensor& t = result.toTensor();
  if (t.defined() && !t.is_contiguous(format)) result = IValue(t.contiguous(format));
}

template <const char* Name>
void catch_kernel(const c10::OperatorHandle& op, Stack* stack) {
  run_device_kernel(op, stack, [](const c10::OperatorHandle&, Stack* s) {
    static auto kernel = c10::Dispatcher::singleton().findSchemaOrThrow(Name, "");
    kernel.callBoxed(s);
  });
}
constexpr char kCatchMaxPool[] = "torch_mlu::max_pool2d_with_indices";

}  // namespace

void implicit_rng_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  run_device_kernel(op, stack, [](const c10::OperatorHandle& o, Stack* s) {
    with_device_rng(current_device(), [&] { redispatch_cpu(o, s); });
  });
}

// Results laid out as overrideable_conv_format says.
void convolution_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  const at::MemoryFormat format = overrideable_conv_format(*stack, stack->size() - 9);
  run_device_kernel(op, stack, [](const c10::OperatorHandle&, Stack* s) {
    static auto conv = c10::Dispatcher::singleton().findSchemaOrThrow("aten::convolution", "");
    conv.callBoxed(s);
  });
  lay_out(stack->back(), format);
}

// grad_input and grad_weight get the promised layout (FakeTensor lays out both so).
void convolution_backward_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  const at::MemoryFormat format = overrideable_conv_format(*stack, stack->size() - 9);
  run_device_kernel(op, stack, [](const c10::OperatorHandle&, Stack* s) {
    static auto bwd = c10::Dispatcher::singleton().findSchemaOrThrow("aten::convolution_backward", "");
    const size_t begin = s->size() - 10;
    const at::Tensor& weight = (*s)[begin + 2].toTensor();
    bool transposed = (*s)[begin + 6].toBool();
    int64_t groups = (*s)[begin + 8].toInt();
    int64_t channels = transposed ? weight.size(1) * groups : weight.size(0);
    s->insert(s->begin() + static_cast<std::ptrdiff_t>(begin + 3), IValue(std::vector<int64_t>{channels}));
    bwd.callBoxed(s);
  });
  const size_t results = stack->size() - 3;
  lay_out((*stack)[results], format);
  lay_out((*stack)[results + 1], format);
}

// ATen's kernel for contiguous (NCHW) input is a scalar loop that branches on each comparison, several times slower
// than Catch's branch-free kernel on the demos' pooling inputs (benchmarks/bench_host_math.py); Catch's kernel hands
// every case outside its fast path to ATen's CPU kernel. The backward is ATen's kernel, through the generic device
// kernel.
void max_pool2d_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  catch_kernel<kCatchMaxPool>(op, stack);
}

// scaled_dot_product_attention asks _fused_sdp_choice_stub which kernel to use for the query's device type
// (aten/src/ATen/native/transformers/attention.cpp); without a PrivateUse1 entry mlu takes the unfused math path.
// mlu answers with CPU's rules (_fused_sdp_choice_cpp: flash unless dropout, dtype or shapes rule it out), so a
// flash choice runs _scaled_dot_product_flash_attention_for_cpu -- a device kernel -- exactly as CPU does.
int64_t mlu_fused_sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                             const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                             std::optional<double> scale, bool enable_gqa) {
  return at::native::_fused_sdp_choice_cpp(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
}

}  // namespace torch_mlu
