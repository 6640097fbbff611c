# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``import torch_mlu.contrib.transfer_to_mlu``: unchanged CUDA calls run on mlu; unsupported ones raise naming the
API; not-applicable ones warn once; nothing is disabled; ``restore()`` undoes it all.

Each test runs in a fresh interpreter: the redirection is process-wide by design.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from migration_samples._support import cncl_available

HERE = Path(__file__).resolve().parent
PREAMBLE = f"""
import sys, warnings
sys.path.insert(0, {str(HERE)!r})
from migration_samples import _support
import torch
"""


def run(code: str, transfer: bool = True) -> str:
    """Run ``code`` after the preamble (and the transfer import); return stdout, failing with stderr on error."""
    body = PREAMBLE + ("import torch_mlu.contrib.transfer_to_mlu as transfer\n" if transfer else "")
    body += textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def test_device_arguments_go_to_mlu() -> None:
    out = run("""
        d1 = torch.device("cuda", 1)
        print(torch.zeros(2, device="cuda").device, torch.ones(2, device="cuda:1").device,
              torch.randn(2, device=d1).device, torch.tensor([1.0], device="cuda").device)
        x = torch.arange(4.0)
        print(x.to("cuda").device, x.to(d1).device, x.to(device="cuda:1", dtype=torch.float64).dtype,
              x.cuda().device, x.cuda(1).device, x.cuda(d1).device)
        print(torch.zeros_like(x, device="cuda").device, x.new_zeros(3, device="cuda:1").device)
        m = torch.nn.Linear(2, 2).cuda()
        print(m.weight.device, torch.nn.Linear(2, 2).to("cuda:1").weight.device)
        print(torch.Generator(device="cuda").device, isinstance(torch.Generator(), torch.Generator))
        print(d1.type)
    """)
    lines = out.split("\n")
    assert lines[0].split() == ["mlu:0", "mlu:1", "mlu:1", "mlu:0"]
    assert lines[1].split() == ["mlu:0", "mlu:1", "torch.float64", "mlu:0", "mlu:1", "mlu:1"]
    assert lines[2].split() == ["mlu:0", "mlu:1"]
    assert lines[3].split() == ["mlu:0", "mlu:1"]
    assert lines[4].split() == ["mlu:0", "True"]
    assert lines[5] == "cuda"  # the script's own device object keeps its type, so its cuda-path checks still hold


def test_torch_cuda_facade_answers_for_mlu() -> None:
    out = run("""
        print(torch.cuda.is_available(), torch.cuda.device_count() == torch.mlu.device_count())
        torch.cuda.set_device(torch.device("cuda", 1))
        print(torch.cuda.current_device())
        with torch.cuda.device(0):
            print(torch.cuda.current_device())
        torch.cuda.set_device(0)
        before = torch.cuda.memory_allocated()
        x = torch.empty(1024, device="cuda")
        now = torch.cuda.memory_allocated()
        print(now - before >= 4096, now == torch.mlu.memory_allocated())
        s = torch.cuda.Stream()
        e = torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(s):
            y = x.fill_(2.0) * 3
            e.record()
        e.synchronize()
        torch.cuda.synchronize()
        print(isinstance(s, torch.mlu.Stream), float(y.sum().cpu()))
        print(torch.cuda.get_device_name(0) == torch.mlu.get_device_name(0), torch.cuda.is_bf16_supported())
        torch.cuda.manual_seed(7); a = torch.randn(3, device="cuda")
        torch.cuda.manual_seed(7); b = torch.randn(3, device="cuda")
        print(torch.equal(a.cpu(), b.cpu()))
        try:
            torch.empty(1 << 40, device="cuda")
        except torch.cuda.OutOfMemoryError:
            print("oom-caught")
    """)
    assert out.split("\n")[:7] == ["True True", "1", "0", "True True", "True 6144.0", "True True", "True"]
    assert "oom-caught" in out


def test_amp_with_cuda_spellings() -> None:
    out = run("""
        m = torch.nn.Linear(4, 4).cuda()
        x = torch.randn(2, 4).cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            print(m(x).dtype, torch.is_autocast_enabled("cuda"), torch.is_autocast_enabled("mlu"))
        with torch.cuda.amp.autocast():
            print(m(x).dtype)
        with torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16):
            print(m(x).dtype)
        for scaler in (torch.cuda.amp.GradScaler(), torch.amp.GradScaler("cuda"), torch.amp.GradScaler()):
            loss = m(x).float().sum()
            scaler.scale(loss).backward()
            print(scaler._device, scaler.get_scale())
    """)
    lines = out.split("\n")
    assert lines[0] == "torch.float16 True True"
    assert lines[1] == "torch.float16"
    assert lines[2] == "torch.bfloat16"
    assert lines[3:6] == ["mlu 65536.0"] * 3


def test_unsupported_apis_raise_naming_the_api() -> None:
    out = run("""
        from torch_mlu.contrib.api_map import UnsupportedCudaAPIError
        for call in (lambda: torch.cuda.current_solver_handle(), lambda: torch.cuda.cudart(),
                     lambda: torch.cuda.GreenContext.create):
            try:
                call()
                print("no error")
            except UnsupportedCudaAPIError as err:
                print(err)
        # names torch.mlu has are mapped, not refused
        print(isinstance(torch.ones(1), torch.cuda.FloatTensor), torch.cuda.CUDAGraph is torch.mlu.MLUGraph,
              hasattr(torch.cuda.CUDAGraph, "replay"))
    """)
    lines = out.strip().split("\n")
    assert lines[0].startswith("torch.cuda.current_solver_handle is not supported on mlu: raw cuSOLVER handle")
    assert lines[1].startswith("torch.cuda.cudart is not supported on mlu:")
    assert lines[2].startswith("torch.cuda.GreenContext is not supported on mlu:")
    assert lines[3] == "False True True"


