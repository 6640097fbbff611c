# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Tiny random-init models from transformers/timm/accelerate (built in-process, no hub download) train on mlu with
the same per-step losses as on CPU.

The CPU run of the same code with the same seed is the oracle. fp32 runs must agree to float rounding; fp16/bf16
autocast runs to a reduced-precision tolerance (CPU and CUDA/mlu autocast cast slightly different op lists).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
from conftest import LOSS_DIFFS
from torch import nn

STEPS = 4
FP32_TOL = 1e-4
LOW_PRECISION_TOL = 2e-3


def _record(name: str, cpu: list[float], mlu: list[float], tol: float) -> None:
    assert len(cpu) == len(mlu) == STEPS
    diff = max(abs(a - b) for a, b in zip(cpu, mlu, strict=True))
    LOSS_DIFFS[name] = (diff, tol, STEPS)
    print(f"{name}: cpu {cpu}\n{name}: mlu {mlu}\n{name}: max |diff| {diff:.3e}")
    assert all(torch.isfinite(torch.tensor(cpu + mlu))), "non-finite loss"
    assert diff <= tol * max(1.0, max(abs(x) for x in cpu)), f"{name}: losses differ by {diff:.3e}"
    assert cpu[-1] < cpu[0], f"{name}: the CPU run did not learn (losses {cpu}), the comparison would prove little"


def _batches(make: Callable[[torch.Generator], tuple[torch.Tensor, ...]]) -> list[tuple[torch.Tensor, ...]]:
    """One random batch, STEPS times: the loss must then fall, so a run that does not train shows."""
    g = torch.Generator().manual_seed(1)
    return [make(g)] * STEPS


def _train(model: nn.Module, device: str, batches, loss_fn, *, lr: float = 1e-3, amp: torch.dtype | None = None,
           scaler: bool = False, opt_before_to: bool = False) -> list[float]:
    """Per-step losses of AdamW training of ``model`` on ``device``; the optimizer is built before ``.to()`` if
    ``opt_before_to`` (as accelerate and many scripts do)."""
    if opt_before_to:
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        model.to(device)
    else:
        model.to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
    grad_scaler = torch.amp.GradScaler(device, init_scale=2.0**10) if scaler else None
    losses = []
    model.train()
    for batch in batches:
        batch = [t.to(device) for t in batch]
        with torch.autocast(device, dtype=amp or torch.float32, enabled=amp is not None):
            loss = loss_fn(model, *batch)
        opt.zero_grad()
        if grad_scaler is not None:
            grad_scaler.scale(loss).backward()
            grad_scaler.step(opt)
            grad_scaler.update()
        else:
            loss.backward()
            opt.step()
        losses.append(float(loss.item()))
    return losses


def _both(name: str, build: Callable[[], nn.Module], batches, loss_fn, tol: float = FP32_TOL, **kw) -> None:
    ref = build()
    dev = copy.deepcopy(ref)
    cpu = _train(ref, "cpu", batches, loss_fn, **kw)
    mlu = _train(dev, "mlu", batches, loss_fn, **kw)
    _record(name, cpu, mlu, tol)


def _lm_loss(model, ids):
    return model(input_ids=ids, labels=ids).loss


def _ids(vocab: int, batch: int = 4, seq: int = 16):
    return lambda g: (torch.randint(0, vocab, (batch, seq), generator=g),)


def test_gpt2_tied_embeddings_optimizer_before_to():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=128, n_positions=32, n_embd=32, n_layer=2, n_head=2, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True)

    def build():
        torch.manual_seed(0)
        return GPT2LMHeadModel(cfg)

    model = build()
    assert model.lm_head.weight is model.transformer.wte.weight
    opt_model = copy.deepcopy(model)
    torch.optim.AdamW(opt_model.parameters()).zero_grad()
    opt_model.to("mlu")
    assert opt_model.lm_head.weight is opt_model.transformer.wte.weight, "tie lost by .to('mlu')"
    _both("gpt2 (tied, opt before .to)", build, _batches(_ids(128)), _lm_loss, lr=3e-3, opt_before_to=True)


