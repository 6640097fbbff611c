# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Record the mlu caching allocator during digits training steps and write the memory snapshot, as for CUDA.

Usage: python examples/memory_snapshot_digits.py OUT_DIR [--steps 2] [--png]

Trains ``DigitsCNN`` (examples/train_digits.py) on ``mlu`` with ``torch.mlu.memory._record_memory_history()`` on,
then writes ``OUT_DIR/snapshot.pickle`` (drag it onto https://pytorch.org/memory_viz), ``OUT_DIR/snapshot.html``
(PyTorch's own ``torch.cuda._memory_viz.trace_plot``: the interactive "Active Memory Timeline"; it loads
PyTorch's MemoryViz.js from its CDN when opened) and, with ``--png``, ``OUT_DIR/snapshot.png``: the same active
memory timeline drawn with matplotlib (each allocation a band, stacked in allocation order, x = allocator event,
as MemoryViz draws it), for pages that cannot run the viewer.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import torch
from torch.cuda import _memory_viz

sys.path.insert(0, str(Path(__file__).parent))
from _demo import require, run  # noqa: E402
from train_digits import DigitsCNN, load_data  # noqa: E402


def record(steps: int) -> dict:
    """Snapshot of ``steps`` digits training steps (batch 64, SGD) on mlu with the history on."""
    x_train, y_train, _, _ = load_data(0)
    torch.manual_seed(0)
    model = DigitsCNN().to("mlu")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    torch.mlu.memory._record_memory_history(max_entries=100000)
    try:
        for step in range(steps):
            xb = x_train[step * 64:(step + 1) * 64].to("mlu")
            yb = y_train[step * 64:(step + 1) * 64].to("mlu")
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
        torch.mlu.synchronize()
        return torch.mlu.memory._snapshot()
    finally:
        torch.mlu.memory._record_memory_history(enabled=None)


def draw_png(snapshot: dict, path: Path) -> None:
    """The active memory timeline of device 0 as a PNG (matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    events = [e for e in snapshot["device_traces"][0] if e["action"] in ("alloc", "free_completed")]
    live: list[tuple[int, int]] = []  # (addr, size) in allocation order
    bands: dict[tuple[int, int], list[tuple[int, float, float]]] = {}
    serial = 0
    key_of: dict[int, tuple[int, int]] = {}
    for i, e in enumerate(events):
        if e["action"] == "alloc":
            serial += 1
            key_of[e["addr"]] = (e["addr"], serial)
            live.append((e["addr"], e["size"]))
        elif e["addr"] in key_of:
            pts = bands.get(key_of[e["addr"]])
            if pts:
                pts.append((i, pts[-1][1], pts[-1][2]))  # the band ends at its free event
            live = [b for b in live if b[0] != e["addr"]]
        bottom = 0.0
        for addr, size in live:
            bands.setdefault(key_of[addr], []).append((i, bottom / 2**20, (bottom + size) / 2**20))
            bottom += size
    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=110)
    cmap = plt.get_cmap("tab20")
    for n, (_, pts) in enumerate(sorted(bands.items(), key=lambda kv: kv[0][1])):
        xs = [p[0] for p in pts]
        ax.fill_between(xs, [p[1] for p in pts], [p[2] for p in pts], step="post", color=cmap(n % 20), linewidth=0)
    ax.set_xlabel("allocator event (alloc / free) on mlu:0")
    ax.set_ylabel("active memory (MiB)")
    ax.set_title("Active memory timeline: digits CNN training steps on mlu (torch.mlu.memory._snapshot)")
    ax.margins(x=0)
    fig.tight_layout()
    fig.savefig(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--png", action="store_true", help="also draw snapshot.png (needs matplotlib)")
    args = ap.parse_args(argv)
    if args.png:
        require("matplotlib", "matplotlib", "--png")  # checked before the training steps, not after
    args.out_dir.mkdir(parents=True, exist_ok=True)
    snap = record(args.steps)
    with open(args.out_dir / "snapshot.pickle", "wb") as f:
        pickle.dump(snap, f)
    (args.out_dir / "snapshot.html").write_text(_memory_viz.trace_plot(snap))
    n = len(snap["device_traces"][0])
    print(f"{n} allocator events, {len(snap['segments'])} segments -> {args.out_dir}/snapshot.html")
    if args.png:
        draw_png(snap, args.out_dir / "snapshot.png")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
