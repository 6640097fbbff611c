# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Sweep PyTorch's OpInfo database (``common_methods_invocations.op_db``) on mlu against cpu.

Run as ``python opinfo_sweep.py OUT.jsonl [START [STOP]]``: for every op in ``op_db[START:STOP]`` and every float32
sample input, the op runs on cpu and on mlu with the same RNG seed; results are compared with
``torch.testing.assert_close``. One JSON line per op is appended to OUT (flushed), so a driver can resume after a
crash: ``{"index", "name", "status": pass|fail|cpu_only_fail|no_float32|skipped_by_opinfo|xfail_by_opinfo, "samples",
"fallback": [ops], "error"}``. ``skipped_by_opinfo`` / ``xfail_by_opinfo``: OpInfo itself skips / expects to fail
the op's device-vs-cpu comparison (``TestCommon.test_compare_cpu``) on every device.
Samples that fail on cpu are not counted (the target is: every op that passes on cpu passes on mlu).
"""

from __future__ import annotations

import json
import sys
import warnings

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


def _opinfo_policy(op) -> tuple[str | None, dict]:
    """What OpInfo itself declares for ``TestCommon.test_compare_cpu`` (device vs cpu, test/test_ops.py) on any
    device: ``"skip"`` (e.g. ``empty``: uninitialized memory), ``"xfail"``, or None; plus tolerance overrides."""
    verdict, tol = None, {}
    for d in op.decorators:
        is_active = getattr(d, "is_active", None)
        if is_active is None or getattr(d, "device_type", None) is not None:
            continue
        if not is_active("TestCommon", "test_compare_cpu", "mlu", torch.float32, {}):
            continue
        for dec in d.decorators:
            kind = getattr(dec, "__qualname__", type(dec).__name__)
            if kind.startswith("skip.") and verdict is None:
                verdict = "skip"
            elif kind == "expectedFailure":
                verdict = verdict or "xfail"
            elif kind == "toleranceOverride" and torch.float32 in dec.d:
                tol = {"atol": dec.d[torch.float32].atol, "rtol": dec.d[torch.float32].rtol}
    return verdict, tol


def _full_name(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def sweep_op(op) -> dict:
    """Compare all float32 samples of ``op``; returns the op's record (without index)."""
    rec: dict = {"name": _full_name(op), "samples": 0}
    if torch.float32 not in op.supported_dtypes("cpu"):
        rec["status"] = "no_float32"
        return rec
    torch.mlu.reset_fallback_report()
    cpu_ok = 0
    verdict, tol = _opinfo_policy(op)
    if verdict == "skip":
        rec["status"] = "skipped_by_opinfo"
        return rec
    fail_status = "xfail_by_opinfo" if verdict == "xfail" else "fail"
    try:
        # Samples are made on mlu (as PyTorch's test_compare_cpu does; tensors an op wants on the cpu stay there)
        # and copied to the cpu for the reference.
        torch.manual_seed(1234)
        samples = list(op.sample_inputs("mlu", torch.float32, requires_grad=False))
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
    rec.update(status="pass" if cpu_ok else "cpu_only_fail", samples=cpu_ok,
               fallback=sorted(torch.mlu.fallback_report()))
    return rec


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
            out.write(json.dumps(rec) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
