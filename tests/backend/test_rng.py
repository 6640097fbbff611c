# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""RNG: seeded mlu runs reproduce, match the CPU with the same seed, and are independent per device."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _draws(device):
    return [
        torch.randn(7, device=device), torch.rand(3, 4, device=device), torch.randint(0, 100, (9,), device=device),
        F.dropout(torch.ones(20, device=device), p=0.5), torch.empty(6, device=device).normal_(2.0, 3.0),
        torch.bernoulli(torch.full((10,), 0.3, device=device)), torch.randperm(12, device=device),
    ]


def test_same_seed_same_numbers_as_cpu():
    torch.manual_seed(1234)
    cpu = _draws("cpu")
    torch.manual_seed(1234)
    mlu = _draws("mlu")
    for c, m in zip(cpu, mlu, strict=True):
        assert m.device.type == "mlu"
        torch.testing.assert_close(m.cpu(), c)


def test_get_set_state_replays():
    torch.mlu.manual_seed(7)
    state = torch.mlu.get_rng_state()
    a = torch.randn(5, device="mlu")
    torch.mlu.set_rng_state(state)
    b = torch.randn(5, device="mlu")
    torch.testing.assert_close(a.cpu(), b.cpu())
    assert state.dtype == torch.uint8 and state.device.type == "cpu"


def test_devices_have_independent_generators():
    torch.mlu.manual_seed_all(5)
    a0 = torch.randn(4, device="mlu:0")
    a1 = torch.randn(4, device="mlu:1")
    torch.testing.assert_close(a0.cpu(), a1.cpu())  # both seeded 5
    torch.mlu.manual_seed(99)  # current device (0) only
    b1 = torch.randn(4, device="mlu:1")
    torch.mlu.manual_seed_all(5)
    torch.randn(4, device="mlu:1")
    c1 = torch.randn(4, device="mlu:1")
    torch.testing.assert_close(b1.cpu(), c1.cpu())  # device 1's stream was untouched by seeding device 0


def test_explicit_generator():
    g = torch.Generator(device="mlu")
    assert g.device.type == "mlu"
    g.manual_seed(3)
    a = torch.randn(4, device="mlu", generator=g)
    g.manual_seed(3)
    b = torch.randn(4, device="mlu", generator=g)
    torch.testing.assert_close(a.cpu(), b.cpu())
    torch.testing.assert_close(a.cpu(), torch.randn(4, generator=torch.Generator().manual_seed(3)))


def test_initial_seed_and_default_generators():
    torch.mlu.manual_seed(42)
    assert torch.mlu.initial_seed() == 42
    assert len(torch.mlu.default_generators) == torch.mlu.device_count()
