# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""nn.LSTM / GRU / LSTMCell / GRUCell on mlu (torch_openreg's test_rnn.py covers the same modules).

ATen sends mlu (PrivateUse1) cells through the fused-cell ops ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell``,
which upstream implements for CUDA only; catch/csrc/kernels/rnn.cpp gives them mlu kernels. Oracles: the
same module on CPU (outputs, input and parameter gradients) and ``torch.autograd.gradcheck`` (finite differences)
for the hand-written backwards.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

CASES = {
    "lstm-2layer": (nn.LSTM, {"num_layers": 2, "batch_first": True}),
    "lstm-proj": (nn.LSTM, {"proj_size": 3}),
    "gru-bidirectional": (nn.GRU, {"num_layers": 2, "bidirectional": True}),
    "gru-nobias": (nn.GRU, {"bias": False}),
    "lstmcell": (nn.LSTMCell, {}),
    "grucell": (nn.GRUCell, {}),
}


def _first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("case", sorted(CASES))
def test_rnn_matches_cpu(case):
    cls, kwargs = CASES[case]
    torch.manual_seed(0)
    ref = cls(4, 8, **kwargs)
    dev = copy.deepcopy(ref).to("mlu")
    x = torch.randn(5, 3, 4) if cls in (nn.LSTM, nn.GRU) else torch.randn(3, 4)
    x_ref, x_dev = x.clone().requires_grad_(), x.to("mlu").requires_grad_()
    out_ref, out_dev = _first(ref(x_ref)), _first(dev(x_dev))
    assert out_dev.device.type == "mlu"
    torch.testing.assert_close(out_dev.cpu(), out_ref, rtol=1e-5, atol=1e-6)
    out_ref.pow(2).sum().backward()
    out_dev.pow(2).sum().backward()
    torch.testing.assert_close(x_dev.grad.cpu(), x_ref.grad, rtol=1e-5, atol=1e-6)
    for (name, p_ref), p_dev in zip(ref.named_parameters(), dev.parameters(), strict=True):
        torch.testing.assert_close(p_dev.grad.cpu(), p_ref.grad, rtol=1e-5, atol=1e-6, msg=name)


def test_rnn_runs_without_cpu_fallback():
    torch.mlu.reset_fallback_report()
    lstm = nn.LSTM(4, 8).to("mlu")
    gru = nn.GRUCell(4, 8).to("mlu")
    x = torch.randn(2, 3, 4, device="mlu")
    (_first(lstm(x)).sum() + gru(x[0]).sum()).backward()
    used = [op for op in torch.mlu.fallback_report() if "thnn" in op or "lstm" in op or "gru" in op]
    assert used == []


@pytest.mark.parametrize("cls", [nn.LSTMCell, nn.GRUCell])
@pytest.mark.parametrize("with_state", [False, True])
def test_cell_backward_gradcheck(cls, with_state):
    torch.manual_seed(0)
    cell = cls(3, 4).double().to("mlu")
    x = torch.randn(2, 3, dtype=torch.float64, device="mlu", requires_grad=True)
    h = torch.randn(2, 4, dtype=torch.float64, device="mlu", requires_grad=True)
    c = torch.randn(2, 4, dtype=torch.float64, device="mlu", requires_grad=True)
    params = tuple(cell.parameters())

    def fn(x, h, c, *ps):
        if not with_state:
            return _first(cell(x))
        if cls is nn.LSTMCell:
            hy, cy = cell(x, (h, c))
            return hy + 2 * cy  # both outputs' gradients flow (grad_hy and grad_cy)
        return cell(x, h)

    assert torch.autograd.gradcheck(fn, (x, h, c, *params))
