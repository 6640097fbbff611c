# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Fused optimizer ops: ``torch.ops.torch_mlu.fused_adam``, the multi-tensor Adam step Cambricon's torch_mlu
provides and DeepSpeed's MLU ``FusedAdamBuilder`` calls (``op_builder/mlu/fused_adam.py``)::

    torch.ops.torch_mlu.fused_adam(noop_flag, grads, params, exp_avgs, exp_avg_sqs, lr, beta1, beta2, epsilon,
                                   step, adam_w_mode, bias_correction, weight_decay)

Semantics of DeepSpeed's ``multi_tensor_adam`` kernel: when ``noop_flag`` (an int tensor) is non-zero nothing is
done; otherwise each ``params[i]`` takes one Adam step with gradient ``grads[i]`` and moments ``exp_avgs[i]`` /
``exp_avg_sqs[i]`` (all updated in place). ``adam_w_mode=0``: L2 (the decay is added to the gradient, as
``torch.optim.Adam(weight_decay=...)``); ``1``: decoupled decay (``torch.optim.AdamW``). ``bias_correction=0``
skips the ``1 - beta**step`` corrections. fp16/bf16 tensors are computed in float32 and stored back, as the CUDA
kernel does. The arithmetic is ``torch.optim.Adam``'s single-tensor sequence, so an fp32 step equals it exactly.
"""

from __future__ import annotations

import torch

__all__ = ["fused_adam"]

_SCHEMA = ("fused_adam(Tensor noop_flag, Tensor(a!)[] grads, Tensor(b!)[] params, Tensor(c!)[] exp_avgs, "
           "Tensor(d!)[] exp_avg_sqs, float lr, float beta1, float beta2, float epsilon, int step, int adam_w_mode, "
           "int bias_correction, float weight_decay) -> ()")


def _step(g: torch.Tensor, p: torch.Tensor, m: torch.Tensor, v: torch.Tensor, lr: float, beta1: float, beta2: float,
          eps: float, step: int, adam_w_mode: int, bias_correction: int, weight_decay: float) -> None:
    if weight_decay != 0:
        if adam_w_mode:
            p.mul_(1 - lr * weight_decay)
        else:
            g = g.add(p, alpha=weight_decay)
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    bc1 = 1 - beta1**step if bias_correction else 1.0
    bc2 = 1 - beta2**step if bias_correction else 1.0
    denom = (v.sqrt() / bc2**0.5).add_(eps)
    p.addcdiv_(m, denom, value=-(lr / bc1))


def fused_adam(noop_flag: torch.Tensor, grads: list[torch.Tensor], params: list[torch.Tensor],
               exp_avgs: list[torch.Tensor], exp_avg_sqs: list[torch.Tensor], lr: float, beta1: float, beta2: float,
               epsilon: float, step: int, adam_w_mode: int, bias_correction: int, weight_decay: float) -> None:
    """One Adam step over lists of tensors (see the module docstring). Raises ValueError when the four lists differ
    in length or a tensor's shape differs from its parameter's."""
    if not len(grads) == len(params) == len(exp_avgs) == len(exp_avg_sqs):
        raise ValueError(f"fused_adam: grads, params, exp_avgs, exp_avg_sqs must have one tensor per parameter "
                         f"(got {len(grads)}, {len(params)}, {len(exp_avgs)}, {len(exp_avg_sqs)})")
    if noop_flag.numel() and bool(noop_flag.ne(0).any()):
        return
    with torch.no_grad():
        for g, p, m, v in zip(grads, params, exp_avgs, exp_avg_sqs):
            if not g.shape == p.shape == m.shape == v.shape:
                raise ValueError(f"fused_adam: shapes differ: grad {tuple(g.shape)}, param {tuple(p.shape)}, "
                                 f"exp_avg {tuple(m.shape)}, exp_avg_sq {tuple(v.shape)}")
            if p.dtype == torch.float32 and m.dtype == v.dtype == torch.float32:
                _step(g.float(), p, m, v, lr, beta1, beta2, epsilon, step, adam_w_mode, bias_correction, weight_decay)
                continue
            p32, m32, v32 = p.float(), m.float(), v.float()
            _step(g.float(), p32, m32, v32, lr, beta1, beta2, epsilon, step, adam_w_mode, bias_correction,
                  weight_decay)
            p.copy_(p32)
            m.copy_(m32)
            v.copy_(v32)


_lib = torch.library.Library("torch_mlu", "FRAGMENT")  # noqa: TOR901 (one op, defined once at import)
_lib.define(_SCHEMA)
_lib.impl("fused_adam", fused_adam, "CompositeExplicitAutograd")
