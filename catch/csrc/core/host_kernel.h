// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Host-kernel mode: while a HostKernelScope is alive on a thread, the process CPU allocator (a shim installed at
// device initialization) hands out device memory of the current device (as host views); kernels then adopt those
// buffers as device tensors without a copy. The outermost scopes are the device's kernel time.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

#include <cstdint>

namespace torch_mlu {

struct HostKernelScope {
  HostKernelScope();
  ~HostKernelScope();
  HostKernelScope(const HostKernelScope&) = delete;
  HostKernelScope& operator=(const HostKernelScope&) = delete;
 private:
  bool prev_;
};

// Called (when set) as each outermost HostKernelScope ends: the device and the kernel's duration in nanoseconds
// (profiler/kineto.cpp records these as mlu kernel activity while a Kineto session runs).
using KernelObserver = void (*)(c10::DeviceIndex device, int64_t ns);
void set_kernel_observer(KernelObserver observer);
// Nanoseconds device kernels of `device` have run (outermost HostKernelScopes), for torch.mlu.utilization.
int64_t device_busy_ns(c10::DeviceIndex device);

// Converts a DataPtr produced under HostKernelScope into a device DataPtr.
// Returns false (leaving `p` untouched) if `p` is not such a buffer.
bool adopt_host_block(c10::DataPtr& p, c10::DeviceIndex device);
// Makes the shim the process CPU allocator (once; at device initialization).
void install_cpu_allocator_shim();

}  // namespace torch_mlu
