# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``Module.to("mlu")`` keeps Parameter objects, gradients and weight ties, as ``Module.to("cuda")`` does.

On cuda, ``Module._apply`` converts parameters in place (``param.data = ...``) because
``torch._has_compatible_shallow_copy_type(cpu, cuda)`` is True; an optimizer built before ``.to()`` therefore keeps
training the model. Without the mlu kernel for that op (catch/csrc/ops/shallow_copy.cpp) every Parameter is
replaced: the optimizer silently updates stale CPU tensors and tied weights untie. The oracle is a CPU run of the
same model with the same seed, step by step.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn


class TinyLM(nn.Module):
    """Embedding -> MLP -> lm_head whose weight is the embedding's (tied, as GPT-2's ``lm_head``/``wte``)."""

    def __init__(self, vocab: int = 32, dim: int = 16) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.LayerNorm(dim))
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(self.emb(ids)))


def _batches(steps: int, vocab: int = 32) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(1)
    out = []
    for _ in range(steps):
        ids = torch.randint(0, vocab, (4, 8), generator=g)
        out.append((ids, torch.roll(ids, -1, dims=1)))
    return out


def _train(model: nn.Module, opt: torch.optim.Optimizer, device: str, steps: int = 6) -> list[float]:
    """Per-step losses; ``model`` and ``opt`` were built on CPU, then the model was moved to ``device``."""
    losses = []
    for ids, target in _batches(steps):
        logits = model(ids.to(device))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), target.to(device).flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_to_keeps_parameter_objects():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    params = list(m.parameters())
    ids = [id(p) for p in params]
    m.to("mlu")
    assert [id(p) for p in m.parameters()] == ids
    assert all(p.device.type == "mlu" and type(p) is nn.Parameter for p in m.parameters())
    assert m[1].running_mean.device.type == "mlu"
    m.to("cpu")  # and back, as cuda -> cpu keeps them
    assert [id(p) for p in m.parameters()] == ids
    assert all(p.device.type == "cpu" for p in params)


def test_to_moves_existing_gradients_in_place():
    m = nn.Linear(3, 2)
    m(torch.ones(1, 3)).sum().backward()
    grad = m.weight.grad
    expected = grad.clone()
    m.to("mlu")
    assert m.weight.grad is grad and grad.device.type == "mlu"
    torch.testing.assert_close(grad.cpu(), expected, rtol=0, atol=0)


def test_param_data_assignment_to_mlu_tensor():
    p = nn.Parameter(torch.zeros(3))
    value = torch.arange(3.0, device="mlu")
    p.data = value
    assert type(p) is nn.Parameter and p.requires_grad and p.device.type == "mlu"
    assert p.data_ptr() == value.data_ptr()
    (p * 2).sum().backward()
    assert p.grad.device.type == "mlu"
    torch.testing.assert_close(p.grad.cpu(), torch.full((3,), 2.0))


def test_shallow_copy_type_answers_like_cuda():
    cpu, mlu = torch.ones(2), torch.ones(2, device="mlu")
    # True for dense tensors across devices and dtypes (c10 answers True for cpu <-> cuda), in both orders.
    assert torch._has_compatible_shallow_copy_type(cpu, mlu)
    assert torch._has_compatible_shallow_copy_type(mlu, cpu)
    assert torch._has_compatible_shallow_copy_type(mlu, torch.ones(2, device="mlu", dtype=torch.float16))
    # False against a sparse tensor, as for cuda (a dense TensorImpl cannot hold sparse state).
    assert not torch._has_compatible_shallow_copy_type(mlu, torch.eye(2).to_sparse())
    assert not torch._has_compatible_shallow_copy_type(torch.eye(2).to_sparse(), mlu)


@pytest.mark.parametrize("make_opt", [
    lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: torch.optim.AdamW(ps, lr=1e-2, foreach=True),
    lambda ps: torch.optim.Adam(ps, lr=1e-2, foreach=False),
], ids=["sgd-momentum", "adamw-foreach", "adam-for-loop"])
def test_optimizer_built_before_to_trains_like_cpu(make_opt):
    torch.manual_seed(0)
    ref = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    dev = copy.deepcopy(ref)
    ref_opt, dev_opt = make_opt(ref.parameters()), make_opt(dev.parameters())
    dev.to("mlu")  # after the optimizer, as accelerate.prepare and many scripts do
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(32, 8, generator=g), torch.randn(32, 4, generator=g)
    for step in range(5):
        losses = []
        for model, opt, d in ((ref, ref_opt, "cpu"), (dev, dev_opt, "mlu")):
            loss = nn.functional.mse_loss(model(x.to(d)), y.to(d))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5, abs=1e-6), f"step {step}"
    for p_ref, p_dev in zip(ref.parameters(), dev.parameters(), strict=True):
        assert p_dev.device.type == "mlu"
        torch.testing.assert_close(p_dev.cpu(), p_ref, rtol=1e-5, atol=1e-6)
    # The optimizer state lives with the parameters, on mlu.
    state = dev_opt.state[next(dev.parameters())]
    assert all(v.device.type == "mlu" for k, v in state.items() if torch.is_tensor(v) and k != "step")


def test_tied_weights_stay_tied_and_train_like_cpu():
    torch.manual_seed(0)
    ref = TinyLM()
    dev = copy.deepcopy(ref)
    assert dev.head.weight is dev.emb.weight
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=1e-2)
    dev_opt = torch.optim.AdamW(dev.parameters(), lr=1e-2)
    dev.to("mlu")
    assert dev.head.weight is dev.emb.weight
    assert dev.head.weight.untyped_storage().data_ptr() == dev.emb.weight.untyped_storage().data_ptr()
    assert len(list(dev.parameters())) == len(list(ref.parameters()))
    cpu_losses = _train(ref, ref_opt, "cpu")
    mlu_losses = _train(dev, dev_opt, "mlu")
    assert mlu_losses == pytest.approx(cpu_losses, rel=1e-5, abs=1e-6)
    assert dev.head.weight is dev.emb.weight
    torch.testing.assert_close(dev.emb.weight.cpu(), ref.emb.weight, rtol=1e-5, atol=1e-6)


def test_grad_scaler_with_optimizer_built_before_to():
    # fp16 GradScaler: with replaced Parameters the optimizer's grads are None and scaler.step raises
    # "No inf checks were recorded for this optimizer."
    torch.manual_seed(0)
    m = nn.Linear(8, 8)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m.to("mlu")
    scaler = torch.amp.GradScaler("mlu")
    before = m.weight.detach().cpu().clone()
    with torch.autocast("mlu", dtype=torch.float16):
        loss = m(torch.randn(4, 8, device="mlu")).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert not torch.equal(m.weight.detach().cpu(), before)