def test_bert_encoder_fp16_grad_scaler():
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=32, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, num_labels=3)

    def build():
        torch.manual_seed(0)
        return BertForSequenceClassification(cfg)

    def make(g):
        return torch.randint(0, 128, (4, 16), generator=g), torch.randint(0, 3, (4,), generator=g)

    def loss_fn(model, ids, labels):
        return model(input_ids=ids, labels=labels).loss

    _both("bert encoder (fp16 autocast + GradScaler)", build, _batches(make), loss_fn, tol=LOW_PRECISION_TOL,
          lr=3e-3, amp=torch.float16, scaler=True, opt_before_to=True)


def _image_batches(classes: int = 10, size: int = 32):
    return _batches(lambda g: (torch.randn(4, 3, size, size, generator=g), torch.randint(0, classes, (4,),
                                                                                         generator=g)))


def _cls_loss(model, x, y):
    return nn.functional.cross_entropy(model(x), y)


def test_timm_vit():
    import timm

    def build():
        torch.manual_seed(0)
        return timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, patch_size=8, depth=2,
                                 num_classes=10)

    _both("timm vit_tiny (depth 2, 32px)", build, _image_batches(), _cls_loss)


def test_timm_cnn():
    import timm

    def build():
        torch.manual_seed(0)
        return timm.create_model("resnet10t", pretrained=False, num_classes=10)

    _both("timm resnet10t (32px)", build, _image_batches(), _cls_loss)


def test_accelerate_prepare_loop():
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState, PartialState

    def run(cpu: bool) -> tuple[list[float], str]:
        AcceleratorState._reset_state(reset_partial_state=True)
        PartialState._reset_state()
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        g = torch.Generator().manual_seed(1)
        data = torch.utils.data.TensorDataset(torch.randn(8, 16, generator=g), torch.randint(0, 4, (8,), generator=g))
        loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=False)
        accelerator = Accelerator(cpu=cpu)
        model, opt, loader = accelerator.prepare(model, opt, loader)  # optimizer built before the move
        losses = []
        for _epoch in range(STEPS):
            for x, y in loader:
                loss = nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                accelerator.backward(loss)
                opt.step()
                losses.append(float(loss.item()))
        return losses, str(accelerator.device)

    cpu, cpu_dev = run(cpu=True)
    mlu, mlu_dev = run(cpu=False)
    assert cpu_dev == "cpu" and mlu_dev.startswith("mlu"), (cpu_dev, mlu_dev)
    _record("accelerate prepare loop", cpu, mlu, FP32_TOL)


def test_llama_bf16_autocast_sdpa():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
                      tie_word_embeddings=False)
    cfg._attn_implementation = "sdpa"

    def build():
        torch.manual_seed(0)
        return LlamaForCausalLM(cfg)

    _both("llama (bf16 autocast, sdpa, gqa)", build, _batches(_ids(128)), _lm_loss, tol=LOW_PRECISION_TOL,
          lr=3e-3, amp=torch.bfloat16)


class LSTMClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(64, 16)
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, 5)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.emb(ids))
        return self.head(out[:, -1])


def test_lstm_model():
    def build():
        torch.manual_seed(0)
        return LSTMClassifier()

    def make(g):
        return torch.randint(0, 64, (8, 12), generator=g), torch.randint(0, 5, (8,), generator=g)

    _both("lstm classifier (2 layers)", build, _batches(make), _cls_loss, lr=1e-2)


@pytest.mark.parametrize("name", ["gpt2"])
def test_generation_matches_cpu(name):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=128, n_positions=32, n_embd=32, n_layer=2, n_head=2)).eval()
    ids = torch.randint(0, 128, (2, 5))
    ref = model.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=0)
    got = model.to("mlu").generate(ids.to("mlu"), max_new_tokens=8, do_sample=False, pad_token_id=0)
    assert torch.equal(got.cpu(), ref)
