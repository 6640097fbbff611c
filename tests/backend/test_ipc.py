# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""mlu tensors between processes through torch.multiprocessing (torch_mlu.reductions), as cuda tensors travel on CUDA
IPC: what torch_openreg's test_ipc.py checks for its device (values, storage offsets and strides arrive; a received
tensor cannot be sent on) and what PyTorch's test_multiprocessing.py checks for cuda (a child's in-place write is
seen by the parent; DataLoader workers may return device tensors; a child forked after initialization gets the fork
error). Values are compared with the same computation on CPU.
"""

from __future__ import annotations

import multiprocessing
import pickle
import textwrap
from multiprocessing.reduction import ForkingPickler

import pytest
import torch
from mlu_helpers import run_python
from torch.utils.data import DataLoader, Dataset

TIMEOUT = 300  # seconds for a spawned child (it imports torch and torch_mlu)


def _write_in_child(view: torch.Tensor, out: multiprocessing.Queue) -> None:
    assert view.device.type == "mlu"
    view.mul_(2).add_(1)
    torch.mlu.synchronize()
    # Plain lists back: the child exits after this, and a CPU tensor's shared memory would be fetched from it.
    out.put((list(view.shape), list(view.stride()), view.storage_offset(), view.cpu().tolist()))


def _hold_in_child(inbox: multiprocessing.Queue, out: multiprocessing.Queue) -> None:
    t = inbox.get(timeout=TIMEOUT)
    out.put("received")
    assert inbox.get(timeout=TIMEOUT) == "sender freed it"
    out.put(t.cpu().tolist())
    try:
        ForkingPickler.dumps(t)
        out.put(None)
    except RuntimeError as e:
        out.put(str(e))


class _MluDataset(Dataset):
    """Items made on mlu in the worker: item i is [2i, 2i, 2i]."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.full((3,), float(i), device="mlu") * 2


def test_spawned_childs_write_is_seen_by_parent():
    ctx = multiprocessing.get_context("spawn")
    x = torch.randn(4, 6)
    t = x.to("mlu")
    out = ctx.Queue()
    child = ctx.Process(target=_write_in_child, args=(t[1:, ::2], out))  # storage offset 6, strides (6, 2)
    child.start()
    shape, stride, offset, seen = out.get(timeout=TIMEOUT)
    child.join(TIMEOUT)
    assert child.exitcode == 0
    want = x.clone()
    want[1:, ::2].mul_(2).add_(1)
    assert (shape, stride, offset) == ([3, 3], [6, 2], 6)
    torch.testing.assert_close(torch.tensor(seen), want[1:, ::2])
    torch.testing.assert_close(t.cpu(), want)  # the parent's tensor holds the child's write, the rest untouched


def test_child_keeps_memory_the_sender_freed_and_cannot_send_it_on():
    ctx = multiprocessing.get_context("spawn")
    inbox, out = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_hold_in_child, args=(inbox, out))
    child.start()
    t = torch.arange(1000, dtype=torch.float32, device="mlu")
    inbox.put(t)
    assert out.get(timeout=TIMEOUT) == "received"
    del t
    # Allocations of the same size after the free must not land on the memory the child still reads.
    others = [torch.full((1000,), -1.0, device="mlu") for _ in range(4)]
    inbox.put("sender freed it")
    torch.testing.assert_close(torch.tensor(out.get(timeout=TIMEOUT)), torch.arange(1000, dtype=torch.float32))
    error = out.get(timeout=TIMEOUT)
    child.join(TIMEOUT)
    assert child.exitcode == 0
    assert all(o.eq(-1).all() for o in others)
    # cuda's message (torch/csrc/StorageSharing.cpp) naming MLU; torch_openreg checks the same refusal.
    assert error is not None and "Attempted to send MLU tensor received from another process" in error


def test_dataloader_spawn_workers_return_mlu_tensors():
    loader = DataLoader(_MluDataset(), batch_size=2, num_workers=2, multiprocessing_context="spawn")
    batches = list(loader)  # the workers have exited when this returns: the batches outlive them
    assert [b.device.type for b in batches] == ["mlu", "mlu"]
    want = (torch.arange(4, dtype=torch.float32) * 2).repeat_interleave(3).view(4, 3)
    torch.testing.assert_close(torch.cat([b.cpu() for b in batches]), want)


def test_received_storage_maps_the_same_memory_and_is_not_resizable():
    t = torch.arange(6, dtype=torch.float32, device="mlu")
    got = ForkingPickler.loads(ForkingPickler.dumps(t[2:]))
    assert got.device == t.device and got.storage_offset() == 2
    got.fill_(7)
    torch.testing.assert_close(t.cpu(), torch.tensor([0.0, 1, 7, 7, 7, 7]))
    with pytest.raises(RuntimeError, match="not resizable"):
        got.untyped_storage().resize_(100)
    with pytest.raises(RuntimeError, match="Attempted to send MLU tensor received from another process"):
        ForkingPickler.dumps(got)


def test_empty_and_grad_tensors_follow_upstream_rules():
    empty = ForkingPickler.loads(ForkingPickler.dumps(torch.empty(0, device="mlu")))
    assert empty.device.type == "mlu" and empty.numel() == 0
    p = torch.nn.Parameter(torch.ones(2, device="mlu"))
    q = ForkingPickler.loads(ForkingPickler.dumps(p))
    assert isinstance(q, torch.nn.Parameter) and q.requires_grad
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(p * 2)
    # Plain pickle (torch.save's path) is unaffected: it copies the bytes.
    torch.testing.assert_close(pickle.loads(pickle.dumps(p.detach())).cpu(), torch.ones(2))


FORK = textwrap.dedent("""
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Items(Dataset):
        def __len__(self):
            return 2
        def __getitem__(self, i):
            return torch.full((2,), float(i), device="mlu")

    def load():
        return [b.cpu().tolist() for b in DataLoader(Items(), batch_size=1, num_workers=1,
                                                       multiprocessing_context="fork")]

    print("before-init", load(), flush=True)  # the parent had not initialized mlu: forked workers may use it
    assert torch.mlu.is_initialized()  # receiving the batches initialized it
    try:
        load()
    except RuntimeError as e:
        print("after-init", str(e).splitlines()[0], "|", "Cannot re-initialize MLU in forked subprocess" in str(e))
""")


def test_forked_dataloader_workers_as_with_cuda():
    r = run_python(FORK, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "before-init [[[0.0, 0.0]], [[1.0, 1.0]]]" in r.stdout.splitlines()
    assert "after-init Caught RuntimeError in DataLoader worker process 0. | True" in r.stdout.splitlines()
