# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Train a small character-level transformer language model on text that ships with Python, on mlu and on cpu.

Usage: python examples/transformer_lm.py [--device both|mlu|cpu] [--steps 300] [--seed 0] [--sample 160]

The corpus is ``pydoc_data.topics`` -- the Language Reference pages that ``help("if")`` shows, about 465,000
characters of English and code in every CPython install, so nothing is downloaded. The text is cut into blocks of
2,000 characters; every tenth block is held out, the rest trains. The model is a GPT-style decoder: token + position
embeddings, pre-norm blocks of causal multi-head attention (``F.scaled_dot_product_attention``) and a GELU MLP, a
final LayerNorm and a linear head over the characters. Weights are initialised on the CPU and batches and samples are
drawn from CPU generators, so each device trains on the same numbers, and the losses are identical on both:
``scaled_dot_product_attention`` runs the same fused flash kernel on mlu as on cpu.

Prints the training loss every ``--log-every`` steps; per device the held-out loss before and after training in bits
per character (bpc = nats / ln 2; perplexity = e^nats), the median milliseconds per optimizer step and a sampled
continuation of ``--prompt``; then a summary table and the line naming the result file (``--result``).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812  (PyTorch's usual alias)

from _demo import (
    DemoError,
    StepTimer,
    add_common_args,
    apply_threads,
    check_positive,
    emit_result,
    fallbacks,
    parse_devices,
    print_summary,
    reset_fallbacks,
    run,
    say,
)


def load_corpus() -> str:
    """The text of every ``pydoc_data.topics`` entry, in sorted topic order, joined by blank lines."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[name] for name in sorted(topics))


class CharVocab:
    """The sorted set of characters of a text; ``encode`` gives int64 ids (N,), ``decode`` turns ids back into text."""

    def __init__(self, text: str) -> None:
        self.chars = sorted(set(text))
        self.index = {ch: i for i, ch in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """Ids of ``text``; raises DemoError naming the first character the corpus never uses."""
        missing = [ch for ch in text if ch not in self.index]
        if missing:
            raise DemoError(f"character {missing[0]!r} does not occur in the corpus")
        return torch.tensor([self.index[ch] for ch in text], dtype=torch.int64)

    def decode(self, ids: list[int]) -> str:
        return "".join(self.chars[i] for i in ids)


class Block(nn.Module):
    """One pre-norm decoder block: x + attention(LayerNorm(x)), then x + MLP(LayerNorm(x)) with a 4x GELU MLP.

    Attention is ``F.scaled_dot_product_attention(..., is_causal=True)`` over ``n_head`` heads (the GPT-2 layout).
    Written out rather than ``nn.TransformerEncoderLayer`` because that module's inference fast path
    (``aten::_transformer_encoder_layer_fwd``) has no mlu kernel and would fall back to the CPU.
    """

    def __init__(self, d_model: int, n_head: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.n_head, d // self.n_head).transpose(1, 2) for z in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, heads, T, d / heads)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


class CharTransformer(nn.Module):
    """(B, T) character ids, T <= ``context`` -> (B, T, vocab) next-character logits; position t sees ids[:, :t+1]."""

    def __init__(self, vocab_size: int, context: int, d_model: int = 96, n_head: int = 4, n_layer: int = 2) -> None:
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(context, d_model)
        self.blocks = nn.Sequential(*(Block(d_model, n_head) for _ in range(n_layer)))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        return self.head(self.norm(self.blocks(h)))


def split_corpus(data: torch.Tensor, block: int = 2000, every: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, held_out) ids: ``data`` cut into ``block``-character blocks, every ``every``-th block held out."""
    blocks = list(data.split(block))
    held = [b for i, b in enumerate(blocks) if i % every == every - 1]
    kept = [b for i, b in enumerate(blocks) if i % every != every - 1]
    return torch.cat(kept), torch.cat(held)


def random_batch(data: torch.Tensor, batch: int, context: int, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    """``batch`` windows of ``data`` at offsets drawn from ``gen``: inputs (B, T) and next-character targets (B, T)."""
    starts = torch.randint(0, len(data) - context - 1, (batch,), generator=gen)
    windows = data.unfold(0, context + 1, 1)[starts]
    return windows[:, :-1], windows[:, 1:]


def held_out_loss(model: CharTransformer, windows: torch.Tensor) -> float:
    """Mean next-character cross-entropy in nats over (N, T + 1) held-out windows already on the model's device."""
    model.eval()
    with torch.no_grad():
        logits = model(windows[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten()).item()
    model.train()
    return loss


def sample(model: CharTransformer, vocab: CharVocab, prompt: str, length: int, temperature: float,
           gen: torch.Generator) -> str:
    """``length`` characters continuing ``prompt``, drawn one at a time from softmax(logits / temperature).

    The logits come from the device; the draw uses the CPU generator ``gen`` so devices can be compared.
    """
    device = next(model.parameters()).device
    ids = vocab.encode(prompt).tolist()
    model.eval()
    with torch.no_grad():
        for _ in range(length):
            window = torch.tensor([ids[-model.context:]], device=device)
            probs = F.softmax(model(window)[0, -1] / temperature, dim=-1).cpu()
            ids.append(int(torch.multinomial(probs, 1, generator=gen)))
    model.train()
    return vocab.decode(ids[len(prompt):])


def train(device: torch.device, args: argparse.Namespace, vocab: CharVocab, train_ids: torch.Tensor,
          eval_windows: torch.Tensor) -> dict[str, Any]:
    """Train one CharTransformer on ``device``; returns its run record (losses, held-out nats/bpc, ms/step, sample)."""
    torch.manual_seed(args.seed)
    model = CharTransformer(len(vocab), args.context, args.d_model, args.heads, args.layers).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=0.01)
    warmup = min(20, args.steps)

    def lr_factor(step: int) -> float:  # linear warmup, then cosine decay to 10% of the peak
        if step < warmup:
            return (step + 1) / warmup
        progress = min(step - warmup, args.steps - warmup) / max(1, args.steps - warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * progress))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    batches = torch.Generator().manual_seed(args.seed + 1)
    eval_dev = eval_windows.to(device)
    reset_fallbacks(device)
    initial = held_out_loss(model, eval_dev)
    say(device, f"held-out before training: {initial / math.log(2):.3f} bpc (uniform guess: "
                f"{math.log2(len(vocab)):.3f})")
    timer = StepTimer(device)
    losses: list[float] = []
    for step in range(1, args.steps + 1):
        x, y = (t.to(device) for t in random_batch(train_ids, args.batch_size, args.context, batches))
        with timer.step():
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
        if step % args.log_every == 0 or step in (1, args.steps):
            say(device, f"step {step:4d}  loss {losses[-1]:.4f}  ({timer.ms_per_step:.1f} ms/step)")
    final = held_out_loss(model, eval_dev)
    text = sample(model, vocab, args.prompt, args.sample, args.temperature, torch.Generator().manual_seed(args.seed))
    record = {"device": str(device), "steps": args.steps, "losses": losses, "initial_eval_loss": initial,
              "final_eval_loss": final, "initial_bpc": initial / math.log(2), "final_bpc": final / math.log(2),
              "final_perplexity": math.exp(final), "ms_per_step": timer.ms_per_step, "sample": text,
              "fallback_ops": fallbacks(device)}
    say(device, f"held-out after {args.steps} steps: {record['final_bpc']:.3f} bpc, perplexity "
                f"{record['final_perplexity']:.2f}")
    say(device, f"sample: {args.prompt}{text}")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser, steps=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=64, help="characters per window, 1..1024 (default: 64)")
    parser.add_argument("--d-model", type=int, default=96)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-2, help="peak AdamW learning rate (default: 1e-2)")
    parser.add_argument("--eval-windows", type=int, default=64, help="held-out windows to score (default: 64)")
    parser.add_argument("--prompt", default="The ", help="text the sample continues (default: 'The ')")
    parser.add_argument("--sample", type=int, default=160, help="characters to sample (default: 160; 0: none)")
    parser.add_argument("--temperature", type=float, default=0.8)
    args = parser.parse_args(argv)
    devices = parse_devices(args.device)
    apply_threads(args.threads)
    check_positive(steps=args.steps, batch_size=args.batch_size, context=args.context, d_model=args.d_model,
                   heads=args.heads, layers=args.layers, eval_windows=args.eval_windows, log_every=args.log_every)
    if args.d_model % args.heads:
        raise DemoError(f"--d-model {args.d_model}: must be a multiple of --heads {args.heads}")
    if args.context > 1024:
        raise DemoError(f"--context {args.context}: at most 1024 characters")
    if not args.prompt:
        raise DemoError("--prompt: must not be empty")
    if args.temperature <= 0:
        raise DemoError(f"--temperature {args.temperature}: must be positive")
    text = load_corpus()
    vocab = CharVocab(text)
    vocab.encode(args.prompt)  # a prompt character outside the corpus is a clean error before any training
    data = vocab.encode(text)
    train_ids, held_out = split_corpus(data)
    stride = (len(held_out) - args.context - 1) // args.eval_windows
    eval_windows = held_out.unfold(0, args.context + 1, max(1, stride))[:args.eval_windows]
    print(f"corpus: pydoc_data.topics, {len(text):,} characters, {len(vocab)} distinct; "
          f"{len(train_ids):,} train / {len(held_out):,} held out ({len(eval_windows)} windows of {args.context})")
    runs = [train(device, args, vocab, train_ids, eval_windows) for device in devices]
    print_summary("Character transformer on pydoc_data.topics", runs,
                  [("initial_bpc", "bpc before", ".3f"), ("final_bpc", "bpc after", ".3f"),
                   ("final_perplexity", "perplexity", ".2f"), ("ms_per_step", "ms/step", ".1f")])
    emit_result("transformer_lm", args.seed, runs, args.result, vocab_size=len(vocab), corpus_chars=len(text))
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
