// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "generator.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>

#include <mutex>
#include <vector>

#include "device.h"

namespace torch_mlu {

MLUGeneratorImpl::MLUGeneratorImpl(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(kMLU, device), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      engine(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

void MLUGeneratorImpl::set_current_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lk(engine.mutex());
  engine.set_current_seed(seed);
  offset_ = 0;
}

void MLUGeneratorImpl::set_offset(uint64_t offset) { offset_ = offset; }

uint64_t MLUGeneratorImpl::get_offset() const { return offset_; }

uint64_t MLUGeneratorImpl::current_seed() const { return engine.current_seed(); }

uint64_t MLUGeneratorImpl::seed() {
  std::lock_guard<std::mutex> lk(engine.mutex());
  return engine.seed();
}

void MLUGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  std::lock_guard<std::mutex> lk(engine.mutex());
  engine.unsafeGetGeneratorImpl()->set_state(new_state);
}

c10::intrusive_ptr<c10::TensorImpl> MLUGeneratorImpl::get_state() const {
  return engine.unsafeGetGeneratorImpl()->get_state();
}

c10::DeviceType MLUGeneratorImpl::device_type() { return kMLU; }

MLUGeneratorImpl* MLUGeneratorImpl::clone_impl() const {
  auto* g = new MLUGeneratorImpl(device().index());
  g->engine = engine.clone();
  g->offset_ = offset_;
  return g;
}

namespace {

std::vector<at::Generator>& defaults() {
  static std::vector<at::Generator>* gens = [] {
    auto* v = new std::vector<at::Generator>();
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      v->push_back(at::make_generator<MLUGeneratorImpl>(d));
      v->back().set_current_seed(c10::default_rng_seed_val);
    }
    return v;
  }();
  return *gens;
}

}  // namespace

const at::Generator& default_generator(c10::DeviceIndex device) {
  if (device < 0) device = current_device();
  check_device_index(device);
  return defaults()[device];
}

at::Generator host_engine(const std::optional<at::Generator>& gen, c10::DeviceIndex device) {
  if (gen.has_value() && gen->defined()) {
    TORCH_CHECK(gen->device().type() == kMLU, "Expected a 'mlu' device type for generator but found '",
                gen->device().type(), "'");
    return gen->get<MLUGeneratorImpl>()->engine;
  }
  return default_generator(device).get<MLUGeneratorImpl>()->engine;
}

void with_device_rng(c10::DeviceIndex device, const std::function<void()>& fn) {
  at::Generator engine = host_engine(std::nullopt, device);
  at::Generator cpu = at::detail::getDefaultCPUGenerator();  // shares the default's impl
  auto saved = cpu.get_state();
  {
    std::lock_guard<std::mutex> lk(engine.mutex());
    cpu.set_state(engine.get_state());
  }
  struct Restore {
    at::Generator& cpu;
    at::Generator& engine;
    at::Tensor saved;
    ~Restore() {
      std::lock_guard<std::mutex> lk(engine.mutex());
      engine.set_state(cpu.get_state());
      cpu.set_state(saved);
    }
  } restore{cpu, engine, saved};
  fn();
}

}  // namespace torch_mlu
