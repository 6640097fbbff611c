# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""PyTorch's own test material on mlu: every float32 OpInfo sample (``op_db``, 702 ops in 2.13) that passes on cpu
must give the same result on mlu. Real exceptions are listed with reasons in ``opinfo_exceptions.txt`` (tracked),
not skipped in code; an exception that starts passing must be removed from the file (the test says so).

The sweep runs in worker processes (opinfo_sweep.py, two shards for two cores) that append one JSON line per op; a
worker that dies (e.g. a crash inside a kernel) is restarted after the op it was running, which is recorded as
``crash``. The summary (ops passing, native vs with fallback) is printed and written to ``opinfo_report.json`` in
pytest's tmp dir. Ops whose device-vs-cpu comparison OpInfo itself skips or expects to fail on every device
(``TestCommon.test_compare_cpu`` decorators, e.g. ``empty``) are counted separately, not as failures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from mlu_helpers import REPO

HERE = Path(__file__).resolve().parent
EXCEPTIONS = HERE / "opinfo_exceptions.txt"


def load_exceptions() -> dict[str, str]:
    """``name: reason`` lines; ``#`` starts a comment line."""
    out: dict[str, str] = {}
    for line in EXCEPTIONS.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(":")
        assert reason.strip(), f"{EXCEPTIONS.name}: entry {name!r} needs a reason"
        out[name.strip()] = reason.strip()
    return out


def run_shard(out: Path, start: int, stop: int) -> subprocess.Popen:
    """Start a worker sweeping ``op_db[start:stop]``, appending JSON lines to ``out``."""
    return subprocess.Popen([sys.executable, str(HERE / "opinfo_sweep.py"), str(out), str(start), str(stop)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def sweep(tmp: Path, n_ops: int, shards: int = 2) -> list[dict]:
    """Sweep all ``n_ops`` ops in ``shards`` parallel workers; a crashed worker's op is recorded as ``crash`` and the
    worker restarts after it. Returns one finished record per op."""
    bounds = [(n_ops * k // shards, n_ops * (k + 1) // shards) for k in range(shards)]
    records: list[dict] = []
    pending = {k: (tmp / f"shard{k}.jsonl", start, stop) for k, (start, stop) in enumerate(bounds)}
    while pending:
        procs = {k: run_shard(path, start, stop) for k, (path, start, stop) in pending.items()}
        nxt = {}
        for k, proc in procs.items():
            proc.wait()
            path, _, stop = pending[k]
            lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
            last = lines[-1] if lines else None
            if proc.returncode != 0 and last is not None and last["status"] == "started":
                crash = {"index": last["index"], "name": last["name"], "status": "crash",
                         "error": f"worker exited with {proc.returncode}"}
                with path.open("a") as f:
                    f.write(json.dumps(crash) + "\n")
                if last["index"] + 1 < stop:
                    nxt[k] = (path, last["index"] + 1, stop)
            elif proc.returncode != 0:
                raise AssertionError(f"opinfo worker failed before any op (exit {proc.returncode})")
        pending = nxt
    for k in range(shards):
        records += [r for r in map(json.loads, (tmp / f"shard{k}.jsonl").read_text().splitlines())
                    if r["status"] != "started"]
    return records


@pytest.mark.slow
def test_opinfo_float32_matches_cpu(tmp_path, capsys):
    from torch.testing._internal.common_methods_invocations import op_db

    records = sweep(tmp_path, len(op_db))
    assert len(records) == len(op_db)
    status = Counter(r["status"] for r in records)
    passed = [r for r in records if r["status"] == "pass"]
    native = [r for r in passed if not r.get("fallback")]
    failing = {r["name"]: r.get("error", "") for r in records if r["status"] in ("fail", "crash")}
    fallback_ops = Counter(f for r in records for f in r.get("fallback", []))
    exceptions = load_exceptions()
    summary = {
        "ops": len(records), "status": dict(status), "pass": len(passed), "pass_native": len(native),
        "pass_with_fallback": len(passed) - len(native), "failing": failing,
        "fallback_ops": dict(fallback_ops.most_common()),
    }
    (tmp_path / "opinfo_report.json").write_text(json.dumps(summary, indent=1))
    with capsys.disabled():
        print(f"\nOpInfo float32 on mlu: {len(records)} ops; pass {len(passed)} (native {len(native)}, "
              f"with fallback {len(passed) - len(native)}); fail on mlu {status['fail']}, crash {status['crash']}; "
              f"fail on cpu too {status['cpu_only_fail']}; no float32 {status['no_float32']}; OpInfo skips "
              f"{status['skipped_by_opinfo']} and xfails {status['xfail_by_opinfo']} of its test_compare_cpu; "
              f"distinct fallback ops {len(fallback_ops)}; report {tmp_path / 'opinfo_report.json'}")
    unexpected = {k: v for k, v in failing.items() if k not in exceptions}
    assert not unexpected, f"ops failing on mlu (fix, or list with a reason in {EXCEPTIONS.name}): {unexpected}"
    stale = sorted(k for k in exceptions if k not in failing)
    assert not stale, f"listed in {EXCEPTIONS.name} but passing now; remove them: {stale}"
