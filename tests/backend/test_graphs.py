# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Graph capture and replay with torch.cuda.graphs' semantics: capture on a side queue, static inputs/outputs,
replay == eager, captures leave memory unchanged, make_graphed_callables trains like eager."""

from __future__ import annotations

import pytest
import torch


def test_capture_replay_equals_eager_on_new_inputs():
    torch.manual_seed(0)
    w = torch.randn(8, 8, device="mlu")
    static_x = torch.randn(4, 8, device="mlu")
    g = torch.mlu.MLUGraph()
    outer = torch.mlu.current_stream()
    seen = {}
    with torch.mlu.graph(g):
        seen["stream"] = torch.mlu.current_stream()
        seen["capturing"] = torch.mlu.is_current_stream_capturing()
        static_y = torch.tanh(static_x @ w + 1).sum(dim=1, keepdim=True) * static_x
    assert seen["capturing"] and not torch.mlu.is_current_stream_capturing()
    assert seen["stream"] != outer  # captured on a side queue, as torch.cuda.graph does
    assert len(g) > 0
    for _ in range(3):
        x = torch.randn(4, 8, device="mlu")
        static_x.copy_(x)
        g.replay()
        eager = torch.tanh(x @ w + 1).sum(dim=1, keepdim=True) * x
        torch.testing.assert_close(static_y.cpu(), eager.cpu(), rtol=0, atol=0)
    assert g.pool() != torch.mlu.graph_pool_handle()


def test_capture_does_not_apply_inplace_work_replay_does():
    p = torch.ones(5, device="mlu")
    g = torch.mlu.MLUGraph()
    with torch.mlu.graph(g):
        p.add_(2)
        p.mul_(3)
    assert p.cpu().tolist() == [1.0] * 5  # CUDA graphs do not run the work while capturing
    g.replay()
    assert p.cpu().tolist() == [9.0] * 5
    g.replay()
    assert p.cpu().tolist() == [33.0] * 5


def test_replayed_random_ops_draw_new_numbers():
    g = torch.mlu.MLUGraph()
    with torch.mlu.graph(g):
        r = torch.rand(1000, device="mlu")
    g.replay()
    a = r.clone()
    g.replay()
    assert not torch.equal(a, r)


def test_sync_in_capture_raises_like_cuda():
    g = torch.mlu.MLUGraph()
    x = torch.ones(3, device="mlu")
    with pytest.raises(RuntimeError, match="not permitted when stream is capturing"), torch.mlu.graph(g):
        x.sum().item()


def test_whole_training_step_captured_matches_eager():
    def make():
        torch.manual_seed(1)
        m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to("mlu")
        return m, torch.optim.SGD(m.parameters(), lr=0.1)

    data = [(torch.randn(10, 6, device="mlu"), torch.randint(0, 3, (10,), device="mlu")) for _ in range(5)]
    m_e, opt_e = make()
    for x, y in data:
        opt_e.zero_grad(set_to_none=False)
        torch.nn.functional.cross_entropy(m_e(x), y).backward()
        opt_e.step()
    m_g, opt_g = make()
    sx, sy = data[0][0].clone(), data[0][1].clone()
    # warm up grads so .grad tensors exist before capture (the CUDA recipe)
    for p in m_g.parameters():
        p.grad = torch.zeros_like(p)
    g = torch.mlu.MLUGraph()
    with torch.mlu.graph(g):
        opt_g.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(m_g(sx), sy)
        loss.backward()
        opt_g.step()
    for x, y in data:
        sx.copy_(x)
        sy.copy_(y)
        g.replay()
    for pe, pg in zip(m_e.parameters(), m_g.parameters(), strict=True):
        torch.testing.assert_close(pg.cpu(), pe.cpu(), rtol=1e-6, atol=1e-6)


def test_make_graphed_callables_trains_like_eager():
    def make():
        torch.manual_seed(2)
        return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).to("mlu")

    xs = [torch.randn(3, 4, device="mlu") for _ in range(4)]
    eager = make()
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.05)
    for x in xs:
        opt_e.zero_grad()
        eager(x).pow(2).sum().backward()
        opt_e.step()
    model = make()
    graphed = torch.mlu.make_graphed_callables(model, (torch.randn(3, 4, device="mlu"),))
    opt_g = torch.optim.SGD(model.parameters(), lr=0.05)
    for x in xs:
        opt_g.zero_grad()
        graphed(x).pow(2).sum().backward()
        opt_g.step()
    for pe, pg in zip(eager.parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(pg.cpu(), pe.cpu(), rtol=1e-6, atol=1e-6)
    model.eval()  # other training state: the module's own forward
    torch.testing.assert_close(graphed(xs[0]).cpu(), eager(xs[0]).cpu(), rtol=1e-6, atol=1e-6)


def test_make_graphed_function_grads_match_eager():
    w = torch.randn(5, 5, device="mlu", requires_grad=True)

    def f(x):
        return (x @ w).sigmoid()

    x0 = torch.randn(2, 5, device="mlu", requires_grad=True)
    gf = torch.mlu.make_graphed_callables(f, (x0,))
    x = torch.randn(2, 5, device="mlu", requires_grad=True)
    out = gf(x)
    out.sum().backward()
    # As with torch.cuda: a function's graph connects autograd to its arguments only (closure tensors get no grad).
    assert w.grad is None
    gx = x.grad.clone()
    x.grad = None
    f(x).sum().backward()
    torch.testing.assert_close(out.detach().cpu(), f(x).detach().cpu())
    torch.testing.assert_close(gx.cpu(), x.grad.cpu())


def test_export_hooks_dump_the_captured_ops(tmp_path):
    """torch.cuda.graphs.export_dot / export_graph_data (torch 2.14) on mlu: the hooks run when the capture ends and
    write the ops the capture recorded (the same ops debug_dump lists), in queue order; a removed hook does not run."""
    import pickle

    x = torch.ones(4, device="mlu")
    g = torch.mlu.MLUGraph()
    g.register_capture_end_hook(torch.mlu.graphs.export_dot(str(tmp_path / "g.dot")))
    g.register_post_instantiate_hook(torch.mlu.export_graph_data(str(tmp_path / "g.pkl")))
    removed = g.register_capture_end_hook(torch.mlu.export_dot(str(tmp_path / "removed.dot")))
    removed.remove()
    with torch.mlu.graph(g):
        y = (x * 2).add_(1).sum()
    g.debug_dump(str(tmp_path / "dump.txt"))
    ops = [line.split(" ", 1)[0] for line in (tmp_path / "dump.txt").read_text().splitlines()]
    assert ops == ["aten.mul.Tensor", "aten.add_.Tensor", "aten.sum.default"]
    dot = (tmp_path / "g.dot").read_text()
    assert dot.startswith("digraph") and [op in dot for op in ops] == [True] * 3
    assert "n0 -> n1;" in dot and "n1 -> n2;" in dot and "n2 -> n3" not in dot
    data = pickle.loads((tmp_path / "g.pkl").read_bytes())
    assert [n["op"] for n in data["nodes"]] == ops and data["edges"] == [(0, 1), (1, 2)]
    assert not (tmp_path / "removed.dot").exists()
    g.replay()
    assert y.item() == 12


def test_graph_annotations_degrade_to_a_no_op(tmp_path):
    """torch.cuda.graph_annotations (torch 2.14) without graph node ids: is_available() False, mark_kernels records
    nothing, as upstream documents for a CUDA driver without cudaGraphNodeGetToolsId."""
    import gzip
    import json

    ga = torch.mlu.graph_annotations
    assert ga.is_available() is False
    g = torch.mlu.MLUGraph()
    x = torch.ones(2, device="mlu")
    with torch.mlu.graph(g), ga.mark_kernels({"name": "phase_A"}):
        y = x + 1
    g.replay()
    assert torch.equal(y.cpu(), torch.full((2,), 2.0))
    assert dict(ga.get_kernel_annotations()) == {} and dict(ga.get_kernel_py_stacks()) == {}
    ga.dump_kernel_py_stacks(str(tmp_path / "s.json.gz"))
    with gzip.open(tmp_path / "s.json.gz", "rt") as f:
        assert json.load(f) == {}
    ga.clear_kernel_annotations()
