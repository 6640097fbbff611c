#!/usr/bin/env python3

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Benchmark: ``torch_gpu2mlu`` throughput (files/second) on a generated tree of 1,000 CUDA PyTorch files.

The tree: ``--files`` modules (default 1,000) in 20 packages, each a copy of one of the realistic CUDA training
scripts in ``tests/backend/migration_samples/`` with its names suffixed and 0-3 extra helper functions using
``torch.cuda`` APIs, device strings and ``.cuda()`` calls appended (about 100-170 lines per file). In one run:

* baseline: libcst parse + unparse of every file (``parse_module(src).code``) written to an output tree, no
  transformation -- the floor for any libcst-based converter that keeps formatting;
* ours: :func:`torch_mlu.migration.convert_tree` (read, parse, position metadata, rewrite, write) plus
  :func:`write_reports` (the CSV reports and the log).

Prints the best of ``--rounds`` (interleaved) for each, files/second, and the ratio ours / baseline. No asserts.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "backend" / "migration_samples"

import torch  # noqa: E402,F401  (before torch_mlu, as torch's backend autoload expects)

import torch_mlu  # noqa: E402

_CHECKOUT = ROOT / "catch" / "torch_mlu"
if _CHECKOUT.is_dir() and str(_CHECKOUT) not in torch_mlu.__path__:
    torch_mlu.__path__.insert(0, str(_CHECKOUT))  # measure the checkout's converter

import libcst as cst  # noqa: E402

from torch_mlu.contrib.api_map import load_api_map  # noqa: E402
from torch_mlu.migration.reports import write_reports  # noqa: E402
from torch_mlu.migration.tree import convert_tree  # noqa: E402

SAMPLE_FILES = ("train_amp.py", "train_dataloader.py", "cuda_memory_streams.py", "train_ddp.py")

EXTRAS = [
    '''
def log_memory_{i}(tag):
    # report the allocator state at a training milestone
    if torch.cuda.is_available():
        print(tag, torch.cuda.memory_allocated() / 2**20, torch.cuda.max_memory_reserved() / 2**20)
        torch.cuda.reset_peak_memory_stats()
''',
    '''
def to_device_{i}(batch, device="cuda:0"):
    """Move a nested batch to the GPU."""
    if isinstance(batch, dict):
        return {{k: to_device_{i}(v, device) for k, v in batch.items()}}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device_{i}(v, device) for v in batch)
    return batch.cuda(non_blocking=True) if torch.is_tensor(batch) else batch
''',
    '''
def timed_{i}(fn, *args):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    out = fn(*args)
    end.record()
    torch.cuda.synchronize()
    return out, start.elapsed_time(end)
''',
    '''
class EMA_{i}:
    def __init__(self, model, decay=0.999):
        self.shadow = {{k: v.detach().clone().to("cuda") for k, v in model.state_dict().items()}}
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for k, v in model.state_dict().items():
            self.shadow[k].mul_(self.decay).add_(v.to(self.shadow[k].device), alpha=1 - self.decay)
''',
]


def make_tree(dst: Path, count: int, seed: int = 5) -> tuple[int, int]:
    """Write ``count`` modules under ``dst``; returns (files, lines)."""
    rng = random.Random(seed)
    texts = [(SAMPLES / name).read_text() for name in SAMPLE_FILES]
    lines = 0
    for i in range(count):
        body = texts[i % len(texts)].replace("def main(", f"def main_{i}(").replace("    main()", f"    main_{i}()")
        body += "".join(extra.format(i=i) for extra in rng.sample(EXTRAS, rng.randrange(0, 4)))
        path = dst / f"pkg{i % 20:02d}" / f"module_{i:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        lines += body.count("\n")
    return count, lines


def baseline(src: Path, dst: Path) -> None:
    for path in sorted(src.rglob("*.py")):
        out = dst / path.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(cst.parse_module(path.read_text()).code)


def ours(src: Path, dst: Path, reports: Path) -> int:
    run = convert_tree(src, dst, load_api_map())
    write_reports(run, reports)
    return sum(len(f.result.changes) for f in run.files if f.result is not None)


def timed(fn) -> tuple[float, object]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        result = fn(Path(tmp))
        return time.perf_counter() - t0, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "tree"
        files, lines = make_tree(src, args.files)
        load_api_map()
        print(f"tree: {files} files, {lines} lines ({lines / files:.0f} per file)")
        t_base = t_ours = float("inf")
        changes: object = 0
        for _ in range(args.rounds):  # interleaved, so that a change in machine load hits both alike
            t_base = min(t_base, timed(lambda d: baseline(src, d / "out"))[0])
            elapsed, changes = timed(lambda d: ours(src, d / "out", d / "report"))
            t_ours = min(t_ours, elapsed)
        print(f"baseline libcst parse+unparse: {t_base:7.2f} s  {files / t_base:7.1f} files/s")
        print(f"torch_gpu2mlu (with reports):  {t_ours:7.2f} s  {files / t_ours:7.1f} files/s  ({changes} changes)")
        print(f"ratio ours / baseline: {t_ours / t_base:.2f}x")
        shutil.rmtree(src)
    return 0


if __name__ == "__main__":
    sys.exit(main())
