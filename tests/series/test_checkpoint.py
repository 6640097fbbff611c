# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.utils.checkpoint`` on ``mlu``: the recomputed forward must see the RNG state of the original forward.

Checkpointing recomputes the forward during backward; with ``preserve_rng_state=True`` (the default) random ops such
as dropout must draw the same numbers again, or the gradients belong to another mask than the output. PyTorch 2.13
decides whether to stash the device RNG state from the private flag ``torch.cuda._initialized``, which a PrivateUse1
device module does not have, so on ``mlu`` the state is never stashed (patch ``checkpoint-...``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

RunProbe = Callable[[str], Any]

_PROBE = r"""
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

def block(x):
    return F.dropout(x, p=0.5, training=True) * 3.0

results = {}
for reentrant in (False, True):
    x = torch.randn(64, 64).to("mlu").requires_grad_()
    torch.mlu.manual_seed(1234)
    out = checkpoint(block, x, use_reentrant=reentrant)
    out.sum().backward()
    grad_ckpt = x.grad.cpu()
    mask_out = (out.detach().cpu() != 0)
    x.grad = None
    torch.mlu.manual_seed(1234)
    ref = block(x)
    ref.sum().backward()
    results[str(reentrant)] = {
        "same_output": bool(torch.equal(out.detach().cpu(), ref.detach().cpu())),
        "grad_matches_reference": bool(torch.equal(grad_ckpt, x.grad.cpu())),
        # The gradient of dropout(x)*3 is 0 where the output was dropped and 6 elsewhere (p=0.5 scales by 2).
        "grad_follows_output_mask": bool(torch.equal(grad_ckpt != 0, mask_out)),
        "dropped_fraction": float(1.0 - mask_out.float().mean()),
    }
emit(results)
"""


def test_checkpoint_preserves_mlu_rng_state(run_probe: RunProbe) -> None:
    results = run_probe(_PROBE)
    for mode, r in results.items():
        # The probe is meaningful only if dropout really dropped about half of the elements.
        assert 0.3 < r["dropped_fraction"] < 0.7, (mode, r)
        assert r["same_output"], f"use_reentrant={mode}: forward differs from the reference with the same seed"
        assert r["grad_follows_output_mask"], f"use_reentrant={mode}: recomputation drew another dropout mask"
        assert r["grad_matches_reference"], f"use_reentrant={mode}: gradient differs from non-checkpointed run"
