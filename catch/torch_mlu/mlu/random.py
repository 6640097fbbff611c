# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""RNG for mlu (``torch.cuda.random`` semantics).

Each device has a default generator whose engine is PyTorch's CPU engine: with the same seed an mlu run draws the
same numbers as a CPU run. States are CPU-format ``torch.ByteTensor`` objects.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from torch_mlu import _C
from torch_mlu.mlu._utils import _get_device_index

default_generators: tuple[torch.Generator, ...] = tuple(_C.default_generators())


def _gen(device: object) -> torch.Generator:
    return default_generators[_get_device_index(device, optional=True)]


def get_rng_state(device: object = "mlu") -> torch.Tensor:
    """RNG state of ``device`` as a ByteTensor."""
    return _gen(device).get_state()


def get_rng_state_all() -> list[torch.Tensor]:
    """States of all devices."""
    return [g.get_state() for g in default_generators]


def set_rng_state(new_state: torch.Tensor, device: object = "mlu") -> None:
    """Restore a state returned by :func:`get_rng_state`."""
    _gen(device).set_state(new_state.clone())


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    """Restore the states of all devices, in device order."""
    for g, s in zip(default_generators, new_states, strict=True):
        g.set_state(s.clone())


def manual_seed(seed: int) -> None:
    """Seed the current device's generator."""
    _gen(None).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every device's generator (called by ``torch.manual_seed``)."""
    for g in default_generators:
        g.manual_seed(int(seed))


def seed() -> None:
    """Seed the current device's generator with a non-deterministic number."""
    _gen(None).seed()


def seed_all() -> None:
    """Seed all devices with one non-deterministic number."""
    s = default_generators[0].seed() if default_generators else 0
    for g in default_generators[1:]:
        g.manual_seed(s)


def initial_seed() -> int:
    """Initial seed of the current device's generator."""
    return _gen(None).initial_seed()
