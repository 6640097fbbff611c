// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "aoti_runner.h"

#include <c10/core/Device.h>

#include <utility>
#include <vector>

#include "../core/device.h"
#include "../core/stream.h"

namespace torch_mlu {
namespace {

// "mlu:<index>" for `device_str`, the current device when it names none.
c10::Device model_device(const std::string& device_str) {
  c10::Device device(device_str);
  TORCH_CHECK(device.type() == kMLU, "AOTInductor mlu runner: expected an mlu device, got ", device_str);
  if (!device.has_index()) device.set_index(current_device());
  check_device_index(device.index());
  return device;
}

class AOTIModelContainerRunnerMlu final : public torch::inductor::AOTIModelContainerRunner {
 public:
  AOTIModelContainerRunnerMlu(const std::string& model_so_path, size_t num_models, c10::Device device,
                              const std::string& cubin_dir, bool run_single_threaded)
      : AOTIModelContainerRunner(model_so_path, num_models, device.str(), cubin_dir, run_single_threaded),
        device_(device) {}

 protected:
  std::vector<at::Tensor> run_impl(std::vector<AtenTensorHandle>& input_handles, void* stream_handle) override {
    MLU_CHECK(catch_rt::queueSync(current_queue(device_.index())));
    return AOTIModelContainerRunner::run_impl(input_handles, stream_handle);
  }

 private:
  c10::Device device_;
};

}  // namespace

std::unique_ptr<torch::inductor::AOTIModelContainerRunner> create_aoti_runner(const std::string& model_so_path,
                                                                               size_t num_models,
                                                                               const std::string& device_str,
                                                                               const std::string& cubin_dir,
                                                                               bool run_single_threaded) {
  return std::make_unique<AOTIModelContainerRunnerMlu>(model_so_path, num_models, model_device(device_str), cubin_dir,
                                                       run_single_threaded);
}

}  // namespace torch_mlu
