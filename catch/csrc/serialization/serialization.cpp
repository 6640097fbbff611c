// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// Backend metadata of mlu tensors (c10::BackendMeta) through torch.save / torch.load.
//
// The metadata: a layout tag, the CNNL tensor layout (cnnlTensorLayout_t: NCHW, NHWC, HWCN, NDHWC, ARRAY, TNC, NTC,
// NCDHW, NC, NLC) that device code prepared the tensor's buffer in. It lives in the TensorImpl's ExtraMeta, so
// shallow copies (detach, nn.Parameter) keep it and fresh results (clone, .to) start without one. Set and read it
// with torch.ops.torch_mlu.set_layout(t, "NHWC") / torch.ops.torch_mlu.get_layout(t) (None when untagged).
//
// Serialization, as PyTorch's PrivateUse1 hook defines it (torch/csrc/jit/serialization/pickler_helper.h:
// getTensorMetadata / setTensorMetadata, TensorBackendMetaRegistry; registered like torch_openreg's
// OpenRegSerialization.cpp): torch.save stores a map string -> bool per tensor, so the tag is saved as the key
// "mlu_layout_<NAME>". torch.load calls the deserializer only for tensors restored on mlu: with
// map_location="cpu" the tensor carries no tag (CPU has no BackendMeta), as for openreg. A key naming a layout this
// build does not know (a newer writer) is dropped with a warning, the tensor loads untagged.
#include <ATen/core/Tensor.h>
#include <c10/core/TensorImpl.h>
#include <torch/csrc/jit/serialization/pickler_helper.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "../core/device.h"

namespace torch_mlu {
namespace {

constexpr std::array<std::string_view, 10> kLayouts = {"NCHW", "NHWC", "HWCN", "NDHWC", "ARRAY",
                                                        "TNC",  "NTC",  "NCDHW", "NC",   "NLC"};
constexpr std::string_view kKeyPrefix = "mlu_layout_";

struct LayoutMeta final : public c10::BackendMeta {
  explicit LayoutMeta(std::string l) : layout(std::move(l)) {}
  std::string layout;
};

bool known_layout(std::string_view name) {
  return std::find(kLayouts.begin(), kLayouts.end(), name) != kLayouts.end();
}

const LayoutMeta* layout_meta(const at::Tensor& t) {
  if (!t.defined()) return nullptr;
  return dynamic_cast<const LayoutMeta*>(t.unsafeGetTensorImpl()->get_backend_meta());
}

void set_layout(const at::Tensor& t, c10::string_view layout) {
  TORCH_CHECK(t.defined() && t.device().type() == kMLU, "set_layout: expected an mlu tensor, got ",
              t.defined() ? t.device().str() : std::string("an undefined tensor"));
  const std::string name(layout);
  if (!known_layout(name)) {
    std::string valid;
    for (auto l : kLayouts) valid += (valid.empty() ? "" : ", ") + std::string(l);
    TORCH_CHECK(false, "set_layout: unknown layout '", name, "' (one of ", valid, ")");
  }
  t.unsafeGetTensorImpl()->set_backend_meta(c10::make_intrusive<LayoutMeta>(name));
}

std::optional<std::string> get_layout(const at::Tensor& t) {
  const LayoutMeta* m = layout_meta(t);
  if (m == nullptr) return std::nullopt;
  return m->layout;
}

void for_serialization(const at::Tensor& t, std::unordered_map<std::string, bool>& m) {
  if (const LayoutMeta* meta = layout_meta(t)) m[std::string(kKeyPrefix) + meta->layout] = true;
}

void for_deserialization(const at::Tensor& t, std::unordered_map<std::string, bool>& m) {
  for (const auto& [key, value] : m) {
    if (!value || key.rfind(kKeyPrefix, 0) != 0) continue;
    const std::string name = key.substr(kKeyPrefix.size());
    if (known_layout(name)) {
      t.unsafeGetTensorImpl()->set_backend_meta(c10::make_intrusive<LayoutMeta>(name));
    } else {
      TORCH_WARN("torch.load: an mlu tensor was saved with layout '", name,
                 "', which this torch_mlu does not know; it loads without a layout tag");
    }
  }
}

const int registered = [] {
  torch::jit::TensorBackendMetaRegistry(c10::DeviceType::PrivateUse1, &for_serialization, &for_deserialization);
  return 0;
}();

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_mlu, m) {
  m.def("set_layout(Tensor self, str layout) -> ()", &set_layout);
  m.def("get_layout(Tensor self) -> str?", &get_layout);
}

}  // namespace torch_mlu
