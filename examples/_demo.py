# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Plumbing shared by the demos: ``--device`` parsing, step timing, the per-device summary and the result file.

Every demo runs the same code on each device named by ``--device`` (``both`` = ``mlu`` then ``cpu``), prints a table
with the metric and the time per step of each device side by side, and writes the full record (losses per step,
metrics, fallbacks) as JSON to ``--result`` (default ``examples/results/<demo>.json``, ignored by git); the terminal
gets one line naming that file. Tests and CI read the file.

The digits demos load scikit-learn's digits through :func:`load_digits`, the one place that imports scikit-learn: a
missing optional package (scikit-learn, matplotlib: :func:`require`) is one ``error:`` line saying what to install.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

#: Where the result files go by default (``.gitignore`` lists it).
RESULTS = Path(__file__).resolve().parent / "results"
#: What ``--device`` accepts, for help and errors.
DEVICE_CHOICES = "mlu, cpu, both (= mlu,cpu), mlu:N or a comma-separated list such as mlu:1,cpu"


class DemoError(Exception):
    """A bad command line or environment; ``run`` prints it as one ``error: ...`` line and exits with status 2."""


def script_name() -> str:
    """The demo as the user named it (``examples/train_digits.py``): the script path on the command line."""
    script = sys.argv[0] if sys.argv and sys.argv[0] else ""
    return script if script.endswith(".py") else "this demo"


def require(module: str, package: str, purpose: str) -> ModuleType:
    """``import module`` (installed by the pip package ``package``, which the demo needs for ``purpose``).

    Raises DemoError, one line saying what to install (``examples/train_digits.py needs scikit-learn for its
    dataset: pip install scikit-learn``) when it cannot be imported; the import error is appended when the package is
    there but fails to import.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        absent = isinstance(exc, ModuleNotFoundError) and exc.name == module.split(".")[0]
        why = "" if absent else f" (importing {module} failed: {' '.join(str(exc).split())})"
        raise DemoError(f"{script_name()} needs {package} for {purpose}: pip install {package}{why}") from None


def load_digits() -> Any:
    """scikit-learn's digits (``sklearn.datasets.load_digits()``: 1,797 8x8 images, 0..16, with labels; they ship
    with scikit-learn, nothing is downloaded). DemoError when scikit-learn is missing (:func:`require`)."""
    return require("sklearn.datasets", "scikit-learn", "its dataset").load_digits()


def add_common_args(parser: argparse.ArgumentParser, steps: int | None, device: str = "both",
                    log_every: int = 25) -> None:
    """Add ``--device`` (default ``device``), ``--seed``, ``--steps`` (default ``steps``; None: the demo's own
    length), ``--log-every`` (default ``log_every``), ``--threads`` and ``--result``."""
    parser.add_argument("--device", default=device, help=f"{DEVICE_CHOICES} (default: {device})")
    parser.add_argument("--seed", type=int, default=0, help="seed for weights, batches and sampling (default: 0)")
    parser.add_argument("--steps", type=int, default=steps,
                        help=f"optimizer steps per device (default: {steps if steps is not None else 'all epochs'})")
    parser.add_argument("--log-every", type=int, default=log_every,
                        help=f"print the loss every N steps (default: {log_every})")
    parser.add_argument("--threads", type=int, default=0,
                        help="host threads for kernels (torch.set_num_threads); 0 keeps PyTorch's default. "
                             "On a busy machine 1 avoids oversubscription (the emulated mlu computes on the host)")
    parser.add_argument("--result", type=Path, default=None,
                        help="write the full result (JSON) here (default: examples/results/<demo>.json)")


def apply_threads(threads: int) -> None:
    """``torch.set_num_threads(threads)`` when ``threads`` > 0; DemoError for a negative count."""
    if threads < 0:
        raise DemoError(f"--threads {threads}: must be 0 (PyTorch's default) or more")
    if threads:
        torch.set_num_threads(threads)


def parse_devices(value: str) -> list[torch.device]:
    """``both`` -> [mlu, cpu]; otherwise a comma-separated list of device strings, each checked to exist.

    Raises DemoError for an unknown device type (the message lists what ``--device`` accepts, not PyTorch's list of
    device types, which names the PrivateUse1 key instead of mlu), ``mlu`` without torch_mlu installed, or an index
    past ``torch.mlu.device_count()`` -- the same rules ``torch.device`` and CUDA's ``device_count`` apply.
    """
    names = ["mlu", "cpu"] if value == "both" else [part.strip() for part in value.split(",") if part.strip()]
    if not names:
        raise DemoError(f"--device {value!r}: no device named; use {DEVICE_CHOICES}")
    devices = []
    for name in names:
        if name == "both":
            raise DemoError(f"--device {value}: 'both' cannot be part of a list; use {DEVICE_CHOICES}")
        try:
            dev = torch.device(name)
        except RuntimeError:
            raise DemoError(f"--device {name}: not a device; use {DEVICE_CHOICES}") from None
        if dev.type == "mlu":
            if not hasattr(torch, "mlu") or not torch.mlu.is_available():
                raise DemoError(f"--device {name}: torch_mlu is not installed or sees no device (pip install ./catch)")
            if dev.index is not None and dev.index >= torch.mlu.device_count():
                raise DemoError(f"--device {name}: only {torch.mlu.device_count()} mlu device(s)")
        elif dev.type != "cpu":
            raise DemoError(f"--device {name}: the demos run on mlu and cpu; use {DEVICE_CHOICES}")
        devices.append(dev)
    return devices


def check_positive(**values: int) -> None:
    """Raise DemoError naming the first option whose value is below 1 (e.g. ``check_positive(steps=args.steps)``)."""
    for name, value in values.items():
        if value < 1:
            raise DemoError(f"--{name.replace('_', '-')} {value}: must be at least 1")


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (``torch.mlu.synchronize``); a no-op on the CPU."""
    if device.type == "mlu":
        torch.mlu.synchronize(device)


