// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

#include "storage_sharing.h"

#include <c10/util/Exception.h>

#include <utility>

#include "../runtime/memory.h"
#include "../runtime/queue.h"
#include "device.h"
#include "device_allocator.h"

namespace torch_mlu {
namespace {

// The deleter of received storages (context: the mapped device address).
void delete_mapped(void* dptr) {
  if (dptr == nullptr) return;
  catch_rt::PointerAttributes a;
  catch_rt::pointerGetAttributes(dptr, &a);
  // Work queued on the memory finishes before it is unmapped (cuda's deleter synchronizes the stream likewise).
  if (a.device >= 0) catch_rt::deviceSynchronize(a.device);
  if (catch_rt::unmapMemHandle(dptr) != catch_rt::Status::Success) {
    TORCH_WARN("MLU error: unmap of an unknown device mapping ", dptr, " ignored");
  }
}

}  // namespace

catch_rt::MemHandle share_storage(const c10::Storage& storage) {
  TORCH_CHECK(storage.device_type() == kMLU, "_share_mlu_: only available on MLU");
  // The message of torch/csrc/StorageSharing.cpp's THPStorage_shareCuda, naming MLU.
  TORCH_CHECK(storage.data_ptr().get_deleter() != &delete_mapped,
              "Attempted to send MLU tensor received from another process; this is not currently supported. "
              "Consider cloning before sending.");
  void* dptr = storage.mutable_data();
  TORCH_CHECK(dptr != nullptr, "_share_mlu_: the storage is empty");
  MLU_CHECK(catch_rt::deviceSynchronize(storage.device().index()));
  caching_allocator()->mark_shared(dptr);  // false (nothing to mark) for memory of a pluggable allocator
  catch_rt::MemHandle handle;
  MLU_CHECK(catch_rt::acquireMemHandle(dptr, &handle));
  return handle;
}

c10::Storage open_shared_storage(const catch_rt::MemHandle& handle, std::size_t nbytes) {
  check_device_index(static_cast<c10::DeviceIndex>(handle.device));
  TORCH_CHECK(handle.offset + nbytes <= handle.size, "_new_shared_mlu: storage of ", nbytes, " bytes at offset ",
              handle.offset, " exceeds the shared allocation of ", handle.size, " bytes");
  void* dptr = nullptr;
  MLU_CHECK(catch_rt::mapMemHandle(handle, &dptr));
  c10::DataPtr data(dptr, dptr, &delete_mapped, c10::Device(kMLU, static_cast<c10::DeviceIndex>(handle.device)));
  return c10::Storage(c10::Storage::use_byte_size_t(), nbytes, std::move(data), /*allocator=*/nullptr,
                      /*resizable=*/false);
}

}  // namespace torch_mlu
