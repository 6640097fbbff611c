# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``flex_attention`` on ``mlu`` with a block mask, eager and ``torch.compile``d, equals the CPU's.

PyTorch 2.13 refuses every device outside its allow-list (``_validate_device`` in
``torch/nn/attention/flex_attention.py``: cuda, cpu, xpu, hpu, mps) with ``ValueError: FlexAttention is only
supported on ...``, so on mlu flex_attention fails before it runs, eagerly or compiled (patch ``flex_attention-...``).
Compiled, mlu lowers the op with the CPU's C++ template (``torch_mlu.inductor.flex_attention``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

RunProbe = Callable[[str], Any]

_PROBE = r"""
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

B, H, S, D = 2, 2, 256, 32
WINDOW = 64

def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx

def sliding_window(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < WINDOW)

torch.manual_seed(0)
q, k, v = (torch.randn(B, H, S, D) for _ in range(3))
results = {}
for name, mask_mod in (("causal", causal), ("sliding_window", sliding_window)):
    idx = torch.arange(S)
    dense = mask_mod(0, 0, idx[:, None], idx[None, :])
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=dense)
    for mode in ("eager", "compiled"):
        attend = flex_attention if mode == "eager" else torch.compile(flex_attention)
        out = {}
        try:
            for device in ("cpu", "mlu"):
                block_mask = create_block_mask(mask_mod, B, H, S, S, device=device)
                out[device] = attend(q.to(device), k.to(device), v.to(device), block_mask=block_mask)
        except Exception as exc:
            results[f"{name}/{mode}"] = {"error": "%s: %s" % (type(exc).__name__, str(exc)[:500])}
            continue
        mlu = out["mlu"].cpu()
        try:
            torch.testing.assert_close(mlu, out["cpu"])
            mismatch = None
        except AssertionError as err:
            mismatch = str(err)[:500]
        results[f"{name}/{mode}"] = {
            "device": str(out["mlu"].device),
            "sparse_blocks": int(block_mask.kv_num_blocks.sum()) < (S // 128) ** 2 * B * H,
            "max_abs_diff": float((mlu - out["cpu"]).abs().max()),
            "mismatch": mismatch,
            "cpu_vs_reference": float((out["cpu"] - reference).abs().max()),
        }
emit(results)
"""


def test_flex_attention_block_mask_on_mlu_equals_cpu(run_probe: RunProbe) -> None:
    results = run_probe(_PROBE)
    assert set(results) == {f"{m}/{c}" for m in ("causal", "sliding_window") for c in ("eager", "compiled")}
    for case, r in results.items():
        assert "error" not in r, f"{case}: flex_attention on mlu failed: {r.get('error')}"
        assert r["device"].startswith("mlu"), (case, r)
        # The block mask skips blocks (only the causal lower triangle, or the window, is computed).
        assert r["sparse_blocks"], (case, r)
        # The CPU result is the masked attention (dense SDPA with the same mask), so the mask was applied.
        assert r["cpu_vs_reference"] < 1e-4, (case, r)
        assert r["mismatch"] is None, f"{case}: mlu differs from CPU: {r['mismatch']}"


_BACKWARD_PROBE = r"""
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx

block_mask = create_block_mask(causal, 1, 2, 128, 128, device="mlu")
q, k, v = (torch.randn(1, 2, 128, 16, device="mlu", requires_grad=True) for _ in range(3))
flex_attention(q, k, v, block_mask=block_mask).sum().backward()
result = {"eager_grad": bool(torch.isfinite(q.grad).all() and q.grad.abs().sum() > 0)}
try:
    torch.compile(flex_attention)(q, k, v, block_mask=block_mask).sum().backward()
    result["compiled"] = "ran"
except Exception as exc:
    inference_only = "NotImplementedError: FlexAttention under torch.compile on mlu" in str(exc)
    result["compiled"] = "NotImplementedError" if inference_only else repr(exc)[:800]
emit(result)
"""


def test_flex_attention_backward_on_mlu_eager_only(run_probe: RunProbe) -> None:
    # Eagerly the op's unfused implementation has a backward on mlu; compiled, mlu lowers it with the CPU's
    # inference-only C++ template, and the backward raises NotImplementedError, as on CPU.
    result = run_probe(_BACKWARD_PROBE)
    assert result["eager_grad"], result
    assert result["compiled"] == "NotImplementedError", result