def test_not_applicable_apis_warn_once() -> None:
    out = run("""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                torch.cuda.nvtx.range_push("step")
                torch.cuda.nvtx.range_pop()
                with torch.cuda.nvtx.range("block"):
                    pass
                torch.cuda.ipc_collect()
        texts = sorted(str(w.message) for w in caught)
        print(len(texts))
        print("\\n".join(texts))
    """)
    lines = out.strip().split("\n")
    assert lines[0] == "4"  # four distinct APIs, each warned about once though called three times
    assert all("has no mlu meaning" in line for line in lines[1:])
    assert any(line.startswith("torch.cuda.nvtx.range_push ") for line in lines[1:])


def test_nothing_is_disabled_torchscript_still_compiles(tmp_path: Path) -> None:
    script = tmp_path / "scripted.py"
    script.write_text(textwrap.dedent("""
        import torch

        @torch.jit.script
        def f(x: torch.Tensor) -> torch.Tensor:
            return x + torch.zeros(3) * 2 + torch.ones_like(x)

        print(type(f).__name__, f(torch.ones(3)).tolist())
        print("aten::zeros" in str(f.graph))
    """))
    out = run(f"import runpy; runpy.run_path({str(script)!r})")
    assert out.split("\n")[:2] == ["ScriptFunction [2.0, 2.0, 2.0]", "True"]


def test_cuda_checkpoint_loads_on_mlu(tmp_path: Path) -> None:
    """A checkpoint whose storages were saved from ``cuda:1`` (as on a GPU machine) loads onto mlu:1."""
    ckpt = tmp_path / "ckpt.pt"
    run(f"""
        import io, zipfile
        buf = io.BytesIO()
        torch.save({{"w": torch.arange(6.0).reshape(2, 3)}}, buf)
        src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
        with zipfile.ZipFile({str(ckpt)!r}, "w") as dst:
            for info in src.infolist():
                data = src.read(info)
                if info.filename.endswith("data.pkl"):
                    old, new = b"X\\x03\\x00\\x00\\x00cpu", b"X\\x06\\x00\\x00\\x00cuda:1"  # pickle BINUNICODE
                    assert data.count(old) == 1
                    data = data.replace(old, new)
                dst.writestr(info, data)
    """, transfer=False)
    plain = subprocess.run([sys.executable, "-c", PREAMBLE + f"torch.load({str(ckpt)!r})"], capture_output=True,
                           text=True, timeout=300)
    assert plain.returncode != 0  # really a CUDA checkpoint: plain torch cannot load it here
    out = run(f"""
        sd = torch.load({str(ckpt)!r})
        print(sd["w"].device, sd["w"].cpu().tolist())
        print(torch.load({str(ckpt)!r}, map_location="cuda:0")["w"].device)
    """)
    assert out.split("\n")[:2] == ["mlu:1 [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]", "mlu:0"]


def test_backend_names() -> None:
    out = run("""
        from torch_mlu.contrib.transfer_to_mlu import to_mlu_backend, to_mlu_device
        print(to_mlu_backend("nccl"), to_mlu_backend("cuda:nccl,cpu:gloo"), to_mlu_backend("gloo"))
        print(to_mlu_device("cuda:3"), to_mlu_device("cpu"), to_mlu_device(torch.device("cuda")), to_mlu_device(1))
    """)
    assert out.split("\n")[:2] == ["cncl mlu:cncl,cpu:gloo gloo", "mlu:3 cpu mlu 1"]


@pytest.mark.skipif(not cncl_available(), reason="the cncl backend (torch_mlu.distributed) is not available yet")
def test_init_process_group_nccl_becomes_cncl(tmp_path: Path) -> None:
    out = run(f"""
        import torch.distributed as dist
        dist.init_process_group("nccl", init_method="file://{tmp_path / 'store'}", rank=0, world_size=1)
        t = torch.ones(2, device="cuda")
        dist.all_reduce(t)
        print(dist.get_backend(), t.device, torch.distributed.is_nccl_available())
        dist.destroy_process_group()
    """)
    assert out.split("\n")[0] == "cncl mlu:0 True"


def test_restore_puts_everything_back() -> None:
    out = run("""
        import torch.utils.data, torch.distributed
        owners = [torch, torch.cuda, torch.cuda.amp, torch.cuda.memory, torch.cuda.nvtx, torch.Tensor,
                  torch.nn.Module, torch.amp, torch.fft, torch.utils.data.DataLoader,
                  torch.amp.autocast_mode.autocast, torch.amp.grad_scaler.GradScaler, torch.distributed]
        before = [dict(vars(o)) for o in owners]
        import torch_mlu.contrib.transfer_to_mlu as transfer
        print(transfer.is_applied(), torch.cuda.is_available(), torch.zeros is before[0]["zeros"])
        transfer.restore()
        after = [dict(vars(o)) for o in owners]
        diffs = [(o.__name__, k) for o, b, a in zip(owners, before, after) for k in set(b) | set(a)
                 if b.get(k, None) is not a.get(k, None)]
        print(transfer.is_applied(), torch.cuda.is_available(), diffs)
        transfer.apply()
        print(torch.cuda.is_available())
    """, transfer=False)
    assert out.split("\n")[:3] == ["True True False", "False False []", "True"]


def test_import_as_the_first_line_of_a_script(tmp_path: Path) -> None:
    """The documented use: the import is the script's first line, before ``import torch`` (installed package)."""
    script = tmp_path / "user_script.py"
    script.write_text("import torch_mlu.contrib.transfer_to_mlu\nimport torch\n"
                      "print(torch.ones(2).cuda().device, torch.cuda.is_available())\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == "mlu:0 True\n"
