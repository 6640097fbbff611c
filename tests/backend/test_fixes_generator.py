# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Pickling and copying an ``mlu`` generator, as for CUDA generators.

``torch.Generator.__reduce__`` saves ``(initial_seed, get_offset(), get_state())`` for every non-CPU generator and
``__setstate__`` restores them (``set_offset``, ``manual_seed``, ``set_state``). The mlu generator's engine is CPU's
(so a seed draws the same numbers as on CPU), whose own ``get_offset`` raises "CPU Generator does not use offset".
"""

from __future__ import annotations

import copy
import pickle

import pytest
import torch


@pytest.mark.parametrize("device", ["mlu:0", "mlu:1"])
def test_pickled_generator_continues_the_same_sequence(device: str):
    g = torch.Generator(device=device)
    g.manual_seed(1234)
    torch.randn(17, device=device, generator=g)  # advance past the seed
    h = pickle.loads(pickle.dumps(g))
    assert h.device == torch.device(device)
    assert h.initial_seed() == 1234
    a = torch.randn(100, device=device, generator=g).cpu()
    b = torch.randn(100, device=device, generator=h).cpu()
    assert torch.equal(a, b)
    # The same draws a CPU generator makes with that seed (the backend's RNG contract).
    c = torch.Generator().manual_seed(1234)
    torch.randn(17, generator=c)
    assert torch.equal(a, torch.randn(100, generator=c))


def test_deepcopy_is_independent():
    g = torch.Generator(device="mlu").manual_seed(7)
    d = copy.deepcopy(g)
    first = torch.rand(50, device="mlu", generator=g).cpu()
    assert torch.equal(first, torch.rand(50, device="mlu", generator=d).cpu())
    # Drawing from the copy did not move the original.
    assert not torch.equal(first, torch.rand(50, device="mlu", generator=g).cpu())


def test_offset_round_trips_and_manual_seed_resets_it():
    g = torch.Generator(device="mlu")
    g.set_offset(64)
    assert g.get_offset() == 64
    g.manual_seed(0)
    assert g.get_offset() == 0  # as CUDA's generator: a new seed starts at offset 0
