# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Sweep PyTorch's OpInfo database (``common_methods_invocations.op_db``) on mlu against cpu.

Run as ``python opinfo_sweep.py OUT.jsonl [START [STOP]]``: for every op in ``op_db[START:STOP]`` and every float32
sample input, the op runs on cpu and on mlu with the same RNG seed; results are compared with
``torch.testing.assert_close``. One JSON line per op is appended to OUT (flushed), so a driver can resume after a
crash: ``{"index", "name", "status": pass|fail|cpu_only_fail|no_float32|skipped_by_opinfo|xfail_by_opinfo, "samples",
"fallback": [ops], "error", "dtypes"}``. ``skipped_by_opinfo`` / ``xfail_by_opinfo``: OpInfo itself skips / expects
to fail the op's device-vs-cpu comparison (``TestCommon.test_compare_cpu``) on every device.
Samples that fail on cpu are not counted (the target is: every op that passes on cpu passes on mlu).

``dtypes`` is the census of the other dtypes (:data:`CENSUS_DTYPES` that the op supports on cpu): for each, the
first sample that runs on cpu is compared the same way (:func:`census_op`), giving ``native``, ``fallback`` (equal,
with operators through the CPU fallback), ``fail`` or ``n/a`` (no sample runs on cpu, or OpInfo skips or expects to
fail the comparison for that dtype).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from collections import Counter
from pathlib import Path

import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_map

import torch_mlu  # noqa: F401


def _to(x: object, device: str) -> object:
    return tree_map(lambda t: t.to(device) if isinstance(t, torch.Tensor) else t, x)


def _run(op, sample) -> object:
    torch.manual_seed(0)  # random ops: the mlu generator draws the same numbers as the cpu one
    return sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))


def _to_cpu(t: object) -> object:
    return t.to("cpu") if isinstance(t, torch.Tensor) else t


# The dtypes of the census besides float32 (whose samples are all swept).
CENSUS_DTYPES = (torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.int64, torch.int32, torch.uint8,
                 torch.bool)


def _opinfo_policy(op, dtype: torch.dtype = torch.float32) -> tuple[str | None, dict]:
    """What OpInfo itself declares for ``TestCommon.test_compare_cpu`` (device vs cpu, test/test_ops.py) on any
    device for ``dtype``: ``"skip"`` (e.g. ``empty``: uninitialized memory), ``"xfail"``, or None; plus tolerance
    overrides."""
    verdict, tol = None, {}
    for d in op.decorators:
        is_active = getattr(d, "is_active", None)
        if is_active is None or getattr(d, "device_type", None) is not None:
            continue
        if not is_active("TestCommon", "test_compare_cpu", "mlu", dtype, {}):
            continue
        for dec in d.decorators:
            kind = getattr(dec, "__qualname__", type(dec).__name__)
            if kind.startswith("skip.") and verdict is None:
                verdict = "skip"
            elif kind == "expectedFailure":
                verdict = verdict or "xfail"
            elif kind == "toleranceOverride" and dtype in dec.d:
                tol = {"atol": dec.d[dtype].atol, "rtol": dec.d[dtype].rtol}
    return verdict, tol