class StepTimer:
    """Wall time per step in milliseconds, synchronizing the device before each reading.

    ``ms_per_step`` is the median over the steps after ``warmup`` (the first steps pay for allocator growth and lazy
    initialisation); with fewer steps than that it is the median of all of them.
    """

    def __init__(self, device: torch.device, warmup: int = 3) -> None:
        self.device = device
        self.warmup = warmup
        self.times_ms: list[float] = []

    @contextmanager
    def step(self) -> Iterator[None]:
        synchronize(self.device)
        start = time.perf_counter()
        yield
        synchronize(self.device)
        self.times_ms.append((time.perf_counter() - start) * 1000.0)

    @property
    def ms_per_step(self) -> float:
        steady = self.times_ms[self.warmup:] or self.times_ms
        return statistics.median(steady) if steady else float("nan")


def reset_fallbacks(device: torch.device) -> None:
    """Clear torch_mlu's CPU-fallback counters before a run on ``device`` (nothing to do on the CPU)."""
    if device.type == "mlu":
        torch.mlu.reset_fallback_report()


def fallbacks(device: torch.device) -> dict[str, int]:
    """Ops that ran through the CPU fallback on mlu since ``reset_fallbacks`` (op name -> calls); {} on the CPU."""
    return dict(torch.mlu.fallback_report()) if device.type == "mlu" else {}


def say(device: torch.device, message: str) -> None:
    """Print one progress line tagged with the device, flushed so a piped run shows progress."""
    print(f"[{device}] {message}", flush=True)


def print_summary(title: str, runs: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]],
                  time_key: str = "ms_per_step", time_label: str = "time per step") -> None:
    """Print a table with one row per run; ``columns`` are (key, header, format spec) and ``device`` comes first.

    When both an mlu and a cpu run report ``time_key``, a last line gives their mlu/cpu ratio.
    """
    headers = ["device", *(header for _, header, _ in columns), "cpu fallbacks"]
    rows = []
    for run in runs:
        cells = [str(run["device"])]
        cells += [format(run[key], spec) for key, _, spec in columns]
        cells.append(", ".join(sorted(run.get("fallback_ops", {}))) or "none")
        rows.append(cells)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    print(f"\n{title}")
    for cells in [headers, *rows]:
        print(("  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))).rstrip())
    timed = {torch.device(r["device"]).type: r[time_key] for r in runs if time_key in r}
    if "mlu" in timed and "cpu" in timed and timed["cpu"] > 0:
        print(f"  mlu/cpu {time_label}: {timed['mlu'] / timed['cpu']:.2f}x (emulated mlu: kernels run on the host)")


def emit_result(demo: str, seed: int, runs: Sequence[dict[str, Any]], path: Path | None = None,
                **extra: Any) -> Path:
    """Write ``{"demo": ..., "seed": ..., "runs": [...], ...}`` as JSON to ``path`` (default
    ``examples/results/<demo>.json``) and print one line naming it; returns the path. DemoError if it cannot write."""
    target = path if path is not None else RESULTS / f"{demo}.json"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"demo": demo, "seed": seed, "runs": list(runs), **extra}, indent=1) + "\n")
    except OSError as exc:
        raise DemoError(f"--result {target}: {exc.strerror}") from None
    try:
        shown = target.resolve().relative_to(Path.cwd())
    except ValueError:
        shown = target
    print(f"result: {shown} (losses per step, metrics and fallbacks of {len(runs)} run(s), JSON)", flush=True)
    return target


def run(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """Call ``main(argv)``; a DemoError becomes ``error: <message>`` on stderr and exit status 2 (no traceback)."""
    try:
        return main(argv)
    except DemoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
