# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Pluggable device allocators (``torch.cuda.memory.CUDAPluggableAllocator`` and ``change_current_allocator``).

An allocator is two C functions in a shared library, with cuda's signatures adapted to mlu::

    void* alloc(ssize_t size, int device, void* queue);            /* queue: the current cnrtQueue_t of device */
    void  free(void* ptr, ssize_t size, int device, void* queue);  /* size, device, queue: those of the alloc */

On the emulated device, device memory is host memory: ``alloc`` returns host memory (``malloc``'s, say), which the
runtime treats as memory of ``device`` until ``free`` gets it back (tensors see it at its device address, and it
counts against the device's capacity). Before ``free`` is called, work still queued on the block's queue is waited
for. A 0-byte request is answered without calling ``alloc``. As with cuda's pluggable allocator there is no cache
and no statistics: ``memory_stats``, snapshots, history, ``MemPool`` and the caching switch raise
"MLUPluggableAllocator does not yet support ...", while ``empty_cache`` and ``set_per_process_memory_fraction`` do
nothing.
"""

from __future__ import annotations

import ctypes

from torch_mlu import _C


class _MLUAllocator:
    """Wrapper over an mlu device allocator of ``torch_mlu._C`` (``torch.cuda.memory._CUDAAllocator``)."""

    def __init__(self, allocator: _C.MLUAllocator) -> None:
        self._allocator = allocator

    def allocator(self) -> _C.MLUAllocator:
        """The wrapped allocator handle."""
        return self._allocator


class MLUPluggableAllocator(_MLUAllocator):
    """An mlu device allocator loaded from a shared library (``torch.cuda.memory.CUDAPluggableAllocator``).

    Args:
        path_to_so_file: path of the shared library (loaded with ``ctypes.CDLL``; ``OSError`` if it cannot be).
        alloc_fn_name: name of ``void* alloc(ssize_t size, int device, void* queue)`` in it.
        free_fn_name: name of ``void free(void* ptr, ssize_t size, int device, void* queue)`` in it.

    Raises ``AttributeError`` when the library has no such function. Make it the allocator in use with
    :func:`change_current_allocator`.
    """

    def __init__(self, path_to_so_file: str, alloc_fn_name: str, free_fn_name: str) -> None:
        allocator = ctypes.CDLL(path_to_so_file)
        alloc_fn = ctypes.cast(getattr(allocator, alloc_fn_name), ctypes.c_void_p).value
        free_fn = ctypes.cast(getattr(allocator, free_fn_name), ctypes.c_void_p).value
        if alloc_fn is None:
            raise AssertionError(f"alloc_fn '{alloc_fn_name}' is None")
        if free_fn is None:
            raise AssertionError(f"free_fn '{free_fn_name}' is None")
        self._library = allocator  # keeps the library loaded while the allocator lives
        super().__init__(_C.custom_allocator(alloc_fn, free_fn))


def change_current_allocator(allocator: _MLUAllocator) -> None:
    """Make ``allocator`` the device allocator of every mlu device (``torch.cuda.memory.change_current_allocator``).

    Only possible before the allocator in use has handed out its first block: afterwards it raises
    ``RuntimeError: Can't swap an already initialized allocator`` (cuda's condition and message).
    """
    _C.change_current_allocator(allocator.allocator())


def _get_current_allocator() -> _MLUAllocator:
    """The allocator in use (``torch.cuda.memory._get_current_allocator``)."""
    return _MLUAllocator(_C.current_allocator())


def get_allocator_backend() -> str:
    """The allocator in use, as ``torch.cuda.get_allocator_backend`` names it: ``"native"`` (Catch's caching
    allocator) or ``"pluggable"`` (after :func:`change_current_allocator` with an :class:`MLUPluggableAllocator`)."""
    return str(_C.allocator_backend())
