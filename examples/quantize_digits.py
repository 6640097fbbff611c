# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""int8 inference of the digits CNN on ``mlu``: train in float, then quantize Conv2d/Linear three ways.

Usage: python examples/quantize_digits.py --device mlu|cpu|both --epochs 6 [--flow static|dynamic|qat|all]

Trains ``DigitsCNN`` from examples/train_digits.py in float on the device, then

- static: post-training quantization through ``torch.ao.quantization.prepare`` (inputs of conv/linear observed by
  ``HistogramObserver``, per-channel weight scales) -> calibration on the device -> ``convert``;
- dynamic: ``torch.ao.quantization.quantize_dynamic`` of the Linear layers (input qparams chosen per batch);
- qat: ``prepare_qat`` (FakeQuantize on inputs and per-channel weights) -> one epoch of fine-tuning -> ``convert``.

Prints ``float accuracy <fraction>`` and ``<flow> int8 accuracy <fraction>`` lines (tagged ``[<device>]``), then a
table with each device's accuracies and float training time per step side by side; the full record goes to
``--result`` (JSON). Exit code 2 on a bad argument.
"""

from __future__ import annotations

import argparse
import copy
import sys
import warnings
from pathlib import Path

import torch
from torch import nn
from torch.ao import quantization as tq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _demo import (  # noqa: E402
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
from train_digits import DigitsCNN, load_data  # noqa: E402


def fit(model: nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, lr: float, seed: int,
        steps: int | None = None, log_every: int = 0, timer: StepTimer | None = None) -> list[float]:
    """AdamW on batches of 64 drawn by a CPU generator, at most ``steps`` steps; leaves the model in eval mode.

    Returns the loss of every step; prints it every ``log_every`` steps (0: never); ``timer`` times each step.
    """
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    timer = timer or StepTimer(x.device)
    losses: list[float] = []
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen).to(x.device)
        for start in range(0, len(order), 64):
            if steps is not None and len(losses) >= steps:
                break
            idx = order[start:start + 64]
            with timer.step():
                opt.zero_grad(set_to_none=True)
                loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
                loss.backward()
                opt.step()
            losses.append(loss.item())
            if log_every and len(losses) % log_every == 0:
                say(x.device, f"step {len(losses)} loss {losses[-1]:.4f}")
    model.eval()
    return losses


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(1).cpu() == y).float().mean().item()


def quantize(flow: str, model: nn.Module, x_train: torch.Tensor, y_train: torch.Tensor) -> nn.Module:
    """The int8 model of ``flow`` (static, dynamic or qat) from the trained float ``model`` (left unchanged)."""
    import torch_mlu.quantization as mq

    model = copy.deepcopy(model)
    if flow == "dynamic":
        return tq.quantize_dynamic(model, {nn.Linear: mq.get_default_dynamic_qconfig()}, dtype=torch.qint8,
                                   mapping=mq.get_dynamic_quant_module_mappings())
    if flow == "static":
        model.qconfig = mq.get_default_qconfig("histogram")
        prepared = tq.prepare(model, prepare_custom_config_dict=mq.get_prepare_custom_config_dict())
        with torch.no_grad():
            for start in range(0, 512, 128):
                prepared(x_train[start:start + 128])
    else:
        model.train()
        model.qconfig = mq.get_default_qat_qconfig()
        prepared = tq.prepare_qat(model, mapping=mq.get_qat_module_mappings())
        fit(prepared, x_train, y_train, epochs=1, lr=3e-4, seed=7)
    return tq.convert(prepared.eval(), mapping=mq.get_static_quant_module_mappings())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser, steps=None, device="mlu", log_every=25)
    parser.add_argument("--epochs", type=int, default=6, help="float training epochs (default: 6)")
    parser.add_argument("--flow", choices=["static", "dynamic", "qat", "all"], default="all")
    args = parser.parse_args(argv)
    devices = parse_devices(args.device)
    apply_threads(args.threads)
    check_positive(epochs=args.epochs, log_every=args.log_every)
    if args.steps is not None:
        check_positive(steps=args.steps)
    flows = ["static", "dynamic", "qat"] if args.flow == "all" else [args.flow]
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # torch.ao eager-mode APIs are deprecated upstream
    runs = []
    for dev in devices:
        reset_fallbacks(dev)
        torch.manual_seed(args.seed)
        x_train, y_train, x_test, y_test = load_data(args.seed)
        x_train, y_train, x_test = x_train.to(dev), y_train.to(dev), x_test.to(dev)
        model = DigitsCNN().to(dev)
        timer = StepTimer(dev)
        losses = fit(model, x_train, y_train, args.epochs, lr=2e-3, seed=args.seed + 1, steps=args.steps,
                     log_every=args.log_every, timer=timer)
        if not losses:
            raise DemoError("no training step ran: raise --epochs or --steps")
        record = {"device": str(dev), "steps": len(losses), "losses": losses, "ms_per_step": timer.ms_per_step,
                  "float_accuracy": accuracy(model, x_test, y_test)}
        say(dev, f"float accuracy {record['float_accuracy']:.4f}")
        for flow in flows:
            q = quantize(flow, model, x_train, y_train)
            record[f"{flow}_accuracy"] = accuracy(q, x_test, y_test)
            say(dev, f"{flow} int8 accuracy {record[f'{flow}_accuracy']:.4f}")
        record["fallback_ops"] = fallbacks(dev)
        runs.append(record)
    print_summary("Digits CNN, float and int8", runs,
                  [("float_accuracy", "float acc", ".4f"),
                   *((f"{flow}_accuracy", f"{flow} int8 acc", ".4f") for flow in flows),
                   ("ms_per_step", "float ms/step", ".2f")])
    emit_result("quantize_digits", args.seed, runs, args.result, flows=flows)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
