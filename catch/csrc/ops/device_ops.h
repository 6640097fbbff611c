// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// The device-op list: which ATen ops run as device kernels (the rest of the PrivateUse1 ops fall back to the CPU).
#pragma once

#include <set>
#include <string>

namespace torch_mlu {

// Base names ("add", "_foreach_mul_"); every overload of a name that has a CPU kernel and no composite kernel
// (composites already reach these through decomposition) is registered (registration.h).
const std::set<std::string>& device_op_base_names();

}  // namespace torch_mlu
