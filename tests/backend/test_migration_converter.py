# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch_gpu2mlu`` (torch_mlu.migration): libcst rewrite rules, reports, launcher, and bad input."""

from __future__ import annotations

import codecs
import csv
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from migration_samples._support import REPO

from torch_mlu.contrib.api_map import load_api_map
from torch_mlu.migration.cli import entry, main
from torch_mlu.migration.transform import convert_source

HERE = Path(__file__).resolve().parent


def convert(code: str):
    return convert_source(textwrap.dedent(code), load_api_map())


def run_converted(code: str, tmp_path: Path) -> str:
    """Execute converted code on mlu in a fresh interpreter (plain torch + torch_mlu, no transfer_to_mlu)."""
    script = tmp_path / "converted.py"
    script.write_text(code)
    pre = f"import sys; sys.path.insert(0, {str(HERE)!r}); from migration_samples import _support; import runpy; "
    proc = subprocess.run([sys.executable, "-c", pre + f"runpy.run_path({str(script)!r}, run_name='__main__')"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_formatting_and_comments_are_kept() -> None:
    src = '''\
        import torch   # deep learning
        import torch.nn as nn


        def   train( model ,x ):  # odd spacing stays
            # move to the GPU
            model = model.cuda()
            y = model( x.to( "cuda:0" ) )
            return y  # done
        '''
    result = convert(src)
    expected = textwrap.dedent(src).replace(
        "import torch   # deep learning\n",
        "import torch   # deep learning\nimport torch_mlu  # added by torch_gpu2mlu: the mlu device\n",
    ).replace("model.cuda()", "model.mlu()").replace('"cuda:0"', '"mlu:0"')
    assert result.code == expected
    assert [(c.line, c.before, c.after) for c in result.changes] == [
        (2, "", "import torch_mlu  # added by torch_gpu2mlu: the mlu device"),
        (7, "model.cuda", "model.mlu"),
        (8, '"cuda:0"', '"mlu:0"'),
    ]


def test_import_forms_and_the_result_runs_on_mlu(tmp_path: Path) -> None:
    src = """\
        import torch
        import torch.cuda as tc
        from torch import cuda
        from torch.cuda.amp import autocast as ac, GradScaler
        from torch.cuda import memory_allocated, nvtx

        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        x = torch.ones(256, device=dev)
        print(dev.type, x.device, x.is_cuda, tc.device_count() == cuda.device_count())
        print(memory_allocated() == torch.cuda.memory_allocated() > 0, tc.memory.memory_reserved() > 0)
        with ac(dtype=torch.bfloat16):
            print((x[:4].view(2, 2) @ x[:4].view(2, 2)).dtype)
        print(type(GradScaler()).__name__, torch.cuda.get_device_properties(0).total_memory > 0)
        nvtx.range_push("a"); nvtx.range_pop()
        with torch.cuda.nvtx.range("b"):
            pass
        """
    result = convert(src)
    assert "torch.cuda" not in result.code and '"cuda"' not in result.code
    out = run_converted(result.code, tmp_path)
    assert out.split("\n")[:4] == ["mlu mlu:0 True True", "True True", "torch.bfloat16", "GradScaler True"]


def test_unsupported_and_unknown_are_reported_and_left() -> None:
    result = convert("""\
        import torch
        g = torch.cuda.tunable.enable(True)
        torch.cuda._sleep(100)
        from torch.cuda import current_solver_handle, _lazy_init
        torch.cuda.nvtx.mark("x")
        """)
    uses = {(u.line, u.api, u.kind) for u in result.uses}
    assert (2, "torch.cuda.tunable.enable", "unsupported") in uses
    assert (3, "torch.cuda._sleep", "unknown") in uses
    assert (4, "torch.cuda.current_solver_handle", "unsupported") in uses
    assert (4, "torch.cuda._lazy_init", "unknown") in uses
    assert (5, "torch.cuda.nvtx.mark", "not_applicable") in uses
    assert "g = torch.cuda.tunable.enable(True)" in result.code
    assert "torch.cuda._sleep(100)" in result.code
    assert "from torch.cuda import current_solver_handle, _lazy_init" in result.code
    assert "torch_mlu.contrib.cuda_compat.nvtx.mark(\"x\")" in result.code
    reason = next(u.reason for u in result.uses if u.api == "torch.cuda.tunable.enable")
    assert "TunableOp" in reason


def test_only_whole_device_and_backend_strings_change() -> None:
    result = convert("""\
        import os, torch
        a = ["cuda", 'cuda:1', f"cuda:{os.getpid()}", "nccl", "cuda:nccl,cpu:gloo"]
        b = ["NCCL_DEBUG", "cudart", "my cuda", b"cuda", "cuda is fast", "gloo", f"{'x'}cuda"]
        torch.backends.cudnn.benchmark = True
        device.cuda_index = 1
        fn = x.cuda
        """)
    lines = result.code.split("\n")
    assert lines[2] == """a = ["mlu", 'mlu:1', f"mlu:{os.getpid()}", "cncl", "mlu:cncl,cpu:gloo"]"""
    assert lines[3] == """b = ["NCCL_DEBUG", "cudart", "my cuda", b"cuda", "cuda is fast", "gloo", f"{'x'}cuda"]"""
    assert lines[4:7] == ["torch.backends.cudnn.benchmark = True", "device.cuda_index = 1", "fn = x.cuda"]
    assert result.distributed  # a process-group backend name was found


def test_conversion_is_idempotent() -> None:
    first = convert((HERE / "migration_samples" / "cuda_memory_streams.py").read_text())
    second = convert_source(first.code, load_api_map())
    assert first.changed and not second.changed and second.code == first.code


def test_non_utf8_source_keeps_its_encoding() -> None:
    src = '# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\nx = torch.ones(1).cuda()\n'.encode("latin-1")
    result = convert_source(src, load_api_map())
    assert codecs.lookup(result.encoding).name == "iso8859-1"
    assert result.code.encode(result.encoding) == src.replace(b".cuda()", b".mlu()").replace(
        b"import torch\n", b"import torch\nimport torch_mlu  # added by torch_gpu2mlu: the mlu device\n")


def _tree(root: Path) -> Path:
    src = root / "project"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "train.py").write_text(textwrap.dedent("""\
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            model = torch.nn.Linear(2, 2).cuda()
            torch.cuda.synchronize()
            torch.cuda.current_solver_handle()

        if __name__ == "__main__":
            main()
        """))
    (src / "pkg" / "util.py").write_text("import torch\nprint(torch.cuda.memory_allocated(), torch.cuda._sleep)\n")
    (src / "pkg" / "plain.py").write_text("print('no cuda here')\n")
    (src / "README.md").write_text("run with cuda\n")
    (src / "weights.bin").write_bytes(bytes(range(256)))
    (src / "bad_syntax.py").write_text("import torch\nx = torch.ones(2).cuda(\nif True:\n    pass\n")
    (src / "binary.py").write_bytes(b"\x00\x01\xfe\xff" * 64)
    return src


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_tree_conversion_reports_and_launcher(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _tree(tmp_path)
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}
    out = tmp_path / "out"
    assert main(["-i", str(src), "-o", str(out)]) == 1  # two malformed files were skipped
    err = capsys.readouterr().err.strip().split("\n")
    assert [line.split(":")[1].strip() for line in err] == ["bad_syntax.py", "binary.py"]
    assert err[0].startswith("error: bad_syntax.py:")
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == before  # input untouched

    assert (out / "README.md").read_bytes() == before[src / "README.md"]
    assert (out / "weights.bin").read_bytes() == before[src / "weights.bin"]
    assert (out / "bad_syntax.py").read_bytes() == before[src / "bad_syntax.py"]  # copied, not converted
    assert (out / "pkg" / "plain.py").read_bytes() == before[src / "pkg" / "plain.py"]
    train = (out / "train.py").read_text()
    assert 'dist.init_process_group("cncl")' in train and ".mlu()" in train and "torch.mlu.synchronize()" in train
    assert "import torch_mlu.distributed" in train

    reports = tmp_path / "out_report"
    changes = _csv(reports / "change_list.csv")
    src_lines = {"train.py": before[src / "train.py"].decode().split("\n"),
                 "pkg/util.py": before[src / "pkg" / "util.py"].decode().split("\n")}
    for row in changes:
        assert row["file"] in src_lines
        if row["before"]:
            assert row["before"].split("\n")[0] in src_lines[row["file"]][int(row["line"]) - 1]
    assert {r["file"] for r in changes} == {"train.py", "pkg/util.py"}
    unsupported = _csv(reports / "unsupported_api.csv")
    assert [(r["file"], r["line"], r["api"], r["status"]) for r in unsupported] == [
        ("train.py", "8", "torch.cuda.current_solver_handle", "unsupported")]
    assert [(r["file"], r["line"], r["api"]) for r in _csv(reports / "unknown_api.csv")] == [
        ("pkg/util.py", "2", "torch.cuda._sleep")]
    ops = {r["api"]: r for r in _csv(reports / "cuda_op_list.csv")}
    assert ops["torch.cuda.memory_allocated"]["count"] == "1" and ops["torch.cuda.synchronize"]["files"] == "train.py"
    log = (reports / "torch_gpu2mlu.log").read_text().split("\n")
    assert "WARNING bad_syntax.py:2: skipped-malformed: not valid Python: '(' was never closed" in log
    assert "WARNING binary.py:1: skipped-malformed: cannot decode as utf-8: byte 0xfe (invalid start byte)" in log
    assert "INFO README.md: copied: not Python" in log
    assert "INFO train.py: converted: " + f"{sum(r['file'] == 'train.py' for r in changes)} changes" in log
    assert log[-2] == "INFO summary: 2 converted, 2 unchanged, 2 copied, 2 skipped-malformed, 0 skipped-unreadable"

    launcher = out / "run_distributed_mlu.sh"
    assert os.access(launcher, os.X_OK)
    text = launcher.read_text()
    assert "\nDEFAULT_ENTRY=train.py\n" in text and 'ENTRY="${ENTRY:-$DEFAULT_ENTRY}"' in text
    assert "torch.distributed.run" in text
    assert subprocess.run(["bash", "-n", str(launcher)]).returncode == 0


def test_no_launcher_without_distributed_code(tmp_path: Path) -> None:
    src = tmp_path / "one.py"
    src.write_text("import torch\nx = torch.zeros(1, device='cuda')\n")
    assert main(["-i", str(src)]) == 0
    assert (tmp_path / "one_mlu" / "one.py").read_text().endswith("x = torch.zeros(1, device='mlu')\n")
    assert not (tmp_path / "one_mlu" / "run_distributed_mlu.sh").exists()
    assert (tmp_path / "one_mlu_report" / "change_list.csv").exists()


def test_unreadable_files_are_skipped_and_the_rest_converted(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    src.mkdir()
    (src / "good.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (src / "dangling.py").symlink_to(tmp_path / "does-not-exist.py")
    (src / "folder.py").mkdir()
    (src / "folder.py" / "inner.py").write_text("import torch\nprint(torch.cuda.is_available())\n")
    locked = src / "locked.py"
    locked.write_text("import torch\n")
    locked.chmod(0)
    can_lock = os.geteuid() != 0  # root reads any file
    try:
        assert main(["-i", str(src), "-o", str(tmp_path / "out")]) == 1
    finally:
        locked.chmod(0o644)
    log = (tmp_path / "out_report" / "torch_gpu2mlu.log").read_text()
    assert "WARNING dangling.py: skipped-unreadable: cannot read: a broken symlink" in log
    assert "WARNING folder.py: skipped-unreadable: cannot read: a directory" in log
    if can_lock:
        assert "WARNING locked.py: skipped-unreadable: cannot read: permission denied" in log
    assert (tmp_path / "out" / "good.py").read_text() == (
        "import torch\nimport torch_mlu  # added by torch_gpu2mlu: the mlu device\ntorch.mlu.synchronize()\n")
    assert "torch.mlu.is_available()" in (tmp_path / "out" / "folder.py" / "inner.py").read_text()


def test_inplace_rewrites_only_changed_files(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    src.mkdir()
    (src / "a.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    (src / "b.py").write_text("print(1)\n")
    b_mtime = (src / "b.py").stat().st_mtime_ns
    assert main(["-i", str(src), "--inplace"]) == 0
    assert ".mlu()" in (src / "a.py").read_text()
    assert (src / "b.py").stat().st_mtime_ns == b_mtime
    assert (tmp_path / "proj_mlu_report" / "change_list.csv").exists()
    assert not (tmp_path / "proj_mlu").exists()


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (lambda t: None, lambda t: ["-i", str(t / "missing")], "missing: no such file or directory"),
        (lambda t: (t / "notes.txt").write_text("x"), lambda t: ["-i", str(t / "notes.txt")],
         "notes.txt: input must be a .py file or a directory"),
        (lambda t: ((t / "p").mkdir(), (t / "o").mkdir(), (t / "o" / "keep").write_text("mine")),
         lambda t: ["-i", str(t / "p"), "-o", str(t / "o")], "output directory exists and is not empty"),
        (lambda t: (t / "p").mkdir(), lambda t: ["-i", str(t / "p"), "-o", str(t / "p" / "sub")],
         "output directory is inside the input tree"),
        (lambda t: (t / "p").mkdir(), lambda t: ["-i", str(t / "p"), "-o", str(t / "o"), "--inplace"],
         "--inplace and --output exclude each other"),
    ],
)
def test_usage_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], setup, args, message) -> None:
    setup(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert entry(args(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written


def test_script_entry_point_from_checkout(tmp_path: Path) -> None:
    src = tmp_path / "s.py"
    src.write_text("import torch\nprint(torch.cuda.device_count())\n")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "torch_gpu2mlu.py"), "-i", str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "1 converted" in proc.stdout
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "torch_gpu2mlu.py"), "-i", str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip() == f"error: {tmp_path / 'nope'}: no such file or directory"


def test_missing_libcst_is_a_one_line_error(tmp_path: Path) -> None:
    """libcst is the ``migration`` extra of torch_mlu, not a hard dependency: without it the command says so."""
    (tmp_path / "a.py").write_text("import torch\n")
    code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); from migration_samples import _support; "
            "sys.modules['libcst'] = None; from torch_mlu.migration.cli import entry; "
            f"sys.exit(entry(['-i', {str(tmp_path / 'a.py')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr == "error: torch_gpu2mlu needs libcst: pip install 'torch[migration]' (or 'libcst>=1.0.1')\n"
    assert not (tmp_path / "a_mlu").exists()


ALIAS_ONLY = """\
import torch.cuda as tc
from torch.cuda import amp as A, memory


def report():
    # no literal CUDA word on the next lines: only aliases
    used = tc.memory_allocated()
    return used, memory.memory_reserved()


scaler = A.GradScaler()
"""


def test_statements_using_only_aliases_are_rewritten() -> None:
    code = convert(ALIAS_ONLY).code
    assert "used = torch.mlu.memory_allocated()" in code
    assert "return used, torch.mlu.memory_reserved()" in code
    assert "scaler = torch.mlu.amp.GradScaler()" in code


@pytest.mark.parametrize("name", ["train_amp.py", "train_dataloader.py", "cuda_memory_streams.py", "train_ddp.py",
                                  "ALIAS_ONLY"])
def test_skipping_quiet_statements_changes_nothing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewrite skips statements that mention no CUDA word; the result must equal a full visit's."""
    from torch_mlu.migration import scan

    src = ALIAS_ONLY if name == "ALIAS_ONLY" else (HERE / "migration_samples" / name).read_text()
    fast = convert_source(src, load_api_map())
    monkeypatch.setattr(scan.Scan, "is_quiet", lambda self, node, names: False)
    full = convert_source(src, load_api_map())
    assert fast.changed
    assert fast.code == full.code
    assert [(c.line, c.before, c.after) for c in fast.changes] == [(c.line, c.before, c.after) for c in full.changes]
    assert [(u.line, u.api, u.kind) for u in fast.uses] == [(u.line, u.api, u.kind) for u in full.uses]
    assert (fast.distributed, fast.has_main) == (full.distributed, full.has_main)
