// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Registration of AOTInductor's mlu runner (aoti_runner.h) under the package device key "mlu", at load time.

#include <torch/csrc/inductor/aoti_runner/model_container_runner.h>

#include "aoti_runner.h"

namespace {
const torch::inductor::RegisterAOTIModelRunner register_mlu_runner("mlu", &torch_mlu::create_aoti_runner);
}  // namespace
