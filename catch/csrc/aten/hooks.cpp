// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// PrivateUse1 hooks (at::PrivateUse1HooksInterface) and the mlu generator.
//
// Generator design: each mlu generator owns a CPU engine (at::CPUGeneratorImpl,
// mt19937 + the CPU normal cache). Host kernels draw from that engine, so an
// mlu run and a cpu run seeded alike produce the same random numbers, and the
// state (get_state/set_state) has CPU's format.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Storage.h>

#include <mutex>
#include <vector>

#include "../core/mlu_core.h"
#include "mlu_aten.h"

namespace torch_mlu {
namespace {

struct MLUGeneratorImpl final : public c10::GeneratorImpl {
  explicit MLUGeneratorImpl(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val)
      : c10::GeneratorImpl(c10::Device(kMLU, device), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
        engine(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

  void set_current_seed(uint64_t seed) override {
    std::lock_guard<std::mutex> lk(engine.mutex());
    engine.set_current_seed(seed);
    offset_ = 0;
  }
  // The CPU engine has no Philox offset (its whole position is get_state()),
  // but torch.Generator.__reduce__ saves get_offset() for every non-CPU
  // generator and __setstate__ restores it before set_state(): keep the value,
  // so pickling and copy.deepcopy work as for CUDA generators.
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  uint64_t current_seed() const override { return engine.current_seed(); }
  uint64_t seed() override {
    std::lock_guard<std::mutex> lk(engine.mutex());
    return engine.seed();
  }
  void set_state(const c10::TensorImpl& new_state) override {
    std::lock_guard<std::mutex> lk(engine.mutex());
    engine.unsafeGetGeneratorImpl()->set_state(new_state);
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    return engine.unsafeGetGeneratorImpl()->get_state();
  }
  static c10::DeviceType device_type() { return kMLU; }

  MLUGeneratorImpl* clone_impl() const override {
    auto* g = new MLUGeneratorImpl(device().index());
    g->engine = engine.clone();
    g->offset_ = offset_;
    return g;
  }

  at::Generator engine;
  uint64_t offset_ = 0;
};

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

struct MLUHooks final : public at::PrivateUse1HooksInterface {
  void init() const override {}
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex d) const override { return d >= 0 && d < device_count(); }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = current_device();
    set_device(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override {
    if (d < 0 || d >= device_count()) return current_device();
    return exchangeDevice(d);
  }
  bool isPinnedPtr(const void* data) const override { return catch_rt::isPinned(data); }
  at::Allocator* getPinnedMemoryAllocator() const override { return host_allocator(); }
  at::Device getDeviceFromPtr(void* data) const override {
    catch_rt::PointerAttributes a;
    MLU_CHECK(catch_rt::pointerGetAttributes(data, &a));
    TORCH_CHECK(a.type == catch_rt::MemoryType::Device, "MLU error: pointer ", data, " is not mlu device memory");
    return {kMLU, static_cast<c10::DeviceIndex>(a.device)};
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override { return default_generator(d); }
  at::Generator getNewGenerator(c10::DeviceIndex d) const override {
    return at::make_generator<MLUGeneratorImpl>(d < 0 ? current_device() : d);
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    auto* impl = storage.unsafeGetStorageImpl();
    TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
    size_t old = impl->nbytes();
    c10::DataPtr fresh = device_allocator()->allocate(newsize);
    size_t keep = std::min(old, newsize);
    if (keep > 0) {
      MLU_CHECK(catch_rt::memcpy(fresh.get(), impl->data_ptr().get(), keep, catch_rt::MemcpyKind::DeviceToDevice));
    }
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
};

struct Registrar {
  Registrar() {
    static MLUHooks* hooks = new MLUHooks();
    at::RegisterPrivateUse1HooksInterface(hooks);
  }
};
Registrar g_registrar;

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
