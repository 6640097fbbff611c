// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "device_kernel.h"

#include <optional>
#include <string>

#include "../core/device.h"
#include "../core/generator.h"
#include "host_call.h"

namespace torch_mlu {
namespace {

using c10::IValue;
using torch::jit::Stack;

std::string device_str(const at::Tensor& t) { return t.device().str(); }

[[noreturn]] void mixed_devices(const std::string& a, const std::string& b, const c10::OperatorHandle& op) {
  TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ", a, " and ", b,
              "! (when checking arguments for ", op.schema().name(), ")");
}

bool is_optional_generator(const c10::Argument& a) {
  const auto& t = a.type();
  if (t->kind() == c10::TypeKind::GeneratorType) return true;
  return t->kind() == c10::TypeKind::OptionalType &&
         t->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType;
}

}  // namespace

c10::DeviceIndex op_device(const c10::OperatorHandle& op, const Stack& stack, size_t begin, size_t n) {
  c10::DeviceIndex dev = -1;
  const at::Tensor* cpu_arg = nullptr;
  const at::Tensor* other = nullptr;
  auto note = [&](const at::Tensor& t, bool in_index_list) {
    if (!t.defined()) return;
    auto type = t.device().type();
    if (type == kMLU) {
      if (dev == -1) {
        dev = t.device().index();
      } else if (t.device().index() != dev) {
        mixed_devices("mlu:" + std::to_string(dev), device_str(t), op);
      }
    } else if (type == c10::kCPU) {
      if (t.dim() != 0 && !in_index_list && cpu_arg == nullptr) cpu_arg = &t;
    } else if (other == nullptr) {
      other = &t;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    const IValue& iv = stack[begin + i];
    if (iv.isTensor()) {
      note(iv.toTensor(), false);
    } else if (iv.isTensorList()) {
      for (const at::Tensor& t : iv.toTensorList()) note(t, false);
    } else if (iv.isList()) {
      for (const IValue& e : iv.toListRef()) {
        if (e.isTensor()) note(e.toTensor(), true);
      }
    } else if (iv.isDevice() && iv.toDevice().type() == kMLU && dev == -1) {
      dev = iv.toDevice().has_index() ? iv.toDevice().index() : current_device();
      check_device_index(dev);
    }
  }
  if (dev == -1) dev = current_device();
  if (cpu_arg != nullptr) mixed_devices("mlu:" + std::to_string(dev), device_str(*cpu_arg), op);
  if (other != nullptr) mixed_devices("mlu:" + std::to_string(dev), device_str(*other), op);
  return dev;
}

void redispatch_cpu(const c10::OperatorHandle& op, Stack* stack) {
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
}

// The generic device kernel: `call` runs the host computation on the rewritten stack.
void run_device_kernel(const c10::OperatorHandle& op, Stack* stack, HostFn call) {
  const auto& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t n = args.size();
  const size_t begin = stack->size() - n;
  HostCall hc(op_device(op, *stack, begin, n));

  for (size_t i = 0; i < n; ++i) {
    IValue& iv = (*stack)[begin + i];
    const auto* alias = args[i].alias_info();
    bool writes = alias != nullptr && alias->isWrite();
    if (iv.isTensor()) {
      const at::Tensor& t = iv.toTensor();
      if (t.defined() && t.device().type() == kMLU) {
        at::Tensor h = hc.host_view(t);
        if (writes) hc.note_written(t, h);
        iv = IValue(std::move(h));
      }
    } else if (iv.isTensorList()) {
      auto list = iv.toTensorList();
      c10::List<at::Tensor> out;
      out.reserve(list.size());
      for (const at::Tensor& t : list) {
        if (t.defined() && t.device().type() == kMLU) {
          at::Tensor h = hc.host_view(t);
          if (writes) hc.note_written(t, h);
          out.push_back(h);
        } else {
          out.push_back(t);
        }
      }
      iv = IValue(out);
    } else if (iv.isList() && args[i].type()->str() == "Tensor?[]") {
      c10::List<std::optional<at::Tensor>> out;
      for (const IValue& e : iv.toListRef()) {
        if (e.isTensor() && e.toTensor().defined() && e.toTensor().device().type() == kMLU) {
          out.push_back(hc.host_view(e.toTensor()));
        } else if (e.isTensor() && e.toTensor().defined()) {
          out.push_back(e.toTensor());
        } else {
          out.push_back(std::nullopt);
        }
      }
      iv = IValue(out);
    } else if (iv.isDevice() && iv.toDevice().type() == kMLU) {
      iv = IValue(c10::Device(c10::kCPU));
    } else if (iv.isStorage()) {
      c10::Storage s = iv.toStorage();
      if (s.device_type() == kMLU) iv = IValue(hc.host_storage(s));
    } else if (is_optional_generator(args[i])) {
      std::optional<at::Generator> g;
      if (iv.isGenerator()) g = iv.toGenerator();
      iv = IValue(host_engine(g, hc.device()));
    }
  }

  hc.run([&] { call(op, stack); });

  const size_t nret = schema.returns().size();
  const size_t rbegin = stack->size() - nret;
  for (size_t i = 0; i < nret; ++i) {
    IValue& iv = (*stack)[rbegin + i];
    if (iv.isTensor()) {
      iv = IValue(hc.to_device(iv.toTensor()));
    } else if (iv.isTensorList()) {
      c10::List<at::Tensor> out;
      for (const at::Tensor& t : iv.toTensorList()) out.push_back(hc.to_device(t));
      iv = IValue(out);
    }
  }
}

void device_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, Stack* stack) {
  run_device_kernel(op, stack, &redispatch_cpu);
}

}  // namespace torch_mlu