def _full_name(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def sweep_op(op, dtype: torch.dtype = torch.float32, limit: int | None = None) -> dict:
    """Compare the ``dtype`` samples of ``op`` on mlu with cpu: all of them, or the first ``limit`` that run on cpu.
    Returns the op's record (without index)."""
    rec: dict = {"name": _full_name(op), "samples": 0}
    if dtype not in op.supported_dtypes("cpu"):
        rec["status"] = "no_" + str(dtype).removeprefix("torch.")
        return rec
    torch.mlu.reset_fallback_report()
    cpu_ok = 0
    verdict, tol = _opinfo_policy(op, dtype)
    if verdict == "skip":
        rec["status"] = "skipped_by_opinfo"
        return rec
    fail_status = "xfail_by_opinfo" if verdict == "xfail" else "fail"
    try:
        # Samples are made on mlu (as PyTorch's test_compare_cpu does; tensors an op wants on the cpu stay there)
        # and copied to the cpu for the reference.
        torch.manual_seed(1234)
        samples = list(op.sample_inputs("mlu", dtype, requires_grad=False))
    except Exception as exc:
        rec.update(status=fail_status, error=f"sample_inputs on mlu: {type(exc).__name__}: {exc}".splitlines()[0][:300],
                   fallback=sorted(torch.mlu.fallback_report()))
        return rec
    for sample in samples:
        try:
            cpu_sample = sample.transform(_to_cpu)  # before running: in-place ops mutate their input
        except Exception as exc:
            rec.update(status=fail_status, samples=cpu_ok,
                       error=f"copying the sample to cpu: {type(exc).__name__}: {exc}".splitlines()[0][:300],
                       fallback=sorted(torch.mlu.fallback_report()))
            return rec
        try:
            expected = _run(op, cpu_sample)
        except Exception:
            continue
        cpu_ok += 1
        try:
            actual = _to(_run(op, sample), "cpu")
            torch.testing.assert_close(actual, expected, equal_nan=True, check_device=False, **tol)
        except Exception as exc:
            rec.update(status=fail_status, samples=cpu_ok,
                       error=f"{type(exc).__name__}: {exc}".splitlines()[0][:300],
                       fallback=sorted(torch.mlu.fallback_report()))
            return rec
        if limit is not None and cpu_ok >= limit:
            break
    rec.update(status="pass" if cpu_ok else "cpu_only_fail", samples=cpu_ok,
               fallback=sorted(torch.mlu.fallback_report()))
    return rec


def outcome(rec: dict) -> str:
    """A record's census outcome: ``native`` / ``fallback`` (passed, without / with operators through the CPU
    fallback), ``fail`` (failed or crashed on mlu) or ``n/a`` (no sample ran on cpu, the dtype is not supported, or
    OpInfo skips or expects to fail the comparison)."""
    if rec["status"] == "pass":
        return "fallback" if rec.get("fallback") else "native"
    return "fail" if rec["status"] in ("fail", "crash") else "n/a"


def census_op(op) -> dict[str, str]:
    """The census of ``op``: ``{dtype name: outcome}`` for each of :data:`CENSUS_DTYPES` that ``op`` supports on
    cpu, from the first sample that runs on cpu (:func:`sweep_op` with ``limit=1``)."""
    supported = op.supported_dtypes("cpu")
    return {str(d).removeprefix("torch."): outcome(sweep_op(op, d, limit=1)) for d in CENSUS_DTYPES
            if d in supported}


def run_shard(out: Path, start: int, stop: int) -> subprocess.Popen:
    """Start a worker (this file as a script) sweeping ``op_db[start:stop]``, appending JSON lines to ``out``."""
    return subprocess.Popen([sys.executable, __file__, str(out), str(start), str(stop)],
                            cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def sweep(tmp: Path, shards: int = 2) -> list[dict]:
    """Sweep every op of ``op_db`` in ``shards`` parallel workers writing into the directory ``tmp``; a crashed
    worker's op is recorded as ``crash`` and the worker restarts after it. Returns one finished record per op.

    Raises:
        AssertionError: a worker failed before its first op.
    """
    n_ops = len(op_db)
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
                         "error": f"worker exited with {proc.returncode}", "dtypes": {}}
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


CENSUS_BEGIN = "<!-- OpInfo census: written by support_matrix.py --write, checked by test_opinfo.py -->"
CENSUS_END = "<!-- end of the OpInfo census -->"
OUTCOMES = ("native", "fallback", "fail", "n/a")


def census_table(records: list[dict]) -> str:
    """The census as the Markdown block of docs/support.md (between :data:`CENSUS_BEGIN` and :data:`CENSUS_END`):
    one row per dtype, counting the ops (``op_db`` entries, variants apart) by outcome; float32 from all its samples,
    the others from the first sample that runs on cpu (:func:`census_op`)."""
    counts: dict[str, Counter[str]] = {"float32": Counter()}
    counts.update({str(d).removeprefix("torch."): Counter() for d in CENSUS_DTYPES})
    for rec in records:
        if rec["status"] != "no_float32":
            counts["float32"][outcome(rec)] += 1
        for dtype, result in rec.get("dtypes", {}).items():
            counts[dtype][result] += 1
    total = Counter[str]()
    rows = []
    for dtype, c in counts.items():
        total.update(c)
        rows.append(f"| {dtype} | " + " | ".join(str(c[o]) for o in OUTCOMES) + f" | {sum(c.values())} |")
    rows.append("| all | " + " | ".join(str(total[o]) for o in OUTCOMES) + f" | {sum(total.values())} |")
    failing: dict[str, list[str]] = {}
    for rec in records:
        outcomes = {"float32": outcome(rec)} if rec["status"] != "no_float32" else {}
        outcomes.update(rec.get("dtypes", {}))
        bad = [dtype for dtype, result in outcomes.items() if result == "fail"]
        if bad:
            failing[rec["name"]] = bad
    intro = textwrap.fill(
        f"PyTorch's OpInfo database (`op_db`, {len(records)} ops with their variants) on mlu against cpu, per dtype "
        "the op supports on cpu (`tests/backend/opinfo_sweep.py`): *native* equal to cpu with no operator through "
        "the CPU fallback; *fallback* equal, with operators through the fallback; *fail* different or an error on "
        "mlu; *n/a* no sample runs on cpu, or OpInfo itself skips or expects to fail the device-vs-cpu comparison. "
        "float32 compares every sample, the other dtypes the first sample that runs on cpu.", width=116)
    fails = textwrap.fill("Failing (op: dtypes): " + "; ".join(
        f"`{name}`: {', '.join(dtypes)}" for name, dtypes in sorted(failing.items())) + ".", width=116)
    return "\n".join([CENSUS_BEGIN, intro, "", "| dtype | native | fallback | fail | n/a | ops |",
                      "|---|---|---|---|---|---|", *rows, "", fails if failing else "No op fails.", CENSUS_END])


def census_of_page(page: str) -> str | None:
    """The census block of a docs/support.md text (markers included), or None when it has none."""
    start, end = page.find(CENSUS_BEGIN), page.find(CENSUS_END)
    return page[start:end + len(CENSUS_END)] if 0 <= start < end else None


def main(argv: list[str]) -> int:
    out_path = argv[0]
    start = int(argv[1]) if len(argv) > 1 else 0
    stop = min(int(argv[2]), len(op_db)) if len(argv) > 2 else len(op_db)
    warnings.simplefilter("ignore")
    with open(out_path, "a", encoding="utf-8") as out:
        for i in range(start, stop):
            out.write(json.dumps({"index": i, "name": _full_name(op_db[i]), "status": "started"}) + "\n")
            out.flush()
            rec = sweep_op(op_db[i])
            rec["index"] = i
            rec["dtypes"] = census_op(op_db[i])
            out.write(json.dumps(rec) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
