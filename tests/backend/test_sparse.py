# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Sparse COO (SparsePrivateUse1) and CSR (SparseCsrPrivateUse1) tensors on mlu, as ATen gives them to cuda.

Oracle: the same calls on CPU tensors (ATen's SparseCPU / SparseCsrCPU kernels): equal indices, values, flags and
results, including uncoalesced inputs with duplicate indices, nnz 0 and hybrid COO (dense dimensions); ops outside
the supported list raise the dispatcher's "Could not run ... with arguments from the 'Sparsemlu' backend", the error
shape cuda gives for a sparse op it has no kernel for. Every call runs with the CPU fallback forbidden, so a pass
means the mlu kernels ran.
"""

from __future__ import annotations

import pytest
import torch

import torch_mlu  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_fallback")

DTYPES = [torch.float32, torch.float64]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _coo(dtype: torch.dtype, kind: str = "dup") -> torch.Tensor:
    """A CPU COO tensor of shape (4, 5) (kind "hybrid": (4, 5, 3), one dense dimension): "dup" is uncoalesced with
    duplicate indices, "empty" has nnz 0."""
    if kind == "empty":
        return torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0, dtype=dtype), (4, 5))
    i = torch.tensor([[3, 0, 1, 3, 0, 2], [4, 1, 2, 4, 1, 0]])
    if kind == "hybrid":
        return torch.sparse_coo_tensor(i, torch.randn(6, 3, generator=_gen(1), dtype=dtype), (4, 5, 3))
    return torch.sparse_coo_tensor(i, torch.randn(6, generator=_gen(1), dtype=dtype), (4, 5))


def _dense(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 2) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(seed), dtype=dtype)


def _same_coo(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.device.type == "mlu" and got.layout == torch.sparse_coo
    assert got.shape == want.shape and got.dtype == want.dtype
    assert (got.sparse_dim(), got.dense_dim(), got._nnz()) == (want.sparse_dim(), want.dense_dim(), want._nnz())
    assert got.is_coalesced() == want.is_coalesced()
    assert got._indices().device.type == "mlu" and got._values().device.type == "mlu"
    assert torch.equal(got._indices().cpu(), want._indices())
    torch.testing.assert_close(got._values().cpu(), want._values())


def _same_csr(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.device.type == "mlu" and got.layout == torch.sparse_csr
    assert got.shape == want.shape and got.dtype == want.dtype and got._nnz() == want._nnz()
    assert got.crow_indices().device.type == "mlu" and got.values().device.type == "mlu"
    assert torch.equal(got.crow_indices().cpu(), want.crow_indices())
    assert torch.equal(got.col_indices().cpu(), want.col_indices())
    torch.testing.assert_close(got.values().cpu(), want.values())


def _same_dense(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.device.type == "mlu" and got.layout == torch.strided
    torch.testing.assert_close(got.cpu(), want)


def _same(got: torch.Tensor, want: torch.Tensor) -> None:
    """``got`` (mlu) equals ``want`` (CPU), of the same layout."""
    {torch.sparse_coo: _same_coo, torch.sparse_csr: _same_csr, torch.strided: _same_dense}[want.layout](got, want)


# ---- construction and transfers ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["dup", "empty", "hybrid"])
def test_sparse_coo_tensor_on_mlu_matches_cpu(dtype, kind):
    ref = _coo(dtype, kind)
    got = torch.sparse_coo_tensor(ref._indices().to("mlu"), ref._values().to("mlu"), ref.shape)
    _same_coo(got, ref)
    _same_coo(torch.sparse_coo_tensor(ref._indices(), ref._values(), ref.shape, device="mlu"), ref)
    # without a size: inferred from the indices, as on CPU
    _same_coo(torch.sparse_coo_tensor(ref._indices(), ref._values(), device="mlu"),
              torch.sparse_coo_tensor(ref._indices(), ref._values()))


@pytest.mark.parametrize("kind", ["dup", "empty", "hybrid"])
def test_coo_to_mlu_and_back(kind):
    ref = _coo(torch.float32, kind)
    got = ref.to("mlu")
    _same_coo(got, ref)
    back = got.cpu()
    assert back.device.type == "cpu" and back.layout == torch.sparse_coo and back.is_coalesced() == ref.is_coalesced()
    assert torch.equal(back._indices(), ref._indices()) and torch.equal(back._values(), ref._values())
    co = ref.coalesce()
    assert co.to("mlu").is_coalesced()
    assert torch.equal(co.to("mlu").indices().cpu(), co.indices())


def test_empty_sparse_and_clone():
    got = torch.empty((3, 4), layout=torch.sparse_coo, device="mlu")
    ref = torch.empty((3, 4), layout=torch.sparse_coo)
    _same_coo(got, ref)
    s = _coo(torch.float32).to("mlu")
    c = s.clone()
    _same_coo(c, _coo(torch.float32))
    assert c._values().data_ptr() != s._values().data_ptr()
    z = torch.zeros((3, 4), layout=torch.sparse_coo, device="mlu")
    _same_coo(z, torch.zeros((3, 4), layout=torch.sparse_coo))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_csr_tensor_on_mlu_matches_cpu(dtype):
    crow, col = torch.tensor([0, 2, 2, 3]), torch.tensor([1, 3, 0])
    vals = torch.tensor([1.5, -2.0, 3.25], dtype=dtype)
    ref = torch.sparse_csr_tensor(crow, col, vals, (3, 4))
    _same_csr(torch.sparse_csr_tensor(crow, col, vals, (3, 4), device="mlu"), ref)
    _same_csr(torch.sparse_csr_tensor(crow.to("mlu"), col.to("mlu"), vals.to("mlu"), (3, 4)), ref)
    got = ref.to("mlu")
    _same_csr(got, ref)
    back = got.cpu()
    assert back.layout == torch.sparse_csr and torch.equal(back.to_dense(), ref.to_dense())


@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_to_sparse_matches_cpu(dtype):
    x = _dense(4, 5, dtype=dtype) * (torch.rand(4, 5, generator=_gen(3)) > 0.5)
    m = x.to("mlu")
    _same_coo(m.to_sparse(), x.to_sparse())
    _same_csr(m.to_sparse_csr(), x.to_sparse_csr())
    h = _dense(4, 5, 2, dtype=dtype)
    _same_coo(h.to("mlu").to_sparse(1), h.to_sparse(1))  # hybrid: one sparse, two dense dimensions
    _same_coo(torch.zeros(3, 3, dtype=dtype, device="mlu").to_sparse(), torch.zeros(3, 3, dtype=dtype).to_sparse())
    # between layouts on the device
    _same_csr(m.to_sparse().to_sparse_csr(), x.to_sparse().to_sparse_csr())
    _same_coo(m.to_sparse_csr().to_sparse(), x.to_sparse_csr().to_sparse())


# ---- compute ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["dup", "empty", "hybrid"])
def test_coalesce_and_to_dense_match_cpu(dtype, kind):
    ref = _coo(dtype, kind)
    got = ref.to("mlu")
    _same_coo(got.coalesce(), ref.coalesce())
    _same_dense(got.to_dense(), ref.to_dense())
    assert not got.is_coalesced() or kind == "empty"  # coalesce() returned a new tensor


def test_csr_to_dense_matches_cpu():
    x = _dense(5, 6) * (torch.rand(5, 6, generator=_gen(4)) > 0.6)
    _same_dense(x.to_sparse_csr().to("mlu").to_dense(), x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["dup", "empty"])
def test_coo_mm_addmm_mv_match_cpu(dtype, kind):
    s = _coo(dtype, kind)
    d = _dense(5, 3, dtype=dtype)
    v = _dense(5, dtype=dtype, seed=5)
    bias = _dense(4, 3, dtype=dtype, seed=6)
    sm, dm, vm, bm = s.to("mlu"), d.to("mlu"), v.to("mlu"), bias.to("mlu")
    _same_dense(sm @ dm, s @ d)
    _same_dense(torch.mm(sm, dm), torch.mm(s, d))
    _same_dense(torch.sparse.mm(sm, dm), torch.sparse.mm(s, d))
    _same_dense(torch.addmm(bm, sm, dm, beta=0.5, alpha=2.0), torch.addmm(bias, s, d, beta=0.5, alpha=2.0))
    _same_dense(torch.mv(sm, vm), torch.mv(s, v))
    _same_dense(sm @ vm, s @ v)
    out = torch.empty(4, 3, dtype=dtype, device="mlu")
    torch.mm(sm, dm, out=out)
    _same_dense(out, s @ d)
    _same(sm @ sm.t(), s @ s.t())  # sparse @ sparse: a COO result


@pytest.mark.parametrize("dtype", DTYPES)
def test_csr_mm_addmm_mv_match_cpu(dtype):
    x = _dense(4, 5, dtype=dtype) * (torch.rand(4, 5, generator=_gen(7)) > 0.5)
    s = x.to_sparse_csr()
    d = _dense(5, 3, dtype=dtype)
    v = _dense(5, dtype=dtype, seed=5)
    bias = _dense(4, 3, dtype=dtype, seed=6)
    sm = x.to("mlu").to_sparse_csr()
    _same_dense(sm @ v.to("mlu"), s @ v)
    _same_dense(sm @ d.to("mlu"), s @ d)
    _same_dense(torch.addmm(bias.to("mlu"), sm, d.to("mlu"), beta=0.5, alpha=2.0),
                torch.addmm(bias, s, d, beta=0.5, alpha=2.0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["dup", "empty", "hybrid"])
def test_coo_add_matches_cpu(dtype, kind):
    a, b = _coo(dtype, kind), _coo(dtype, kind) * 2
    am, bm = a.to("mlu"), b.to("mlu")
    _same_coo(am + bm, a + b)
    _same_coo(torch.add(am, bm, alpha=0.5), torch.add(a, b, alpha=0.5))
    d = _dense(*a.shape, dtype=dtype)
    _same_dense(d.to("mlu") + am, d + a)
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):  # CPU's error
        a + d
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        am + d.to("mlu")
    dm = d.to("mlu")
    dm.add_(am)
    _same_dense(dm, d + a)
    out = torch.empty(a.shape, layout=torch.sparse_coo, dtype=dtype, device="mlu")
    assert torch.add(am, bm, out=out) is out
    _same_coo(out, torch.add(a, b, out=torch.empty(a.shape, layout=torch.sparse_coo, dtype=dtype)))
    am.add_(bm)
    _same_coo(am, a.clone().add_(b))


def test_csr_add_matches_cpu():
    x = _dense(4, 5) * (torch.rand(4, 5, generator=_gen(8)) > 0.5)
    y = _dense(4, 5, seed=9) * (torch.rand(4, 5, generator=_gen(10)) > 0.5)
    xs, ys, d = x.to_sparse_csr(), y.to_sparse_csr(), _dense(4, 5, seed=11)
    _same(xs.to("mlu") + ys.to("mlu"), xs + ys)
    _same_dense(d.to("mlu") + xs.to("mlu"), d + xs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["dup", "empty", "hybrid"])
def test_coo_sum_matches_cpu(dtype, kind):
    s = _coo(dtype, kind)
    sm = s.to("mlu")
    _same_dense(sm.sum(), s.sum())
    _same_dense(torch.sparse.sum(sm), torch.sparse.sum(s))
    _same(torch.sparse.sum(sm, dim=0), torch.sparse.sum(s, dim=0))
    _same(sm.sum(dim=1), s.sum(dim=1))


def test_csr_sum_matches_cpu():
    x = _dense(4, 5) * (torch.rand(4, 5, generator=_gen(12)) > 0.5)
    s = x.to_sparse_csr()
    _same_dense(s.to("mlu").sum(), s.sum())


@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_mm_autograd_matches_cpu(dtype):
    def run(device: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        s = _coo(dtype).to(device).requires_grad_(True)
        d = _dense(5, 3, dtype=dtype).to(device).requires_grad_(True)
        y = torch.sparse.mm(s, d)
        (y * torch.arange(12, dtype=dtype, device=device).view(4, 3)).sum().backward()
        return y, s.grad, d.grad

    (y, gs, gd), (y_ref, gs_ref, gd_ref) = run("mlu"), run("cpu")
    _same_dense(y.detach(), y_ref.detach())
    _same_dense(gd, gd_ref)
    assert gs.layout == torch.sparse_coo and gs.device.type == "mlu"
    torch.testing.assert_close(gs.cpu().to_dense(), gs_ref.to_dense())


# ---- errors ----


def test_copy_between_devices():
    s = _coo(torch.float32)
    dst = torch.empty(s.shape, layout=torch.sparse_coo, device="mlu")
    dst.copy_(s)
    _same_coo(dst, s)
    dst2 = torch.empty(s.shape, layout=torch.sparse_coo, device="mlu")
    dst2.copy_(dst)
    _same_coo(dst2, s)


def test_unsupported_sparse_op_raises_the_dispatcher_error():
    s = _coo(torch.float32).to("mlu")
    with pytest.raises(NotImplementedError, match=r"Could not run 'aten::_sparse_softmax' with arguments from the "
                                                  r"'Sparse\w+' backend"):
        torch.sparse.softmax(s, 0)
    with pytest.raises(NotImplementedError, match=r"Could not run 'aten::mul.Tensor' with arguments from the "
                                                  r"'Sparse\w+' backend"):
        s * s


def test_mixed_devices_raise_like_cuda():
    s = _coo(torch.float32).to("mlu")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(s, _dense(5, 3))
