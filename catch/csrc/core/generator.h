// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The mlu generator. Each mlu generator owns a CPU engine (at::CPUGeneratorImpl, mt19937 + the CPU normal cache).
// Host kernels draw from that engine, so an mlu run and a cpu run seeded alike produce the same random numbers, and
// the state (get_state/set_state) has CPU's format.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <cstdint>
#include <functional>
#include <optional>

namespace torch_mlu {

struct MLUGeneratorImpl final : public c10::GeneratorImpl {
  explicit MLUGeneratorImpl(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  // The CPU engine has no Philox offset (its whole position is get_state()), but torch.Generator.__reduce__ saves
  // get_offset() for every non-CPU generator and __setstate__ restores it before set_state(): keep the value, so
  // pickling and copy.deepcopy work as for CUDA generators.
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type();
  MLUGeneratorImpl* clone_impl() const override;

  at::Generator engine;
  uint64_t offset_ = 0;
};

// The default generator of mlu device `device` (torch.mlu.default_generators[i]); -1: the current device.
const at::Generator& default_generator(c10::DeviceIndex device);

// The engine a host kernel draws random numbers from for an mlu op: the CPU engine inside `gen` if given (it must be
// an mlu generator), otherwise the one inside the default generator of `device`. Same seed => same numbers as CPU.
at::Generator host_engine(const std::optional<at::Generator>& gen, c10::DeviceIndex device);

// Runs `fn` (a host kernel of an op without a Generator argument, e.g. native_dropout, whose CPU kernel draws from
// the default CPU generator) with the CPU default generator temporarily holding the state of mlu `device`'s default
// generator; the advanced state is moved back afterwards.
void with_device_rng(c10::DeviceIndex device, const std::function<void()>& fn);

}  // namespace torch_mlu
