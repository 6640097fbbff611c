# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The benchmark dashboard: every performance target of the project in one run, one table, one JSON file.

Usage: python benchmarks/run_all.py [--quick] [--skip-compile] [--skip-interface-check] [--compare OLD.json]
       (or ``tox -e bench -- [options]``; the dependencies are listed in benchmarks/requirements.txt)

Each row is a ratio ours / baseline measured side by side in this run (interleaved repetitions, best of them, so
machine noise hits both alike), or for the interface check a time in seconds. Rows marked "CPU time" measure the
CPU time of the calling thread (or of the child process) instead of wall time: on a loaded machine they stay
steady where wall-clock ratios do not; they are cross-checks, the wall-clock rows are the targets:

* eager mlu vs CPU (the code of ``bench_backend.py``): the digits CNN training step at 1 and 2 threads, a bigger
  CNN (28x28 inputs), ``add`` of 64 elements, ``import torch`` with the mlu autoload vs without, a 256 MiB
  ``d.cpu()`` vs a host ``a.clone()`` (both allocate their result);
* graph mode (the workloads of ``bench_compile.py``): ``torch.compile`` on mlu, default Inductor and
  ``backend="mlu"``, against ``torch.compile`` on CPU (the peer running Inductor's C++ code on the same cores), at 1
  thread, for the transformer block (inference and training step) and the digits CNN training step, with a second
  copy of the CPU model against the first as the A/A control of each case, each measured in three fresh processes
  and the median kept (one with ``--quick``; ``--skip-compile`` leaves them out; compiling
  takes minutes);
* the patch engine (the code of ``bench_apply.py``): applying a 200-patch series vs ``git am`` (library call), and
  ``scripts/apply_patches.py apply`` on Debian's 17-patch ``pytorch 2.6.0`` series vs ``quilt push -a`` (CLI with
  interpreter start-up, and its CPU time as a cross-check; needs ``apt-get install quilt``, else the rows say "not
  run"; ``--skip-apply`` leaves them out);
* the native interface check, cold (a new process, upstream's unpacked tree and probe cached) and ``--full-elf
  --full-api`` (needs the upstream wheel, builds a combined wheel; ``--skip-interface-check`` leaves them out).

Prints the table (measure, baseline, ours, ratio, target, met) and the load average, and writes the rows as JSON to
``benchmarks/results/<UTC time>.json``; ``python benchmarks/results_table.py`` puts the newest such file's table
into ``benchmarks/README.md`` (the rows and the table are that module's). ``--compare OLD.json`` adds the old ratio
and flags rows whose ratio grew by more than ``--tolerance`` (default 10 %) as regressions. Timing targets live here,
never in tests.
Exit status 0 (the table is a report; ``--strict`` makes a missed target or a regression exit 1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import torch
from rich.console import Console
from torch import nn

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import bench_backend  # noqa: E402  (the workloads and the interleaved timing of the eager rows)
from results_table import WIDTH, Row, render, title  # noqa: E402  (the rows and the table, also the README's)


# ---- eager mlu vs CPU --------------------------------------------------------------------------------------------
class BigCNN(nn.Module):
    """The digits CNN's layers on 28x28 inputs (conv 1->16, conv 16->32, maxpool, linear 6272->64->10)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1),
                                      nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 14 * 14, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def big_cnn_step(device: str) -> Callable[[], object]:
    torch.manual_seed(0)
    model = BigCNN().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.rand(64, 1, 28, 28).to(device)
    y = torch.randint(0, 10, (64,)).to(device)
    loss_fn = nn.CrossEntropyLoss()

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def copy_out(nbytes: int, number: int, repeat: int) -> tuple[float, float]:
    """(host ``a.clone()``, ``d.cpu()``) seconds for ``nbytes`` of float32, interleaved; both allocate their result."""
    n = nbytes // 4
    a = torch.rand(n)
    d = a.to("mlu")
    base, ours = float("inf"), float("inf")
    for _ in range(3):
        base = min(base, bench_backend.best_time(lambda: a.clone(), number, repeat, sync=False))
        ours = min(ours, bench_backend.best_time(lambda: d.cpu(), number, repeat, sync=True))
    return base, ours


def thread_cpu_pair(make: Callable[[str], Callable[[], object]], number: int, repeat: int) -> tuple[float, float]:
    """(cpu, mlu) best CPU seconds of the calling thread per call, interleaved. Steadier than wall time on a loaded
    machine; meaningful at 1 intra-op thread, where all the work runs on this thread (backward included)."""
    fns = {"cpu": make("cpu"), "mlu": make("mlu")}
    best = {name: float("inf") for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(3 * repeat):
        for name, fn in fns.items():
            start = time.thread_time()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.thread_time() - start) / number)
    torch.mlu.synchronize()
    return best["cpu"], best["mlu"]


def import_cpu_times(repeat: int) -> tuple[float, float]:
    """Best CPU seconds (user + system) of ``python -c "import torch"``, (autoload off, autoload on), alternating."""
    import resource

    best = {False: float("inf"), True: float("inf")}
    for _ in range(repeat):
        for autoload in (False, True):
            env = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "1" if autoload else "0", "PATH": "/usr/bin:/bin"}
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", "import torch"], check=True, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best[autoload] = min(best[autoload], cpu)
    return best[False], best[True]


_AUTOLOAD_SHARE = """
import time
start = time.process_time()
import torch
middle = time.process_time()
torch._import_device_backends()  # what `import torch` runs when TORCH_DEVICE_BACKEND_AUTOLOAD is not 0
print(middle - start, time.process_time() - middle)
"""


def autoload_cpu_share(repeat: int) -> tuple[float, float]:
    """(CPU seconds of ``import torch`` with autoload off, the same plus the autoload's own CPU seconds), both
    measured in one fresh process (autoload run right after the import, as ``import torch`` would run it), best of
    ``repeat`` processes: steadier than comparing whole processes, whose CPU time varies by more than the
    autoload costs."""
    best_import, best_autoload = float("inf"), float("inf")
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", _AUTOLOAD_SHARE], check=True, capture_output=True, text=True,
                             env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "PATH": "/usr/bin:/bin"})
        imported, autoload = (float(x) for x in out.stdout.split())
        best_import, best_autoload = min(best_import, imported), min(best_autoload, autoload)
    return best_import, best_import + best_autoload


def eager_rows(quick: bool) -> list[Row]:
    r = 2 if quick else 5
    rows = []
    threads = torch.get_num_threads()
    for t in sorted({1, max(2, threads)}):
        torch.set_num_threads(t)
        cpu, mlu = bench_backend.pair(bench_backend.train_step, 10 if quick else 20, r)
        rows.append(Row(f"digits CNN training step, batch 64, {t} thread{'s' if t > 1 else ''}", "cpu", cpu, mlu,
                        1.10))
    torch.set_num_threads(1)
    cpu, mlu = thread_cpu_pair(bench_backend.train_step, 10 if quick else 20, r)
    rows.append(Row("digits CNN training step, 1 thread, thread CPU time", "cpu", cpu, mlu, 1.10))
    cpu, mlu = thread_cpu_pair(bench_backend.elementwise(64), 5000 if quick else 20000, r)
    rows.append(Row("add, 64 elements, thread CPU time", "cpu", cpu, mlu, 1.20))
    torch.set_num_threads(threads)
    cpu, mlu = bench_backend.pair(big_cnn_step, 3 if quick else 5, r)
    rows.append(Row("CNN training step, 28x28, batch 64", "cpu", cpu, mlu, 1.10, note="keep about 1.0"))
    cpu, mlu = bench_backend.pair(bench_backend.elementwise(64), 5000 if quick else 20000, r)
    rows.append(Row("add, 64 elements", "cpu", cpu, mlu, 1.20))
    without, with_ = bench_backend.import_times(3 if quick else 7)
    rows.append(Row("import torch, autoload on", "autoload off", without, with_, 1.05))
    without, with_ = import_cpu_times(3 if quick else 7)
    rows.append(Row("import torch, autoload on, CPU time", "autoload off", without, with_, 1.05))
    without, with_ = autoload_cpu_share(3 if quick else 7)
    rows.append(Row("import torch, autoload on, CPU time in one process", "autoload off", without, with_, 1.05))
    base, ours = copy_out(256 << 20, 1 if quick else 2, 2 if quick else 3)
    rows.append(Row("256 MiB d.cpu()", "host a.clone()", base, ours, 1.10))
    return rows


# ---- graph mode ------------------------------------------------------------------------------------------------
# Fresh processes that measure the graph-mode rows (1 with --quick). The same compiled code runs up to 15 % faster or
# slower in one process than in another, and keeps that level for the life of the process: a row from a single
# process is one draw from that spread.
GRAPH_MODE_PROCESSES = 3
# Each graph-mode case also times a second copy of the CPU model, compiled once for both copies, against the first
# (the A/A control row): identical work, so its distance from 1.00x is the noise of that case's rows in that run. Above
# this ratio the run is too noisy to judge a target of 1.00x.
GRAPH_MODE_CONTROL = 1.05
_ROWS_MARK = "graph-mode rows: "


def compile_rows(quick: bool) -> list[Row]:
    """The graph-mode rows (:func:`compile_rows_here`), each measured in ``GRAPH_MODE_PROCESSES`` fresh processes
    (1 with ``quick``). Each row comes from the process with the median ratio, and its note lists every process's
    ratio. Raises ``SystemExit`` with the child's error output when a process fails."""
    runs: list[list[Row]] = []
    for _ in range(1 if quick else GRAPH_MODE_PROCESSES):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--graph-mode-here"] + (["--quick"] if quick else [])
        done = subprocess.run(cmd, capture_output=True, text=True)
        marked = [line for line in done.stdout.splitlines() if line.startswith(_ROWS_MARK)]
        if done.returncode != 0 or not marked:
            raise SystemExit(f"run_all.py: the graph-mode process failed (exit {done.returncode}):\n"
                             f"{done.stderr[-3000:]}")
        runs.append([Row(**row) for row in json.loads(marked[-1][len(_ROWS_MARK):])])
    rows = []
    for per_process in zip(*runs, strict=True):
        ordered = sorted(per_process, key=lambda r: math.inf if r.value is None else r.value)
        row = ordered[len(ordered) // 2]
        if len(per_process) > 1:
            ratios = ", ".join("-" if r.value is None else f"{r.value:.2f}x" for r in per_process)
            row.note = "; ".join(filter(None, [row.note, f"median of {len(per_process)} processes: {ratios}"]))
        rows.append(row)
    return rows


def compile_rows_here(quick: bool) -> list[Row]:
    """The graph-mode rows measured in this process, at 1 intra-op thread: ``torch.compile`` on mlu, default
    Inductor and ``backend="mlu"``, each against ``torch.compile`` (default Inductor) on CPU, the peer that runs
    Inductor's C++ code on the same cores, and a second copy of the CPU model against the first (the A/A control,
    :data:`GRAPH_MODE_CONTROL`); ``bench_compile.median_ms``, the four take turns: the transformer block's
    inference and training step and the digits CNN's training step."""
    import copy
    from functools import partial

    import bench_compile
    import torch_mlu.compile  # noqa: F401  (the "mlu" backend)

    torch.set_num_threads(1)
    reps = 10 if quick else 30
    # "cpu again": a second copy of the CPU model (the same compiled code, its own memory), the control whose ratio
    # to "cpu" shows how far two runs of identical work drift apart in this process.
    ways = {"cpu": ("cpu", {}), "mlu": ("mlu", {}), "mlu fusion": ("mlu", {"backend": "mlu"}), "cpu again": ("cpu", {})}
    on = {device: bench_compile.workloads(device) for device in ("cpu", "mlu")}
    rows = []

    def add(case: str, t: dict[str, tuple[float, float]]) -> None:
        rows.append(Row(f"graph mode, {case}, torch.compile on mlu", "torch.compile on cpu", t["cpu"][0] / 1e3,
                        t["mlu"][0] / 1e3, 1.0))
        rows.append(Row(f'graph mode, {case}, backend="mlu"', "torch.compile on cpu", t["cpu"][0] / 1e3,
                        t["mlu fusion"][0] / 1e3, 1.0))
        rows.append(Row(f"graph mode, {case}, a second copy on cpu (A/A control)", "torch.compile on cpu",
                        t["cpu"][0] / 1e3, t["cpu again"][0] / 1e3, GRAPH_MODE_CONTROL,
                        note="no target of ours: the noise of the rows above"))

    for name in on["cpu"]:
        if name == "transformer block":
            fns = {}
            for way, (device, options) in ways.items():
                model, x, _ = on[device][name]
                fns[way] = partial(torch.compile(copy.deepcopy(model).eval(), **options), x)
            with torch.no_grad():
                add("transformer block inference", bench_compile.median_ms(fns, reps))
        steps = {}
        for way, (device, options) in ways.items():
            model, x, loss_fn = on[device][name]
            compiled = torch.compile(copy.deepcopy(model).train(), **options)
            steps[way] = bench_compile.train_step(compiled, torch.optim.SGD(compiled.parameters(), lr=1e-3), x,
                                                  loss_fn)
        add(f"{name} training step", bench_compile.median_ms(steps, reps))
    return rows


# ---- native interface check ----------------------------------------------------------------------------------------
def interface_rows() -> list[Row]:
    """Times ``scripts/check_native_interfaces.py`` (a fresh process each) on the upstream wheel and a combined wheel
    built from it, in a private cache directory: first with the cache empty (reported in the note: unpacking and
    probing upstream), then cold -- a new process, upstream's unpacked tree and probe cached as after any earlier
    check -- and ``--full-elf --full-api``."""
    import tempfile

    sys.path.insert(0, str(REPO / "src"))
    sys.path.insert(0, str(REPO / "tests" / "tools"))  # test fixtures: fake wheels
    from fake_wheels import fake_backend_wheel

    from catch_tools.pin import load_pin
    from catch_tools.upstream import release_wheel
    from catch_tools.wheel.overlay import build_overlay

    pin = load_pin()
    upstream = release_wheel(pin.wheel_version)
    with tempfile.TemporaryDirectory(prefix="bench-all-") as name:
        tmp = Path(name)
        (tmp / "patches").mkdir()
        (tmp / "patches" / "series").write_text("")
        combined = build_overlay(upstream_wheel=upstream, backend_wheel=fake_backend_wheel(tmp / "backend"),
                                 patches_dir=tmp / "patches", pin=pin, out_dir=tmp / "out").wheel
        env = dict(os.environ, CATCH_CACHE=str(tmp / "cache"))
        script = str(REPO / "scripts" / "check_native_interfaces.py")

        def timed(*extra: str) -> float:
            start = time.perf_counter()
            subprocess.run([sys.executable, script, *extra, str(upstream), str(combined)], check=False,
                           capture_output=True, env=env)
            return time.perf_counter() - start

        empty = timed()
        cold = min(timed() for _ in range(2))
        full = timed("--full-elf", "--full-api")
    return [Row("interface check, cold (new process, upstream cached)", "", None, cold, 5.0, kind="seconds",
                note=f"empty cache {empty:.1f} s"),
            Row("interface check, --full-elf --full-api", "", None, full, 60.0, kind="seconds")]


# ---- patch engine --------------------------------------------------------------------------------------------------
def apply_rows(quick: bool) -> list[Row]:
    """The two targets of ``bench_apply.py``: engine vs ``git am`` on 200 patches, CLI vs ``quilt push -a`` (wall
    clock, the target, and the CPU time of the child processes as a cross-check that load does not swing)."""
    import bench_apply

    rounds = 2 if quick else 3
    am = bench_apply.measure_am(200, rounds)["best"]
    deb = bench_apply.measure_quilt(rounds)
    assert isinstance(am, dict)
    quilt = deb["best"] if deb is not None else dict.fromkeys(("quilt", "cli", "quilt_cpu", "cli_cpu"))
    assert isinstance(quilt, dict)
    note = "" if deb is not None else "quilt not installed"
    return [Row("apply 200 patches, library call", "git am", am["am"], am["lib"], 0.5),
            Row("apply Debian's 17 patches, CLI incl. start-up", "quilt push -a", quilt["quilt"], quilt["cli"], 1.0,
                note=note),
            Row("apply Debian's 17 patches, CLI, CPU time", "quilt push -a", quilt["quilt_cpu"], quilt["cli_cpu"],
                1.0, note=note)]


# ---- report --------------------------------------------------------------------------------------------------------
def load_old(path: Path) -> dict[str, float]:
    data = json.loads(path.read_text())
    return {r["measure"]: r["value"] for r in data["rows"] if r.get("value") is not None}


def git_commit() -> str:
    out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (noisier, a few minutes)")
    parser.add_argument("--skip-compile", action="store_true", help="leave out the graph-mode rows")
    parser.add_argument("--skip-apply", action="store_true", help="leave out the patch engine rows (bench_apply.py)")
    parser.add_argument("--skip-interface-check", action="store_true",
                        help="leave out the native interface check (it needs the upstream wheel; about 2 minutes)")
    parser.add_argument("--interface-check", action="store_true", help=argparse.SUPPRESS)  # the default now
    parser.add_argument("--graph-mode-here", action="store_true", help=argparse.SUPPRESS)  # compile_rows' children
    parser.add_argument("--compare", type=Path, metavar="OLD.json", help="a results file of an earlier run")
    parser.add_argument("--tolerance", type=float, default=0.10, help="ratio growth counted as a regression")
    parser.add_argument("--out", type=Path, help="JSON file to write (default benchmarks/results/<time>.json)")
    parser.add_argument("--strict", action="store_true", help="exit 1 on a missed target or a regression")
    args = parser.parse_args(argv)
    if args.compare is not None and not args.compare.is_file():
        print(f"run_all.py: error: --compare: no such file: {args.compare}", file=sys.stderr)
        return 2
    old = load_old(args.compare) if args.compare else None
    if args.graph_mode_here:
        print(_ROWS_MARK + json.dumps([asdict(row) for row in compile_rows_here(args.quick)]))
        return 0

    load_before = os.getloadavg()
    started = time.perf_counter()
    rows = eager_rows(args.quick)
    if not args.skip_compile:
        rows += compile_rows(args.quick)
    if not args.skip_apply:
        rows += apply_rows(args.quick)
    if not args.skip_interface_check:
        rows += interface_rows()
    load_after = os.getloadavg()

    seconds = time.perf_counter() - started
    table, regressions = render(rows, old, args.tolerance,
                                title(git_commit(), os.cpu_count(), load_before[0], load_after[0], seconds))
    Console(width=WIDTH).print(table)

    out = args.out or HERE / "results" / (datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ") + ".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "commit": git_commit(),
        "time_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "threads": torch.get_num_threads(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "seconds": seconds,
        "quick": args.quick,
        "rows": [asdict(r) | {"value": r.value, "met": r.met} for r in rows],
    }
    out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"results: {out}")
    if regressions:
        print("regressions: " + ", ".join(regressions))
    missed = [r.measure for r in rows if r.met is False]
    return 1 if args.strict and (missed or regressions) else 0


if __name__ == "__main__":
    sys.exit(main())
